// The program of the quantize-gpu test (and of the quantize_sr.json
// manifest): a 256x1024 bf16 tensor quantized to NVFP4 with stochastic
// rounding and a 64-bit seed.
func.func @main(%x: tensor<256x1024xbf16>, %seed: i64) -> !nvfp4.tensor<256x1024xf4E2M1FN, scale = f8E4M3FN, block = 1x16> {
  %q = nvfp4.quantize %x rounding<stochastic> seed(%seed) : tensor<256x1024xbf16> -> !nvfp4.tensor<256x1024xf4E2M1FN, scale = f8E4M3FN, block = 1x16>
  return %q : !nvfp4.tensor<256x1024xf4E2M1FN, scale = f8E4M3FN, block = 1x16>
}
