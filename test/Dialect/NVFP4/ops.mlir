// RUN: nvfp4-opt %s | nvfp4-opt | FileCheck %s
// RUN: nvfp4-opt %s --mlir-print-op-generic | nvfp4-opt | FileCheck %s

// Every op, every optional operand and attribute, and every type parameter
// round-trips through the pretty and the generic form.

!act = !nvfp4.tensor<128x256xf4E2M1FN, scale = f8E4M3FN, block = 1x16>
!wt = !nvfp4.tensor<64x256xf4E2M1FN, scale = f8E4M3FN, block = 16x16>
!sw = !nvfp4.tensor<128x256xf4E2M1FN, scale = f8E4M3FN, block = 1x16, layout = swizzled_128x4>

// CHECK-LABEL: func @amax
// CHECK: nvfp4.amax %{{.*}} : tensor<128x256xbf16>
// CHECK: nvfp4.amax %{{.*}} : tensor<7x3xf32>
func.func @amax(%x: tensor<128x256xbf16>, %y: tensor<7x3xf32>) -> (f32, f32) {
  %a = nvfp4.amax %x : tensor<128x256xbf16>
  %b = nvfp4.amax %y : tensor<7x3xf32>
  return %a, %b : f32, f32
}

// CHECK-LABEL: func @quantize
// CHECK-SAME: (%[[X:.*]]: tensor<128x256xbf16>, %[[A:.*]]: f32, %[[S:.*]]: i64
// CHECK: nvfp4.quantize %[[X]] : tensor<128x256xbf16> -> !nvfp4.tensor<128x256xf4E2M1FN, scale = f8E4M3FN, block = 1x16>
// CHECK: nvfp4.quantize %[[X]] amax(%[[A]]) : tensor<128x256xbf16> -> !nvfp4.tensor<128x256xf4E2M1FN, scale = f8E4M3FN, block = 1x16>
// CHECK: nvfp4.quantize %[[X]] rounding<stochastic> seed(%[[S]]) : tensor<128x256xbf16> -> !nvfp4.tensor<128x256xf4E2M1FN, scale = f8E4M3FN, block = 1x16>
// CHECK: nvfp4.quantize %[[X]] amax(%[[A]]) rounding<stochastic> seed(%[[S]])
// CHECK: nvfp4.quantize %{{.*}} : tensor<64x256xf16> -> !nvfp4.tensor<64x256xf4E2M1FN, scale = f8E4M3FN, block = 16x16>
// CHECK: nvfp4.quantize %[[X]] : tensor<128x256xbf16> -> !nvfp4.tensor<128x256xf4E2M1FN, scale = f8E4M3FN, block = 1x16, layout = swizzled_128x4>
// CHECK: nvfp4.quantize %{{.*}} : tensor<4x32x64xf32> -> !nvfp4.tensor<4x32x64xf4E2M1FN, scale = f8E4M3FN, block = 1x16>
func.func @quantize(%x: tensor<128x256xbf16>, %a: f32, %s: i64,
                    %w: tensor<64x256xf16>, %b: tensor<4x32x64xf32>) {
  %0 = nvfp4.quantize %x : tensor<128x256xbf16> -> !act
  %1 = nvfp4.quantize %x amax(%a) : tensor<128x256xbf16> -> !act
  %2 = nvfp4.quantize %x rounding<stochastic> seed(%s) : tensor<128x256xbf16> -> !act
  %3 = nvfp4.quantize %x amax(%a) rounding<stochastic> seed(%s) : tensor<128x256xbf16> -> !act
  %4 = nvfp4.quantize %w : tensor<64x256xf16> -> !wt
  %5 = nvfp4.quantize %x : tensor<128x256xbf16> -> !sw
  %6 = nvfp4.quantize %b : tensor<4x32x64xf32>
      -> !nvfp4.tensor<4x32x64xf4E2M1FN, scale = f8E4M3FN, block = 1x16>
  return
}

// The default rounding mode is not printed.
// CHECK-LABEL: func @quantize_default_rounding
// CHECK: nvfp4.quantize %{{.*}} : tensor
// CHECK-NOT: rounding
func.func @quantize_default_rounding(%x: tensor<128x256xbf16>) -> !act {
  %0 = nvfp4.quantize %x rounding<nearest_even> : tensor<128x256xbf16> -> !act
  return %0 : !act
}

