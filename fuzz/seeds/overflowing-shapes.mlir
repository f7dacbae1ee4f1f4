// Issue 16, W1/P4: shapes at the 2^47-element bound (a grid too large for
// one launch) and products of bounded operands that exceed it.
!a = !nvfp4.tensor<8796093022208x16xf4E2M1FN, scale = f8E4M3FN, block = 1x16>
func.func @hadamard_at_bound(%x: tensor<8796093022208x16xbf16>) -> tensor<8796093022208x16xbf16> {
  %h = nvfp4.hadamard %x : tensor<8796093022208x16xbf16>
  return %h : tensor<8796093022208x16xbf16>
}
func.func @amax_at_bound(%x: tensor<4398046511104x32xbf16>) -> f32 {
  %a = nvfp4.amax %x : tensor<4398046511104x32xbf16>
  return %a : f32
}
func.func @gemm(%x: !a, %y: !nvfp4.tensor<16x16xf4E2M1FN, scale = f8E4M3FN, block = 16x16>) -> tensor<8796093022208x16xbf16> {
  %c = nvfp4.scaled_matmul %x, %y : !a, !nvfp4.tensor<16x16xf4E2M1FN, scale = f8E4M3FN, block = 16x16> -> tensor<8796093022208x16xbf16>
  return %c : tensor<8796093022208x16xbf16>
}
func.func @linalg(%a: tensor<4294967296x16xbf16>, %b: tensor<16x4294967296xbf16> {nvfp4.weight}, %c: tensor<4294967296x4294967296xbf16>) -> tensor<4294967296x4294967296xbf16> {
  %y = linalg.matmul {nvfp4.layer = 3 : i64} ins(%a, %b : tensor<4294967296x16xbf16>, tensor<16x4294967296xbf16>) outs(%c : tensor<4294967296x4294967296xbf16>) -> tensor<4294967296x4294967296xbf16>
  return %y : tensor<4294967296x4294967296xbf16>
}
