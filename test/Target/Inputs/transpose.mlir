// A batched 16x16 weight quantization and its transpose (the dgrad copy),
// dequantized so that the result leaves as a plain tensor.
!w = !nvfp4.tensor<2x64x256xf4E2M1FN, scale = f8E4M3FN, block = 16x16>
!wt = !nvfp4.tensor<2x256x64xf4E2M1FN, scale = f8E4M3FN, block = 16x16>
func.func @transpose(%w: tensor<2x64x256xbf16>) -> tensor<2x256x64xbf16> {
  %wq = nvfp4.quantize %w : tensor<2x64x256xbf16> -> !w
  %wt = nvfp4.transpose %wq : !w -> !wt
  %d = nvfp4.dequantize %wt : !wt -> tensor<2x256x64xbf16>
  return %d : tensor<2x256x64xbf16>
}
