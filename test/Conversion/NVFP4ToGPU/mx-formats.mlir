// RUN: nvfp4-opt %s -split-input-file -convert-nvfp4-to-gpu="chip=sm_90a" -verify-diagnostics
// RUN: nvfp4-opt %s -split-input-file -convert-nvfp4-to-gpu="chip=sm_100a" -verify-diagnostics

// The MX formats have CPU semantics (convert-nvfp4-to-reference) and no GPU
// kernels yet: each op that touches one is one clear diagnostic, on every
// chip, never a crash or a wrong kernel.

func.func @quantize_mxfp8(%x: tensor<128x256xbf16>) -> !nvfp4.tensor<128x256xf8E4M3FN, scale = f8E8M0FNU, block = 1x32> {
  // expected-error @+1 {{'nvfp4.quantize' op has no GPU lowering for mxfp8_e4m3 yet (only nvfp4 runs on the GPU path; convert-nvfp4-to-reference runs the MX formats on the CPU)}}
  %q = nvfp4.quantize %x : tensor<128x256xbf16>
      -> !nvfp4.tensor<128x256xf8E4M3FN, scale = f8E8M0FNU, block = 1x32>
  return %q : !nvfp4.tensor<128x256xf8E4M3FN, scale = f8E8M0FNU, block = 1x32>
}

// -----

func.func @matmul_mxfp4(%a: !nvfp4.tensor<128x256xf4E2M1FN, scale = f8E8M0FNU, block = 1x32>,
                        %b: !nvfp4.tensor<64x256xf4E2M1FN, scale = f8E8M0FNU, block = 1x32>) -> tensor<128x64xbf16> {
  // expected-error @+1 {{'nvfp4.scaled_matmul' op has no GPU lowering for mxfp4 yet}}
  %c = nvfp4.scaled_matmul %a, %b
      : !nvfp4.tensor<128x256xf4E2M1FN, scale = f8E8M0FNU, block = 1x32>,
        !nvfp4.tensor<64x256xf4E2M1FN, scale = f8E8M0FNU, block = 1x32>
      -> tensor<128x64xbf16>
  return %c : tensor<128x64xbf16>
}

// -----

func.func @dequantize_e5m2(%q: !nvfp4.tensor<128x256xf8E5M2, scale = f8E8M0FNU, block = 1x32>) -> tensor<128x256xbf16> {
  // expected-error @+1 {{'nvfp4.dequantize' op has no GPU lowering for mxfp8_e5m2 yet}}
  %x = nvfp4.dequantize %q : !nvfp4.tensor<128x256xf8E5M2, scale = f8E8M0FNU, block = 1x32>
      -> tensor<128x256xbf16>
  return %x : tensor<128x256xbf16>
}
