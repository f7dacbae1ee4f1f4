// RUN: nvfp4-opt %s -split-input-file -verify-diagnostics

// The verifier rules about tensor_scale = decode, one test per rule, named
// after its label in NVFP4Types.td / NVFP4Ops.td (next to invalid.mlir so
// that the MX work on that file and this one merge cleanly).

// expected-error @+1 {{tensor_scale = decode needs NVFP4 (f8E4M3FN scales): the MX formats have no tensor scale}}
func.func @tensor_t8(%q: !nvfp4.tensor<16x32xf4E2M1FN, scale = f8E8M0FNU, block = 1x32, tensor_scale = decode>)

// -----

// expected-error @+1 {{unknown tensor scale 'scale' (expected amax or decode)}}
func.func @tensor_scale_unknown(%q: !nvfp4.tensor<16x32xf4E2M1FN, scale = f8E4M3FN, block = 1x16, tensor_scale = scale>)

// -----

// expected-error @+1 {{expected 'layout = ...' then 'tensor_scale = ...', each at most once, got 'layout'}}
func.func @tensor_scale_order(%q: !nvfp4.tensor<16x32xf4E2M1FN, scale = f8E4M3FN, block = 1x16, tensor_scale = decode, layout = linear>)

// -----

func.func @quantize_c7(%x: tensor<16x32xbf16>) {
  // expected-error @+1 {{'nvfp4.quantize' op the result must hold an amax, got tensor_scale = decode (a decode scale is assembled with nvfp4.pack)}}
  %q = nvfp4.quantize %x : tensor<16x32xbf16>
      -> !nvfp4.tensor<16x32xf4E2M1FN, scale = f8E4M3FN, block = 1x16, tensor_scale = decode>
  return
}

// -----

func.func @dual_quantize_c6(%x: tensor<32x64xbf16>) {
  // expected-error @+1 {{'nvfp4.dual_quantize' op the columnwise result must hold an amax, got tensor_scale = decode}}
  %r, %c = nvfp4.dual_quantize %x columnwise
      : tensor<32x64xbf16> -> !nvfp4.tensor<32x64xf4E2M1FN, scale = f8E4M3FN, block = 1x16>,
        !nvfp4.tensor<64x32xf4E2M1FN, scale = f8E4M3FN, block = 1x16, tensor_scale = decode>
  return
}

// -----

func.func @scaled_matmul_quantize_c7(%a: !nvfp4.tensor<32x64xf4E2M1FN, scale = f8E4M3FN, block = 1x16>,
                                     %b: !nvfp4.tensor<32x64xf4E2M1FN, scale = f8E4M3FN, block = 1x16, tensor_scale = decode>,
                                     %g: f32) {
  // expected-error @+1 {{'nvfp4.scaled_matmul_quantize' op the result must hold an amax, got tensor_scale = decode}}
  %0 = nvfp4.scaled_matmul_quantize %a, %b amax(%g)
      : !nvfp4.tensor<32x64xf4E2M1FN, scale = f8E4M3FN, block = 1x16>,
        !nvfp4.tensor<32x64xf4E2M1FN, scale = f8E4M3FN, block = 1x16, tensor_scale = decode>
      -> !nvfp4.tensor<32x32xf4E2M1FN, scale = f8E4M3FN, block = 1x16, tensor_scale = decode>
  return
}

// -----

func.func @pack_c5(%c: tensor<16x32xf4E2M1FN>, %s: tensor<16x2xf8E4M3FN>) {
  %d = arith.constant 0x7F800000 : f32
  // expected-error @+1 {{'nvfp4.pack' op a decode scale must be finite, got 0x7F800000 : f32}}
  %0 = nvfp4.pack %c, %s, %d : !nvfp4.tensor<16x32xf4E2M1FN, scale = f8E4M3FN, block = 1x16, tensor_scale = decode>
  return
}

// -----

// An amax may be +inf (S_enc = 1); the same bits as a decode scale may not.
func.func @pack_c5_amax_inf_ok(%c: tensor<16x32xf4E2M1FN>, %s: tensor<16x2xf8E4M3FN>) {
  %d = arith.constant 0x7F800000 : f32
  %0 = nvfp4.pack %c, %s, %d : !nvfp4.tensor<16x32xf4E2M1FN, scale = f8E4M3FN, block = 1x16>
  return
}

// -----

func.func @pack_c3_decode(%c: tensor<16x32xf4E2M1FN>, %s: tensor<16x2xf8E4M3FN>) {
  %d = arith.constant -1.0e-3 : f32
  // expected-error @+1 {{'nvfp4.pack' op the tensor amax must be non-negative and not NaN}}
  %0 = nvfp4.pack %c, %s, %d : !nvfp4.tensor<16x32xf4E2M1FN, scale = f8E4M3FN, block = 1x16, tensor_scale = decode>
  return
}

// -----

func.func @transpose_c3_kind(%w: !nvfp4.tensor<32x64xf4E2M1FN, scale = f8E4M3FN, block = 16x16, tensor_scale = decode>) {
  // expected-error @+1 {{'nvfp4.transpose' op result type '!nvfp4.tensor<64x32xf4E2M1FN, scale = f8E4M3FN, block = 16x16>' should be '!nvfp4.tensor<64x32xf4E2M1FN, scale = f8E4M3FN, block = 16x16, tensor_scale = decode>'}}
  %t = nvfp4.transpose %w : !nvfp4.tensor<32x64xf4E2M1FN, scale = f8E4M3FN, block = 16x16, tensor_scale = decode>
      -> !nvfp4.tensor<64x32xf4E2M1FN, scale = f8E4M3FN, block = 16x16>
  return
}

// -----

func.func @swizzle_scales_c1_kind(%w: !nvfp4.tensor<32x64xf4E2M1FN, scale = f8E4M3FN, block = 1x16, tensor_scale = decode>) {
  // expected-error @+1 {{'nvfp4.swizzle_scales' op result type}}
  %t = nvfp4.swizzle_scales %w : !nvfp4.tensor<32x64xf4E2M1FN, scale = f8E4M3FN, block = 1x16, tensor_scale = decode>
      -> !nvfp4.tensor<32x64xf4E2M1FN, scale = f8E4M3FN, block = 1x16, layout = swizzled_128x4>
  return
}
