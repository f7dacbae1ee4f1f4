// RUN: nvfp4-opt %s --nvfp4-fuse-quantization=report-counts=true \
// RUN:   -split-input-file -verify-diagnostics | FileCheck %s

//===----------------------------------------------------------------------===//
// share-amax
//===----------------------------------------------------------------------===//

// Quantizations of %x, of its transpose and of a reshape of it share one
// amax, computed once right after %x is available.
// CHECK-LABEL: func.func @share_amax
// CHECK-SAME:    (%[[X:.*]]: tensor<32x64xbf16>)
// CHECK-NEXT:    %[[A:.*]] = nvfp4.amax %[[X]] : tensor<32x64xbf16>
// CHECK:         nvfp4.quantize %[[X]] amax(%[[A]])
// CHECK:         nvfp4.quantize %{{.*}} amax(%[[A]]) : tensor<64x32xbf16>
// CHECK:         nvfp4.quantize %{{.*}} amax(%[[A]]) : tensor<2x16x64xbf16>
// expected-remark @+1 {{nvfp4-fuse-quantization: shared-amax = 3, shared-weight-quantizations = 0, dead-ops-removed = 0}}
func.func @share_amax(%x: tensor<32x64xbf16>)
    -> (!nvfp4.tensor<32x64xf4E2M1FN, scale = f8E4M3FN, block = 1x16>,
        !nvfp4.tensor<64x32xf4E2M1FN, scale = f8E4M3FN, block = 1x16>,
        !nvfp4.tensor<2x16x64xf4E2M1FN, scale = f8E4M3FN, block = 1x16>) {
  %q0 = nvfp4.quantize %x : tensor<32x64xbf16>
      -> !nvfp4.tensor<32x64xf4E2M1FN, scale = f8E4M3FN, block = 1x16>
  %e = tensor.empty() : tensor<64x32xbf16>
  %t = linalg.transpose ins(%x : tensor<32x64xbf16>) outs(%e : tensor<64x32xbf16>) permutation = [1, 0]
  %q1 = nvfp4.quantize %t : tensor<64x32xbf16>
      -> !nvfp4.tensor<64x32xf4E2M1FN, scale = f8E4M3FN, block = 1x16>
  %r = tensor.expand_shape %x [[0, 1], [2]] output_shape [2, 16, 64]
      : tensor<32x64xbf16> into tensor<2x16x64xbf16>
  %q2 = nvfp4.quantize %r : tensor<2x16x64xbf16>
      -> !nvfp4.tensor<2x16x64xf4E2M1FN, scale = f8E4M3FN, block = 1x16>
  return %q0, %q1, %q2 : !nvfp4.tensor<32x64xf4E2M1FN, scale = f8E4M3FN, block = 1x16>,
      !nvfp4.tensor<64x32xf4E2M1FN, scale = f8E4M3FN, block = 1x16>,
      !nvfp4.tensor<2x16x64xf4E2M1FN, scale = f8E4M3FN, block = 1x16>
}

// -----

