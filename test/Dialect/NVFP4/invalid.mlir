// RUN: nvfp4-opt %s -split-input-file -verify-diagnostics

// One test per verifier rule, named after the rule's label in NVFP4Ops.td /
// NVFP4Types.td (e.g. @quantize_c2 is constraint (C2) of nvfp4.quantize).

//===----------------------------------------------------------------------===//
// !nvfp4.tensor
//===----------------------------------------------------------------------===//

// expected-error @+1 {{block-scaled tensor must have rank >= 2, got rank 1}}
func.func @tensor_t1_rank(%q: !nvfp4.tensor<256xf4E2M1FN, scale = f8E4M3FN, block = 1x16>)

// -----

// expected-error @+1 {{block-scaled tensor dimensions must be static and positive}}
func.func @tensor_t1_positive(%q: !nvfp4.tensor<0x32xf4E2M1FN, scale = f8E4M3FN, block = 1x16>)

// -----

// expected-error @+1 {{expected static shape}}
func.func @tensor_t1_static(%q: !nvfp4.tensor<?x32xf4E2M1FN, scale = f8E4M3FN, block = 1x16>)

// -----

// expected-error @+1 {{block-scaled tensor element type must be f4E2M1FN, f8E4M3FN or f8E5M2, got 'bf16'}}
func.func @tensor_t2(%q: !nvfp4.tensor<16x32xbf16, scale = f8E8M0FNU, block = 1x32>)

// -----

// expected-error @+1 {{block-scaled tensor element type must be f4E2M1FN, f8E4M3FN or f8E5M2, got 'f6E2M3FN'}}
func.func @tensor_t2_fp6(%q: !nvfp4.tensor<16x32xf6E2M3FN, scale = f8E8M0FNU, block = 1x32>)

// -----

// expected-error @+1 {{block-scaled tensor scale type must be f8E4M3FN or f8E8M0FNU, got 'f8E5M2'}}
func.func @tensor_t3(%q: !nvfp4.tensor<16x32xf4E2M1FN, scale = f8E5M2, block = 1x16>)

// -----

// expected-error @+1 {{block shape must be 1x16 or 16x16 with f8E4M3FN scales, got 1x32}}
func.func @tensor_t4(%q: !nvfp4.tensor<16x64xf4E2M1FN, scale = f8E4M3FN, block = 1x32>)

// -----

// expected-error @+1 {{block shape must be 1x32 with f8E8M0FNU scales, got 1x16}}
func.func @tensor_t4_mx(%q: !nvfp4.tensor<16x64xf4E2M1FN, scale = f8E8M0FNU, block = 1x16>)

// -----

// expected-error @+1 {{block shape must be 1x32 with f8E8M0FNU scales, got 32x32}}
func.func @tensor_t4_mx_2d(%q: !nvfp4.tensor<32x64xf8E4M3FN, scale = f8E8M0FNU, block = 32x32>)

// -----

// expected-error @+1 {{block 1x32 does not divide the trailing dimensions 16x48}}
func.func @tensor_t5_mx(%q: !nvfp4.tensor<16x48xf8E5M2, scale = f8E8M0FNU, block = 1x32>)

// -----

// expected-error @+1 {{f8E4M3FN scales (NVFP4) require f4E2M1FN elements, got 'f8E4M3FN' (MXFP8 has f8E8M0FNU scales)}}
func.func @tensor_t7(%q: !nvfp4.tensor<16x32xf8E4M3FN, scale = f8E4M3FN, block = 1x16>)

// -----

// expected-error @+1 {{block 1x16 does not divide the trailing dimensions 16x40}}
func.func @tensor_t5_cols(%q: !nvfp4.tensor<16x40xf4E2M1FN, scale = f8E4M3FN, block = 1x16>)

// -----

// expected-error @+1 {{block 16x16 does not divide the trailing dimensions 24x32}}
func.func @tensor_t5_rows(%q: !nvfp4.tensor<24x32xf4E2M1FN, scale = f8E4M3FN, block = 16x16>)

// -----

// expected-error @+1 {{unknown scale layout 'tiled' (expected linear or swizzled_128x4)}}
func.func @tensor_layout_unknown(%q: !nvfp4.tensor<16x32xf4E2M1FN, scale = f8E4M3FN, block = 1x16, layout = tiled>)

//===----------------------------------------------------------------------===//
// nvfp4.amax
//===----------------------------------------------------------------------===//

// -----

func.func @amax_c1(%x: tensor<16x32xi8>) -> f32 {
  // expected-error @+1 {{'nvfp4.amax' op operand #0 must be ranked tensor of bfloat16 type or 16-bit float or 32-bit float values, but got 'tensor<16x32xi8>'}}
  %0 = nvfp4.amax %x : tensor<16x32xi8>
  return %0 : f32
}

//===----------------------------------------------------------------------===//
// nvfp4.quantize
//===----------------------------------------------------------------------===//

// -----

func.func @quantize_c1(%x: tensor<16x64xbf16>) {
  // expected-error @+1 {{'nvfp4.quantize' op input shape 16x64 does not match result shape 16x32}}
  %0 = nvfp4.quantize %x : tensor<16x64xbf16>
      -> !nvfp4.tensor<16x32xf4E2M1FN, scale = f8E4M3FN, block = 1x16>
  return
}

// -----

// A dynamic size is printed as MLIR spells it, not as INT64_MIN.
func.func @quantize_c1_dynamic(%x: tensor<?x32xbf16>) {
  // expected-error @+1 {{'nvfp4.quantize' op input shape ?x32 does not match result shape 16x32}}
  %0 = nvfp4.quantize %x : tensor<?x32xbf16>
      -> !nvfp4.tensor<16x32xf4E2M1FN, scale = f8E4M3FN, block = 1x16>
  return
}

