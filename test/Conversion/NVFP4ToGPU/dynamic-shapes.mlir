// RUN: nvfp4-opt %s --convert-nvfp4-to-gpu=chip=sm_100a -split-input-file -verify-diagnostics
// RUN: not nvfp4-compile %s --chip=sm_90a --no-ptxas-check -o /dev/null 2>&1 | FileCheck %s --check-prefix=COMPILE

// nvfp4.amax and nvfp4.hadamard verify with dynamic sizes (the reference
// lowering handles them), but GPU kernels are specialized for their shapes:
// one clear error, not a kernel built for kDynamic (INT64_MIN) elements that
// fails later in the kernel lowering ("failed to legalize 'gpu.func'").

// COMPILE: error: 'nvfp4.amax' op needs static shapes on the GPU path, got 'tensor<?x32xbf16>'
// COMPILE-NOT: failed to legalize
func.func @amax(%x: tensor<?x32xbf16>) -> f32 {
  // expected-error @+1 {{'nvfp4.amax' op needs static shapes on the GPU path, got 'tensor<?x32xbf16>'}}
  %a = nvfp4.amax %x : tensor<?x32xbf16>
  return %a : f32
}

// -----

func.func @hadamard(%x: tensor<4x?x32xbf16>) -> tensor<4x?x32xbf16> {
  // expected-error @+1 {{'nvfp4.hadamard' op needs static shapes on the GPU path, got 'tensor<4x?x32xbf16>'}}
  %h = nvfp4.hadamard %x : tensor<4x?x32xbf16>
  return %h : tensor<4x?x32xbf16>
}