// Not one tensor: a rounded copy (truncf) and a Hadamard transform change
// the amax, a single quantization has nothing to share, and an explicit
// amax operand is kept.
// CHECK-LABEL: func.func @no_shared_amax
// CHECK-NOT:     nvfp4.amax
// CHECK:         nvfp4.quantize %{{.*}} amax(%{{.*}}) : tensor<16x32xbf16>
// CHECK-NOT:     nvfp4.amax
// CHECK:         return
// expected-remark @+1 {{nvfp4-fuse-quantization: shared-amax = 0, shared-weight-quantizations = 0, dead-ops-removed = 0}}
func.func @no_shared_amax(%x: tensor<16x32xf32>, %y: tensor<16x32xbf16>, %a: f32)
    -> (!nvfp4.tensor<16x32xf4E2M1FN, scale = f8E4M3FN, block = 1x16>,
        !nvfp4.tensor<16x32xf4E2M1FN, scale = f8E4M3FN, block = 1x16>,
        !nvfp4.tensor<16x32xf4E2M1FN, scale = f8E4M3FN, block = 1x16>,
        !nvfp4.tensor<16x32xf4E2M1FN, scale = f8E4M3FN, block = 1x16>) {
  %q0 = nvfp4.quantize %x : tensor<16x32xf32>
      -> !nvfp4.tensor<16x32xf4E2M1FN, scale = f8E4M3FN, block = 1x16>
  %t = arith.truncf %x : tensor<16x32xf32> to tensor<16x32xbf16>
  %q1 = nvfp4.quantize %t : tensor<16x32xbf16>
      -> !nvfp4.tensor<16x32xf4E2M1FN, scale = f8E4M3FN, block = 1x16>
  %h = nvfp4.hadamard %t : tensor<16x32xbf16>
  %q2 = nvfp4.quantize %h : tensor<16x32xbf16>
      -> !nvfp4.tensor<16x32xf4E2M1FN, scale = f8E4M3FN, block = 1x16>
  %q3 = nvfp4.quantize %y amax(%a) : tensor<16x32xbf16>
      -> !nvfp4.tensor<16x32xf4E2M1FN, scale = f8E4M3FN, block = 1x16>
  return %q0, %q1, %q2, %q3 : !nvfp4.tensor<16x32xf4E2M1FN, scale = f8E4M3FN, block = 1x16>,
      !nvfp4.tensor<16x32xf4E2M1FN, scale = f8E4M3FN, block = 1x16>,
      !nvfp4.tensor<16x32xf4E2M1FN, scale = f8E4M3FN, block = 1x16>,
      !nvfp4.tensor<16x32xf4E2M1FN, scale = f8E4M3FN, block = 1x16>
}

// -----

//===----------------------------------------------------------------------===//
// share-weight-quantization
//===----------------------------------------------------------------------===//

// fprop quantizes W, dgrad W^T, both 16x16 round-to-nearest: the dgrad copy
// becomes nvfp4.transpose of the fprop copy (codes and tile scales swapped,
// same amax), and the bf16 transpose of W dies with it.
// CHECK-LABEL: func.func @share_weight_quantization
// CHECK-SAME:    (%[[W:.*]]: tensor<64x32xbf16>)
// CHECK:         %[[Q:.*]] = nvfp4.quantize %[[W]] : tensor<64x32xbf16> -> !nvfp4.tensor<64x32xf4E2M1FN, scale = f8E4M3FN, block = 16x16>
// CHECK-NOT:     nvfp4.quantize
// CHECK-NOT:     linalg.transpose
// CHECK:         %[[P:.*]] = nvfp4.transpose %[[Q]] : !nvfp4.tensor<64x32xf4E2M1FN, scale = f8E4M3FN, block = 16x16> -> !nvfp4.tensor<32x64xf4E2M1FN, scale = f8E4M3FN, block = 16x16>
// CHECK-NEXT:    return %[[Q]], %[[P]]
// expected-remark @+1 {{nvfp4-fuse-quantization: shared-amax = 0, shared-weight-quantizations = 1, dead-ops-removed = 0}}
func.func @share_weight_quantization(%w: tensor<64x32xbf16>)
    -> (!nvfp4.tensor<64x32xf4E2M1FN, scale = f8E4M3FN, block = 16x16>,
        !nvfp4.tensor<32x64xf4E2M1FN, scale = f8E4M3FN, block = 16x16>) {
  %qf = nvfp4.quantize %w : tensor<64x32xbf16>
      -> !nvfp4.tensor<64x32xf4E2M1FN, scale = f8E4M3FN, block = 16x16>
  %e = tensor.empty() : tensor<32x64xbf16>
  %wt = linalg.transpose ins(%w : tensor<64x32xbf16>) outs(%e : tensor<32x64xbf16>) permutation = [1, 0]
  %qd = nvfp4.quantize %wt : tensor<32x64xbf16>
      -> !nvfp4.tensor<32x64xf4E2M1FN, scale = f8E4M3FN, block = 16x16>
  return %qf, %qd : !nvfp4.tensor<64x32xf4E2M1FN, scale = f8E4M3FN, block = 16x16>,
      !nvfp4.tensor<32x64xf4E2M1FN, scale = f8E4M3FN, block = 16x16>
}

