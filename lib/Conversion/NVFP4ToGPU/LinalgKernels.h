//===- LinalgKernels.h - pieces of the linalg kernels ------------*- C++ -*-===//
//
// Part of the nvfp4 project.
//
//===----------------------------------------------------------------------===//
//
// What the kernel builders of LinalgKernels.cpp (one linalg op, one kernel),
// RowKernels.cpp (a row reduction and the ops that read it, one kernel;
// vectorized elementwise kernels) and ScanKernels.cpp (the selective scan)
// share: the analysis of a linalg op, its body cloned at given loop
// indices, the index arithmetic and the math a cloned body may use.
//
//===----------------------------------------------------------------------===//

#ifndef NVFP4_LIB_CONVERSION_NVFP4TOGPU_LINALGKERNELS_H
#define NVFP4_LIB_CONVERSION_NVFP4TOGPU_LINALGKERNELS_H

#include "KernelUtils.h"
#include "nvfp4/Dialect/NVFP4/IR/NVFP4Ops.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/AffineMap.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/DialectConversion.h"
#include "llvm/ADT/DenseSet.h"

#include <string>

namespace mlir {
namespace nvfp4 {
namespace kernels {

/// Kernels are launched from the top level of a host function only: the
/// manifest describes straight-line launches, and an op inside a loop or
/// another op's region stays on the host (reported as such).
LogicalResult checkTopLevel(Operation *op, PatternRewriter &rewriter);

/// Row-major strides of a static shape.
SmallVector<int64_t> stridesOf(ArrayRef<int64_t> shape);

/// `expr` over the loop indices `loops`, as index arithmetic.
Value evaluateAffine(IndexMath &m, AffineExpr expr, ArrayRef<Value> loops);

/// Whether the kernels can evaluate `map` (no negative constants: unsigned
/// division is then floor division).
bool isEvaluable(AffineMap map);

/// The flat element offset of `indices` in a row-major buffer of `shape`.
Value linearOffset(IndexMath &m, ArrayRef<Value> indices,
                   ArrayRef<int64_t> shape);

/// The indices of `linear` in a row-major space of `ranges`.
SmallVector<Value> delinearize(IndexMath &m, Value linear,
                               ArrayRef<int64_t> ranges);

/// What a linalg op's kernel needs to know about the op: its loops, the
/// values its body reads from outside, and (for a reduction) the combiner.
struct LinalgKernelPlan {
  linalg::LinalgOp op;
  SmallVector<int64_t> ranges;
  /// The reduction loop, or -1.
  int64_t reductionLoop = -1;
  /// The body op that combines the accumulator (reductions).
  Operation *combiner = nullptr;
  /// Tensors read by tensor.extract and scalars defined outside the op.
  SmallVector<Value> capturedTensors, capturedScalars;
  /// Constants defined outside the op that the body uses (cloned).
  SmallVector<Operation *> capturedConstants;
  /// Inits the body reads (elementwise: loaded; reductions: all of them).
  SmallVector<bool> initRead;

