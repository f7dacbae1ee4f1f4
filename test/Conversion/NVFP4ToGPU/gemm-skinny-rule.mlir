// RUN: nvfp4-opt %s --convert-nvfp4-to-gpu='chip=sm_90a' | FileCheck %s

// The sm_90a rule for decode-like M (chooseGemmSchedule,
// docs/GemmKernels.md "Small M"): the skinny kernel where its CTAs fill
// the 132 SMs, with the byte decode (_e) and for M <= 16 the prefetch
// (_pf); for M <= 8 A staged in shared memory when it fits, times B's
// block scales with 16x16 blocks (_a_s), and at M = 1 two groups of 2
// chunks in flight (_u2) where a warp has 4; 32-row A tiles for M > 16;
// otherwise split-K.

!k4096 = !nvfp4.tensor<1x4096xf4E2M1FN, scale = f8E4M3FN, block = 1x16>
!w2304 = !nvfp4.tensor<2304x4096xf4E2M1FN, scale = f8E4M3FN, block = 16x16>
// CHECK-LABEL: func.func @one_token
// CHECK: gpu.launch_func @nvfp4_kernels::@nvfp4_scaled_matmul_1x2304x4096_1x16_16x16_to_bf16_skinny8x16_w8_u2_pf_a_s_e
func.func @one_token(%a: !k4096, %b: !w2304) -> tensor<1x2304xbf16> {
  %c = nvfp4.scaled_matmul %a, %b : !k4096, !w2304 -> tensor<1x2304xbf16>
  return %c : tensor<1x2304xbf16>
}

// A 1x16-blocked weight: staged A, B's scales per row in the loop.
!w2304r = !nvfp4.tensor<2304x4096xf4E2M1FN, scale = f8E4M3FN, block = 1x16>
// CHECK-LABEL: func.func @row_scaled_weight
// CHECK: gpu.launch_func @nvfp4_kernels::@nvfp4_scaled_matmul_1x2304x4096_1x16_1x16_to_bf16_skinny8x16_w8_u2_pf_a_e
func.func @row_scaled_weight(%a: !k4096, %b: !w2304r) -> tensor<1x2304xbf16> {
  %c = nvfp4.scaled_matmul %a, %b : !k4096, !w2304r -> tensor<1x2304xbf16>
  return %c : tensor<1x2304xbf16>
}

// 2 chunks per warp (K = 2048): one group of 2, the default (no _u).
!k2048 = !nvfp4.tensor<1x2048xf4E2M1FN, scale = f8E4M3FN, block = 1x16>
!w2304k = !nvfp4.tensor<2304x2048xf4E2M1FN, scale = f8E4M3FN, block = 16x16>
// CHECK-LABEL: func.func @two_chunks
// CHECK: gpu.launch_func @nvfp4_kernels::@nvfp4_scaled_matmul_1x2304x2048_1x16_16x16_to_bf16_skinny8x16_w8_pf_a_s_e blocks
func.func @two_chunks(%a: !k2048, %b: !w2304k) -> tensor<1x2304xbf16> {
  %c = nvfp4.scaled_matmul %a, %b : !k2048, !w2304k -> tensor<1x2304xbf16>
  return %c : tensor<1x2304xbf16>
}

// 8 rows x 4096 x 2 bytes of staged A exceed the static shared memory:
// 4 chunks per warp, but no _u2 where A is not staged (it measured slower).
!a8k = !nvfp4.tensor<8x4096xf4E2M1FN, scale = f8E4M3FN, block = 1x16>
// CHECK-LABEL: func.func @eight_tokens
// CHECK: gpu.launch_func @nvfp4_kernels::@nvfp4_scaled_matmul_8x2304x4096_1x16_16x16_to_bf16_skinny8x16_w8_pf_e blocks
func.func @eight_tokens(%a: !a8k, %b: !w2304) -> tensor<8x2304xbf16> {
  %c = nvfp4.scaled_matmul %a, %b : !a8k, !w2304 -> tensor<8x2304xbf16>
  return %c : tensor<8x2304xbf16>
}

// 8 rows x 14336 x 2 bytes of staged A exceed the static shared memory
// (14 chunks per warp: the default 2 in flight, no _u).
!a8 = !nvfp4.tensor<8x14336xf4E2M1FN, scale = f8E4M3FN, block = 1x16>
!w14336 = !nvfp4.tensor<2304x14336xf4E2M1FN, scale = f8E4M3FN, block = 16x16>
// CHECK-LABEL: func.func @long_k
// CHECK: gpu.launch_func @nvfp4_kernels::@nvfp4_scaled_matmul_8x2304x14336_1x16_16x16_to_bf16_skinny8x16_w8_pf_e blocks
func.func @long_k(%a: !a8, %b: !w14336) -> tensor<8x2304xbf16> {
  %c = nvfp4.scaled_matmul %a, %b : !a8, !w14336 -> tensor<8x2304xbf16>
  return %c : tensor<8x2304xbf16>
}

!a32 = !nvfp4.tensor<32x4096xf4E2M1FN, scale = f8E4M3FN, block = 1x16>
// CHECK-LABEL: func.func @thirty_two
// CHECK: gpu.launch_func @nvfp4_kernels::@nvfp4_scaled_matmul_32x2304x4096_1x16_16x16_to_bf16_skinny32x16_w8_e blocks
func.func @thirty_two(%a: !a32, %b: !w2304) -> tensor<32x2304xbf16> {
  %c = nvfp4.scaled_matmul %a, %b : !a32, !w2304 -> tensor<32x2304xbf16>
  return %c : tensor<32x2304xbf16>
}

// 64 tiles of 16 B rows leave half the SMs idle: split-K instead.
!a16 = !nvfp4.tensor<16x4096xf4E2M1FN, scale = f8E4M3FN, block = 1x16>
!w1024 = !nvfp4.tensor<1024x4096xf4E2M1FN, scale = f8E4M3FN, block = 16x16>
// CHECK-LABEL: func.func @narrow
// CHECK: gpu.launch_func @nvfp4_kernels::@nvfp4_scaled_matmul_16x1024x4096_1x16_16x16_to_f32_wgmma_128x128x256_s4_k16
func.func @narrow(%a: !a16, %b: !w1024) -> tensor<16x1024xbf16> {
  %c = nvfp4.scaled_matmul %a, %b : !a16, !w1024 -> tensor<16x1024xbf16>
  return %c : tensor<16x1024xbf16>
}
