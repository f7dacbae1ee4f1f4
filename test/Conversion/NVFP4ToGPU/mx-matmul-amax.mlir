// RUN: nvfp4-opt %s --convert-nvfp4-to-gpu="chip=sm_90a mx-gemm=simt" | FileCheck %s --check-prefix=SIMT
// RUN: nvfp4-opt %s --convert-nvfp4-to-gpu="chip=sm_90a mx-gemm=tensor-core" | FileCheck %s --check-prefix=WGMMA
// RUN: nvfp4-opt %s --convert-nvfp4-to-gpu="chip=sm_100a" | FileCheck %s --check-prefix=TCGEN05
// RUN: nvfp4-opt %s --convert-nvfp4-to-gpu="chip=sm_120a" | FileCheck %s --check-prefix=MMA

// An MX GEMM with the amax of its result (what nvfp4-fuse-quantization's
// fuse-output-amax asks of a GEMM whose output an NVFP4 quantization
// reads, e.g. an MXFP8 attention projection feeding an NVFP4 layer): every
// form writes it from its own epilogue into a zero-filled i32 word (FP32
// bits), which the host function loads as the f32 result; no amax pass
// over C. The kernels are named `_amax` so they never collide with the
// same GEMM without one.

// SIMT-LABEL: func.func @amax_mxfp8
// SIMT: %[[AMAX:.*]] = gpu.alloc () : memref<1xi32>
// SIMT: gpu.memset %[[AMAX]]
// SIMT: gpu.launch_func @nvfp4_kernels::@nvfp4_scaled_matmul_128x64x256_mxfp8_e4m3_mxfp8_e4m3_to_bf16_amax_simt
// SIMT-SAME: %{{.*}} : memref<8192xbf16>, %[[AMAX]] : memref<1xi32>)
// SIMT-NOT: nvfp4_amax_
// SIMT: %[[BITS:.*]] = memref.load %[[AMAX]]
// SIMT: %[[F:.*]] = arith.bitcast %[[BITS]] : i32 to f32
// SIMT: return %{{.*}}, %[[F]]

// The same GEMM without an amax is another kernel.
// SIMT-LABEL: func.func @plain_mxfp8
// SIMT: gpu.launch_func @nvfp4_kernels::@nvfp4_scaled_matmul_128x64x256_mxfp8_e4m3_mxfp8_e4m3_to_bf16_simt
// SIMT-SAME: %{{.*}} : memref<8192xbf16>)

// The SIMT kernel: |C| of the stored (rounded) value, 0 past C, reduced
// over the warp and added with one atomic max.
// SIMT: gpu.func @nvfp4_scaled_matmul_128x64x256_mxfp8_e4m3_mxfp8_e4m3_to_bf16_amax_simt({{.*}}, %[[OUT:.*]]: memref<1xi32>)
// SIMT: %[[V:.*]] = scf.if
// SIMT: memref.store
// SIMT: math.absf
// SIMT: } else {
// SIMT: arith.constant 0.000000e+00 : f32
// SIMT: gpu.shuffle xor %[[V]]
// SIMT: memref.atomic_rmw maxs %{{.*}}, %[[OUT]]

// WGMMA-LABEL: func.func @amax_mxfp8
// WGMMA: %[[AMAX:.*]] = gpu.alloc () : memref<1xi32>
// WGMMA: gpu.launch_func @nvfp4_kernels::@nvfp4_dequantize_128x256_mxfp8_e4m3_to_bf16
// WGMMA: gpu.launch_func @nvfp4_kernels::@nvfp4_dequantize_64x256_mxfp8_e4m3_to_bf16
// WGMMA: gpu.launch_func @nvfp4_kernels::@nvfp4_scaled_matmul_128x64x256_mxfp8_e4m3_mxfp8_e4m3_to_bf16_amax_wgmma_128x128x256_s0_d4w0_p16_ts
// WGMMA-SAME: %[[AMAX]] : memref<1xi32>)
// WGMMA-NOT: nvfp4_amax_
// WGMMA: memref.load %[[AMAX]]
// WGMMA-LABEL: func.func @plain_mxfp8
// WGMMA: @nvfp4_scaled_matmul_128x64x256_mxfp8_e4m3_mxfp8_e4m3_to_bf16_wgmma_128x128x256_s0_d4w0_p16_ts
// WGMMA-SAME: dynamic_shared_memory_size
// WGMMA-NOT: memref<1xi32>)
// WGMMA: return

