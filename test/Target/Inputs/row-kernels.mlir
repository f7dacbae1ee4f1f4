// Row kernels of three kinds for ptxas (row-kernels.test): softmax over
// rows of 16384 BF16 (a block a row, registers), RMSNorm over rows of 4096
// (a block of 128 a row) and a normalization over rows of 65536 f32 (rows
// read again per phase).
func.func @rows(%sc: tensor<2x4x16384xbf16>, %x: tensor<16x4096xbf16>, %w: tensor<4096xbf16>, %lx: tensor<4x65536xf32>)
    -> (tensor<2x4x16384xbf16>, tensor<16x4096xbf16>, tensor<4x65536xf32>) {
  %s_ninf = arith.constant 0xFF800000 : f32
  %s_zero = arith.constant 0.0 : f32
  %s_e = tensor.empty() : tensor<2x4xf32>
  %s_mf = linalg.fill ins(%s_ninf : f32) outs(%s_e : tensor<2x4xf32>) -> tensor<2x4xf32>
  %s_max = linalg.generic {indexing_maps = [affine_map<(h, i, j) -> (h, i, j)>, affine_map<(h, i, j) -> (h, i)>],
                         iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%sc : tensor<2x4x16384xbf16>) outs(%s_mf : tensor<2x4xf32>) {
  ^bb0(%in: bf16, %acc: f32):
    %v = arith.extf %in : bf16 to f32
    %m = arith.maximumf %acc, %v : f32
    linalg.yield %m : f32
  } -> tensor<2x4xf32>
  %s_sf = linalg.fill ins(%s_zero : f32) outs(%s_e : tensor<2x4xf32>) -> tensor<2x4xf32>
  %s_sum = linalg.generic {indexing_maps = [affine_map<(h, i, j) -> (h, i, j)>, affine_map<(h, i, j) -> (h, i)>, affine_map<(h, i, j) -> (h, i)>],
                         iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%sc, %s_max : tensor<2x4x16384xbf16>, tensor<2x4xf32>) outs(%s_sf : tensor<2x4xf32>) {
  ^bb0(%in: bf16, %mx: f32, %acc: f32):
    %v = arith.extf %in : bf16 to f32
    %d = arith.subf %v, %mx : f32
    %p = math.exp %d : f32
    %r = arith.addf %acc, %p : f32
    linalg.yield %r : f32
  } -> tensor<2x4xf32>
  %s_o = tensor.empty() : tensor<2x4x16384xbf16>
  %s_y = linalg.generic {indexing_maps = [affine_map<(h, i, j) -> (h, i, j)>, affine_map<(h, i, j) -> (h, i)>, affine_map<(h, i, j) -> (h, i)>, affine_map<(h, i, j) -> (h, i, j)>],
                       iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%sc, %s_max, %s_sum : tensor<2x4x16384xbf16>, tensor<2x4xf32>, tensor<2x4xf32>) outs(%s_o : tensor<2x4x16384xbf16>) {
  ^bb0(%in: bf16, %mx: f32, %total: f32, %out: bf16):
    %v = arith.extf %in : bf16 to f32
    %d = arith.subf %v, %mx : f32
    %p = math.exp %d : f32
    %q = arith.divf %p, %total : f32
    %t = arith.truncf %q : f32 to bf16
    linalg.yield %t : bf16
  } -> tensor<2x4x16384xbf16>
  %r_zero = arith.constant 0.0 : f32
  %r_n = arith.constant 4096.0 : f32
  %r_eps = arith.constant 1.0e-05 : f32
  %r_e = tensor.empty() : tensor<16xf32>
  %r_z = linalg.fill ins(%r_zero : f32) outs(%r_e : tensor<16xf32>) -> tensor<16xf32>
  %r_sum = linalg.generic {indexing_maps = [affine_map<(t, c) -> (t, c)>, affine_map<(t, c) -> (t)>],
                         iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<16x4096xbf16>) outs(%r_z : tensor<16xf32>) {
  ^bb0(%in: bf16, %acc: f32):
    %v = arith.extf %in : bf16 to f32
    %sq = arith.mulf %v, %v : f32
    %s = arith.addf %acc, %sq : f32
    linalg.yield %s : f32
  } -> tensor<16xf32>
  %r_o = tensor.empty() : tensor<16x4096xbf16>
  %r_y = linalg.generic {indexing_maps = [affine_map<(t, c) -> (t, c)>, affine_map<(t, c) -> (t)>,
                                        affine_map<(t, c) -> (c)>, affine_map<(t, c) -> (t, c)>],
                       iterator_types = ["parallel", "parallel"]}
      ins(%x, %r_sum, %w : tensor<16x4096xbf16>, tensor<16xf32>, tensor<4096xbf16>) outs(%r_o : tensor<16x4096xbf16>) {
  ^bb0(%in: bf16, %s: f32, %g: bf16, %out: bf16):
    %mean = arith.divf %s, %r_n : f32
    %var = arith.addf %mean, %r_eps : f32
    %r = math.rsqrt %var : f32
    %v = arith.extf %in : bf16 to f32
    %gv = arith.extf %g : bf16 to f32
    %a = arith.mulf %v, %r : f32
    %b = arith.mulf %a, %gv : f32
    %t = arith.truncf %b : f32 to bf16
    linalg.yield %t : bf16
  } -> tensor<16x4096xbf16>
  %l_zero = arith.constant 0.0 : f32
  %l_e = tensor.empty() : tensor<4xf32>
  %l_z = linalg.fill ins(%l_zero : f32) outs(%l_e : tensor<4xf32>) -> tensor<4xf32>
  %l_sum = linalg.generic {indexing_maps = [affine_map<(t, c) -> (t, c)>, affine_map<(t, c) -> (t)>],
                         iterator_types = ["parallel", "reduction"]}
      ins(%lx : tensor<4x65536xf32>) outs(%l_z : tensor<4xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %sq = arith.mulf %in, %in : f32
    %s = arith.addf %acc, %sq : f32
    linalg.yield %s : f32
  } -> tensor<4xf32>
  %l_o = tensor.empty() : tensor<4x65536xf32>
  %l_y = linalg.generic {indexing_maps = [affine_map<(t, c) -> (t, c)>, affine_map<(t, c) -> (t)>, affine_map<(t, c) -> (t, c)>],
                       iterator_types = ["parallel", "parallel"]}
      ins(%lx, %l_sum : tensor<4x65536xf32>, tensor<4xf32>) outs(%l_o : tensor<4x65536xf32>) {
  ^bb0(%in: f32, %s: f32, %out: f32):
    %r = math.rsqrt %s : f32
    %q = arith.mulf %in, %r : f32
    linalg.yield %q : f32
  } -> tensor<4x65536xf32>
  return %s_y, %r_y, %l_y : tensor<2x4x16384xbf16>, tensor<16x4096xbf16>, tensor<4x65536xf32>
}
