// RUN: nvfp4-opt %s --convert-nvfp4-to-gpu=chip=sm_100a | FileCheck %s --check-prefixes=CHECK,BW
// RUN: nvfp4-opt %s --convert-nvfp4-to-gpu=chip=sm_90a | FileCheck %s --check-prefixes=CHECK,HOPPER
// RUN: nvfp4-opt %s --convert-nvfp4-to-gpu=chip=sm_120a | FileCheck %s --check-prefix=SM120

// nvfp4.scaled_matmul_quantize: the GEMM kernel's epilogue writes E2M1
// codes and E4M3 scales of C (rounded to bf16) with the given amax; C is
// never allocated. The result's parts are the two buffers the kernel wrote
// and the amax buffer (here written from the f32 argument).

!a = !nvfp4.tensor<96x272xf4E2M1FN, scale = f8E4M3FN, block = 1x16>
!b = !nvfp4.tensor<48x272xf4E2M1FN, scale = f8E4M3FN, block = 16x16>
!c = !nvfp4.tensor<96x48xf4E2M1FN, scale = f8E4M3FN, block = 1x16>

// CHECK-LABEL: func.func @simt
// CHECK-SAME:    %[[G:[^:]*]]: f32)
// CHECK-DAG:     %[[CODES:.*]] = gpu.alloc () : memref<96x24xi8>
// CHECK-DAG:     %[[SCALES:.*]] = gpu.alloc () : memref<96x3xi8>
// CHECK-DAG:     %[[AMAX:.*]] = gpu.alloc () : memref<1xi32>
// CHECK-DAG:     %[[BITS:.*]] = arith.bitcast %[[G]] : f32 to i32
// CHECK:         gpu.memset %[[AMAX]], %[[BITS]]
// CHECK-NOT:     memref<4608xbf16>
// CHECK:         gpu.launch_func @nvfp4_kernels::@nvfp4_scaled_matmul_96x48x272_1x16_16x16_to_bf16_q_simt
// CHECK-SAME:      : f32, %{{.*}} : memref<2304xi8>, %{{.*}} : memref<288xi8>, %[[AMAX]] : memref<1xi32>)
// CHECK:         return %[[CODES]], %[[SCALES]], %[[AMAX]]
func.func @simt(%x: !a, %w: !b, %g: f32) -> !c {
  %q = nvfp4.scaled_matmul_quantize %x, %w amax(%g) : !a, !b -> !c
  return %q : !c
}

// The tensor-core kernels (K = 256).
// CHECK-LABEL: func.func @tensor_cores
// BW:            gpu.launch_func @nvfp4_kernels::@nvfp4_scaled_matmul_128x128x256_1x16_16x16_to_f32_q_tcgen05_128x128x256_s4
// HOPPER:        gpu.launch_func @nvfp4_kernels::@nvfp4_scaled_matmul_128x128x256_1x16_16x16_to_f32_q_wgmma_128x128x256_s4
// sm_120a's rule asks for the TMA-store epilogue, which the quantizing
// epilogue (codes and scales, not C) does not take: its direct stores, and
// no "_ts" in the name.
// SM120:         gpu.launch_func @nvfp4_kernels::@nvfp4_scaled_matmul_128x128x256_1x16_16x16_to_f32_q_mxf4_128x128x128_s4 blocks
func.func @tensor_cores(%x: !nvfp4.tensor<128x256xf4E2M1FN, scale = f8E4M3FN, block = 1x16>,
                        %w: !nvfp4.tensor<128x256xf4E2M1FN, scale = f8E4M3FN, block = 16x16>,
                        %g: f32) -> !nvfp4.tensor<128x128xf4E2M1FN, scale = f8E4M3FN, block = 1x16> {
  %q = nvfp4.scaled_matmul_quantize %x, %w amax(%g) {intermediate = f32}
      : !nvfp4.tensor<128x256xf4E2M1FN, scale = f8E4M3FN, block = 1x16>,
        !nvfp4.tensor<128x256xf4E2M1FN, scale = f8E4M3FN, block = 16x16>
      -> !nvfp4.tensor<128x128xf4E2M1FN, scale = f8E4M3FN, block = 1x16>
  return %q : !nvfp4.tensor<128x128xf4E2M1FN, scale = f8E4M3FN, block = 1x16>
}

// SIMT: the bounds check yields the value (0 outside C); a block is 16
// consecutive threads: half-warp max, then the even thread of each pair
// encodes both codes (the hardware cvt on Blackwell) and stores the byte,
// the first of 16 the scale.
// CHECK:         gpu.func @nvfp4_scaled_matmul_96x48x272_1x16_16x16_to_bf16_q_simt
// CHECK:         scf.if %{{.*}} -> (f32)
// CHECK:         arith.truncf %{{.*}} : f32 to bf16
// CHECK-COUNT-4: gpu.shuffle xor %{{.*}}, %c{{[1248]}}_i32
// CHECK:         gpu.shuffle xor %{{.*}}, %c1_i32
// BW:            nvvm.convert.f32x2.to.f4x2
// HOPPER-NOT:    nvvm.convert.f32x2.to.f4x2
// CHECK:         memref.store %{{.*}} : memref<2304xi8>
// CHECK:         memref.store %{{.*}} : memref<288xi8>
// BW:            gpu.func @nvfp4_scaled_matmul_128x128x256_1x16_16x16_to_f32_q_tcgen05_128x128x256_s4
// BW:            nvvm.tcgen05.ld
// BW:            nvvm.convert.f32x2.to.f4x2
// BW:            vector.store %{{.*}} {alignment = 8 : i64} : memref<2048xi32>, vector<2xi32>
// HOPPER:        gpu.func @nvfp4_scaled_matmul_128x128x256_1x16_16x16_to_f32_q_wgmma_128x128x256_s4
// HOPPER:        gpu.shuffle xor %{{.*}}, %c1_i32
// HOPPER:        gpu.shuffle xor %{{.*}}, %c2_i32
// HOPPER:        memref.store %{{.*}} : memref<8192xi8>
// SM120:         gpu.func @nvfp4_scaled_matmul_128x128x256_1x16_16x16_to_f32_q_mxf4_128x128x128_s4(
// SM120:         nvvm.ldmatrix
// SM120:         nvvm.mma.block_scale
// SM120-NOT:     nvvm.stmatrix
// SM120:         gpu.shuffle xor %{{.*}}, %c2_i32
// SM120:         nvvm.convert.f32x2.to.f4x2
