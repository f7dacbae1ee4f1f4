// Every elementwise nvfp4 op of the recipe, at a 256x512 shape and a
// decode-like 1x512 shape: RN quantization (1x16 activations, 16x16
// weights with swizzled scales), stochastic rounding of gradients, the RHT,
// dequantization and a standalone amax.
!act = !nvfp4.tensor<256x512xf4E2M1FN, scale = f8E4M3FN, block = 1x16>
!wt = !nvfp4.tensor<128x512xf4E2M1FN, scale = f8E4M3FN, block = 16x16, layout = swizzled_128x4>
!tok = !nvfp4.tensor<1x512xf4E2M1FN, scale = f8E4M3FN, block = 1x16>

func.func @elementwise(%x: tensor<256x512xbf16>, %w: tensor<128x512xbf16>,
                       %dy: tensor<256x512xbf16>, %t: tensor<1x512xbf16>,
                       %seed: i64)
    -> (!act, !wt, !act, tensor<256x512xbf16>, tensor<256x512xf32>, !tok, f32) {
  %xq = nvfp4.quantize %x : tensor<256x512xbf16> -> !act
  %wq = nvfp4.quantize %w : tensor<128x512xbf16> -> !wt
  %gq = nvfp4.quantize %dy rounding<stochastic> seed(%seed) : tensor<256x512xbf16> -> !act
  %h = nvfp4.hadamard %dy : tensor<256x512xbf16>
  %d = nvfp4.dequantize %xq : !act -> tensor<256x512xf32>
  %tq = nvfp4.quantize %t : tensor<1x512xbf16> -> !tok
  %a = nvfp4.amax %x : tensor<256x512xbf16>
  return %xq, %wq, %gq, %h, %d, %tq, %a : !act, !wt, !act, tensor<256x512xbf16>, tensor<256x512xf32>, !tok, f32
}
