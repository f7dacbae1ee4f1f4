// One training step of a linear layer Y = X W^T (no bias), as a frontend
// hands it to nvfp4: the three GEMMs of the step on 2048 tokens, with the
// weight argument marked `{nvfp4.weight}` and each GEMM's role annotated.
//
//   fprop  Y  = X  W^T    [T, out] = [T, in]  x [out, in]^T
//   dgrad  dX = dY W      [T, in]  = [T, out] x [out, in]
//   wgrad  dW = dY^T X    [out, in] = [T, out]^T x [T, in]
//
// nvfp4-assign-precision marks all three NVFP4 when the layer is not among
// the first or last blocks; nvfp4-apply-recipe then quantizes X and W (16x16)
// with round-to-nearest for fprop, dY stochastically for dgrad, and dY^T and
// X^T after the Random Hadamard Transform along the tokens for wgrad;
// nvfp4-fuse-quantization then quantizes W once for fprop and dgrad, and X
// and dY once each for both of their uses (nvfp4.dual_quantize: one read).
//
//   nvfp4-opt examples/linear_training_step.mlir \
//     --nvfp4-assign-precision='keep-first=0 keep-last=0' \
//     --nvfp4-apply-recipe --nvfp4-fuse-quantization

#fprop_lhs = affine_map<(t, o, i) -> (t, i)>
#fprop_rhs = affine_map<(t, o, i) -> (o, i)>
#fprop_out = affine_map<(t, o, i) -> (t, o)>
#wgrad_lhs = affine_map<(o, i, t) -> (t, o)>
#wgrad_rhs = affine_map<(o, i, t) -> (t, i)>
#wgrad_out = affine_map<(o, i, t) -> (o, i)>

func.func @linear_training_step(
    %x: tensor<2048x4096xbf16>,
    %w: tensor<4096x4096xbf16> {nvfp4.weight},
    %dy: tensor<2048x4096xbf16>)
    -> (tensor<2048x4096xbf16>, tensor<2048x4096xbf16>, tensor<4096x4096xbf16>) {
  %zero = arith.constant 0.0 : bf16
  %act_init = tensor.empty() : tensor<2048x4096xbf16>
  %act_zero = linalg.fill ins(%zero : bf16) outs(%act_init : tensor<2048x4096xbf16>) -> tensor<2048x4096xbf16>
  %w_init = tensor.empty() : tensor<4096x4096xbf16>
  %w_zero = linalg.fill ins(%zero : bf16) outs(%w_init : tensor<4096x4096xbf16>) -> tensor<4096x4096xbf16>

  // fprop: Y = X W^T.
  %y = linalg.matmul
      indexing_maps = [#fprop_lhs, #fprop_rhs, #fprop_out] {nvfp4.layer = 3 : i64, nvfp4.kind = "ffn", nvfp4.role = "fprop"}
      ins(%x, %w : tensor<2048x4096xbf16>, tensor<4096x4096xbf16>)
      outs(%act_zero : tensor<2048x4096xbf16>) -> tensor<2048x4096xbf16>

  // dgrad: dX = dY W.
  %dx = linalg.matmul {nvfp4.layer = 3 : i64, nvfp4.kind = "ffn", nvfp4.role = "dgrad"}
      ins(%dy, %w : tensor<2048x4096xbf16>, tensor<4096x4096xbf16>)
      outs(%act_zero : tensor<2048x4096xbf16>) -> tensor<2048x4096xbf16>

  // wgrad: dW = dY^T X, a contraction over the 2048 tokens.
  %dw = linalg.matmul
      indexing_maps = [#wgrad_lhs, #wgrad_rhs, #wgrad_out] {nvfp4.layer = 3 : i64, nvfp4.kind = "ffn", nvfp4.role = "wgrad"}
      ins(%dy, %x : tensor<2048x4096xbf16>, tensor<2048x4096xbf16>)
      outs(%w_zero : tensor<4096x4096xbf16>) -> tensor<4096x4096xbf16>

  return %y, %dx, %dw : tensor<2048x4096xbf16>, tensor<2048x4096xbf16>, tensor<4096x4096xbf16>
}
