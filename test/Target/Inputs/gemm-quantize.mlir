// A GEMM whose epilogue quantizes C (scaled_matmul_quantize: a given amax,
// 1x16 blocks), ragged M and N, swizzled 128x4 B scales.
!a = !nvfp4.tensor<200x1024xf4E2M1FN, scale = f8E4M3FN, block = 1x16>
!b = !nvfp4.tensor<336x1024xf4E2M1FN, scale = f8E4M3FN, block = 16x16, layout = swizzled_128x4>
!c = !nvfp4.tensor<200x336xf4E2M1FN, scale = f8E4M3FN, block = 1x16>
func.func @quantize(%a: !a, %b: !b, %amax: f32) -> !c {
  %q = nvfp4.scaled_matmul_quantize %a, %b amax(%amax) : !a, !b -> !c
  return %q : !c
}