// -----

func.func @quantize_c2(%x: tensor<16x32xbf16>) {
  // expected-error @+1 {{'nvfp4.quantize' op stochastic rounding requires a seed operand}}
  %0 = nvfp4.quantize %x rounding<stochastic> : tensor<16x32xbf16>
      -> !nvfp4.tensor<16x32xf4E2M1FN, scale = f8E4M3FN, block = 1x16>
  return
}

// -----

func.func @quantize_c3(%x: tensor<16x32xbf16>, %s: i64) {
  // expected-error @+1 {{'nvfp4.quantize' op a seed is only meaningful with rounding<stochastic>}}
  %0 = nvfp4.quantize %x seed(%s) : tensor<16x32xbf16>
      -> !nvfp4.tensor<16x32xf4E2M1FN, scale = f8E4M3FN, block = 1x16>
  return
}

// -----

func.func @quantize_c4_element(%x: tensor<16x32xf32>) {
  // expected-error @+1 {{'nvfp4.quantize' op with hadamard, the input must be BF16 and the blocks 1x16 (one block per RHT chunk), got 'tensor<16x32xf32>' with 1x16 blocks}}
  %0 = nvfp4.quantize %x hadamard(55272) : tensor<16x32xf32>
      -> !nvfp4.tensor<16x32xf4E2M1FN, scale = f8E4M3FN, block = 1x16>
  return
}

// -----

func.func @quantize_c4_block(%x: tensor<16x32xbf16>) {
  // expected-error @+1 {{'nvfp4.quantize' op with hadamard, the input must be BF16 and the blocks 1x16 (one block per RHT chunk), got 'tensor<16x32xbf16>' with 16x16 blocks}}
  %0 = nvfp4.quantize %x hadamard(55272) : tensor<16x32xbf16>
      -> !nvfp4.tensor<16x32xf4E2M1FN, scale = f8E4M3FN, block = 16x16>
  return
}

// -----

func.func @quantize_c5_negative(%x: tensor<16x32xbf16>) {
  %a = arith.constant -6.0 : f32
  // expected-error @+1 {{'nvfp4.quantize' op the tensor amax must be non-negative and not NaN (an amax is max |x|), got -6.000000e+00 : f32}}
  %0 = nvfp4.quantize %x amax(%a) : tensor<16x32xbf16>
      -> !nvfp4.tensor<16x32xf4E2M1FN, scale = f8E4M3FN, block = 1x16>
  return
}

// -----

func.func @quantize_c5_nan(%x: tensor<16x32xbf16>) {
  %a = arith.constant 0x7FC00000 : f32
  // expected-error @+1 {{'nvfp4.quantize' op the tensor amax must be non-negative and not NaN}}
  %0 = nvfp4.quantize %x amax(%a) : tensor<16x32xbf16>
      -> !nvfp4.tensor<16x32xf4E2M1FN, scale = f8E4M3FN, block = 1x16>
  return
}

// -----

func.func @amax_c2_element(%x: tensor<16x32xf16>) {
  // expected-error @+1 {{'nvfp4.amax' op with hadamard, the input must be BF16 with a static last dimension that is a multiple of 16, got 'tensor<16x32xf16>'}}
  %0 = nvfp4.amax %x hadamard(55272) : tensor<16x32xf16>
  return
}

// -----

func.func @amax_c2_last_dim(%x: tensor<16x24xbf16>) {
  // expected-error @+1 {{'nvfp4.amax' op with hadamard, the input must be BF16 with a static last dimension that is a multiple of 16, got 'tensor<16x24xbf16>'}}
  %0 = nvfp4.amax %x hadamard(55272) : tensor<16x24xbf16>
  return
}

// -----

// 2^60 + 1 rows of 16: the element count would wrap to 16 modulo 2^64.
func.func @amax_c3(%x: tensor<1152921504606846977x16xbf16>) -> f32 {
  // expected-error @+1 {{'nvfp4.amax' op input 'tensor<1152921504606846977x16xbf16>' has more than 2^47 elements (the bound of !nvfp4.tensor, rule T6)}}
  %0 = nvfp4.amax %x : tensor<1152921504606846977x16xbf16>
  return %0 : f32
}

// -----

// Dynamic sizes are bounded at run time; the static ones alone overflow.
func.func @amax_c3_dynamic(%x: tensor<?x9223372036854775807x16xbf16>) -> f32 {
  // expected-error @+1 {{'nvfp4.amax' op input 'tensor<?x9223372036854775807x16xbf16>' has more than 2^47 elements}}
  %0 = nvfp4.amax %x : tensor<?x9223372036854775807x16xbf16>
  return %0 : f32
}

// -----

func.func @amax_hadamard_mask_range(%x: tensor<16x32xbf16>) {
  // expected-error @+1 {{'nvfp4.amax' op attribute 'hadamard' failed to satisfy constraint: 16-bit sign mask of the Random Hadamard Transform}}
  %0 = nvfp4.amax %x hadamard(65536) : tensor<16x32xbf16>
  return
}

// -----

func.func @quantize_input_element_type(%x: tensor<16x32xi32>) {
  // expected-error @+1 {{'nvfp4.quantize' op operand #0 must be ranked tensor of bfloat16 type or 16-bit float or 32-bit float values, but got 'tensor<16x32xi32>'}}
  %0 = nvfp4.quantize %x : tensor<16x32xi32>
      -> !nvfp4.tensor<16x32xf4E2M1FN, scale = f8E4M3FN, block = 1x16>
  return
}

// -----

