// K = 272 is not a multiple of the pipeline's 256-wide K step.
!t = !nvfp4.tensor<64x272xf4E2M1FN, scale = f8E4M3FN, block = 1x16>
func.func @gemm(%a: tensor<64x272xbf16>, %b: tensor<64x272xbf16>) -> tensor<64x64xf32> {
  %qa = nvfp4.quantize %a : tensor<64x272xbf16> -> !t
  %qb = nvfp4.quantize %b : tensor<64x272xbf16> -> !t
  %c = nvfp4.scaled_matmul %qa, %qb : !t, !t -> tensor<64x64xf32>
  return %c : tensor<64x64xf32>
}
