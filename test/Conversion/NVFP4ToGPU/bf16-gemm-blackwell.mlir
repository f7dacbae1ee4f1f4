// RUN: nvfp4-opt %s --split-input-file --convert-nvfp4-to-gpu=chip=sm_100a 2>/dev/null | FileCheck %s --check-prefix=TCGEN05
// RUN: nvfp4-opt %s --split-input-file --convert-nvfp4-to-gpu=chip=sm_103a 2>/dev/null | FileCheck %s --check-prefix=TCGEN05
// RUN: nvfp4-opt %s --split-input-file --convert-nvfp4-to-gpu=chip=sm_120a 2>/dev/null | FileCheck %s --check-prefix=MMA
// RUN: nvfp4-opt %s --split-input-file --convert-nvfp4-to-gpu=chip=sm_103a -o /dev/null 2>&1 | FileCheck %s --check-prefix=WARN

// The BF16 GEMM on Blackwell (BF16Gemm.cpp, docs/Blackwell.md section 12).
// sm_100a / sm_103a: the tcgen05 kernel with tcgen05.mma .kind::f16 and
// instruction descriptor 136316048 (0x08200490: BF16 x BF16 -> F32, M = N
// = 128, K-major; unittests/Target/InstrDescTest.cpp), 4 MMAs per stage of
// 64 BF16 a row read by BF16 tensor maps (boxes 1 x 128 x 64, 128-byte
// swizzle), no scale staging: no tcgen05.cp, no block-scaled MMA. The fill
// of C dies with the GEMM (every element is written).
// TCGEN05-LABEL: func.func @attention_bmm
// TCGEN05-NOT: gpu.memset %{{.*}} : memref<4x128x128xbf16>
// TCGEN05: nvgpu.tma.create.descriptor %{{.*}} : memref<*xbf16> -> <tensor = memref<1x128x64xbf16, 3>, swizzle = swizzle_128b
// TCGEN05: gpu.launch_func @nvfp4_kernels::@[[K:nvfp4_bf16_matmul_4x128x128x128_to_bf16_tcgen05_128x128x64_s6_ts]] blocks in (%{{.*}}, %{{.*}}, %c4{{.*}}) threads in (%c192
// TCGEN05-NOT: linalg.batch_matmul
// TCGEN05: gpu.func @[[K]](
// TCGEN05-NOT: nvvm.tcgen05.cp
// TCGEN05-NOT: nvvm.tcgen05.mma.block_scale
// TCGEN05: nvvm.tcgen05.mma %{{.*}}, %{{.*}}, %{{.*}}, %c136316048_i32{{.*}} {ctaGroup = #nvvm.cta_group<cta_1>, kind = #nvvm.tcgen05_mma_kind<f16>}
// TCGEN05-NOT: nvvm.tcgen05.cp
// TCGEN05-NOT: nvvm.tcgen05.mma.block_scale
// TCGEN05: gpu.return
// sm_120a: mma.sync m16n8k16 with BF16 operands, stages of 32 BF16 a row
// (boxes 1 x 128 x 32, 64-byte swizzle).
// MMA-LABEL: func.func @attention_bmm
// MMA: nvgpu.tma.create.descriptor %{{.*}} : memref<*xbf16> -> <tensor = memref<1x128x32xbf16, 3>, swizzle = swizzle_64b
// MMA: gpu.launch_func @nvfp4_kernels::@[[K:nvfp4_bf16_matmul_4x128x128x128_to_bf16_mma_128x128x32_s6_ts]]
// MMA: gpu.func @[[K]](
// MMA-NOT: nvvm.mma.block_scale
// MMA: nvvm.ldmatrix
// MMA: nvvm.mma.sync {{.*}}multiplicandAPtxType = #nvvm.mma_type<bf16>, multiplicandBPtxType = #nvvm.mma_type<bf16>
// MMA-SAME: shape = #nvvm.shape<m = 16, n = 8, k = 16>
// MMA-NOT: nvvm.mma.block_scale
// MMA: gpu.return
func.func @attention_bmm(%q: tensor<4x128x128xbf16>, %k: tensor<4x128x128xbf16>) -> tensor<4x128x128xbf16> {
  %zero = arith.constant 0.0 : bf16
  %e = tensor.empty() : tensor<4x128x128xbf16>
  %z = linalg.fill ins(%zero : bf16) outs(%e : tensor<4x128x128xbf16>) -> tensor<4x128x128xbf16>
  %s = linalg.batch_matmul indexing_maps = [affine_map<(b, m, n, k) -> (b, m, k)>, affine_map<(b, m, n, k) -> (b, n, k)>, affine_map<(b, m, n, k) -> (b, m, n)>]
      ins(%q, %k : tensor<4x128x128xbf16>, tensor<4x128x128xbf16>) outs(%z : tensor<4x128x128xbf16>) -> tensor<4x128x128xbf16>
  return %s : tensor<4x128x128xbf16>
}

// -----

// More tiles than SMs: persistent on tcgen05 (_p8: two TMEM accumulators,
// 256 columns); B stored [k, n] is transposed first; an FP32 C.
// TCGEN05-LABEL: func.func @persistent_kn
// TCGEN05: gpu.launch_func @nvfp4_kernels::@nvfp4_linalg_transpose_4096x2048_
// TCGEN05: gpu.launch_func @nvfp4_kernels::@[[P:nvfp4_bf16_matmul_4096x4096x2048_to_f32_tcgen05_128x128x64_s6_p8_ts]]
// TCGEN05: gpu.func @[[P]](
// TCGEN05: nvvm.tcgen05.alloc %{{.*}}, %c256_i32
// TCGEN05: nvvm.tcgen05.mma {{.*}}kind = #nvvm.tcgen05_mma_kind<f16>
// MMA-LABEL: func.func @persistent_kn
// MMA: gpu.launch_func @nvfp4_kernels::@nvfp4_linalg_transpose_4096x2048_
// MMA: gpu.launch_func @nvfp4_kernels::@nvfp4_bf16_matmul_4096x4096x2048_to_f32_mma_128x128x32_s6_ts blocks in (%c32{{.*}}, %c32{{.*}}, %c1
func.func @persistent_kn(%a: tensor<4096x2048xbf16>, %b: tensor<2048x4096xbf16>) -> tensor<4096x4096xf32> {
  %e = tensor.empty() : tensor<4096x4096xf32>
  %c = linalg.matmul ins(%a, %b : tensor<4096x2048xbf16>, tensor<2048x4096xbf16>) outs(%e : tensor<4096x4096xf32>) -> tensor<4096x4096xf32>
  return %c : tensor<4096x4096xf32>
}

// -----

// A shape the kernels cannot take stays on the host, with the reason: K = 12
// BF16 is a 24-byte row stride, which a TMA tensor map cannot describe.
// TCGEN05-LABEL: func.func @k_not_a_multiple_of_8
// TCGEN05: linalg.matmul
// WARN: warning: this 16-bit GEMM stays on the host: the sm_103a BF16 GEMM kernel cannot take it (K must be a multiple of 8 (16-byte TMA row strides))
// WARN-NOT: warning
func.func @k_not_a_multiple_of_8(%a: tensor<64x12xbf16>, %b: tensor<64x12xbf16>) -> tensor<64x64xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<64x64xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<64x64xf32>) -> tensor<64x64xf32>
  %c = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>]
      ins(%a, %b : tensor<64x12xbf16>, tensor<64x12xbf16>) outs(%z : tensor<64x64xf32>) -> tensor<64x64xf32>
  return %c : tensor<64x64xf32>
}
