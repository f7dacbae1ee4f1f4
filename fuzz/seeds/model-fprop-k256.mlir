// Model IR: an FFN fprop GEMM with K = 256 that the recipe turns into
// quantize + scaled_matmul (the graph passes run before the GPU lowering).
#lhs = affine_map<(m, n, k) -> (m, k)>
#rhs_t = affine_map<(m, n, k) -> (n, k)>
#out = affine_map<(m, n, k) -> (m, n)>
func.func @fprop(%x: tensor<32x256xbf16>, %w: tensor<64x256xbf16> {nvfp4.weight})
    -> tensor<32x64xbf16> {
  %zero = arith.constant 0.0 : bf16
  %e = tensor.empty() : tensor<32x64xbf16>
  %init = linalg.fill ins(%zero : bf16) outs(%e : tensor<32x64xbf16>) -> tensor<32x64xbf16>
  %y = linalg.matmul indexing_maps = [#lhs, #rhs_t, #out]
      {nvfp4.layer = 4 : i64, nvfp4.kind = "ffn", nvfp4.role = "fprop", nvfp4.precision = "nvfp4"}
      ins(%x, %w : tensor<32x256xbf16>, tensor<64x256xbf16>)
      outs(%init : tensor<32x64xbf16>) -> tensor<32x64xbf16>
  return %y : tensor<32x64xbf16>
}
