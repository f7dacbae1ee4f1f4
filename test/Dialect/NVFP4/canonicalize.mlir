// RUN: nvfp4-opt %s -canonicalize -split-input-file | FileCheck %s

!act = !nvfp4.tensor<128x256xf4E2M1FN, scale = f8E4M3FN, block = 1x16>
!sw = !nvfp4.tensor<128x256xf4E2M1FN, scale = f8E4M3FN, block = 1x16, layout = swizzled_128x4>

// unpack(pack(c, s, a)) is (c, s, a).
// CHECK-LABEL: func @unpack_of_pack
// CHECK-SAME: (%[[C:.*]]: tensor<128x256xf4E2M1FN>, %[[S:.*]]: tensor<128x16xf8E4M3FN>, %[[A:.*]]: f32)
// CHECK-NOT: nvfp4.{{[a-z_]+}} %
// CHECK: return %[[C]], %[[S]], %[[A]]
func.func @unpack_of_pack(%c: tensor<128x256xf4E2M1FN>, %s: tensor<128x16xf8E4M3FN>, %a: f32)
    -> (tensor<128x256xf4E2M1FN>, tensor<128x16xf8E4M3FN>, f32) {
  %q = nvfp4.pack %c, %s, %a : !act
  %c2, %s2, %a2 = nvfp4.unpack %q : !act
  return %c2, %s2, %a2 : tensor<128x256xf4E2M1FN>, tensor<128x16xf8E4M3FN>, f32
}

// pack(unpack(q)) is q.
// CHECK-LABEL: func @pack_of_unpack
// CHECK-SAME: (%[[Q:[^:]*]]: !nvfp4.tensor
// CHECK-NOT: nvfp4.{{[a-z_]+}} %
// CHECK: return %[[Q]]
func.func @pack_of_unpack(%q: !act) -> !act {
  %c, %s, %a = nvfp4.unpack %q : !act
  %p = nvfp4.pack %c, %s, %a : !act
  return %p : !act
}

// Parts of two different tensors do not recombine into either.
// CHECK-LABEL: func @pack_of_mixed_unpacks
// CHECK: nvfp4.pack
func.func @pack_of_mixed_unpacks(%q: !act, %r: !act) -> !act {
  %c, %s, %a = nvfp4.unpack %q : !act
  %c2, %s2, %a2 = nvfp4.unpack %r : !act
  %p = nvfp4.pack %c, %s2, %a : !act
  return %p : !act
}

// A swizzle to the same layout is the input.
// CHECK-LABEL: func @swizzle_same_layout
// CHECK-SAME: (%[[Q:[^:]*]]: !nvfp4.tensor
// CHECK-NEXT: return %[[Q]]
func.func @swizzle_same_layout(%q: !sw) -> !sw {
  %0 = nvfp4.swizzle_scales %q : !sw -> !sw
  return %0 : !sw
}

// Swizzling there and back is the original value.
// CHECK-LABEL: func @swizzle_round_trip
// CHECK-SAME: (%[[Q:[^:]*]]: !nvfp4.tensor
// CHECK-NEXT: return %[[Q]]
func.func @swizzle_round_trip(%q: !act) -> !act {
  %0 = nvfp4.swizzle_scales %q : !act -> !sw
  %1 = nvfp4.swizzle_scales %0 : !sw -> !act
  return %1 : !act
}

// dequantize(quantize(x)) loses information and must stay.
// CHECK-LABEL: func @dequantize_of_quantize_is_not_identity
// CHECK: %[[Q:.*]] = nvfp4.quantize
// CHECK: %[[D:.*]] = nvfp4.dequantize %[[Q]]
// CHECK: return %[[D]]
func.func @dequantize_of_quantize_is_not_identity(%x: tensor<128x256xbf16>) -> tensor<128x256xbf16> {
  %q = nvfp4.quantize %x : tensor<128x256xbf16> -> !act
  %d = nvfp4.dequantize %q : !act -> tensor<128x256xbf16>
  return %d : tensor<128x256xbf16>
}

// Ops without users are removed (they are pure), including stochastic
// quantization: its randomness is a function of the seed.
// CHECK-LABEL: func @dead_ops
// CHECK-NEXT: return
func.func @dead_ops(%x: tensor<128x256xbf16>, %s: i64) {
  %a = nvfp4.amax %x : tensor<128x256xbf16>
  %q = nvfp4.quantize %x rounding<stochastic> seed(%s) : tensor<128x256xbf16> -> !act
  %h = nvfp4.hadamard %x : tensor<128x256xbf16>
  return
}

// -----

!w = !nvfp4.tensor<2x32x64xf4E2M1FN, scale = f8E4M3FN, block = 16x16>
!wt = !nvfp4.tensor<2x64x32xf4E2M1FN, scale = f8E4M3FN, block = 16x16>

// Transposing twice is the original value; a single transpose stays.
// CHECK-LABEL: func @transpose_twice
// CHECK-SAME: (%[[Q:[^:]*]]: !nvfp4.tensor
// CHECK-NEXT: %[[T:.*]] = nvfp4.transpose %[[Q]]
// CHECK-NEXT: return %[[Q]], %[[T]]
func.func @transpose_twice(%q: !w) -> (!w, !wt) {
  %0 = nvfp4.transpose %q : !w -> !wt
  %1 = nvfp4.transpose %0 : !wt -> !w
  return %1, %0 : !w, !wt
}
