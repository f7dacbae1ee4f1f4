//===- AssignPrecision.h - per-layer precision policy -----------*- C++ -*-===//
//
// Part of the nvfp4 project.
//
//===----------------------------------------------------------------------===//
//
// The policy of nvfp4-assign-precision as functions another compiler can
// call: block inference from residual connections, and the assignment of
// `nvfp4.precision` to every GEMM of a module.
//
//===----------------------------------------------------------------------===//

#ifndef NVFP4_DIALECT_NVFP4_TRANSFORMS_ASSIGNPRECISION_H
#define NVFP4_DIALECT_NVFP4_TRANSFORMS_ASSIGNPRECISION_H

#include "nvfp4/Dialect/NVFP4/IR/NVFP4Dialect.h"

#include "mlir/IR/Operation.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "llvm/ADT/DenseMap.h"

#include <optional>
#include <string>

namespace mlir {
namespace nvfp4 {

/// The paper's 12B recipe keeps the first 2 and the last 8 of its 62 blocks
/// in BF16 (the pass's documented defaults of keep-first and keep-last).
constexpr unsigned kRecipeKeepFirst = 2;
constexpr unsigned kRecipeKeepLast = 8;
constexpr unsigned kRecipeBlocks = 62;

/// The number of blocks the recipe's default `keep` (kRecipeKeepFirst or
/// kRecipeKeepLast) keeps in a model of `numBlocks` blocks: `keep` itself
/// from the paper's depth on, the same fraction of the depth, rounded
/// down, below it (a model of 8 blocks keeps 0 first and 1 last; one of a
/// single block keeps none). docs/Rationale.md says why.
unsigned scaleRecipeKeep(unsigned keep, int64_t numBlocks);

/// One entry of the `formats=` option: the precision of the GEMMs of one
/// `nvfp4.kind` (or of every kind not listed, when `kind` is empty) that the
/// policy leaves block-scaled.
struct KindFormat {
  std::string kind;
  Precision precision = Precision::NVFP4;
};

/// Parses `formats=` entries, `KIND=FORMAT` or a bare `FORMAT` (the default
/// for the kinds not listed), FORMAT one of nvfp4, mxfp8, mxfp4 and bf16.
/// Returns the reason when an entry is malformed, names a format without a
/// lowering (fp8) or repeats a kind.
std::optional<std::string>
parseKindFormats(llvm::ArrayRef<std::string> entries,
                 llvm::SmallVectorImpl<KindFormat> &formats);

/// Which GEMMs stay in high precision (the paper's 12B recipe by default).
struct PrecisionPolicy {
  /// Leading and trailing blocks kept in BF16. Unset: the recipe's 2 and 8,
  /// scaled to the model's depth (scaleRecipeKeep).
  std::optional<unsigned> keepFirst;
  std::optional<unsigned> keepLast;
  /// `nvfp4.kind` values kept in BF16; "attention-bmm" names the attention
  /// BMMs (see GemmInfo::isAttentionBMM).
  llvm::SmallVector<std::string> keepKinds = {"attention-bmm", "embedding",
                                              "head"};
  /// Late-training switches: every GEMM, or every fprop GEMM, in BF16.
  bool allBF16 = false;
  bool forwardBF16 = false;
  /// The block-scaled format per kind (empty: NVFP4 everywhere). A kind
  /// named here is not kept by `keepKinds` (an explicit format wins).
  llvm::SmallVector<KindFormat> formats;
};

/// Blocks of a function inferred from its residual connections: an
/// elementwise add `a + f(a)` where `f` contains a contraction closes a
/// block, and a GEMM's block is the number of such adds upstream of it
/// (GEMMs after the last one count in the last block).
struct InferredBlocks {
  /// Number of residual connections found; 0 when there is none.
  unsigned numResidualConnections = 0;
  /// The block of every contraction of the function.
  llvm::DenseMap<Operation *, int64_t> blockOf;
};
InferredBlocks inferBlocksFromResiduals(FunctionOpInterface function);

/// Why one GEMM got its precision, for diagnostics ("nothing to compile").
struct PrecisionDecision {
  Operation *op = nullptr;
  /// "nvfp4", "mxfp8", "mxfp4" or "bf16" (or whatever an existing
  /// annotation says).
  std::string precision;
  /// A short reason, equal for GEMMs kept for the same reason: "annotated",
  /// "block 0 of 1 is among the first 2 and last 8 kept in BF16", ...
  std::string reason;
};

/// Writes `nvfp4.precision` on every GEMM nested in `root` (and
/// `nvfp4.layer` where blocks were inferred), emitting remarks for the
/// assumptions it makes. Existing `nvfp4.precision` attributes are kept.
/// Appends to `decisions`, when given, why each GEMM got its precision.
void assignPrecision(Operation *root, const PrecisionPolicy &policy,
                     llvm::SmallVectorImpl<PrecisionDecision> *decisions =
                         nullptr);

} // namespace nvfp4
} // namespace mlir

#endif // NVFP4_DIALECT_NVFP4_TRANSFORMS_ASSIGNPRECISION_H
