// RUN: nvfp4-opt %s --nvfp4-fuse-quantization=report-counts=true \
// RUN:   -split-input-file -verify-diagnostics | FileCheck %s

//===----------------------------------------------------------------------===//
// share-amax
//===----------------------------------------------------------------------===//

// Quantizations of %x, of its transpose and of a reshape of it share one
// amax, computed once right after %x is available. (The first two then
// become one dual quantization with that amax on both sides.)
// CHECK-LABEL: func.func @share_amax
// CHECK-SAME:    (%[[X:.*]]: tensor<32x64xbf16>)
// CHECK-NEXT:    %[[A:.*]] = nvfp4.amax %[[X]] : tensor<32x64xbf16>
// CHECK:         nvfp4.dual_quantize %[[X]] amax(%[[A]]) columnwise amax(%[[A]]) : tensor<32x64xbf16>
// CHECK:         nvfp4.quantize %{{.*}} amax(%[[A]]) : tensor<2x16x64xbf16>
// expected-remark @+1 {{nvfp4-fuse-quantization: shared-amax = 3, shared-weight-quantizations = 0, folded-hadamards = 0, fused-output-amaxes = 0, fused-epilogue-quantizations = 0, fused-dual-quantizations = 1, dead-ops-removed = 0}}
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

// Not one tensor: a rounded copy (truncf) and a Hadamard transform (folded
// into its quantization, which then quantizes the RHT of %t) change the
// amax, a single quantization has nothing to share, and an explicit amax
// operand is kept.
// CHECK-LABEL: func.func @no_shared_amax
// CHECK-NOT:     nvfp4.amax
// CHECK:         %[[T:.*]] = arith.truncf
// CHECK-NEXT:    nvfp4.quantize %[[T]] : tensor<16x32xbf16>
// CHECK-NEXT:    nvfp4.quantize %[[T]] hadamard(55272) : tensor<16x32xbf16>
// CHECK:         nvfp4.quantize %{{.*}} amax(%{{.*}}) : tensor<16x32xbf16>
// CHECK-NOT:     nvfp4.amax
// CHECK:         return
// expected-remark @+1 {{nvfp4-fuse-quantization: shared-amax = 0, shared-weight-quantizations = 0, folded-hadamards = 1, fused-output-amaxes = 0, fused-epilogue-quantizations = 0, fused-dual-quantizations = 0, dead-ops-removed = 0}}
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
// expected-remark @+1 {{nvfp4-fuse-quantization: shared-amax = 0, shared-weight-quantizations = 1, folded-hadamards = 0, fused-output-amaxes = 0, fused-epilogue-quantizations = 0, fused-dual-quantizations = 0, dead-ops-removed = 0}}
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
// expected-remark @+1 {{nvfp4-fuse-quantization: shared-amax = 0, shared-weight-quantizations = 1, folded-hadamards = 0, fused-output-amaxes = 0, fused-epilogue-quantizations = 0, fused-dual-quantizations = 0, dead-ops-removed = 0}}
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
// amax (and become one dual quantization).
// CHECK-LABEL: func.func @no_shared_weight_quantization
// CHECK-NOT:     nvfp4.transpose
// CHECK:         return
// expected-remark @+1 {{nvfp4-fuse-quantization: shared-amax = 2, shared-weight-quantizations = 0, folded-hadamards = 0, fused-output-amaxes = 0, fused-epilogue-quantizations = 0, fused-dual-quantizations = 1, dead-ops-removed = 0}}
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
// fold-hadamard
//===----------------------------------------------------------------------===//

// wgrad's operand: the RHT, its amax and its stochastic quantization become
// an amax and a quantization of %x that carry the sign mask; the RHT is gone.
// CHECK-LABEL: func.func @fold_hadamard
// CHECK-SAME:    (%[[X:.*]]: tensor<64x128xbf16>, %[[S:.*]]: i64)
// CHECK-NOT:     nvfp4.hadamard
// CHECK:         %[[A:.*]] = nvfp4.amax %[[X]] hadamard(255) : tensor<64x128xbf16>
// CHECK-NEXT:    nvfp4.quantize %[[X]] amax(%[[A]]) hadamard(255) rounding<stochastic> seed(%[[S]])
// CHECK-NOT:     nvfp4.hadamard
// expected-remark @+1 {{nvfp4-fuse-quantization: shared-amax = 0, shared-weight-quantizations = 0, folded-hadamards = 1, fused-output-amaxes = 0, fused-epilogue-quantizations = 0, fused-dual-quantizations = 0, dead-ops-removed = 0}}
func.func @fold_hadamard(%x: tensor<64x128xbf16>, %s: i64) -> !nvfp4.tensor<64x128xf4E2M1FN, scale = f8E4M3FN, block = 1x16> {
  %h = nvfp4.hadamard %x {sign_mask = 255 : i32} : tensor<64x128xbf16>
  %a = nvfp4.amax %h : tensor<64x128xbf16>
  %q = nvfp4.quantize %h amax(%a) rounding<stochastic> seed(%s)
      : tensor<64x128xbf16> -> !nvfp4.tensor<64x128xf4E2M1FN, scale = f8E4M3FN, block = 1x16>
  return %q : !nvfp4.tensor<64x128xf4E2M1FN, scale = f8E4M3FN, block = 1x16>
}

// -----

