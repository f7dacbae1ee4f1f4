// RUN: nvfp4-opt %s --convert-nvfp4-to-gpu=chip=sm_90a | FileCheck %s --check-prefixes=CHECK,HOPPER
// RUN: nvfp4-opt %s --convert-nvfp4-to-gpu=chip=sm_100a | FileCheck %s --check-prefixes=CHECK,BW

// nvfp4.dual_quantize (what nvfp4-fuse-quantization makes of a tensor's
// rowwise and columnwise quantizations): one pass for both amaxes (max |x|
// and the post-RHT amax of the transpose) and one kernel that reads the
// input once and writes both quantizations. Neither the transposed tensor
// nor the RHT's output is allocated.

!r = !nvfp4.tensor<96x160xf4E2M1FN, scale = f8E4M3FN, block = 1x16>
!c = !nvfp4.tensor<160x96xf4E2M1FN, scale = f8E4M3FN, block = 1x16>

// dY of a training step: SR rowwise (dgrad), RHT + SR columnwise (wgrad).
// CHECK-LABEL: func.func @dy
// CHECK-SAME: (%[[DY:.*]]: tensor<96x160xbf16>, %[[S0:.*]]: i64, %[[S1:.*]]: i64)
// CHECK-NOT: memref<160x96xbf16>
// CHECK: %[[RA:.*]] = gpu.alloc () : memref<1xi32>
// CHECK: %[[CA:.*]] = gpu.alloc () : memref<1xi32>
// CHECK: gpu.launch_func @nvfp4_kernels::@nvfp4_dual_quantize_amax_96x160xbf16_row_rht_mask55272
// CHECK-SAME: args(%[[IN:.*]] : memref<15360xbf16>, %[[RA]] : memref<1xi32>, %[[CA]] : memref<1xi32>)
// CHECK-NOT: memref<160x96xbf16>
// CHECK: gpu.launch_func @nvfp4_kernels::@nvfp4_dual_quantize_96x160xbf16_row_sr_col_rht_sr_mask55272
// CHECK-SAME: args(%[[IN]] : memref<15360xbf16>, %[[RA]] : memref<1xi32>, %[[CA]] : memref<1xi32>, %{{.*}} : memref<7680xi8>, %{{.*}} : memref<960xi8>, %{{.*}} : memref<7680xi8>, %{{.*}} : memref<960xi8>, %[[S0]] : i64, %[[S1]] : i64)
// CHECK-NOT: launch_func
// CHECK: return %{{.*}}, %{{.*}}, %[[RA]], %{{.*}}, %{{.*}}, %[[CA]] :
func.func @dy(%dy: tensor<96x160xbf16>, %s0: i64, %s1: i64) -> (!r, !c) {
  %r, %c = nvfp4.dual_quantize %dy rounding<stochastic> seed(%s0)
      columnwise hadamard(55272) rounding<stochastic> seed(%s1)
      : tensor<96x160xbf16> -> !r, !c
  return %r, %c : !r, !c
}

// Both amaxes given as arguments (TE's amaxes of the previous step): no
// amax pass; they are kernel parameters, which the kernel copies to the
// results' amax buffers.
// CHECK-LABEL: func.func @x_amax_given
// CHECK-NOT: amax_
// CHECK-NOT: gpu.memset
// CHECK: gpu.launch_func @nvfp4_kernels::@nvfp4_dual_quantize_96x160xbf16_row_rn_amaxarg_col_rht_rn_amaxarg_mask55272
// CHECK-SAME: %arg1 : f32, %arg2 : f32
// CHECK-NOT: launch_func
// CHECK: return
func.func @x_amax_given(%x: tensor<96x160xbf16>, %a: f32, %b: f32) -> (!r, !c) {
  %r, %c = nvfp4.dual_quantize %x amax(%a) columnwise amax(%b) hadamard(55272)
      : tensor<96x160xbf16> -> !r, !c
  return %r, %c : !r, !c
}

// Only the rowwise amax given: the pass computes the post-RHT amax alone.
// Without the RHT the columnwise amax is max |x| (the plain amax pass).
// CHECK-LABEL: func.func @one_amax_given
// CHECK: gpu.launch_func @nvfp4_kernels::@nvfp4_dual_quantize_amax_96x160xbf16_rht_mask255
// CHECK-SAME: args(%{{.*}} : memref<15360xbf16>, %{{.*}} : memref<1xi32>)
// CHECK: gpu.launch_func @nvfp4_kernels::@nvfp4_dual_quantize_96x160xbf16_row_rn_amaxarg_col_rht_rn_mask255
// CHECK: gpu.launch_func @nvfp4_kernels::@nvfp4_amax_15360xbf16
// CHECK: gpu.launch_func @nvfp4_kernels::@nvfp4_dual_quantize_96x160xbf16_row_rn_amaxarg_col_rn
// CHECK-NOT: launch_func
// CHECK: return
func.func @one_amax_given(%x: tensor<96x160xbf16>, %a: f32) -> (!r, !c, !r, !c) {
  %r0, %c0 = nvfp4.dual_quantize %x amax(%a) columnwise hadamard(255)
      : tensor<96x160xbf16> -> !r, !c
  %r1, %c1 = nvfp4.dual_quantize %x amax(%a) columnwise
      : tensor<96x160xbf16> -> !r, !c
  return %r0, %c0, %r1, %c1 : !r, !c, !r, !c
}

