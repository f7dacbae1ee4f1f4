// RUN: nvfp4-opt %s --convert-nvfp4-to-gpu=chip=sm_100a | FileCheck %s
// RUN: nvfp4-opt %s --convert-nvfp4-to-gpu=chip=sm_90a | FileCheck %s

// nvfp4.transpose allocates new packed codes [batch, cols, rows / 2] and
// tile scales [batch, cols / 16, rows / 16], launches one thread per output
// code byte, and passes the input's amax buffer through.

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

// The kernel: output byte (b, col, pair) merges the nibbles of input rows
// 2 * pair and 2 * pair + 1 at col (low nibble for even col); output scale
// (b, j, i) is input scale (b, i, j).
// CHECK: gpu.module @nvfp4_kernels
// CHECK: gpu.func @nvfp4_transpose_2x32x64_16x16(%[[IC:[^:]*]]: memref<2048xi8>, %[[IS:[^:]*]]: memref<16xi8>, %[[OC:[^:]*]]: memref<2048xi8>, %[[OS:[^:]*]]: memref<16xi8>) kernel
// CHECK: scf.if
// CHECK: %[[LO:.*]] = memref.load %[[IC]]
// CHECK: arith.shrui %[[LO]]
// CHECK: %[[HI:.*]] = memref.load %[[IC]]
// CHECK: arith.shrui %[[HI]]
// CHECK: arith.shli
// CHECK: %[[B:.*]] = arith.ori
// CHECK: memref.store %[[B]], %[[OC]]
// CHECK: scf.if
// CHECK: %[[SC:.*]] = memref.load %[[IS]]
// CHECK: memref.store %[[SC]], %[[OS]]
