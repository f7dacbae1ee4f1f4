// K = 512, batch 2, both operands quantized on the device with swizzled
// 128x4 scales (A: 1x16 blocks, B: 16x16 tiles, stochastic rounding for A),
// M and N not multiples of the 128 x 128 tile, BF16 out.
!a = !nvfp4.tensor<2x40x512xf4E2M1FN, scale = f8E4M3FN, block = 1x16, layout = swizzled_128x4>
!b = !nvfp4.tensor<2x48x512xf4E2M1FN, scale = f8E4M3FN, block = 16x16, layout = swizzled_128x4>
func.func @gemm(%x: tensor<2x40x512xbf16>, %w: tensor<2x48x512xbf16>, %s: i64) -> tensor<2x40x48xbf16> {
  %xq = nvfp4.quantize %x rounding<stochastic> seed(%s) : tensor<2x40x512xbf16> -> !a
  %wq = nvfp4.quantize %w : tensor<2x48x512xbf16> -> !b
  %y = nvfp4.scaled_matmul %xq, %wq role<wgrad> : !a, !b -> tensor<2x40x48xbf16>
  return %y : tensor<2x40x48xbf16>
}
