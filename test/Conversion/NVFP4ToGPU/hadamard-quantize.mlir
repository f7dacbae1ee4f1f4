// RUN: nvfp4-opt %s --convert-nvfp4-to-gpu=chip=sm_90a | FileCheck %s --check-prefixes=CHECK,HOPPER
// RUN: nvfp4-opt %s --convert-nvfp4-to-gpu=chip=sm_100a | FileCheck %s --check-prefixes=CHECK,BW

// A 1x16 quantization with a `hadamard` sign mask (what
// nvfp4-fuse-quantization makes of quantize(hadamard(x))): one RHT + amax
// pass (the post-RHT amax) and one RHT + quantize kernel; the RHT output is
// never allocated.

!act = !nvfp4.tensor<64x128xf4E2M1FN, scale = f8E4M3FN, block = 1x16>

// CHECK-LABEL: func.func @wgrad_operand
// CHECK-NOT: nvfp4_hadamard
// CHECK: %[[AMAX:.*]] = gpu.alloc () : memref<1xi32>
// CHECK: gpu.memset %[[AMAX]]
// CHECK: gpu.launch_func @nvfp4_kernels::@nvfp4_rht_amax_8192xbf16_mask55272
// CHECK-SAME: args(%[[IN:.*]] : memref<8192xbf16>, %[[AMAX]] : memref<1xi32>)
// CHECK-NOT: gpu.alloc () : memref<64x128xbf16>
// CHECK: gpu.launch_func @nvfp4_kernels::@nvfp4_rht_quantize_64x128xbf16_1x16_sr_mask55272
// CHECK-SAME: args(%[[IN]] : memref<8192xbf16>, %[[AMAX]] : memref<1xi32>, %{{.*}} : memref<4096xi8>, %{{.*}} : memref<512xi8>, %arg1 : i64)
// CHECK-NOT: launch_func
// CHECK: return
func.func @wgrad_operand(%dy: tensor<64x128xbf16>, %seed: i64) -> !act {
  %q = nvfp4.quantize %dy hadamard(55272) rounding<stochastic> seed(%seed) : tensor<64x128xbf16> -> !act
  return %q : !act
}

// A given amax (TE's amax from the previous step): no amax pass; as an
// argument of the host function it is a kernel parameter (no memset).
// CHECK-LABEL: func.func @wgrad_operand_amax_given
// CHECK-NOT: nvfp4_rht_amax
// CHECK-NOT: gpu.memset
// CHECK: gpu.launch_func @nvfp4_kernels::@nvfp4_rht_quantize_64x128xbf16_1x16_rn_amaxarg_mask55272
// CHECK-NOT: launch_func
// CHECK: return
func.func @wgrad_operand_amax_given(%x: tensor<64x128xbf16>, %a: f32) -> !act {
  %q = nvfp4.quantize %x amax(%a) hadamard(55272) : tensor<64x128xbf16> -> !act
  return %q : !act
}

// An amax with a sign mask is the post-RHT amax pass alone; its quantization
// then gets it as a given amax.
// CHECK-LABEL: func.func @shared_post_rht_amax
// CHECK: gpu.launch_func @nvfp4_kernels::@nvfp4_rht_amax_8192xbf16_mask255
// CHECK-NOT: nvfp4_rht_amax
// CHECK: gpu.launch_func @nvfp4_kernels::@nvfp4_rht_quantize_64x128xbf16_1x16_rn_mask255
// CHECK-NOT: launch_func
// CHECK: return
func.func @shared_post_rht_amax(%x: tensor<64x128xbf16>) -> !act {
  %a = nvfp4.amax %x hadamard(255) : tensor<64x128xbf16>
  %q = nvfp4.quantize %x amax(%a) hadamard(255) : tensor<64x128xbf16> -> !act
  return %q : !act
}

// Without the fold, an RHT feeding a quantization is a kernel of its own:
// the lowering does not fuse behind the IR's back.
// CHECK-LABEL: func.func @unfolded
// CHECK: gpu.launch_func @nvfp4_kernels::@nvfp4_hadamard_8192xbf16_mask55272
// CHECK: gpu.launch_func @nvfp4_kernels::@nvfp4_amax_8192xbf16
// CHECK: gpu.launch_func @nvfp4_kernels::@nvfp4_quantize_64x128xbf16_1x16_rn
func.func @unfolded(%x: tensor<64x128xbf16>) -> !act {
  %h = nvfp4.hadamard %x : tensor<64x128xbf16>
  %q = nvfp4.quantize %h : tensor<64x128xbf16> -> !act
  return %q : !act
}

