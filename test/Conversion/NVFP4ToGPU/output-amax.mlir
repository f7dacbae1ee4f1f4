// RUN: nvfp4-opt %s --convert-nvfp4-to-gpu=chip=sm_90a | FileCheck %s
// RUN: nvfp4-opt %s --convert-nvfp4-to-gpu=chip=sm_120a | FileCheck %s --check-prefix=SM120

// scaled_matmul's second result, the amax of its (rounded) output: the GEMM
// kernel gets a zero-filled FP32-bits buffer as its last argument, reduces
// |C| per warp with shuffles and adds it with one integer atomic max per
// warp; the host reads nothing back -- a quantization of C takes the buffer
// as its amax.

!a = !nvfp4.tensor<96x272xf4E2M1FN, scale = f8E4M3FN, block = 1x16>
!b = !nvfp4.tensor<48x272xf4E2M1FN, scale = f8E4M3FN, block = 16x16>
!c = !nvfp4.tensor<96x48xf4E2M1FN, scale = f8E4M3FN, block = 1x16>

// SIMT (K = 272 is not a multiple of 256).
// CHECK-LABEL: func.func @simt
// CHECK: %[[AMAX:.*]] = gpu.alloc () : memref<1xi32>
// CHECK-NEXT: %[[ZERO:.*]] = arith.constant 0 : i32
// CHECK-NEXT: gpu.memset %[[AMAX]], %[[ZERO]]
// CHECK: gpu.launch_func @nvfp4_kernels::@nvfp4_scaled_matmul_96x48x272_1x16_16x16_to_bf16_amax_simt
// CHECK-SAME: %[[C:[^ ]*]] : memref<4608xbf16>, %[[AMAX]] : memref<1xi32>)
// CHECK-NOT: gpu.memset
// CHECK: gpu.launch_func @nvfp4_kernels::@nvfp4_quantize_96x48xbf16_1x16_rn
// CHECK-SAME: : memref<4608xbf16>, %[[AMAX]] : memref<1xi32>,
func.func @simt(%x: !a, %w: !b) -> (tensor<96x48xbf16>, !c) {
  %c, %m = nvfp4.scaled_matmul %x, %w : !a, !b -> tensor<96x48xbf16>, f32
  %q = nvfp4.quantize %c amax(%m) : tensor<96x48xbf16> -> !c
  return %c, %q : tensor<96x48xbf16>, !c
}

// The returned amax alone is read back on the host.
// CHECK-LABEL: func.func @amax_only
// CHECK: gpu.launch_func @nvfp4_kernels::@nvfp4_scaled_matmul_96x48x272_1x16_16x16_to_f32_amax_simt
// CHECK-SAME: %[[AMAX:[^ ]*]] : memref<1xi32>)
// CHECK: %[[BITS:.*]] = memref.load %[[AMAX]]
// CHECK: %[[F:.*]] = arith.bitcast %[[BITS]] : i32 to f32
// CHECK: return %{{.*}}, %[[F]]
func.func @amax_only(%x: !a, %w: !b) -> (tensor<96x48xf32>, f32) {
  %c, %m = nvfp4.scaled_matmul %x, %w : !a, !b -> tensor<96x48xf32>, f32
  return %c, %m : tensor<96x48xf32>, f32
}

// Without the second result: the kernel of before.
// CHECK-LABEL: func.func @no_amax
// CHECK: gpu.launch_func @nvfp4_kernels::@nvfp4_scaled_matmul_96x48x272_1x16_16x16_to_bf16_simt
// CHECK-SAME: : memref<4608xbf16>)
func.func @no_amax(%x: !a, %w: !b) -> tensor<96x48xbf16> {
  %c = nvfp4.scaled_matmul %x, %w : !a, !b -> tensor<96x48xbf16>
  return %c : tensor<96x48xbf16>
}

// The tensor-core kernel: a per-thread maximum (a private one-element
// buffer LLVM keeps in a register), folded in at every store.
// CHECK-LABEL: func.func @tensor_cores
// CHECK: gpu.launch_func @nvfp4_kernels::@nvfp4_scaled_matmul_128x128x256_1x16_16x16_to_bf16_amax_wgmma_128x128x256_s4
// SM120-LABEL: func.func @tensor_cores
// sm_120a takes its TMA-store schedule (docs/Blackwell.md section 7).
// SM120: gpu.launch_func @nvfp4_kernels::@nvfp4_scaled_matmul_128x128x256_1x16_16x16_to_bf16_amax_mxf4_128x128x128_s4_ts
// SM120-SAME: !nvgpu.tensormap.descriptor<tensor = memref<1x16x64xbf16, 3>, swizzle = swizzle_128b, {{.*}}>, %{{.*}} : memref<1xi32>)
func.func @tensor_cores(%x: !nvfp4.tensor<128x256xf4E2M1FN, scale = f8E4M3FN, block = 1x16>,
                        %w: !nvfp4.tensor<128x256xf4E2M1FN, scale = f8E4M3FN, block = 16x16>)
    -> (tensor<128x128xbf16>, f32) {
  %c, %m = nvfp4.scaled_matmul %x, %w
      : !nvfp4.tensor<128x256xf4E2M1FN, scale = f8E4M3FN, block = 1x16>,
        !nvfp4.tensor<128x256xf4E2M1FN, scale = f8E4M3FN, block = 16x16>
      -> tensor<128x128xbf16>, f32
  return %c, %m : tensor<128x128xbf16>, f32
}

// The SIMT kernel: |stored value| leaves the bounds check as the if's
// result (0 outside C), then the whole warp reduces it.
// CHECK: gpu.func @nvfp4_scaled_matmul_96x48x272_1x16_16x16_to_bf16_amax_simt
// CHECK: %[[V:.*]] = scf.if %{{.*}} -> (f32)
// CHECK: math.absf
// CHECK: scf.yield
// CHECK: scf.yield %{{.*}} : f32
// CHECK-COUNT-5: gpu.shuffle xor
// CHECK: memref.atomic_rmw maxs
// CHECK: gpu.func @nvfp4_scaled_matmul_128x128x256_1x16_16x16_to_bf16_amax_wgmma_128x128x256_s4
// CHECK: memref.alloca() : memref<1xf32>
// CHECK: arith.maxnumf
// CHECK-COUNT-5: gpu.shuffle xor
// CHECK: memref.atomic_rmw maxs
// On the TMA-store epilogue the amax folds a pair only where it lies
// inside C (the map clips what the staging buffer holds beyond it).
// SM120: gpu.func @nvfp4_scaled_matmul_128x128x256_1x16_16x16_to_bf16_amax_mxf4_128x128x128_s4_ts
// SM120: memref.alloca() : memref<1xf32>
// SM120: nvvm.barrier id = %{{.*}} number_of_threads = %c256_i32
// SM120: %[[INSIDE:.*]] = arith.select
// SM120: arith.maxnumf
// SM120: nvvm.stmatrix
// SM120: nvvm.cp.async.bulk.tensor.global.shared.cta
// SM120: nvvm.cp.async.bulk.tensor.global.shared.cta
// SM120-COUNT-5: gpu.shuffle xor
// SM120: memref.atomic_rmw maxs
// SM120: nvvm.cp.async.bulk.wait_group 0
