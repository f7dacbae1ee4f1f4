//===- ApplyRecipe.h - the NVFP4 training recipe per GEMM role --*- C++ -*-===//
//
// Part of the nvfp4 project.
//
//===----------------------------------------------------------------------===//
//
// How nvfp4-apply-recipe quantizes the operands of a GEMM (docs/Numerics.md
// section 7) and rewrites the linalg contraction into nvfp4.quantize /
// nvfp4.hadamard / nvfp4.scaled_matmul. The plan is separate from the
// rewrite so that the precision report can show what a GEMM will get.
//
//===----------------------------------------------------------------------===//

#ifndef NVFP4_DIALECT_NVFP4_TRANSFORMS_APPLYRECIPE_H
#define NVFP4_DIALECT_NVFP4_TRANSFORMS_APPLYRECIPE_H

#include "nvfp4/Dialect/NVFP4/Transforms/GemmAnalysis.h"

#include "mlir/IR/PatternMatch.h"

#include <string>

namespace mlir {
namespace nvfp4 {

/// The recipe's switches (TE's NVTE_NVFP4_DISABLE_* toggles, the paper's
/// ablations) and the stochastic-rounding seed.
struct RecipeOptions {
  bool rht = true;
  bool stochasticRounding = true;
  bool weight2D = true;
  /// Base seed; stream i uses deriveStreamSeed(seed, i).
  uint64_t seed = 0;
  /// When >= 0, the base seed is this i64 argument of the enclosing
  /// function, mixed at run time.
  int seedArgument = -1;
  /// E5M2 instead of E4M3 elements for the gradient operand of MXFP8 dgrad
  /// and wgrad GEMMs (TE's HYBRID format).
  bool mxfp8GradientsE5M2 = false;
};

/// How one GEMM operand is quantized.
struct OperandRecipe {
  /// The member of the block-scaled family; the MX formats take 1x32
  /// blocks, round to nearest and no RHT.
  BlockScaledFormat format = BlockScaledFormat::NVFP4;
  /// 16x16 blocks (weights) instead of 1x16.
  bool twoDimensional = false;
  /// Random Hadamard Transform along K before quantization.
  bool hadamard = false;
  RoundingMode rounding = RoundingMode::NearestEven;
};

/// The recipe of one GEMM: operand A (input 0) and operand B (input 1).
struct GemmRecipe {
  GemmRole role = GemmRole::Fprop;
  OperandRecipe operands[2];
};

/// The recipe of docs/Numerics.md section 7 for `gemm` with the ablations of
/// `options` applied. Deviations the shape forces (16x16 blocks need the
/// operand's rows to be a multiple of 16) are explained in `notes`. A GEMM
/// whose precision is MXFP8 or MXFP4 gets that format on both operands
/// (MXFP8: E4M3 elements; E5M2 for the gradient operand of dgrad and wgrad
/// with RecipeOptions::mxfp8GradientsE5M2), with 1x32 blocks, round to
/// nearest and no RHT in every role: the MX types admit nothing else
/// (docs/Numerics.md 11.2).
GemmRecipe planRecipe(const GemmInfo &gemm, const RecipeOptions &options,
                      llvm::SmallVectorImpl<std::string> *notes = nullptr);

/// Why `gemm` cannot be rewritten into block-scaled ops of `precision`
/// (nvfp4, mxfp8 or mxfp4): dynamic or empty shapes, K not a multiple of the
/// block (16 or 32), memref operands, unsupported element types; or
/// std::nullopt when it can.
std::optional<std::string>
checkRecipeApplicable(const GemmInfo &gemm,
                      Precision precision = Precision::NVFP4);

/// Whether `precision` is one that nvfp4-apply-recipe rewrites into
/// block-scaled ops: nvfp4, mxfp8 or mxfp4.
bool isBlockScaledPrecision(Precision precision);

/// The seed of the `streamIndex`-th stochastic-rounding stream: output
/// number `streamIndex + 1` of SplitMix64 started at `seed`.
uint64_t deriveStreamSeed(uint64_t seed, uint64_t streamIndex);

/// The same mixing as deriveStreamSeed, emitted as arith ops on a run-time
/// i64 `seed`.
Value buildStreamSeed(OpBuilder &builder, Location loc, Value seed,
                      uint64_t streamIndex);

/// Recognizes the ops buildStreamSeed emits: when `value` is the stream
/// seed `streamIndex` of the run-time seed `seed`, sets both and returns
/// true. nvfp4-compile's manifest describes such a kernel parameter as
/// {"argument": N, "seed_stream": streamIndex}, which a runtime computes at
/// launch.
bool matchStreamSeed(Value value, Value &seed, uint64_t &streamIndex);

/// Rewrites `gemm` (which must pass checkRecipeApplicable) into quantize,
/// hadamard and scaled_matmul ops following `recipe`; `makeSeed` is called
/// once per stochastically rounded operand and returns its i64 seed.
/// Returns the value that replaced the contraction's result.
FailureOr<Value> rewriteGemmWithRecipe(
    RewriterBase &rewriter, const GemmInfo &gemm, const GemmRecipe &recipe,
    llvm::function_ref<Value(OpBuilder &, Location)> makeSeed);

/// Applies the recipe to every GEMM under `root` marked
/// `nvfp4.precision = "nvfp4"`, `"mxfp8"` or `"mxfp4"`, numbering stochastic-rounding streams in walk
/// order. GEMMs that cannot be rewritten get a remark and become
/// `nvfp4.precision = "bf16"`. Fails (with an error) only for a bad
/// `seedArgument`.
///
/// This is a function rather than a pattern set: roles come from an analysis
/// of the whole function (which GEMMs share a weight, which operand a dgrad
/// reads as dY), and the stream numbering must not depend on the order in
/// which a greedy driver happens to visit ops. rewriteGemmWithRecipe is the
/// per-op building block for drivers of other compilers.
LogicalResult applyRecipe(Operation *root, const RecipeOptions &options);

} // namespace nvfp4
} // namespace mlir

#endif // NVFP4_DIALECT_NVFP4_TRANSFORMS_APPLYRECIPE_H
