//===- GemmAnalysis.h - linalg contractions seen as GEMMs -------*- C++ -*-===//
//
// Part of the nvfp4 project.
//
//===----------------------------------------------------------------------===//
//
// What the graph-level passes and the precision report need to know about a
// linalg contraction: its GEMM shape (batch, M, N, K, FLOPs), its model
// annotations, which operand is a weight, and its role in a training step
// (annotated or inferred). Shared by nvfp4-assign-precision,
// nvfp4-apply-recipe and the report so that they agree.
//
//===----------------------------------------------------------------------===//

#ifndef NVFP4_DIALECT_NVFP4_TRANSFORMS_GEMMANALYSIS_H
#define NVFP4_DIALECT_NVFP4_TRANSFORMS_GEMMANALYSIS_H

#include "nvfp4/Dialect/NVFP4/IR/NVFP4Dialect.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/SetVector.h"

#include <optional>
#include <string>

namespace mlir {
namespace nvfp4 {

/// A linalg contraction `C[batch, m, n] += A[batch, m, k] * B[batch, n, k]`
/// with a floating-point multiply-add body. Every group of loops (batch, m,
/// n, k) may hold several loops; `A` is input 0 and `B` input 1.
struct GemmShape {
  linalg::ContractionDimensions dims;
  /// Products of the loop ranges of each group; ShapedType::kDynamic when a
  /// loop of the group is dynamic, INT64_MAX when the product overflows.
  int64_t batch = 1, m = 1, n = 1, k = 1;

  bool isStatic() const;
  /// 2 * batch * M * N * K, or std::nullopt when a dimension is dynamic or
  /// the product overflows int64.
  std::optional<int64_t> flops() const;
};

/// Matches a floating-point linalg contraction (any LinalgOp whose body is a
/// multiply-accumulate and whose maps are projected permutations with at
/// least one M, N and K loop) and returns its shape. Nothing is emitted on
/// failure.
FailureOr<GemmShape> matchGemm(Operation *op);

/// Where a GEMM's role comes from.
enum class RoleSource {
  /// `nvfp4.role` on the op.
  Annotated,
  /// Deduced from weights, data flow or shapes without guessing.
  Inferred,
  /// Nothing decided it; `roleNote` says what was assumed.
  Assumed,
};

/// Everything the passes and the report know about one GEMM.
struct GemmInfo {
  linalg::LinalgOp op;
  GemmShape shape;
  std::optional<int64_t> layer;
  /// `nvfp4.kind`, empty when absent.
  std::string kind;
  std::optional<Precision> precision;
  GemmRole role = GemmRole::Fprop;
  RoleSource roleSource = RoleSource::Assumed;
  /// Why the role was assumed (for a remark); empty otherwise.
  std::string roleNote;
  /// Operand (0 = A, 1 = B) that is a `{nvfp4.weight}` argument, or -1.
  int weightOperand = -1;
  /// Operand that is the incoming gradient dY (dgrad, wgrad), or -1.
  int gradientOperand = -1;

