// RUN: nvfp4-opt %s --convert-nvfp4-to-gpu=chip=sm_90a | FileCheck %s
// RUN: nvfp4-compile %s --chip=sm_100a --no-ptxas-check -o /dev/null --report=%t.json
// RUN: FileCheck %s --check-prefix=MANIFEST < %t.json

// nvfp4.pack on the GPU path (a tensor quantized elsewhere): one kernel
// packs the codes (one per byte, as MLIR stores f4E2M1FN) two per byte, even
// element in the low nibble, and copies the scale bytes; the amax argument
// fills the amax buffer.

!q = !nvfp4.tensor<32x64xf4E2M1FN, scale = f8E4M3FN, block = 1x16>
// CHECK-LABEL: func.func @pack
// CHECK-SAME:    (%[[C:.*]]: tensor<32x64xf4E2M1FN>, %[[S:.*]]: tensor<32x4xf8E4M3FN>, %[[A:.*]]: f32)
// CHECK:         %[[AMAX:.*]] = gpu.alloc () : memref<1xi32>
// CHECK:         %[[BITS:.*]] = arith.bitcast %[[A]] : f32 to i32
// CHECK:         gpu.memset %[[AMAX]], %[[BITS]]
// CHECK:         gpu.launch_func @nvfp4_kernels::@nvfp4_pack_32x64_1x16 blocks in (%{{.*}}, %{{.*}}, %{{.*}}) threads in (%{{.*}}, %{{.*}}, %{{.*}}) args(%{{.*}} : memref<2048xf4E2M1FN>, %{{.*}} : memref<128xf8E4M3FN>, %{{.*}} : memref<1024xi8>, %{{.*}} : memref<128xi8>)
// CHECK:       gpu.func @nvfp4_pack_32x64_1x16
// CHECK:         %[[EVEN:.*]] = arith.muli %{{.*}}, %c2
// CHECK:         %[[LO:.*]] = memref.load %arg0[%[[EVEN]]] : memref<2048xf4E2M1FN>
// CHECK:         %[[LOBITS:.*]] = arith.bitcast %[[LO]] : f4E2M1FN to i4
// CHECK:         %[[LO8:.*]] = arith.extui %[[LOBITS]] : i4 to i8
// CHECK:         %[[HI:.*]] = memref.load %arg0[%{{.*}}] : memref<2048xf4E2M1FN>
// CHECK:         %[[HIBITS:.*]] = arith.bitcast %[[HI]] : f4E2M1FN to i4
// CHECK:         %[[HI8:.*]] = arith.extui %[[HIBITS]] : i4 to i8
// CHECK:         %[[SHIFTED:.*]] = arith.shli %[[HI8]], %{{.*}} : i8
// CHECK:         %[[BYTE:.*]] = arith.ori %[[LO8]], %[[SHIFTED]] : i8
// CHECK:         memref.store %[[BYTE]], %arg2
// CHECK:         memref.load %arg1[%{{.*}}] : memref<128xf8E4M3FN>
// CHECK:         arith.bitcast %{{.*}} : f8E4M3FN to i8

// The codes argument is described as bytes (one per code), the amax buffer
// is filled from argument 2, and the three parts are the results.
// MANIFEST:      "argument": 0,
// MANIFEST-NEXT: "element_type": "i8",
// MANIFEST-NEXT: "elements": 2048,
func.func @pack(%c: tensor<32x64xf4E2M1FN>, %s: tensor<32x4xf8E4M3FN>, %a: f32) -> !q {
  %q = nvfp4.pack %c, %s, %a : !q
  return %q : !q
}
