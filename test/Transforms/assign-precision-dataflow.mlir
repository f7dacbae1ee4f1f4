// RUN: nvfp4-opt %s --nvfp4-assign-precision='keep-first=1 keep-last=1' \
// RUN:   -split-input-file -verify-diagnostics | FileCheck %s

// Block inference where values cross regions. nvfp4-assign-precision asks,
// for every elementwise add, whether a GEMM is both a transitive user of one
// operand and a transitive producer of the other; the answer comes from a
// search limited to the ops between the two operands (DataFlowIndex), which
// must agree with a search of the whole function. These cases pin the
// answers the whole-function search gives.

#x = affine_map<(m, n, k) -> (m, k)>
#w = affine_map<(m, n, k) -> (n, k)>
#y = affine_map<(m, n, k) -> (m, n)>

// A residual connection inside a loop body (its operand is the loop's block
// argument) counts, as do the two around the loop: three blocks. The GEMM
// in the loop reads only block arguments and stays in block 0; the one
// after the loop is in block 1.
// CHECK-LABEL: func.func @residual_in_loop
// CHECK:       linalg.matmul {{.*}}{nvfp4.layer = 0 : i64, nvfp4.precision = "bf16"}
// CHECK:       scf.for
// CHECK:         linalg.matmul {{.*}}{nvfp4.layer = 0 : i64, nvfp4.precision = "bf16"}
// CHECK:       linalg.matmul {{.*}}{nvfp4.layer = 1 : i64, nvfp4.precision = "nvfp4"}
// expected-remark @+1 {{inferred 3 blocks from its residual connections}}
func.func @residual_in_loop(%h: tensor<16x32xbf16>, %w0: tensor<32x32xbf16> {nvfp4.weight},
    %w1: tensor<32x32xbf16> {nvfp4.weight}, %w2: tensor<32x32xbf16> {nvfp4.weight},
    %init: tensor<16x32xbf16>) -> tensor<16x32xbf16> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %m0 = linalg.matmul indexing_maps = [#x, #w, #y]
      ins(%h, %w0 : tensor<16x32xbf16>, tensor<32x32xbf16>) outs(%init : tensor<16x32xbf16>) -> tensor<16x32xbf16>
  %h1 = arith.addf %h, %m0 : tensor<16x32xbf16>
  %r = scf.for %i = %c0 to %c4 step %c1 iter_args(%acc = %h1) -> tensor<16x32xbf16> {
    %m = linalg.matmul indexing_maps = [#x, #w, #y]
        ins(%acc, %w1 : tensor<16x32xbf16>, tensor<32x32xbf16>) outs(%init : tensor<16x32xbf16>) -> tensor<16x32xbf16>
    %n = arith.addf %acc, %m : tensor<16x32xbf16>
    scf.yield %n : tensor<16x32xbf16>
  }
  %m2 = linalg.matmul indexing_maps = [#x, #w, #y]
      ins(%r, %w2 : tensor<16x32xbf16>, tensor<32x32xbf16>) outs(%init : tensor<16x32xbf16>) -> tensor<16x32xbf16>
  %h3 = arith.addf %m2, %r : tensor<16x32xbf16>
  return %h3 : tensor<16x32xbf16>
}

// -----

#x = affine_map<(m, n, k) -> (m, k)>
#w = affine_map<(m, n, k) -> (n, k)>
#y = affine_map<(m, n, k) -> (m, n)>

// A GEMM nested in an scf.if that captures %h is a user of %h, but only
// the scf.if (not the GEMM inside it) produces %r: `%h + %r` is not a
// residual connection. Two blocks.
// CHECK-LABEL: func.func @gemm_nested_in_producer
// CHECK:       scf.if
// CHECK:         linalg.matmul {{.*}}{nvfp4.layer = 0 : i64, nvfp4.precision = "bf16"}
// CHECK:       linalg.matmul {{.*}}{nvfp4.layer = 0 : i64, nvfp4.precision = "bf16"}
// CHECK:       linalg.matmul {{.*}}{nvfp4.layer = 1 : i64, nvfp4.precision = "bf16"}
// expected-remark @+1 {{inferred 2 blocks from its residual connections}}
func.func @gemm_nested_in_producer(%h: tensor<16x32xbf16>, %w0: tensor<32x32xbf16> {nvfp4.weight},
    %w1: tensor<32x32xbf16> {nvfp4.weight}, %w2: tensor<32x32xbf16> {nvfp4.weight},
    %init: tensor<16x32xbf16>, %c: i1) -> tensor<16x32xbf16> {
  %r = scf.if %c -> tensor<16x32xbf16> {
    %m = linalg.matmul indexing_maps = [#x, #w, #y]
        ins(%h, %w0 : tensor<16x32xbf16>, tensor<32x32xbf16>) outs(%init : tensor<16x32xbf16>) -> tensor<16x32xbf16>
    scf.yield %m : tensor<16x32xbf16>
  } else {
    scf.yield %h : tensor<16x32xbf16>
  }
  %h1 = arith.addf %h, %r : tensor<16x32xbf16>
  %m1 = linalg.matmul indexing_maps = [#x, #w, #y]
      ins(%h1, %w1 : tensor<16x32xbf16>, tensor<32x32xbf16>) outs(%init : tensor<16x32xbf16>) -> tensor<16x32xbf16>
  %h2 = arith.addf %h1, %m1 : tensor<16x32xbf16>
  %m2 = linalg.matmul indexing_maps = [#x, #w, #y]
      ins(%h2, %w2 : tensor<16x32xbf16>, tensor<32x32xbf16>) outs(%init : tensor<16x32xbf16>) -> tensor<16x32xbf16>
  %h3 = arith.addf %h2, %m2 : tensor<16x32xbf16>
  return %h3 : tensor<16x32xbf16>
}

// -----

#x = affine_map<(m, n, k) -> (m, k)>
#w = affine_map<(m, n, k) -> (n, k)>
#y = affine_map<(m, n, k) -> (m, n)>

// Blocks listed out of dominance order: ^second uses %h1, defined in
// ^first, which is listed after it. The windowed search does not apply
// (a use precedes its definition in the walk) and the whole-function search
// finds all three residual connections.
// expected-remark @+1 {{inferred 3 blocks from its residual connections}}
func.func @blocks_out_of_order(%h: tensor<16x32xbf16>, %w0: tensor<32x32xbf16> {nvfp4.weight},
    %w1: tensor<32x32xbf16> {nvfp4.weight}, %w2: tensor<32x32xbf16> {nvfp4.weight},
    %init: tensor<16x32xbf16>) -> tensor<16x32xbf16> {
  cf.br ^first
^second:
  %m1 = linalg.matmul indexing_maps = [#x, #w, #y]
      ins(%h1, %w1 : tensor<16x32xbf16>, tensor<32x32xbf16>) outs(%init : tensor<16x32xbf16>) -> tensor<16x32xbf16>
  %h2 = arith.addf %h1, %m1 : tensor<16x32xbf16>
  %m2 = linalg.matmul indexing_maps = [#x, #w, #y]
      ins(%h2, %w2 : tensor<16x32xbf16>, tensor<32x32xbf16>) outs(%init : tensor<16x32xbf16>) -> tensor<16x32xbf16>
  %h3 = arith.addf %h2, %m2 : tensor<16x32xbf16>
  return %h3 : tensor<16x32xbf16>
^first:
  %m0 = linalg.matmul indexing_maps = [#x, #w, #y]
      ins(%h, %w0 : tensor<16x32xbf16>, tensor<32x32xbf16>) outs(%init : tensor<16x32xbf16>) -> tensor<16x32xbf16>
  %h1 = arith.addf %h, %m0 : tensor<16x32xbf16>
  cf.br ^second
}
