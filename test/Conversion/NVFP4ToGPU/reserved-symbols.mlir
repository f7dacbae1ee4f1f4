// RUN: nvfp4-opt %s --convert-nvfp4-to-gpu=chip=sm_90a -split-input-file -verify-diagnostics

// The generated kernels go to `gpu.module @nvfp4_kernels`, found by name. A
// user symbol of that name is refused: before, a user kernel named like a
// generated one silently replaced it (its body ran instead of the amax), and
// a user function @nvfp4_kernels gave "kernel module is undefined".

module attributes {gpu.container_module} {
  // expected-error @+1 {{the symbol @nvfp4_kernels is reserved for the kernels convert-nvfp4-to-gpu generates; rename this gpu.module}}
  gpu.module @nvfp4_kernels {
    gpu.func @nvfp4_amax_512xbf16(%a: memref<512xbf16>, %b: memref<1xi32>) kernel {
      %c0 = arith.constant 0 : index
      %v = arith.constant 1078530011 : i32
      memref.store %v, %b[%c0] : memref<1xi32>
      gpu.return
    }
  }
  func.func @f(%x: tensor<16x32xbf16>) -> f32 {
    %a = nvfp4.amax %x : tensor<16x32xbf16>
    return %a : f32
  }
}

// -----

// expected-error @+1 {{the symbol @nvfp4_kernels is reserved for the kernels convert-nvfp4-to-gpu generates; rename this func.func}}
func.func private @nvfp4_kernels()
func.func @f(%x: tensor<16x32xbf16>) -> f32 {
  %a = nvfp4.amax %x : tensor<16x32xbf16>
  return %a : f32
}