// Two quantizations of one RHT: both fold, then share one post-RHT amax
// (never the amax of %x itself, which a plain quantization of %x uses).
// CHECK-LABEL: func.func @fold_hadamard_then_share_amax
// CHECK-SAME:    (%[[X:.*]]: tensor<64x128xbf16>, %[[S:.*]]: i64)
// CHECK-NEXT:    %[[A:.*]] = nvfp4.amax %[[X]] hadamard(55272) : tensor<64x128xbf16>
// CHECK-NEXT:    nvfp4.quantize %[[X]] amax(%[[A]]) hadamard(55272) :
// CHECK-NEXT:    nvfp4.quantize %[[X]] amax(%[[A]]) hadamard(55272) rounding<stochastic>
// CHECK-NEXT:    nvfp4.quantize %[[X]] : tensor<64x128xbf16>
// expected-remark @+1 {{nvfp4-fuse-quantization: shared-amax = 2, shared-weight-quantizations = 0, folded-hadamards = 1, fused-output-amaxes = 0, fused-epilogue-quantizations = 0, fused-dual-quantizations = 0, dead-ops-removed = 0}}
func.func @fold_hadamard_then_share_amax(%x: tensor<64x128xbf16>, %s: i64)
    -> (!nvfp4.tensor<64x128xf4E2M1FN, scale = f8E4M3FN, block = 1x16>, !nvfp4.tensor<64x128xf4E2M1FN, scale = f8E4M3FN, block = 1x16>, !nvfp4.tensor<64x128xf4E2M1FN, scale = f8E4M3FN, block = 1x16>) {
  %h = nvfp4.hadamard %x : tensor<64x128xbf16>
  %q0 = nvfp4.quantize %h : tensor<64x128xbf16> -> !nvfp4.tensor<64x128xf4E2M1FN, scale = f8E4M3FN, block = 1x16>
  %q1 = nvfp4.quantize %h rounding<stochastic> seed(%s) : tensor<64x128xbf16> -> !nvfp4.tensor<64x128xf4E2M1FN, scale = f8E4M3FN, block = 1x16>
  %q2 = nvfp4.quantize %x : tensor<64x128xbf16> -> !nvfp4.tensor<64x128xf4E2M1FN, scale = f8E4M3FN, block = 1x16>
  return %q0, %q1, %q2 : !nvfp4.tensor<64x128xf4E2M1FN, scale = f8E4M3FN, block = 1x16>, !nvfp4.tensor<64x128xf4E2M1FN, scale = f8E4M3FN, block = 1x16>, !nvfp4.tensor<64x128xf4E2M1FN, scale = f8E4M3FN, block = 1x16>
}

// -----

// Not folded: an RHT that is also used as a tensor (folding would compute it
// twice), and one feeding a 16x16 quantization (its blocks are not RHT
// chunks).
// CHECK-LABEL: func.func @no_fold_hadamard
// CHECK-COUNT-2: nvfp4.hadamard
// CHECK-NOT:     hadamard(
// CHECK:         return
// expected-remark @+1 {{nvfp4-fuse-quantization: shared-amax = 0, shared-weight-quantizations = 0, folded-hadamards = 0, fused-output-amaxes = 0, fused-epilogue-quantizations = 0, fused-dual-quantizations = 0, dead-ops-removed = 0}}
func.func @no_fold_hadamard(%x: tensor<64x128xbf16>, %y: tensor<64x128xbf16>)
    -> (!nvfp4.tensor<64x128xf4E2M1FN, scale = f8E4M3FN, block = 1x16>, tensor<64x128xbf16>,
        !nvfp4.tensor<64x128xf4E2M1FN, scale = f8E4M3FN, block = 16x16>) {
  %h = nvfp4.hadamard %x : tensor<64x128xbf16>
  %q = nvfp4.quantize %h : tensor<64x128xbf16> -> !nvfp4.tensor<64x128xf4E2M1FN, scale = f8E4M3FN, block = 1x16>
  %g = nvfp4.hadamard %y : tensor<64x128xbf16>
  %t = nvfp4.quantize %g : tensor<64x128xbf16>
      -> !nvfp4.tensor<64x128xf4E2M1FN, scale = f8E4M3FN, block = 16x16>
  return %q, %h, %t : !nvfp4.tensor<64x128xf4E2M1FN, scale = f8E4M3FN, block = 1x16>, tensor<64x128xbf16>,
      !nvfp4.tensor<64x128xf4E2M1FN, scale = f8E4M3FN, block = 16x16>
}

// -----

//===----------------------------------------------------------------------===//
// fuse-output-amax
//===----------------------------------------------------------------------===//

// A GEMM whose output is quantized for the next GEMM (a low-rank adapter:
// x * A then * B): the first GEMM returns its output's amax from its
// epilogue and the quantization uses it -- no amax pass over %c.
// CHECK-LABEL: func.func @fuse_output_amax
// CHECK:         %[[C:.*]], %[[M:.*]] = nvfp4.scaled_matmul %{{.*}}, %{{.*}} role<fprop> {nvfp4.layer = 3 : i64}
// CHECK-SAME:      -> tensor<128x64xbf16>, f32
// CHECK-NEXT:    %[[Q:.*]] = nvfp4.quantize %[[C]] amax(%[[M]]) :
// CHECK-NEXT:    nvfp4.scaled_matmul %[[Q]], %{{.*}} : {{.*}} -> tensor<128x256xbf16>{{$}}
// expected-remark @+1 {{nvfp4-fuse-quantization: shared-amax = 0, shared-weight-quantizations = 0, folded-hadamards = 0, fused-output-amaxes = 1, fused-epilogue-quantizations = 0, fused-dual-quantizations = 0, dead-ops-removed = 0}}
func.func @fuse_output_amax(
    %x: !nvfp4.tensor<128x256xf4E2M1FN, scale = f8E4M3FN, block = 1x16>,
    %a: !nvfp4.tensor<64x256xf4E2M1FN, scale = f8E4M3FN, block = 16x16>,
    %b: !nvfp4.tensor<256x64xf4E2M1FN, scale = f8E4M3FN, block = 16x16>)
    -> tensor<128x256xbf16> {
  %c = nvfp4.scaled_matmul %x, %a role<fprop> {nvfp4.layer = 3 : i64}
      : !nvfp4.tensor<128x256xf4E2M1FN, scale = f8E4M3FN, block = 1x16>,
        !nvfp4.tensor<64x256xf4E2M1FN, scale = f8E4M3FN, block = 16x16>
      -> tensor<128x64xbf16>
  %q = nvfp4.quantize %c : tensor<128x64xbf16>
      -> !nvfp4.tensor<128x64xf4E2M1FN, scale = f8E4M3FN, block = 1x16>
  %d = nvfp4.scaled_matmul %q, %b
      : !nvfp4.tensor<128x64xf4E2M1FN, scale = f8E4M3FN, block = 1x16>,
        !nvfp4.tensor<256x64xf4E2M1FN, scale = f8E4M3FN, block = 16x16>
      -> tensor<128x256xbf16>
  return %d : tensor<128x256xbf16>
}

// -----

