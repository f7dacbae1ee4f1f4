// RUN: nvfp4-opt %s --convert-nvfp4-to-gpu=chip=sm_100a | FileCheck %s
// RUN: nvfp4-opt %s --convert-nvfp4-to-gpu=chip=sm_90a | FileCheck %s

// nvfp4.transpose allocates new packed codes [batch, cols, rows / 2] and
// tile scales [batch, cols / 16, rows / 16], launches one block of 256
// threads per 4 x 4 tiles, and passes the input's amax buffer through.

// CHECK-LABEL: func.func @transpose
// CHECK-SAME: (%[[C:[^:]*]]: memref<2x32x32xi8>, %[[S:[^:]*]]: memref<2x2x4xi8>, %[[A:[^:]*]]: memref<1xi32>)
// CHECK-SAME: -> (memref<2x64x16xi8>, memref<2x4x2xi8>, memref<1xi32>)
// CHECK: %[[TC:.*]] = gpu.alloc () : memref<2x64x16xi8>
// CHECK: %[[TS:.*]] = gpu.alloc () : memref<2x4x2xi8>
// CHECK: gpu.launch_func @nvfp4_kernels::@nvfp4_transpose_2x32x64_16x16
// CHECK-SAME: args(%{{.*}} : memref<2048xi8>, %{{.*}} : memref<16xi8>, %{{.*}} : memref<2048xi8>, %{{.*}} : memref<16xi8>)
// CHECK: return %[[TC]], %[[TS]], %[[A]]
func.func @transpose(%q: !nvfp4.tensor<2x32x64xf4E2M1FN, scale = f8E4M3FN, block = 16x16>)
    -> !nvfp4.tensor<2x64x32xf4E2M1FN, scale = f8E4M3FN, block = 16x16> {
  %t = nvfp4.transpose %q : !nvfp4.tensor<2x32x64xf4E2M1FN, scale = f8E4M3FN, block = 16x16>
      -> !nvfp4.tensor<2x64x32xf4E2M1FN, scale = f8E4M3FN, block = 16x16>
  return %t : !nvfp4.tensor<2x64x32xf4E2M1FN, scale = f8E4M3FN, block = 16x16>
}

// The transpose of a quantization in the same function is written by the
// quantize kernel: one kernel, both copies; the kernel also copies the amax
// into the transposed copy's own buffer (each result of the host function
// has a buffer of its own in the kernel manifest).
// CHECK-LABEL: func.func @quantize_and_transpose
// CHECK-NOT: nvfp4_transpose
// CHECK: %[[AMAX:.*]] = gpu.alloc () : memref<1xi32>
// CHECK: %[[QC:.*]] = gpu.alloc () : memref<32x32xi8>
// CHECK: %[[QS:.*]] = gpu.alloc () : memref<2x4xi8>
// CHECK: %[[TC:.*]] = gpu.alloc () : memref<64x16xi8>
// CHECK: %[[TS:.*]] = gpu.alloc () : memref<4x2xi8>
// CHECK: %[[TA:.*]] = gpu.alloc () : memref<1xi32>
// CHECK: gpu.launch_func @nvfp4_kernels::@nvfp4_quantize_32x64xbf16_16x16_rn_and_transpose
// CHECK-SAME: %[[AMAX]] : memref<1xi32>, %{{.*}} : memref<1024xi8>, %{{.*}} : memref<8xi8>, %{{.*}} : memref<1024xi8>, %{{.*}} : memref<8xi8>, %[[TA]] : memref<1xi32>)
// CHECK-NOT: launch_func
// CHECK: return %[[QC]], %[[QS]], %[[AMAX]], %[[TC]], %[[TS]], %[[TA]]
func.func @quantize_and_transpose(%w: tensor<32x64xbf16>)
    -> (!nvfp4.tensor<32x64xf4E2M1FN, scale = f8E4M3FN, block = 16x16>,
        !nvfp4.tensor<64x32xf4E2M1FN, scale = f8E4M3FN, block = 16x16>) {
  %q = nvfp4.quantize %w : tensor<32x64xbf16>
      -> !nvfp4.tensor<32x64xf4E2M1FN, scale = f8E4M3FN, block = 16x16>
  %t = nvfp4.transpose %q : !nvfp4.tensor<32x64xf4E2M1FN, scale = f8E4M3FN, block = 16x16>
      -> !nvfp4.tensor<64x32xf4E2M1FN, scale = f8E4M3FN, block = 16x16>
  return %q, %t : !nvfp4.tensor<32x64xf4E2M1FN, scale = f8E4M3FN, block = 16x16>,
                  !nvfp4.tensor<64x32xf4E2M1FN, scale = f8E4M3FN, block = 16x16>
}

// The transpose kernel: lane i of half warp h holds row i of tile (h / 4,
// h % 4) of the block's 4 x 4 tiles (8 code bytes); the 16 lanes transpose
// the nibbles by shuffles (distance 8, then 4, 2, 1 for each of the two
// words) and store column i as 8 bytes; the tile's first lane moves its
// scale from (b, i, j) to (b, j, i).
// CHECK: gpu.module @nvfp4_kernels
// CHECK: gpu.func @nvfp4_transpose_2x32x64_16x16(%[[IC:[^:]*]]: memref<2048xi8>, %[[IS:[^:]*]]: memref<16xi8>, %[[OC:[^:]*]]: memref<2048xi8>, %[[OS:[^:]*]]: memref<16xi8>) kernel
// CHECK: vector.load %{{.*}} {alignment = 8 : i64} : memref<512xi32>, vector<2xi32>
// CHECK-COUNT-7: gpu.shuffle xor
// CHECK: scf.if
// CHECK: vector.store %{{.*}} {alignment = 8 : i64} : memref<512xi32>, vector<2xi32>
// CHECK: scf.if
// CHECK: %[[SC:.*]] = memref.load %[[IS]]
// CHECK: memref.store %[[SC]], %[[OS]]
// The 16x16 quantize kernel with the transposed copy: the same nibble
// transpose of its codes.
// CHECK: gpu.func @nvfp4_quantize_32x64xbf16_16x16_rn_and_transpose
// CHECK-COUNT-4: gpu.shuffle xor
// CHECK-COUNT-7: gpu.shuffle xor
// CHECK: vector.store %{{.*}} : memref<256xi32>, vector<2xi32>
// CHECK: vector.store %{{.*}} : memref<256xi32>, vector<2xi32>
