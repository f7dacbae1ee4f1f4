// GEMMs (K a multiple of 768) whose persistent K = 96 kernel (forced
// 128x128x256_s6_p8_mk96) ptxas 13.0 spilled 4-20 bytes for before the MMA
// role ran on lane 0 in one region (Tcgen05Matmul.cpp, emitMma): FP32 and
// BF16 C, linear and swizzled B scales, N a multiple of the tile or not.
!a = !nvfp4.tensor<1600x1536xf4E2M1FN, scale = f8E4M3FN, block = 1x16>
!b = !nvfp4.tensor<2176x1536xf4E2M1FN, scale = f8E4M3FN, block = 16x16>
!bs = !nvfp4.tensor<2176x1536xf4E2M1FN, scale = f8E4M3FN, block = 16x16, layout = swizzled_128x4>
!c = !nvfp4.tensor<256x1536xf4E2M1FN, scale = f8E4M3FN, block = 1x16>
!d = !nvfp4.tensor<2000x1536xf4E2M1FN, scale = f8E4M3FN, block = 16x16, layout = swizzled_128x4>
!e = !nvfp4.tensor<4096x1536xf4E2M1FN, scale = f8E4M3FN, block = 1x16>
!f = !nvfp4.tensor<4096x1536xf4E2M1FN, scale = f8E4M3FN, block = 16x16>
func.func @linear_f32(%a: !a, %b: !b) -> tensor<1600x2176xf32> {
  %y = nvfp4.scaled_matmul %a, %b : !a, !b -> tensor<1600x2176xf32>
  return %y : tensor<1600x2176xf32>
}
func.func @swizzled_f32(%a: !a, %b: !bs) -> tensor<1600x2176xf32> {
  %y = nvfp4.scaled_matmul %a, %b : !a, !bs -> tensor<1600x2176xf32>
  return %y : tensor<1600x2176xf32>
}
func.func @ragged_f32(%c: !c, %d: !d) -> tensor<256x2000xf32> {
  %y = nvfp4.scaled_matmul %c, %d : !c, !d -> tensor<256x2000xf32>
  return %y : tensor<256x2000xf32>
}
func.func @square_bf16(%e: !e, %f: !f) -> tensor<4096x4096xbf16> {
  %y = nvfp4.scaled_matmul %e, %f : !e, !f -> tensor<4096x4096xbf16>
  return %y : tensor<4096x4096xbf16>
}
