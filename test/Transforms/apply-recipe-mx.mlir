// The MX recipe of nvfp4-apply-recipe: a GEMM with nvfp4.precision = "mxfp8"
// or "mxfp4" quantizes both operands to that format with 1x32 blocks along K,
// round to nearest and no RHT in every role (no seed is drawn); MXFP8 uses
// E4M3 elements. nvfp4-fuse-quantization leaves MX quantizations alone (no
// shared amax: they have no tensor scale).
//
// RUN: nvfp4-opt %s --nvfp4-apply-recipe -split-input-file -verify-diagnostics \
// RUN:   | FileCheck %s
// RUN: nvfp4-opt %s --nvfp4-apply-recipe --nvfp4-fuse-quantization -split-input-file \
// RUN:   -verify-diagnostics | FileCheck %s --check-prefix=FUSED

#lhs = affine_map<(m, n, k) -> (m, k)>
#rhs_t = affine_map<(m, n, k) -> (n, k)>
#out = affine_map<(m, n, k) -> (m, n)>

// fprop in MXFP8 next to an fprop of the same X in NVFP4 (a mixed policy):
// each gets its own format; only the NVFP4 one has a tensor scale.
// CHECK-LABEL: func.func @fprop_mxfp8
// CHECK-SAME:    (%[[X:[a-z0-9]+]]: tensor<64x128xbf16>, %[[W:[a-z0-9]+]]: tensor<256x128xbf16> {nvfp4.weight}
// CHECK-NOT:     nvfp4.hadamard
// CHECK:         %[[QX:.*]] = nvfp4.quantize %[[X]] : tensor<64x128xbf16> -> !nvfp4.tensor<64x128xf8E4M3FN, scale = f8E8M0FNU, block = 1x32>
// CHECK:         %[[QW:.*]] = nvfp4.quantize %[[W]] : tensor<256x128xbf16> -> !nvfp4.tensor<256x128xf8E4M3FN, scale = f8E8M0FNU, block = 1x32>
// CHECK:         nvfp4.scaled_matmul %[[QX]], %[[QW]] role<fprop> {nvfp4.kind = "attention", nvfp4.layer = 1 : i64, nvfp4.precision = "mxfp8"}
// CHECK-SAME:      -> tensor<64x256xbf16>
// CHECK:         nvfp4.quantize %[[X]] : tensor<64x128xbf16> -> !nvfp4.tensor<64x128xf4E2M1FN, scale = f8E4M3FN, block = 1x16>
// CHECK:         nvfp4.quantize %[[W]] : tensor<256x128xbf16> -> !nvfp4.tensor<256x128xf4E2M1FN, scale = f8E4M3FN, block = 16x16>
// CHECK:         nvfp4.scaled_matmul {{.*}} role<fprop> {{{.*}}nvfp4.precision = "nvfp4"}
// FUSED-LABEL: func.func @fprop_mxfp8
// FUSED:         nvfp4.quantize %{{.*}} : tensor<64x128xbf16> -> !nvfp4.tensor<64x128xf8E4M3FN, scale = f8E8M0FNU, block = 1x32>
// FUSED:         nvfp4.quantize %{{.*}} : tensor<256x128xbf16> -> !nvfp4.tensor<256x128xf8E4M3FN, scale = f8E8M0FNU, block = 1x32>
// FUSED-NOT:     nvfp4.amax
// FUSED:         return
func.func @fprop_mxfp8(%x: tensor<64x128xbf16>, %w: tensor<256x128xbf16> {nvfp4.weight},
                       %w2: tensor<256x128xbf16> {nvfp4.weight})
    -> (tensor<64x256xbf16>, tensor<64x256xbf16>) {
  %zero = arith.constant 0.0 : bf16
  %e = tensor.empty() : tensor<64x256xbf16>
  %init = linalg.fill ins(%zero : bf16) outs(%e : tensor<64x256xbf16>) -> tensor<64x256xbf16>
  %y = linalg.matmul indexing_maps = [#lhs, #rhs_t, #out]
      {nvfp4.layer = 1 : i64, nvfp4.kind = "attention", nvfp4.role = "fprop", nvfp4.precision = "mxfp8"}
      ins(%x, %w : tensor<64x128xbf16>, tensor<256x128xbf16>)
      outs(%init : tensor<64x256xbf16>) -> tensor<64x256xbf16>
  %y2 = linalg.matmul indexing_maps = [#lhs, #rhs_t, #out]
      {nvfp4.layer = 1 : i64, nvfp4.kind = "ffn", nvfp4.role = "fprop", nvfp4.precision = "nvfp4"}
      ins(%x, %w : tensor<64x128xbf16>, tensor<256x128xbf16>)
      outs(%init : tensor<64x256xbf16>) -> tensor<64x256xbf16>
  return %y, %y2 : tensor<64x256xbf16>, tensor<64x256xbf16>
}

// -----

// dgrad in MXFP4: dY round to nearest (no seed), W transposed to [in, out]
// and quantized 1x32 (no 16x16 blocks in MX).
// CHECK-LABEL: func.func @dgrad_mxfp4
// CHECK-SAME:    (%[[DY:[a-z0-9]+]]: tensor<64x256xbf16>, %[[W:[a-z0-9]+]]: tensor<256x128xbf16> {nvfp4.weight}
// CHECK-NOT:     arith.constant {{.*}} : i64
// CHECK:         %[[QDY:.*]] = nvfp4.quantize %[[DY]] : tensor<64x256xbf16> -> !nvfp4.tensor<64x256xf4E2M1FN, scale = f8E8M0FNU, block = 1x32>
// CHECK:         %[[WT:.*]] = linalg.transpose ins(%[[W]] : tensor<256x128xbf16>) outs(%{{.*}} : tensor<128x256xbf16>) permutation = [1, 0]
// CHECK:         %[[QW:.*]] = nvfp4.quantize %[[WT]] : tensor<128x256xbf16> -> !nvfp4.tensor<128x256xf4E2M1FN, scale = f8E8M0FNU, block = 1x32>
// CHECK:         nvfp4.scaled_matmul %[[QDY]], %[[QW]] role<dgrad>
// CHECK-SAME:      -> tensor<64x128xbf16>
func.func @dgrad_mxfp4(%dy: tensor<64x256xbf16>, %w: tensor<256x128xbf16> {nvfp4.weight})
    -> tensor<64x128xbf16> {
  %zero = arith.constant 0.0 : bf16
  %e = tensor.empty() : tensor<64x128xbf16>
  %init = linalg.fill ins(%zero : bf16) outs(%e : tensor<64x128xbf16>) -> tensor<64x128xbf16>
  %dx = linalg.matmul {nvfp4.role = "dgrad", nvfp4.precision = "mxfp4"}
      ins(%dy, %w : tensor<64x256xbf16>, tensor<256x128xbf16>)
      outs(%init : tensor<64x128xbf16>) -> tensor<64x128xbf16>
  return %dx : tensor<64x128xbf16>
}

// -----

#wgrad_lhs = affine_map<(o, i, t) -> (t, o)>
#wgrad_rhs = affine_map<(o, i, t) -> (t, i)>
#wgrad_out = affine_map<(o, i, t) -> (o, i)>

// wgrad in MXFP8: both operands transposed so that the 64 tokens are last,
// no RHT, no stochastic rounding; no dual quantization is fused (it is
// NVFP4 only).
// CHECK-LABEL: func.func @wgrad_mxfp8
// CHECK-NOT:     nvfp4.hadamard
// CHECK-NOT:     rounding<stochastic>
// CHECK:         nvfp4.quantize %{{.*}} : tensor<256x64xbf16> -> !nvfp4.tensor<256x64xf8E4M3FN, scale = f8E8M0FNU, block = 1x32>
// CHECK:         nvfp4.quantize %{{.*}} : tensor<128x64xbf16> -> !nvfp4.tensor<128x64xf8E4M3FN, scale = f8E8M0FNU, block = 1x32>
// CHECK:         nvfp4.scaled_matmul {{.*}} role<wgrad>
// FUSED-LABEL: func.func @wgrad_mxfp8
// FUSED-NOT:     nvfp4.dual_quantize
// FUSED:         return
func.func @wgrad_mxfp8(%dy: tensor<64x256xbf16>, %x: tensor<64x128xbf16>,
                       %w: tensor<256x128xbf16> {nvfp4.weight})
    -> (tensor<256x128xf32>, tensor<64x256xf32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<256x128xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<256x128xf32>) -> tensor<256x128xf32>
  %dw = linalg.matmul indexing_maps = [#wgrad_lhs, #wgrad_rhs, #wgrad_out]
      {nvfp4.role = "wgrad", nvfp4.precision = "mxfp8"}
      ins(%dy, %x : tensor<64x256xbf16>, tensor<64x128xbf16>)
      outs(%init : tensor<256x128xf32>) -> tensor<256x128xf32>
  // X is also quantized rowwise (an fprop): with NVFP4 both would become one
  // nvfp4.dual_quantize.
  %e2 = tensor.empty() : tensor<64x256xf32>
  %init2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<64x256xf32>) -> tensor<64x256xf32>
  %y = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>,
                                      affine_map<(m, n, k) -> (m, n)>]
      {nvfp4.role = "fprop", nvfp4.precision = "mxfp8"}
      ins(%x, %w : tensor<64x128xbf16>, tensor<256x128xbf16>)
      outs(%init2 : tensor<64x256xf32>) -> tensor<64x256xf32>
  return %dw, %y : tensor<256x128xf32>, tensor<64x256xf32>
}

