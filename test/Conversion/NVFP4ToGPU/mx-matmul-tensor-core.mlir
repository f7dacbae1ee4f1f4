// RUN: nvfp4-opt %s --convert-nvfp4-to-gpu=chip=sm_90a | FileCheck %s
// RUN: nvfp4-opt %s --convert-nvfp4-to-gpu="chip=sm_90a mx-gemm=tensor-core" | FileCheck %s --check-prefix=FORCED
// RUN: nvfp4-opt %s --convert-nvfp4-to-gpu="chip=sm_90a mx-gemm=simt" | FileCheck %s --check-prefix=SIMT

// The MX GEMM's tensor-core form on sm_90a (MXKernels.cpp, BF16Gemm.cpp):
// both operands decoded into BF16 scratch by the dequantize kernel, then
// the route's wgmma kernel fed by TMA from the scratch (BF16 tensor maps,
// 128-byte swizzle, zero fill past K), alpha straight into the epilogue,
// C through the TMA-store epilogue (_ts, C's tensor map) where its rows are
// 16-byte multiples and by direct stores otherwise.
// The rule takes it from 2^22 multiply-adds; below, the SIMT kernel runs.
// mx-gemm forces either. (Blackwell's block-scaled MMAs:
// mx-matmul-tcgen05.mlir, mx-matmul-mma-sync.mlir.)

// CHECK-LABEL: func.func @large_mxfp8
// CHECK-SAME: %[[ALPHA:[a-z0-9]+]]: f32
// CHECK: %[[SA:.*]] = gpu.alloc () : memref<204800xbf16>
// CHECK: gpu.launch_func @nvfp4_kernels::@nvfp4_dequantize_200x1024_mxfp8_e4m3_to_bf16
// CHECK-SAME: args(%{{.*}} : memref<204800xi8>, %{{.*}} : memref<6400xi8>, %[[SA]] : memref<204800xbf16>)
// CHECK: %[[SB:.*]] = gpu.alloc () : memref<393216xbf16>
// CHECK: gpu.launch_func @nvfp4_kernels::@nvfp4_dequantize_384x1024_mxfp8_e5m2_swizzled_to_bf16
// CHECK-SAME: %[[SB]] : memref<393216xbf16>)
// CHECK: nvgpu.tma.create.descriptor %{{.*}} box[%{{.*}}, %{{.*}}, %{{.*}}] : memref<*xbf16> -> <tensor = memref<1x128x64xbf16, 3>, swizzle = swizzle_128b, l2promo = l2promo_256b, oob = zero, interleave = none>
// CHECK: nvgpu.tma.create.descriptor %{{.*}} : memref<*xbf16> -> <tensor = memref<1x256x64xbf16, 3>
// CHECK: nvgpu.tma.create.descriptor %{{.*}} : memref<*xf32> -> <tensor = memref<1x16x32xf32, 3>
// CHECK: gpu.launch_func @nvfp4_kernels::@nvfp4_scaled_matmul_200x384x1024_mxfp8_e4m3_mxfp8_e5m2_swizzled_to_f32_wgmma_128x256x256_s0_d4w0_p16_ts
// CHECK-SAME: threads in (%{{.*}}, %{{.*}}, %{{.*}}) dynamic_shared_memory_size
// CHECK-SAME: %[[ALPHA]] : f32, %{{.*}} : !nvgpu.tensormap.descriptor<tensor = memref<1x16x32xf32, 3>
// SIMT-LABEL: func.func @large_mxfp8
// SIMT-NOT: _to_bf16
// SIMT: gpu.launch_func @nvfp4_kernels::@nvfp4_scaled_matmul_200x384x1024_mxfp8_e4m3_mxfp8_e5m2_swizzled_to_f32_simt
func.func @large_mxfp8(%a: !nvfp4.tensor<200x1024xf8E4M3FN, scale = f8E8M0FNU, block = 1x32>,
                       %b: !nvfp4.tensor<384x1024xf8E5M2, scale = f8E8M0FNU, block = 1x32, layout = swizzled_128x4>,
                       %alpha: f32) -> tensor<200x384xf32> {
  %c = nvfp4.scaled_matmul %a, %b alpha(%alpha)
      : !nvfp4.tensor<200x1024xf8E4M3FN, scale = f8E8M0FNU, block = 1x32>,
        !nvfp4.tensor<384x1024xf8E5M2, scale = f8E8M0FNU, block = 1x32, layout = swizzled_128x4>
      -> tensor<200x384xf32>
  return %c : tensor<200x384xf32>
}