// Two quantizations of the output (one of a transposed view) for two GEMMs:
// share-amax gives them one nvfp4.amax, which the epilogue's amax replaces;
// then they are the two parts of one dual quantization of the output.
// CHECK-LABEL: func.func @fuse_shared_output_amax
// CHECK:         %[[C:.*]], %[[M:.*]] = nvfp4.scaled_matmul
// CHECK-NOT:     nvfp4.amax
// CHECK:         nvfp4.dual_quantize %[[C]] amax(%[[M]]) columnwise amax(%[[M]]) rounding<stochastic>
// expected-remark @+1 {{nvfp4-fuse-quantization: shared-amax = 2, shared-weight-quantizations = 0, folded-hadamards = 0, fused-output-amaxes = 1, fused-epilogue-quantizations = 0, fused-dual-quantizations = 1, dead-ops-removed = 0}}
func.func @fuse_shared_output_amax(
    %x: !nvfp4.tensor<64x128xf4E2M1FN, scale = f8E4M3FN, block = 1x16>,
    %w: !nvfp4.tensor<32x128xf4E2M1FN, scale = f8E4M3FN, block = 16x16>,
    %v: !nvfp4.tensor<16x32xf4E2M1FN, scale = f8E4M3FN, block = 16x16>,
    %u: !nvfp4.tensor<16x64xf4E2M1FN, scale = f8E4M3FN, block = 1x16>,
    %s: i64) -> (tensor<64x16xf32>, tensor<32x16xf32>) {
  %c = nvfp4.scaled_matmul %x, %w
      : !nvfp4.tensor<64x128xf4E2M1FN, scale = f8E4M3FN, block = 1x16>,
        !nvfp4.tensor<32x128xf4E2M1FN, scale = f8E4M3FN, block = 16x16>
      -> tensor<64x32xbf16>
  %q = nvfp4.quantize %c : tensor<64x32xbf16>
      -> !nvfp4.tensor<64x32xf4E2M1FN, scale = f8E4M3FN, block = 1x16>
  %d = nvfp4.scaled_matmul %q, %v
      : !nvfp4.tensor<64x32xf4E2M1FN, scale = f8E4M3FN, block = 1x16>,
        !nvfp4.tensor<16x32xf4E2M1FN, scale = f8E4M3FN, block = 16x16>
      -> tensor<64x16xf32>
  %e = tensor.empty() : tensor<32x64xbf16>
  %ct = linalg.transpose ins(%c : tensor<64x32xbf16>) outs(%e : tensor<32x64xbf16>) permutation = [1, 0]
  %qt = nvfp4.quantize %ct rounding<stochastic> seed(%s) : tensor<32x64xbf16>
      -> !nvfp4.tensor<32x64xf4E2M1FN, scale = f8E4M3FN, block = 1x16>
  %g = nvfp4.scaled_matmul %qt, %u
      : !nvfp4.tensor<32x64xf4E2M1FN, scale = f8E4M3FN, block = 1x16>,
        !nvfp4.tensor<16x64xf4E2M1FN, scale = f8E4M3FN, block = 1x16>
      -> tensor<32x16xf32>
  return %d, %g : tensor<64x16xf32>, tensor<32x16xf32>
}

// -----

// Not fused: a quantization no GEMM consumes, one of a rounded copy of an
// f32 output (its amax is that of other values), one with a given amax (it
// moves into the epilogue whole instead: fuse-epilogue-quantization), and
// one of the output's RHT.
// CHECK-LABEL: func.func @no_fuse_output_amax
// CHECK-NOT:     -> tensor<{{.*}}>, f32
// CHECK:         return
// expected-remark @+1 {{nvfp4-fuse-quantization: shared-amax = 0, shared-weight-quantizations = 0, folded-hadamards = 1, fused-output-amaxes = 0, fused-epilogue-quantizations = 1, fused-dual-quantizations = 0, dead-ops-removed = 0}}
func.func @no_fuse_output_amax(
    %x: !nvfp4.tensor<64x128xf4E2M1FN, scale = f8E4M3FN, block = 1x16>,
    %w: !nvfp4.tensor<32x128xf4E2M1FN, scale = f8E4M3FN, block = 16x16>,
    %v: !nvfp4.tensor<16x32xf4E2M1FN, scale = f8E4M3FN, block = 16x16>,
    %amax: f32)
    -> (!nvfp4.tensor<64x32xf4E2M1FN, scale = f8E4M3FN, block = 1x16>,
        tensor<64x16xf32>, tensor<64x16xf32>, tensor<64x16xf32>) {
  %c0 = nvfp4.scaled_matmul %x, %w
      : !nvfp4.tensor<64x128xf4E2M1FN, scale = f8E4M3FN, block = 1x16>,
        !nvfp4.tensor<32x128xf4E2M1FN, scale = f8E4M3FN, block = 16x16>
      -> tensor<64x32xbf16>
  %q0 = nvfp4.quantize %c0 : tensor<64x32xbf16>
      -> !nvfp4.tensor<64x32xf4E2M1FN, scale = f8E4M3FN, block = 1x16>
  %c1 = nvfp4.scaled_matmul %x, %w
      : !nvfp4.tensor<64x128xf4E2M1FN, scale = f8E4M3FN, block = 1x16>,
        !nvfp4.tensor<32x128xf4E2M1FN, scale = f8E4M3FN, block = 16x16>
      -> tensor<64x32xf32>
  %r1 = arith.truncf %c1 : tensor<64x32xf32> to tensor<64x32xbf16>
  %q1 = nvfp4.quantize %r1 : tensor<64x32xbf16>
      -> !nvfp4.tensor<64x32xf4E2M1FN, scale = f8E4M3FN, block = 1x16>
  %d1 = nvfp4.scaled_matmul %q1, %v
      : !nvfp4.tensor<64x32xf4E2M1FN, scale = f8E4M3FN, block = 1x16>,
        !nvfp4.tensor<16x32xf4E2M1FN, scale = f8E4M3FN, block = 16x16>
      -> tensor<64x16xf32>
  %c2 = nvfp4.scaled_matmul %x, %w
      : !nvfp4.tensor<64x128xf4E2M1FN, scale = f8E4M3FN, block = 1x16>,
        !nvfp4.tensor<32x128xf4E2M1FN, scale = f8E4M3FN, block = 16x16>
      -> tensor<64x32xbf16>
  %q2 = nvfp4.quantize %c2 amax(%amax) : tensor<64x32xbf16>
      -> !nvfp4.tensor<64x32xf4E2M1FN, scale = f8E4M3FN, block = 1x16>
  %d2 = nvfp4.scaled_matmul %q2, %v
      : !nvfp4.tensor<64x32xf4E2M1FN, scale = f8E4M3FN, block = 1x16>,
        !nvfp4.tensor<16x32xf4E2M1FN, scale = f8E4M3FN, block = 16x16>
      -> tensor<64x16xf32>
  %c3 = nvfp4.scaled_matmul %x, %w
      : !nvfp4.tensor<64x128xf4E2M1FN, scale = f8E4M3FN, block = 1x16>,
        !nvfp4.tensor<32x128xf4E2M1FN, scale = f8E4M3FN, block = 16x16>
      -> tensor<64x32xbf16>
  %h3 = nvfp4.hadamard %c3 : tensor<64x32xbf16>
  %q3 = nvfp4.quantize %h3 : tensor<64x32xbf16>
      -> !nvfp4.tensor<64x32xf4E2M1FN, scale = f8E4M3FN, block = 1x16>
  %d3 = nvfp4.scaled_matmul %q3, %v
      : !nvfp4.tensor<64x32xf4E2M1FN, scale = f8E4M3FN, block = 1x16>,
        !nvfp4.tensor<16x32xf4E2M1FN, scale = f8E4M3FN, block = 16x16>
      -> tensor<64x16xf32>
  return %q0, %d1, %d2, %d3 : !nvfp4.tensor<64x32xf4E2M1FN, scale = f8E4M3FN, block = 1x16>,
      tensor<64x16xf32>, tensor<64x16xf32>, tensor<64x16xf32>
}

