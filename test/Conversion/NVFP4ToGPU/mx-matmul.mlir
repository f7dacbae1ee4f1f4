// RUN: nvfp4-opt %s --convert-nvfp4-to-gpu=chip=sm_90a | FileCheck %s
// RUN: nvfp4-opt %s --convert-nvfp4-to-gpu="chip=sm_100a mx-gemm=simt" | FileCheck %s

// The MX GEMM on the GPU (MXKernels.cpp): the portable SIMT kernel, one
// thread per element of C, K in 1x32 blocks; E4M3 x E5M2 operands mix as
// in kind::mxf8f6f4; alpha defaults to 1.

// CHECK-LABEL: func.func @matmul_mxfp8_mixed
// CHECK: %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK: gpu.launch_func @nvfp4_kernels::@nvfp4_scaled_matmul_128x64x256_mxfp8_e4m3_mxfp8_e5m2_to_bf16_simt
// CHECK-SAME: args(%{{.*}} : memref<32768xi8>, %{{.*}} : memref<1024xi8>, %{{.*}} : memref<16384xi8>, %{{.*}} : memref<512xi8>, %[[ONE]] : f32, %{{.*}} : memref<8192xbf16>)
func.func @matmul_mxfp8_mixed(%a: !nvfp4.tensor<128x256xf8E4M3FN, scale = f8E8M0FNU, block = 1x32>,
                              %b: !nvfp4.tensor<64x256xf8E5M2, scale = f8E8M0FNU, block = 1x32>) -> tensor<128x64xbf16> {
  %c = nvfp4.scaled_matmul %a, %b
      : !nvfp4.tensor<128x256xf8E4M3FN, scale = f8E8M0FNU, block = 1x32>,
        !nvfp4.tensor<64x256xf8E5M2, scale = f8E8M0FNU, block = 1x32>
      -> tensor<128x64xbf16>
  return %c : tensor<128x64xbf16>
}

// MXFP4, batched, swizzled B scales, a given alpha.
// CHECK-LABEL: func.func @matmul_mxfp4_batched
// CHECK-SAME: %[[ALPHA:[a-z0-9]+]]: f32
// CHECK: gpu.launch_func @nvfp4_kernels::@nvfp4_scaled_matmul_2x48x32x128_mxfp4_mxfp4_swizzled_to_f32_simt
// CHECK-SAME: args(%{{.*}} : memref<6144xi8>, %{{.*}} : memref<384xi8>, %{{.*}} : memref<4096xi8>, %{{.*}} : memref<1024xi8>, %[[ALPHA]] : f32, %{{.*}} : memref<3072xf32>)
func.func @matmul_mxfp4_batched(%a: !nvfp4.tensor<2x48x128xf4E2M1FN, scale = f8E8M0FNU, block = 1x32>,
                                %b: !nvfp4.tensor<2x32x128xf4E2M1FN, scale = f8E8M0FNU, block = 1x32, layout = swizzled_128x4>,
                                %alpha: f32) -> tensor<2x48x32xf32> {
  %c = nvfp4.scaled_matmul %a, %b alpha(%alpha)
      : !nvfp4.tensor<2x48x128xf4E2M1FN, scale = f8E8M0FNU, block = 1x32>,
        !nvfp4.tensor<2x32x128xf4E2M1FN, scale = f8E8M0FNU, block = 1x32, layout = swizzled_128x4>
      -> tensor<2x48x32xf32>
  return %c : tensor<2x48x32xf32>
}

// The kernel: per block 32 products summed in order, then the two E8M0
// scales one after the other, then the accumulator.
// CHECK: gpu.func @nvfp4_scaled_matmul_128x64x256_mxfp8_e4m3_mxfp8_e5m2_to_bf16_simt
// CHECK: scf.for
// CHECK-COUNT-4: vector.load %{{.*}} : memref<{{32768|16384}}xi8>, vector<16xi8>
// CHECK: arith.mulf
// CHECK: arith.addf
