// The fused forms nvfp4-fuse-quantization creates: an RHT folded into an
// amax and a stochastic quantization, and a GEMM returning its output amax
// to the quantization that feeds the next GEMM (K = 256: tensor cores).
!a = !nvfp4.tensor<32x256xf4E2M1FN, scale = f8E4M3FN, block = 1x16>
!w = !nvfp4.tensor<256x256xf4E2M1FN, scale = f8E4M3FN, block = 16x16>
!h = !nvfp4.tensor<32x256xf4E2M1FN, scale = f8E4M3FN, block = 1x16>
func.func @chain(%x: tensor<32x256xbf16>, %w: !w, %v: !w, %s: i64) -> (tensor<32x256xf32>, f32) {
  %m = nvfp4.amax %x hadamard(55272) : tensor<32x256xbf16>
  %q = nvfp4.quantize %x amax(%m) hadamard(55272) rounding<stochastic> seed(%s) : tensor<32x256xbf16> -> !a
  %c, %cm = nvfp4.scaled_matmul %q, %w : !a, !w -> tensor<32x256xbf16>, f32
  %qc = nvfp4.quantize %c amax(%cm) : tensor<32x256xbf16> -> !h
  %d = nvfp4.scaled_matmul %qc, %v : !h, !w -> tensor<32x256xf32>
  return %d, %cm : tensor<32x256xf32>, f32
}
