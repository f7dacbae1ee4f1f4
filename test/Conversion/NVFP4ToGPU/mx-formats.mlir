// RUN: nvfp4-opt %s -split-input-file -convert-nvfp4-to-gpu="chip=sm_90a" -verify-diagnostics
// RUN: nvfp4-opt %s -split-input-file -convert-nvfp4-to-gpu="chip=sm_100a" -verify-diagnostics

// The GPU path quantizes, dequantizes and multiplies the MX formats
// (mx-quantize.mlir, mx-matmul.mlir); every other op that touches one has
// CPU semantics only (convert-nvfp4-to-reference): one clear diagnostic, on
// every chip, never a crash or a wrong kernel.

// An output amax (the epilogue's max |C|) has no MX kernel.
func.func @matmul_mxfp4_amax(%a: !nvfp4.tensor<128x256xf4E2M1FN, scale = f8E8M0FNU, block = 1x32>,
                             %b: !nvfp4.tensor<64x256xf4E2M1FN, scale = f8E8M0FNU, block = 1x32>)
    -> (tensor<128x64xbf16>, f32) {
  // expected-error @+1 {{'nvfp4.scaled_matmul' op has no GPU lowering for mxfp4 yet (the GPU path quantizes, dequantizes and multiplies the MX formats; convert-nvfp4-to-reference runs the rest on the CPU)}}
  %c, %m = nvfp4.scaled_matmul %a, %b
      : !nvfp4.tensor<128x256xf4E2M1FN, scale = f8E8M0FNU, block = 1x32>,
        !nvfp4.tensor<64x256xf4E2M1FN, scale = f8E8M0FNU, block = 1x32>
      -> tensor<128x64xbf16>, f32
  return %c, %m : tensor<128x64xbf16>, f32
}

// -----

// nvfp4.unpack and nvfp4.swizzle_scales have diagnostics of their own (for
// NVFP4 too).
func.func @unpack_mxfp4(%q: !nvfp4.tensor<128x256xf4E2M1FN, scale = f8E8M0FNU, block = 1x32>) {
  // expected-error @+1 {{'nvfp4.unpack' op has no GPU lowering yet}}
  %codes, %scales, %amax = nvfp4.unpack %q
      : !nvfp4.tensor<128x256xf4E2M1FN, scale = f8E8M0FNU, block = 1x32>
  return
}

// -----

func.func @swizzle_mxfp8(%q: !nvfp4.tensor<128x256xf8E4M3FN, scale = f8E8M0FNU, block = 1x32>)
    -> !nvfp4.tensor<128x256xf8E4M3FN, scale = f8E8M0FNU, block = 1x32, layout = swizzled_128x4> {
  // expected-error @+1 {{'nvfp4.swizzle_scales' op has no GPU lowering yet}}
  %s = nvfp4.swizzle_scales %q : !nvfp4.tensor<128x256xf8E4M3FN, scale = f8E8M0FNU, block = 1x32>
      -> !nvfp4.tensor<128x256xf8E4M3FN, scale = f8E8M0FNU, block = 1x32, layout = swizzled_128x4>
  return %s : !nvfp4.tensor<128x256xf8E4M3FN, scale = f8E8M0FNU, block = 1x32, layout = swizzled_128x4>
}
