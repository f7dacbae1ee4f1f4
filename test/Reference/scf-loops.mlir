// RUN: nvfp4-opt %s --nvfp4-reference-pipeline | %run-reference | FileCheck %s

// nvfp4 ops inside scf.for run in the reference pipeline: the loop's
// iter_arg is recomputed by nvfp4.hadamard each iteration, so each yield is
// a new buffer (before, one-shot bufferization rejected it: "Yield operand #0
// is not equivalent to the corresponding iter bbArg"). Three trips of the
// loop must give the bits of three RHTs written out, compared element by
// element in the program.

func.func @loop(%x: tensor<2x32xbf16>, %n: index) -> tensor<2x32xbf16> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %x) -> tensor<2x32xbf16> {
    %d = nvfp4.hadamard %acc : tensor<2x32xbf16>
    scf.yield %d : tensor<2x32xbf16>
  }
  return %r : tensor<2x32xbf16>
}

func.func @main() {
  %x = arith.constant dense<[[1.0, -2.0, 3.5, 0.25, 7.0, -0.5, 1.5, 2.0, -3.0, 4.0, 0.125, -6.0, 5.0, 1.0, -1.0, 0.75,
                              2.5, -1.25, 3.0, 0.5, -4.5, 6.5, -0.75, 1.0, 8.0, -2.5, 0.375, 1.75, -7.5, 3.25, 0.0, -0.125],
                             [0.5, 0.5, -1.0, 2.0, 3.0, -3.0, 4.0, -4.0, 1.5, -1.5, 2.5, -2.5, 0.25, -0.25, 6.0, -6.0,
                              1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, -1.0, -2.0, -3.0, -4.0, -5.0, -6.0, -7.0, -8.0]]> : tensor<2x32xbf16>
  %c3 = arith.constant 3 : index
  %looped = func.call @loop(%x, %c3) : (tensor<2x32xbf16>, index) -> tensor<2x32xbf16>
  %h1 = nvfp4.hadamard %x : tensor<2x32xbf16>
  %h2 = nvfp4.hadamard %h1 : tensor<2x32xbf16>
  %h3 = nvfp4.hadamard %h2 : tensor<2x32xbf16>
  %a = arith.bitcast %looped : tensor<2x32xbf16> to tensor<2x32xi16>
  %b = arith.bitcast %h3 : tensor<2x32xbf16> to tensor<2x32xi16>
  %ne = arith.cmpi ne, %a, %b : tensor<2x32xi16>
  %ones = arith.extui %ne : tensor<2x32xi1> to tensor<2x32xi32>
  %zero = arith.constant dense<0> : tensor<i32>
  %sum = linalg.reduce ins(%ones : tensor<2x32xi32>) outs(%zero : tensor<i32>) dimensions = [0, 1]
    (%e: i32, %acc: i32) {
      %s = arith.addi %e, %acc : i32
      linalg.yield %s : i32
    }
  %mismatches = tensor.extract %sum[] : tensor<i32>
  // A loop that did nothing would equal %x, not %h3: check that it differs.
  %c = arith.bitcast %x : tensor<2x32xbf16> to tensor<2x32xi16>
  %e0 = arith.constant 0 : index
  %l0 = tensor.extract %a[%e0, %e0] : tensor<2x32xi16>
  %x0 = tensor.extract %c[%e0, %e0] : tensor<2x32xi16>
  %changed = arith.cmpi ne, %l0, %x0 : i16
  vector.print str "loop mismatches: "
  vector.print %mismatches : i32
  vector.print str "changed: "
  vector.print %changed : i1
  return
}
// CHECK: loop mismatches: 0
// CHECK: changed: 1
