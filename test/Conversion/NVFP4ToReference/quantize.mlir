// RUN: nvfp4-opt %s --convert-nvfp4-to-reference | FileCheck %s

// The structure of the quantize lowering: tensor amax, block amax over a
// [rowBlocks, blockRows, colBlocks, 16] view, one generic for the block
// scales and encode factors, one elementwise generic for the codes.

// The maps of the RHT stages (@hadamard below): the pair's first and second
// element.
// CHECK-DAG: #[[FIRST:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, 0, d3)>
// CHECK-DAG: #[[SECOND:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, 1, d3)>

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

// The RHT is the butterfly of NUMERICS.md section 4: the sign flips of
// 0xD7E8 (bits 3, 5-10, 12, 14, 15), then one generic per stage h = 1, 2,
// 4, 8 over [chunks, 16 / 2h, 2, h], reading each pair's first and second
// element (the maps with 0 and 1 in the pair dimension) and writing their
// sum and difference, then the multiply by 0.25 and the BF16 rounding.
// CHECK-LABEL: func.func @hadamard
// CHECK: arith.constant dense<[false, false, false, true, false, true, true, true, true, true, true, false, true, false, true, true]> : tensor<16xi1>
// CHECK: linalg.generic
// CHECK: arith.negf
// CHECK: arith.select
// CHECK: linalg.generic {indexing_maps = [#[[FIRST]], #[[SECOND]], #{{.*}}]{{.*}} ins({{.*}} : tensor<4x8x2x1xf32>, tensor<4x8x2x1xf32>)
// CHECK: %[[DIFF:.*]] = arith.subf
// CHECK: %[[SUM:.*]] = arith.addf
// CHECK: arith.select %{{.*}}, %[[SUM]], %[[DIFF]]
// CHECK: linalg.generic {indexing_maps = [#[[FIRST]], #[[SECOND]], #{{.*}}]{{.*}} tensor<4x4x2x2xf32>
// CHECK: linalg.generic {indexing_maps = [#[[FIRST]], #[[SECOND]], #{{.*}}]{{.*}} tensor<4x2x2x4xf32>
// CHECK: linalg.generic {indexing_maps = [#[[FIRST]], #[[SECOND]], #{{.*}}]{{.*}} tensor<4x1x2x8xf32>
// CHECK: arith.constant 2.500000e-01 : f32
// CHECK: arith.mulf
// CHECK: arith.truncf %{{.*}} : f32 to bf16
func.func @hadamard(%x: tensor<2x32xbf16>) -> tensor<2x32xbf16> {
  %h = nvfp4.hadamard %x : tensor<2x32xbf16>
  return %h : tensor<2x32xbf16>
}

// nvfp4.dual_quantize is its two quantizations: the rowwise one of the
// input with the given amax (no tensor reduction before its block amaxes),
// and the columnwise one of the input's transpose (last two dimensions
// swapped) with the RHT and its own amax pass over the transformed tensor.
// CHECK-LABEL: func.func @dual_quantize
// CHECK-SAME: (%[[X:.*]]: tensor<2x16x32xbf16>, %[[A:.*]]: f32, %{{.*}}: i64) -> (tensor<2x16x32xi8>, tensor<2x16x2xi8>, f32, tensor<2x32x16xi8>, tensor<2x32x1xi8>, f32)
// CHECK-NOT: dimensions = [0, 1, 2, 3]
// CHECK: linalg.reduce ins(%{{.*}} : tensor<32x1x2x16xbf16>) {{.*}} dimensions = [1, 3]
// CHECK: %[[T:.*]] = linalg.transpose ins(%[[X]] : tensor<2x16x32xbf16>) outs(%{{.*}} : tensor<2x32x16xbf16>) permutation = [0, 2, 1]
// CHECK: tensor.collapse_shape %[[T]]
// CHECK: linalg.generic {{.*}} ins(%{{.*}}, %{{.*}} : tensor<64x16xbf16>, tensor<16xi1>)
// CHECK: arith.negf
// CHECK: linalg.reduce ins(%{{.*}} : tensor<64x1x1x16xbf16>) {{.*}} dimensions = [0, 1, 2, 3]
// CHECK: return %{{.*}}, %{{.*}}, %[[A]], %{{.*}}, %{{.*}}, %{{.*}} :
// CHECK-NOT: nvfp4.
func.func @dual_quantize(%x: tensor<2x16x32xbf16>, %a: f32, %s: i64)
    -> (!nvfp4.tensor<2x16x32xf4E2M1FN, scale = f8E4M3FN, block = 1x16>,
        !nvfp4.tensor<2x32x16xf4E2M1FN, scale = f8E4M3FN, block = 1x16>) {
  %r, %c = nvfp4.dual_quantize %x amax(%a) columnwise hadamard(55272)
      rounding<stochastic> seed(%s) : tensor<2x16x32xbf16>
      -> !nvfp4.tensor<2x16x32xf4E2M1FN, scale = f8E4M3FN, block = 1x16>,
         !nvfp4.tensor<2x32x16xf4E2M1FN, scale = f8E4M3FN, block = 1x16>
  return %r, %c : !nvfp4.tensor<2x16x32xf4E2M1FN, scale = f8E4M3FN, block = 1x16>,
                  !nvfp4.tensor<2x32x16xf4E2M1FN, scale = f8E4M3FN, block = 1x16>
}
