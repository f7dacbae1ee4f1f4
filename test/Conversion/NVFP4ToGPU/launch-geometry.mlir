// RUN: nvfp4-opt %s --convert-nvfp4-to-gpu=chip=sm_90a -split-input-file -verify-diagnostics | FileCheck %s
// RUN: nvfp4-opt %s --convert-nvfp4-to-gpu=chip=sm_100a -split-input-file -verify-diagnostics -o /dev/null
// RUN: nvfp4-opt %s --convert-nvfp4-to-gpu=chip=sm_103a -split-input-file -verify-diagnostics -o /dev/null
// RUN: nvfp4-opt %s --convert-nvfp4-to-gpu=chip=sm_120a -split-input-file -verify-diagnostics -o /dev/null

// Every kernel's launch geometry follows from its shape. An empty tensor has
// nothing to launch over: before, the amax kernel's grid-stride geometry
// divided by zero (SIGFPE in nvfp4-compile, nvfp4-opt and nvfp4.compile) and
// an RHT amax of 16x0 launched a grid of 0 blocks. Empty amaxes are 0 and
// an empty RHT is its input, without a kernel; a rank-0 amax reads its one
// element; a grid no GPU can launch is an error at the op.

// CHECK-LABEL: func.func @amax_empty
// CHECK-NEXT:    %[[Z:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT:    return %[[Z]]
func.func @amax_empty(%x: tensor<0x16xbf16>) -> f32 {
  %a = nvfp4.amax %x : tensor<0x16xbf16>
  return %a : f32
}

// CHECK-LABEL: func.func @rht_amax_empty
// CHECK-NEXT:    %[[Z:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT:    return %[[Z]]
func.func @rht_amax_empty(%x: tensor<16x0xbf16>) -> f32 {
  %a = nvfp4.amax %x hadamard(5) : tensor<16x0xbf16>
  return %a : f32
}

// CHECK-LABEL: func.func @hadamard_empty
// CHECK-SAME:    (%[[X:.*]]: tensor<0x4x32xbf16>)
// CHECK-NEXT:    return %[[X]]
func.func @hadamard_empty(%x: tensor<0x4x32xbf16>) -> tensor<0x4x32xbf16> {
  %h = nvfp4.hadamard %x : tensor<0x4x32xbf16>
  return %h : tensor<0x4x32xbf16>
}

// CHECK-LABEL: func.func @amax_rank0
// CHECK:         memref.expand_shape %{{.*}} [] output_shape [1] : memref<bf16> into memref<1xbf16>
// CHECK:         gpu.launch_func @nvfp4_kernels::@nvfp4_amax_1xbf16 blocks in (%{{.*}}, %{{.*}}, %{{.*}})
func.func @amax_rank0(%x: tensor<bf16>) -> f32 {
  %a = nvfp4.amax %x : tensor<bf16>
  return %a : f32
}

// -----

// 2^47 elements (within the bound of rule T6) is 2^35 blocks of 256 threads
// for the RHT kernel: more than a grid's 2^31 - 1.
func.func @hadamard_grid_too_large(%x: tensor<8796093022208x16xbf16>) -> tensor<8796093022208x16xbf16> {
  // expected-error-re @+1 {{kernel "nvfp4_hadamard_140737488355328xbf16_mask55272" needs a launch of grid {{[0-9]+}}x1x1, block 256x1x1: a grid must have 1 to 2^31-1 blocks in x and 1 to 65535 in y and z (the tensor is too large for one launch)}}
  %h = nvfp4.hadamard %x : tensor<8796093022208x16xbf16>
  return %h : tensor<8796093022208x16xbf16>
}
