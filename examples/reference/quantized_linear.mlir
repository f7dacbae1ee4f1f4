// A linear layer Y = X * W^T computed three ways on the CPU:
//   1. in FP32 (the exact answer),
//   2. with NVFP4 operands: X with 1x16 blocks, W with 16x16 blocks (the
//      fprop recipe), multiplied by nvfp4.scaled_matmul,
//   3. the same with stochastic rounding on X (the gradient recipe).
// and prints the relative Frobenius error of each NVFP4 result.
//
// Run (scripts/demo.sh does this):
//   nvfp4-opt quantized_linear.mlir --nvfp4-reference-pipeline |
//     mlir-runner -e main -entry-point-result=void \
//       -shared-libs=libmlir_c_runner_utils.so,libmlir_runner_utils.so

!x_q = !nvfp4.tensor<64x256xf4E2M1FN, scale = f8E4M3FN, block = 1x16>
!w_q = !nvfp4.tensor<128x256xf4E2M1FN, scale = f8E4M3FN, block = 16x16>

// Deterministic, non-trivial data: sin(i * a + j * b) * (1 + (i % 7)).
func.func @make_data(%a: f32, %b: f32) -> tensor<?x256xf32> {
  %c0 = arith.constant 0 : index
  %rows = arith.constant 128 : index
  %e = tensor.empty() : tensor<128x256xf32>
  %t = linalg.generic {
      indexing_maps = [affine_map<(i, j) -> (i, j)>],
      iterator_types = ["parallel", "parallel"]} outs(%e : tensor<128x256xf32>) {
  ^bb0(%out: f32):
    %i = linalg.index 0 : index
    %j = linalg.index 1 : index
    %ii = arith.index_cast %i : index to i32
    %jj = arith.index_cast %j : index to i32
    %fi = arith.sitofp %ii : i32 to f32
    %fj = arith.sitofp %jj : i32 to f32
    %x = arith.mulf %fi, %a : f32
    %y = arith.mulf %fj, %b : f32
    %s = arith.addf %x, %y : f32
    %v = math.sin %s : f32
    %c7 = arith.constant 7 : i32
    %m = arith.remsi %ii, %c7 : i32
    %fm = arith.sitofp %m : i32 to f32
    %one = arith.constant 1.0 : f32
    %amp = arith.addf %fm, %one : f32
    %r = arith.mulf %v, %amp : f32
    linalg.yield %r : f32
  } -> tensor<128x256xf32>
  %d = tensor.cast %t : tensor<128x256xf32> to tensor<?x256xf32>
  return %d : tensor<?x256xf32>
}

// || a - b ||_F / || b ||_F
func.func @relative_error(%a: tensor<64x128xf32>, %b: tensor<64x128xf32>) -> f32 {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<f32>
  %init = linalg.fill ins(%z : f32) outs(%e : tensor<f32>) -> tensor<f32>
  %sums:2 = linalg.generic {
      indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>,
                       affine_map<(i, j) -> ()>, affine_map<(i, j) -> ()>],
      iterator_types = ["reduction", "reduction"]}
      ins(%a, %b : tensor<64x128xf32>, tensor<64x128xf32>)
      outs(%init, %init : tensor<f32>, tensor<f32>) {
  ^bb0(%x: f32, %y: f32, %err: f32, %ref: f32):
    %d = arith.subf %x, %y : f32
    %dd = arith.mulf %d, %d : f32
    %yy = arith.mulf %y, %y : f32
    %e1 = arith.addf %err, %dd : f32
    %r1 = arith.addf %ref, %yy : f32
    linalg.yield %e1, %r1 : f32, f32
  } -> (tensor<f32>, tensor<f32>)
  %num = tensor.extract %sums#0[] : tensor<f32>
  %den = tensor.extract %sums#1[] : tensor<f32>
  %q = arith.divf %num, %den : f32
  %r = math.sqrt %q : f32
  return %r : f32
}

func.func @main() {
  %a = arith.constant 0.37 : f32
  %b = arith.constant 0.11 : f32
  %c = arith.constant 0.23 : f32
  %d = arith.constant 0.05 : f32
  %xd = call @make_data(%a, %b) : (f32, f32) -> tensor<?x256xf32>
  %wd = call @make_data(%c, %d) : (f32, f32) -> tensor<?x256xf32>
  %x32 = tensor.extract_slice %xd[0, 0] [64, 256] [1, 1] : tensor<?x256xf32> to tensor<64x256xf32>
  %w32 = tensor.cast %wd : tensor<?x256xf32> to tensor<128x256xf32>
  // NVFP4 inputs are BF16 values.
  %x = arith.truncf %x32 : tensor<64x256xf32> to tensor<64x256xbf16>
  %w = arith.truncf %w32 : tensor<128x256xf32> to tensor<128x256xbf16>

  // 1. FP32 reference on the same BF16 inputs.
  %xf = arith.extf %x : tensor<64x256xbf16> to tensor<64x256xf32>
  %wf = arith.extf %w : tensor<128x256xbf16> to tensor<128x256xf32>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<64x128xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<64x128xf32>) -> tensor<64x128xf32>
  %ref = linalg.matmul indexing_maps = [
      affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>,
      affine_map<(m, n, k) -> (m, n)>]
      ins(%xf, %wf : tensor<64x256xf32>, tensor<128x256xf32>)
      outs(%acc : tensor<64x128xf32>) -> tensor<64x128xf32>

  // 2. NVFP4, round to nearest even.
  %xq = nvfp4.quantize %x : tensor<64x256xbf16> -> !x_q
  %wq = nvfp4.quantize %w : tensor<128x256xbf16> -> !w_q
  %y = nvfp4.scaled_matmul %xq, %wq role<fprop> : !x_q, !w_q -> tensor<64x128xf32>
  %err_rn = call @relative_error(%y, %ref) : (tensor<64x128xf32>, tensor<64x128xf32>) -> f32

  // 3. NVFP4 with stochastic rounding of X (seeded: reproducible).
  %seed = arith.constant 2026 : i64
  %xs = nvfp4.quantize %x rounding<stochastic> seed(%seed) : tensor<64x256xbf16> -> !x_q
  %ys = nvfp4.scaled_matmul %xs, %wq : !x_q, !w_q -> tensor<64x128xf32>
  %err_sr = call @relative_error(%ys, %ref) : (tensor<64x128xf32>, tensor<64x128xf32>) -> f32

  vector.print str "Y = X * W^T, X: 64x256 (1x16 blocks), W: 128x256 (16x16 blocks)\n"
  vector.print str "relative error, NVFP4 round-to-nearest: "
  vector.print %err_rn : f32
  vector.print str "relative error, NVFP4 stochastic X:     "
  vector.print %err_sr : f32
  return
}
