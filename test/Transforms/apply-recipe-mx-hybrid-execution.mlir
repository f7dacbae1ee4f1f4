// End to end on the CPU, MXFP8 with E5M2 gradients (TE's HYBRID format:
// nvfp4-apply-recipe mxfp8-gradients=e5m2): a linear layer's training step
// with nvfp4.precision = "mxfp8" everywhere goes through the recipe (roles
// inferred) and nvfp4-fuse-quantization, then runs with the reference
// lowering. @reference writes the recipe out by hand: fprop X and W in E4M3;
// dgrad dY in E5M2, W^T in E4M3; wgrad dY^T in E5M2, X^T in E4M3 (1x32 along
// K, round to nearest), as quantize -> dequantize -> f32 linalg.matmul; only
// the summation order differs, so results agree to 1e-4 of the largest
// magnitude. dY holds values with three mantissa bits (9k/32), which E5M2
// rounds and E4M3 keeps, so the element type of the gradients shows.
//
// RUN: nvfp4-opt %s --nvfp4-apply-recipe=mxfp8-gradients=e5m2 --nvfp4-fuse-quantization \
// RUN:   --nvfp4-reference-pipeline | %run-reference | FileCheck %s
//
// CHECK: fprop mismatches: 0
// CHECK-NEXT: dgrad mismatches: 0
// CHECK-NEXT: wgrad mismatches: 0
//
// Negative control: the default (E4M3 gradients) differs from the reference
// in both gradient GEMMs, not in fprop.
//
// RUN: nvfp4-opt %s --nvfp4-apply-recipe --nvfp4-fuse-quantization --nvfp4-reference-pipeline \
// RUN:   | %run-reference | FileCheck %s --check-prefix=E4M3
// E4M3: fprop mismatches: 0
// E4M3-NEXT: dgrad mismatches: {{[1-9][0-9]*}}
// E4M3-NEXT: wgrad mismatches: {{[1-9][0-9]*}}
//
// An unknown element type is one error.
//
// RUN: not nvfp4-opt %s --nvfp4-apply-recipe=mxfp8-gradients=e3m4 -o /dev/null 2>&1 \
// RUN:   | FileCheck %s --check-prefix=BAD
// BAD: error: nvfp4-apply-recipe: mxfp8-gradients='e3m4': expected e4m3 or e5m2

#fprop_lhs = affine_map<(t, o, i) -> (t, i)>
#fprop_rhs = affine_map<(t, o, i) -> (o, i)>
#fprop_out = affine_map<(t, o, i) -> (t, o)>
#wgrad_lhs = affine_map<(o, i, t) -> (t, o)>
#wgrad_rhs = affine_map<(o, i, t) -> (t, i)>
#wgrad_out = affine_map<(o, i, t) -> (o, i)>
#id = affine_map<(a, b) -> (a, b)>
#tr = affine_map<(a, b) -> (b, a)>