// CHECK-LABEL: func @dequantize
// CHECK: nvfp4.dequantize %{{.*}} : !nvfp4.tensor<128x256xf4E2M1FN, scale = f8E4M3FN, block = 1x16> -> tensor<128x256xbf16>
// CHECK: nvfp4.dequantize %{{.*}} : !nvfp4.tensor<64x256xf4E2M1FN, scale = f8E4M3FN, block = 16x16> -> tensor<64x256xf32>
func.func @dequantize(%q: !act, %w: !wt) -> (tensor<128x256xbf16>, tensor<64x256xf32>) {
  %0 = nvfp4.dequantize %q : !act -> tensor<128x256xbf16>
  %1 = nvfp4.dequantize %w : !wt -> tensor<64x256xf32>
  return %0, %1 : tensor<128x256xbf16>, tensor<64x256xf32>
}

// CHECK-LABEL: func @hadamard
// CHECK: nvfp4.hadamard %{{.*}} : tensor<256x128xbf16>
// CHECK: nvfp4.hadamard %{{.*}} {sign_mask = 255 : i32} : tensor<256x128xbf16>
// CHECK: nvfp4.hadamard %{{.*}} : tensor<16xbf16>
func.func @hadamard(%x: tensor<256x128xbf16>, %v: tensor<16xbf16>) {
  %0 = nvfp4.hadamard %x : tensor<256x128xbf16>
  %1 = nvfp4.hadamard %x {sign_mask = 255 : i32} : tensor<256x128xbf16>
  %2 = nvfp4.hadamard %v : tensor<16xbf16>
  return
}

// The forms nvfp4-fuse-quantization creates: an RHT carried by an amax and
// a quantization, and a GEMM that also returns its output's amax.
// CHECK-LABEL: func @fused_forms
// CHECK: nvfp4.amax %[[X:.*]] hadamard(255) : tensor<128x256xbf16>
// CHECK: nvfp4.quantize %[[X]] amax(%{{.*}}) hadamard(55272) rounding<stochastic> seed(%{{.*}}) : tensor<128x256xbf16>
// CHECK: %{{.*}}, %{{.*}} = nvfp4.scaled_matmul %{{.*}}, %{{.*}} role<fprop> : {{.*}} -> tensor<128x64xbf16>, f32
func.func @fused_forms(%x: tensor<128x256xbf16>, %s: i64, %w: !wt) -> (!act, tensor<128x64xbf16>, f32) {
  %a = nvfp4.amax %x hadamard(255) : tensor<128x256xbf16>
  %q = nvfp4.quantize %x amax(%a) hadamard(55272) rounding<stochastic> seed(%s) : tensor<128x256xbf16> -> !act
  %c, %m = nvfp4.scaled_matmul %q, %w role<fprop> : !act, !wt -> tensor<128x64xbf16>, f32
  return %q, %c, %m : !act, tensor<128x64xbf16>, f32
}

// CHECK-LABEL: func @scaled_matmul_quantize
// CHECK: nvfp4.scaled_matmul_quantize %{{.*}}, %{{.*}} amax(%{{.*}}) : !nvfp4.tensor<128x256xf4E2M1FN, scale = f8E4M3FN, block = 1x16>, !nvfp4.tensor<64x256xf4E2M1FN, scale = f8E4M3FN, block = 16x16> -> !nvfp4.tensor<128x64xf4E2M1FN, scale = f8E4M3FN, block = 1x16>
// CHECK: nvfp4.scaled_matmul_quantize %{{.*}}, %{{.*}} amax(%{{.*}}) alpha(%{{.*}}) role<fprop> {intermediate = f32} : {{.*}}
func.func @scaled_matmul_quantize(%a: !act, %w: !wt, %g: f32, %al: f32)
    -> (!nvfp4.tensor<128x64xf4E2M1FN, scale = f8E4M3FN, block = 1x16>,
        !nvfp4.tensor<128x64xf4E2M1FN, scale = f8E4M3FN, block = 1x16>) {
  %0 = nvfp4.scaled_matmul_quantize %a, %w amax(%g) : !act, !wt
      -> !nvfp4.tensor<128x64xf4E2M1FN, scale = f8E4M3FN, block = 1x16>
  %1 = nvfp4.scaled_matmul_quantize %a, %w amax(%g) alpha(%al) role<fprop> {intermediate = f32} : !act, !wt
      -> !nvfp4.tensor<128x64xf4E2M1FN, scale = f8E4M3FN, block = 1x16>
  return %0, %1 : !nvfp4.tensor<128x64xf4E2M1FN, scale = f8E4M3FN, block = 1x16>,
      !nvfp4.tensor<128x64xf4E2M1FN, scale = f8E4M3FN, block = 1x16>
}

