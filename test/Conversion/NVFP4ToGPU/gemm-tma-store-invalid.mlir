// RUN: not nvfp4-opt %s --convert-nvfp4-to-gpu='chip=sm_90a gemm-schedule=128x256x256_s0_d4w0_p16_ts' 2>&1 | FileCheck %s --check-prefix=ALIGN
// RUN: not nvfp4-opt %s --convert-nvfp4-to-gpu='chip=sm_90a gemm-schedule=128x128x256_s4_ts' 2>&1 | FileCheck %s --check-prefix=KERNEL
// RUN: not nvfp4-opt %s --convert-nvfp4-to-gpu='chip=sm_100a gemm-schedule=128x128x256_s4_p8_ts' 2>&1 | FileCheck %s --check-prefix=ALIGN100
// RUN: not nvfp4-opt %s --convert-nvfp4-to-gpu='chip=sm_100a gemm-schedule=128x128x256_s4_ts' 2>&1 | FileCheck %s --check-prefix=ALIGN100
// RUN: not nvfp4-opt %s --convert-nvfp4-to-gpu='chip=sm_90a gemm-schedule=128x256x256_s0_d4w0_p16_ts_c2' 2>&1 | FileCheck %s --check-prefix=ORDER
// RUN: not nvfp4-opt %s --convert-nvfp4-to-gpu='chip=sm_120a gemm-schedule=128x128x128_s4_ts' 2>&1 | FileCheck %s --check-prefix=ALIGN120

// Schedules the TMA-store epilogue (_ts) cannot take are errors on the op,
// never a silent fallback (gemm-tma-store.mlir has the ones it takes).

!a = !nvfp4.tensor<256x512xf4E2M1FN, scale = f8E4M3FN, block = 1x16>
!b = !nvfp4.tensor<100x512xf4E2M1FN, scale = f8E4M3FN, block = 1x16>

// C's rows must be multiples of 16 bytes (the tensor map's stride): N = 100
// BF16 values are 200 bytes.
// ALIGN: error: 'nvfp4.scaled_matmul' op cannot use gemm-schedule=128x256x256_s0_d4w0_p16_ts: the TMA store (_ts) needs rows of C of a multiple of 16 bytes (N = 100 x 2 bytes)
// ALIGN100: error: 'nvfp4.scaled_matmul' op cannot use gemm-schedule=128x128x256_s4{{(_p8)?}}_ts: the TMA store (_ts) needs rows of C of a multiple of 16 bytes (N = 100 x 2 bytes)
// ALIGN120: error: 'nvfp4.scaled_matmul' op cannot use gemm-schedule=128x128x128_s4_ts: the TMA store (_ts) needs rows of C of a multiple of 16 bytes (N = 100 x 2 bytes)
// Only the sm_90a decoded-stage kernels, the tcgen05 kernels (sm_100a,
// sm_103a) and the sm_120a kernel have it.
// KERNEL: error: 'nvfp4.scaled_matmul' op cannot use gemm-schedule=128x128x256_s4_ts: the TMA-store epilogue (_ts) is implemented for the sm_90a decoded-stage kernels (_dDwW), the tcgen05 kernels and the sm_120a kernel only
// The suffix comes last, as GemmSchedule::name() writes it.
// ORDER: error: gemm-schedule '128x256x256_s0_d4w0_p16_ts_c2': unexpected '_c2'
func.func @unaligned(%a: !a, %b: !b) -> tensor<256x100xbf16> {
  %c = nvfp4.scaled_matmul %a, %b : !a, !b -> tensor<256x100xbf16>
  return %c : tensor<256x100xbf16>
}
