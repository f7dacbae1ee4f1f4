// RUN: nvfp4-opt %s --convert-nvfp4-to-gpu=chip=sm_90a | FileCheck %s
// RUN: nvfp4-opt %s --convert-nvfp4-to-gpu=chip=sm_100a | FileCheck %s

// MX quantize and dequantize on the GPU (MXKernels.cpp): no amax pass (MX
// has no tensor scale; the amax buffer is zero-filled), one kernel launch
// of one thread per 1x32 block. MXFP8 codes are one byte per element,
// MXFP4 codes two per byte; one E8M0 byte per block.

// CHECK-LABEL: func.func @quantize_mxfp8
// CHECK-SAME: -> (memref<64x128xi8>, memref<64x4xi8>, memref<1xi32>)
// CHECK-NOT: nvfp4_amax
// CHECK: %[[AMAX:.*]] = gpu.alloc () : memref<1xi32>
// CHECK: gpu.memset %[[AMAX]]
// CHECK: gpu.launch_func @nvfp4_kernels::@nvfp4_quantize_64x128xbf16_mxfp8_e4m3_rn
// CHECK-SAME: blocks in (%{{.*}}, %{{.*}}, %{{.*}}) threads in
// CHECK-SAME: args(%{{.*}} : memref<8192xbf16>, %{{.*}} : memref<8192xi8>, %{{.*}} : memref<256xi8>)
func.func @quantize_mxfp8(%x: tensor<64x128xbf16>)
    -> !nvfp4.tensor<64x128xf8E4M3FN, scale = f8E8M0FNU, block = 1x32> {
  %q = nvfp4.quantize %x : tensor<64x128xbf16>
      -> !nvfp4.tensor<64x128xf8E4M3FN, scale = f8E8M0FNU, block = 1x32>
  return %q : !nvfp4.tensor<64x128xf8E4M3FN, scale = f8E8M0FNU, block = 1x32>
}

// MXFP4 from f32 with swizzled scales: 40 rows pad to 128, 2 scale columns
// to 4, so the scale buffer is zero-filled first.
// CHECK-LABEL: func.func @quantize_mxfp4_swizzled
// CHECK-SAME: -> (memref<40x32xi8>, memref<128x4xi8>, memref<1xi32>)
// CHECK: %[[SCALES:.*]] = gpu.alloc () : memref<128x4xi8>
// CHECK: gpu.memset %[[SCALES]]
// CHECK: gpu.launch_func @nvfp4_kernels::@nvfp4_quantize_40x64xf32_mxfp4_swizzled_rn
// CHECK-SAME: args(%{{.*}} : memref<2560xf32>, %{{.*}} : memref<1280xi8>, %{{.*}} : memref<512xi8>)
func.func @quantize_mxfp4_swizzled(%x: tensor<40x64xf32>)
    -> !nvfp4.tensor<40x64xf4E2M1FN, scale = f8E8M0FNU, block = 1x32, layout = swizzled_128x4> {
  %q = nvfp4.quantize %x : tensor<40x64xf32>
      -> !nvfp4.tensor<40x64xf4E2M1FN, scale = f8E8M0FNU, block = 1x32, layout = swizzled_128x4>
  return %q : !nvfp4.tensor<40x64xf4E2M1FN, scale = f8E8M0FNU, block = 1x32, layout = swizzled_128x4>
}

// CHECK-LABEL: func.func @dequantize_mxfp8_e5m2
// CHECK: gpu.launch_func @nvfp4_kernels::@nvfp4_quantize_2x32x64xf16_mxfp8_e5m2_rn
// CHECK: gpu.launch_func @nvfp4_kernels::@nvfp4_dequantize_2x32x64_mxfp8_e5m2_to_bf16
// CHECK-SAME: args(%{{.*}} : memref<4096xi8>, %{{.*}} : memref<128xi8>, %{{.*}} : memref<4096xbf16>)
func.func @dequantize_mxfp8_e5m2(%x: tensor<2x32x64xf16>) -> tensor<2x32x64xbf16> {
  %q = nvfp4.quantize %x : tensor<2x32x64xf16>
      -> !nvfp4.tensor<2x32x64xf8E5M2, scale = f8E8M0FNU, block = 1x32>
  %d = nvfp4.dequantize %q : !nvfp4.tensor<2x32x64xf8E5M2, scale = f8E8M0FNU, block = 1x32>
      -> tensor<2x32x64xbf16>
  return %d : tensor<2x32x64xbf16>
}

// The kernels: 16-byte vector loads and stores, the E8M0 byte stored once.
// CHECK: gpu.module @nvfp4_kernels
// CHECK: gpu.func @nvfp4_quantize_64x128xbf16_mxfp8_e4m3_rn(%{{.*}}: memref<8192xbf16>, %{{.*}}: memref<8192xi8>, %{{.*}}: memref<256xi8>) kernel
// CHECK-COUNT-4: vector.load %{{.*}} : memref<8192xbf16>, vector<8xbf16>
// CHECK: arith.maxnumf
// CHECK-COUNT-2: vector.store %{{.*}} : memref<8192xi8>, vector<16xi8>
// CHECK: memref.store %{{.*}} : memref<256xi8>
// CHECK: gpu.func @nvfp4_quantize_40x64xf32_mxfp4_swizzled_rn
// CHECK-COUNT-8: vector.load %{{.*}} : memref<2560xf32>, vector<4xf32>
// CHECK: vector.store %{{.*}} : memref<1280xi8>, vector<16xi8>
// CHECK: gpu.func @nvfp4_dequantize_2x32x64_mxfp8_e5m2_to_bf16
// CHECK-COUNT-2: vector.load %{{.*}} : memref<4096xi8>, vector<16xi8>
// CHECK-COUNT-4: vector.store %{{.*}} : memref<4096xbf16>, vector<8xbf16>