// One computed amax given to both parts (share-amax's nvfp4.amax): the
// kernel copies it into the columnwise result's own amax buffer.
// CHECK-LABEL: func.func @shared_amax
// CHECK: gpu.launch_func @nvfp4_kernels::@nvfp4_amax_15360xbf16
// CHECK-SAME: %[[A:[a-z0-9_]+]] : memref<1xi32>)
// CHECK: %[[CA:.*]] = gpu.alloc () : memref<1xi32>
// CHECK: gpu.launch_func @nvfp4_kernels::@nvfp4_dual_quantize_96x160xbf16_row_rn_col_rn_amaxcopy
// CHECK-SAME: args(%{{.*}} : memref<15360xbf16>, %[[A]] : memref<1xi32>, %[[A]] : memref<1xi32>, {{.*}}, %[[CA]] : memref<1xi32>)
// CHECK: return %{{.*}}, %{{.*}}, %[[A]], %{{.*}}, %{{.*}}, %[[CA]] :
func.func @shared_amax(%x: tensor<96x160xbf16>) -> (!r, !c) {
  %a = nvfp4.amax %x : tensor<96x160xbf16>
  %r, %c = nvfp4.dual_quantize %x amax(%a) columnwise amax(%a)
      : tensor<96x160xbf16> -> !r, !c
  return %r, %c : !r, !c
}

// An odd number of tile rows and columns (48 x 80: 3 x 5 tiles), batched,
// f32 with swizzled rowwise scales: both amaxes are max |x| (one pass), and
// the stores split into 8-byte runs and single scale bytes (the pairs are
// not aligned), guarded one by one (kernel below).
// CHECK-LABEL: func.func @ragged
// CHECK: gpu.launch_func @nvfp4_kernels::@nvfp4_dual_quantize_amax_2x48x80xf32_row_col
// CHECK: gpu.launch_func @nvfp4_kernels::@nvfp4_dual_quantize_2x48x80xf32_row_rn_swizzled_col_sr
func.func @ragged(%x: tensor<2x48x80xf32>, %s: i64)
    -> (!nvfp4.tensor<2x48x80xf4E2M1FN, scale = f8E4M3FN, block = 1x16, layout = swizzled_128x4>,
        !nvfp4.tensor<2x80x48xf4E2M1FN, scale = f8E4M3FN, block = 1x16>) {
  %r, %c = nvfp4.dual_quantize %x columnwise rounding<stochastic> seed(%s)
      : tensor<2x48x80xf32>
      -> !nvfp4.tensor<2x48x80xf4E2M1FN, scale = f8E4M3FN, block = 1x16, layout = swizzled_128x4>,
         !nvfp4.tensor<2x80x48xf4E2M1FN, scale = f8E4M3FN, block = 1x16>
  return %r, %c : !nvfp4.tensor<2x48x80xf4E2M1FN, scale = f8E4M3FN, block = 1x16, layout = swizzled_128x4>,
                  !nvfp4.tensor<2x80x48xf4E2M1FN, scale = f8E4M3FN, block = 1x16>
}

