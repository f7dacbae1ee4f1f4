// An MXFP8 attention projection whose output an NVFP4 FFN layer reads: the
// model IR of test/Target/mx-gemm-amax.test (formats=attention=mxfp8,ffn=nvfp4).
func.func @chain(%x: tensor<256x512xbf16>, %w1: tensor<512x512xbf16> {nvfp4.weight}, %w2: tensor<1024x512xbf16> {nvfp4.weight}) -> tensor<256x1024xbf16> {
  %zero = arith.constant 0.0 : bf16
  %e1 = tensor.empty() : tensor<256x512xbf16>
  %z1 = linalg.fill ins(%zero : bf16) outs(%e1 : tensor<256x512xbf16>) -> tensor<256x512xbf16>
  %y1 = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>]
      {nvfp4.layer = 0 : i64, nvfp4.kind = "attention", nvfp4.role = "fprop"}
      ins(%x, %w1 : tensor<256x512xbf16>, tensor<512x512xbf16>) outs(%z1 : tensor<256x512xbf16>) -> tensor<256x512xbf16>
  %e2 = tensor.empty() : tensor<256x1024xbf16>
  %z2 = linalg.fill ins(%zero : bf16) outs(%e2 : tensor<256x1024xbf16>) -> tensor<256x1024xbf16>
  %y2 = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>]
      {nvfp4.layer = 0 : i64, nvfp4.kind = "ffn", nvfp4.role = "fprop"}
      ins(%y1, %w2 : tensor<256x512xbf16>, tensor<1024x512xbf16>) outs(%z2 : tensor<256x1024xbf16>) -> tensor<256x1024xbf16>
  return %y2 : tensor<256x1024xbf16>
}
