// Two GEMMs side by side: K = 768 (tensor cores, 1x16 linear scales on both
// sides, f32 out) and K = 272 (not a multiple of 256: the SIMT kernel).
!a = !nvfp4.tensor<128x768xf4E2M1FN, scale = f8E4M3FN, block = 1x16>
!b = !nvfp4.tensor<32x768xf4E2M1FN, scale = f8E4M3FN, block = 1x16>
!c = !nvfp4.tensor<16x272xf4E2M1FN, scale = f8E4M3FN, block = 1x16>
func.func @gemms(%a: !a, %b: !b, %c: !c) -> (tensor<128x32xf32>, tensor<16x16xf32>) {
  %y = nvfp4.scaled_matmul %a, %b role<dgrad> : !a, !b -> tensor<128x32xf32>
  %z = nvfp4.scaled_matmul %c, %c : !c, !c -> tensor<16x16xf32>
  return %y, %z : tensor<128x32xf32>, tensor<16x16xf32>
}
