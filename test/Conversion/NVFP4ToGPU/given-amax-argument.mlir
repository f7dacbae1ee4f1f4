// RUN: nvfp4-opt %s --convert-nvfp4-to-gpu=chip=sm_90a | FileCheck %s

// A quantization whose amax is an argument of the host function, between
// two GEMMs (bench/make_bench.sh's gemm_quantize_static_unfused): the
// function's block arguments are converted before the quantization is, so
// the lowering must not take the argument's (already detached) block for
// the function's entry block -- it crashed in Block::isEntryBlock. The
// amax then reaches the quantize kernel through a device buffer.

!a = !nvfp4.tensor<256x256xf4E2M1FN, scale = f8E4M3FN, block = 1x16>
!w = !nvfp4.tensor<256x256xf4E2M1FN, scale = f8E4M3FN, block = 16x16>

// CHECK-LABEL: func.func @gemm_quantize_gemm
// CHECK: gpu.launch_func @nvfp4_kernels::@nvfp4_scaled_matmul_256x256x256
// CHECK: gpu.launch_func @nvfp4_kernels::@nvfp4_quantize_256x256xbf16_1x16_rn
// CHECK: gpu.launch_func @nvfp4_kernels::@nvfp4_scaled_matmul_256x256x256
func.func @gemm_quantize_gemm(%a: !a, %b: !w, %v: !w, %g: f32) -> tensor<256x256xbf16> {
  %c = nvfp4.scaled_matmul %a, %b : !a, !w -> tensor<256x256xbf16>
  %q = nvfp4.quantize %c amax(%g) : tensor<256x256xbf16> -> !a
  %d = nvfp4.scaled_matmul %q, %v : !a, !w -> tensor<256x256xbf16>
  return %d : tensor<256x256xbf16>
}