// -----

//===----------------------------------------------------------------------===//
// fuse-epilogue-quantization
//===----------------------------------------------------------------------===//

// A static amax (an argument: known before the GEMM runs): the GEMM and the
// quantization of its output become one scaled_matmul_quantize, which keeps
// the GEMM's alpha, role and annotations; an f32 product is recorded as the
// intermediate type.
// CHECK-LABEL: func.func @fuse_epilogue_quantization
// CHECK-SAME:    %[[G:[^:]*]]: f32, %[[AL:[^:]*]]: f32)
// CHECK:         %[[Q:.*]] = nvfp4.scaled_matmul_quantize %{{.*}}, %{{.*}} amax(%[[G]]) alpha(%[[AL]]) role<fprop> {intermediate = f32, nvfp4.layer = 4 : i64}
// CHECK-NEXT:    nvfp4.scaled_matmul %[[Q]], %{{.*}}
// CHECK:         nvfp4.scaled_matmul_quantize %{{.*}}, %{{.*}} amax(%[[G]]) : {{.*}}{{$}}
// expected-remark @+1 {{nvfp4-fuse-quantization: shared-amax = 0, shared-weight-quantizations = 0, folded-hadamards = 0, fused-output-amaxes = 0, fused-epilogue-quantizations = 2, fused-dual-quantizations = 0, dead-ops-removed = 0}}
func.func @fuse_epilogue_quantization(%x: !nvfp4.tensor<64x128xf4E2M1FN, scale = f8E4M3FN, block = 1x16>, %w: !nvfp4.tensor<32x128xf4E2M1FN, scale = f8E4M3FN, block = 16x16>, %v: !nvfp4.tensor<16x32xf4E2M1FN, scale = f8E4M3FN, block = 16x16>, %g: f32, %al: f32)
    -> (tensor<64x16xf32>, tensor<64x16xf32>) {
  %c = nvfp4.scaled_matmul %x, %w alpha(%al) role<fprop> {nvfp4.layer = 4 : i64}
      : !nvfp4.tensor<64x128xf4E2M1FN, scale = f8E4M3FN, block = 1x16>, !nvfp4.tensor<32x128xf4E2M1FN, scale = f8E4M3FN, block = 16x16> -> tensor<64x32xf32>
  %q = nvfp4.quantize %c amax(%g) : tensor<64x32xf32> -> !nvfp4.tensor<64x32xf4E2M1FN, scale = f8E4M3FN, block = 1x16>
  %d = nvfp4.scaled_matmul %q, %v : !nvfp4.tensor<64x32xf4E2M1FN, scale = f8E4M3FN, block = 1x16>, !nvfp4.tensor<16x32xf4E2M1FN, scale = f8E4M3FN, block = 16x16> -> tensor<64x16xf32>
  %c2 = nvfp4.scaled_matmul %x, %w : !nvfp4.tensor<64x128xf4E2M1FN, scale = f8E4M3FN, block = 1x16>, !nvfp4.tensor<32x128xf4E2M1FN, scale = f8E4M3FN, block = 16x16> -> tensor<64x32xbf16>
  %q2 = nvfp4.quantize %c2 amax(%g) : tensor<64x32xbf16> -> !nvfp4.tensor<64x32xf4E2M1FN, scale = f8E4M3FN, block = 1x16>
  %d2 = nvfp4.scaled_matmul %q2, %v : !nvfp4.tensor<64x32xf4E2M1FN, scale = f8E4M3FN, block = 1x16>, !nvfp4.tensor<16x32xf4E2M1FN, scale = f8E4M3FN, block = 16x16> -> tensor<64x16xf32>
  return %d, %d2 : tensor<64x16xf32>, tensor<64x16xf32>
}

// -----

