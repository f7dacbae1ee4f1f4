// RUN: nvfp4-opt %s --convert-nvfp4-to-gpu=chip=sm_100a | FileCheck %s --check-prefixes=CHECK,BW
// RUN: nvfp4-opt %s --convert-nvfp4-to-gpu=chip=sm_90a | FileCheck %s --check-prefixes=CHECK,HOPPER

// On the host a block-scaled value is three device buffers: packed codes,
// scale bytes, amax bits. Quantization is an amax launch and a quantize
// launch; kernels live in @nvfp4_kernels and take flat memrefs.

// CHECK-LABEL: func.func @quantize
// CHECK-SAME: -> (memref<64x64xi8>, memref<64x8xi8>, memref<1xi32>)
// CHECK: %[[AMAX:.*]] = gpu.alloc () : memref<1xi32>
// CHECK: gpu.memset %[[AMAX]]
// CHECK: gpu.launch_func @nvfp4_kernels::@nvfp4_amax_8192xbf16
// CHECK: gpu.launch_func @nvfp4_kernels::@nvfp4_quantize_64x128xbf16_1x16_rn
// CHECK-SAME: args(%{{.*}} : memref<8192xbf16>, %[[AMAX]] : memref<1xi32>, %{{.*}} : memref<4096xi8>, %{{.*}} : memref<512xi8>)
func.func @quantize(%x: tensor<64x128xbf16>)
    -> !nvfp4.tensor<64x128xf4E2M1FN, scale = f8E4M3FN, block = 1x16> {
  %q = nvfp4.quantize %x : tensor<64x128xbf16>
      -> !nvfp4.tensor<64x128xf4E2M1FN, scale = f8E4M3FN, block = 1x16>
  return %q : !nvfp4.tensor<64x128xf4E2M1FN, scale = f8E4M3FN, block = 1x16>
}

// An explicit amax is written to the device, no amax kernel runs.
// CHECK-LABEL: func.func @quantize_with_amax
// CHECK: arith.bitcast %{{.*}} : f32 to i32
// CHECK: gpu.memset
// CHECK-NOT: nvfp4_amax
// CHECK: gpu.launch_func @nvfp4_kernels::@nvfp4_quantize_32x32xf32_16x16_rn_swizzled
func.func @quantize_with_amax(%x: tensor<32x32xf32>, %a: f32)
    -> !nvfp4.tensor<32x32xf4E2M1FN, scale = f8E4M3FN, block = 16x16, layout = swizzled_128x4> {
  %q = nvfp4.quantize %x amax(%a) : tensor<32x32xf32>
      -> !nvfp4.tensor<32x32xf4E2M1FN, scale = f8E4M3FN, block = 16x16, layout = swizzled_128x4>
  return %q : !nvfp4.tensor<32x32xf4E2M1FN, scale = f8E4M3FN, block = 16x16, layout = swizzled_128x4>
}

// CHECK: gpu.module @nvfp4_kernels
// CHECK: gpu.func @nvfp4_amax_8192xbf16(%{{.*}}: memref<8192xbf16>, %{{.*}}: memref<1xi32>) kernel
// CHECK: gpu.shuffle xor
// CHECK: memref.atomic_rmw maxs
// The 1x16 kernel: 4 runs of 16 per thread, their 16-byte loads all issued
// first; codes stored as two i32 words (8 bytes) per run.
// CHECK: gpu.func @nvfp4_quantize_64x128xbf16_1x16_rn
// CHECK-COUNT-4: vector.load %{{.*}} {alignment = 16 : i64} : memref<8192xbf16>, vector<16xbf16>
// CHECK-NOT: vector.store
// CHECK: memref.view %{{.*}} : memref<4096xi8> to memref<1024xi32>
// BW: nvvm.convert.f32x2.to.f4x2
// HOPPER-NOT: nvvm.convert
// CHECK: vector.store %{{.*}} {alignment = 8 : i64} : memref<1024xi32>, vector<2xi32>
// CHECK: memref.store %{{.*}} : memref<512xi8>
// CHECK-COUNT-3: vector.store %{{.*}} : memref<1024xi32>, vector<2xi32>
// 16x16 tiles reduce the block amax across 16 lanes.
// CHECK: gpu.func @nvfp4_quantize_32x32xf32_16x16_rn_swizzled
// CHECK: vector.load %{{.*}} {alignment = 16 : i64} : memref<1024xf32>, vector<16xf32>
// CHECK-COUNT-4: gpu.shuffle xor