// -----

// The other order (the transposed copy first, the [out, in] layout of a JAX
// weight) and batched weights: the later quantization is the one derived.
// CHECK-LABEL: func.func @share_weight_quantization_reversed_batched
// CHECK:         %[[QT:.*]] = nvfp4.quantize %{{.*}} : tensor<2x32x64xbf16>
// CHECK-NOT:     nvfp4.quantize
// CHECK:         %[[P:.*]] = nvfp4.transpose %[[QT]] : !nvfp4.tensor<2x32x64xf4E2M1FN, scale = f8E4M3FN, block = 16x16> -> !nvfp4.tensor<2x64x32xf4E2M1FN, scale = f8E4M3FN, block = 16x16>
// CHECK-NEXT:    return %[[QT]], %[[P]]
// expected-remark @+1 {{nvfp4-fuse-quantization: shared-amax = 0, shared-weight-quantizations = 1, dead-ops-removed = 0}}
func.func @share_weight_quantization_reversed_batched(%w: tensor<2x64x32xbf16>)
    -> (!nvfp4.tensor<2x32x64xf4E2M1FN, scale = f8E4M3FN, block = 16x16>,
        !nvfp4.tensor<2x64x32xf4E2M1FN, scale = f8E4M3FN, block = 16x16>) {
  %e = tensor.empty() : tensor<2x32x64xbf16>
  %wt = linalg.transpose ins(%w : tensor<2x64x32xbf16>) outs(%e : tensor<2x32x64xbf16>) permutation = [0, 2, 1]
  %qd = nvfp4.quantize %wt : tensor<2x32x64xbf16>
      -> !nvfp4.tensor<2x32x64xf4E2M1FN, scale = f8E4M3FN, block = 16x16>
  %qf = nvfp4.quantize %w : tensor<2x64x32xbf16>
      -> !nvfp4.tensor<2x64x32xf4E2M1FN, scale = f8E4M3FN, block = 16x16>
  return %qd, %qf : !nvfp4.tensor<2x32x64xf4E2M1FN, scale = f8E4M3FN, block = 16x16>,
      !nvfp4.tensor<2x64x32xf4E2M1FN, scale = f8E4M3FN, block = 16x16>
}

// -----

