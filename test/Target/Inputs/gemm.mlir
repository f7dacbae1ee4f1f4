// fprop of a 256x1024 activation with a 512x1024 weight (the recipe: 1x16
// activations, 16x16 weights), as in the Blackwell codegen issue.
!a = !nvfp4.tensor<256x1024xf4E2M1FN, scale = f8E4M3FN, block = 1x16>
!b = !nvfp4.tensor<512x1024xf4E2M1FN, scale = f8E4M3FN, block = 16x16, layout = swizzled_128x4>
func.func @gemm(%x: tensor<256x1024xbf16>, %w: tensor<512x1024xbf16>) -> tensor<256x512xbf16> {
  %xq = nvfp4.quantize %x : tensor<256x1024xbf16> -> !a
  %wq = nvfp4.quantize %w : tensor<512x1024xbf16> -> !b
  %y = nvfp4.scaled_matmul %xq, %wq role<fprop> : !a, !b -> tensor<256x512xbf16>
  return %y : tensor<256x512xbf16>
}
