// One GEMM with C's amax, ragged M and N and swizzled 128x4 B scales (a
// --report manifest describes one host function).
!a = !nvfp4.tensor<2000x1024xf4E2M1FN, scale = f8E4M3FN, block = 1x16>
!b = !nvfp4.tensor<1808x1024xf4E2M1FN, scale = f8E4M3FN, block = 16x16, layout = swizzled_128x4>
func.func @amax(%a: !a, %b: !b) -> (tensor<2000x1808xbf16>, f32) {
  %y, %amax = nvfp4.scaled_matmul %a, %b : !a, !b -> tensor<2000x1808xbf16>, f32
  return %y, %amax : tensor<2000x1808xbf16>, f32
}