// -----

#lhs = affine_map<(m, n, k) -> (m, k)>
#rhs_t = affine_map<(m, n, k) -> (n, k)>
#out = affine_map<(m, n, k) -> (m, n)>

// K = 48 fits NVFP4's 16 but not MX's 32: the annotation cannot be honoured.
// CHECK-LABEL: func.func @k_not_a_multiple_of_32
// CHECK:         linalg.matmul {{.*}}nvfp4.precision = "bf16"
func.func @k_not_a_multiple_of_32(%x: tensor<16x48xbf16>, %w: tensor<32x48xbf16> {nvfp4.weight},
                                  %init: tensor<16x32xbf16>) -> tensor<16x32xbf16> {
  // expected-warning @+1 {{nvfp4-apply-recipe: nvfp4.precision = "mxfp8" cannot be honoured: the contraction dimension 48 is not a multiple of 32 (the MX block); kept in bf16}}
  %y = linalg.matmul indexing_maps = [#lhs, #rhs_t, #out] {nvfp4.role = "fprop", nvfp4.precision = "mxfp8"}
      ins(%x, %w : tensor<16x48xbf16>, tensor<32x48xbf16>)
      outs(%init : tensor<16x32xbf16>) -> tensor<16x32xbf16>
  return %y : tensor<16x32xbf16>
}
