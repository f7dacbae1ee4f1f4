// The recipe's switches (TransformerEngine's NVTE_NVFP4_DISABLE_* toggles)
// and the seed options, on one training step with annotated roles.
//
// RUN: nvfp4-opt %s --nvfp4-apply-recipe | FileCheck %s --check-prefix=DEFAULT
// RUN: nvfp4-opt %s --nvfp4-apply-recipe=rht=false | FileCheck %s --check-prefix=NO-RHT
// RUN: nvfp4-opt %s --nvfp4-apply-recipe=stochastic-rounding=false | FileCheck %s --check-prefix=NO-SR
// RUN: nvfp4-opt %s --nvfp4-apply-recipe=weight-2d=false | FileCheck %s --check-prefix=NO-2D
// RUN: nvfp4-opt %s --nvfp4-apply-recipe=seed=42 | FileCheck %s --check-prefix=CONST-SEED
// RUN: nvfp4-opt %s --nvfp4-apply-recipe=seed-argument=3 | FileCheck %s --check-prefix=SEED-ARG

#fprop_lhs = affine_map<(t, o, i) -> (t, i)>
#fprop_rhs = affine_map<(t, o, i) -> (o, i)>
#fprop_out = affine_map<(t, o, i) -> (t, o)>
#wgrad_lhs = affine_map<(o, i, t) -> (t, o)>
#wgrad_rhs = affine_map<(o, i, t) -> (t, i)>
#wgrad_out = affine_map<(o, i, t) -> (o, i)>

// Defaults: W 16x16 for fprop and dgrad, dY stochastic for dgrad, RHT on
// both wgrad operands and stochastic rounding on dY^T only.
// DEFAULT-LABEL: func.func @step
// DEFAULT-NOT:     rounding<stochastic>
// DEFAULT:         block = 16x16>
// DEFAULT:         role<fprop>
// DEFAULT:         rounding<stochastic>
// DEFAULT:         block = 16x16>
// DEFAULT:         role<dgrad>
// DEFAULT:         nvfp4.hadamard
// DEFAULT:         rounding<stochastic>
// DEFAULT:         nvfp4.hadamard
// DEFAULT-NOT:     rounding<stochastic>
// DEFAULT:         role<wgrad>

// NO-RHT-LABEL: func.func @step
// NO-RHT-NOT:   nvfp4.hadamard
// NO-RHT:       role<wgrad>

// NO-SR-LABEL: func.func @step
// NO-SR-NOT:   rounding<stochastic>
// NO-SR-NOT:   seed(
// NO-SR:       role<wgrad>

// NO-2D-LABEL: func.func @step
// NO-2D-NOT:   block = 16x16
// NO-2D:       role<wgrad>

// SplitMix64 started at 42: outputs 1 and 2.
// CONST-SEED-LABEL: func.func @step
// CONST-SEED:       arith.constant -4767286540954276203 : i64
// CONST-SEED:       arith.constant 2949826092126892291 : i64

// The base seed is the i64 argument, mixed at run time with the stream
// index: z = seed + 0x9E3779B97F4A7C15 * (i + 1), then SplitMix64's mix.
// SEED-ARG-LABEL: func.func @step
// SEED-ARG-SAME:    %[[ARG:[^:]*]]: i64
// SEED-ARG:         %[[G1:.*]] = arith.constant -7046029254386353131 : i64
// SEED-ARG:         arith.addi %[[ARG]], %[[G1]] : i64
// SEED-ARG:         arith.muli
// SEED-ARG:         arith.muli
// SEED-ARG:         %[[S0:.*]] = arith.xori
// SEED-ARG:         nvfp4.quantize %{{.*}} rounding<stochastic> seed(%[[S0]])
// SEED-ARG:         %[[G2:.*]] = arith.constant 4354685564936845354 : i64
// SEED-ARG:         arith.addi %[[ARG]], %[[G2]] : i64
func.func @step(%x: tensor<32x64xbf16>, %w: tensor<48x64xbf16> {nvfp4.weight},
                %dy: tensor<32x48xbf16>, %seed: i64)
    -> (tensor<32x48xbf16>, tensor<32x64xbf16>, tensor<48x64xbf16>) {
  %zero = arith.constant 0.0 : bf16
  %e0 = tensor.empty() : tensor<32x48xbf16>
  %y0 = linalg.fill ins(%zero : bf16) outs(%e0 : tensor<32x48xbf16>) -> tensor<32x48xbf16>
  %e1 = tensor.empty() : tensor<32x64xbf16>
  %dx0 = linalg.fill ins(%zero : bf16) outs(%e1 : tensor<32x64xbf16>) -> tensor<32x64xbf16>
  %e2 = tensor.empty() : tensor<48x64xbf16>
  %dw0 = linalg.fill ins(%zero : bf16) outs(%e2 : tensor<48x64xbf16>) -> tensor<48x64xbf16>
  %y = linalg.matmul indexing_maps = [#fprop_lhs, #fprop_rhs, #fprop_out]
      {nvfp4.role = "fprop", nvfp4.precision = "nvfp4"}
      ins(%x, %w : tensor<32x64xbf16>, tensor<48x64xbf16>)
      outs(%y0 : tensor<32x48xbf16>) -> tensor<32x48xbf16>
  %dx = linalg.matmul {nvfp4.role = "dgrad", nvfp4.precision = "nvfp4"}
      ins(%dy, %w : tensor<32x48xbf16>, tensor<48x64xbf16>)
      outs(%dx0 : tensor<32x64xbf16>) -> tensor<32x64xbf16>
  %dw = linalg.matmul indexing_maps = [#wgrad_lhs, #wgrad_rhs, #wgrad_out]
      {nvfp4.role = "wgrad", nvfp4.precision = "nvfp4"}
      ins(%dy, %x : tensor<32x48xbf16>, tensor<32x64xbf16>)
      outs(%dw0 : tensor<48x64xbf16>) -> tensor<48x64xbf16>
  return %y, %dx, %dw : tensor<32x48xbf16>, tensor<32x64xbf16>, tensor<48x64xbf16>
}
