// RUN: nvfp4-opt %s --convert-nvfp4-to-gpu=chip=sm_100a | FileCheck %s
// RUN: nvfp4-opt %s --convert-nvfp4-to-gpu=chip=sm_103a | FileCheck %s
// RUN: nvfp4-opt %s --convert-nvfp4-to-gpu="chip=sm_100a mx-gemm=simt" | FileCheck %s --check-prefix=SIMT

// The MX GEMM on sm_100a / sm_103a (MXBlockScaledGemm.cpp, Tcgen05Matmul.cpp;
// docs/Blackwell.md section 10): the NVFP4 tcgen05 kernel with the MX
// format as data. A K step is one 128-byte swizzle row of codes (TMA boxes
// 1 x 128 x 128 bytes: 128 MXFP8 or 256 MXFP4 codes), 4 MMAs of 32 bytes:
//
//   MXFP8  .kind::mxf8f6f4.block32 (= scale_vec::1X), K = 32, one 128x4
//          scale atom per operand and step (1 tcgen05.cp each); MMA j reads
//          byte j of the scale words: scale factor ID j in the descriptor
//          (bits 29-30 and 4-5) and in bits 30-31 of the scale addresses;
//   MXFP4  .kind::mxf4.block32 (= scale_vec::2X), K = 64, two atoms per
//          operand and step; MMA j reads atom j / 2, half word 2 (j % 2).
//
// Descriptors (InstrDescTest.cpp MXGemmKSteps): 0x08A00400 + ID (j << 29 |
// j << 4) for E4M3 x E5M2 (btype 1 at bit 10), 0x08A00000 + ID for E4M3 x
// E4M3, 0x08A00480 and 0x48A004A0 for MXFP4. The MMA's first K step
// overwrites (TMEM is not zeroed), the others accumulate. No decode
// kernels, no scratch: the MMA reads the codes and scales as they are.

// CHECK-LABEL: func.func @mxfp8
// CHECK-SAME: %[[ALPHA:[a-z0-9]+]]: f32
// CHECK-NOT: nvfp4_dequantize
// CHECK: nvgpu.tma.create.descriptor %{{.*}} : memref<*xi8> -> <tensor = memref<1x128x128xi8, 3>, swizzle = swizzle_128b, l2promo = l2promo_256b, oob = zero, interleave = none>
// CHECK: nvgpu.tma.create.descriptor %{{.*}} : memref<*xi8> -> <tensor = memref<1x128x128xi8, 3>, swizzle = swizzle_128b
// CHECK: gpu.launch_func @nvfp4_kernels::@nvfp4_scaled_matmul_200x384x1024_mxfp8_e4m3_mxfp8_e5m2_swizzled_to_f32_tcgen05_128x128x128_s4 blocks in (%{{.*}}, %{{.*}}, %{{.*}}) threads in (%c192
// CHECK-SAME: %[[ALPHA]] : f32
// SIMT-LABEL: func.func @mxfp8
// SIMT-NOT: tcgen05
// SIMT: gpu.launch_func @nvfp4_kernels::@nvfp4_scaled_matmul_200x384x1024_mxfp8_e4m3_mxfp8_e5m2_swizzled_to_f32_simt
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
// CHECK: %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK: gpu.launch_func @nvfp4_kernels::@nvfp4_scaled_matmul_2x128x96x512_mxfp4_mxfp4_to_bf16_tcgen05_128x128x256_s4 blocks in
// CHECK-SAME: %[[ONE]] : f32
func.func @mxfp4(%a: !nvfp4.tensor<2x128x512xf4E2M1FN, scale = f8E8M0FNU, block = 1x32>,
                 %b: !nvfp4.tensor<2x96x512xf4E2M1FN, scale = f8E8M0FNU, block = 1x32>) -> tensor<2x128x96xbf16> {
  %c = nvfp4.scaled_matmul %a, %b
      : !nvfp4.tensor<2x128x512xf4E2M1FN, scale = f8E8M0FNU, block = 1x32>,
        !nvfp4.tensor<2x96x512xf4E2M1FN, scale = f8E8M0FNU, block = 1x32>
      -> tensor<2x128x96xbf16>
  return %c : tensor<2x128x96xbf16>
}

// Shapes the block-scaled MMA does not take keep the SIMT kernel: K not a
// multiple of the K step (MXFP4: 256), and MXFP8 x MXFP4.
// CHECK-LABEL: func.func @not_a_k_step
// CHECK: gpu.launch_func @nvfp4_kernels::@nvfp4_scaled_matmul_64x64x128_mxfp4_mxfp4_to_f32_simt
func.func @not_a_k_step(%a: !nvfp4.tensor<64x128xf4E2M1FN, scale = f8E8M0FNU, block = 1x32>,
                        %b: !nvfp4.tensor<64x128xf4E2M1FN, scale = f8E8M0FNU, block = 1x32>) -> tensor<64x64xf32> {
  %c = nvfp4.scaled_matmul %a, %b
      : !nvfp4.tensor<64x128xf4E2M1FN, scale = f8E8M0FNU, block = 1x32>,
        !nvfp4.tensor<64x128xf4E2M1FN, scale = f8E8M0FNU, block = 1x32>
      -> tensor<64x64xf32>
  return %c : tensor<64x64xf32>
}

