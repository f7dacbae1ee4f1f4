// The dual (rowwise + columnwise) quantizations of a training step: dY
// (SR, RHT + SR; both amaxes from one pass) and X (RN, RHT + RN; amaxes
// given), 96 x 160; and f32 / f16 inputs with odd tile counts, swizzled
// scales and one given amax.
!r = !nvfp4.tensor<96x160xf4E2M1FN, scale = f8E4M3FN, block = 1x16>
!c = !nvfp4.tensor<160x96xf4E2M1FN, scale = f8E4M3FN, block = 1x16>
!rs = !nvfp4.tensor<2x48x80xf4E2M1FN, scale = f8E4M3FN, block = 1x16, layout = swizzled_128x4>
!cs = !nvfp4.tensor<2x80x48xf4E2M1FN, scale = f8E4M3FN, block = 1x16, layout = swizzled_128x4>
!r2 = !nvfp4.tensor<48x80xf4E2M1FN, scale = f8E4M3FN, block = 1x16>
!c2 = !nvfp4.tensor<80x48xf4E2M1FN, scale = f8E4M3FN, block = 1x16>
func.func @dual(%x: tensor<96x160xbf16>, %s: i64, %t: i64, %a: f32, %b: f32,
                %y: tensor<2x48x80xf32>, %z: tensor<48x80xf16>)
    -> (!r, !c, !r, !c, !rs, !cs, !r2, !c2) {
  %r0, %c0 = nvfp4.dual_quantize %x rounding<stochastic> seed(%s) columnwise hadamard(55272) rounding<stochastic> seed(%t) : tensor<96x160xbf16> -> !r, !c
  %r1, %c1 = nvfp4.dual_quantize %x amax(%a) columnwise amax(%b) hadamard(55272) : tensor<96x160xbf16> -> !r, !c
  %r2, %c2 = nvfp4.dual_quantize %y columnwise rounding<stochastic> seed(%s) : tensor<2x48x80xf32> -> !rs, !cs
  %r3, %c3 = nvfp4.dual_quantize %z amax(%a) columnwise : tensor<48x80xf16> -> !r2, !c2
  return %r0, %c0, %r1, %c1, %r2, %c2, %r3, %c3 : !r, !c, !r, !c, !rs, !cs, !r2, !c2
}