// Not exact transposes of each other: 1x16 blocks (scales run along
// different dimensions), stochastic rounding (random bits follow the element
// index), and different amax operands. The two 1x16 copies still share an
// amax.
// CHECK-LABEL: func.func @no_shared_weight_quantization
// CHECK-NOT:     nvfp4.transpose
// CHECK:         return
// expected-remark @+1 {{nvfp4-fuse-quantization: shared-amax = 2, shared-weight-quantizations = 0, dead-ops-removed = 0}}
func.func @no_shared_weight_quantization(%w: tensor<64x32xbf16>, %s: i64, %a: f32, %b: f32)
    -> (!nvfp4.tensor<64x32xf4E2M1FN, scale = f8E4M3FN, block = 1x16>,
        !nvfp4.tensor<32x64xf4E2M1FN, scale = f8E4M3FN, block = 1x16>,
        !nvfp4.tensor<64x32xf4E2M1FN, scale = f8E4M3FN, block = 16x16>,
        !nvfp4.tensor<32x64xf4E2M1FN, scale = f8E4M3FN, block = 16x16>,
        !nvfp4.tensor<64x32xf4E2M1FN, scale = f8E4M3FN, block = 16x16>,
        !nvfp4.tensor<32x64xf4E2M1FN, scale = f8E4M3FN, block = 16x16>) {
  %e = tensor.empty() : tensor<32x64xbf16>
  %wt = linalg.transpose ins(%w : tensor<64x32xbf16>) outs(%e : tensor<32x64xbf16>) permutation = [1, 0]
  %r0 = nvfp4.quantize %w : tensor<64x32xbf16>
      -> !nvfp4.tensor<64x32xf4E2M1FN, scale = f8E4M3FN, block = 1x16>
  %r1 = nvfp4.quantize %wt : tensor<32x64xbf16>
      -> !nvfp4.tensor<32x64xf4E2M1FN, scale = f8E4M3FN, block = 1x16>
  %s0 = nvfp4.quantize %w amax(%a) rounding<stochastic> seed(%s) : tensor<64x32xbf16>
      -> !nvfp4.tensor<64x32xf4E2M1FN, scale = f8E4M3FN, block = 16x16>
  %s1 = nvfp4.quantize %wt amax(%a) rounding<stochastic> seed(%s) : tensor<32x64xbf16>
      -> !nvfp4.tensor<32x64xf4E2M1FN, scale = f8E4M3FN, block = 16x16>
  %d0 = nvfp4.quantize %w amax(%a) : tensor<64x32xbf16>
      -> !nvfp4.tensor<64x32xf4E2M1FN, scale = f8E4M3FN, block = 16x16>
  %d1 = nvfp4.quantize %wt amax(%b) : tensor<32x64xbf16>
      -> !nvfp4.tensor<32x64xf4E2M1FN, scale = f8E4M3FN, block = 16x16>
  return %r0, %r1, %s0, %s1, %d0, %d1
      : !nvfp4.tensor<64x32xf4E2M1FN, scale = f8E4M3FN, block = 1x16>,
        !nvfp4.tensor<32x64xf4E2M1FN, scale = f8E4M3FN, block = 1x16>,
        !nvfp4.tensor<64x32xf4E2M1FN, scale = f8E4M3FN, block = 16x16>,
        !nvfp4.tensor<32x64xf4E2M1FN, scale = f8E4M3FN, block = 16x16>,
        !nvfp4.tensor<64x32xf4E2M1FN, scale = f8E4M3FN, block = 16x16>,
        !nvfp4.tensor<32x64xf4E2M1FN, scale = f8E4M3FN, block = 16x16>
}

// -----

//===----------------------------------------------------------------------===//
// remove-dead
//===----------------------------------------------------------------------===//

// Unused quantize, hadamard, amax and dequantize are erased, with the
// transpose that only fed them.
// CHECK-LABEL: func.func @remove_dead
// CHECK-NEXT:    return
// expected-remark @+1 {{nvfp4-fuse-quantization: shared-amax = 0, shared-weight-quantizations = 0, dead-ops-removed = 5}}
func.func @remove_dead(%x: tensor<32x64xbf16>) {
  %e = tensor.empty() : tensor<64x32xbf16>
  %t = linalg.transpose ins(%x : tensor<32x64xbf16>) outs(%e : tensor<64x32xbf16>) permutation = [1, 0]
  %h = nvfp4.hadamard %t : tensor<64x32xbf16>
  %q = nvfp4.quantize %h : tensor<64x32xbf16>
      -> !nvfp4.tensor<64x32xf4E2M1FN, scale = f8E4M3FN, block = 1x16>
  %a = nvfp4.amax %x : tensor<32x64xbf16>
  %q2 = nvfp4.quantize %x amax(%a) : tensor<32x64xbf16>
      -> !nvfp4.tensor<32x64xf4E2M1FN, scale = f8E4M3FN, block = 1x16>
  %d = nvfp4.dequantize %q2 : !nvfp4.tensor<32x64xf4E2M1FN, scale = f8E4M3FN, block = 1x16>
      -> tensor<32x64xf32>
  return
}