// Not fused: the amax is computed after the GEMM (it may depend on it), the
// product has another use (the GEMM must write it anyway), stochastic
// rounding, 16x16 blocks.
// CHECK-LABEL: func.func @no_fuse_epilogue_quantization
// CHECK-NOT:     scaled_matmul_quantize
// CHECK:         return
// expected-remark @+1 {{nvfp4-fuse-quantization: shared-amax = 0, shared-weight-quantizations = 0, folded-hadamards = 0, fused-output-amaxes = 0, fused-epilogue-quantizations = 0, fused-dual-quantizations = 0, dead-ops-removed = 0}}
func.func @no_fuse_epilogue_quantization(%x: !nvfp4.tensor<64x128xf4E2M1FN, scale = f8E4M3FN, block = 1x16>, %w: !nvfp4.tensor<32x128xf4E2M1FN, scale = f8E4M3FN, block = 16x16>, %v: !nvfp4.tensor<16x32xf4E2M1FN, scale = f8E4M3FN, block = 16x16>, %g: f32, %s: i64,
    %y: tensor<64x32xbf16>)
    -> (tensor<64x16xf32>, tensor<64x16xf32>, tensor<64x32xbf16>, tensor<64x16xf32>,
        !nvfp4.tensor<64x32xf4E2M1FN, scale = f8E4M3FN, block = 16x16>) {
  %c0 = nvfp4.scaled_matmul %x, %w : !nvfp4.tensor<64x128xf4E2M1FN, scale = f8E4M3FN, block = 1x16>, !nvfp4.tensor<32x128xf4E2M1FN, scale = f8E4M3FN, block = 16x16> -> tensor<64x32xbf16>
  %late = nvfp4.amax %y : tensor<64x32xbf16>
  %q0 = nvfp4.quantize %c0 amax(%late) : tensor<64x32xbf16> -> !nvfp4.tensor<64x32xf4E2M1FN, scale = f8E4M3FN, block = 1x16>
  %d0 = nvfp4.scaled_matmul %q0, %v : !nvfp4.tensor<64x32xf4E2M1FN, scale = f8E4M3FN, block = 1x16>, !nvfp4.tensor<16x32xf4E2M1FN, scale = f8E4M3FN, block = 16x16> -> tensor<64x16xf32>
  %c1 = nvfp4.scaled_matmul %x, %w : !nvfp4.tensor<64x128xf4E2M1FN, scale = f8E4M3FN, block = 1x16>, !nvfp4.tensor<32x128xf4E2M1FN, scale = f8E4M3FN, block = 16x16> -> tensor<64x32xbf16>
  %q1 = nvfp4.quantize %c1 amax(%g) : tensor<64x32xbf16> -> !nvfp4.tensor<64x32xf4E2M1FN, scale = f8E4M3FN, block = 1x16>
  %d1 = nvfp4.scaled_matmul %q1, %v : !nvfp4.tensor<64x32xf4E2M1FN, scale = f8E4M3FN, block = 1x16>, !nvfp4.tensor<16x32xf4E2M1FN, scale = f8E4M3FN, block = 16x16> -> tensor<64x16xf32>
  %c2 = nvfp4.scaled_matmul %x, %w : !nvfp4.tensor<64x128xf4E2M1FN, scale = f8E4M3FN, block = 1x16>, !nvfp4.tensor<32x128xf4E2M1FN, scale = f8E4M3FN, block = 16x16> -> tensor<64x32xbf16>
  %q2 = nvfp4.quantize %c2 amax(%g) rounding<stochastic> seed(%s) : tensor<64x32xbf16> -> !nvfp4.tensor<64x32xf4E2M1FN, scale = f8E4M3FN, block = 1x16>
  %d2 = nvfp4.scaled_matmul %q2, %v : !nvfp4.tensor<64x32xf4E2M1FN, scale = f8E4M3FN, block = 1x16>, !nvfp4.tensor<16x32xf4E2M1FN, scale = f8E4M3FN, block = 16x16> -> tensor<64x16xf32>
  %c3 = nvfp4.scaled_matmul %x, %w : !nvfp4.tensor<64x128xf4E2M1FN, scale = f8E4M3FN, block = 1x16>, !nvfp4.tensor<32x128xf4E2M1FN, scale = f8E4M3FN, block = 16x16> -> tensor<64x32xbf16>
  %q3 = nvfp4.quantize %c3 amax(%g) : tensor<64x32xbf16>
      -> !nvfp4.tensor<64x32xf4E2M1FN, scale = f8E4M3FN, block = 16x16>
  return %d0, %d1, %c1, %d2, %q3 : tensor<64x16xf32>, tensor<64x16xf32>, tensor<64x32xbf16>,
      tensor<64x16xf32>, !nvfp4.tensor<64x32xf4E2M1FN, scale = f8E4M3FN, block = 16x16>
}

// -----

//===----------------------------------------------------------------------===//
// fuse-dual-quantization
//===----------------------------------------------------------------------===//

// X of a training step as nvfp4-apply-recipe writes it: 1x16 RN for fprop,
// and the RHT of X^T (folded into its quantization first) for wgrad. One
// dual quantization of %x replaces both; the transpose is gone.
// CHECK-LABEL: func.func @fuse_dual_x
// CHECK-SAME:    (%[[X:.*]]: tensor<64x128xbf16>)
// CHECK-NEXT:    %[[R:.*]], %[[C:.*]] = nvfp4.dual_quantize %[[X]] columnwise hadamard(55272) : tensor<64x128xbf16> -> !nvfp4.tensor<64x128xf4E2M1FN, scale = f8E4M3FN, block = 1x16>, !nvfp4.tensor<128x64xf4E2M1FN, scale = f8E4M3FN, block = 1x16>
// CHECK-NEXT:    return %[[R]], %[[C]]
// expected-remark @+1 {{nvfp4-fuse-quantization: shared-amax = 0, shared-weight-quantizations = 0, folded-hadamards = 1, fused-output-amaxes = 0, fused-epilogue-quantizations = 0, fused-dual-quantizations = 1, dead-ops-removed = 0}}
func.func @fuse_dual_x(%x: tensor<64x128xbf16>) -> (!nvfp4.tensor<64x128xf4E2M1FN, scale = f8E4M3FN, block = 1x16>, !nvfp4.tensor<128x64xf4E2M1FN, scale = f8E4M3FN, block = 1x16>) {
  %q = nvfp4.quantize %x : tensor<64x128xbf16> -> !nvfp4.tensor<64x128xf4E2M1FN, scale = f8E4M3FN, block = 1x16>
  %e = tensor.empty() : tensor<128x64xbf16>
  %t = linalg.transpose ins(%x : tensor<64x128xbf16>) outs(%e : tensor<128x64xbf16>) permutation = [1, 0]
  %h = nvfp4.hadamard %t : tensor<128x64xbf16>
  %qt = nvfp4.quantize %h : tensor<128x64xbf16> -> !nvfp4.tensor<128x64xf4E2M1FN, scale = f8E4M3FN, block = 1x16>
  return %q, %qt : !nvfp4.tensor<64x128xf4E2M1FN, scale = f8E4M3FN, block = 1x16>, !nvfp4.tensor<128x64xf4E2M1FN, scale = f8E4M3FN, block = 1x16>
}

// -----