func.func @quantize_seed_type(%x: tensor<16x32xbf16>, %s: i32) {
  // expected-error @+1 {{'nvfp4.quantize' op operand #1 must be 64-bit stochastic-rounding seed, but got 'i32'}}
  %0 = "nvfp4.quantize"(%x, %s) <{operandSegmentSizes = array<i32: 1, 0, 1>, rounding = #nvfp4.rounding<stochastic>}>
      : (tensor<16x32xbf16>, i32) -> !nvfp4.tensor<16x32xf4E2M1FN, scale = f8E4M3FN, block = 1x16>
  return
}

// -----

func.func @quantize_unknown_rounding(%x: tensor<16x32xbf16>) {
  // expected-error @+2 {{expected ::mlir::nvfp4::RoundingMode to be one of: nearest_even, stochastic}}
  // expected-error @+1 {{failed to parse NVFP4_RoundingModeAttr parameter 'value'}}
  %0 = nvfp4.quantize %x rounding<truncate> : tensor<16x32xbf16>
      -> !nvfp4.tensor<16x32xf4E2M1FN, scale = f8E4M3FN, block = 1x16>
  return
}

//===----------------------------------------------------------------------===//
// nvfp4.dual_quantize
//===----------------------------------------------------------------------===//

// -----

func.func @dual_quantize_c1(%x: tensor<32x48xbf16>) {
  // expected-error @+1 {{'nvfp4.dual_quantize' op input shape 32x48 does not match rowwise result shape 32x64}}
  %r, %c = nvfp4.dual_quantize %x columnwise : tensor<32x48xbf16>
      -> !nvfp4.tensor<32x64xf4E2M1FN, scale = f8E4M3FN, block = 1x16>, !nvfp4.tensor<64x32xf4E2M1FN, scale = f8E4M3FN, block = 1x16>
  return
}

// -----

func.func @dual_quantize_c2(%x: tensor<32x64xbf16>) {
  // expected-error @+1 {{'nvfp4.dual_quantize' op columnwise result shape 32x64 should be 64x32 (the input's with the last two dimensions swapped)}}
  %r, %c = nvfp4.dual_quantize %x columnwise : tensor<32x64xbf16>
      -> !nvfp4.tensor<32x64xf4E2M1FN, scale = f8E4M3FN, block = 1x16>, !nvfp4.tensor<32x64xf4E2M1FN, scale = f8E4M3FN, block = 1x16>
  return
}

// -----

func.func @dual_quantize_c3(%x: tensor<32x64xbf16>) {
  // expected-error @+1 {{'nvfp4.dual_quantize' op the columnwise result must be NVFP4 with 1x16 blocks, got '!nvfp4.tensor<64x32xf4E2M1FN, scale = f8E4M3FN, block = 16x16>'}}
  %r, %c = nvfp4.dual_quantize %x columnwise : tensor<32x64xbf16>
      -> !nvfp4.tensor<32x64xf4E2M1FN, scale = f8E4M3FN, block = 1x16>, !nvfp4.tensor<64x32xf4E2M1FN, scale = f8E4M3FN, block = 16x16>
  return
}

// -----

func.func @dual_quantize_c4_missing_seed(%x: tensor<32x64xbf16>, %s: i64) {
  // expected-error @+1 {{'nvfp4.dual_quantize' op stochastic rounding of the columnwise part requires a seed operand}}
  %r, %c = nvfp4.dual_quantize %x rounding<stochastic> seed(%s)
      columnwise rounding<stochastic> : tensor<32x64xbf16> -> !nvfp4.tensor<32x64xf4E2M1FN, scale = f8E4M3FN, block = 1x16>, !nvfp4.tensor<64x32xf4E2M1FN, scale = f8E4M3FN, block = 1x16>
  return
}

// -----

func.func @dual_quantize_c4_seed_without_sr(%x: tensor<32x64xbf16>, %s: i64) {
  // expected-error @+1 {{'nvfp4.dual_quantize' op a seed of the rowwise part is only meaningful with rounding<stochastic>}}
  %r, %c = nvfp4.dual_quantize %x seed(%s) columnwise
      : tensor<32x64xbf16> -> !nvfp4.tensor<32x64xf4E2M1FN, scale = f8E4M3FN, block = 1x16>, !nvfp4.tensor<64x32xf4E2M1FN, scale = f8E4M3FN, block = 1x16>
  return
}

// -----

func.func @dual_quantize_c5(%x: tensor<32x64xf32>) {
  // expected-error @+1 {{'nvfp4.dual_quantize' op with hadamard, the input must be BF16, got 'tensor<32x64xf32>'}}
  %r, %c = nvfp4.dual_quantize %x columnwise hadamard(55272)
      : tensor<32x64xf32> -> !nvfp4.tensor<32x64xf4E2M1FN, scale = f8E4M3FN, block = 1x16>, !nvfp4.tensor<64x32xf4E2M1FN, scale = f8E4M3FN, block = 1x16>
  return
}

//===----------------------------------------------------------------------===//
// nvfp4.dequantize
//===----------------------------------------------------------------------===//

// -----

func.func @dequantize_c1(%q: !nvfp4.tensor<16x32xf4E2M1FN, scale = f8E4M3FN, block = 1x16>) {
  // expected-error @+1 {{'nvfp4.dequantize' op input shape 16x32 does not match result shape 32x16}}
  %0 = nvfp4.dequantize %q : !nvfp4.tensor<16x32xf4E2M1FN, scale = f8E4M3FN, block = 1x16>
      -> tensor<32x16xbf16>
  return
}

//===----------------------------------------------------------------------===//
// nvfp4.hadamard
//===----------------------------------------------------------------------===//

// -----

func.func @hadamard_c1(%x: tensor<16x24xbf16>) {
  // expected-error @+1 {{'nvfp4.hadamard' op last dimension must be static and a multiple of 16, got 'tensor<16x24xbf16>'}}
  %0 = nvfp4.hadamard %x : tensor<16x24xbf16>
  return
}

// -----

func.func @hadamard_c1_dynamic(%x: tensor<16x?xbf16>) {
  // expected-error @+1 {{'nvfp4.hadamard' op last dimension must be static and a multiple of 16, got 'tensor<16x?xbf16>'}}
  %0 = nvfp4.hadamard %x : tensor<16x?xbf16>
  return
}

// -----

func.func @hadamard_c2(%x: tensor<16x32xf32>) {
  // expected-error @+1 {{'nvfp4.hadamard' op operand #0 must be ranked tensor of bfloat16 type values, but got 'tensor<16x32xf32>'}}
  %0 = nvfp4.hadamard %x : tensor<16x32xf32>
  return
}

// -----

func.func @hadamard_c3(%x: tensor<4611686018427387904x16xbf16>) {
  // expected-error @+1 {{'nvfp4.hadamard' op input 'tensor<4611686018427387904x16xbf16>' has more than 2^47 elements (the bound of !nvfp4.tensor, rule T6)}}
  %0 = nvfp4.hadamard %x : tensor<4611686018427387904x16xbf16>
  return
}

// -----

func.func @hadamard_sign_mask_range(%x: tensor<16x32xbf16>) {
  // expected-error @+1 {{attribute 'sign_mask' failed to satisfy constraint: 16-bit sign mask of the Random Hadamard Transform}}
  %0 = nvfp4.hadamard %x {sign_mask = 65536 : i32} : tensor<16x32xbf16>
  return
}

//===----------------------------------------------------------------------===//
// nvfp4.scaled_matmul
//===----------------------------------------------------------------------===//

// -----

func.func @scaled_matmul_c1(%a: !nvfp4.tensor<2x16x32xf4E2M1FN, scale = f8E4M3FN, block = 1x16>,
                            %b: !nvfp4.tensor<3x16x32xf4E2M1FN, scale = f8E4M3FN, block = 1x16>) {
  // expected-error @+1 {{'nvfp4.scaled_matmul' op lhs batch dimensions [2] do not match rhs batch dimensions [3]}}
  %0 = nvfp4.scaled_matmul %a, %b
      : !nvfp4.tensor<2x16x32xf4E2M1FN, scale = f8E4M3FN, block = 1x16>,
        !nvfp4.tensor<3x16x32xf4E2M1FN, scale = f8E4M3FN, block = 1x16> -> tensor<2x16x16xf32>
  return
}

// -----

func.func @scaled_matmul_c2(%a: !nvfp4.tensor<16x32xf4E2M1FN, scale = f8E4M3FN, block = 1x16>,
                            %b: !nvfp4.tensor<16x64xf4E2M1FN, scale = f8E4M3FN, block = 1x16>) {
  // expected-error @+1 {{'nvfp4.scaled_matmul' op contraction dimensions differ: lhs has K = 32, rhs has K = 64}}
  %0 = nvfp4.scaled_matmul %a, %b
      : !nvfp4.tensor<16x32xf4E2M1FN, scale = f8E4M3FN, block = 1x16>,
        !nvfp4.tensor<16x64xf4E2M1FN, scale = f8E4M3FN, block = 1x16> -> tensor<16x16xf32>
  return
}

// -----

func.func @scaled_matmul_c3(%a: !nvfp4.tensor<16x32xf4E2M1FN, scale = f8E4M3FN, block = 1x16>,
                            %b: !nvfp4.tensor<48x32xf4E2M1FN, scale = f8E4M3FN, block = 1x16>) {
  // expected-error @+1 {{'nvfp4.scaled_matmul' op result shape 48x16 should be 16x48 (batch x M x N)}}
  %0 = nvfp4.scaled_matmul %a, %b
      : !nvfp4.tensor<16x32xf4E2M1FN, scale = f8E4M3FN, block = 1x16>,
        !nvfp4.tensor<48x32xf4E2M1FN, scale = f8E4M3FN, block = 1x16> -> tensor<48x16xf32>
  return
}

// -----

func.func @scaled_matmul_c3_dynamic(%a: !nvfp4.tensor<16x32xf4E2M1FN, scale = f8E4M3FN, block = 1x16>) {
  // expected-error @+1 {{'nvfp4.scaled_matmul' op result shape ?x16 should be 16x16 (batch x M x N)}}
  %0 = nvfp4.scaled_matmul %a, %a
      : !nvfp4.tensor<16x32xf4E2M1FN, scale = f8E4M3FN, block = 1x16>,
        !nvfp4.tensor<16x32xf4E2M1FN, scale = f8E4M3FN, block = 1x16> -> tensor<?x16xf32>
  return
}

// -----

// Each operand has 2^47 elements (within rule T6); the product has 2^86.
func.func @scaled_matmul_c4(%a: !nvfp4.tensor<8796093022208x16xf4E2M1FN, scale = f8E4M3FN, block = 1x16>) {
  // expected-error @+1 {{'nvfp4.scaled_matmul' op result 'tensor<8796093022208x8796093022208xbf16>' has more than 2^47 elements}}
  %0 = nvfp4.scaled_matmul %a, %a
      : !nvfp4.tensor<8796093022208x16xf4E2M1FN, scale = f8E4M3FN, block = 1x16>,
        !nvfp4.tensor<8796093022208x16xf4E2M1FN, scale = f8E4M3FN, block = 1x16>
      -> tensor<8796093022208x8796093022208xbf16>
  return
}

// -----

func.func @scaled_matmul_result_element_type(%a: !nvfp4.tensor<16x32xf4E2M1FN, scale = f8E4M3FN, block = 1x16>) {
  // expected-error @+1 {{'nvfp4.scaled_matmul' op result #0 must be ranked tensor of bfloat16 type or 16-bit float or 32-bit float values, but got 'tensor<16x16xi32>'}}
  %0 = nvfp4.scaled_matmul %a, %a
      : !nvfp4.tensor<16x32xf4E2M1FN, scale = f8E4M3FN, block = 1x16>,
        !nvfp4.tensor<16x32xf4E2M1FN, scale = f8E4M3FN, block = 1x16> -> tensor<16x16xi32>
  return
}

//===----------------------------------------------------------------------===//
// nvfp4.pack / nvfp4.unpack
//===----------------------------------------------------------------------===//

// -----

func.func @pack_c1(%c: tensor<16x64xf4E2M1FN>, %s: tensor<16x2xf8E4M3FN>, %a: f32) {
  // expected-error @+1 {{'nvfp4.pack' op failed to verify that codes type matches the result's codes type}}
  %0 = "nvfp4.pack"(%c, %s, %a) : (tensor<16x64xf4E2M1FN>, tensor<16x2xf8E4M3FN>, f32)
      -> !nvfp4.tensor<16x32xf4E2M1FN, scale = f8E4M3FN, block = 1x16>
  return
}

// -----

func.func @pack_c2(%c: tensor<16x32xf4E2M1FN>, %s: tensor<16x4xf8E4M3FN>, %a: f32) {
  // expected-error @+1 {{'nvfp4.pack' op failed to verify that scales type matches the result's scales type}}
  %0 = "nvfp4.pack"(%c, %s, %a) : (tensor<16x32xf4E2M1FN>, tensor<16x4xf8E4M3FN>, f32)
      -> !nvfp4.tensor<16x32xf4E2M1FN, scale = f8E4M3FN, block = 1x16>
  return
}

// -----

func.func @pack_c3(%c: tensor<16x32xf4E2M1FN>, %s: tensor<16x2xf8E4M3FN>) {
  %a = arith.constant -1.0 : f32
  // expected-error @+1 {{'nvfp4.pack' op the tensor amax must be non-negative and not NaN}}
  %0 = nvfp4.pack %c, %s, %a : !nvfp4.tensor<16x32xf4E2M1FN, scale = f8E4M3FN, block = 1x16>
  return
}

// -----

func.func @pack_c4_sign(%c: tensor<16x32xf4E2M1FN>, %a: f32) {
  %s = arith.constant dense<-1.0> : tensor<16x2xf8E4M3FN>
  // expected-error @+1 {{'nvfp4.pack' op block scales must be non-negative and not NaN (E4M3 bits 0x00-0x7E), got 0xB8 at every element}}
  %0 = nvfp4.pack %c, %s, %a : !nvfp4.tensor<16x32xf4E2M1FN, scale = f8E4M3FN, block = 1x16>
  return
}

// -----

func.func @pack_c4_nan(%c: tensor<16x32xf4E2M1FN>, %a: f32) {
  %s = arith.constant dense<[[1.0, 1.0], [1.0, 1.0], [1.0, 1.0], [1.0, 1.0], [1.0, 1.0], [1.0, 1.0], [1.0, 1.0], [1.0, 1.0],
                             [1.0, 1.0], [1.0, 1.0], [1.0, 1.0], [1.0, 1.0], [1.0, 1.0], [1.0, 1.0], [1.0, 1.0], [1.0, 0x7F]]> : tensor<16x2xf8E4M3FN>
  // expected-error @+1 {{'nvfp4.pack' op block scales must be non-negative and not NaN (E4M3 bits 0x00-0x7E), got 0x7F at flat index 31}}
  %0 = nvfp4.pack %c, %s, %a : !nvfp4.tensor<16x32xf4E2M1FN, scale = f8E4M3FN, block = 1x16>
  return
}

// -----

func.func @unpack_c1(%q: !nvfp4.tensor<16x32xf4E2M1FN, scale = f8E4M3FN, block = 1x16>) {
  // expected-error @+1 {{'nvfp4.unpack' op failed to verify that codes type matches the input's codes type}}
  %c, %s, %a = "nvfp4.unpack"(%q) : (!nvfp4.tensor<16x32xf4E2M1FN, scale = f8E4M3FN, block = 1x16>)
      -> (tensor<32x16xf4E2M1FN>, tensor<16x2xf8E4M3FN>, f32)
  return
}

// -----

func.func @unpack_c2(%q: !nvfp4.tensor<16x32xf4E2M1FN, scale = f8E4M3FN, block = 1x16, layout = swizzled_128x4>) {
  // expected-error @+1 {{'nvfp4.unpack' op failed to verify that scales type matches the input's scales type}}
  %c, %s, %a = "nvfp4.unpack"(%q) : (!nvfp4.tensor<16x32xf4E2M1FN, scale = f8E4M3FN, block = 1x16, layout = swizzled_128x4>)
      -> (tensor<16x32xf4E2M1FN>, tensor<16x2xf8E4M3FN>, f32)
  return
}

//===----------------------------------------------------------------------===//
// nvfp4.swizzle_scales
//===----------------------------------------------------------------------===//

// -----

func.func @swizzle_scales_c1(%q: !nvfp4.tensor<32x32xf4E2M1FN, scale = f8E4M3FN, block = 1x16>) {
  // expected-error @+1 {{'nvfp4.swizzle_scales' op result type '!nvfp4.tensor<32x32xf4E2M1FN, scale = f8E4M3FN, block = 16x16, layout = swizzled_128x4>' may differ from input type '!nvfp4.tensor<32x32xf4E2M1FN, scale = f8E4M3FN, block = 1x16>' only in its scale layout}}
  %0 = nvfp4.swizzle_scales %q : !nvfp4.tensor<32x32xf4E2M1FN, scale = f8E4M3FN, block = 1x16>
      -> !nvfp4.tensor<32x32xf4E2M1FN, scale = f8E4M3FN, block = 16x16, layout = swizzled_128x4>
  return
}

//===----------------------------------------------------------------------===//
// nvfp4.transpose
//===----------------------------------------------------------------------===//

// -----

func.func @transpose_c1(%q: !nvfp4.tensor<32x64xf4E2M1FN, scale = f8E4M3FN, block = 1x16>) {
  // expected-error @+1 {{'nvfp4.transpose' op needs 16x16 blocks, got 1x16: only a tile scale stays exact under transposition}}
  %0 = nvfp4.transpose %q : !nvfp4.tensor<32x64xf4E2M1FN, scale = f8E4M3FN, block = 1x16>
      -> !nvfp4.tensor<64x32xf4E2M1FN, scale = f8E4M3FN, block = 1x16>
  return
}

// -----

func.func @transpose_c2(%q: !nvfp4.tensor<32x64xf4E2M1FN, scale = f8E4M3FN, block = 16x16, layout = swizzled_128x4>) {
  // expected-error @+1 {{'nvfp4.transpose' op needs linear scales; transpose before swizzling}}
  %0 = nvfp4.transpose %q : !nvfp4.tensor<32x64xf4E2M1FN, scale = f8E4M3FN, block = 16x16, layout = swizzled_128x4>
      -> !nvfp4.tensor<64x32xf4E2M1FN, scale = f8E4M3FN, block = 16x16, layout = swizzled_128x4>
  return
}

// -----

func.func @transpose_c3(%q: !nvfp4.tensor<2x32x64xf4E2M1FN, scale = f8E4M3FN, block = 16x16>) {
  // expected-error @+1 {{'nvfp4.transpose' op result type '!nvfp4.tensor<2x32x64xf4E2M1FN, scale = f8E4M3FN, block = 16x16>' should be '!nvfp4.tensor<2x64x32xf4E2M1FN, scale = f8E4M3FN, block = 16x16>'}}
  %0 = nvfp4.transpose %q : !nvfp4.tensor<2x32x64xf4E2M1FN, scale = f8E4M3FN, block = 16x16>
      -> !nvfp4.tensor<2x32x64xf4E2M1FN, scale = f8E4M3FN, block = 16x16>
  return
}

//===----------------------------------------------------------------------===//
// Model annotations (verified by the dialect on any op / function argument)
//===----------------------------------------------------------------------===//

// -----

func.func @annotation_layer_negative(%x: tensor<16x32xbf16>, %w: tensor<32x16xbf16>, %o: tensor<16x16xf32>) -> tensor<16x16xf32> {
  // expected-error @+1 {{'nvfp4.layer' must be a non-negative integer (the 0-based transformer block index), got -1 : i64}}
  %0 = linalg.matmul {nvfp4.layer = -1 : i64} ins(%x, %w : tensor<16x32xbf16>, tensor<32x16xbf16>) outs(%o : tensor<16x16xf32>) -> tensor<16x16xf32>
  return %0 : tensor<16x16xf32>
}

// -----

func.func @annotation_kind_empty(%x: tensor<16x32xbf16>, %w: tensor<32x16xbf16>, %o: tensor<16x16xf32>) -> tensor<16x16xf32> {
  // expected-error @+1 {{'nvfp4.kind' must be a non-empty string such as "attention" or "ffn", got ""}}
  %0 = linalg.matmul {nvfp4.kind = ""} ins(%x, %w : tensor<16x32xbf16>, tensor<32x16xbf16>) outs(%o : tensor<16x16xf32>) -> tensor<16x16xf32>
  return %0 : tensor<16x16xf32>
}

// -----

func.func @annotation_role_unknown(%x: tensor<16x32xbf16>, %w: tensor<32x16xbf16>, %o: tensor<16x16xf32>) -> tensor<16x16xf32> {
  // expected-error @+1 {{'nvfp4.role' must be one of "fprop", "dgrad", "wgrad", got "backward"}}
  %0 = linalg.matmul {nvfp4.role = "backward"} ins(%x, %w : tensor<16x32xbf16>, tensor<32x16xbf16>) outs(%o : tensor<16x16xf32>) -> tensor<16x16xf32>
  return %0 : tensor<16x16xf32>
}

// -----

func.func @annotation_precision_unknown(%x: tensor<16x32xbf16>, %w: tensor<32x16xbf16>, %o: tensor<16x16xf32>) -> tensor<16x16xf32> {
  // expected-error @+1 {{'nvfp4.precision' must be one of "nvfp4", "mxfp8", "mxfp4", "fp8", "bf16", got "int4"}}
  %0 = linalg.matmul {nvfp4.precision = "int4"} ins(%x, %w : tensor<16x32xbf16>, tensor<32x16xbf16>) outs(%o : tensor<16x16xf32>) -> tensor<16x16xf32>
  return %0 : tensor<16x16xf32>
}

// -----

func.func @annotation_weight_on_op(%x: tensor<16x32xbf16>, %w: tensor<32x16xbf16>, %o: tensor<16x16xf32>) -> tensor<16x16xf32> {
  // expected-error @+1 {{'nvfp4.weight' belongs on function arguments, not on operations}}
  %0 = linalg.matmul {nvfp4.weight} ins(%x, %w : tensor<16x32xbf16>, tensor<32x16xbf16>) outs(%o : tensor<16x16xf32>) -> tensor<16x16xf32>
  return %0 : tensor<16x16xf32>
}

// -----

func.func @annotation_unknown(%x: tensor<16x32xbf16>, %w: tensor<32x16xbf16>, %o: tensor<16x16xf32>) -> tensor<16x16xf32> {
  // expected-error @+1 {{unknown nvfp4 annotation 'nvfp4.precison' (expected nvfp4.layer, nvfp4.kind, nvfp4.role or nvfp4.precision)}}
  %0 = linalg.matmul {nvfp4.precison = "bf16"} ins(%x, %w : tensor<16x32xbf16>, tensor<32x16xbf16>) outs(%o : tensor<16x16xf32>) -> tensor<16x16xf32>
  return %0 : tensor<16x16xf32>
}

// -----

// expected-error @+1 {{'nvfp4.weight' is a unit attribute, got true}}
func.func @annotation_weight_not_unit(%w: tensor<32x16xbf16> {nvfp4.weight = true}) {
  return
}

// -----

// expected-error @+1 {{unknown nvfp4 argument annotation 'nvfp4.layer' (expected nvfp4.weight)}}
func.func @annotation_argument_unknown(%w: tensor<32x16xbf16> {nvfp4.layer = 1 : i64}) {
  return
}

// -----

// expected-error @+1 {{block-scaled tensor is too large: more than 2^47 elements}}
func.func @tensor_t6_rows(%q: !nvfp4.tensor<9223372036854775807x16xf4E2M1FN, scale = f8E4M3FN, block = 1x16>)

// -----

// The element count overflows int64 although every dimension fits.
// expected-error @+1 {{block-scaled tensor is too large: more than 2^47 elements}}
func.func @tensor_t6_product(%q: !nvfp4.tensor<65536x4294967296x4294967296xf4E2M1FN, scale = f8E4M3FN, block = 1x16>)

// -----

func.func @scaled_matmul_quantize_c3(%a: !nvfp4.tensor<32x64xf4E2M1FN, scale = f8E4M3FN, block = 1x16>,
                                     %b: !nvfp4.tensor<16x64xf4E2M1FN, scale = f8E4M3FN, block = 1x16>,
                                     %g: f32) {
  // expected-error @+1 {{'nvfp4.scaled_matmul_quantize' op result shape 32x32 should be 32x16 (batch x M x N)}}
  %0 = nvfp4.scaled_matmul_quantize %a, %b amax(%g)
      : !nvfp4.tensor<32x64xf4E2M1FN, scale = f8E4M3FN, block = 1x16>,
        !nvfp4.tensor<16x64xf4E2M1FN, scale = f8E4M3FN, block = 1x16>
      -> !nvfp4.tensor<32x32xf4E2M1FN, scale = f8E4M3FN, block = 1x16>
  return
}

// -----

func.func @scaled_matmul_quantize_c4(%a: !nvfp4.tensor<32x64xf4E2M1FN, scale = f8E4M3FN, block = 1x16>,
                                     %b: !nvfp4.tensor<32x64xf4E2M1FN, scale = f8E4M3FN, block = 1x16>,
                                     %g: f32) {
  // expected-error @+1 {{'nvfp4.scaled_matmul_quantize' op the result must have 1x16 blocks and linear scales (the epilogue quantizes runs of 16 along N), got '!nvfp4.tensor<32x32xf4E2M1FN, scale = f8E4M3FN, block = 16x16>'}}
  %0 = nvfp4.scaled_matmul_quantize %a, %b amax(%g)
      : !nvfp4.tensor<32x64xf4E2M1FN, scale = f8E4M3FN, block = 1x16>,
        !nvfp4.tensor<32x64xf4E2M1FN, scale = f8E4M3FN, block = 1x16>
      -> !nvfp4.tensor<32x32xf4E2M1FN, scale = f8E4M3FN, block = 16x16>
  return
}

// -----

func.func @scaled_matmul_quantize_c5(%a: !nvfp4.tensor<32x64xf4E2M1FN, scale = f8E4M3FN, block = 1x16>) {
  %g = arith.constant -2.0 : f32
  // expected-error @+1 {{'nvfp4.scaled_matmul_quantize' op the tensor amax must be non-negative and not NaN}}
  %0 = nvfp4.scaled_matmul_quantize %a, %a amax(%g)
      : !nvfp4.tensor<32x64xf4E2M1FN, scale = f8E4M3FN, block = 1x16>,
        !nvfp4.tensor<32x64xf4E2M1FN, scale = f8E4M3FN, block = 1x16>
      -> !nvfp4.tensor<32x32xf4E2M1FN, scale = f8E4M3FN, block = 1x16>
  return
}

// -----

func.func @scaled_matmul_quantize_intermediate(%a: !nvfp4.tensor<32x64xf4E2M1FN, scale = f8E4M3FN, block = 1x16>,
                                               %g: f32) {
  // expected-error @+1 {{'nvfp4.scaled_matmul_quantize' op attribute 'intermediate' failed to satisfy constraint: type attribute of bfloat16 type or 16-bit float or 32-bit float}}
  %0 = nvfp4.scaled_matmul_quantize %a, %a amax(%g) {intermediate = i8}
      : !nvfp4.tensor<32x64xf4E2M1FN, scale = f8E4M3FN, block = 1x16>,
        !nvfp4.tensor<32x64xf4E2M1FN, scale = f8E4M3FN, block = 1x16>
      -> !nvfp4.tensor<32x32xf4E2M1FN, scale = f8E4M3FN, block = 1x16>
  return
}

// -----

//===----------------------------------------------------------------------===//
// MX formats in the ops
//===----------------------------------------------------------------------===//

func.func @quantize_c6_amax(%x: tensor<16x64xbf16>, %a: f32) {
  // expected-error @+1 {{an amax operand is meaningless for mxfp8_e4m3: the MX formats have no tensor scale}}
  %q = nvfp4.quantize %x amax(%a) : tensor<16x64xbf16>
      -> !nvfp4.tensor<16x64xf8E4M3FN, scale = f8E8M0FNU, block = 1x32>
  return
}

// -----

func.func @quantize_c6_stochastic(%x: tensor<16x64xbf16>, %s: i64) {
  // expected-error @+1 {{quantize to mxfp4 supports only round to nearest even without hadamard}}
  %q = nvfp4.quantize %x rounding<stochastic> seed(%s) : tensor<16x64xbf16>
      -> !nvfp4.tensor<16x64xf4E2M1FN, scale = f8E8M0FNU, block = 1x32>
  return
}

// -----

func.func @quantize_c6_hadamard(%x: tensor<16x64xbf16>) {
  // expected-error @+1 {{quantize to mxfp8_e5m2 supports only round to nearest even without hadamard}}
  %q = nvfp4.quantize %x hadamard(55272) : tensor<16x64xbf16>
      -> !nvfp4.tensor<16x64xf8E5M2, scale = f8E8M0FNU, block = 1x32>
  return
}

// -----

func.func @dual_quantize_c3_mx(%x: tensor<32x64xbf16>) {
  // expected-error @+1 {{the rowwise result must be NVFP4 with 1x16 blocks, got '!nvfp4.tensor<32x64xf4E2M1FN, scale = f8E8M0FNU, block = 1x32>'}}
  %r, %c = nvfp4.dual_quantize %x columnwise : tensor<32x64xbf16>
      -> !nvfp4.tensor<32x64xf4E2M1FN, scale = f8E8M0FNU, block = 1x32>,
         !nvfp4.tensor<64x32xf4E2M1FN, scale = f8E8M0FNU, block = 1x32>
  return
}

// -----

func.func @scaled_matmul_c5(
    %a: !nvfp4.tensor<16x64xf4E2M1FN, scale = f8E4M3FN, block = 1x16>,
    %b: !nvfp4.tensor<32x64xf8E4M3FN, scale = f8E8M0FNU, block = 1x32>) {
  // expected-error @+1 {{lhs and rhs must both be NVFP4 or both MX, got nvfp4 and mxfp8_e4m3}}
  %c = nvfp4.scaled_matmul %a, %b
      : !nvfp4.tensor<16x64xf4E2M1FN, scale = f8E4M3FN, block = 1x16>,
        !nvfp4.tensor<32x64xf8E4M3FN, scale = f8E8M0FNU, block = 1x32>
      -> tensor<16x32xf32>
  return
}

// -----

func.func @scaled_matmul_quantize_c6(
    %a: !nvfp4.tensor<16x64xf8E4M3FN, scale = f8E8M0FNU, block = 1x32>,
    %b: !nvfp4.tensor<32x64xf8E4M3FN, scale = f8E8M0FNU, block = 1x32>, %m: f32) {
  // expected-error @+1 {{supports NVFP4 operands and results only, got '!nvfp4.tensor<16x64xf8E4M3FN, scale = f8E8M0FNU, block = 1x32>'}}
  %q = nvfp4.scaled_matmul_quantize %a, %b amax(%m)
      : !nvfp4.tensor<16x64xf8E4M3FN, scale = f8E8M0FNU, block = 1x32>,
        !nvfp4.tensor<32x64xf8E4M3FN, scale = f8E8M0FNU, block = 1x32>
      -> !nvfp4.tensor<16x32xf4E2M1FN, scale = f8E4M3FN, block = 1x16>
  return
}

// -----

func.func @pack_c4_e8m0(%codes: tensor<16x32xf4E2M1FN>, %a: f32) {
  %scales = arith.constant dense<0xFF> : tensor<16x1xf8E8M0FNU>
  // expected-error @+1 {{block scales must be non-negative and not NaN (E8M0 bits 0x00-0xFE), got 0xFF at every element}}
  %q = nvfp4.pack %codes, %scales, %a
      : !nvfp4.tensor<16x32xf4E2M1FN, scale = f8E8M0FNU, block = 1x32>
  return
}

// -----

func.func @pack_c2_mx(%codes: tensor<16x32xf8E4M3FN>, %scales: tensor<16x1xf8E4M3FN>, %a: f32) {
  // expected-error @+1 {{'nvfp4.pack' op failed to verify that scales type matches the result's scales type}}
  %q = "nvfp4.pack"(%codes, %scales, %a) : (tensor<16x32xf8E4M3FN>, tensor<16x1xf8E4M3FN>, f32)
      -> !nvfp4.tensor<16x32xf8E4M3FN, scale = f8E8M0FNU, block = 1x32>
  return
}

// -----

func.func @transpose_c1_mx(%q: !nvfp4.tensor<32x64xf8E4M3FN, scale = f8E8M0FNU, block = 1x32>) {
  // expected-error @+1 {{needs 16x16 blocks, got 1x32}}
  %t = nvfp4.transpose %q : !nvfp4.tensor<32x64xf8E4M3FN, scale = f8E8M0FNU, block = 1x32>
      -> !nvfp4.tensor<64x32xf8E4M3FN, scale = f8E8M0FNU, block = 1x32>
  return
}