// CHECK-LABEL: func @scaled_matmul
// CHECK: nvfp4.scaled_matmul %{{.*}}, %{{.*}} : !nvfp4.tensor<128x256xf4E2M1FN, scale = f8E4M3FN, block = 1x16>, !nvfp4.tensor<64x256xf4E2M1FN, scale = f8E4M3FN, block = 16x16> -> tensor<128x64xbf16>
// CHECK: nvfp4.scaled_matmul %{{.*}}, %{{.*}} alpha(%{{.*}}) role<wgrad> : {{.*}} -> tensor<128x64xf32>
// CHECK: nvfp4.scaled_matmul {{.*}} -> tensor<2x8x32xf32>
func.func @scaled_matmul(%a: !act, %b: !wt, %alpha: f32,
    %x: !nvfp4.tensor<2x8x64xf4E2M1FN, scale = f8E4M3FN, block = 1x16>,
    %y: !nvfp4.tensor<2x32x64xf4E2M1FN, scale = f8E4M3FN, block = 1x16>) {
  %0 = nvfp4.scaled_matmul %a, %b : !act, !wt -> tensor<128x64xbf16>
  %1 = nvfp4.scaled_matmul %a, %b alpha(%alpha) role<wgrad> : !act, !wt -> tensor<128x64xf32>
  %2 = nvfp4.scaled_matmul %x, %y
      : !nvfp4.tensor<2x8x64xf4E2M1FN, scale = f8E4M3FN, block = 1x16>,
        !nvfp4.tensor<2x32x64xf4E2M1FN, scale = f8E4M3FN, block = 1x16>
      -> tensor<2x8x32xf32>
  return
}

// Scale tensor shapes follow the layout: linear 1x16 -> [128, 16], linear
// 16x16 -> [4, 16], swizzled 128x4 -> [roundUp(rows, 128), roundUp(cols/16, 4)].
// CHECK-LABEL: func @pack_unpack
// CHECK: nvfp4.pack %{{.*}}, %{{.*}}, %{{.*}} : !nvfp4.tensor<128x256xf4E2M1FN, scale = f8E4M3FN, block = 1x16>
// CHECK: nvfp4.pack %{{.*}}, %{{.*}}, %{{.*}} : !nvfp4.tensor<64x256xf4E2M1FN, scale = f8E4M3FN, block = 16x16>
// CHECK: nvfp4.pack %{{.*}}, %{{.*}}, %{{.*}} : !nvfp4.tensor<32x32xf4E2M1FN, scale = f8E4M3FN, block = 1x16, layout = swizzled_128x4>
// CHECK: %{{.*}}, %{{.*}}, %{{.*}} = nvfp4.unpack %{{.*}} : !nvfp4.tensor<128x256xf4E2M1FN, scale = f8E4M3FN, block = 1x16>
func.func @pack_unpack(%c: tensor<128x256xf4E2M1FN>, %s: tensor<128x16xf8E4M3FN>,
                       %wc: tensor<64x256xf4E2M1FN>, %ws: tensor<4x16xf8E4M3FN>,
                       %zc: tensor<32x32xf4E2M1FN>, %zs: tensor<128x4xf8E4M3FN>,
                       %a: f32, %q: !act) {
  %0 = nvfp4.pack %c, %s, %a : !act
  %1 = nvfp4.pack %wc, %ws, %a : !wt
  %2 = nvfp4.pack %zc, %zs, %a
      : !nvfp4.tensor<32x32xf4E2M1FN, scale = f8E4M3FN, block = 1x16, layout = swizzled_128x4>
  %codes, %scales, %amax = nvfp4.unpack %q : !act
  return
}

// CHECK-LABEL: func @swizzle_scales
// CHECK: nvfp4.swizzle_scales %{{.*}} : !nvfp4.tensor<128x256xf4E2M1FN, scale = f8E4M3FN, block = 1x16> -> !nvfp4.tensor<128x256xf4E2M1FN, scale = f8E4M3FN, block = 1x16, layout = swizzled_128x4>
// CHECK: nvfp4.swizzle_scales %{{.*}} : !nvfp4.tensor<128x256xf4E2M1FN, scale = f8E4M3FN, block = 1x16, layout = swizzled_128x4> -> !nvfp4.tensor<128x256xf4E2M1FN, scale = f8E4M3FN, block = 1x16>
func.func @swizzle_scales(%q: !act) -> !act {
  %0 = nvfp4.swizzle_scales %q : !act -> !sw
  %1 = nvfp4.swizzle_scales %0 : !sw -> !act
  return %1 : !act
}

