// RUN: nvfp4-opt %s -split-input-file -convert-nvfp4-to-gpu="chip=sm_90a" -verify-diagnostics
// RUN: nvfp4-opt %s -split-input-file -convert-nvfp4-to-gpu="chip=sm_100a" -verify-diagnostics

// The GPU path quantizes, dequantizes and multiplies the MX formats
// (mx-quantize.mlir, mx-matmul.mlir, with the output amax:
// mx-matmul-amax.mlir); every other op that touches one has
// CPU semantics only (convert-nvfp4-to-reference): one clear diagnostic, on
// every chip, never a crash or a wrong kernel.

// nvfp4.pack of MX parts (the codes one per element, MXFP4's to be packed
// two a byte) has no MX kernel.
func.func @pack_mxfp4(%codes: tensor<128x256xf4E2M1FN>, %scales: tensor<128x8xf8E8M0FNU>,
                      %amax: f32)
    -> !nvfp4.tensor<128x256xf4E2M1FN, scale = f8E8M0FNU, block = 1x32> {
  // expected-error @+1 {{'nvfp4.pack' op has no GPU lowering for mxfp4 yet (the GPU path quantizes, dequantizes and multiplies the MX formats; convert-nvfp4-to-reference runs the rest on the CPU)}}
  %q = nvfp4.pack %codes, %scales, %amax
      : !nvfp4.tensor<128x256xf4E2M1FN, scale = f8E8M0FNU, block = 1x32>
  return %q : !nvfp4.tensor<128x256xf4E2M1FN, scale = f8E8M0FNU, block = 1x32>
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
