// RUN: nvfp4-opt %s --nvfp4-apply-recipe -split-input-file -verify-diagnostics \
// RUN:   | FileCheck %s

#lhs = affine_map<(m, n, k) -> (m, k)>
#rhs_t = affine_map<(m, n, k) -> (n, k)>
#out = affine_map<(m, n, k) -> (m, n)>

// fprop Y = X W^T: X 1x16 round-to-nearest, W 16x16 round-to-nearest, no
// transposes (both operands are already K-last), no RHT.
// CHECK-LABEL: func.func @fprop
// CHECK-SAME:    (%[[X:.*]]: tensor<64x128xbf16>, %[[W:.*]]: tensor<256x128xbf16> {nvfp4.weight}
// CHECK-NOT:     linalg.transpose
// CHECK-NOT:     nvfp4.hadamard
// CHECK:         %[[QX:.*]] = nvfp4.quantize %[[X]] : tensor<64x128xbf16> -> !nvfp4.tensor<64x128xf4E2M1FN, scale = f8E4M3FN, block = 1x16>
// CHECK:         %[[QW:.*]] = nvfp4.quantize %[[W]] : tensor<256x128xbf16> -> !nvfp4.tensor<256x128xf4E2M1FN, scale = f8E4M3FN, block = 16x16>
// CHECK:         %[[Y:.*]] = nvfp4.scaled_matmul %[[QX]], %[[QW]] role<fprop> {nvfp4.kind = "ffn", nvfp4.layer = 4 : i64, nvfp4.precision = "nvfp4"}
// CHECK-SAME:      -> tensor<64x256xbf16>
// CHECK-NOT:     linalg.matmul
// CHECK:         return %[[Y]]
func.func @fprop(%x: tensor<64x128xbf16>, %w: tensor<256x128xbf16> {nvfp4.weight})
    -> tensor<64x256xbf16> {
  %zero = arith.constant 0.0 : bf16
  %e = tensor.empty() : tensor<64x256xbf16>
  %init = linalg.fill ins(%zero : bf16) outs(%e : tensor<64x256xbf16>) -> tensor<64x256xbf16>
  %y = linalg.matmul indexing_maps = [#lhs, #rhs_t, #out]
      {nvfp4.layer = 4 : i64, nvfp4.kind = "ffn", nvfp4.role = "fprop", nvfp4.precision = "nvfp4"}
      ins(%x, %w : tensor<64x128xbf16>, tensor<256x128xbf16>)
      outs(%init : tensor<64x256xbf16>) -> tensor<64x256xbf16>
  return %y : tensor<64x256xbf16>
}

// -----

// dgrad dX = dY W: dY 1x16 with stochastic rounding (stream 0: SplitMix64's
// first output for seed 0), W transposed to [in, out] and quantized 16x16.
// CHECK-LABEL: func.func @dgrad
// CHECK-SAME:    (%[[DY:.*]]: tensor<64x256xbf16>, %[[W:.*]]: tensor<256x128xbf16> {nvfp4.weight}
// CHECK:         %[[SEED:.*]] = arith.constant -2152535657050944081 : i64
// CHECK:         %[[QDY:.*]] = nvfp4.quantize %[[DY]] rounding<stochastic> seed(%[[SEED]]) : tensor<64x256xbf16> -> !nvfp4.tensor<64x256xf4E2M1FN, scale = f8E4M3FN, block = 1x16>
// CHECK:         %[[WT:.*]] = linalg.transpose ins(%[[W]] : tensor<256x128xbf16>) outs(%{{.*}} : tensor<128x256xbf16>) permutation = [1, 0]
// CHECK:         %[[QW:.*]] = nvfp4.quantize %[[WT]] : tensor<128x256xbf16> -> !nvfp4.tensor<128x256xf4E2M1FN, scale = f8E4M3FN, block = 16x16>
// CHECK:         nvfp4.scaled_matmul %[[QDY]], %[[QW]] role<dgrad>
// CHECK-SAME:      -> tensor<64x128xbf16>
func.func @dgrad(%dy: tensor<64x256xbf16>, %w: tensor<256x128xbf16> {nvfp4.weight})
    -> tensor<64x128xbf16> {
  %zero = arith.constant 0.0 : bf16
  %e = tensor.empty() : tensor<64x128xbf16>
  %init = linalg.fill ins(%zero : bf16) outs(%e : tensor<64x128xbf16>) -> tensor<64x128xbf16>
  %dx = linalg.matmul {nvfp4.role = "dgrad", nvfp4.precision = "nvfp4"}
      ins(%dy, %w : tensor<64x256xbf16>, tensor<256x128xbf16>)
      outs(%init : tensor<64x128xbf16>) -> tensor<64x128xbf16>
  return %dx : tensor<64x128xbf16>
}

// -----

// wgrad dW = dY^T X, a contraction over the 64 tokens: both operands are
// transposed so that tokens are last, Hadamard transformed along them and
// quantized 1x16; only dY^T is rounded stochastically.
// CHECK-LABEL: func.func @wgrad
// CHECK-SAME:    (%[[DY:.*]]: tensor<64x256xbf16>, %[[X:.*]]: tensor<64x128xbf16>)
// CHECK:         %[[DYT:.*]] = linalg.transpose ins(%[[DY]] : tensor<64x256xbf16>) outs(%{{.*}} : tensor<256x64xbf16>) permutation = [1, 0]
// CHECK:         %[[DYR:.*]] = nvfp4.hadamard %[[DYT]] : tensor<256x64xbf16>
// CHECK:         %[[SEED:.*]] = arith.constant -2152535657050944081 : i64
// CHECK:         %[[QDY:.*]] = nvfp4.quantize %[[DYR]] rounding<stochastic> seed(%[[SEED]]) : tensor<256x64xbf16> -> !nvfp4.tensor<256x64xf4E2M1FN, scale = f8E4M3FN, block = 1x16>
// CHECK:         %[[XT:.*]] = linalg.transpose ins(%[[X]] : tensor<64x128xbf16>) outs(%{{.*}} : tensor<128x64xbf16>) permutation = [1, 0]
// CHECK:         %[[XR:.*]] = nvfp4.hadamard %[[XT]] : tensor<128x64xbf16>
// CHECK:         %[[QX:.*]] = nvfp4.quantize %[[XR]] : tensor<128x64xbf16> -> !nvfp4.tensor<128x64xf4E2M1FN, scale = f8E4M3FN, block = 1x16>
// CHECK:         nvfp4.scaled_matmul %[[QDY]], %[[QX]] role<wgrad>
// CHECK-SAME:      -> tensor<256x128xbf16>
#wgrad_lhs = affine_map<(o, i, t) -> (t, o)>
#wgrad_rhs = affine_map<(o, i, t) -> (t, i)>
#wgrad_out = affine_map<(o, i, t) -> (o, i)>
func.func @wgrad(%dy: tensor<64x256xbf16>, %x: tensor<64x128xbf16>)
    -> tensor<256x128xbf16> {
  %zero = arith.constant 0.0 : bf16
  %e = tensor.empty() : tensor<256x128xbf16>
  %init = linalg.fill ins(%zero : bf16) outs(%e : tensor<256x128xbf16>) -> tensor<256x128xbf16>
  %dw = linalg.matmul indexing_maps = [#wgrad_lhs, #wgrad_rhs, #wgrad_out]
      {nvfp4.role = "wgrad", nvfp4.precision = "nvfp4"}
      ins(%dy, %x : tensor<64x256xbf16>, tensor<64x128xbf16>)
      outs(%init : tensor<256x128xbf16>) -> tensor<256x128xbf16>
  return %dw : tensor<256x128xbf16>
}

// -----

// Roles inferred without nvfp4.role: the weight is used twice, contracted
// along its last dimension (fprop) and its first (dgrad); the GEMM whose
// result has the shape of the weight's transpose is wgrad (dW^T = X^T dY),
// and its dY is the operand the dgrad reads as dY: operand B here.
// CHECK-LABEL: func.func @inferred_roles
// CHECK-SAME:    (%[[X:.*]]: tensor<32x64xbf16>, %[[W:.*]]: tensor<48x64xbf16> {nvfp4.weight}, %[[DY:.*]]: tensor<32x48xbf16>)
// CHECK:         nvfp4.quantize %[[W]] : tensor<48x64xbf16> -> !nvfp4.tensor<48x64xf4E2M1FN, scale = f8E4M3FN, block = 16x16>
// CHECK:         nvfp4.scaled_matmul {{.*}} role<fprop>
// CHECK:         nvfp4.quantize %[[DY]] rounding<stochastic>
// CHECK:         nvfp4.scaled_matmul {{.*}} role<dgrad>
// CHECK:         %[[XT:.*]] = linalg.transpose ins(%[[X]]
// CHECK:         %[[XR:.*]] = nvfp4.hadamard %[[XT]] : tensor<64x32xbf16>
// CHECK:         %[[QX:.*]] = nvfp4.quantize %[[XR]] : tensor<64x32xbf16>
// CHECK:         %[[DYT:.*]] = linalg.transpose ins(%[[DY]]
// CHECK:         %[[DYR:.*]] = nvfp4.hadamard %[[DYT]] : tensor<48x32xbf16>
// CHECK:         %[[QDY:.*]] = nvfp4.quantize %[[DYR]] rounding<stochastic>
// CHECK:         nvfp4.scaled_matmul %[[QX]], %[[QDY]] role<wgrad>
// CHECK-SAME:      -> tensor<64x48xbf16>
#lhs = affine_map<(m, n, k) -> (m, k)>
#rhs_t = affine_map<(m, n, k) -> (n, k)>
#out = affine_map<(m, n, k) -> (m, n)>
#wt_lhs = affine_map<(i, o, t) -> (t, i)>
#wt_rhs = affine_map<(i, o, t) -> (t, o)>
#wt_out = affine_map<(i, o, t) -> (i, o)>
func.func @inferred_roles(%x: tensor<32x64xbf16>, %w: tensor<48x64xbf16> {nvfp4.weight},
                          %dy: tensor<32x48xbf16>)
    -> (tensor<32x48xbf16>, tensor<32x64xbf16>, tensor<64x48xbf16>) {
  %zero = arith.constant 0.0 : bf16
  %e0 = tensor.empty() : tensor<32x48xbf16>
  %y0 = linalg.fill ins(%zero : bf16) outs(%e0 : tensor<32x48xbf16>) -> tensor<32x48xbf16>
  %e1 = tensor.empty() : tensor<32x64xbf16>
  %dx0 = linalg.fill ins(%zero : bf16) outs(%e1 : tensor<32x64xbf16>) -> tensor<32x64xbf16>
  %e2 = tensor.empty() : tensor<64x48xbf16>
  %dw0 = linalg.fill ins(%zero : bf16) outs(%e2 : tensor<64x48xbf16>) -> tensor<64x48xbf16>
  %y = linalg.matmul indexing_maps = [#lhs, #rhs_t, #out] {nvfp4.precision = "nvfp4"}
      ins(%x, %w : tensor<32x64xbf16>, tensor<48x64xbf16>)
      outs(%y0 : tensor<32x48xbf16>) -> tensor<32x48xbf16>
  %dx = linalg.matmul {nvfp4.precision = "nvfp4"}
      ins(%dy, %w : tensor<32x48xbf16>, tensor<48x64xbf16>)
      outs(%dx0 : tensor<32x64xbf16>) -> tensor<32x64xbf16>
  %dwt = linalg.matmul indexing_maps = [#wt_lhs, #wt_rhs, #wt_out] {nvfp4.precision = "nvfp4"}
      ins(%x, %dy : tensor<32x64xbf16>, tensor<32x48xbf16>)
      outs(%dw0 : tensor<64x48xbf16>) -> tensor<64x48xbf16>
  return %y, %dx, %dwt : tensor<32x48xbf16>, tensor<32x64xbf16>, tensor<64x48xbf16>
}

// -----

// A result map that transposes, and a non-zero init: the product is computed
// in f32, transposed back to the result's order and added to the init in f32
// with one rounding to bf16.
// CHECK-LABEL: func.func @transposed_result_accumulate
// CHECK-SAME:    %[[C:[^:]*]]: tensor<48x32xbf16>
// CHECK:         %[[P:.*]] = nvfp4.scaled_matmul {{.*}} -> tensor<32x48xf32>
// CHECK:         %[[PT:.*]] = linalg.transpose ins(%[[P]] : tensor<32x48xf32>) outs(%{{.*}} : tensor<48x32xf32>) permutation = [1, 0]
// CHECK:         %[[R:.*]] = linalg.generic {{.*}} ins(%[[PT]] : tensor<48x32xf32>) outs(%[[C]] : tensor<48x32xbf16>)
// CHECK:           %[[E:.*]] = arith.extf %{{.*}} : bf16 to f32
// CHECK:           %[[S:.*]] = arith.addf %{{.*}}, %[[E]] : f32
// CHECK:           arith.truncf %[[S]] : f32 to bf16
// CHECK:         return %[[R]]
#lhs = affine_map<(m, n, k) -> (m, k)>
#rhs_t = affine_map<(m, n, k) -> (n, k)>
#out = affine_map<(m, n, k) -> (m, n)>
#out_t = affine_map<(m, n, k) -> (n, m)>
func.func @transposed_result_accumulate(%x: tensor<32x64xbf16>, %w: tensor<48x64xbf16> {nvfp4.weight},
                                        %c: tensor<48x32xbf16>) -> tensor<48x32xbf16> {
  %y = linalg.matmul indexing_maps = [#lhs, #rhs_t, #out_t] {nvfp4.precision = "nvfp4"}
      ins(%x, %w : tensor<32x64xbf16>, tensor<48x64xbf16>)
      outs(%c : tensor<48x32xbf16>) -> tensor<48x32xbf16>
  return %y : tensor<48x32xbf16>
}

// -----

// A linalg.generic contraction with two M loops (batch x tokens against a
// shared weight): the operand is collapsed to [M, K] and the product
// expanded back.
// CHECK-LABEL: func.func @generic_two_m_loops
// CHECK:         %[[X:.*]] = tensor.collapse_shape %{{.*}} {{\[}}[0, 1], [2]] : tensor<2x16x32xbf16> into tensor<32x32xbf16>
// CHECK:         %[[QX:.*]] = nvfp4.quantize %[[X]] : tensor<32x32xbf16> -> !nvfp4.tensor<32x32xf4E2M1FN, scale = f8E4M3FN, block = 1x16>
// CHECK:         %[[QW:.*]] = nvfp4.quantize %{{.*}} : tensor<48x32xbf16> -> !nvfp4.tensor<48x32xf4E2M1FN, scale = f8E4M3FN, block = 16x16>
// CHECK:         %[[P:.*]] = nvfp4.scaled_matmul %[[QX]], %[[QW]] role<fprop> {{.*}} -> tensor<32x48xbf16>
// CHECK:         %[[Y:.*]] = tensor.expand_shape %[[P]] {{\[}}[0, 1], [2]] output_shape [2, 16, 48] : tensor<32x48xbf16> into tensor<2x16x48xbf16>
// CHECK:         return %[[Y]]
#g_x = affine_map<(b, t, o, i) -> (b, t, i)>
#g_w = affine_map<(b, t, o, i) -> (o, i)>
#g_y = affine_map<(b, t, o, i) -> (b, t, o)>
func.func @generic_two_m_loops(%x: tensor<2x16x32xbf16>, %w: tensor<48x32xbf16> {nvfp4.weight})
    -> tensor<2x16x48xbf16> {
  %zero = arith.constant 0.0 : bf16
  %e = tensor.empty() : tensor<2x16x48xbf16>
  %init = linalg.fill ins(%zero : bf16) outs(%e : tensor<2x16x48xbf16>) -> tensor<2x16x48xbf16>
  %y = linalg.generic {indexing_maps = [#g_x, #g_w, #g_y],
                       iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%x, %w : tensor<2x16x32xbf16>, tensor<48x32xbf16>)
      outs(%init : tensor<2x16x48xbf16>) attrs = {nvfp4.precision = "nvfp4"} {
  ^bb0(%a: bf16, %b: bf16, %c: bf16):
    %m = arith.mulf %a, %b : bf16
    %s = arith.addf %c, %m : bf16
    linalg.yield %s : bf16
  } -> tensor<2x16x48xbf16>
  return %y : tensor<2x16x48xbf16>
}

// -----

// f32 wgrad operands are rounded to bf16 before the RHT, which is defined on
// bf16.
// CHECK-LABEL: func.func @wgrad_f32
// CHECK:         %[[T:.*]] = arith.truncf %{{.*}} : tensor<32x64xf32> to tensor<32x64xbf16>
// CHECK:         nvfp4.hadamard %[[T]] : tensor<32x64xbf16>
#w_lhs = affine_map<(o, i, t) -> (t, o)>
#w_rhs = affine_map<(o, i, t) -> (t, i)>
#w_out = affine_map<(o, i, t) -> (o, i)>
func.func @wgrad_f32(%dy: tensor<64x32xf32>, %x: tensor<64x16xf32>, %dw0: tensor<32x16xf32>)
    -> tensor<32x16xf32> {
  %dw = linalg.matmul indexing_maps = [#w_lhs, #w_rhs, #w_out]
      {nvfp4.role = "wgrad", nvfp4.precision = "nvfp4"}
      ins(%dy, %x : tensor<64x32xf32>, tensor<64x16xf32>)
      outs(%dw0 : tensor<32x16xf32>) -> tensor<32x16xf32>
  return %dw : tensor<32x16xf32>
}

// -----

// Batched activation GEMM without role or weight: remark, conservative fprop
// recipe (1x16, round to nearest, no RHT); the batched operand B is
// transposed to K-last.
// CHECK-LABEL: func.func @assumed_role
// CHECK-NOT:     rounding<stochastic>
// CHECK-NOT:     nvfp4.hadamard
// CHECK:         linalg.transpose ins(%{{.*}} : tensor<4x64x16xf32>) outs(%{{.*}} : tensor<4x16x64xf32>) permutation = [0, 2, 1]
// CHECK:         nvfp4.scaled_matmul {{.*}} role<fprop> {{.*}} -> tensor<4x32x16xf32>
func.func @assumed_role(%a: tensor<4x32x64xf32>, %b: tensor<4x64x16xf32>,
                        %c: tensor<4x32x16xf32>) -> tensor<4x32x16xf32> {
  // expected-remark @+1 {{no nvfp4.role and no {nvfp4.weight} operand; applied the conservative fprop recipe (round to nearest, no RHT)}}
  %r = linalg.batch_matmul {nvfp4.precision = "nvfp4"}
      ins(%a, %b : tensor<4x32x64xf32>, tensor<4x64x16xf32>)
      outs(%c : tensor<4x32x16xf32>) -> tensor<4x32x16xf32>
  return %r : tensor<4x32x16xf32>
}

// -----

// A weight with 40 rows cannot have 16x16 blocks: 1x16 with a remark.
// CHECK-LABEL: func.func @weight_rows_not_multiple_of_16
// CHECK:         nvfp4.quantize %{{.*}} : tensor<40x32xbf16> -> !nvfp4.tensor<40x32xf4E2M1FN, scale = f8E4M3FN, block = 1x16>
#lhs = affine_map<(m, n, k) -> (m, k)>
#rhs_t = affine_map<(m, n, k) -> (n, k)>
#out = affine_map<(m, n, k) -> (m, n)>
func.func @weight_rows_not_multiple_of_16(%x: tensor<16x32xbf16>, %w: tensor<40x32xbf16> {nvfp4.weight},
                                          %y0: tensor<16x40xbf16>) -> tensor<16x40xbf16> {
  // expected-remark @+1 {{the weight has 40 rows, not a multiple of 16: quantized with 1x16 blocks}}
  %y = linalg.matmul indexing_maps = [#lhs, #rhs_t, #out] {nvfp4.precision = "nvfp4"}
      ins(%x, %w : tensor<16x32xbf16>, tensor<40x32xbf16>)
      outs(%y0 : tensor<16x40xbf16>) -> tensor<16x40xbf16>
  return %y : tensor<16x40xbf16>
}

// -----

// A GEMM marked nvfp4 whose K is not a multiple of 16 is left alone and
// marked bf16, with a warning: the annotation asked for NVFP4.
// CHECK-LABEL: func.func @k_not_multiple_of_16
// CHECK:         linalg.matmul {nvfp4.precision = "bf16"}
// CHECK-NOT:     nvfp4.quantize
func.func @k_not_multiple_of_16(%a: tensor<16x24xf32>, %b: tensor<24x16xf32>,
                                %c: tensor<16x16xf32>) -> tensor<16x16xf32> {
  // expected-warning @+1 {{nvfp4-apply-recipe: nvfp4.precision = "nvfp4" cannot be honoured: the contraction dimension 24 is not a multiple of 16; kept in bf16}}
  %r = linalg.matmul {nvfp4.precision = "nvfp4"}
      ins(%a, %b : tensor<16x24xf32>, tensor<24x16xf32>)
      outs(%c : tensor<16x16xf32>) -> tensor<16x16xf32>
  return %r : tensor<16x16xf32>
}

// -----

// Only GEMMs assigned nvfp4 are rewritten.
// CHECK-LABEL: func.func @bf16_untouched
// CHECK:         linalg.matmul {nvfp4.precision = "bf16"}
// CHECK:         linalg.matmul ins
// CHECK-NOT:     nvfp4.
func.func @bf16_untouched(%a: tensor<16x32xf32>, %b: tensor<32x16xf32>,
                          %c: tensor<16x16xf32>) -> (tensor<16x16xf32>, tensor<16x16xf32>) {
  %r = linalg.matmul {nvfp4.precision = "bf16"}
      ins(%a, %b : tensor<16x32xf32>, tensor<32x16xf32>)
      outs(%c : tensor<16x16xf32>) -> tensor<16x16xf32>
  %s = linalg.matmul ins(%a, %b : tensor<16x32xf32>, tensor<32x16xf32>)
      outs(%c : tensor<16x16xf32>) -> tensor<16x16xf32>
  return %r, %s : tensor<16x16xf32>, tensor<16x16xf32>
}

// -----

// Every stochastically rounded operand gets its own stream: SplitMix64's
// first and second outputs for seed 0, in walk order.
// CHECK-LABEL: func.func @seed_streams
// CHECK:         %[[S0:.*]] = arith.constant -2152535657050944081 : i64
// CHECK:         nvfp4.quantize %{{.*}} rounding<stochastic> seed(%[[S0]])
// CHECK:         %[[S1:.*]] = arith.constant 7960286522194355700 : i64
// CHECK:         nvfp4.quantize %{{.*}} rounding<stochastic> seed(%[[S1]])
func.func @seed_streams(%dy: tensor<16x32xbf16>, %w0: tensor<32x16xbf16> {nvfp4.weight},
                        %w1: tensor<32x16xbf16> {nvfp4.weight}, %init: tensor<16x16xbf16>)
    -> (tensor<16x16xbf16>, tensor<16x16xbf16>) {
  %a = linalg.matmul {nvfp4.role = "dgrad", nvfp4.precision = "nvfp4"}
      ins(%dy, %w0 : tensor<16x32xbf16>, tensor<32x16xbf16>)
      outs(%init : tensor<16x16xbf16>) -> tensor<16x16xbf16>
  %b = linalg.matmul {nvfp4.role = "dgrad", nvfp4.precision = "nvfp4"}
      ins(%dy, %w1 : tensor<16x32xbf16>, tensor<32x16xbf16>)
      outs(%init : tensor<16x16xbf16>) -> tensor<16x16xbf16>
  return %a, %b : tensor<16x16xbf16>, tensor<16x16xbf16>
}

// -----

// The RHT of an f16 wgrad operand: f16 is as wide as bf16, so the operand
// goes to bf16 through f32 (before, an invalid f16 -> bf16 arith.truncf).
// CHECK-LABEL: func.func @wgrad_f16
// CHECK:         %[[EXT:.*]] = arith.extf %{{.*}} : tensor<16x16xf16> to tensor<16x16xf32>
// CHECK:         %[[BF:.*]] = arith.truncf %[[EXT]] : tensor<16x16xf32> to tensor<16x16xbf16>
// CHECK:         nvfp4.hadamard %[[BF]] : tensor<16x16xbf16>
func.func @wgrad_f16(%a: tensor<16x1xf16>, %b: tensor<16x16xf16>) -> tensor<1x16xf16> {
  %z = arith.constant 0.0 : f16
  %e = tensor.empty() : tensor<1x16xf16>
  %init = linalg.fill ins(%z : f16) outs(%e : tensor<1x16xf16>) -> tensor<1x16xf16>
  %y = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (k, m)>, affine_map<(m, n, k) -> (k, n)>, affine_map<(m, n, k) -> (m, n)>]
      {nvfp4.role = "wgrad", nvfp4.precision = "nvfp4"}
      ins(%a, %b : tensor<16x1xf16>, tensor<16x16xf16>) outs(%init : tensor<1x16xf16>) -> tensor<1x16xf16>
  return %y : tensor<1x16xf16>
}
