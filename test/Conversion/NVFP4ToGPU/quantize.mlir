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

// An amax that is an argument of the host function is a kernel parameter:
// no amax kernel and no memset; the quantize kernel writes it to the
// result's amax buffer. The swizzled layout pads 32 rows to 128: the
// padding is zero-filled.
// CHECK-LABEL: func.func @quantize_with_amax
// CHECK-SAME: (%{{.*}}: tensor<32x32xf32>, %[[A:.*]]: f32)
// CHECK-NOT: nvfp4_amax
// CHECK: %[[OUT:.*]] = gpu.alloc () : memref<1xi32>
// CHECK-NOT: gpu.memset %[[OUT]]
// CHECK: %[[S:.*]] = gpu.alloc () : memref<128x4xi8>
// CHECK: gpu.memset %[[S]]
// CHECK: gpu.launch_func @nvfp4_kernels::@nvfp4_quantize_32x32xf32_16x16_rn_swizzled_amaxarg_ring2
// CHECK-SAME: %[[A]] : f32
// CHECK-SAME: %[[OUT]] : memref<1xi32>)
// CHECK: return %{{.*}}, %{{.*}}, %[[OUT]]
func.func @quantize_with_amax(%x: tensor<32x32xf32>, %a: f32)
    -> !nvfp4.tensor<32x32xf4E2M1FN, scale = f8E4M3FN, block = 16x16, layout = swizzled_128x4> {
  %q = nvfp4.quantize %x amax(%a) : tensor<32x32xf32>
      -> !nvfp4.tensor<32x32xf4E2M1FN, scale = f8E4M3FN, block = 16x16, layout = swizzled_128x4>
  return %q : !nvfp4.tensor<32x32xf4E2M1FN, scale = f8E4M3FN, block = 16x16, layout = swizzled_128x4>
}

// Any other given amax (here a constant) goes to the device by a memset.
// 128 rows and 4 scale columns: the swizzled layout has no padding, so the
// kernel writes every scale byte and nothing is zero-filled.
// CHECK-LABEL: func.func @quantize_constant_amax
// CHECK: %[[C:.*]] = gpu.alloc () : memref<1xi32>
// CHECK: gpu.memset %[[C]]
// CHECK: %[[S:.*]] = gpu.alloc () : memref<128x4xi8>
// CHECK-NOT: gpu.memset %[[S]]
// CHECK: gpu.launch_func @nvfp4_kernels::@nvfp4_quantize_128x64xbf16_1x16_rn_swizzled
// CHECK-SAME: %[[C]] : memref<1xi32>
func.func @quantize_constant_amax(%x: tensor<128x64xbf16>)
    -> !nvfp4.tensor<128x64xf4E2M1FN, scale = f8E4M3FN, block = 1x16, layout = swizzled_128x4> {
  %a = arith.constant 3.0 : f32
  %q = nvfp4.quantize %x amax(%a) : tensor<128x64xbf16>
      -> !nvfp4.tensor<128x64xf4E2M1FN, scale = f8E4M3FN, block = 1x16, layout = swizzled_128x4>
  return %q : !nvfp4.tensor<128x64xf4E2M1FN, scale = f8E4M3FN, block = 1x16, layout = swizzled_128x4>
}

// CHECK: gpu.module @nvfp4_kernels
// The amax pass reduces BF16 pairs (max.xorsign.abs), then one atomic max a
// warp.
// CHECK: gpu.func @nvfp4_amax_8192xbf16(%{{.*}}: memref<8192xbf16>, %{{.*}}: memref<1xi32>) kernel
// CHECK: llvm.call_intrinsic "llvm.nvvm.fmax.xorsign.abs.bf16x2"
// CHECK: gpu.shuffle xor
// CHECK: memref.atomic_rmw maxs
// The persistent 1x16 kernel: the encode table in shared memory (filled,
// then a barrier), two runs a thread, the next two loaded before the
// current ones are computed, codes stored 16 bytes and linear scales 2
// bytes at a time.
// CHECK: gpu.func @nvfp4_quantize_64x128xbf16_1x16_rn({{.*}}) workgroup(%[[TABLE:.*]] : memref<128xf32, #gpu.address_space<workgroup>>) kernel
// CHECK-SAME: nvvm.minctasm = 4
// CHECK: memref.store %{{.*}}, %[[TABLE]]
// CHECK: gpu.barrier
// CHECK: memref.view %{{.*}} : memref<4096xi8> to memref<1024xi32>
// CHECK: memref.view %{{.*}} : memref<512xi8> to memref<256xi16>
// CHECK-COUNT-2: vector.load %{{.*}} {alignment = 16 : i64} : memref<8192xbf16>, vector<16xbf16>
// CHECK: scf.for
// CHECK: scf.if
// CHECK-COUNT-2: vector.load %{{.*}} {alignment = 16 : i64} : memref<8192xbf16>, vector<16xbf16>
// CHECK: nvvm.convert.f32x2.to.f8x2 {{.*}}f8E4M3FN
// CHECK: memref.load %[[TABLE]]
// BW: nvvm.convert.f32x2.to.f4x2
// HOPPER-NOT: nvvm.convert.f32x2.to.f4x2
// CHECK: vector.store %{{.*}} {alignment = 16 : i64} : memref<1024xi32>, vector<4xi32>
// CHECK: memref.store %{{.*}} : memref<256xi16>
// The last pair may hold one run only.
// CHECK: vector.store %{{.*}} {alignment = 8 : i64} : memref<1024xi32>, vector<2xi32>
// CHECK: memref.store %{{.*}} : memref<512xi8>
// 16x16 tiles come in through the default ring of 2 shared-memory slots
// (cp.async, then 16-byte shared loads) and reduce the block amax across
// 16 lanes.
// CHECK: gpu.func @nvfp4_quantize_32x32xf32_16x16_rn_swizzled_amaxarg_ring2
// CHECK: nvvm.cp.async.shared.global %{{.*}}, %{{.*}}, 16, cache = cg
// CHECK: vector.load %{{.*}} {alignment = 16 : i64} : memref<16384xf32, #gpu.address_space<workgroup>>, vector<4xf32>
// CHECK-COUNT-4: gpu.shuffle xor