// TCGEN05-LABEL: func.func @amax_mxfp8
// TCGEN05: %[[AMAX:.*]] = gpu.alloc () : memref<1xi32>
// TCGEN05: gpu.launch_func @nvfp4_kernels::@nvfp4_scaled_matmul_128x64x256_mxfp8_e4m3_mxfp8_e4m3_to_bf16_amax_tcgen05_128x128x128_s4
// TCGEN05-SAME: %[[AMAX]] : memref<1xi32>)
// TCGEN05-NOT: nvfp4_amax_
// TCGEN05: memref.load %[[AMAX]]
// TCGEN05-LABEL: func.func @amax_mxfp4
// TCGEN05: @nvfp4_scaled_matmul_128x64x256_mxfp4_mxfp4_to_f32_amax_tcgen05_128x128x256_s4
// TCGEN05-SAME: memref<1xi32>)

// MMA-LABEL: func.func @amax_mxfp8
// MMA: %[[AMAX:.*]] = gpu.alloc () : memref<1xi32>
// MMA: gpu.launch_func @nvfp4_kernels::@nvfp4_scaled_matmul_128x64x256_mxfp8_e4m3_mxfp8_e4m3_to_bf16_amax_mma_sync_128x128x128_s2_ts
// MMA-SAME: %[[AMAX]] : memref<1xi32>)
// MMA-NOT: nvfp4_amax_
// MMA: memref.load %[[AMAX]]
// MMA-LABEL: func.func @amax_mxfp4
// MMA: @nvfp4_scaled_matmul_128x64x256_mxfp4_mxfp4_to_f32_amax_mma_sync_128x128x256_s2_ts
// MMA-SAME: memref<1xi32>)
func.func @amax_mxfp8(%a: !nvfp4.tensor<128x256xf8E4M3FN, scale = f8E8M0FNU, block = 1x32>,
                      %b: !nvfp4.tensor<64x256xf8E4M3FN, scale = f8E8M0FNU, block = 1x32>)
    -> (tensor<128x64xbf16>, f32) {
  %c, %m = nvfp4.scaled_matmul %a, %b
      : !nvfp4.tensor<128x256xf8E4M3FN, scale = f8E8M0FNU, block = 1x32>,
        !nvfp4.tensor<64x256xf8E4M3FN, scale = f8E8M0FNU, block = 1x32>
      -> tensor<128x64xbf16>, f32
  return %c, %m : tensor<128x64xbf16>, f32
}

func.func @plain_mxfp8(%a: !nvfp4.tensor<128x256xf8E4M3FN, scale = f8E8M0FNU, block = 1x32>,
                       %b: !nvfp4.tensor<64x256xf8E4M3FN, scale = f8E8M0FNU, block = 1x32>)
    -> tensor<128x64xbf16> {
  %c = nvfp4.scaled_matmul %a, %b
      : !nvfp4.tensor<128x256xf8E4M3FN, scale = f8E8M0FNU, block = 1x32>,
        !nvfp4.tensor<64x256xf8E4M3FN, scale = f8E8M0FNU, block = 1x32>
      -> tensor<128x64xbf16>
  return %c : tensor<128x64xbf16>
}

func.func @amax_mxfp4(%a: !nvfp4.tensor<128x256xf4E2M1FN, scale = f8E8M0FNU, block = 1x32>,
                      %b: !nvfp4.tensor<64x256xf4E2M1FN, scale = f8E8M0FNU, block = 1x32>)
    -> (tensor<128x64xf32>, f32) {
  %c, %m = nvfp4.scaled_matmul %a, %b
      : !nvfp4.tensor<128x256xf4E2M1FN, scale = f8E8M0FNU, block = 1x32>,
        !nvfp4.tensor<64x256xf4E2M1FN, scale = f8E8M0FNU, block = 1x32>
      -> tensor<128x64xf32>, f32
  return %c, %m : tensor<128x64xf32>, f32
}
