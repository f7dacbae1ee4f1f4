// RUN: nvfp4-opt %s --nvfp4-assign-precision -allow-unregistered-dialect | FileCheck %s --check-prefix=ASSIGN
// RUN: nvfp4-opt %s --nvfp4-assign-precision --nvfp4-print-precision-report=output-file=- -o /dev/null | FileCheck %s --check-prefix=REPORT
// RUN: nvfp4-opt %s --nvfp4-apply-recipe --nvfp4-fuse-quantization -o /dev/null 2>/dev/null
// RUN: not nvfp4-compile %s --chip=sm_90a --no-ptxas-check -o /dev/null 2>&1 | FileCheck %s --check-prefix=COMPILE

// In a graph region (the module body) the operands of a GEMM can come from
// a use-def cycle of element moves. The graph passes walked such chains back
// forever (assign-precision, apply-recipe and the report hung); the walks now
// stop at graph-region ops. (Upstream -canonicalize crashes on this input:
// fuzz/known-upstream/linalg-transpose-cycle-fold.mlir.)

// ASSIGN: linalg.matmul {nvfp4.layer = 0 : i64, nvfp4.precision = "nvfp4"}
// REPORT: NVFP4 precision report: 1 GEMMs, 1 in NVFP4
// COMPILE: error: 'nvfp4.quantize' op is in a graph region (the body of 'builtin.module')
%e = tensor.empty() : tensor<32x32xbf16>
%t = linalg.transpose ins(%u : tensor<32x32xbf16>) outs(%e : tensor<32x32xbf16>) permutation = [1, 0]
%u = linalg.transpose ins(%t : tensor<32x32xbf16>) outs(%e : tensor<32x32xbf16>) permutation = [1, 0]
%m = linalg.matmul {nvfp4.layer = 0 : i64} ins(%t, %u : tensor<32x32xbf16>, tensor<32x32xbf16>) outs(%e : tensor<32x32xbf16>) -> tensor<32x32xbf16>
