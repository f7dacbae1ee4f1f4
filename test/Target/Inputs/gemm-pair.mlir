// GEMMs for the sm_100a/sm_103a CTA pair (cta_group::2, schedule
// 128x256x256_s5_p8_c2_cg2; docs/Blackwell.md section 9), forced in
// tcgen05-gemm-pair.test:
//   @ragged   M = 300: the second pair's rank-1 CTA starts past M (its A
//             rows arrive as zeros, its re-laid scales are not loaded and
//             its stores are masked); N = 208: B's second half is past N.
//             Swizzled A scales (bulk copies), linear 16x16 B scales (the
//             producer lanes re-lay all 256 rows in both CTAs).
//   @quantize the quantizing epilogue over the pair's 128 x 256 per CTA,
//             linear A and swizzled B scales (B's atom rows multicast to
//             both CTAs).
!ra = !nvfp4.tensor<300x512xf4E2M1FN, scale = f8E4M3FN, block = 1x16, layout = swizzled_128x4>
!rb = !nvfp4.tensor<208x512xf4E2M1FN, scale = f8E4M3FN, block = 16x16>
!qa = !nvfp4.tensor<512x768xf4E2M1FN, scale = f8E4M3FN, block = 1x16>
!qb = !nvfp4.tensor<512x768xf4E2M1FN, scale = f8E4M3FN, block = 16x16, layout = swizzled_128x4>
!qc = !nvfp4.tensor<512x512xf4E2M1FN, scale = f8E4M3FN, block = 1x16>
func.func @ragged(%a: !ra, %b: !rb) -> (tensor<300x208xf32>, f32) {
  %y, %amax = nvfp4.scaled_matmul %a, %b : !ra, !rb -> tensor<300x208xf32>, f32
  return %y, %amax : tensor<300x208xf32>, f32
}
func.func @quantize(%a: !qa, %b: !qb, %g: f32) -> !qc {
  %q = nvfp4.scaled_matmul_quantize %a, %b amax(%g) : !qa, !qb -> !qc
  return %q : !qc
}
