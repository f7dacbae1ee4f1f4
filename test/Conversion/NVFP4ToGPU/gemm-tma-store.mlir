// RUN: nvfp4-opt %s --split-input-file --convert-nvfp4-to-gpu='chip=sm_90a gemm-schedule=128x256x256_s0_d4w0_p16_g5_ts' | FileCheck %s
// RUN: nvfp4-opt %s --split-input-file --convert-nvfp4-to-gpu='chip=sm_90a gemm-schedule=128x256x256_s0_d3w0_p16_ts' | FileCheck %s --check-prefix=D3

// The TMA-store epilogue (_ts, docs/GemmKernels.md "Epilogue through shared
// memory"): C goes to the kernel as a tensor map over [batch, M, N] with a
// box of 16 rows x 128 bytes and the 128-byte swizzle; each consumer warp
// stages a chunk in shared memory, fences it for the async proxy and one
// lane stores it with a bulk tensor copy, waiting before it reuses a
// buffer. The staging buffers (8 warps x 2 x 2 KiB) follow the decoded
// stages: 198656 + 32768 bytes with 4 stages.

!a = !nvfp4.tensor<256x512xf4E2M1FN, scale = f8E4M3FN, block = 1x16>
!b = !nvfp4.tensor<640x512xf4E2M1FN, scale = f8E4M3FN, block = 16x16>

// CHECK-LABEL: func.func @f32_out
// CHECK: nvgpu.tma.create.descriptor {{.*}} -> <tensor = memref<1x16x32xf32, 3>, swizzle = swizzle_128b
// CHECK: %[[SMEM:.*]] = arith.constant 231424 : i32
// CHECK: gpu.launch_func @nvfp4_kernels::@nvfp4_scaled_matmul_256x640x512_1x16_16x16_to_f32_wgmma_128x256x256_s0_d4w0_p16_g5_ts
// CHECK-SAME: dynamic_shared_memory_size %[[SMEM]]
// CHECK: gpu.func @nvfp4_scaled_matmul_256x640x512_1x16_16x16_to_f32_wgmma_128x256x256_s0_d4w0_p16_g5_ts
// CHECK-SAME: !nvgpu.tensormap.descriptor<tensor = memref<1x16x32xf32, 3>
// CHECK: nvvm.fence.proxy.acquire
// CHECK: nvvm.cp.async.bulk.wait_group 1 {read}
// CHECK: nvvm.bar.warp.sync
// CHECK: llvm.store {{.*}} : vector<2xf32>, !llvm.ptr<3>
// CHECK: nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>, space = #nvvm.shared_space<cta>}
// CHECK: nvvm.bar.warp.sync
// CHECK: nvvm.cp.async.bulk.tensor.global.shared.cta
// CHECK: nvvm.cp.async.bulk.commit.group
// At the end each storing warp waits for its stores.
// CHECK: nvvm.cp.async.bulk.wait_group 0
// CHECK-NOT: {read}
// CHECK: gpu.return
// D3-LABEL: func.func @f32_out
// D3: arith.constant 182272 : i32
// D3: gpu.launch_func @nvfp4_kernels::@nvfp4_scaled_matmul_256x640x512_1x16_16x16_to_f32_wgmma_128x256x256_s0_d3w0_p16_ts
func.func @f32_out(%a: !a, %b: !b) -> tensor<256x640xf32> {
  %c = nvfp4.scaled_matmul %a, %b : !a, !b -> tensor<256x640xf32>
  return %c : tensor<256x640xf32>
}

// -----

// Batched, ragged M and N, BF16 with the output amax: a box of 64 BF16
// columns written by stmatrix; the amax counts only values inside C (selected before the
// reduction), the map clips the stores.
!a = !nvfp4.tensor<2x200x512xf4E2M1FN, scale = f8E4M3FN, block = 1x16>
!b = !nvfp4.tensor<2x328x512xf4E2M1FN, scale = f8E4M3FN, block = 1x16>

// CHECK-LABEL: func.func @bf16_amax
// CHECK: memref.expand_shape {{.*}} output_shape [2, 200, 328] : memref<131200xbf16> into memref<2x200x328xbf16>
// CHECK: nvgpu.tma.create.descriptor {{.*}} -> <tensor = memref<1x16x64xbf16, 3>, swizzle = swizzle_128b
// CHECK: gpu.launch_func @nvfp4_kernels::@nvfp4_scaled_matmul_2x200x328x512_1x16_1x16_to_bf16_amax_wgmma_128x256x256_s0_d4w0_p16_g5_ts
// CHECK: gpu.func @nvfp4_scaled_matmul_2x200x328x512_1x16_1x16_to_bf16_amax_wgmma_128x256x256_s0_d4w0_p16_g5_ts
// 16-bit C: stmatrix.x4 of four BF16 pairs per lane.
// CHECK: arith.select {{.*}} : vector<2xbf16>
// CHECK: nvvm.stmatrix {{.*}} {eltType = #nvvm.ld_st_matrix_elt_type<b16>, layout = #nvvm.mma_layout<row>, shape = #nvvm.ld_st_matrix_shape<m = 8, n = 8>} : !llvm.ptr<3>, i32, i32, i32, i32
// CHECK: nvvm.cp.async.bulk.tensor.global.shared.cta
func.func @bf16_amax(%a: !a, %b: !b) -> (tensor<2x200x328xbf16>, f32) {
  %c, %m = nvfp4.scaled_matmul %a, %b : !a, !b -> tensor<2x200x328xbf16>, f32
  return %c, %m : tensor<2x200x328xbf16>, f32
}

// -----

// The quantizing epilogue writes codes and scales, not C: it keeps its
// direct stores under a TMA-store schedule, and its kernel name says so.
!a = !nvfp4.tensor<256x512xf4E2M1FN, scale = f8E4M3FN, block = 1x16>
!b = !nvfp4.tensor<512x512xf4E2M1FN, scale = f8E4M3FN, block = 16x16>
!c = !nvfp4.tensor<256x512xf4E2M1FN, scale = f8E4M3FN, block = 1x16>

// CHECK-LABEL: func.func @quantized
// CHECK: gpu.launch_func @nvfp4_kernels::@nvfp4_scaled_matmul_256x512x512_1x16_16x16_to_bf16_q_wgmma_128x256x256_s0_d4w0_p16_g5 blocks
// CHECK-NOT: nvvm.cp.async.bulk.tensor.global.shared.cta
// CHECK: gpu.return
func.func @quantized(%a: !a, %b: !b, %g: f32) -> !c {
  %q = nvfp4.scaled_matmul_quantize %a, %b amax(%g) : !a, !b -> !c
  return %q : !c
}
