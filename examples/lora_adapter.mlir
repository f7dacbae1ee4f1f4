// The forward pass of a low-rank adapter (LoRA) on a 4096-wide layer with
// rank 256, on 2048 tokens: H = X A^T, then Y = H B^T. Both GEMMs go to NVFP4,
// and the second one's activation operand is the first one's output -- the
// case nvfp4-fuse-quantization's fuse-output-amax is for: the first GEMM
// computes the amax of H in its epilogue (while the values are in
// registers), so quantizing H for the second GEMM needs no amax pass over
// it. (The whole quantization cannot move into the epilogue: its tensor
// scale depends on the amax of all of H.)
//
//   nvfp4-opt examples/lora_adapter.mlir \
//     --nvfp4-assign-precision='keep-first=0 keep-last=0' \
//     --nvfp4-apply-recipe --nvfp4-fuse-quantization=report-counts=true
//   nvfp4-compile examples/lora_adapter.mlir --chip=sm_103a --keep-first=0 \
//     --keep-last=0 -o lora.ptx --report=lora.json

#lhs = affine_map<(t, o, i) -> (t, i)>
#rhs = affine_map<(t, o, i) -> (o, i)>
#out = affine_map<(t, o, i) -> (t, o)>

func.func @lora_adapter(
    %x: tensor<2048x4096xbf16>,
    %a: tensor<256x4096xbf16> {nvfp4.weight},
    %b: tensor<4096x256xbf16> {nvfp4.weight}) -> tensor<2048x4096xbf16> {
  %zero = arith.constant 0.0 : bf16
  %h_init = tensor.empty() : tensor<2048x256xbf16>
  %h_zero = linalg.fill ins(%zero : bf16) outs(%h_init : tensor<2048x256xbf16>) -> tensor<2048x256xbf16>
  %y_init = tensor.empty() : tensor<2048x4096xbf16>
  %y_zero = linalg.fill ins(%zero : bf16) outs(%y_init : tensor<2048x4096xbf16>) -> tensor<2048x4096xbf16>

  // Down-projection to the rank: H = X A^T.
  %h = linalg.matmul
      indexing_maps = [#lhs, #rhs, #out] {nvfp4.layer = 5 : i64, nvfp4.kind = "ffn", nvfp4.role = "fprop"}
      ins(%x, %a : tensor<2048x4096xbf16>, tensor<256x4096xbf16>)
      outs(%h_zero : tensor<2048x256xbf16>) -> tensor<2048x256xbf16>

  // Up-projection: Y = H B^T, contracting over the rank.
  %y = linalg.matmul
      indexing_maps = [#lhs, #rhs, #out] {nvfp4.layer = 5 : i64, nvfp4.kind = "ffn", nvfp4.role = "fprop"}
      ins(%h, %b : tensor<2048x256xbf16>, tensor<4096x256xbf16>)
      outs(%y_zero : tensor<2048x4096xbf16>) -> tensor<2048x4096xbf16>

  return %y : tensor<2048x4096xbf16>
}
