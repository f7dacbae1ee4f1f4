// RUN: nvfp4-opt %s --convert-nvfp4-to-gpu=chip=sm_120a | FileCheck %s

// The MX GEMM on sm_120a (MXBlockScaledGemm.cpp, MmaBlockScaleMatmul.cpp;
// docs/Blackwell.md section 10): the NVFP4 mma.sync kernel (288 threads, 8
// consumer warps) with 128-byte code rows in 2 stages and the scales staged
// as 128x4 atoms (the producer re-lays linear ones). MXFP8 takes
// nvvm.mma.block_scale m16n8k32 .kind::mxf8f6f4 x1 ue8m0 with the PTX types
// of its operands, byte-id j for MMA step j; MXFP4 m16n8k64 .kind::mxf4 x2
// ue8m0, byte-id 0 and 2; thread-id 0. C through the TMA store (_ts).

// CHECK-LABEL: func.func @mxfp8
// CHECK: nvgpu.tma.create.descriptor %{{.*}} : memref<*xi8> -> <tensor = memref<1x128x128xi8, 3>, swizzle = swizzle_128b
// CHECK: gpu.launch_func @nvfp4_kernels::@nvfp4_scaled_matmul_200x384x1024_mxfp8_e4m3_mxfp8_e5m2_swizzled_to_f32_mma_sync_128x128x128_s2_ts blocks in (%{{.*}}, %{{.*}}, %{{.*}}) threads in (%c288
func.func @mxfp8(%a: !nvfp4.tensor<200x1024xf8E4M3FN, scale = f8E8M0FNU, block = 1x32>,
                 %b: !nvfp4.tensor<384x1024xf8E5M2, scale = f8E8M0FNU, block = 1x32, layout = swizzled_128x4>,
                 %alpha: f32) -> tensor<200x384xf32> {
  %c = nvfp4.scaled_matmul %a, %b alpha(%alpha)
      : !nvfp4.tensor<200x1024xf8E4M3FN, scale = f8E8M0FNU, block = 1x32>,
        !nvfp4.tensor<384x1024xf8E5M2, scale = f8E8M0FNU, block = 1x32, layout = swizzled_128x4>
      -> tensor<200x384xf32>
  return %c : tensor<200x384xf32>
}

// CHECK-LABEL: func.func @mxfp4
// CHECK: gpu.launch_func @nvfp4_kernels::@nvfp4_scaled_matmul_2x128x96x512_mxfp4_mxfp4_to_bf16_mma_sync_128x128x256_s2_ts blocks in
func.func @mxfp4(%a: !nvfp4.tensor<2x128x512xf4E2M1FN, scale = f8E8M0FNU, block = 1x32>,
                 %b: !nvfp4.tensor<2x96x512xf4E2M1FN, scale = f8E8M0FNU, block = 1x32>) -> tensor<2x128x96xbf16> {
  %c = nvfp4.scaled_matmul %a, %b
      : !nvfp4.tensor<2x128x512xf4E2M1FN, scale = f8E8M0FNU, block = 1x32>,
        !nvfp4.tensor<2x96x512xf4E2M1FN, scale = f8E8M0FNU, block = 1x32>
      -> tensor<2x128x96xbf16>
  return %c : tensor<2x128x96xbf16>
}

// CHECK-LABEL: gpu.func @nvfp4_scaled_matmul_200x384x1024_mxfp8_e4m3_mxfp8_e5m2_swizzled_to_f32_mma_sync_128x128x128_s2_ts
// CHECK: nvvm.mma.block_scale {{.*}} scaleA[%{{.*}}, %c0_i16{{[_0-9]*}}, %c0_i16{{[_0-9]*}}] scaleB[%{{.*}}, %c0_i16{{[_0-9]*}}, %c0_i16{{[_0-9]*}}] {blockScaleFormat = #nvvm.block_scale_format<ue8m0>, kind = #nvvm.block_scale_kind<mxf8f6f4>, multiplicandAPtxType = #nvvm.mma_type<e4m3>, multiplicandBPtxType = #nvvm.mma_type<e5m2>, scaleVecSize = #nvvm.scale_vec_size<x1>, shape = #nvvm.shape<m = 16, n = 8, k = 32>}
// CHECK: nvvm.mma.block_scale {{.*}} scaleA[%{{.*}}, %c1_i16{{[_0-9]*}}, %c0_i16{{[_0-9]*}}] scaleB[%{{.*}}, %c1_i16{{[_0-9]*}}, %c0_i16{{[_0-9]*}}] {{.*}}kind = #nvvm.block_scale_kind<mxf8f6f4>
// CHECK: nvvm.mma.block_scale {{.*}} scaleA[%{{.*}}, %c2_i16{{[_0-9]*}}, %c0_i16{{[_0-9]*}}] scaleB[%{{.*}}, %c2_i16{{[_0-9]*}}, %c0_i16{{[_0-9]*}}] {{.*}}kind = #nvvm.block_scale_kind<mxf8f6f4>
// CHECK: nvvm.mma.block_scale {{.*}} scaleA[%{{.*}}, %c3_i16{{[_0-9]*}}, %c0_i16{{[_0-9]*}}] scaleB[%{{.*}}, %c3_i16{{[_0-9]*}}, %c0_i16{{[_0-9]*}}] {{.*}}kind = #nvvm.block_scale_kind<mxf8f6f4>

// CHECK-LABEL: gpu.func @nvfp4_scaled_matmul_2x128x96x512_mxfp4_mxfp4_to_bf16_mma_sync_128x128x256_s2_ts
// CHECK: nvvm.mma.block_scale {{.*}} scaleA[%{{.*}}, %c0_i16{{[_0-9]*}}, %c0_i16{{[_0-9]*}}] {{.*}} {blockScaleFormat = #nvvm.block_scale_format<ue8m0>, kind = #nvvm.block_scale_kind<mxf4>, multiplicandAPtxType = #nvvm.mma_type<e2m1>, multiplicandBPtxType = #nvvm.mma_type<e2m1>, scaleVecSize = #nvvm.scale_vec_size<x2>, shape = #nvvm.shape<m = 16, n = 8, k = 64>}
// CHECK: nvvm.mma.block_scale {{.*}} scaleA[%{{.*}}, %c2_i16{{[_0-9]*}}, %c0_i16{{[_0-9]*}}] {{.*}}kind = #nvvm.block_scale_kind<mxf4>
// CHECK-NOT: %c1_i16 = arith.constant 1 : i16
// CHECK: nvvm.mma.block_scale {{.*}} scaleA[%{{.*}}, %c0_i16{{[_0-9]*}}, %c0_i16{{[_0-9]*}}] {{.*}}kind = #nvvm.block_scale_kind<mxf4>
// CHECK: nvvm.mma.block_scale {{.*}} scaleA[%{{.*}}, %c2_i16{{[_0-9]*}}, %c0_i16{{[_0-9]*}}] {{.*}}kind = #nvvm.block_scale_kind<mxf4>
