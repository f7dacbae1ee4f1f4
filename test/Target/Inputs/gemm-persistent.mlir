// GEMMs with more 128 x 128 tiles than B200 (148) or GB300 (160) has SMs:
// the sm_100a/sm_103a rule takes the persistent kernel with two TMEM
// accumulator stages. @k1536 (K a multiple of 768) takes the K = 96 MMA on
// sm_103a as well; both have ragged M and N, @amax also C's amax.
!a = !nvfp4.tensor<2000x1024xf4E2M1FN, scale = f8E4M3FN, block = 1x16>
!b = !nvfp4.tensor<1808x1024xf4E2M1FN, scale = f8E4M3FN, block = 16x16, layout = swizzled_128x4>
!c = !nvfp4.tensor<1600x1536xf4E2M1FN, scale = f8E4M3FN, block = 1x16>
!d = !nvfp4.tensor<2176x1536xf4E2M1FN, scale = f8E4M3FN, block = 16x16>
func.func @amax(%a: !a, %b: !b) -> (tensor<2000x1808xbf16>, f32) {
  %y, %amax = nvfp4.scaled_matmul %a, %b : !a, !b -> tensor<2000x1808xbf16>, f32
  return %y, %amax : tensor<2000x1808xbf16>, f32
}
func.func @k1536(%c: !c, %d: !d) -> tensor<1600x2176xf32> {
  %y = nvfp4.scaled_matmul %c, %d : !c, !d -> tensor<1600x2176xf32>
  return %y : tensor<1600x2176xf32>
}
