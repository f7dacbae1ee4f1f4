// gemm-decode.mlir with a 1x16-blocked weight (a scale per row and 16 K).
!a = !nvfp4.tensor<16x1024xf4E2M1FN, scale = f8E4M3FN, block = 1x16>
!b = !nvfp4.tensor<2304x1024xf4E2M1FN, scale = f8E4M3FN, block = 1x16>
func.func @decode(%a: !a, %b: !b) -> tensor<16x2304xbf16> {
  %c = nvfp4.scaled_matmul %a, %b : !a, !b -> tensor<16x2304xbf16>
  return %c : tensor<16x2304xbf16>
}