  /// An activation-by-activation GEMM of attention (QK^T, SV): kind
  /// "attention" (or no kind and batch loops), no weight operand, not wgrad.
  bool isAttentionBMM() const;
};

/// The `{nvfp4.weight}` function argument that `value` is a view of, looking
/// through transposes, tensor casts, reshapes, broadcasts, copies and
/// floating-point casts; null if there is none.
BlockArgument getWeightArgument(Value value);

/// The operand `value` is an element move of (one step of
/// stripElementMoves), or null.
Value getElementMoveSource(Value value, bool throughRounding = true);

/// Follows `value` back through ops that only move elements (transposes,
/// reshapes, broadcasts, tensor casts, copies, floating-point extensions and,
/// with `throughRounding`, truncations) and returns the value at the start
/// of that chain. Without `throughRounding` every step keeps the set of
/// element values, so the amax of the result is the amax of `value`.
Value stripElementMoves(Value value, bool throughRounding = true);

/// Adds to `slice` every op that transitively uses `value`, including the
/// ops that enclose a use nested in a region.
void collectTransitiveUsers(Value value, llvm::SetVector<Operation *> &slice);

/// Adds to `slice` every op whose results `value` transitively depends on,
/// including values a region captures from above.
void collectTransitiveProducers(Value value,
                                llvm::SetVector<Operation *> &slice);

/// Answers the data-flow questions of collectTransitiveUsers and
/// collectTransitiveProducers inside one function in time proportional to
/// the ops between the two ends, not to the function: a residual stream of
/// N blocks costs O(N) in all instead of O(N^2).
///
/// The ops of `function` are numbered in pre-order; `end` is the last
/// number inside an op's regions. When every use of an op result comes
/// after the ops that define it (end(def) < pre(user), which SSA dominance
/// gives in single-block regions), end() never decreases along a def-use
/// edge and never increases from a user to a producer, so
///   - every transitive user of `from` has end() > end(def(from));
///   - every transitive producer of `to` has end() <= end(def(to));
/// and a search can stop at the first op outside that window without
/// changing its answer. The index checks that property on construction;
/// where it does not hold (multi-block regions listed out of dominance
/// order, graph regions) the searches fall back to visiting everything,
/// which is what collectTransitiveUsers/Producers do.
class DataFlowIndex {
public:
  explicit DataFlowIndex(FunctionOpInterface function);

  /// Whether some op satisfying `predicate` is both a transitive user of
  /// `from` (collectTransitiveUsers) and a transitive producer of `to`
  /// (collectTransitiveProducers): the op lies on a path from `from` to
  /// `to`.
  bool anyOnPath(Value from, Value to,
                 llvm::function_ref<bool(Operation *)> predicate) const;

  /// Whether `to` transitively uses a result of `from`
  /// (collectTransitiveUsers of `from`'s results contains `to`).
  bool reaches(Operation *from, Operation *to) const;

  /// Whether the windowed searches apply (false: every search visits all
  /// the ops it can reach).
  bool isOrdered() const { return ordered; }

private:
  struct Span {
    int64_t pre = 0, end = 0;
  };
  /// end() of `op`, for an op of the function.
  int64_t endOf(Operation *op) const;
  /// Every transitive user of `from` has end() above this.
  int64_t usersAbove(Value from) const;

  Operation *function;
  llvm::DenseMap<Operation *, Span> spans;
  bool ordered = true;
};

/// The GEMMs of a function or module with their roles. Roles are resolved
/// in this order:
///   1. `nvfp4.role`;
///   2. a weight operand used by one GEMM only: fprop;
///   3. a weight used by several GEMMs: fprop where the GEMM's result reaches
///      another use of the weight, dgrad where another use reaches it, and
///      otherwise fprop when the weight's last dimension is contracted and
///      dgrad when its first one is (the [out, in] layout of PyTorch and TE);
///   4. no weight operand and a result with the shape of a weight argument
///      (or of its transpose): wgrad;
///   5. anything else: assumed fprop (RoleSource::Assumed).
/// Operands: the weight is the operand traced to `{nvfp4.weight}`; dY is the
/// other operand of a dgrad (operand A, as `dX = dY W` reads, when no weight
/// is found); for wgrad it is the operand whose source is also a dgrad's dY,
/// else the one that is not an fprop's activation, else operand A (as
/// `dW = dY^T X` reads).
class GemmAnalysis {
public:
  /// Analyzes every GEMM nested in `root`.
  explicit GemmAnalysis(Operation *root);

  /// The GEMMs in walk order.
  llvm::ArrayRef<GemmInfo> getGemms() const { return gemms; }
  /// The info of `op`, or null if it is not one of the GEMMs.
  const GemmInfo *lookup(Operation *op) const;

private:
  void resolveRoles(llvm::MutableArrayRef<GemmInfo> functionGemms);

  llvm::SmallVector<GemmInfo> gemms;
  llvm::DenseMap<Operation *, unsigned> index;
};

} // namespace nvfp4
} // namespace mlir

#endif // NVFP4_DIALECT_NVFP4_TRANSFORMS_GEMMANALYSIS_H
