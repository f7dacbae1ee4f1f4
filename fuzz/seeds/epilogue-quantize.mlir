// A GEMM whose output is quantized with a static amax (an argument):
// nvfp4-compile's fuse-epilogue-quantization makes it one
// nvfp4.scaled_matmul_quantize; the second one is written as such, with an
// f32 intermediate and alpha (K = 256: tensor cores; K = 48: SIMT).
!a = !nvfp4.tensor<64x256xf4E2M1FN, scale = f8E4M3FN, block = 1x16>
!w = !nvfp4.tensor<48x256xf4E2M1FN, scale = f8E4M3FN, block = 16x16>
!c = !nvfp4.tensor<64x48xf4E2M1FN, scale = f8E4M3FN, block = 1x16>
!v = !nvfp4.tensor<32x48xf4E2M1FN, scale = f8E4M3FN, block = 16x16>
func.func @static_amax(%x: !a, %w: !w, %v: !v, %g: f32, %al: f32) -> (tensor<64x32xbf16>, !c) {
  %c = nvfp4.scaled_matmul %x, %w : !a, !w -> tensor<64x48xbf16>
  %q = nvfp4.quantize %c amax(%g) : tensor<64x48xbf16> -> !c
  %d = nvfp4.scaled_matmul %q, %v : !c, !v -> tensor<64x32xbf16>
  %q2 = nvfp4.scaled_matmul_quantize %x, %w amax(%g) alpha(%al) {intermediate = f32} : !a, !w -> !c
  return %d, %q2 : tensor<64x32xbf16>, !c
}
