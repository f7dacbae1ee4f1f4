// A decode-like GEMM: 16 tokens through a 2304x1024 weight (1x16
// activations, 16x16 weight). 144 tiles of 16 weight rows fill the H200's
// 132 SMs, so the lowering picks the skinny kernel.
!a = !nvfp4.tensor<16x1024xf4E2M1FN, scale = f8E4M3FN, block = 1x16>
!b = !nvfp4.tensor<2304x1024xf4E2M1FN, scale = f8E4M3FN, block = 16x16>
func.func @decode(%a: !a, %b: !b) -> tensor<16x2304xbf16> {
  %c = nvfp4.scaled_matmul %a, %b : !a, !b -> tensor<16x2304xbf16>
  return %c : tensor<16x2304xbf16>
}