// dY: SR for dgrad and RHT + SR for wgrad, each with its own seed. The
// wgrad seed is mixed from a seed argument after the dgrad quantization
// (apply-recipe's seed-argument form): that arithmetic moves up to the
// fused op, which takes the dgrad quantization's place, before its GEMM.
// CHECK-LABEL: func.func @fuse_dual_dy
// CHECK-SAME:    (%[[DY:.*]]: tensor<64x128xbf16>, %[[SEED:.*]]: i64, %{{.*}}: !nvfp4.tensor<128x128xf4E2M1FN, scale = f8E4M3FN, block = 16x16>, %[[A:.*]]: f32)
// CHECK:         %[[S1:.*]] = arith.xori %[[SEED]]
// CHECK-NEXT:    %[[R:.*]], %[[C:.*]] = nvfp4.dual_quantize %[[DY]] rounding<stochastic> seed(%[[SEED]]) columnwise amax(%[[A]]) hadamard(55272) rounding<stochastic> seed(%[[S1]])
// CHECK-NEXT:    nvfp4.scaled_matmul %[[R]]
// CHECK-NOT:     linalg.transpose
// expected-remark @+1 {{nvfp4-fuse-quantization: shared-amax = 0, shared-weight-quantizations = 0, folded-hadamards = 0, fused-output-amaxes = 0, fused-epilogue-quantizations = 0, fused-dual-quantizations = 1, dead-ops-removed = 0}}
func.func @fuse_dual_dy(%dy: tensor<64x128xbf16>, %seed: i64,
                        %w: !nvfp4.tensor<128x128xf4E2M1FN, scale = f8E4M3FN, block = 16x16>,
                        %a: f32) -> (tensor<64x128xf32>, !nvfp4.tensor<128x64xf4E2M1FN, scale = f8E4M3FN, block = 1x16>) {
  %q = nvfp4.quantize %dy rounding<stochastic> seed(%seed) : tensor<64x128xbf16> -> !nvfp4.tensor<64x128xf4E2M1FN, scale = f8E4M3FN, block = 1x16>
  %dx = nvfp4.scaled_matmul %q, %w : !nvfp4.tensor<64x128xf4E2M1FN, scale = f8E4M3FN, block = 1x16>, !nvfp4.tensor<128x128xf4E2M1FN, scale = f8E4M3FN, block = 16x16> -> tensor<64x128xf32>
  %e = tensor.empty() : tensor<128x64xbf16>
  %t = linalg.transpose ins(%dy : tensor<64x128xbf16>) outs(%e : tensor<128x64xbf16>) permutation = [1, 0]
  %c = arith.constant 7 : i64
  %s1 = arith.xori %seed, %c : i64
  %qt = nvfp4.quantize %t amax(%a) hadamard(55272) rounding<stochastic> seed(%s1) : tensor<128x64xbf16> -> !nvfp4.tensor<128x64xf4E2M1FN, scale = f8E4M3FN, block = 1x16>
  return %dx, %qt : tensor<64x128xf32>, !nvfp4.tensor<128x64xf4E2M1FN, scale = f8E4M3FN, block = 1x16>
}

// -----

// The columnwise quantization first, the rowwise one later (batched: the
// last two dimensions are transposed; f32; swizzled rowwise scales): the
// fused op stands where the columnwise one was, with the amax share-amax
// gave both (no RHT: the same amax).
// CHECK-LABEL: func.func @fuse_dual_columnwise_first
// CHECK:         %[[A:.*]] = nvfp4.amax
// CHECK-NEXT:    nvfp4.dual_quantize %{{.*}} amax(%[[A]]) columnwise amax(%[[A]]) : tensor<2x32x64xf32>
// CHECK-SAME:      -> !nvfp4.tensor<2x32x64xf4E2M1FN, scale = f8E4M3FN, block = 1x16, layout = swizzled_128x4>, !nvfp4.tensor<2x64x32xf4E2M1FN, scale = f8E4M3FN, block = 1x16>
// CHECK-NEXT:    arith.addf
// expected-remark @+1 {{nvfp4-fuse-quantization: shared-amax = 2, shared-weight-quantizations = 0, folded-hadamards = 0, fused-output-amaxes = 0, fused-epilogue-quantizations = 0, fused-dual-quantizations = 1, dead-ops-removed = 0}}
func.func @fuse_dual_columnwise_first(%x: tensor<2x32x64xf32>, %g: f32)
    -> (!nvfp4.tensor<2x64x32xf4E2M1FN, scale = f8E4M3FN, block = 1x16>, f32,
        !nvfp4.tensor<2x32x64xf4E2M1FN, scale = f8E4M3FN, block = 1x16, layout = swizzled_128x4>) {
  %e = tensor.empty() : tensor<2x64x32xf32>
  %t = linalg.transpose ins(%x : tensor<2x32x64xf32>) outs(%e : tensor<2x64x32xf32>) permutation = [0, 2, 1]
  %qt = nvfp4.quantize %t : tensor<2x64x32xf32> -> !nvfp4.tensor<2x64x32xf4E2M1FN, scale = f8E4M3FN, block = 1x16>
  %f = arith.addf %g, %g : f32
  %q = nvfp4.quantize %x : tensor<2x32x64xf32> -> !nvfp4.tensor<2x32x64xf4E2M1FN, scale = f8E4M3FN, block = 1x16, layout = swizzled_128x4>
  return %qt, %f, %q : !nvfp4.tensor<2x64x32xf4E2M1FN, scale = f8E4M3FN, block = 1x16>, f32,
      !nvfp4.tensor<2x32x64xf4E2M1FN, scale = f8E4M3FN, block = 1x16, layout = swizzled_128x4>
}

// -----

// Not a dual quantization: 16x16 blocks on either side.
// CHECK-LABEL: func.func @no_fused_dual_16x16
// CHECK-NOT:     nvfp4.dual_quantize
// CHECK:         return
// expected-remark @+1 {{nvfp4-fuse-quantization: shared-amax = 4, shared-weight-quantizations = 0, folded-hadamards = 0, fused-output-amaxes = 0, fused-epilogue-quantizations = 0, fused-dual-quantizations = 0, dead-ops-removed = 0}}
func.func @no_fused_dual_16x16(%x: tensor<32x64xbf16>, %y: tensor<32x64xbf16>)
    -> (!nvfp4.tensor<32x64xf4E2M1FN, scale = f8E4M3FN, block = 16x16>, !nvfp4.tensor<64x32xf4E2M1FN, scale = f8E4M3FN, block = 1x16>, !nvfp4.tensor<32x64xf4E2M1FN, scale = f8E4M3FN, block = 1x16>, !nvfp4.tensor<64x32xf4E2M1FN, scale = f8E4M3FN, block = 16x16>) {
  %e = tensor.empty() : tensor<64x32xbf16>
  %t = linalg.transpose ins(%x : tensor<32x64xbf16>) outs(%e : tensor<64x32xbf16>) permutation = [1, 0]
  %w = nvfp4.quantize %x : tensor<32x64xbf16> -> !nvfp4.tensor<32x64xf4E2M1FN, scale = f8E4M3FN, block = 16x16>
  %qt = nvfp4.quantize %t : tensor<64x32xbf16> -> !nvfp4.tensor<64x32xf4E2M1FN, scale = f8E4M3FN, block = 1x16>
  %ty = linalg.transpose ins(%y : tensor<32x64xbf16>) outs(%e : tensor<64x32xbf16>) permutation = [1, 0]
  %q = nvfp4.quantize %y : tensor<32x64xbf16> -> !nvfp4.tensor<32x64xf4E2M1FN, scale = f8E4M3FN, block = 1x16>
  %wt = nvfp4.quantize %ty : tensor<64x32xbf16> -> !nvfp4.tensor<64x32xf4E2M1FN, scale = f8E4M3FN, block = 16x16>
  return %w, %qt, %q, %wt : !nvfp4.tensor<32x64xf4E2M1FN, scale = f8E4M3FN, block = 16x16>, !nvfp4.tensor<64x32xf4E2M1FN, scale = f8E4M3FN, block = 1x16>, !nvfp4.tensor<32x64xf4E2M1FN, scale = f8E4M3FN, block = 1x16>, !nvfp4.tensor<64x32xf4E2M1FN, scale = f8E4M3FN, block = 16x16>
}

