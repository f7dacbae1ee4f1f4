// A wgrad operand of the recipe: the RHT of dY along its rows fused into
// its stochastic 1x16 quantization (one post-RHT amax pass, one RHT + SR
// quantize kernel), 64 x 256.
!act = !nvfp4.tensor<64x256xf4E2M1FN, scale = f8E4M3FN, block = 1x16>
func.func @wgrad_operand(%dy: tensor<64x256xbf16>, %seed: i64) -> !act {
  %h = nvfp4.hadamard %dy : tensor<64x256xbf16>
  %q = nvfp4.quantize %h rounding<stochastic> seed(%seed) : tensor<64x256xbf16> -> !act
  return %q : !act
}
