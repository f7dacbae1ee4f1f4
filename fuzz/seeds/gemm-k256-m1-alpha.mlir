// K = 256 (one tensor-core K step), M = 1, f32 out with alpha, pre-quantized operands.
!a = !nvfp4.tensor<1x256xf4E2M1FN, scale = f8E4M3FN, block = 1x16>
!b = !nvfp4.tensor<16x256xf4E2M1FN, scale = f8E4M3FN, block = 16x16>
func.func @gemm(%a: !a, %b: !b, %alpha: f32) -> tensor<1x16xf32> {
  %y = nvfp4.scaled_matmul %a, %b alpha(%alpha) : !a, !b -> tensor<1x16xf32>
  return %y : tensor<1x16xf32>
}
