// RUN: nvfp4-opt %s --convert-nvfp4-to-gpu="chip=sm_100a mx-gemm=tensor-core" -split-input-file -verify-diagnostics
// RUN: nvfp4-opt %s --convert-nvfp4-to-gpu="chip=sm_120a mx-gemm=tensor-core" -split-input-file -verify-diagnostics
// RUN: not nvfp4-opt %s --convert-nvfp4-to-gpu="chip=sm_90a mx-gemm=wgmma" 2>&1 | FileCheck %s --check-prefix=OPTION

// A forced tensor-core MX GEMM that the chip's block-scaled MMA cannot take
// is an error on the op, never a silent fallback; an unknown mx-gemm value
// is rejected.
// OPTION: error: mx-gemm 'wgmma': expected simt or tensor-core

func.func @mixed_formats(%a: !nvfp4.tensor<128x256xf8E4M3FN, scale = f8E8M0FNU, block = 1x32>,
                         %b: !nvfp4.tensor<128x256xf4E2M1FN, scale = f8E8M0FNU, block = 1x32>) -> tensor<128x128xf32> {
  // expected-error @+2 {{failed to legalize operation 'nvfp4.scaled_matmul'}}
  // expected-error @+1 {{cannot use mx-gemm=tensor-core: MXFP8 x MXFP4 has no block-scaled MMA form here}}
  %c = nvfp4.scaled_matmul %a, %b
      : !nvfp4.tensor<128x256xf8E4M3FN, scale = f8E8M0FNU, block = 1x32>,
        !nvfp4.tensor<128x256xf4E2M1FN, scale = f8E8M0FNU, block = 1x32>
      -> tensor<128x128xf32>
  return %c : tensor<128x128xf32>
}

// -----

func.func @not_a_k_step(%a: !nvfp4.tensor<128x128xf4E2M1FN, scale = f8E8M0FNU, block = 1x32>,
                        %b: !nvfp4.tensor<128x128xf4E2M1FN, scale = f8E8M0FNU, block = 1x32>) -> tensor<128x128xf32> {
  // expected-error @+2 {{failed to legalize operation 'nvfp4.scaled_matmul'}}
  // expected-error @+1 {{cannot use mx-gemm=tensor-core: K = 128 is not a multiple of 256 (one K step: 128 bytes of codes a row)}}
  %c = nvfp4.scaled_matmul %a, %b
      : !nvfp4.tensor<128x128xf4E2M1FN, scale = f8E8M0FNU, block = 1x32>,
        !nvfp4.tensor<128x128xf4E2M1FN, scale = f8E8M0FNU, block = 1x32>
      -> tensor<128x128xf32>
  return %c : tensor<128x128xf32>
}