// CHECK-LABEL: func.func @mixed
// CHECK: gpu.launch_func @nvfp4_kernels::@nvfp4_scaled_matmul_128x128x256_mxfp8_e4m3_mxfp4_to_f32_simt
func.func @mixed(%a: !nvfp4.tensor<128x256xf8E4M3FN, scale = f8E8M0FNU, block = 1x32>,
                 %b: !nvfp4.tensor<128x256xf4E2M1FN, scale = f8E8M0FNU, block = 1x32>) -> tensor<128x128xf32> {
  %c = nvfp4.scaled_matmul %a, %b
      : !nvfp4.tensor<128x256xf8E4M3FN, scale = f8E8M0FNU, block = 1x32>,
        !nvfp4.tensor<128x256xf4E2M1FN, scale = f8E8M0FNU, block = 1x32>
      -> tensor<128x128xf32>
  return %c : tensor<128x128xf32>
}

// The MXFP8 kernel: per K step one tcgen05.cp per operand (A's atom at
// column +0 of the stage's slot, B's at +4), then the four MMAs with
// scale factor IDs 0-3 (the address bits 30-31: + j << 30).
// CHECK-LABEL: gpu.func @nvfp4_scaled_matmul_200x384x1024_mxfp8_e4m3_mxfp8_e5m2_swizzled_to_f32_tcgen05_128x128x128_s4
// CHECK: nvvm.tcgen05.alloc
// CHECK: nvvm.tcgen05.cp %{{.*}}, %{{.*}} {multicast = #nvvm.tcgen05_cp_multicast<warpx4>, shape = #nvvm.tcgen05_cp_shape<shape_32x128b>}
// CHECK: nvvm.tcgen05.cp %{{.*}}, %{{.*}} {multicast = #nvvm.tcgen05_cp_multicast<warpx4>, shape = #nvvm.tcgen05_cp_shape<shape_32x128b>}
// CHECK-NOT: nvvm.tcgen05.cp
// CHECK: nvvm.tcgen05.mma.block_scale %{{.*}}, %{{.*}}, %{{.*}}, %c144704512_i32, %{{.*}} {blockScale = #nvvm.tcgen05_mma_block_scale<block32>, ctaGroup = #nvvm.cta_group<cta_1>, kind = #nvvm.block_scale_kind<mxf8f6f4>}
// CHECK: arith.constant 1073741824 : i32
// CHECK: nvvm.tcgen05.mma.block_scale %{{.*}}, %{{.*}}, %{{.*}}, %c681575440_i32, %true, {{.*}}kind = #nvvm.block_scale_kind<mxf8f6f4>}
// CHECK: arith.constant -2147483648 : i32
// CHECK: nvvm.tcgen05.mma.block_scale %{{.*}}, %{{.*}}, %{{.*}}, %c1218446368_i32, %true, {{.*}}kind = #nvvm.block_scale_kind<mxf8f6f4>}
// CHECK: arith.constant -1073741824 : i32
// CHECK: nvvm.tcgen05.mma.block_scale %{{.*}}, %{{.*}}, %{{.*}}, %c1755317296_i32, %true, {{.*}}kind = #nvvm.block_scale_kind<mxf8f6f4>}
// CHECK: nvvm.tcgen05.commit

// The MXFP4 kernel: two atoms per operand and step, MMAs 0 and 2 with
// 0x08A00480 (half word 0), 1 and 3 with 0x48A004A0 (half word 2).
// CHECK-LABEL: gpu.func @nvfp4_scaled_matmul_2x128x96x512_mxfp4_mxfp4_to_bf16_tcgen05_128x128x256_s4
// CHECK-COUNT-4: nvvm.tcgen05.cp
// CHECK-NOT: nvvm.tcgen05.cp
// CHECK: nvvm.tcgen05.mma.block_scale %{{.*}}, %{{.*}}, %{{.*}}, %c144704640_i32, %{{.*}} {blockScale = #nvvm.tcgen05_mma_block_scale<block32>, ctaGroup = #nvvm.cta_group<cta_1>, kind = #nvvm.block_scale_kind<mxf4>}
// CHECK: nvvm.tcgen05.mma.block_scale %{{.*}}, %{{.*}}, %{{.*}}, %c1218446496_i32{{(_[0-9]+)?}}, %true, {{.*}}kind = #nvvm.block_scale_kind<mxf4>}
// CHECK: nvvm.tcgen05.mma.block_scale %{{.*}}, %{{.*}}, %{{.*}}, %c144704640_i32{{(_[0-9]+)?}}, %true, {{.*}}kind = #nvvm.block_scale_kind<mxf4>}
// CHECK: nvvm.tcgen05.mma.block_scale %{{.*}}, %{{.*}}, %{{.*}}, %c1218446496_i32{{(_[0-9]+)?}}, %true, {{.*}}kind = #nvvm.block_scale_kind<mxf4>}
// CHECK: nvvm.tcgen05.commit
