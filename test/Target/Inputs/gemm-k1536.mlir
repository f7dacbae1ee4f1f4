// K = 1536 (a multiple of 768): sm_103a's rule takes the K = 96 MMA; M and
// N are not multiples of the 128 x 128 tile. @k1280 (a multiple of 256 but
// not of 768) keeps the K = 64 MMA.
!a = !nvfp4.tensor<200x1536xf4E2M1FN, scale = f8E4M3FN, block = 1x16>
!b = !nvfp4.tensor<272x1536xf4E2M1FN, scale = f8E4M3FN, block = 16x16, layout = swizzled_128x4>
!c = !nvfp4.tensor<128x1280xf4E2M1FN, scale = f8E4M3FN, block = 1x16>
func.func @k1536(%x: tensor<200x1536xbf16>, %w: tensor<272x1536xbf16>) -> tensor<200x272xbf16> {
  %xq = nvfp4.quantize %x : tensor<200x1536xbf16> -> !a
  %wq = nvfp4.quantize %w : tensor<272x1536xbf16> -> !b
  %y = nvfp4.scaled_matmul %xq, %wq role<fprop> : !a, !b -> tensor<200x272xbf16>
  return %y : tensor<200x272xbf16>
}
func.func @k1280(%u: tensor<128x1280xbf16>) -> tensor<128x128xf32> {
  %uq = nvfp4.quantize %u : tensor<128x1280xbf16> -> !c
  %z = nvfp4.scaled_matmul %uq, %uq : !c, !c -> tensor<128x128xf32>
  return %z : tensor<128x128xf32>
}
