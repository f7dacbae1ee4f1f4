// GEMMs for the ptxas spill check of every tcgen05 schedule
// (tcgen05-gemm-spills.test, scripts/ptxas-sweep.py --small): a subset of
// the 160 shapes scripts/ptxas-sweep.py sweeps, with the ones on which
// ptxas 13.0 spilled before the kernels declared their CTAs per SM
// (.minnctapersm, Tcgen05Matmul.cpp): the forced direct-store CTA pair on
// the first two, the forced 3-stage persistent K = 96 kernel with the TMA
// store on the next four; BF16 and FP32 C, linear and swizzled B scales,
// N a multiple of the tile or not, one and two 768-code K groups.
func.func @g1600x4096x768_bf16_linear(%a: !nvfp4.tensor<1600x768xf4E2M1FN, scale = f8E4M3FN, block = 1x16>, %b: !nvfp4.tensor<4096x768xf4E2M1FN, scale = f8E4M3FN, block = 16x16>) -> tensor<1600x4096xbf16> {
  %y = nvfp4.scaled_matmul %a, %b : !nvfp4.tensor<1600x768xf4E2M1FN, scale = f8E4M3FN, block = 1x16>, !nvfp4.tensor<4096x768xf4E2M1FN, scale = f8E4M3FN, block = 16x16> -> tensor<1600x4096xbf16>
  return %y : tensor<1600x4096xbf16>
}
func.func @g1600x8192x1536_bf16_swizzled(%a: !nvfp4.tensor<1600x1536xf4E2M1FN, scale = f8E4M3FN, block = 1x16>, %b: !nvfp4.tensor<8192x1536xf4E2M1FN, scale = f8E4M3FN, block = 16x16, layout = swizzled_128x4>) -> tensor<1600x8192xbf16> {
  %y = nvfp4.scaled_matmul %a, %b : !nvfp4.tensor<1600x1536xf4E2M1FN, scale = f8E4M3FN, block = 1x16>, !nvfp4.tensor<8192x1536xf4E2M1FN, scale = f8E4M3FN, block = 16x16, layout = swizzled_128x4> -> tensor<1600x8192xbf16>
  return %y : tensor<1600x8192xbf16>
}
func.func @g4096x4096x1536_f32_linear(%a: !nvfp4.tensor<4096x1536xf4E2M1FN, scale = f8E4M3FN, block = 1x16>, %b: !nvfp4.tensor<4096x1536xf4E2M1FN, scale = f8E4M3FN, block = 16x16>) -> tensor<4096x4096xf32> {
  %y = nvfp4.scaled_matmul %a, %b : !nvfp4.tensor<4096x1536xf4E2M1FN, scale = f8E4M3FN, block = 1x16>, !nvfp4.tensor<4096x1536xf4E2M1FN, scale = f8E4M3FN, block = 16x16> -> tensor<4096x4096xf32>
  return %y : tensor<4096x4096xf32>
}
func.func @g1600x2176x1536_f32_swizzled(%a: !nvfp4.tensor<1600x1536xf4E2M1FN, scale = f8E4M3FN, block = 1x16>, %b: !nvfp4.tensor<2176x1536xf4E2M1FN, scale = f8E4M3FN, block = 16x16, layout = swizzled_128x4>) -> tensor<1600x2176xf32> {
  %y = nvfp4.scaled_matmul %a, %b : !nvfp4.tensor<1600x1536xf4E2M1FN, scale = f8E4M3FN, block = 1x16>, !nvfp4.tensor<2176x1536xf4E2M1FN, scale = f8E4M3FN, block = 16x16, layout = swizzled_128x4> -> tensor<1600x2176xf32>
  return %y : tensor<1600x2176xf32>
}
func.func @g256x272x1536_f32_linear(%a: !nvfp4.tensor<256x1536xf4E2M1FN, scale = f8E4M3FN, block = 1x16>, %b: !nvfp4.tensor<272x1536xf4E2M1FN, scale = f8E4M3FN, block = 16x16>) -> tensor<256x272xf32> {
  %y = nvfp4.scaled_matmul %a, %b : !nvfp4.tensor<256x1536xf4E2M1FN, scale = f8E4M3FN, block = 1x16>, !nvfp4.tensor<272x1536xf4E2M1FN, scale = f8E4M3FN, block = 16x16> -> tensor<256x272xf32>
  return %y : tensor<256x272xf32>
}
func.func @g8192x2000x1536_f32_swizzled(%a: !nvfp4.tensor<8192x1536xf4E2M1FN, scale = f8E4M3FN, block = 1x16>, %b: !nvfp4.tensor<2000x1536xf4E2M1FN, scale = f8E4M3FN, block = 16x16, layout = swizzled_128x4>) -> tensor<8192x2000xf32> {
  %y = nvfp4.scaled_matmul %a, %b : !nvfp4.tensor<8192x1536xf4E2M1FN, scale = f8E4M3FN, block = 1x16>, !nvfp4.tensor<2000x1536xf4E2M1FN, scale = f8E4M3FN, block = 16x16, layout = swizzled_128x4> -> tensor<8192x2000xf32>
  return %y : tensor<8192x2000xf32>
}
func.func @g4096x4096x1536_bf16_swizzled(%a: !nvfp4.tensor<4096x1536xf4E2M1FN, scale = f8E4M3FN, block = 1x16>, %b: !nvfp4.tensor<4096x1536xf4E2M1FN, scale = f8E4M3FN, block = 16x16, layout = swizzled_128x4>) -> tensor<4096x4096xbf16> {
  %y = nvfp4.scaled_matmul %a, %b : !nvfp4.tensor<4096x1536xf4E2M1FN, scale = f8E4M3FN, block = 1x16>, !nvfp4.tensor<4096x1536xf4E2M1FN, scale = f8E4M3FN, block = 16x16, layout = swizzled_128x4> -> tensor<4096x4096xbf16>
  return %y : tensor<4096x4096xbf16>
}
func.func @g256x2000x768_bf16_linear(%a: !nvfp4.tensor<256x768xf4E2M1FN, scale = f8E4M3FN, block = 1x16>, %b: !nvfp4.tensor<2000x768xf4E2M1FN, scale = f8E4M3FN, block = 16x16>) -> tensor<256x2000xbf16> {
  %y = nvfp4.scaled_matmul %a, %b : !nvfp4.tensor<256x768xf4E2M1FN, scale = f8E4M3FN, block = 1x16>, !nvfp4.tensor<2000x768xf4E2M1FN, scale = f8E4M3FN, block = 16x16> -> tensor<256x2000xbf16>
  return %y : tensor<256x2000xbf16>
}
