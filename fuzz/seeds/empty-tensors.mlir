// Issue 16, C1: empty tensors (every kernel's launch geometry with zero
// elements), rank 0, and an RHT amax of zero columns.
func.func @amax_rows(%x: tensor<0x16xbf16>) -> f32 {
  %a = nvfp4.amax %x : tensor<0x16xbf16>
  return %a : f32
}
func.func @rht_amax_cols(%x: tensor<16x0xbf16>) -> f32 {
  %a = nvfp4.amax %x hadamard(5) : tensor<16x0xbf16>
  return %a : f32
}
func.func @hadamard(%x: tensor<0x4x32xbf16>) -> tensor<0x4x32xbf16> {
  %h = nvfp4.hadamard %x : tensor<0x4x32xbf16>
  return %h : tensor<0x4x32xbf16>
}
func.func @rank0(%x: tensor<bf16>) -> f32 {
  %a = nvfp4.amax %x : tensor<bf16>
  return %a : f32
}
func.func @gemm_empty(%a: tensor<0x32xbf16>, %b: tensor<32x16xbf16> {nvfp4.weight}, %c: tensor<0x16xbf16>) -> tensor<0x16xbf16> {
  %y = linalg.matmul {nvfp4.layer = 0 : i64, nvfp4.precision = "nvfp4"} ins(%a, %b : tensor<0x32xbf16>, tensor<32x16xbf16>) outs(%c : tensor<0x16xbf16>) -> tensor<0x16xbf16>
  return %y : tensor<0x16xbf16>
}