// CHECK-LABEL: func @transpose
// CHECK: nvfp4.transpose %{{.*}} : !nvfp4.tensor<2x32x64xf4E2M1FN, scale = f8E4M3FN, block = 16x16> -> !nvfp4.tensor<2x64x32xf4E2M1FN, scale = f8E4M3FN, block = 16x16>
func.func @transpose(%q: !nvfp4.tensor<2x32x64xf4E2M1FN, scale = f8E4M3FN, block = 16x16>)
    -> !nvfp4.tensor<2x64x32xf4E2M1FN, scale = f8E4M3FN, block = 16x16> {
  %0 = nvfp4.transpose %q : !nvfp4.tensor<2x32x64xf4E2M1FN, scale = f8E4M3FN, block = 16x16>
      -> !nvfp4.tensor<2x64x32xf4E2M1FN, scale = f8E4M3FN, block = 16x16>
  return %0 : !nvfp4.tensor<2x64x32xf4E2M1FN, scale = f8E4M3FN, block = 16x16>
}

// Every optional part of both quantizations, a batched f32 input with
// swizzled scales on one side, and the bare form.
// CHECK-LABEL: func @dual_quantize
// CHECK: nvfp4.dual_quantize %{{.*}} amax(%{{.*}}) rounding<stochastic> seed(%{{.*}}) columnwise amax(%{{.*}}) hadamard(55272) rounding<stochastic> seed(%{{.*}}) : tensor<32x64xbf16> -> !nvfp4.tensor<32x64xf4E2M1FN, scale = f8E4M3FN, block = 1x16>, !nvfp4.tensor<64x32xf4E2M1FN, scale = f8E4M3FN, block = 1x16>
// CHECK: nvfp4.dual_quantize %{{.*}} columnwise : tensor<2x16x48xf32> -> !nvfp4.tensor<2x16x48xf4E2M1FN, scale = f8E4M3FN, block = 1x16, layout = swizzled_128x4>, !nvfp4.tensor<2x48x16xf4E2M1FN, scale = f8E4M3FN, block = 1x16>
// CHECK: nvfp4.dual_quantize %{{.*}} columnwise hadamard(255) : tensor<32x64xbf16>
func.func @dual_quantize(%x: tensor<32x64xbf16>, %y: tensor<2x16x48xf32>,
                         %a: f32, %b: f32, %s: i64, %t: i64) {
  %r0, %c0 = nvfp4.dual_quantize %x amax(%a) rounding<stochastic> seed(%s)
      columnwise amax(%b) hadamard(55272) rounding<stochastic> seed(%t)
      : tensor<32x64xbf16>
      -> !nvfp4.tensor<32x64xf4E2M1FN, scale = f8E4M3FN, block = 1x16>,
         !nvfp4.tensor<64x32xf4E2M1FN, scale = f8E4M3FN, block = 1x16>
  %r1, %c1 = nvfp4.dual_quantize %y columnwise : tensor<2x16x48xf32>
      -> !nvfp4.tensor<2x16x48xf4E2M1FN, scale = f8E4M3FN, block = 1x16, layout = swizzled_128x4>,
         !nvfp4.tensor<2x48x16xf4E2M1FN, scale = f8E4M3FN, block = 1x16>
  %r2, %c2 = nvfp4.dual_quantize %x columnwise hadamard(255)
      : tensor<32x64xbf16>
      -> !nvfp4.tensor<32x64xf4E2M1FN, scale = f8E4M3FN, block = 1x16>,
         !nvfp4.tensor<64x32xf4E2M1FN, scale = f8E4M3FN, block = 1x16>
  return
}

// Model annotations are verified by the dialect but otherwise untouched.
// CHECK-LABEL: func @annotations
// CHECK-SAME: {nvfp4.weight}
// CHECK: linalg.matmul {nvfp4.kind = "ffn", nvfp4.layer = 3 : i64, nvfp4.precision = "nvfp4", nvfp4.role = "fprop"}
func.func @annotations(%x: tensor<16x32xbf16>, %w: tensor<32x64xbf16> {nvfp4.weight},
                       %o: tensor<16x64xf32>) -> tensor<16x64xf32> {
  %0 = linalg.matmul {nvfp4.layer = 3 : i64, nvfp4.kind = "ffn", nvfp4.role = "fprop",
                      nvfp4.precision = "nvfp4"}
      ins(%x, %w : tensor<16x32xbf16>, tensor<32x64xbf16>)
      outs(%o : tensor<16x64xf32>) -> tensor<16x64xf32>
  return %0 : tensor<16x64xf32>
}

