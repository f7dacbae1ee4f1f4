// End to end on the CPU: a linear layer's training step (fprop, dgrad,
// wgrad, and an fprop that accumulates into a non-zero init) goes through
// nvfp4-apply-recipe (roles inferred, no nvfp4.role) and
// nvfp4-fuse-quantization, then runs with the reference lowering. Each result
// is compared with @reference, which writes the recipe of docs/Numerics.md
// section 7 out by hand as quantize -> dequantize -> f32 linalg.matmul (its
// transposes are linalg.generic copies, so the fusion pass leaves it alone).
// The seeds are SplitMix64's first two outputs for seed 0 (0xE220A8397B1DCDAF
// and 0x6E789E6AA1B965F4): stream 0 is dgrad's dY, stream 1 wgrad's dY^T.
// Only the summation order differs, so results agree to 1e-4 of the largest
// magnitude.
//
// RUN: nvfp4-opt %s --nvfp4-apply-recipe --nvfp4-fuse-quantization \
// RUN:   --nvfp4-reference-pipeline | %run-reference | FileCheck %s
//
// CHECK: fprop mismatches: 0
// CHECK-NEXT: dgrad mismatches: 0
// CHECK-NEXT: wgrad mismatches: 0
// CHECK-NEXT: accumulate mismatches: 0
//
// Negative controls: without stochastic rounding dgrad and wgrad differ from
// the reference; without the RHT wgrad does...
//
// RUN: nvfp4-opt %s --nvfp4-apply-recipe=stochastic-rounding=false \
// RUN:   --nvfp4-reference-pipeline | %run-reference \
// RUN:   | FileCheck %s --check-prefix=NO-SR
// NO-SR: fprop mismatches: 0
// NO-SR-NEXT: dgrad mismatches: {{[1-9][0-9]*}}
// NO-SR-NEXT: wgrad mismatches: {{[1-9][0-9]*}}
// NO-SR-NEXT: accumulate mismatches: 0
//
// RUN: nvfp4-opt %s --nvfp4-apply-recipe=rht=false \
// RUN:   --nvfp4-reference-pipeline | %run-reference \
// RUN:   | FileCheck %s --check-prefix=NO-RHT
// NO-RHT: dgrad mismatches: 0
// NO-RHT-NEXT: wgrad mismatches: {{[1-9][0-9]*}}
//
// ... and with 1x16 weights fprop and dgrad do.
// RUN: nvfp4-opt %s --nvfp4-apply-recipe=weight-2d=false \
// RUN:   --nvfp4-reference-pipeline | %run-reference \
// RUN:   | FileCheck %s --check-prefix=NO-2D
// NO-2D: fprop mismatches: {{[1-9][0-9]*}}
// NO-2D-NEXT: dgrad mismatches: {{[1-9][0-9]*}}
// NO-2D-NEXT: wgrad mismatches: 0

#fprop_lhs = affine_map<(t, o, i) -> (t, i)>
#fprop_rhs = affine_map<(t, o, i) -> (o, i)>
#fprop_out = affine_map<(t, o, i) -> (t, o)>
#wgrad_lhs = affine_map<(o, i, t) -> (t, o)>
#wgrad_rhs = affine_map<(o, i, t) -> (t, i)>
#wgrad_out = affine_map<(o, i, t) -> (o, i)>
#id = affine_map<(a, b) -> (a, b)>
#tr = affine_map<(a, b) -> (b, a)>

