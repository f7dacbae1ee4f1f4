// RUN: nvfp4-opt %s --convert-nvfp4-to-gpu=chip=sm_90a | FileCheck %s --check-prefix=CHECK
// RUN: nvfp4-opt %s --convert-nvfp4-to-gpu=chip=sm_120a | FileCheck %s --check-prefix=CHECK
// RUN: nvfp4-opt %s --convert-nvfp4-to-gpu="chip=sm_90a quantize-schedule=registers" | FileCheck %s --check-prefix=REGISTERS

// The default input paths of the 16x16 and dual quantize kernels
// (quantize-schedule unset; the measured rule at chosenRingStages in
// QuantizeKernels.cpp): ring2 for every 16x16 kernel and for the duals
// that round to nearest on both sides, the registers path for duals with
// stochastic rounding on either side. A default ring that does not fit in
// the chip's shared memory per block would fall back to the registers path
// (f32 16x16 ring2 takes 75264 bytes: it fits sm_120a's 101376, which
// ring3's 108032 did not); "registers" forces the registers path
// everywhere.

// CHECK-LABEL: func.func @tile_bf16
// CHECK: gpu.launch_func @nvfp4_kernels::@nvfp4_quantize_64x256xbf16_16x16_rn_amaxarg_ring2 blocks in {{.*}} dynamic_shared_memory_size
// REGISTERS-LABEL: func.func @tile_bf16
// REGISTERS: gpu.launch_func @nvfp4_kernels::@nvfp4_quantize_64x256xbf16_16x16_rn_amaxarg blocks in
// REGISTERS-NOT: dynamic_shared_memory_size
// REGISTERS: return
func.func @tile_bf16(%w: tensor<64x256xbf16>, %a: f32)
    -> !nvfp4.tensor<64x256xf4E2M1FN, scale = f8E4M3FN, block = 16x16> {
  %q = nvfp4.quantize %w amax(%a) : tensor<64x256xbf16>
      -> !nvfp4.tensor<64x256xf4E2M1FN, scale = f8E4M3FN, block = 16x16>
  return %q : !nvfp4.tensor<64x256xf4E2M1FN, scale = f8E4M3FN, block = 16x16>
}

// CHECK-LABEL: func.func @tile_f32
// CHECK: gpu.launch_func @nvfp4_kernels::@nvfp4_quantize_64x256xf32_16x16_rn_amaxarg_ring2 blocks in {{.*}} dynamic_shared_memory_size
// CHECK: return
func.func @tile_f32(%w: tensor<64x256xf32>, %a: f32)
    -> !nvfp4.tensor<64x256xf4E2M1FN, scale = f8E4M3FN, block = 16x16> {
  %q = nvfp4.quantize %w amax(%a) : tensor<64x256xf32>
      -> !nvfp4.tensor<64x256xf4E2M1FN, scale = f8E4M3FN, block = 16x16>
  return %q : !nvfp4.tensor<64x256xf4E2M1FN, scale = f8E4M3FN, block = 16x16>
}

// CHECK-LABEL: func.func @dual_x
// CHECK: gpu.launch_func @nvfp4_kernels::@nvfp4_dual_quantize_96x160xbf16_row_rn_amaxarg_col_rht_rn_amaxarg_mask55272_ring2 blocks in {{.*}} dynamic_shared_memory_size
// REGISTERS-LABEL: func.func @dual_x
// REGISTERS: gpu.launch_func @nvfp4_kernels::@nvfp4_dual_quantize_96x160xbf16_row_rn_amaxarg_col_rht_rn_amaxarg_mask55272 blocks in
// REGISTERS-NOT: dynamic_shared_memory_size
// REGISTERS: return
func.func @dual_x(%x: tensor<96x160xbf16>, %a: f32, %b: f32)
    -> (!nvfp4.tensor<96x160xf4E2M1FN, scale = f8E4M3FN, block = 1x16>,
        !nvfp4.tensor<160x96xf4E2M1FN, scale = f8E4M3FN, block = 1x16>) {
  %r, %c = nvfp4.dual_quantize %x amax(%a) columnwise amax(%b) hadamard(55272)
      : tensor<96x160xbf16> -> !nvfp4.tensor<96x160xf4E2M1FN, scale = f8E4M3FN, block = 1x16>,
                               !nvfp4.tensor<160x96xf4E2M1FN, scale = f8E4M3FN, block = 1x16>
  return %r, %c : !nvfp4.tensor<96x160xf4E2M1FN, scale = f8E4M3FN, block = 1x16>,
                  !nvfp4.tensor<160x96xf4E2M1FN, scale = f8E4M3FN, block = 1x16>
}

// CHECK-LABEL: func.func @dual_dy
// CHECK: gpu.launch_func @nvfp4_kernels::@nvfp4_dual_quantize_96x160xbf16_row_sr_amaxarg_col_rht_sr_amaxarg_mask55272 blocks in
// CHECK-NOT: dynamic_shared_memory_size
// CHECK: return
func.func @dual_dy(%x: tensor<96x160xbf16>, %a: f32, %b: f32, %s: i64, %t: i64)
    -> (!nvfp4.tensor<96x160xf4E2M1FN, scale = f8E4M3FN, block = 1x16>,
        !nvfp4.tensor<160x96xf4E2M1FN, scale = f8E4M3FN, block = 1x16>) {
  %r, %c = nvfp4.dual_quantize %x amax(%a) rounding<stochastic> seed(%s) columnwise amax(%b) hadamard(55272) rounding<stochastic> seed(%t)
      : tensor<96x160xbf16> -> !nvfp4.tensor<96x160xf4E2M1FN, scale = f8E4M3FN, block = 1x16>,
                               !nvfp4.tensor<160x96xf4E2M1FN, scale = f8E4M3FN, block = 1x16>
  return %r, %c : !nvfp4.tensor<96x160xf4E2M1FN, scale = f8E4M3FN, block = 1x16>,
                  !nvfp4.tensor<160x96xf4E2M1FN, scale = f8E4M3FN, block = 1x16>
}