// The program: T = 32 tokens, 64 inputs, 32 outputs, f32 results.
func.func @training_step(%x: tensor<32x64xbf16>,
                         %w: tensor<32x64xbf16> {nvfp4.weight},
                         %dy: tensor<32x32xbf16>)
    -> (tensor<32x32xf32>, tensor<32x64xf32>, tensor<32x64xf32>) {
  %zero = arith.constant 0.0 : f32
  %e0 = tensor.empty() : tensor<32x32xf32>
  %y0 = linalg.fill ins(%zero : f32) outs(%e0 : tensor<32x32xf32>) -> tensor<32x32xf32>
  %e1 = tensor.empty() : tensor<32x64xf32>
  %dx0 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<32x64xf32>) -> tensor<32x64xf32>
  %y = linalg.matmul indexing_maps = [#fprop_lhs, #fprop_rhs, #fprop_out]
      {nvfp4.precision = "mxfp8"}
      ins(%x, %w : tensor<32x64xbf16>, tensor<32x64xbf16>)
      outs(%y0 : tensor<32x32xf32>) -> tensor<32x32xf32>
  %dx = linalg.matmul {nvfp4.precision = "mxfp8"}
      ins(%dy, %w : tensor<32x32xbf16>, tensor<32x64xbf16>)
      outs(%dx0 : tensor<32x64xf32>) -> tensor<32x64xf32>
  %dw = linalg.matmul indexing_maps = [#wgrad_lhs, #wgrad_rhs, #wgrad_out]
      {nvfp4.precision = "mxfp8"}
      ins(%dy, %x : tensor<32x32xbf16>, tensor<32x64xbf16>)
      outs(%dx0 : tensor<32x64xf32>) -> tensor<32x64xf32>
  return %y, %dx, %dw : tensor<32x32xf32>, tensor<32x64xf32>, tensor<32x64xf32>
}

// transpose(x) as a linalg.generic copy (not a linalg.transpose).
func.func @transpose_32x64(%x: tensor<32x64xbf16>) -> tensor<64x32xbf16> {
  %init = tensor.empty() : tensor<64x32xbf16>
  %t = linalg.generic {indexing_maps = [#tr, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<32x64xbf16>) outs(%init : tensor<64x32xbf16>) {
  ^bb0(%in: bf16, %out: bf16):
    linalg.yield %in : bf16
  } -> tensor<64x32xbf16>
  return %t : tensor<64x32xbf16>
}

func.func @transpose_32x32(%x: tensor<32x32xbf16>) -> tensor<32x32xbf16> {
  %init = tensor.empty() : tensor<32x32xbf16>
  %t = linalg.generic {indexing_maps = [#tr, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<32x32xbf16>) outs(%init : tensor<32x32xbf16>) {
  ^bb0(%in: bf16, %out: bf16):
    linalg.yield %in : bf16
  } -> tensor<32x32xbf16>
  return %t : tensor<32x32xbf16>
}

// The recipe by hand: every GEMM as lhs[M, K] * rhs[N, K]^T in f32 on
// dequantized operands.
func.func @reference(%x: tensor<32x64xbf16>, %w: tensor<32x64xbf16>,
                     %dy: tensor<32x32xbf16>)
    -> (tensor<32x32xf32>, tensor<32x64xf32>, tensor<32x64xf32>) {
  %zero = arith.constant 0.0 : f32
  %e0 = tensor.empty() : tensor<32x32xf32>
  %y0 = linalg.fill ins(%zero : f32) outs(%e0 : tensor<32x32xf32>) -> tensor<32x32xf32>
  %e1 = tensor.empty() : tensor<32x64xf32>
  %dx0 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<32x64xf32>) -> tensor<32x64xf32>

  // fprop: X and W in E4M3 along the 64 inputs.
  %qx8 = nvfp4.quantize %x : tensor<32x64xbf16>
      -> !nvfp4.tensor<32x64xf8E4M3FN, scale = f8E8M0FNU, block = 1x32>
  %x8h = nvfp4.dequantize %qx8 : !nvfp4.tensor<32x64xf8E4M3FN, scale = f8E8M0FNU, block = 1x32>
      -> tensor<32x64xf32>
  %qw8 = nvfp4.quantize %w : tensor<32x64xbf16>
      -> !nvfp4.tensor<32x64xf8E4M3FN, scale = f8E8M0FNU, block = 1x32>
  %w8h = nvfp4.dequantize %qw8 : !nvfp4.tensor<32x64xf8E4M3FN, scale = f8E8M0FNU, block = 1x32>
      -> tensor<32x64xf32>
  %y = linalg.matmul indexing_maps = [#fprop_lhs, #fprop_rhs, #fprop_out]
      ins(%x8h, %w8h : tensor<32x64xf32>, tensor<32x64xf32>)
      outs(%y0 : tensor<32x32xf32>) -> tensor<32x32xf32>

  // dgrad: dY in E5M2, W^T in E4M3, along the 32 outputs.
  %wt = func.call @transpose_32x64(%w) : (tensor<32x64xbf16>) -> tensor<64x32xbf16>
  %qdy5 = nvfp4.quantize %dy : tensor<32x32xbf16>
      -> !nvfp4.tensor<32x32xf8E5M2, scale = f8E8M0FNU, block = 1x32>
  %dy5h = nvfp4.dequantize %qdy5 : !nvfp4.tensor<32x32xf8E5M2, scale = f8E8M0FNU, block = 1x32>
      -> tensor<32x32xf32>
  %qwt8 = nvfp4.quantize %wt : tensor<64x32xbf16>
      -> !nvfp4.tensor<64x32xf8E4M3FN, scale = f8E8M0FNU, block = 1x32>
  %wt8h = nvfp4.dequantize %qwt8 : !nvfp4.tensor<64x32xf8E4M3FN, scale = f8E8M0FNU, block = 1x32>
      -> tensor<64x32xf32>
  %dx = linalg.matmul indexing_maps = [#fprop_lhs, #fprop_rhs, #fprop_out]
      ins(%dy5h, %wt8h : tensor<32x32xf32>, tensor<64x32xf32>)
      outs(%dx0 : tensor<32x64xf32>) -> tensor<32x64xf32>

  // wgrad: dY^T in E5M2, X^T in E4M3, along the 32 tokens.
  %dyt = func.call @transpose_32x32(%dy) : (tensor<32x32xbf16>) -> tensor<32x32xbf16>
  %xt = func.call @transpose_32x64(%x) : (tensor<32x64xbf16>) -> tensor<64x32xbf16>
  %qdyt5 = nvfp4.quantize %dyt : tensor<32x32xbf16>
      -> !nvfp4.tensor<32x32xf8E5M2, scale = f8E8M0FNU, block = 1x32>
  %dyt5h = nvfp4.dequantize %qdyt5 : !nvfp4.tensor<32x32xf8E5M2, scale = f8E8M0FNU, block = 1x32>
      -> tensor<32x32xf32>
  %qxt8 = nvfp4.quantize %xt : tensor<64x32xbf16>
      -> !nvfp4.tensor<64x32xf8E4M3FN, scale = f8E8M0FNU, block = 1x32>
  %xt8h = nvfp4.dequantize %qxt8 : !nvfp4.tensor<64x32xf8E4M3FN, scale = f8E8M0FNU, block = 1x32>
      -> tensor<64x32xf32>
  %dw = linalg.matmul indexing_maps = [#fprop_lhs, #fprop_rhs, #fprop_out]
      ins(%dyt5h, %xt8h : tensor<32x32xf32>, tensor<64x32xf32>)
      outs(%dx0 : tensor<32x64xf32>) -> tensor<32x64xf32>
  return %y, %dx, %dw : tensor<32x32xf32>, tensor<32x64xf32>, tensor<32x64xf32>
}

// Number of elements with |a - b| > 1e-4 * max |b|.
func.func @mismatches(%a: tensor<?xf32>, %b: tensor<?xf32>) -> i32 {
  %zero = arith.constant 0.0 : f32
  %zero_i = arith.constant 0 : i32
  %max_init = tensor.empty() : tensor<f32>
  %max_fill = linalg.fill ins(%zero : f32) outs(%max_init : tensor<f32>) -> tensor<f32>
  %max = linalg.reduce ins(%b : tensor<?xf32>) outs(%max_fill : tensor<f32>) dimensions = [0]
    (%in: f32, %m: f32) {
      %abs = math.absf %in : f32
      %r = arith.maximumf %m, %abs : f32
      linalg.yield %r : f32
    }
  %maxv = tensor.extract %max[] : tensor<f32>
  %rel = arith.constant 1.0e-04 : f32
  %tol = arith.mulf %maxv, %rel : f32
  %count_init = tensor.empty() : tensor<i32>
  %count_fill = linalg.fill ins(%zero_i : i32) outs(%count_init : tensor<i32>) -> tensor<i32>
  %count = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>,
                                            affine_map<(i) -> ()>],
                           iterator_types = ["reduction"]}
      ins(%a, %b : tensor<?xf32>, tensor<?xf32>) outs(%count_fill : tensor<i32>) {
  ^bb0(%va: f32, %vb: f32, %n: i32):
    %d = arith.subf %va, %vb : f32
    %ad = math.absf %d : f32
    %bad = arith.cmpf ugt, %ad, %tol : f32
    %one = arith.extui %bad : i1 to i32
    %s = arith.addi %n, %one : i32
    linalg.yield %s : i32
  } -> tensor<i32>
  %result = tensor.extract %count[] : tensor<i32>
  return %result : i32
}

// Deterministic data: ((7 i + 5 j + s) mod 13 - 6) / 4, plus an outlier of 5
// in one column so that the RHT has something to spread.
func.func @data(%rows: index, %cols: index, %s: i64) -> tensor<?x?xbf16> {
  %init = tensor.empty(%rows, %cols) : tensor<?x?xbf16>
  %t = linalg.generic {indexing_maps = [#id], iterator_types = ["parallel", "parallel"]}
      outs(%init : tensor<?x?xbf16>) {
  ^bb0(%out: bf16):
    %i = linalg.index 0 : index
    %j = linalg.index 1 : index
    %ii = arith.index_cast %i : index to i64
    %jj = arith.index_cast %j : index to i64
    %c7 = arith.constant 7 : i64
    %c5 = arith.constant 5 : i64
    %c13 = arith.constant 13 : i64
    %c6 = arith.constant 6 : i64
    %c3 = arith.constant 3 : i64
    %a = arith.muli %ii, %c7 : i64
    %b = arith.muli %jj, %c5 : i64
    %ab = arith.addi %a, %b : i64
    %abs = arith.addi %ab, %s : i64
    %m = arith.remui %abs, %c13 : i64
    %v = arith.subi %m, %c6 : i64
    %f = arith.sitofp %v : i64 to f32
    %quarter = arith.constant 0.25 : f32
    %q = arith.mulf %f, %quarter : f32
    %is_outlier = arith.cmpi eq, %jj, %c3 : i64
    %five = arith.constant 5.0 : f32
    %zero = arith.constant 0.0 : f32
    %bump = arith.select %is_outlier, %five, %zero : f32
    %r = arith.addf %q, %bump : f32
    %o = arith.truncf %r : f32 to bf16
    linalg.yield %o : bf16
  } -> tensor<?x?xbf16>
  return %t : tensor<?x?xbf16>
}

func.func @flat_32x32(%t: tensor<32x32xf32>) -> tensor<?xf32> {
  %f = tensor.collapse_shape %t [[0, 1]] : tensor<32x32xf32> into tensor<1024xf32>
  %d = tensor.cast %f : tensor<1024xf32> to tensor<?xf32>
  return %d : tensor<?xf32>
}

func.func @flat_32x64(%t: tensor<32x64xf32>) -> tensor<?xf32> {
  %f = tensor.collapse_shape %t [[0, 1]] : tensor<32x64xf32> into tensor<2048xf32>
  %d = tensor.cast %f : tensor<2048xf32> to tensor<?xf32>
  return %d : tensor<?xf32>
}

func.func @main() {
  %c32 = arith.constant 32 : index
  %c64 = arith.constant 64 : index
  %s0 = arith.constant 0 : i64
  %s1 = arith.constant 4 : i64
  %s2 = arith.constant 9 : i64
  %xd = func.call @data(%c32, %c64, %s0) : (index, index, i64) -> tensor<?x?xbf16>
  %x = tensor.cast %xd : tensor<?x?xbf16> to tensor<32x64xbf16>
  %wd = func.call @data(%c32, %c64, %s1) : (index, index, i64) -> tensor<?x?xbf16>
  %w = tensor.cast %wd : tensor<?x?xbf16> to tensor<32x64xbf16>
  %dyd = func.call @data(%c32, %c32, %s2) : (index, index, i64) -> tensor<?x?xbf16>
  %dyq = tensor.cast %dyd : tensor<?x?xbf16> to tensor<32x32xbf16>
  // dY = 1.125 * data: k/4 * 9/8 = 9k/32 (exact in BF16), three mantissa bits.
  %nine_eighths = arith.constant 1.125 : bf16
  %dy_init = tensor.empty() : tensor<32x32xbf16>
  %dy = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%dyq : tensor<32x32xbf16>) outs(%dy_init : tensor<32x32xbf16>) {
  ^bb0(%in: bf16, %out: bf16):
    %v = arith.mulf %in, %nine_eighths : bf16
    linalg.yield %v : bf16
  } -> tensor<32x32xbf16>

  %y, %dx, %dw = func.call @training_step(%x, %w, %dy)
      : (tensor<32x64xbf16>, tensor<32x64xbf16>, tensor<32x32xbf16>)
      -> (tensor<32x32xf32>, tensor<32x64xf32>, tensor<32x64xf32>)
  %ry, %rdx, %rdw = func.call @reference(%x, %w, %dy)
      : (tensor<32x64xbf16>, tensor<32x64xbf16>, tensor<32x32xbf16>)
      -> (tensor<32x32xf32>, tensor<32x64xf32>, tensor<32x64xf32>)

  %fy = func.call @flat_32x32(%y) : (tensor<32x32xf32>) -> tensor<?xf32>
  %fry = func.call @flat_32x32(%ry) : (tensor<32x32xf32>) -> tensor<?xf32>
  %ny = func.call @mismatches(%fy, %fry) : (tensor<?xf32>, tensor<?xf32>) -> i32
  vector.print str "fprop mismatches: "
  vector.print %ny : i32
  %fdx = func.call @flat_32x64(%dx) : (tensor<32x64xf32>) -> tensor<?xf32>
  %frdx = func.call @flat_32x64(%rdx) : (tensor<32x64xf32>) -> tensor<?xf32>
  %ndx = func.call @mismatches(%fdx, %frdx) : (tensor<?xf32>, tensor<?xf32>) -> i32
  vector.print str "dgrad mismatches: "
  vector.print %ndx : i32
  %fdw = func.call @flat_32x64(%dw) : (tensor<32x64xf32>) -> tensor<?xf32>
  %frdw = func.call @flat_32x64(%rdw) : (tensor<32x64xf32>) -> tensor<?xf32>
  %ndw = func.call @mismatches(%fdw, %frdw) : (tensor<?xf32>, tensor<?xf32>) -> i32
  vector.print str "wgrad mismatches: "
  vector.print %ndw : i32
  return
}
