// A GEMM whose epilogue quantizes C with N not a multiple of the route's
// 256-column tile (4112 = 16 x 257): the right edge's block tests.
!a = !nvfp4.tensor<16384x1024xf4E2M1FN, scale = f8E4M3FN, block = 1x16>
!b = !nvfp4.tensor<4112x1024xf4E2M1FN, scale = f8E4M3FN, block = 16x16>
!c = !nvfp4.tensor<16384x4112xf4E2M1FN, scale = f8E4M3FN, block = 1x16>
func.func @quantize(%a: !a, %b: !b, %amax: f32) -> !c {
  %q = nvfp4.scaled_matmul_quantize %a, %b amax(%amax) : !a, !b -> !c
  return %q : !c
}
