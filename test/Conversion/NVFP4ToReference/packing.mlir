// RUN: nvfp4-opt %s --convert-nvfp4-to-reference | FileCheck %s

!act = !nvfp4.tensor<16x32xf4E2M1FN, scale = f8E4M3FN, block = 1x16>
!sw = !nvfp4.tensor<16x32xf4E2M1FN, scale = f8E4M3FN, block = 1x16, layout = swizzled_128x4>

// pack/unpack bitcast between builtin f4E2M1FN/f8E4M3FN tensors and the
// i8 reference form.
// CHECK-LABEL: func.func @pack
// CHECK: arith.bitcast %{{.*}} : f4E2M1FN to i4
// CHECK: arith.extui %{{.*}} : i4 to i8
// CHECK: arith.bitcast %{{.*}} : f8E4M3FN to i8
func.func @pack(%c: tensor<16x32xf4E2M1FN>, %s: tensor<16x2xf8E4M3FN>, %a: f32) -> !act {
  %q = nvfp4.pack %c, %s, %a : !act
  return %q : !act
}

// CHECK-LABEL: func.func @unpack
// CHECK: arith.trunci %{{.*}} : i8 to i4
// CHECK: arith.bitcast %{{.*}} : i4 to f4E2M1FN
// CHECK: arith.bitcast %{{.*}} : i8 to f8E4M3FN
func.func @unpack(%q: !act) -> (tensor<16x32xf4E2M1FN>, tensor<16x2xf8E4M3FN>, f32) {
  %c, %s, %a = nvfp4.unpack %q : !act
  return %c, %s, %a : tensor<16x32xf4E2M1FN>, tensor<16x2xf8E4M3FN>, f32
}

// The swizzle zero-pads to 128x4 and transposes 512-byte atoms.
// CHECK-LABEL: func.func @swizzle
// CHECK: linalg.fill ins(%{{.*}} : i8) outs(%{{.*}} : tensor<1x128x4xi8>)
// CHECK: tensor.insert_slice %{{.*}} into %{{.*}}[0, 0, 0] [1, 16, 2] [1, 1, 1]
// CHECK: linalg.transpose ins(%{{.*}} : tensor<1x1x4x32x1x4xi8>) outs(%{{.*}} : tensor<1x1x1x32x4x4xi8>) permutation = [0, 1, 4, 3, 2, 5]
func.func @swizzle(%q: !act) -> !sw {
  %s = nvfp4.swizzle_scales %q : !act -> !sw
  return %s : !sw
}

// transpose swaps the last two dimensions of the i8 codes and of the tile
// scales; the amax passes through.
// CHECK-LABEL: func.func @transpose
// CHECK-SAME: (%[[C:[^:]*]]: tensor<2x32x64xi8>, %[[S:[^:]*]]: tensor<2x2x4xi8>, %[[A:[^:]*]]: f32)
// CHECK: %[[TC:.*]] = linalg.transpose ins(%[[C]] : tensor<2x32x64xi8>) outs(%{{.*}} : tensor<2x64x32xi8>) permutation = [0, 2, 1]
// CHECK: %[[TS:.*]] = linalg.transpose ins(%[[S]] : tensor<2x2x4xi8>) outs(%{{.*}} : tensor<2x4x2xi8>) permutation = [0, 2, 1]
// CHECK: return %[[TC]], %[[TS]], %[[A]]
func.func @transpose(%q: !nvfp4.tensor<2x32x64xf4E2M1FN, scale = f8E4M3FN, block = 16x16>)
    -> !nvfp4.tensor<2x64x32xf4E2M1FN, scale = f8E4M3FN, block = 16x16> {
  %t = nvfp4.transpose %q : !nvfp4.tensor<2x32x64xf4E2M1FN, scale = f8E4M3FN, block = 16x16>
      -> !nvfp4.tensor<2x64x32xf4E2M1FN, scale = f8E4M3FN, block = 16x16>
  return %t : !nvfp4.tensor<2x64x32xf4E2M1FN, scale = f8E4M3FN, block = 16x16>
}