// An RHT with another user stays a kernel of its own.
// CHECK-LABEL: func.func @rht_two_users
// CHECK: gpu.launch_func @nvfp4_kernels::@nvfp4_hadamard_8192xbf16_mask55272
// CHECK: gpu.launch_func @nvfp4_kernels::@nvfp4_amax_8192xbf16
// CHECK: gpu.launch_func @nvfp4_kernels::@nvfp4_quantize_64x128xbf16_1x16_rn
func.func @rht_two_users(%x: tensor<64x128xbf16>) -> (!act, tensor<64x128xbf16>) {
  %h = nvfp4.hadamard %x : tensor<64x128xbf16>
  %q = nvfp4.quantize %h : tensor<64x128xbf16> -> !act
  return %q, %h : !act, tensor<64x128xbf16>
}

// The post-RHT amax kernel: persistent, two runs a thread (the next two
// loaded first), the RHT in registers (the butterfly, rounded to BF16 in
// pairs), one atomic max per warp.
// CHECK: gpu.func @nvfp4_rht_amax_8192xbf16_mask55272
// CHECK-COUNT-2: vector.load %{{.*}} {alignment = 16 : i64} : memref<8192xbf16>, vector<16xbf16>
// CHECK: scf.for
// CHECK-COUNT-2: vector.load %{{.*}} {alignment = 16 : i64} : memref<8192xbf16>, vector<16xbf16>
// CHECK: llvm.call_intrinsic "llvm.nvvm.ff2bf16x2.rn"(%{{.*}}, %{{.*}}) : (f32, f32) -> vector<2xbf16>
// CHECK: llvm.call_intrinsic "llvm.nvvm.fmax.xorsign.abs.bf16x2"
// CHECK: gpu.shuffle xor
// CHECK: memref.atomic_rmw maxs
// The fused kernel: per run the RHT, BF16 rounding, block scale (cvt and
// the encode table), Philox bits (one 32 x 32 -> 64-bit product per
// multiply), rounding; one 16-byte store of the pair's codes.
// CHECK: gpu.func @nvfp4_rht_quantize_64x128xbf16_1x16_sr_mask55272
// CHECK-SAME: nvvm.minctasm = 3
// CHECK: llvm.call_intrinsic "llvm.nvvm.ff2bf16x2.rn"(%{{.*}}, %{{.*}}) : (f32, f32) -> vector<2xbf16>
// CHECK: nvvm.convert.f32x2.to.f8x2
// CHECK: arith.muli %{{.*}}, %{{.*}} : i64
// HOPPER-NOT: nvvm.convert.f32x4
// HOPPER: math.fma
// HOPPER: llvm.call_intrinsic "llvm.nvvm.add.rz.f"
// BW: nvvm.convert.f32x4.to.f4x4
// CHECK: vector.store %{{.*}} {alignment = 16 : i64} : memref<1024xi32>, vector<4xi32>
// CHECK: gpu.func @nvfp4_rht_quantize_64x128xbf16_1x16_rn_amaxarg_mask55272
// The standalone RHT: the butterfly of NUMERICS.md section 4 in registers,
// 5 FP32 operations per element: the 10 sign flips of 0xD7E8, 4 stages of
// 8 (add, sub) pairs, 16 multiplies by 0.25, 16 roundings to BF16.
// CHECK: gpu.func @nvfp4_hadamard_8192xbf16_mask55272
// CHECK: vector.load %{{.*}} {alignment = 16 : i64} : memref<8192xbf16>, vector<16xbf16>
// CHECK-COUNT-10: arith.negf
// CHECK-NOT: arith.negf
// CHECK-COUNT-32: arith.subf
// CHECK-NOT: arith.addf
// CHECK: %[[QUARTER:.*]] = arith.constant 2.500000e-01 : f32
// CHECK-COUNT-16: arith.mulf %{{.*}}, %[[QUARTER]] : f32
// CHECK: vector.store %{{.*}} {alignment = 16 : i64} : memref<8192xbf16>, vector<16xbf16>
// CHECK: gpu.return
