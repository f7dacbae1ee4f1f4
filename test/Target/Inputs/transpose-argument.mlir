// The transpose of a 16x16-quantized weight that arrives quantized (a
// checkpoint): the standalone transpose kernel.
!w = !nvfp4.tensor<2x64x256xf4E2M1FN, scale = f8E4M3FN, block = 16x16>
!wt = !nvfp4.tensor<2x256x64xf4E2M1FN, scale = f8E4M3FN, block = 16x16>
func.func @transpose(%wq: !w) -> !wt {
  %wt = nvfp4.transpose %wq : !w -> !wt
  return %wt : !wt
}
