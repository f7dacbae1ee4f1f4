// RUN: not nvfp4-opt %s --convert-nvfp4-to-gpu="chip=sm_100a mx-gemm=tensor-core" 2>&1 | FileCheck %s --check-prefix=CHIP
// RUN: not nvfp4-opt %s --convert-nvfp4-to-gpu="chip=sm_90a mx-gemm=wgmma" 2>&1 | FileCheck %s --check-prefix=OPTION

// A forced tensor-core MX GEMM on a chip without one is an error on the op,
// never a silent fallback (sm_100a/sm_103a's tcgen05 kind::mxf8f6f4 /
// kind::mxf4 kernels are not written yet); an unknown mx-gemm value is
// rejected.
// CHIP: error: 'nvfp4.scaled_matmul' op cannot use mx-gemm=tensor-core: no tensor-core MX GEMM on sm_100a yet (the SIMT kernel runs there)
// OPTION: error: mx-gemm 'wgmma': expected simt or tensor-core

func.func @forced_on_sm100(%a: !nvfp4.tensor<128x256xf8E4M3FN, scale = f8E8M0FNU, block = 1x32>,
                           %b: !nvfp4.tensor<128x256xf8E4M3FN, scale = f8E8M0FNU, block = 1x32>) -> tensor<128x128xf32> {
  %c = nvfp4.scaled_matmul %a, %b
      : !nvfp4.tensor<128x256xf8E4M3FN, scale = f8E8M0FNU, block = 1x32>,
        !nvfp4.tensor<128x256xf8E4M3FN, scale = f8E8M0FNU, block = 1x32>
      -> tensor<128x128xf32>
  return %c : tensor<128x128xf32>
}
