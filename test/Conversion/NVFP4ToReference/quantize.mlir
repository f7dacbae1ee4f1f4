// RUN: nvfp4-opt %s --convert-nvfp4-to-reference | FileCheck %s

// The structure of the quantize lowering: tensor amax, block amax over a
// [rowBlocks, blockRows, colBlocks, 16] view, one generic for the block
// scales and encode factors, one elementwise generic for the codes.

// CHECK-LABEL: func.func @quantize_1x16
// CHECK-SAME: (%[[X:.*]]: tensor<4x32xbf16>) -> (tensor<4x32xi8>, tensor<4x2xi8>, f32)
// CHECK: %[[V:.*]] = tensor.expand_shape {{.*}} : tensor<128xbf16> into tensor<4x1x2x16xbf16>
// CHECK: linalg.reduce ins(%[[V]] : tensor<4x1x2x16xbf16>) {{.*}} dimensions = [0, 1, 2, 3]
// CHECK: linalg.reduce ins(%[[V]] : tensor<4x1x2x16xbf16>) {{.*}} dimensions = [1, 3]
// CHECK: math.roundeven
// CHECK: linalg.generic
// CHECK-SAME: ins(%[[V]], %{{.*}} : tensor<4x1x2x16xbf16>, tensor<4x2xf32>)
// CHECK-SAME: outs(%{{.*}} : tensor<4x1x2x16xi8>)
// CHECK-NOT: nvfp4.
func.func @quantize_1x16(%x: tensor<4x32xbf16>)
    -> !nvfp4.tensor<4x32xf4E2M1FN, scale = f8E4M3FN, block = 1x16> {
  %q = nvfp4.quantize %x : tensor<4x32xbf16>
      -> !nvfp4.tensor<4x32xf4E2M1FN, scale = f8E4M3FN, block = 1x16>
  return %q : !nvfp4.tensor<4x32xf4E2M1FN, scale = f8E4M3FN, block = 1x16>
}

// An explicit amax replaces the tensor reduction.
// CHECK-LABEL: func.func @quantize_explicit_amax
// CHECK-SAME: %[[A:arg[0-9]+]]: f32)
// CHECK-NOT: dimensions = [0, 1, 2, 3]
// CHECK: arith.divf %{{.*}}, %[[A]]
// CHECK: return {{.*}}, {{.*}}, %[[A]]
func.func @quantize_explicit_amax(%x: tensor<32x32xbf16>, %a: f32)
    -> !nvfp4.tensor<32x32xf4E2M1FN, scale = f8E4M3FN, block = 16x16> {
  %q = nvfp4.quantize %x amax(%a) : tensor<32x32xbf16>
      -> !nvfp4.tensor<32x32xf4E2M1FN, scale = f8E4M3FN, block = 16x16>
  return %q : !nvfp4.tensor<32x32xf4E2M1FN, scale = f8E4M3FN, block = 16x16>
}

// Stochastic rounding draws Philox bits (32x32 -> 64 multiplies) keyed by
// the seed.
// CHECK-LABEL: func.func @quantize_stochastic
// CHECK: linalg.generic
// CHECK: linalg.index 3
// CHECK: arith.mului_extended
// CHECK: math.fma
// CHECK: math.floor
func.func @quantize_stochastic(%x: tensor<4x32xbf16>, %s: i64)
    -> !nvfp4.tensor<4x32xf4E2M1FN, scale = f8E4M3FN, block = 1x16> {
  %q = nvfp4.quantize %x rounding<stochastic> seed(%s) : tensor<4x32xbf16>
      -> !nvfp4.tensor<4x32xf4E2M1FN, scale = f8E4M3FN, block = 1x16>
  return %q : !nvfp4.tensor<4x32xf4E2M1FN, scale = f8E4M3FN, block = 1x16>
}

// The RHT sums over an innermost reduction loop against a constant matrix.
// CHECK-LABEL: func.func @hadamard
// CHECK: arith.constant dense<{{.*}}> : tensor<16x16xf32>
// CHECK: linalg.generic
// CHECK-SAME: iterator_types = ["parallel", "parallel", "reduction"]
// CHECK: arith.truncf %{{.*}} : f32 to bf16
func.func @hadamard(%x: tensor<2x32xbf16>) -> tensor<2x32xbf16> {
  %h = nvfp4.hadamard %x : tensor<2x32xbf16>
  return %h : tensor<2x32xbf16>
}