// The amax kernel: persistent, two runs a lane (the next two loaded
// first), max |x| in BF16 pairs, the tile transposed through the half
// warp's tile of the shared transpose buffer (two 16-byte row stores and
// 16 element loads between warp barriers; no shuffles), the RHT in
// registers, one atomic max per warp and amax.
// CHECK: gpu.func @nvfp4_dual_quantize_amax_96x160xbf16_row_rht_mask55272
// CHECK-SAME: nvvm.minctasm = 4
// CHECK-COUNT-2: vector.load %{{.*}} {alignment = 16 : i64} : memref<15360xbf16>, vector<16xbf16>
// CHECK: scf.for
// CHECK-COUNT-2: vector.load %{{.*}} {alignment = 16 : i64} : memref<15360xbf16>, vector<16xbf16>
// CHECK: llvm.call_intrinsic "llvm.nvvm.fmax.xorsign.abs.bf16x2"
// CHECK-NOT: gpu.shuffle
// CHECK: nvvm.bar.warp.sync
// CHECK-COUNT-2: vector.store %{{.*}} {alignment = 16 : i64} : memref<6400xbf16, #gpu.address_space<workgroup>>, vector<8xbf16>
// CHECK: nvvm.bar.warp.sync
// CHECK-COUNT-16: memref.load %{{.*}} : memref<6400xbf16, #gpu.address_space<workgroup>>
// CHECK-NOT: gpu.shuffle
// CHECK: llvm.call_intrinsic "llvm.nvvm.ff2bf16x2.rn"(%{{.*}}, %{{.*}}) : (f32, f32) -> vector<2xbf16>
// CHECK: memref.atomic_rmw maxs
// CHECK: memref.atomic_rmw maxs
// The quantize kernel: two encode tables and the region stage (16-byte
// aligned); per tile row the rowwise block and, after the transpose and the
// RHT, the columnwise block (each with its cvt scale, table lookup, Philox
// bits and rounding), each put into the stage (8-byte codes, a scale byte);
// then, between barriers, the copy out of the stage: two 8-byte code pieces
// and two scale bytes a thread, rowwise then columnwise.
// CHECK: gpu.func @nvfp4_dual_quantize_96x160xbf16_row_sr_col_rht_sr_mask55272
// CHECK-SAME: memref<128xf32, #gpu.address_space<workgroup>>, %{{.*}} : memref<128xf32, #gpu.address_space<workgroup>>, %{{.*}} : memref<9216xi8, #gpu.address_space<workgroup>> {llvm.align = 16 : i64}, %{{.*}} : memref<6400xbf16, #gpu.address_space<workgroup>> {llvm.align = 16 : i64})
// CHECK-SAME: nvvm.minctasm = 2
// CHECK: nvvm.convert.f32x2.to.f8x2
// CHECK: llvm.call_intrinsic "llvm.nvvm.mulhi.ui"
// HOPPER-NOT: nvvm.convert.f32x4
// HOPPER: llvm.call_intrinsic "llvm.nvvm.add.rz.f"
// BW: nvvm.convert.f32x4.to.f4x4
// CHECK: vector.store %{{.*}} {alignment = 8 : i64} : memref<2304xi32, #gpu.address_space<workgroup>>, vector<2xi32>
// CHECK: memref.store %{{.*}} : memref<9216xi8, #gpu.address_space<workgroup>>
// CHECK: nvvm.bar.warp.sync
// CHECK-COUNT-16: memref.load %{{.*}} : memref<6400xbf16, #gpu.address_space<workgroup>>
// CHECK: llvm.call_intrinsic "llvm.nvvm.ff2bf16x2.rn"(%{{.*}}, %{{.*}}) : (f32, f32) -> vector<2xbf16>
// CHECK-NOT: gpu.shuffle
// CHECK: gpu.barrier
// CHECK-COUNT-2: vector.store %{{.*}} {alignment = 8 : i64} : memref<1920xi32>, vector<2xi32>
// CHECK-COUNT-2: memref.store %{{.*}} : memref<960xi8>
// CHECK-COUNT-2: vector.store %{{.*}} {alignment = 8 : i64} : memref<1920xi32>, vector<2xi32>
// CHECK-COUNT-2: memref.store %{{.*}} : memref<960xi8>
// CHECK: gpu.barrier
// CHECK: gpu.return
// The ragged kernel: 32-bit elements through the transpose buffer (four
// 16-byte row stores), its 8-byte code pieces through the stage.
// CHECK: gpu.func @nvfp4_dual_quantize_2x48x80xf32_row_rn_swizzled_col_sr
// CHECK-COUNT-2: vector.load %{{.*}} {alignment = 16 : i64} : memref<7680xf32>, vector<16xf32>
// CHECK-COUNT-4: vector.store %{{.*}} {alignment = 16 : i64} : memref<5376xf32, #gpu.address_space<workgroup>>, vector<4xf32>
// CHECK-COUNT-16: memref.load %{{.*}} : memref<5376xf32, #gpu.address_space<workgroup>>
// CHECK-NOT: vector<4xi32>
// CHECK: gpu.barrier
// CHECK-COUNT-2: vector.store %{{.*}} {alignment = 8 : i64} : memref<960xi32>, vector<2xi32>
// CHECK-COUNT-2: memref.store %{{.*}} : memref<2048xi8>
// CHECK-COUNT-2: vector.store %{{.*}} {alignment = 8 : i64} : memref<960xi32>, vector<2xi32>
// CHECK-COUNT-2: memref.store %{{.*}} : memref<480xi8>
// CHECK-NOT: vector<4xi32>
// CHECK: gpu.barrier
// CHECK: gpu.return
