// RUN: nvfp4-opt %s --convert-nvfp4-to-reference --allow-unregistered-dialect -split-input-file -verify-diagnostics

// A block-scaled value reaching an op the conversion cannot split is a
// diagnostic, with the way out.

func.func @unknown_user(%x: tensor<16x32xbf16>) {
  %q = nvfp4.quantize %x : tensor<16x32xbf16>
      -> !nvfp4.tensor<16x32xf4E2M1FN, scale = f8E4M3FN, block = 1x16>
  // expected-error @+1 {{'foo.use' op takes or returns a block-scaled tensor and has no reference lowering; nvfp4.unpack the value into codes, scales and amax first}}
  "foo.use"(%q) : (!nvfp4.tensor<16x32xf4E2M1FN, scale = f8E4M3FN, block = 1x16>) -> ()
  return
}

// -----

// A dynamic Hadamard input is one clear error (it was "failed to legalize
// operation 'nvfp4.hadamard'"); amax lowers with dynamic sizes.
func.func @hadamard_dynamic(%x: tensor<?x32xbf16>) -> (tensor<?x32xbf16>, f32) {
  // expected-error @+1 {{'nvfp4.hadamard' op needs a static shape for the RHT in the reference lowering, got 'tensor<?x32xbf16>'}}
  %h = nvfp4.hadamard %x : tensor<?x32xbf16>
  %a = nvfp4.amax %x : tensor<?x32xbf16>
  return %h, %a : tensor<?x32xbf16>, f32
}

// -----

// The same for an amax that carries the RHT (nvfp4-fuse-quantization's
// fold-hadamard form).
func.func @amax_hadamard_dynamic(%x: tensor<?x32xbf16>) -> f32 {
  // expected-error @+1 {{'nvfp4.amax' op needs a static shape for the RHT in the reference lowering, got 'tensor<?x32xbf16>'}}
  %a = nvfp4.amax %x hadamard(55272) : tensor<?x32xbf16>
  return %a : f32
}
