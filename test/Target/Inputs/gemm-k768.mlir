// One 256x384x768 GEMM (6 tiles of 128 x 128, one 768-code K group) for
// schedules forced on sm_103a (tcgen05-gemm-persistent.test).
!a = !nvfp4.tensor<256x768xf4E2M1FN, scale = f8E4M3FN, block = 1x16>
!b = !nvfp4.tensor<384x768xf4E2M1FN, scale = f8E4M3FN, block = 16x16, layout = swizzled_128x4>
func.func @k768(%a: !a, %b: !b) -> tensor<256x384xbf16> {
  %y = nvfp4.scaled_matmul %a, %b : !a, !b -> tensor<256x384xbf16>
  return %y : tensor<256x384xbf16>
}
