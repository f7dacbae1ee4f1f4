// An FFN-sized fprop (16384 tokens x 4096 -> 14336 is the bench shape;
// this one is smaller but has >= 132 tiles of 128 x 256, so the sm_90a
// rule takes the persistent decoder-warpgroup kernel).
!a = !nvfp4.tensor<2048x1024xf4E2M1FN, scale = f8E4M3FN, block = 1x16>
!b = !nvfp4.tensor<4352x1024xf4E2M1FN, scale = f8E4M3FN, block = 16x16>
func.func @gemm(%a: !a, %b: !b) -> tensor<2048x4352xbf16> {
  %y = nvfp4.scaled_matmul %a, %b : !a, !b -> tensor<2048x4352xbf16>
  return %y : tensor<2048x4352xbf16>
}
