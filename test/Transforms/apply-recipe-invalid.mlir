// A seed-argument that does not name an i64 argument is an error on every
// GEMM that needs a seed (GEMMs without stochastic rounding do not).
// RUN: nvfp4-opt %s --nvfp4-apply-recipe=seed-argument=2 -split-input-file -verify-diagnostics

func.func @seed_argument_not_i64(%dy: tensor<16x32xbf16>, %w: tensor<32x16xbf16> {nvfp4.weight},
                                 %seed: i32, %init: tensor<16x16xbf16>) -> tensor<16x16xbf16> {
  // expected-error @+1 {{nvfp4-apply-recipe: seed-argument=2 does not name an i64 argument of the enclosing function}}
  %r = linalg.matmul {nvfp4.role = "dgrad", nvfp4.precision = "nvfp4"}
      ins(%dy, %w : tensor<16x32xbf16>, tensor<32x16xbf16>)
      outs(%init : tensor<16x16xbf16>) -> tensor<16x16xbf16>
  %y = linalg.matmul {nvfp4.role = "fprop", nvfp4.precision = "nvfp4"}
      ins(%dy, %w : tensor<16x32xbf16>, tensor<32x16xbf16>)
      outs(%init : tensor<16x16xbf16>) -> tensor<16x16xbf16>
  return %y : tensor<16x16xbf16>
}

// -----

func.func @seed_argument_out_of_range(%dy: tensor<16x32xbf16>, %w: tensor<32x16xbf16> {nvfp4.weight})
    -> tensor<16x16xbf16> {
  %zero = arith.constant 0.0 : bf16
  %e = tensor.empty() : tensor<16x16xbf16>
  %init = linalg.fill ins(%zero : bf16) outs(%e : tensor<16x16xbf16>) -> tensor<16x16xbf16>
  // expected-error @+1 {{nvfp4-apply-recipe: seed-argument=2 does not name an i64 argument of the enclosing function}}
  %r = linalg.matmul {nvfp4.role = "dgrad", nvfp4.precision = "nvfp4"}
      ins(%dy, %w : tensor<16x32xbf16>, tensor<32x16xbf16>)
      outs(%init : tensor<16x16xbf16>) -> tensor<16x16xbf16>
  return %r : tensor<16x16xbf16>
}

// -----

// FP8 GEMMs have no lowering yet: asking for one is an error, not a GEMM
// that silently runs in BF16.
func.func @fp8_not_supported(%x: tensor<16x32xbf16>, %w: tensor<32x16xbf16> {nvfp4.weight},
                             %init: tensor<16x16xbf16>) -> tensor<16x16xbf16> {
  // expected-error @+1 {{nvfp4-apply-recipe: nvfp4.precision = "fp8" is not supported yet (FP8 GEMMs have no lowering); use "nvfp4" or "bf16"}}
  %y = linalg.matmul {nvfp4.precision = "fp8"}
      ins(%x, %w : tensor<16x32xbf16>, tensor<32x16xbf16>)
      outs(%init : tensor<16x16xbf16>) -> tensor<16x16xbf16>
  return %y : tensor<16x16xbf16>
}
