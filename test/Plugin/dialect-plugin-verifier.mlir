// The plugin brings the dialect's verifiers along.
// RUN: mlir-opt %s --load-dialect-plugin=%nvfp4_lib_dir/NVFP4Plugin.so -verify-diagnostics

func.func @quantize_c2(%x: tensor<16x32xbf16>) {
  // expected-error @+1 {{'nvfp4.quantize' op stochastic rounding requires a seed operand}}
  %0 = nvfp4.quantize %x rounding<stochastic> : tensor<16x32xbf16>
      -> !nvfp4.tensor<16x32xf4E2M1FN, scale = f8E4M3FN, block = 1x16>
  return
}