  /// Why the op cannot become a kernel, or "".
  std::string analyze();
  /// The kernel's name: the op, its loops and a hash of its body, so that
  /// equal ops share a kernel and different ones never do.
  std::string kernelName() const;
};

/// The value a caller of emitBody already has for an input or init operand
/// (a vector element it loaded, a row's reduction result), or null: then
/// emitBody loads it through the operand's indexing map.
using GivenOperandFn = function_ref<Value(OpOperand &)>;

/// Emits `plan.op`'s body at the loop indices `loops` inside a kernel whose
/// arguments, from `firstInput` on, are the op's tensor or scalar inputs,
/// the inits it reads, its captured tensors and its captured scalars (in
/// that order); `acc` is the reduction's accumulator (null otherwise).
/// `rowValues`, where the caller emits the points of a row, holds the given
/// values that are the same at all of them (a reduction's row result, a
/// broadcast operand). With `rowDivisionChecks` too, an f32 division by such
/// a value (or by one computed from them alone) becomes one reciprocal a row
/// and three operations a point (nvfp4/Numerics/RowDivision.h), and the i1
/// that says whether its operands lie inside that path's ranges is appended
/// to `rowDivisionChecks`: the caller must compute the points again without
/// it (IEEE divisions) where one is false.
/// Returns the yielded values.
SmallVector<Value> emitBody(OpBuilder &b, Location loc,
                            const LinalgKernelPlan &plan, ValueRange args,
                            ArrayRef<Value> loops, Value acc,
                            int64_t firstInput,
                            GivenOperandFn given = nullptr,
                            const llvm::DenseSet<Value> *rowValues = nullptr,
                            SmallVectorImpl<Value> *rowDivisionChecks = nullptr);

/// `plan.combiner` applied to (lhs, rhs) in the combiner's operand order
/// with the accumulator first.
Value combine(OpBuilder &b, const LinalgKernelPlan &plan, Value lhs,
              Value rhs);

/// The users of an elementwise op's result that its kernel can give the
/// amax: nvfp4.amax ops (without an RHT) and NVFP4 quantizations that
/// compute their own (no amax operand, no RHT), of the result or of a
/// reshape of it (which keeps every element, so the amax).
struct AmaxUsers {
  SmallVector<AmaxOp> amaxes;
  SmallVector<QuantizeOp> quantizations;
  bool empty() const { return amaxes.empty() && quantizations.empty(); }
};
AmaxUsers amaxUsersOf(Value result);

/// Gives `users` the amax a kernel computed into `buffer` (memref<1xi32> of
/// FP32 bits): an nvfp4.amax is replaced by it, a quantization takes it as
/// its amax operand (the value it would have computed).
void giveFusedAmax(PatternRewriter &rewriter, Location loc,
                   const AmaxUsers &users, Value buffer);

/// Whether every use of `fill` is the init of a reduction that becomes part
/// of a row kernel, which takes the fill's constant itself (RowKernels.cpp).
bool onlyInitializesRowGroups(linalg::FillOp fill);

/// The vector width (points a thread, a power of two) of the kernel of the
/// all-parallel `plan`: the widest that moves every operand contiguous
/// along the last loop in at most 16 bytes and divides that loop's range;
/// 1 for reductions (RowKernels.cpp).
int64_t elementwiseVectorWidth(const LinalgKernelPlan &plan);

/// Computes and stores the `width` points of chunk `chunk` of the
/// all-parallel `plan` (points (i..., j0 + e) with the last loop cut into
/// runs of `width`), `args` in emitBody's layout from `firstInput` after
/// the output buffers: one vector load per contiguous operand, one load per
/// broadcast operand, one vector store per contiguous result (none without
/// `store`: the caller consumes the values itself). Returns the yielded
/// values of each point (RowKernels.cpp).
SmallVector<SmallVector<Value>>
emitElementwisePoints(OpBuilder &b, Location loc, const LinalgKernelPlan &plan,
                      ValueRange args, int64_t firstInput, Value chunk,
                      int64_t width, bool store = true);

/// nvfp4.quantize (1x16 blocks, round to nearest, linear scales) of the
/// result of an elementwise linalg op used by nothing else, with a given
/// amax: one kernel computes the op's points 16 at a time and writes the
/// codes and block scales; the op's result is never stored
/// (ProducerQuantize.cpp). Runs with the nvfp4 conversion patterns, at a
/// higher benefit than the quantize kernel's.
void populateProducerQuantizeToGPUPatterns(
    const TypeConverter &converter, RewritePatternSet &patterns,
    const ::nvfp4::target::ChipInfo &chip);

/// Whether a kernel body may contain the math op `op`.
bool isKernelMath(Operation *op);

/// exp, exp2, log, sqrt and rsqrt of f32 written with PTX intrinsics
/// (operands looked up in `map`); null for any other op.
Value expandMath(OpBuilder &b, Location loc, Operation &op,
                 const IRMapping &map);

} // namespace kernels
} // namespace nvfp4
} // namespace mlir

#endif // NVFP4_LIB_CONVERSION_NVFP4TOGPU_LINALGKERNELS_H
