// RUN: nvfp4-opt %s | nvfp4-opt | FileCheck %s
// RUN: nvfp4-opt %s --mlir-print-op-generic | nvfp4-opt | FileCheck %s
// RUN: nvfp4-opt %s --canonicalize | FileCheck %s --check-prefix=CANON

// tensor_scale = decode (a checkpoint's weight_scale_2, kept bit for bit)
// round-trips after the layout and is carried by every op that keeps the
// tensor scale: pack/unpack, swizzle_scales, transpose; dequantize and
// scaled_matmul consume it.

!ck = !nvfp4.tensor<64x256xf4E2M1FN, scale = f8E4M3FN, block = 1x16, tensor_scale = decode>
!ck2d = !nvfp4.tensor<64x256xf4E2M1FN, scale = f8E4M3FN, block = 16x16, tensor_scale = decode>
!act = !nvfp4.tensor<128x256xf4E2M1FN, scale = f8E4M3FN, block = 1x16>

// CHECK-LABEL: func @decode_scale
// CHECK-SAME: !nvfp4.tensor<64x256xf4E2M1FN, scale = f8E4M3FN, block = 1x16, tensor_scale = decode>
// CHECK: nvfp4.pack %{{.*}}, %{{.*}}, %{{.*}} : !nvfp4.tensor<64x256xf4E2M1FN, scale = f8E4M3FN, block = 1x16, tensor_scale = decode>
// CHECK: nvfp4.unpack %{{.*}} : !nvfp4.tensor<64x256xf4E2M1FN, scale = f8E4M3FN, block = 1x16, tensor_scale = decode>
// CHECK: nvfp4.swizzle_scales %{{.*}} : !nvfp4.tensor<64x256xf4E2M1FN, scale = f8E4M3FN, block = 1x16, tensor_scale = decode> -> !nvfp4.tensor<64x256xf4E2M1FN, scale = f8E4M3FN, block = 1x16, layout = swizzled_128x4, tensor_scale = decode>
// CHECK: nvfp4.transpose %{{.*}} : !nvfp4.tensor<64x256xf4E2M1FN, scale = f8E4M3FN, block = 16x16, tensor_scale = decode> -> !nvfp4.tensor<256x64xf4E2M1FN, scale = f8E4M3FN, block = 16x16, tensor_scale = decode>
// CHECK: nvfp4.dequantize %{{.*}} : !nvfp4.tensor<64x256xf4E2M1FN, scale = f8E4M3FN, block = 1x16, tensor_scale = decode> -> tensor<64x256xbf16>
// CHECK: nvfp4.scaled_matmul %{{.*}}, %{{.*}} role<fprop> : !nvfp4.tensor<128x256xf4E2M1FN, scale = f8E4M3FN, block = 1x16>, !nvfp4.tensor<64x256xf4E2M1FN, scale = f8E4M3FN, block = 1x16, tensor_scale = decode> -> tensor<128x64xbf16>
func.func @decode_scale(%w: !ck {nvfp4.weight}, %w2: !ck2d, %x: !act,
                        %c: tensor<64x256xf4E2M1FN>, %s: tensor<64x16xf8E4M3FN>,
                        %d: f32) {
  %0 = nvfp4.pack %c, %s, %d : !ck
  %codes, %scales, %decode = nvfp4.unpack %w : !ck
  %1 = nvfp4.swizzle_scales %w : !ck
      -> !nvfp4.tensor<64x256xf4E2M1FN, scale = f8E4M3FN, block = 1x16, layout = swizzled_128x4, tensor_scale = decode>
  %2 = nvfp4.transpose %w2 : !ck2d
      -> !nvfp4.tensor<256x64xf4E2M1FN, scale = f8E4M3FN, block = 16x16, tensor_scale = decode>
  %3 = nvfp4.dequantize %w : !ck -> tensor<64x256xbf16>
  %4 = nvfp4.scaled_matmul %x, %w role<fprop> : !act, !ck -> tensor<128x64xbf16>
  return
}

// `tensor_scale = amax` is the default and is not printed.
// CHECK-LABEL: func @amax_default
// CHECK-SAME: (%{{.*}}: !nvfp4.tensor<16x32xf4E2M1FN, scale = f8E4M3FN, block = 1x16>)
func.func @amax_default(%q: !nvfp4.tensor<16x32xf4E2M1FN, scale = f8E4M3FN, block = 1x16, tensor_scale = amax>) {
  return
}

// pack(unpack(q)) folds only to a value of the same type: the kind is part
// of it, so a decode scale never turns into an amax.
// CANON-LABEL: func @no_kind_change
// CANON: %[[C:.*]], %[[S:.*]], %[[D:.*]] = nvfp4.unpack %arg0
// CANON: %[[P:.*]] = nvfp4.pack %[[C]], %[[S]], %[[D]] : !nvfp4.tensor<64x256xf4E2M1FN, scale = f8E4M3FN, block = 1x16>
// CANON: return %[[P]]
func.func @no_kind_change(%w: !ck) -> !nvfp4.tensor<64x256xf4E2M1FN, scale = f8E4M3FN, block = 1x16> {
  %c, %s, %d = nvfp4.unpack %w : !ck
  %p = nvfp4.pack %c, %s, %d : !nvfp4.tensor<64x256xf4E2M1FN, scale = f8E4M3FN, block = 1x16>
  return %p : !nvfp4.tensor<64x256xf4E2M1FN, scale = f8E4M3FN, block = 1x16>
}