// -----

// Not a dual quantization: the RHT on the rowwise side (it belongs to the
// columnwise, wgrad, operand only).
// CHECK-LABEL: func.func @no_fused_dual_rowwise_rht
// CHECK-NOT:     nvfp4.dual_quantize
// CHECK:         return
// expected-remark @+1 {{nvfp4-fuse-quantization: shared-amax = 0, shared-weight-quantizations = 0, folded-hadamards = 0, fused-output-amaxes = 0, fused-epilogue-quantizations = 0, fused-dual-quantizations = 0, dead-ops-removed = 0}}
func.func @no_fused_dual_rowwise_rht(%x: tensor<32x64xbf16>) -> (!nvfp4.tensor<32x64xf4E2M1FN, scale = f8E4M3FN, block = 1x16>, !nvfp4.tensor<64x32xf4E2M1FN, scale = f8E4M3FN, block = 1x16>) {
  %q = nvfp4.quantize %x hadamard(55272) : tensor<32x64xbf16> -> !nvfp4.tensor<32x64xf4E2M1FN, scale = f8E4M3FN, block = 1x16>
  %e = tensor.empty() : tensor<64x32xbf16>
  %t = linalg.transpose ins(%x : tensor<32x64xbf16>) outs(%e : tensor<64x32xbf16>) permutation = [1, 0]
  %qt = nvfp4.quantize %t hadamard(55272) : tensor<64x32xbf16> -> !nvfp4.tensor<64x32xf4E2M1FN, scale = f8E4M3FN, block = 1x16>
  return %q, %qt : !nvfp4.tensor<32x64xf4E2M1FN, scale = f8E4M3FN, block = 1x16>, !nvfp4.tensor<64x32xf4E2M1FN, scale = f8E4M3FN, block = 1x16>
}

// -----

// Not a dual quantization: a transpose of other dimensions than the last
// two (blocks would not run along the tokens).
// CHECK-LABEL: func.func @no_fused_dual_other_dimensions
// CHECK-NOT:     nvfp4.dual_quantize
// CHECK:         return
// expected-remark @+1 {{nvfp4-fuse-quantization: shared-amax = 2, shared-weight-quantizations = 0, folded-hadamards = 0, fused-output-amaxes = 0, fused-epilogue-quantizations = 0, fused-dual-quantizations = 0, dead-ops-removed = 0}}
func.func @no_fused_dual_other_dimensions(%y: tensor<2x32x64xbf16>) -> (!nvfp4.tensor<2x32x64xf4E2M1FN, scale = f8E4M3FN, block = 1x16>, !nvfp4.tensor<32x2x64xf4E2M1FN, scale = f8E4M3FN, block = 1x16>) {
  %q = nvfp4.quantize %y : tensor<2x32x64xbf16> -> !nvfp4.tensor<2x32x64xf4E2M1FN, scale = f8E4M3FN, block = 1x16>
  %e = tensor.empty() : tensor<32x2x64xbf16>
  %t = linalg.transpose ins(%y : tensor<2x32x64xbf16>) outs(%e : tensor<32x2x64xbf16>) permutation = [1, 0, 2]
  %qt = nvfp4.quantize %t : tensor<32x2x64xbf16> -> !nvfp4.tensor<32x2x64xf4E2M1FN, scale = f8E4M3FN, block = 1x16>
  return %q, %qt : !nvfp4.tensor<2x32x64xf4E2M1FN, scale = f8E4M3FN, block = 1x16>, !nvfp4.tensor<32x2x64xf4E2M1FN, scale = f8E4M3FN, block = 1x16>
}

// -----

// Not fused: the rowwise quantization is in another block.
// CHECK-LABEL: func.func @no_fused_dual_other_block
// CHECK-NOT:     nvfp4.dual_quantize
// CHECK:         return
// expected-remark @+1 {{nvfp4-fuse-quantization: shared-amax = 0, shared-weight-quantizations = 0, folded-hadamards = 0, fused-output-amaxes = 0, fused-epilogue-quantizations = 0, fused-dual-quantizations = 0, dead-ops-removed = 0}}
func.func @no_fused_dual_other_block(%x: tensor<32x64xbf16>, %b: i1, %a: f32, %s: i64) -> (!nvfp4.tensor<32x64xf4E2M1FN, scale = f8E4M3FN, block = 1x16>, !nvfp4.tensor<64x32xf4E2M1FN, scale = f8E4M3FN, block = 1x16>) {
  %r = scf.if %b -> !nvfp4.tensor<32x64xf4E2M1FN, scale = f8E4M3FN, block = 1x16> {
    %q = nvfp4.quantize %x amax(%a) : tensor<32x64xbf16> -> !nvfp4.tensor<32x64xf4E2M1FN, scale = f8E4M3FN, block = 1x16>
    scf.yield %q : !nvfp4.tensor<32x64xf4E2M1FN, scale = f8E4M3FN, block = 1x16>
  } else {
    %q = nvfp4.quantize %x amax(%a) rounding<stochastic> seed(%s) : tensor<32x64xbf16> -> !nvfp4.tensor<32x64xf4E2M1FN, scale = f8E4M3FN, block = 1x16>
    scf.yield %q : !nvfp4.tensor<32x64xf4E2M1FN, scale = f8E4M3FN, block = 1x16>
  }
  %e = tensor.empty() : tensor<64x32xbf16>
  %t = linalg.transpose ins(%x : tensor<32x64xbf16>) outs(%e : tensor<64x32xbf16>) permutation = [1, 0]
  %qt = nvfp4.quantize %t amax(%a) : tensor<64x32xbf16> -> !nvfp4.tensor<64x32xf4E2M1FN, scale = f8E4M3FN, block = 1x16>
  return %r, %qt : !nvfp4.tensor<32x64xf4E2M1FN, scale = f8E4M3FN, block = 1x16>, !nvfp4.tensor<64x32xf4E2M1FN, scale = f8E4M3FN, block = 1x16>
}

// -----