// The program: T = 32 tokens, 64 inputs, 48 outputs, f32 results.
func.func @training_step(%x: tensor<32x64xbf16>,
                         %w: tensor<48x64xbf16> {nvfp4.weight},
                         %dy: tensor<32x48xbf16>, %c: tensor<32x48xf32>)
    -> (tensor<32x48xf32>, tensor<32x64xf32>, tensor<48x64xf32>,
        tensor<32x48xf32>) {
  %zero = arith.constant 0.0 : f32
  %e0 = tensor.empty() : tensor<32x48xf32>
  %y0 = linalg.fill ins(%zero : f32) outs(%e0 : tensor<32x48xf32>) -> tensor<32x48xf32>
  %e1 = tensor.empty() : tensor<32x64xf32>
  %dx0 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<32x64xf32>) -> tensor<32x64xf32>
  %e2 = tensor.empty() : tensor<48x64xf32>
  %dw0 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<48x64xf32>) -> tensor<48x64xf32>
  %y = linalg.matmul indexing_maps = [#fprop_lhs, #fprop_rhs, #fprop_out]
      {nvfp4.precision = "nvfp4"}
      ins(%x, %w : tensor<32x64xbf16>, tensor<48x64xbf16>)
      outs(%y0 : tensor<32x48xf32>) -> tensor<32x48xf32>
  %dx = linalg.matmul {nvfp4.precision = "nvfp4"}
      ins(%dy, %w : tensor<32x48xbf16>, tensor<48x64xbf16>)
      outs(%dx0 : tensor<32x64xf32>) -> tensor<32x64xf32>
  %dw = linalg.matmul indexing_maps = [#wgrad_lhs, #wgrad_rhs, #wgrad_out]
      {nvfp4.precision = "nvfp4"}
      ins(%dy, %x : tensor<32x48xbf16>, tensor<32x64xbf16>)
      outs(%dw0 : tensor<48x64xf32>) -> tensor<48x64xf32>
  %acc = linalg.matmul indexing_maps = [#fprop_lhs, #fprop_rhs, #fprop_out]
      {nvfp4.precision = "nvfp4"}
      ins(%x, %w : tensor<32x64xbf16>, tensor<48x64xbf16>)
      outs(%c : tensor<32x48xf32>) -> tensor<32x48xf32>
  return %y, %dx, %dw, %acc
      : tensor<32x48xf32>, tensor<32x64xf32>, tensor<48x64xf32>, tensor<32x48xf32>
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

func.func @transpose_48x64(%x: tensor<48x64xbf16>) -> tensor<64x48xbf16> {
  %init = tensor.empty() : tensor<64x48xbf16>
  %t = linalg.generic {indexing_maps = [#tr, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<48x64xbf16>) outs(%init : tensor<64x48xbf16>) {
  ^bb0(%in: bf16, %out: bf16):
    linalg.yield %in : bf16
  } -> tensor<64x48xbf16>
  return %t : tensor<64x48xbf16>
}

func.func @transpose_32x48(%x: tensor<32x48xbf16>) -> tensor<48x32xbf16> {
  %init = tensor.empty() : tensor<48x32xbf16>
  %t = linalg.generic {indexing_maps = [#tr, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<32x48xbf16>) outs(%init : tensor<48x32xbf16>) {
  ^bb0(%in: bf16, %out: bf16):
    linalg.yield %in : bf16
  } -> tensor<48x32xbf16>
  return %t : tensor<48x32xbf16>
}

// The recipe by hand: every GEMM as lhs[M, K] * rhs[N, K]^T in f32 on
// dequantized operands.
func.func @reference(%x: tensor<32x64xbf16>, %w: tensor<48x64xbf16>,
                     %dy: tensor<32x48xbf16>, %c: tensor<32x48xf32>)
    -> (tensor<32x48xf32>, tensor<32x64xf32>, tensor<48x64xf32>,
        tensor<32x48xf32>) {
  %zero = arith.constant 0.0 : f32
  %seed0 = arith.constant 0xE220A8397B1DCDAF : i64
  %seed1 = arith.constant 0x6E789E6AA1B965F4 : i64

  // fprop: X 1x16 RN, W 16x16 RN.
  %qx = nvfp4.quantize %x : tensor<32x64xbf16>
      -> !nvfp4.tensor<32x64xf4E2M1FN, scale = f8E4M3FN, block = 1x16>
  %xh = nvfp4.dequantize %qx : !nvfp4.tensor<32x64xf4E2M1FN, scale = f8E4M3FN, block = 1x16>
      -> tensor<32x64xf32>
  %qw = nvfp4.quantize %w : tensor<48x64xbf16>
      -> !nvfp4.tensor<48x64xf4E2M1FN, scale = f8E4M3FN, block = 16x16>
  %wh = nvfp4.dequantize %qw : !nvfp4.tensor<48x64xf4E2M1FN, scale = f8E4M3FN, block = 16x16>
      -> tensor<48x64xf32>
  %e0 = tensor.empty() : tensor<32x48xf32>
  %y0 = linalg.fill ins(%zero : f32) outs(%e0 : tensor<32x48xf32>) -> tensor<32x48xf32>
  %y = linalg.matmul indexing_maps = [#fprop_lhs, #fprop_rhs, #fprop_out]
      ins(%xh, %wh : tensor<32x64xf32>, tensor<48x64xf32>)
      outs(%y0 : tensor<32x48xf32>) -> tensor<32x48xf32>
  %acc = linalg.matmul indexing_maps = [#fprop_lhs, #fprop_rhs, #fprop_out]
      ins(%xh, %wh : tensor<32x64xf32>, tensor<48x64xf32>)
      outs(%c : tensor<32x48xf32>) -> tensor<32x48xf32>

  // dgrad: dY 1x16 SR (stream 0), W^T 16x16 RN.
  %qdy = nvfp4.quantize %dy rounding<stochastic> seed(%seed0) : tensor<32x48xbf16>
      -> !nvfp4.tensor<32x48xf4E2M1FN, scale = f8E4M3FN, block = 1x16>
  %dyh = nvfp4.dequantize %qdy : !nvfp4.tensor<32x48xf4E2M1FN, scale = f8E4M3FN, block = 1x16>
      -> tensor<32x48xf32>
  %wt = func.call @transpose_48x64(%w) : (tensor<48x64xbf16>) -> tensor<64x48xbf16>
  %qwt = nvfp4.quantize %wt : tensor<64x48xbf16>
      -> !nvfp4.tensor<64x48xf4E2M1FN, scale = f8E4M3FN, block = 16x16>
  %wth = nvfp4.dequantize %qwt : !nvfp4.tensor<64x48xf4E2M1FN, scale = f8E4M3FN, block = 16x16>
      -> tensor<64x48xf32>
  %e1 = tensor.empty() : tensor<32x64xf32>
  %dx0 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<32x64xf32>) -> tensor<32x64xf32>
  %dx = linalg.matmul indexing_maps = [#fprop_lhs, #fprop_rhs, #fprop_out]
      ins(%dyh, %wth : tensor<32x48xf32>, tensor<64x48xf32>)
      outs(%dx0 : tensor<32x64xf32>) -> tensor<32x64xf32>

  // wgrad: dY^T RHT + 1x16 SR (stream 1), X^T RHT + 1x16 RN.
  %dyt = func.call @transpose_32x48(%dy) : (tensor<32x48xbf16>) -> tensor<48x32xbf16>
  %dyr = nvfp4.hadamard %dyt : tensor<48x32xbf16>
  %qdyt = nvfp4.quantize %dyr rounding<stochastic> seed(%seed1) : tensor<48x32xbf16>
      -> !nvfp4.tensor<48x32xf4E2M1FN, scale = f8E4M3FN, block = 1x16>
  %dyth = nvfp4.dequantize %qdyt : !nvfp4.tensor<48x32xf4E2M1FN, scale = f8E4M3FN, block = 1x16>
      -> tensor<48x32xf32>
  %xt = func.call @transpose_32x64(%x) : (tensor<32x64xbf16>) -> tensor<64x32xbf16>
  %xr = nvfp4.hadamard %xt : tensor<64x32xbf16>
  %qxt = nvfp4.quantize %xr : tensor<64x32xbf16>
      -> !nvfp4.tensor<64x32xf4E2M1FN, scale = f8E4M3FN, block = 1x16>
  %xth = nvfp4.dequantize %qxt : !nvfp4.tensor<64x32xf4E2M1FN, scale = f8E4M3FN, block = 1x16>
      -> tensor<64x32xf32>
  %e2 = tensor.empty() : tensor<48x64xf32>
  %dw0 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<48x64xf32>) -> tensor<48x64xf32>
  %dw = linalg.matmul indexing_maps = [#fprop_lhs, #fprop_rhs, #fprop_out]
      ins(%dyth, %xth : tensor<48x32xf32>, tensor<64x32xf32>)
      outs(%dw0 : tensor<48x64xf32>) -> tensor<48x64xf32>
  return %y, %dx, %dw, %acc
      : tensor<32x48xf32>, tensor<32x64xf32>, tensor<48x64xf32>, tensor<32x48xf32>
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

func.func @flat_32x48(%t: tensor<32x48xf32>) -> tensor<?xf32> {
  %f = tensor.collapse_shape %t [[0, 1]] : tensor<32x48xf32> into tensor<1536xf32>
  %d = tensor.cast %f : tensor<1536xf32> to tensor<?xf32>
  return %d : tensor<?xf32>
}

func.func @flat_32x64(%t: tensor<32x64xf32>) -> tensor<?xf32> {
  %f = tensor.collapse_shape %t [[0, 1]] : tensor<32x64xf32> into tensor<2048xf32>
  %d = tensor.cast %f : tensor<2048xf32> to tensor<?xf32>
  return %d : tensor<?xf32>
}

func.func @flat_48x64(%t: tensor<48x64xf32>) -> tensor<?xf32> {
  %f = tensor.collapse_shape %t [[0, 1]] : tensor<48x64xf32> into tensor<3072xf32>
  %d = tensor.cast %f : tensor<3072xf32> to tensor<?xf32>
  return %d : tensor<?xf32>
}

func.func @main() {
  %c32 = arith.constant 32 : index
  %c48 = arith.constant 48 : index
  %c64 = arith.constant 64 : index
  %s0 = arith.constant 0 : i64
  %s1 = arith.constant 4 : i64
  %s2 = arith.constant 9 : i64
  %xd = func.call @data(%c32, %c64, %s0) : (index, index, i64) -> tensor<?x?xbf16>
  %x = tensor.cast %xd : tensor<?x?xbf16> to tensor<32x64xbf16>
  %wd = func.call @data(%c48, %c64, %s1) : (index, index, i64) -> tensor<?x?xbf16>
  %w = tensor.cast %wd : tensor<?x?xbf16> to tensor<48x64xbf16>
  %dyd = func.call @data(%c32, %c48, %s2) : (index, index, i64) -> tensor<?x?xbf16>
  %dy = tensor.cast %dyd : tensor<?x?xbf16> to tensor<32x48xbf16>
  %cd = func.call @data(%c32, %c48, %s1) : (index, index, i64) -> tensor<?x?xbf16>
  %cb = tensor.cast %cd : tensor<?x?xbf16> to tensor<32x48xbf16>
  %c = arith.extf %cb : tensor<32x48xbf16> to tensor<32x48xf32>

  %y, %dx, %dw, %acc = func.call @training_step(%x, %w, %dy, %c)
      : (tensor<32x64xbf16>, tensor<48x64xbf16>, tensor<32x48xbf16>, tensor<32x48xf32>)
      -> (tensor<32x48xf32>, tensor<32x64xf32>, tensor<48x64xf32>, tensor<32x48xf32>)
  %ry, %rdx, %rdw, %racc = func.call @reference(%x, %w, %dy, %c)
      : (tensor<32x64xbf16>, tensor<48x64xbf16>, tensor<32x48xbf16>, tensor<32x48xf32>)
      -> (tensor<32x48xf32>, tensor<32x64xf32>, tensor<48x64xf32>, tensor<32x48xf32>)

  %fy = func.call @flat_32x48(%y) : (tensor<32x48xf32>) -> tensor<?xf32>
  %fry = func.call @flat_32x48(%ry) : (tensor<32x48xf32>) -> tensor<?xf32>
  %ny = func.call @mismatches(%fy, %fry) : (tensor<?xf32>, tensor<?xf32>) -> i32
  vector.print str "fprop mismatches: "
  vector.print %ny : i32
  %fdx = func.call @flat_32x64(%dx) : (tensor<32x64xf32>) -> tensor<?xf32>
  %frdx = func.call @flat_32x64(%rdx) : (tensor<32x64xf32>) -> tensor<?xf32>
  %ndx = func.call @mismatches(%fdx, %frdx) : (tensor<?xf32>, tensor<?xf32>) -> i32
  vector.print str "dgrad mismatches: "
  vector.print %ndx : i32
  %fdw = func.call @flat_48x64(%dw) : (tensor<48x64xf32>) -> tensor<?xf32>
  %frdw = func.call @flat_48x64(%rdw) : (tensor<48x64xf32>) -> tensor<?xf32>
  %ndw = func.call @mismatches(%fdw, %frdw) : (tensor<?xf32>, tensor<?xf32>) -> i32
  vector.print str "wgrad mismatches: "
  vector.print %ndw : i32
  %facc = func.call @flat_32x48(%acc) : (tensor<32x48xf32>) -> tensor<?xf32>
  %fracc = func.call @flat_32x48(%racc) : (tensor<32x48xf32>) -> tensor<?xf32>
  %nacc = func.call @mismatches(%facc, %fracc) : (tensor<?xf32>, tensor<?xf32>) -> i32
  vector.print str "accumulate mismatches: "
  vector.print %nacc : i32
  return
}
