// RUN: nvfp4-opt %s --pass-pipeline='builtin.module(func.func(nvfp4-free-device-buffers))' \
// RUN:   -split-input-file | FileCheck %s

// Scratch used by two launches is freed after the second, the view's last
// use counting as the buffer's; the returned buffer is the caller's.
// CHECK-LABEL: func.func @scratch_and_result
// CHECK:         %[[AMAX:.*]] = gpu.alloc () : memref<1xi32>
// CHECK:         %[[CODES:.*]] = gpu.alloc () : memref<4x4xi8>
// CHECK:         %[[OUT:.*]] = gpu.alloc () : memref<16xi8>
// CHECK:         %[[VIEW:.*]] = memref.collapse_shape %[[CODES]]
// CHECK:         gpu.launch_func @k::@first
// CHECK-NEXT:    gpu.dealloc %[[AMAX]] : memref<1xi32>
// CHECK-NEXT:    gpu.launch_func @k::@second {{.*}}args(%[[VIEW]] : memref<16xi8>, %[[OUT]] : memref<16xi8>)
// CHECK-NEXT:    gpu.dealloc %[[CODES]] : memref<4x4xi8>
// CHECK-NOT:     gpu.dealloc
// CHECK:         return
module attributes {gpu.container_module} {
  gpu.module @k {
    gpu.func @first(%a: memref<1xi32>, %c: memref<4x4xi8>) kernel { gpu.return }
    gpu.func @second(%c: memref<16xi8>, %o: memref<16xi8>) kernel { gpu.return }
  }
  func.func @scratch_and_result() -> tensor<16xi8> {
    %c1 = arith.constant 1 : index
    %c0_i32 = arith.constant 0 : i32
    %amax = gpu.alloc () : memref<1xi32>
    %codes = gpu.alloc () : memref<4x4xi8>
    %out = gpu.alloc () : memref<16xi8>
    gpu.memset %amax, %c0_i32 : memref<1xi32>, i32
    %view = memref.collapse_shape %codes [[0, 1]] : memref<4x4xi8> into memref<16xi8>
    gpu.launch_func @k::@first blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1)
        args(%amax : memref<1xi32>, %codes : memref<4x4xi8>)
    gpu.launch_func @k::@second blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1)
        args(%view : memref<16xi8>, %out : memref<16xi8>)
    %t = bufferization.to_tensor %out restrict writable : memref<16xi8> to tensor<16xi8>
    return %t : tensor<16xi8>
  }
}

// -----

// A buffer handed to host code (a call on its tensor), one already freed
// and one used asynchronously are left alone: a leak is safe, freeing a
// buffer still in use is not.
// CHECK-LABEL: func.func @left_alone
// CHECK-COUNT-1: gpu.dealloc
// CHECK-NOT:     gpu.dealloc
func.func private @host(tensor<4xf32>)
func.func @left_alone(%t0: !gpu.async.token) {
  %c1 = arith.constant 1 : index
  %cst = arith.constant 0.0 : f32
  %handed = gpu.alloc () : memref<4xf32>
  %t = bufferization.to_tensor %handed restrict : memref<4xf32> to tensor<4xf32>
  func.call @host(%t) : (tensor<4xf32>) -> ()
  %freed = gpu.alloc () : memref<4xf32>
  gpu.dealloc %freed : memref<4xf32>
  %async = gpu.alloc () : memref<4xf32>
  %t1 = gpu.memset async [%t0] %async, %cst : memref<4xf32>, f32
  return
}

// -----

// A use in a nested region counts at the op of the allocation's block that
// holds it.
// CHECK-LABEL: func.func @nested_use
// CHECK:         %[[B:.*]] = gpu.alloc
// CHECK:         scf.if
// CHECK:           gpu.memset %[[B]]
// CHECK:         }
// CHECK-NEXT:    gpu.dealloc %[[B]]
// CHECK-NEXT:    return
func.func @nested_use(%p: i1) {
  %cst = arith.constant 0.0 : f32
  %b = gpu.alloc () : memref<4xf32>
  scf.if %p {
    gpu.memset %b, %cst : memref<4xf32>, f32
  }
  return
}