// Not fused: the later quantization's seed comes from an op with side
// effects between the two, which cannot move up to the earlier one.
// CHECK-LABEL: func.func @no_fused_dual_seed_not_available
// CHECK-NOT:     nvfp4.dual_quantize
// CHECK:         return
// expected-remark @+1 {{nvfp4-fuse-quantization: shared-amax = 0, shared-weight-quantizations = 0, folded-hadamards = 0, fused-output-amaxes = 0, fused-epilogue-quantizations = 0, fused-dual-quantizations = 0, dead-ops-removed = 0}}
func.func @no_fused_dual_seed_not_available(%x: tensor<32x64xbf16>, %p: memref<i64>, %a: f32) -> (!nvfp4.tensor<32x64xf4E2M1FN, scale = f8E4M3FN, block = 1x16>, !nvfp4.tensor<64x32xf4E2M1FN, scale = f8E4M3FN, block = 1x16>) {
  %q = nvfp4.quantize %x amax(%a) : tensor<32x64xbf16> -> !nvfp4.tensor<32x64xf4E2M1FN, scale = f8E4M3FN, block = 1x16>
  %s = memref.load %p[] : memref<i64>
  %e = tensor.empty() : tensor<64x32xbf16>
  %t = linalg.transpose ins(%x : tensor<32x64xbf16>) outs(%e : tensor<64x32xbf16>) permutation = [1, 0]
  %qt = nvfp4.quantize %t amax(%a) rounding<stochastic> seed(%s) : tensor<64x32xbf16> -> !nvfp4.tensor<64x32xf4E2M1FN, scale = f8E4M3FN, block = 1x16>
  return %q, %qt : !nvfp4.tensor<32x64xf4E2M1FN, scale = f8E4M3FN, block = 1x16>, !nvfp4.tensor<64x32xf4E2M1FN, scale = f8E4M3FN, block = 1x16>
}

// -----

//===----------------------------------------------------------------------===//
// remove-dead
//===----------------------------------------------------------------------===//

// Unused quantize, hadamard, amax, dequantize and dual_quantize are
// erased, with the transpose that only fed them.
// CHECK-LABEL: func.func @remove_dead
// CHECK-NEXT:    return
// expected-remark @+1 {{nvfp4-fuse-quantization: shared-amax = 0, shared-weight-quantizations = 0, folded-hadamards = 0, fused-output-amaxes = 0, fused-epilogue-quantizations = 0, fused-dual-quantizations = 0, dead-ops-removed = 6}}
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
  %r, %c = nvfp4.dual_quantize %x columnwise : tensor<32x64xbf16>
      -> !nvfp4.tensor<32x64xf4E2M1FN, scale = f8E4M3FN, block = 1x16>,
         !nvfp4.tensor<64x32xf4E2M1FN, scale = f8E4M3FN, block = 1x16>
  return
}

// -----

//===----------------------------------------------------------------------===//
// share-quantization
//===----------------------------------------------------------------------===//

// The Q, K and V projections quantize one X three times: after share-amax
// the three are equal and one remains. A quantization that differs in its
// rounding (SR with a seed) or its block shape stays.
// CHECK-LABEL: func.func @share_quantization
// CHECK-SAME:    (%[[X:.*]]: tensor<32x64xbf16>, %[[SEED:.*]]: i64)
// CHECK-NEXT:    %[[A:.*]] = nvfp4.amax %[[X]]
// CHECK-NEXT:    %[[Q:.*]] = nvfp4.quantize %[[X]] amax(%[[A]]) : tensor<32x64xbf16> -> !nvfp4.tensor<32x64xf4E2M1FN, scale = f8E4M3FN, block = 1x16>
// CHECK-NEXT:    %[[S:.*]] = nvfp4.quantize %[[X]] amax(%[[A]]) rounding<stochastic> seed(%[[SEED]])
// CHECK-NEXT:    %[[T:.*]] = nvfp4.quantize %[[X]] amax(%[[A]]) : tensor<32x64xbf16> -> !nvfp4.tensor<32x64xf4E2M1FN, scale = f8E4M3FN, block = 16x16>
// CHECK-NEXT:    return %[[Q]], %[[Q]], %[[Q]], %[[S]], %[[T]]
// expected-remark @+1 {{nvfp4-fuse-quantization: shared-amax = 5, shared-weight-quantizations = 0, folded-hadamards = 0, fused-output-amaxes = 0, fused-epilogue-quantizations = 0, fused-dual-quantizations = 0, dead-ops-removed = 0, shared-quantizations = 2}}
func.func @share_quantization(%x: tensor<32x64xbf16>, %seed: i64)
    -> (!nvfp4.tensor<32x64xf4E2M1FN, scale = f8E4M3FN, block = 1x16>,
        !nvfp4.tensor<32x64xf4E2M1FN, scale = f8E4M3FN, block = 1x16>,
        !nvfp4.tensor<32x64xf4E2M1FN, scale = f8E4M3FN, block = 1x16>,
        !nvfp4.tensor<32x64xf4E2M1FN, scale = f8E4M3FN, block = 1x16>,
        !nvfp4.tensor<32x64xf4E2M1FN, scale = f8E4M3FN, block = 16x16>) {
  %q = nvfp4.quantize %x : tensor<32x64xbf16>
      -> !nvfp4.tensor<32x64xf4E2M1FN, scale = f8E4M3FN, block = 1x16>
  %k = nvfp4.quantize %x : tensor<32x64xbf16>
      -> !nvfp4.tensor<32x64xf4E2M1FN, scale = f8E4M3FN, block = 1x16>
  %v = nvfp4.quantize %x : tensor<32x64xbf16>
      -> !nvfp4.tensor<32x64xf4E2M1FN, scale = f8E4M3FN, block = 1x16>
  %s = nvfp4.quantize %x rounding<stochastic> seed(%seed) : tensor<32x64xbf16>
      -> !nvfp4.tensor<32x64xf4E2M1FN, scale = f8E4M3FN, block = 1x16>
  %t = nvfp4.quantize %x : tensor<32x64xbf16>
      -> !nvfp4.tensor<32x64xf4E2M1FN, scale = f8E4M3FN, block = 16x16>
  return %q, %k, %v, %s, %t : !nvfp4.tensor<32x64xf4E2M1FN, scale = f8E4M3FN, block = 1x16>,
      !nvfp4.tensor<32x64xf4E2M1FN, scale = f8E4M3FN, block = 1x16>,
      !nvfp4.tensor<32x64xf4E2M1FN, scale = f8E4M3FN, block = 1x16>,
      !nvfp4.tensor<32x64xf4E2M1FN, scale = f8E4M3FN, block = 1x16>,
      !nvfp4.tensor<32x64xf4E2M1FN, scale = f8E4M3FN, block = 16x16>
}