// MXFP4 (packed codes), batched, K = 96 (not a multiple of the K step):
// 2 x 64 x 64 x 96 multiply-adds are below the rule's threshold, so only a
// forced tensor-core GEMM decodes; alpha defaults to 1.
// CHECK-LABEL: func.func @small_mxfp4
// CHECK-NOT: _to_bf16
// CHECK: gpu.launch_func @nvfp4_kernels::@nvfp4_scaled_matmul_2x64x64x96_mxfp4_mxfp4_to_bf16_simt
// FORCED-LABEL: func.func @small_mxfp4
// FORCED: %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// FORCED: gpu.launch_func @nvfp4_kernels::@nvfp4_dequantize_2x64x96_mxfp4_to_bf16
// FORCED-SAME: args(%{{.*}} : memref<6144xi8>, %{{.*}} : memref<384xi8>, %{{.*}} : memref<12288xbf16>)
// FORCED: gpu.launch_func @nvfp4_kernels::@nvfp4_dequantize_2x64x96_mxfp4_to_bf16
// FORCED: gpu.launch_func @nvfp4_kernels::@nvfp4_scaled_matmul_2x64x64x96_mxfp4_mxfp4_to_bf16_wgmma_128x128x256_s0_d4w0_p16_ts
// FORCED-SAME: %[[ONE]] : f32, %{{.*}} : !nvgpu.tensormap.descriptor<tensor = memref<1x16x64xbf16, 3>
func.func @small_mxfp4(%a: !nvfp4.tensor<2x64x96xf4E2M1FN, scale = f8E8M0FNU, block = 1x32>,
                       %b: !nvfp4.tensor<2x64x96xf4E2M1FN, scale = f8E8M0FNU, block = 1x32>) -> tensor<2x64x64xbf16> {
  %c = nvfp4.scaled_matmul %a, %b
      : !nvfp4.tensor<2x64x96xf4E2M1FN, scale = f8E8M0FNU, block = 1x32>,
        !nvfp4.tensor<2x64x96xf4E2M1FN, scale = f8E8M0FNU, block = 1x32>
      -> tensor<2x64x64xbf16>
  return %c : tensor<2x64x64xbf16>
}

// N = 100 BF16 values are 200 bytes a row of C: no tensor map of C, the
// direct-store epilogue (no _ts).
// FORCED-LABEL: func.func @rows_of_200_bytes
// FORCED: gpu.launch_func @nvfp4_kernels::@nvfp4_scaled_matmul_100x100x256_mxfp8_e4m3_mxfp8_e4m3_to_bf16_wgmma_128x128x256_s0_d4w0_p16 blocks
// FORCED-SAME: %{{.*}} : f32, %{{.*}} : memref<10000xbf16>)
func.func @rows_of_200_bytes(%a: !nvfp4.tensor<100x256xf8E4M3FN, scale = f8E8M0FNU, block = 1x32>,
                             %b: !nvfp4.tensor<100x256xf8E4M3FN, scale = f8E8M0FNU, block = 1x32>) -> tensor<100x100xbf16> {
  %c = nvfp4.scaled_matmul %a, %b
      : !nvfp4.tensor<100x256xf8E4M3FN, scale = f8E8M0FNU, block = 1x32>,
        !nvfp4.tensor<100x256xf8E4M3FN, scale = f8E8M0FNU, block = 1x32>
      -> tensor<100x100xbf16>
  return %c : tensor<100x100xbf16>
}

// The decode kernel: per element the E8M0 scale times the decoded code in
// FP32, one RNE conversion to BF16 (docs/Numerics.md 11.7).
// FORCED: gpu.func @nvfp4_dequantize_2x64x96_mxfp4_to_bf16
// FORCED-COUNT-32: arith.truncf %{{.*}} : f32 to bf16
// FORCED: gpu.func @nvfp4_scaled_matmul_2x64x64x96_mxfp4_mxfp4_to_bf16_wgmma_128x128x256_s0_d4w0_p16_ts
// FORCED: nvvm.wgmma.mma_async
// FORCED-SAME: bf16
