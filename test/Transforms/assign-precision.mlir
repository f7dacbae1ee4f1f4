// RUN: nvfp4-opt %s --nvfp4-assign-precision='keep-first=1 keep-last=1' \
// RUN:   -split-input-file -verify-diagnostics | FileCheck %s

#x = affine_map<(m, n, k) -> (m, k)>
#w = affine_map<(m, n, k) -> (n, k)>
#y = affine_map<(m, n, k) -> (m, n)>

// Four annotated blocks, keep-first=1 keep-last=1: blocks 0 and 3 stay bf16,
// 1 and 2 become nvfp4.
// CHECK-LABEL: func.func @first_and_last_blocks
// CHECK: linalg.matmul {{.*}}{nvfp4.layer = 0 : i64, nvfp4.precision = "bf16"}
// CHECK: linalg.matmul {{.*}}{nvfp4.layer = 1 : i64, nvfp4.precision = "nvfp4"}
// CHECK: linalg.matmul {{.*}}{nvfp4.layer = 2 : i64, nvfp4.precision = "nvfp4"}
// CHECK: linalg.matmul {{.*}}{nvfp4.layer = 3 : i64, nvfp4.precision = "bf16"}
func.func @first_and_last_blocks(%h: tensor<16x32xbf16>, %w0: tensor<32x32xbf16> {nvfp4.weight},
    %w1: tensor<32x32xbf16> {nvfp4.weight}, %w2: tensor<32x32xbf16> {nvfp4.weight},
    %w3: tensor<32x32xbf16> {nvfp4.weight}, %init: tensor<16x32xbf16>) -> tensor<16x32xbf16> {
  %0 = linalg.matmul indexing_maps = [#x, #w, #y] {nvfp4.layer = 0 : i64}
      ins(%h, %w0 : tensor<16x32xbf16>, tensor<32x32xbf16>) outs(%init : tensor<16x32xbf16>) -> tensor<16x32xbf16>
  %1 = linalg.matmul indexing_maps = [#x, #w, #y] {nvfp4.layer = 1 : i64}
      ins(%0, %w1 : tensor<16x32xbf16>, tensor<32x32xbf16>) outs(%init : tensor<16x32xbf16>) -> tensor<16x32xbf16>
  %2 = linalg.matmul indexing_maps = [#x, #w, #y] {nvfp4.layer = 2 : i64}
      ins(%1, %w2 : tensor<16x32xbf16>, tensor<32x32xbf16>) outs(%init : tensor<16x32xbf16>) -> tensor<16x32xbf16>
  %3 = linalg.matmul indexing_maps = [#x, #w, #y] {nvfp4.layer = 3 : i64}
      ins(%2, %w3 : tensor<16x32xbf16>, tensor<32x32xbf16>) outs(%init : tensor<16x32xbf16>) -> tensor<16x32xbf16>
  return %3 : tensor<16x32xbf16>
}

// -----

#x = affine_map<(m, n, k) -> (m, k)>
#w = affine_map<(m, n, k) -> (n, k)>
#y = affine_map<(m, n, k) -> (m, n)>

// An explicit nvfp4.precision is kept, even in a kept block; attention
// projections are nvfp4 but the attention BMMs (no weight operand) and the
// head stay bf16; linalg.batch_matmul, linalg.generic and linalg.contract
// are all GEMMs.
// CHECK-LABEL: func.func @kinds_and_explicit_precision
// CHECK: linalg.matmul {{.*}}{nvfp4.layer = 0 : i64, nvfp4.precision = "nvfp4"}
// CHECK: linalg.matmul {{.*}}{nvfp4.kind = "attention", nvfp4.layer = 1 : i64, nvfp4.precision = "nvfp4"}
// CHECK: linalg.batch_matmul {{.*}}{nvfp4.kind = "attention", nvfp4.layer = 1 : i64, nvfp4.precision = "bf16"}
// CHECK: linalg.generic {{.*}}nvfp4.kind = "attention", nvfp4.layer = 1 : i64, nvfp4.precision = "bf16"
// CHECK: linalg.contract {{.*}}{nvfp4.kind = "ffn", nvfp4.layer = 2 : i64, nvfp4.precision = "nvfp4"}
// CHECK: linalg.matmul {{.*}}{nvfp4.kind = "head", nvfp4.precision = "bf16"}
#bq = affine_map<(b, m, n, k) -> (b, m, k)>
#bk = affine_map<(b, m, n, k) -> (b, n, k)>
#bs = affine_map<(b, m, n, k) -> (b, m, n)>
#bv = affine_map<(b, m, n, k) -> (b, k, n)>
func.func @kinds_and_explicit_precision(%h: tensor<16x32xbf16>,
    %w0: tensor<32x32xbf16> {nvfp4.weight}, %wq: tensor<32x32xbf16> {nvfp4.weight},
    %q: tensor<2x16x16xbf16>, %k: tensor<2x16x16xbf16>, %s0: tensor<2x16x16xbf16>,
    %w2: tensor<32x32xbf16> {nvfp4.weight}, %head: tensor<64x32xbf16> {nvfp4.weight},
    %init: tensor<16x32xbf16>, %logits0: tensor<16x64xbf16>)
    -> (tensor<16x32xbf16>, tensor<2x16x16xbf16>, tensor<2x16x16xbf16>, tensor<16x32xbf16>, tensor<16x64xbf16>) {
  %0 = linalg.matmul indexing_maps = [#x, #w, #y] {nvfp4.layer = 0 : i64, nvfp4.precision = "nvfp4"}
      ins(%h, %w0 : tensor<16x32xbf16>, tensor<32x32xbf16>) outs(%init : tensor<16x32xbf16>) -> tensor<16x32xbf16>
  %1 = linalg.matmul indexing_maps = [#x, #w, #y] {nvfp4.layer = 1 : i64, nvfp4.kind = "attention"}
      ins(%0, %wq : tensor<16x32xbf16>, tensor<32x32xbf16>) outs(%init : tensor<16x32xbf16>) -> tensor<16x32xbf16>
  %s = linalg.batch_matmul indexing_maps = [#bq, #bk, #bs] {nvfp4.layer = 1 : i64, nvfp4.kind = "attention"}
      ins(%q, %k : tensor<2x16x16xbf16>, tensor<2x16x16xbf16>) outs(%s0 : tensor<2x16x16xbf16>) -> tensor<2x16x16xbf16>
  %o = linalg.generic {indexing_maps = [#bq, #bv, #bs],
                       iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%s, %k : tensor<2x16x16xbf16>, tensor<2x16x16xbf16>) outs(%s0 : tensor<2x16x16xbf16>)
      attrs = {nvfp4.layer = 1 : i64, nvfp4.kind = "attention"} {
  ^bb0(%a: bf16, %b: bf16, %c: bf16):
    %m = arith.mulf %a, %b : bf16
    %r = arith.addf %c, %m : bf16
    linalg.yield %r : bf16
  } -> tensor<2x16x16xbf16>
  %2 = linalg.contract indexing_maps = [#x, #w, #y] {nvfp4.layer = 2 : i64, nvfp4.kind = "ffn"}
      ins(%1, %w2 : tensor<16x32xbf16>, tensor<32x32xbf16>) outs(%init : tensor<16x32xbf16>) -> tensor<16x32xbf16>
  %3 = linalg.matmul indexing_maps = [#x, #w, #y] {nvfp4.kind = "head"}
      ins(%2, %head : tensor<16x32xbf16>, tensor<64x32xbf16>) outs(%logits0 : tensor<16x64xbf16>) -> tensor<16x64xbf16>
  // A block 3 so that blocks 1 and 2 are not the last one.
  %4 = linalg.matmul indexing_maps = [#x, #w, #y] {nvfp4.layer = 3 : i64}
      ins(%2, %w2 : tensor<16x32xbf16>, tensor<32x32xbf16>) outs(%init : tensor<16x32xbf16>) -> tensor<16x32xbf16>
  return %0, %s, %o, %4, %3 : tensor<16x32xbf16>, tensor<2x16x16xbf16>, tensor<2x16x16xbf16>, tensor<16x32xbf16>, tensor<16x64xbf16>
}

// -----

#x = affine_map<(m, n, k) -> (m, k)>
#w = affine_map<(m, n, k) -> (n, k)>
#y = affine_map<(m, n, k) -> (m, n)>

// Shapes NVFP4 cannot represent stay bf16 with a remark: a contraction
// dimension of 40, and a dynamic one. A GEMM that is bf16 anyway (block 0)
// gets no remark. Non-GEMM contractions (a matrix-vector product) get no
// attribute.
// CHECK-LABEL: func.func @unrepresentable_shapes
// CHECK: linalg.matmul {{.*}}{nvfp4.layer = 1 : i64, nvfp4.precision = "bf16"}
// CHECK: linalg.matmul {{.*}}{nvfp4.layer = 1 : i64, nvfp4.precision = "bf16"}
// CHECK: linalg.matmul {{.*}}{nvfp4.layer = 0 : i64, nvfp4.precision = "bf16"}
// CHECK: linalg.matvec ins
// CHECK: linalg.matmul {{.*}}{nvfp4.layer = 2 : i64, nvfp4.precision = "bf16"}
func.func @unrepresentable_shapes(%a: tensor<16x40xbf16>, %b: tensor<32x40xbf16> {nvfp4.weight},
    %c: tensor<16x32xbf16>, %d: tensor<?x32xbf16>, %e: tensor<16x32xbf16> {nvfp4.weight},
    %dc: tensor<?x16xbf16>, %v: tensor<40xbf16>, %v0: tensor<32xbf16>,
    %f: tensor<32x32xbf16> {nvfp4.weight})
    -> (tensor<16x32xbf16>, tensor<?x16xbf16>, tensor<16x32xbf16>, tensor<32xbf16>, tensor<16x32xbf16>) {
  // expected-remark @+1 {{nvfp4-assign-precision: the contraction dimension 40 is not a multiple of 16; kept in bf16}}
  %0 = linalg.matmul indexing_maps = [#x, #w, #y] {nvfp4.layer = 1 : i64}
      ins(%a, %b : tensor<16x40xbf16>, tensor<32x40xbf16>) outs(%c : tensor<16x32xbf16>) -> tensor<16x32xbf16>
  // expected-remark @+1 {{nvfp4-assign-precision: the GEMM shape is dynamic; kept in bf16}}
  %1 = linalg.matmul indexing_maps = [#x, #w, #y] {nvfp4.layer = 1 : i64}
      ins(%d, %e : tensor<?x32xbf16>, tensor<16x32xbf16>) outs(%dc : tensor<?x16xbf16>) -> tensor<?x16xbf16>
  %2 = linalg.matmul indexing_maps = [#x, #w, #y] {nvfp4.layer = 0 : i64}
      ins(%a, %b : tensor<16x40xbf16>, tensor<32x40xbf16>) outs(%c : tensor<16x32xbf16>) -> tensor<16x32xbf16>
  %3 = linalg.matvec ins(%b, %v : tensor<32x40xbf16>, tensor<40xbf16>) outs(%v0 : tensor<32xbf16>) -> tensor<32xbf16>
  %4 = linalg.matmul indexing_maps = [#x, #w, #y] {nvfp4.layer = 2 : i64}
      ins(%c, %f : tensor<16x32xbf16>, tensor<32x32xbf16>) outs(%c : tensor<16x32xbf16>) -> tensor<16x32xbf16>
  return %0, %1, %2, %3, %4 : tensor<16x32xbf16>, tensor<?x16xbf16>, tensor<16x32xbf16>, tensor<32xbf16>, tensor<16x32xbf16>
}

// -----

#x = affine_map<(m, n, k) -> (m, k)>
#w = affine_map<(m, n, k) -> (n, k)>
#y = affine_map<(m, n, k) -> (m, n)>

// No nvfp4.layer: blocks come from residual connections (h + f(h) with a GEMM
// in f). Three blocks; the inferred index is written as nvfp4.layer. The
// GEMM after the last residual connection counts in the last block.
// CHECK-LABEL: func.func @inferred_blocks
// CHECK: linalg.matmul {{.*}}{nvfp4.layer = 0 : i64, nvfp4.precision = "bf16"}
// CHECK: linalg.matmul {{.*}}{nvfp4.layer = 1 : i64, nvfp4.precision = "nvfp4"}
// CHECK: linalg.matmul {{.*}}{nvfp4.layer = 1 : i64, nvfp4.precision = "nvfp4"}
// CHECK: linalg.matmul {{.*}}{nvfp4.layer = 2 : i64, nvfp4.precision = "bf16"}
// CHECK: linalg.matmul {{.*}}{nvfp4.layer = 2 : i64, nvfp4.precision = "bf16"}
// expected-remark @+1 {{nvfp4-assign-precision: no nvfp4.layer in this function; inferred 3 blocks from its residual connections}}
func.func @inferred_blocks(%h0: tensor<16x32xbf16>, %w0: tensor<32x32xbf16> {nvfp4.weight},
    %w1: tensor<32x32xbf16> {nvfp4.weight}, %w2: tensor<32x32xbf16> {nvfp4.weight},
    %w3: tensor<32x32xbf16> {nvfp4.weight}, %w4: tensor<32x32xbf16> {nvfp4.weight},
    %b: tensor<16x32xbf16>) -> tensor<16x32xbf16> {
  %zero = arith.constant 0.0 : bf16
  %empty = tensor.empty() : tensor<16x32xbf16>
  %init = linalg.fill ins(%zero : bf16) outs(%empty : tensor<16x32xbf16>) -> tensor<16x32xbf16>
  %0 = linalg.matmul indexing_maps = [#x, #w, #y]
      ins(%h0, %w0 : tensor<16x32xbf16>, tensor<32x32xbf16>) outs(%init : tensor<16x32xbf16>) -> tensor<16x32xbf16>
  %h1 = arith.addf %h0, %0 : tensor<16x32xbf16>
  %1 = linalg.matmul indexing_maps = [#x, #w, #y]
      ins(%h1, %w1 : tensor<16x32xbf16>, tensor<32x32xbf16>) outs(%init : tensor<16x32xbf16>) -> tensor<16x32xbf16>
  %2 = linalg.matmul indexing_maps = [#x, #w, #y]
      ins(%1, %w2 : tensor<16x32xbf16>, tensor<32x32xbf16>) outs(%init : tensor<16x32xbf16>) -> tensor<16x32xbf16>
  %h2 = linalg.add ins(%2, %h1 : tensor<16x32xbf16>, tensor<16x32xbf16>) outs(%init : tensor<16x32xbf16>) -> tensor<16x32xbf16>
  %3 = linalg.matmul indexing_maps = [#x, #w, #y]
      ins(%h2, %w3 : tensor<16x32xbf16>, tensor<32x32xbf16>) outs(%init : tensor<16x32xbf16>) -> tensor<16x32xbf16>
  %h3 = arith.addf %h2, %3 : tensor<16x32xbf16>
  // Not a residual connection: nothing on a path between the operands.
  %bias = arith.addf %h3, %b : tensor<16x32xbf16>
  %4 = linalg.matmul indexing_maps = [#x, #w, #y]
      ins(%bias, %w4 : tensor<16x32xbf16>, tensor<32x32xbf16>) outs(%init : tensor<16x32xbf16>) -> tensor<16x32xbf16>
  return %4 : tensor<16x32xbf16>
}

// -----

#x = affine_map<(m, n, k) -> (m, k)>
#w = affine_map<(m, n, k) -> (n, k)>
#y = affine_map<(m, n, k) -> (m, n)>

// Neither nvfp4.layer nor residual connections: the function is one block,
// which keep-first keeps in bf16.
// CHECK-LABEL: func.func @one_block
// CHECK: linalg.matmul {{.*}}{nvfp4.layer = 0 : i64, nvfp4.precision = "bf16"}
// expected-remark @+1 {{nvfp4-assign-precision: no nvfp4.layer and no residual connection in this function; assumed all its GEMMs form one block (nvfp4.layer = 0)}}
func.func @one_block(%x: tensor<16x32xbf16>, %w: tensor<32x32xbf16> {nvfp4.weight},
                     %init: tensor<16x32xbf16>) -> tensor<16x32xbf16> {
  %0 = linalg.matmul indexing_maps = [#x, #w, #y]
      ins(%x, %w : tensor<16x32xbf16>, tensor<32x32xbf16>) outs(%init : tensor<16x32xbf16>) -> tensor<16x32xbf16>
  return %0 : tensor<16x32xbf16>
}

// -----

#x = affine_map<(m, n, k) -> (m, k)>
#w = affine_map<(m, n, k) -> (n, k)>
#y = affine_map<(m, n, k) -> (m, n)>

// A GEMM without nvfp4.layer next to annotated ones (and no kind that keeps
// it) stays bf16 with a remark; f64 GEMMs are not quantized.
// CHECK-LABEL: func.func @missing_layer
// CHECK: linalg.matmul {{.*}}{nvfp4.layer = 1 : i64, nvfp4.precision = "nvfp4"}
// CHECK: linalg.matmul {{.*}}{nvfp4.precision = "bf16"}
// CHECK: linalg.matmul {{.*}}{nvfp4.layer = 1 : i64, nvfp4.precision = "bf16"}
func.func @missing_layer(%x: tensor<16x32xbf16>, %w: tensor<32x32xbf16> {nvfp4.weight},
                         %init: tensor<16x32xbf16>, %xd: tensor<16x32xf64>,
                         %wd: tensor<32x32xf64>, %initd: tensor<16x32xf64>)
    -> (tensor<16x32xbf16>, tensor<16x32xbf16>, tensor<16x32xf64>, tensor<16x32xbf16>) {
  %0 = linalg.matmul indexing_maps = [#x, #w, #y] {nvfp4.layer = 1 : i64}
      ins(%x, %w : tensor<16x32xbf16>, tensor<32x32xbf16>) outs(%init : tensor<16x32xbf16>) -> tensor<16x32xbf16>
  // expected-remark @+1 {{nvfp4-assign-precision: no nvfp4.layer on this GEMM while other GEMMs of the function have one; kept in bf16}}
  %1 = linalg.matmul indexing_maps = [#x, #w, #y]
      ins(%x, %w : tensor<16x32xbf16>, tensor<32x32xbf16>) outs(%init : tensor<16x32xbf16>) -> tensor<16x32xbf16>
  // expected-remark @+1 {{nvfp4-assign-precision: element types other than bf16, f16 and f32 cannot be quantized; kept in bf16}}
  %2 = linalg.matmul indexing_maps = [#x, #w, #y] {nvfp4.layer = 1 : i64}
      ins(%xd, %wd : tensor<16x32xf64>, tensor<32x32xf64>) outs(%initd : tensor<16x32xf64>) -> tensor<16x32xf64>
  %3 = linalg.matmul indexing_maps = [#x, #w, #y] {nvfp4.layer = 2 : i64}
      ins(%x, %w : tensor<16x32xbf16>, tensor<32x32xbf16>) outs(%init : tensor<16x32xbf16>) -> tensor<16x32xbf16>
  return %0, %1, %2, %3 : tensor<16x32xbf16>, tensor<16x32xbf16>, tensor<16x32xf64>, tensor<16x32xbf16>
}

// -----

#x = affine_map<(m, n, k) -> (m, k)>
#w = affine_map<(m, n, k) -> (n, k)>
#y = affine_map<(m, n, k) -> (m, n)>

// GEMMs on buffers and empty GEMMs are not quantized.
// CHECK-LABEL: func.func @buffers_and_empty
// CHECK: linalg.matmul {{.*}}{nvfp4.layer = 1 : i64, nvfp4.precision = "bf16"}
// CHECK: linalg.matmul {{.*}}{nvfp4.layer = 1 : i64, nvfp4.precision = "bf16"}
func.func @buffers_and_empty(%a: memref<16x32xbf16>, %b: memref<32x32xbf16>, %c: memref<16x32xbf16>,
                             %d: tensor<0x32xbf16>, %e: tensor<32x32xbf16> {nvfp4.weight},
                             %f: tensor<0x32xbf16>, %g: tensor<16x32xbf16>) -> tensor<0x32xbf16> {
  // expected-remark @+1 {{nvfp4-assign-precision: the GEMM does not operate on tensors; kept in bf16}}
  linalg.matmul indexing_maps = [#x, #w, #y] {nvfp4.layer = 1 : i64}
      ins(%a, %b : memref<16x32xbf16>, memref<32x32xbf16>) outs(%c : memref<16x32xbf16>)
  // expected-remark @+1 {{nvfp4-assign-precision: the GEMM has an empty dimension; kept in bf16}}
  %0 = linalg.matmul indexing_maps = [#x, #w, #y] {nvfp4.layer = 1 : i64}
      ins(%d, %e : tensor<0x32xbf16>, tensor<32x32xbf16>) outs(%f : tensor<0x32xbf16>) -> tensor<0x32xbf16>
  %1 = linalg.matmul indexing_maps = [#x, #w, #y] {nvfp4.layer = 2 : i64}
      ins(%g, %e : tensor<16x32xbf16>, tensor<32x32xbf16>) outs(%g : tensor<16x32xbf16>) -> tensor<16x32xbf16>
  return %0 : tensor<0x32xbf16>
}
