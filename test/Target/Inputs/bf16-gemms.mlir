// BF16 GEMMs of the shapes the per-chip BF16 GEMM (BF16Gemm.cpp) plans
// differently: attention BMMs (batched, B as [b, n, k] and as [b, k, n]),
// a ragged GEMM (M = 200, N = 60: no TMA store for BF16 C; K = 72 padded
// by the tensor maps), a GEMM with more tiles than SMs (persistent on
// tcgen05) and one with an FP32 C and B stored [k, n]; all kept in BF16
// by their nvfp4.precision.
func.func @bf16_gemms(%q: tensor<4x128x128xbf16>, %k: tensor<4x128x128xbf16>,
                      %v: tensor<4x128x128xbf16>, %a: tensor<200x72xbf16>,
                      %b: tensor<60x72xbf16>, %x: tensor<2048x4096xbf16>,
                      %w: tensor<4096x4096xbf16>, %y: tensor<128x4096xbf16>,
                      %wkn: tensor<4096x1000xbf16>)
    -> (tensor<4x128x128xbf16>, tensor<4x128x128xf32>, tensor<200x60xbf16>,
        tensor<2048x4096xbf16>, tensor<128x1000xf32>) {
  %zero = arith.constant 0.0 : bf16
  %zf = arith.constant 0.0 : f32
  %e0 = tensor.empty() : tensor<4x128x128xbf16>
  %z0 = linalg.fill ins(%zero : bf16) outs(%e0 : tensor<4x128x128xbf16>) -> tensor<4x128x128xbf16>
  %s = linalg.batch_matmul indexing_maps = [affine_map<(b, m, n, k) -> (b, m, k)>, affine_map<(b, m, n, k) -> (b, n, k)>, affine_map<(b, m, n, k) -> (b, m, n)>]
      ins(%q, %k : tensor<4x128x128xbf16>, tensor<4x128x128xbf16>) outs(%z0 : tensor<4x128x128xbf16>) {nvfp4.precision = "bf16"} -> tensor<4x128x128xbf16>
  %e1 = tensor.empty() : tensor<4x128x128xf32>
  %o = linalg.batch_matmul ins(%s, %v : tensor<4x128x128xbf16>, tensor<4x128x128xbf16>) outs(%e1 : tensor<4x128x128xf32>) {nvfp4.precision = "bf16"} -> tensor<4x128x128xf32>
  %e2 = tensor.empty() : tensor<200x60xbf16>
  %z2 = linalg.fill ins(%zero : bf16) outs(%e2 : tensor<200x60xbf16>) -> tensor<200x60xbf16>
  %r = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>]
      ins(%a, %b : tensor<200x72xbf16>, tensor<60x72xbf16>) outs(%z2 : tensor<200x60xbf16>) {nvfp4.precision = "bf16"} -> tensor<200x60xbf16>
  %e3 = tensor.empty() : tensor<2048x4096xbf16>
  %l = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>]
      ins(%x, %w : tensor<2048x4096xbf16>, tensor<4096x4096xbf16>) outs(%e3 : tensor<2048x4096xbf16>) {nvfp4.precision = "bf16"} -> tensor<2048x4096xbf16>
  %e4 = tensor.empty() : tensor<128x1000xf32>
  %z4 = linalg.fill ins(%zf : f32) outs(%e4 : tensor<128x1000xf32>) -> tensor<128x1000xf32>
  %f = linalg.matmul ins(%y, %wkn : tensor<128x4096xbf16>, tensor<4096x1000xbf16>) outs(%z4 : tensor<128x1000xf32>) {nvfp4.precision = "bf16"} -> tensor<128x1000xf32>
  return %s, %o, %r, %l, %f : tensor<4x128x128xbf16>, tensor<4x128x128xf32>, tensor<200x60xbf16>, tensor<2048x4096xbf16>, tensor<128x1000xf32>
}