// The MX members of the family: MXFP8 (E4M3, E5M2) and MXFP4, E8M0 scales
// per 1x32 block, in every op that takes them.
// CHECK-LABEL: func @mx_formats
// CHECK: nvfp4.quantize %{{.*}} : tensor<32x64xbf16> -> !nvfp4.tensor<32x64xf8E4M3FN, scale = f8E8M0FNU, block = 1x32>
// CHECK: nvfp4.quantize %{{.*}} : tensor<32x64xbf16> -> !nvfp4.tensor<32x64xf8E5M2, scale = f8E8M0FNU, block = 1x32, layout = swizzled_128x4>
// CHECK: nvfp4.quantize %{{.*}} : tensor<16x64xf32> -> !nvfp4.tensor<16x64xf4E2M1FN, scale = f8E8M0FNU, block = 1x32>
// CHECK: nvfp4.dequantize %{{.*}} : !nvfp4.tensor<32x64xf8E4M3FN, scale = f8E8M0FNU, block = 1x32> -> tensor<32x64xbf16>
// CHECK: nvfp4.scaled_matmul %{{.*}}, %{{.*}} : !nvfp4.tensor<32x64xf8E4M3FN, scale = f8E8M0FNU, block = 1x32>, !nvfp4.tensor<32x64xf8E5M2, scale = f8E8M0FNU, block = 1x32, layout = swizzled_128x4> -> tensor<32x32xf32>
// CHECK: nvfp4.unpack %{{.*}} : !nvfp4.tensor<16x64xf4E2M1FN, scale = f8E8M0FNU, block = 1x32>
// CHECK: nvfp4.pack %{{.*}}, %{{.*}}, %{{.*}} : !nvfp4.tensor<16x64xf4E2M1FN, scale = f8E8M0FNU, block = 1x32>
// CHECK: nvfp4.swizzle_scales %{{.*}} : !nvfp4.tensor<32x64xf8E4M3FN, scale = f8E8M0FNU, block = 1x32> -> !nvfp4.tensor<32x64xf8E4M3FN, scale = f8E8M0FNU, block = 1x32, layout = swizzled_128x4>
func.func @mx_formats(%x: tensor<32x64xbf16>, %y: tensor<16x64xf32>) {
  %a = nvfp4.quantize %x : tensor<32x64xbf16>
      -> !nvfp4.tensor<32x64xf8E4M3FN, scale = f8E8M0FNU, block = 1x32>
  %b = nvfp4.quantize %x : tensor<32x64xbf16>
      -> !nvfp4.tensor<32x64xf8E5M2, scale = f8E8M0FNU, block = 1x32, layout = swizzled_128x4>
  %c = nvfp4.quantize %y : tensor<16x64xf32>
      -> !nvfp4.tensor<16x64xf4E2M1FN, scale = f8E8M0FNU, block = 1x32>
  %d = nvfp4.dequantize %a : !nvfp4.tensor<32x64xf8E4M3FN, scale = f8E8M0FNU, block = 1x32>
      -> tensor<32x64xbf16>
  %e = nvfp4.scaled_matmul %a, %b
      : !nvfp4.tensor<32x64xf8E4M3FN, scale = f8E8M0FNU, block = 1x32>,
        !nvfp4.tensor<32x64xf8E5M2, scale = f8E8M0FNU, block = 1x32, layout = swizzled_128x4>
      -> tensor<32x32xf32>
  %codes, %scales, %amax = nvfp4.unpack %c
      : !nvfp4.tensor<16x64xf4E2M1FN, scale = f8E8M0FNU, block = 1x32>
  %f = nvfp4.pack %codes, %scales, %amax
      : !nvfp4.tensor<16x64xf4E2M1FN, scale = f8E8M0FNU, block = 1x32>
  %g = nvfp4.swizzle_scales %a : !nvfp4.tensor<32x64xf8E4M3FN, scale = f8E8M0FNU, block = 1x32>
      -> !nvfp4.tensor<32x64xf8E4M3FN, scale = f8E8M0FNU, block = 1x32, layout = swizzled_128x4>
  return
}
