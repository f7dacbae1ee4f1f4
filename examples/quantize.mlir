// The bundle of docs/Runtime.md: NVFP4 quantization of a 512x512 BF16
// tensor with stochastic rounding (an amax kernel, then the quantize
// kernel). nvfp4-compile examples/quantize.mlir --chip=sm_90a
// --emit=cubin -o k.cubin --report=k.json writes it; nvfp4-run runs it.
!q = !nvfp4.tensor<512x512xf4E2M1FN, scale = f8E4M3FN, block = 1x16>
func.func @main(%x: tensor<512x512xbf16>, %seed: i64) -> !q {
  %q = nvfp4.quantize %x rounding<stochastic> seed(%seed)
      : tensor<512x512xbf16> -> !q
  return %q : !q
}
