// A GEMM too large for a block-scaled tensor (more than 2^47 elements in an
// operand, rule T6 of !nvfp4.tensor) stays in bf16 with a remark. Before
// this was checked, nvfp4-apply-recipe built an !nvfp4.tensor whose padded
// scale matrix overflowed int64, and convert-nvfp4-to-reference crashed on
// it (found by probing for the fuzzer, issue 7).
// RUN: nvfp4-opt %s --nvfp4-assign-precision='keep-first=0 keep-last=0' -split-input-file \
// RUN:   -verify-diagnostics \
// RUN:   | FileCheck %s --check-prefix=ASSIGN
// RUN: nvfp4-opt %s --nvfp4-assign-precision='keep-first=0 keep-last=0' --nvfp4-apply-recipe \
// RUN:   --convert-nvfp4-to-reference \
// RUN:   -split-input-file -verify-diagnostics | FileCheck %s --check-prefix=APPLY

#x = affine_map<(m, n, k) -> (m, k)>
#w = affine_map<(m, n, k) -> (n, k)>
#y = affine_map<(m, n, k) -> (m, n)>

// ASSIGN-LABEL: func.func @rows_int64_max
// ASSIGN:         linalg.matmul {{.*}}nvfp4.precision = "bf16"
// APPLY-LABEL:  func.func @rows_int64_max
// APPLY:          linalg.matmul {{.*}}nvfp4.precision = "bf16"
// APPLY-NOT:      nvfp4.quantize
func.func @rows_int64_max(%x: tensor<9223372036854775807x128xbf16>,
                          %w: tensor<256x128xbf16> {nvfp4.weight},
                          %init: tensor<9223372036854775807x256xbf16>)
    -> tensor<9223372036854775807x256xbf16> {
  // expected-remark @+1 {{the GEMM is too large to quantize (an operand has more than 2^47 elements); kept in bf16}}
  %y = linalg.matmul indexing_maps = [#x, #w, #y]
      {nvfp4.layer = 4 : i64, nvfp4.kind = "ffn", nvfp4.role = "fprop"}
      ins(%x, %w : tensor<9223372036854775807x128xbf16>, tensor<256x128xbf16>)
      outs(%init : tensor<9223372036854775807x256xbf16>) -> tensor<9223372036854775807x256xbf16>
  return %y : tensor<9223372036854775807x256xbf16>
}

// -----

#x = affine_map<(m, n, k) -> (m, k)>
#w = affine_map<(m, n, k) -> (n, k)>
#y = affine_map<(m, n, k) -> (m, n)>

// M * K overflows int64 although each dimension fits.
// ASSIGN-LABEL: func.func @product_overflows
// APPLY-LABEL:  func.func @product_overflows
// APPLY-NOT:      nvfp4.quantize
func.func @product_overflows(%x: tensor<4294967296x4294967296xbf16>,
                             %w: tensor<16x4294967296xbf16> {nvfp4.weight},
                             %init: tensor<4294967296x16xbf16>)
    -> tensor<4294967296x16xbf16> {
  // expected-remark @+1 {{the GEMM is too large to quantize (an operand has more than 2^47 elements); kept in bf16}}
  %y = linalg.matmul indexing_maps = [#x, #w, #y]
      {nvfp4.layer = 4 : i64, nvfp4.kind = "ffn"}
      ins(%x, %w : tensor<4294967296x4294967296xbf16>, tensor<16x4294967296xbf16>)
      outs(%init : tensor<4294967296x16xbf16>) -> tensor<4294967296x16xbf16>
  return %y : tensor<4294967296x16xbf16>
}

// -----

#x = affine_map<(m, n, k) -> (m, k)>
#w = affine_map<(m, n, k) -> (k, n)>
#y = affine_map<(m, n, k) -> (m, n)>

// Each operand has 2^36 elements, the result 2^64: the scaled_matmul
// apply-recipe would build violates scaled_matmul_c4, so the GEMM stays in
// bf16 (before, its kernels were built for a wrapped count of 0 elements).
// ASSIGN-LABEL: func.func @result_overflows
// ASSIGN:         linalg.matmul {{.*}}nvfp4.precision = "bf16"
// APPLY-LABEL:  func.func @result_overflows
// APPLY-NOT:      nvfp4.quantize
func.func @result_overflows(%a: tensor<4294967296x16xbf16>,
                            %b: tensor<16x4294967296xbf16> {nvfp4.weight},
                            %init: tensor<4294967296x4294967296xbf16>)
    -> tensor<4294967296x4294967296xbf16> {
  // expected-remark @+1 {{the GEMM is too large to quantize (its result has more than 2^47 elements); kept in bf16}}
  %y = linalg.matmul indexing_maps = [#x, #w, #y]
      {nvfp4.layer = 3 : i64}
      ins(%a, %b : tensor<4294967296x16xbf16>, tensor<16x4294967296xbf16>)
      outs(%init : tensor<4294967296x4294967296xbf16>) -> tensor<4294967296x4294967296xbf16>
  return %y : tensor<4294967296x4294967296xbf16>
}
