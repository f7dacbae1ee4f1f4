// RUN: nvfp4-opt %s --convert-nvfp4-to-gpu='chip=sm_90a gemm-schedule=128x128x256_s3_d3w1_p2_g4' | FileCheck %s
// RUN: not nvfp4-opt %s --convert-nvfp4-to-gpu='chip=sm_90a gemm-schedule=128x256x256_s4_d2w1_p8' 2>&1 | FileCheck %s --check-prefix=UNFIT
// RUN: not nvfp4-opt %s --convert-nvfp4-to-gpu='chip=sm_90a gemm-schedule=128x128' 2>&1 | FileCheck %s --check-prefix=SYNTAX
// RUN: not nvfp4-opt %s --convert-nvfp4-to-gpu='chip=sm_90a gemm-schedule=128x128x64_s4' 2>&1 | FileCheck %s --check-prefix=KSTEP
// RUN: not nvfp4-opt %s --convert-nvfp4-to-gpu='chip=sm_90a gemm-schedule=128x128x128_s4' 2>&1 | FileCheck %s --check-prefix=KHALF
// RUN: not nvfp4-opt %s --convert-nvfp4-to-gpu='chip=sm_90a gemm-schedule=128x256x256_s2_d2w1_p8_g0' 2>&1 | FileCheck %s --check-prefix=LIMIT

// The gemm-schedule option forces the tensor-core schedule: the kernel
// name carries it, a persistent grid is min(tiles, grid limit).

!a = !nvfp4.tensor<256x512xf4E2M1FN, scale = f8E4M3FN, block = 1x16>
!b = !nvfp4.tensor<640x512xf4E2M1FN, scale = f8E4M3FN, block = 16x16>

// CHECK-LABEL: func.func @forced
// CHECK: %[[GRID:.*]] = arith.constant 4 : index
// CHECK: gpu.launch_func @nvfp4_kernels::@nvfp4_scaled_matmul_256x640x512_1x16_16x16_to_f32_wgmma_128x128x256_s3_d3w1_p2_g4
// CHECK-SAME: blocks in (%[[GRID]],
func.func @forced(%a: !a, %b: !b) -> tensor<256x640xf32> {
  %c = nvfp4.scaled_matmul %a, %b : !a, !b -> tensor<256x640xf32>
  return %c : tensor<256x640xf32>
}

// SYNTAX: error: gemm-schedule '128x128': no stage count _sN (expected e.g. 128x256x256_s2_d2w1_p8, 128x128_s4 or skinny16x16_w8)
// KSTEP: error: gemm-schedule '128x128x64_s4': the K step is 256 or 128
// The K step of 128 (64-byte code rows) is the sm_120a kernel's.
// KHALF: error: 'nvfp4.scaled_matmul' op cannot use gemm-schedule=128x128x128_s4: a K step of 128 is implemented for the sm_120a mma.sync kernel only
// LIMIT: error: gemm-schedule '128x256x256_s2_d2w1_p8_g0': a grid limit is _gN with N > 0

// A forced schedule the kernel cannot take is an error on the op, not a
// silent fallback: four FP4 stages of 54 KiB and two decoded stages of 48
// KiB exceed the 227 KiB of shared memory.
// UNFIT: error: 'nvfp4.scaled_matmul' op cannot use gemm-schedule=128x256x256_s4_d2w1_p8: the decoder-warpgroup kernel needs {{[0-9]+}} bytes of shared memory

// Clusters of 2 CTAs on the route (_c2): the kernel carries its cluster
// shape (a plain launch of whole clusters runs it), the grid is whole
// clusters, and B's tensor map boxes half of B's 256 rows: each CTA loads
// its half and multicasts it to both.
// RUN: nvfp4-opt %s --convert-nvfp4-to-gpu='chip=sm_90a gemm-schedule=128x256x256_s0_d4w0_p16_g5_c2' | FileCheck %s --check-prefix=CLUSTER
// CLUSTER-LABEL: func.func @forced
// CLUSTER: nvgpu.tma.create.descriptor {{.*}} -> <tensor = memref<1x128x64xf16, 3>
// CLUSTER: %[[GRID:.*]] = arith.constant 4 : index
// CLUSTER: gpu.launch_func @nvfp4_kernels::@nvfp4_scaled_matmul_256x640x512_1x16_16x16_to_f32_wgmma_128x256x256_s0_d4w0_p16_g5_c2
// CLUSTER-SAME: blocks in (%[[GRID]],
// CLUSTER: gpu.func @nvfp4_scaled_matmul_256x640x512_1x16_16x16_to_f32_wgmma_128x256x256_s0_d4w0_p16_g5_c2
// CLUSTER-SAME: nvvm.cluster_dim = array<i32: 2, 1, 1>
// CLUSTER: nvvm.cluster.arrive
// CLUSTER: nvvm.mapa
// RUN: not nvfp4-opt %s --convert-nvfp4-to-gpu='chip=sm_90a gemm-schedule=128x256x256_s2_d2w1_p8_c2' 2>&1 | FileCheck %s --check-prefix=NOCLUSTER
// NOCLUSTER: error: 'nvfp4.scaled_matmul' op cannot use gemm-schedule=128x256x256_s2_d2w1_p8_c2: clusters (_cN) are implemented for the route (_s0_dDw0) only
