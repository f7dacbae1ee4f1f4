func.func @backward(%dy: tensor<256x128xbf16>, %wt: tensor<64x128xbf16> {nvfp4.weight}, %dyt: tensor<128x256xbf16>, %xt: tensor<64x256xbf16>, %seed: i64) -> (tensor<256x64xbf16>, tensor<128x64xbf16>) {
  %zero = arith.constant 0.0 : bf16
  %e0 = tensor.empty() : tensor<256x64xbf16>
  %z0 = linalg.fill ins(%zero : bf16) outs(%e0 : tensor<256x64xbf16>) -> tensor<256x64xbf16>
  %e1 = tensor.empty() : tensor<128x64xbf16>
  %z1 = linalg.fill ins(%zero : bf16) outs(%e1 : tensor<128x64xbf16>) -> tensor<128x64xbf16>
  %dx = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>] {nvfp4.layer = 0 : i64, nvfp4.kind = "ffn", nvfp4.role = "dgrad"}
      ins(%dy, %wt : tensor<256x128xbf16>, tensor<64x128xbf16>) outs(%z0 : tensor<256x64xbf16>) -> tensor<256x64xbf16>
  %dw = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>] {nvfp4.layer = 0 : i64, nvfp4.kind = "ffn", nvfp4.role = "wgrad"}
      ins(%dyt, %xt : tensor<128x256xbf16>, tensor<64x256xbf16>) outs(%z1 : tensor<128x64xbf16>) -> tensor<128x64xbf16>
  return %dx, %dw : tensor<256x64xbf16>, tensor<128x64xbf16>
}
