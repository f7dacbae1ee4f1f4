//===- FuseQuantization.cpp - the nvfp4-fuse-quantization pass ------------===//
//
// Part of the nvfp4 project.
//
// Independent fusions of the quantizations nvfp4-apply-recipe creates: one
// amax per tensor, one 16x16 quantization per weight for fprop and dgrad,
// RHTs folded into the quantizations (and amaxes) that consume them, the
// amax of a GEMM output computed in that GEMM's epilogue, the rowwise and
// columnwise quantizations of one tensor from one read, one quantization
// where several are the same, and no dead quantizations.
//
//===----------------------------------------------------------------------===//

#include "nvfp4/Dialect/NVFP4/Transforms/FuseQuantization.h"
#include "nvfp4/Dialect/NVFP4/IR/NVFP4Ops.h"
#include "nvfp4/Dialect/NVFP4/Transforms/GemmAnalysis.h"
#include "nvfp4/Dialect/NVFP4/Transforms/Passes.h"

#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "llvm/ADT/SetVector.h"

namespace mlir {
namespace nvfp4 {
#define GEN_PASS_DEF_NVFP4FUSEQUANTIZATION
#include "nvfp4/Dialect/NVFP4/Transforms/Passes.h.inc"
} // namespace nvfp4
} // namespace mlir

using namespace mlir;
using namespace mlir::nvfp4;

/// Whether `a` comes before `b` (or an op enclosing `b`) in a's block, so
/// that a value defined by `a` may be used at `b`.
static bool dominatesInBlock(Operation *a, Operation *b) {
  Operation *ancestor = a->getBlock()->findAncestorOpInBlock(*b);
  return ancestor && ancestor != a && a->isBeforeInBlock(ancestor);
}

namespace {
/// A rewrite pattern that adds what it did to a FusionCounters field.
template <typename OpT>
struct CountingPattern : public OpRewritePattern<OpT> {
  CountingPattern(MLIRContext *ctx, FusionCounters *counters)
      : OpRewritePattern<OpT>(ctx), counters(counters) {}

  void count(uint64_t FusionCounters::*field, uint64_t n = 1) const {
    if (counters)
      counters->*field += n;
  }

  FusionCounters *counters;
};
} // namespace

//===----------------------------------------------------------------------===//
// share-amax
//===----------------------------------------------------------------------===//

namespace {
/// Gives every amax-less quantization of one tensor the same nvfp4.amax.
struct ShareAmaxPattern : public CountingPattern<QuantizeOp> {
  using CountingPattern::CountingPattern;

  LogicalResult matchAndRewrite(QuantizeOp op,
                                PatternRewriter &rewriter) const override {
    if (op.getAmax())
      return rewriter.notifyMatchFailure(op, "already has an amax");
    if (op.getType().isMX())
      return rewriter.notifyMatchFailure(op, "MX: no tensor scale, no amax");
    // The tensor whose elements the input holds (exact views only). An RHT
    // works along the last dimension, so a view's RHT has other values:
    // quantizations of an RHT share only with the same input and mask.
    std::optional<uint32_t> hadamard = op.getHadamard();
    Value root = hadamard ? op.getInput()
                          : stripElementMoves(op.getInput(),
                                              /*throughRounding=*/false);
    auto rootType = dyn_cast<RankedTensorType>(root.getType());
    if (!rootType ||
        !isa<BFloat16Type, Float16Type, Float32Type>(rootType.getElementType()))
      root = op.getInput();

    // Every amax-less quantization of a view of `root`.
    SmallVector<QuantizeOp> group;
    SmallVector<Value> worklist = {root};
    llvm::SmallPtrSet<Operation *, 8> seen;
    while (!worklist.empty()) {
      Value value = worklist.pop_back_val();
      for (Operation *user : value.getUsers()) {
        if (!seen.insert(user).second)
          continue;
        if (auto quantize = dyn_cast<QuantizeOp>(user)) {
          if (quantize.getInput() == value && !quantize.getAmax() &&
              !quantize.getType().isMX() &&
              quantize.getHadamard() == hadamard)
            group.push_back(quantize);
          continue;
        }
        if (hadamard)
          continue;
        for (Value result : user->getResults())
          if (getElementMoveSource(result, /*throughRounding=*/false) == value)
            worklist.push_back(result);
      }
    }
    if (group.size() < 2)
      return rewriter.notifyMatchFailure(op, "the only quantization of its "
                                             "tensor");

    rewriter.setInsertionPointAfterValue(root);
    auto amax = AmaxOp::create(rewriter, root.getLoc(), root);
    if (hadamard)
      amax.setHadamard(*hadamard);
    for (QuantizeOp quantize : group)
      rewriter.modifyOpInPlace(quantize,
                               [&] { quantize.getAmaxMutable().assign(amax); });
    count(&FusionCounters::sharedAmax, group.size());
    return success();
  }
};
} // namespace

void mlir::nvfp4::populateShareAmaxPatterns(RewritePatternSet &patterns,
                                            FusionCounters *counters) {
  patterns.add<ShareAmaxPattern>(patterns.getContext(), counters);
}

//===----------------------------------------------------------------------===//
// share-weight-quantization
//===----------------------------------------------------------------------===//

/// A quantization whose codes are the exact transpose of the quantization
/// of the transposed input: 16x16 tiles, round to nearest, linear scales.
static bool isTransposable(QuantizeOp op) {
  BlockScaledTensorType type = op.getType();
  return type.isTwoDimensionalBlock() &&
         type.getLayout() == ScaleLayout::Linear &&
         op.getRounding() == RoundingMode::NearestEven && !op.getSeed();
}

/// The permutation that swaps the last two of `rank` dimensions.
static SmallVector<int64_t> swapLastTwo(int64_t rank) {
  SmallVector<int64_t> permutation =
      llvm::to_vector(llvm::seq<int64_t>(0, rank));
  std::swap(permutation[rank - 2], permutation[rank - 1]);
  return permutation;
}

/// The input of `op` if it is a linalg.transpose of its last two dimensions.
static Value transposedSource(Operation *op) {
  auto transpose = dyn_cast_or_null<linalg::TransposeOp>(op);
  if (!transpose)
    return nullptr;
  ArrayRef<int64_t> permutation = transpose.getPermutation();
  if (permutation.size() < 2 ||
      permutation != ArrayRef<int64_t>(swapLastTwo(permutation.size())))
    return nullptr;
  return transpose.getInput();
}

namespace {
/// quantize(transpose(W)) after quantize(W) (or the reverse), both 16x16 RN:
/// the later one becomes nvfp4.transpose of the earlier one, which is exact
/// because one scale covers a whole 16x16 tile.
struct ShareWeightQuantizationPattern : public CountingPattern<QuantizeOp> {
  using CountingPattern::CountingPattern;

  LogicalResult matchAndRewrite(QuantizeOp op,
                                PatternRewriter &rewriter) const override {
    if (!isTransposable(op))
      return rewriter.notifyMatchFailure(op, "not a 16x16 round-to-nearest "
                                             "quantization with linear scales");
    // Values holding the transpose of op's input.
    SmallVector<Value> transposes;
    if (Value source = transposedSource(op.getInput().getDefiningOp()))
      transposes.push_back(source);
    for (Operation *user : op.getInput().getUsers())
      if (transposedSource(user) == op.getInput())
        transposes.push_back(user->getResult(0));

    QuantizeOp earlier;
    for (Value transposed : transposes) {
      for (Operation *user : transposed.getUsers()) {
        auto candidate = dyn_cast<QuantizeOp>(user);
        if (!candidate || candidate.getInput() != transposed ||
            !isTransposable(candidate) || candidate.getAmax() != op.getAmax() ||
            candidate.getType().getBlockShape() !=
                op.getType().getBlockShape() ||
            !dominatesInBlock(candidate, op))
          continue;
        earlier = candidate;
        break;
      }
      if (earlier)
        break;
    }
    if (!earlier)
      return rewriter.notifyMatchFailure(
          op, "no earlier 16x16 quantization of the transposed tensor");

    rewriter.replaceOpWithNewOp<TransposeOp>(op, op.getType(),
                                             earlier.getResult());
    count(&FusionCounters::sharedWeightQuantizations);
    return success();
  }
};
} // namespace

void mlir::nvfp4::populateShareWeightQuantizationPatterns(
    RewritePatternSet &patterns, FusionCounters *counters) {
  patterns.add<ShareWeightQuantizationPattern>(patterns.getContext(), counters);
}

//===----------------------------------------------------------------------===//
// share-quantization
//===----------------------------------------------------------------------===//

namespace {
/// A quantization equal to an earlier one of the same block -- the same
/// input and amax operands, result type, rounding, seed and RHT mask -- is
/// that one: the recipe quantizes a GEMM input once per GEMM, so X of the
/// Q, K and V projections (and of the FFN's gate and up) arrives three
/// (two) times; after share-amax the copies are identical ops.
struct ShareQuantizationPattern : public CountingPattern<QuantizeOp> {
  using CountingPattern::CountingPattern;

  LogicalResult matchAndRewrite(QuantizeOp op,
                                PatternRewriter &rewriter) const override {
    for (Operation *user : op.getInput().getUsers()) {
      auto earlier = dyn_cast<QuantizeOp>(user);
      if (!earlier || earlier == op || !dominatesInBlock(earlier, op) ||
          !OperationEquivalence::isEquivalentTo(
              earlier, op, OperationEquivalence::IgnoreLocations))
        continue;
      rewriter.replaceOp(op, earlier.getResult());
      count(&FusionCounters::sharedQuantizations);
      return success();
    }
    return rewriter.notifyMatchFailure(op, "no earlier equal quantization");
  }
};
} // namespace

void mlir::nvfp4::populateShareQuantizationPatterns(RewritePatternSet &patterns,
                                                    FusionCounters *counters) {
  patterns.add<ShareQuantizationPattern>(patterns.getContext(), counters);
}

//===----------------------------------------------------------------------===//
// fold-hadamard
//===----------------------------------------------------------------------===//

/// Whether `user` of the RHT `op` can take the RHT as its `hadamard`
/// attribute: an nvfp4.amax or a 1x16 nvfp4.quantize of the RHT's result
/// that has no RHT of its own.
static bool canFoldHadamardInto(HadamardOp op, Operation *user) {
  if (auto amax = dyn_cast<AmaxOp>(user))
    return amax.getInput() == op.getResult() && !amax.getHadamard();
  auto quantize = dyn_cast<QuantizeOp>(user);
  return quantize && quantize.getInput() == op.getResult() &&
         !quantize.getHadamard() && !quantize.getType().isMX() &&
         quantize.getResult().getType().getBlockRows() == 1;
}

namespace {
/// quantize(hadamard(x)) -> quantize(x) {hadamard}, and the same for the
/// amax of the RHT, when these are all the RHT's users: the transformed
/// tensor is then never materialized, and nothing is computed twice.
struct FoldHadamardPattern : public CountingPattern<HadamardOp> {
  using CountingPattern::CountingPattern;

  LogicalResult matchAndRewrite(HadamardOp op,
                                PatternRewriter &rewriter) const override {
    if (op->use_empty())
      return rewriter.notifyMatchFailure(op, "unused");
    bool quantized = false;
    for (Operation *user : op->getUsers()) {
      if (!canFoldHadamardInto(op, user))
        return rewriter.notifyMatchFailure(
            op, "a user is not an amax or a 1x16 quantization of the RHT");
      quantized |= isa<QuantizeOp>(user);
    }
    if (!quantized)
      return rewriter.notifyMatchFailure(op, "no quantization to fold into");

    IntegerAttr mask = rewriter.getI32IntegerAttr(op.getSignMask());
    for (Operation *user : llvm::to_vector(op->getUsers()))
      rewriter.modifyOpInPlace(user, [&] {
        user->setOperand(0, op.getInput());
        user->setAttr("hadamard", mask);
      });
    rewriter.eraseOp(op);
    count(&FusionCounters::foldedHadamards);
    return success();
  }
};
} // namespace

void mlir::nvfp4::populateFoldHadamardPatterns(RewritePatternSet &patterns,
                                               FusionCounters *counters) {
  patterns.add<FoldHadamardPattern>(patterns.getContext(), counters);
}

//===----------------------------------------------------------------------===//
// fuse-output-amax
//===----------------------------------------------------------------------===//

/// Whether the block-scaled `value` feeds an nvfp4.scaled_matmul, directly
/// or through nvfp4.transpose.
static bool feedsScaledMatmul(Value value) {
  for (Operation *user : value.getUsers()) {
    if (isa<ScaledMatmulOp, ScaledMatmulQuantizeOp>(user))
      return true;
    if (isa<TransposeOp>(user) && feedsScaledMatmul(user->getResult(0)))
      return true;
  }
  return false;
}

namespace {
/// A quantization of the output of an nvfp4.scaled_matmul (or of an exact
/// view of it) for another NVFP4 GEMM takes its amax from the producing
/// GEMM, which computes it in its epilogue: the matmul gets its second
/// result, and that result replaces the quantizations' implicit amax and
/// every nvfp4.amax of the output. Bit for bit the same amax: max is exact
/// and the epilogue sees exactly the rounded values it stores.
struct FuseOutputAmaxPattern : public CountingPattern<QuantizeOp> {
  using CountingPattern::CountingPattern;

  LogicalResult matchAndRewrite(QuantizeOp op,
                                PatternRewriter &rewriter) const override {
    if (op.getHadamard())
      return rewriter.notifyMatchFailure(op, "quantizes the RHT of its input");
    if (op.getType().isMX())
      return rewriter.notifyMatchFailure(op, "MX: no tensor scale, no amax");
    Value root = stripElementMoves(op.getInput(), /*throughRounding=*/false);
    auto matmul = root.getDefiningOp<ScaledMatmulOp>();
    if (!matmul || root != matmul.getResult())
      return rewriter.notifyMatchFailure(
          op, "does not quantize the output of a scaled_matmul");
    // The amax to replace: none (implicit) or an nvfp4.amax of the output.
    AmaxOp amaxOp;
    if (Value amax = op.getAmax()) {
      amaxOp = amax.getDefiningOp<AmaxOp>();
      if (!amaxOp || amaxOp.getHadamard() ||
          stripElementMoves(amaxOp.getInput(), /*throughRounding=*/false) !=
              root)
        return rewriter.notifyMatchFailure(
            op, "its amax is not the amax of the GEMM output");
    }
    if (!feedsScaledMatmul(op.getResult()))
      return rewriter.notifyMatchFailure(op, "not an operand of an NVFP4 GEMM");

    Value fusedAmax = matmul.getResultAmax();
    if (!fusedAmax) {
      rewriter.setInsertionPoint(matmul);
      auto fused = ScaledMatmulOp::create(
          rewriter, matmul.getLoc(), matmul.getResult().getType(),
          rewriter.getF32Type(), matmul.getLhs(), matmul.getRhs(),
          matmul.getAlpha(), matmul.getRoleAttr());
      fused->setDiscardableAttrs(matmul->getDiscardableAttrDictionary());
      rewriter.replaceAllUsesWith(matmul.getResult(), fused.getResult());
      rewriter.eraseOp(matmul);
      fusedAmax = fused.getResultAmax();
    }
    if (amaxOp)
      rewriter.replaceOp(amaxOp, fusedAmax);
    else
      rewriter.modifyOpInPlace(op,
                               [&] { op.getAmaxMutable().assign(fusedAmax); });
    count(&FusionCounters::fusedOutputAmaxes);
    return success();
  }
};
} // namespace

void mlir::nvfp4::populateFuseOutputAmaxPatterns(RewritePatternSet &patterns,
                                                 FusionCounters *counters) {
  patterns.add<FuseOutputAmaxPattern>(patterns.getContext(), counters);
}

//===----------------------------------------------------------------------===//
// fuse-epilogue-quantization
//===----------------------------------------------------------------------===//

/// Whether `value` is available before `op` runs: a block argument of an
/// enclosing region or the result of an op before it in its block.
static bool availableBefore(Value value, Operation *op) {
  if (auto arg = dyn_cast<BlockArgument>(value))
    return arg.getOwner()->getParentOp()->isProperAncestor(op);
  return dominatesInBlock(value.getDefiningOp(), op);
}

namespace {
/// quantize(scaled_matmul(a, b), amax(%g)) with %g known before the GEMM
/// (1x16, round to nearest, linear scales, the product used only here):
/// one nvfp4.scaled_matmul_quantize, whose epilogue writes codes and scales
/// instead of the high-precision product.
struct FuseEpilogueQuantizationPattern : public CountingPattern<QuantizeOp> {
  using CountingPattern::CountingPattern;

  LogicalResult matchAndRewrite(QuantizeOp op,
                                PatternRewriter &rewriter) const override {
    BlockScaledTensorType type = op.getResult().getType();
    if (op.getHadamard() || op.getRounding() != RoundingMode::NearestEven ||
        type.getBlockRows() != 1 || type.getLayout() != ScaleLayout::Linear)
      return rewriter.notifyMatchFailure(
          op, "not a 1x16 round-to-nearest linear-scale quantization");
    auto matmul = op.getInput().getDefiningOp<ScaledMatmulOp>();
    if (!matmul || matmul.getResultAmax() || !matmul.getResult().hasOneUse())
      return rewriter.notifyMatchFailure(
          op, "does not quantize the only use of a scaled_matmul's output");
    // scaled_matmul_quantize is NVFP4 in and out (scaled_matmul_quantize_c6).
    if (type.isMX() || matmul.getLhs().getType().isMX())
      return rewriter.notifyMatchFailure(op, "an MX GEMM or quantization");
    Value amax = op.getAmax();
    if (!amax || !availableBefore(amax, matmul))
      return rewriter.notifyMatchFailure(
          op, "its amax is not known before the GEMM runs");
    if (!feedsScaledMatmul(op.getResult()))
      return rewriter.notifyMatchFailure(op, "not an operand of an NVFP4 GEMM");

    auto product = cast<RankedTensorType>(matmul.getResult().getType());
    rewriter.setInsertionPoint(op);
    auto fused = ScaledMatmulQuantizeOp::create(
        rewriter, matmul.getLoc(), type, matmul.getLhs(), matmul.getRhs(),
        amax, matmul.getAlpha(), matmul.getRoleAttr(),
        product.getElementType().isBF16()
            ? TypeAttr()
            : TypeAttr::get(product.getElementType()));
    fused->setDiscardableAttrs(matmul->getDiscardableAttrDictionary());
    rewriter.replaceOp(op, fused.getResult());
    rewriter.eraseOp(matmul);
    count(&FusionCounters::fusedEpilogueQuantizations);
    return success();
  }
};
} // namespace

void mlir::nvfp4::populateFuseEpilogueQuantizationPatterns(
    RewritePatternSet &patterns, FusionCounters *counters) {
  patterns.add<FuseEpilogueQuantizationPattern>(patterns.getContext(),
                                                counters);
}

//===----------------------------------------------------------------------===//
// fuse-dual-quantization
//===----------------------------------------------------------------------===//

/// Collects the ops to move before `point` so that `value` is available
/// there, operands before users: none if it is already; else its defining
/// op, which must be a pure, region-free op of point's block (a seed
/// constant, the mixing of a seed argument), and what it needs in turn.
static LogicalResult collectHoistable(Value value, Operation *point,
                                      llvm::SetVector<Operation *> &ops) {
  if (availableBefore(value, point))
    return success();
  Operation *def = value.getDefiningOp();
  if (!def || def->getBlock() != point->getBlock() ||
      def->getNumRegions() != 0 || !isPure(def))
    return failure();
  if (ops.contains(def))
    return success();
  for (Value operand : def->getOperands())
    if (failed(collectHoistable(operand, point, ops)))
      return failure();
  ops.insert(def);
  return success();
}

namespace {
/// quantize(X) (1x16, no RHT) and quantize(transpose(X)) (1x16, with or
/// without the RHT) become one nvfp4.dual_quantize of X in the place of the
/// earlier of the two: one kernel reads X once for both, and neither the
/// transposed tensor nor its RHT is materialized. Both keep their amax,
/// rounding and seed, so the bytes do not change.
struct FuseDualQuantizationPattern : public CountingPattern<QuantizeOp> {
  using CountingPattern::CountingPattern;

  LogicalResult matchAndRewrite(QuantizeOp columnwise,
                                PatternRewriter &rewriter) const override {
    // nvfp4.dual_quantize is NVFP4 only (dual_quantize_c3).
    if (columnwise.getType().getBlockRows() != 1 ||
        columnwise.getType().isMX())
      return rewriter.notifyMatchFailure(columnwise,
                                         "not a 1x16 NVFP4 quantization");
    Value input = transposedSource(columnwise.getInput().getDefiningOp());
    if (!input)
      return rewriter.notifyMatchFailure(
          columnwise, "does not quantize a transpose of the last two "
                      "dimensions");
    // The first rowwise quantization of the same tensor in this block.
    QuantizeOp rowwise;
    for (Operation *user : input.getUsers()) {
      auto candidate = dyn_cast<QuantizeOp>(user);
      if (!candidate || candidate.getInput() != input ||
          candidate.getHadamard() || candidate.getType().isMX() ||
          candidate.getType().getBlockRows() != 1 ||
          candidate->getBlock() != columnwise->getBlock())
        continue;
      if (!rowwise || candidate->isBeforeInBlock(rowwise))
        rowwise = candidate;
    }
    if (!rowwise)
      return rewriter.notifyMatchFailure(
          columnwise, "no 1x16 quantization without RHT of the transposed "
                      "tensor in the same block");

    // The fused op takes the earlier one's place; what the later one reads
    // must be available there (pure producers in between are moved up).
    bool rowwiseFirst = rowwise->isBeforeInBlock(columnwise);
    Operation *first = rowwiseFirst ? rowwise.getOperation()
                                    : columnwise.getOperation();
    QuantizeOp later = rowwiseFirst ? columnwise : rowwise;
    llvm::SetVector<Operation *> hoisted;
    for (Value operand : SmallVector<Value>{later.getAmax(), later.getSeed()})
      if (operand && failed(collectHoistable(operand, first, hoisted)))
        return rewriter.notifyMatchFailure(
            columnwise, "the later quantization's amax or seed is not "
                        "available at the earlier one");
    for (Operation *op : hoisted)
      rewriter.moveOpBefore(op, first);

    rewriter.setInsertionPoint(first);
    auto dual = DualQuantizeOp::create(
        rewriter,
        rewriter.getFusedLoc({rowwise.getLoc(), columnwise.getLoc()}),
        rowwise.getType(), columnwise.getType(), input, rowwise.getAmax(),
        rowwise.getSeed(), rowwise.getRoundingAttr(), columnwise.getAmax(),
        columnwise.getSeed(), columnwise.getRoundingAttr(),
        columnwise.getHadamardAttr());
    rewriter.replaceOp(rowwise, dual.getRowwise());
    rewriter.replaceOp(columnwise, dual.getColumnwise());
    count(&FusionCounters::fusedDualQuantizations);
    return success();
  }
};
} // namespace

void mlir::nvfp4::populateFuseDualQuantizationPatterns(
    RewritePatternSet &patterns, FusionCounters *counters) {
  patterns.add<FuseDualQuantizationPattern>(patterns.getContext(), counters);
}

//===----------------------------------------------------------------------===//
// remove-dead
//===----------------------------------------------------------------------===//

uint64_t mlir::nvfp4::removeDeadQuantizations(Operation *root) {
  uint64_t removed = 0;
  SmallVector<Operation *> worklist;
  root->walk([&](Operation *op) {
    if (isa<QuantizeOp, DualQuantizeOp, AmaxOp, HadamardOp, DequantizeOp,
            PackOp, UnpackOp, SwizzleScalesOp, TransposeOp>(op) &&
        op->use_empty())
      worklist.push_back(op);
  });
  llvm::SmallPtrSet<Operation *, 16> erased;
  while (!worklist.empty()) {
    Operation *op = worklist.pop_back_val();
    if (erased.contains(op) || !op->use_empty() || !isOpTriviallyDead(op))
      continue;
    for (Value operand : op->getOperands())
      if (Operation *producer = operand.getDefiningOp())
        worklist.push_back(producer);
    if (isa<NVFP4Dialect>(op->getDialect()))
      ++removed;
    erased.insert(op);
    op->erase();
  }
  return removed;
}

//===----------------------------------------------------------------------===//
// Pass
//===----------------------------------------------------------------------===//

namespace {
struct NVFP4FuseQuantizationPass
    : public nvfp4::impl::NVFP4FuseQuantizationBase<NVFP4FuseQuantizationPass> {
  using Base::Base;

  void runOnOperation() override {
    for (Operation &op : getOperation().getBody()->getOperations()) {
      auto function = dyn_cast<FunctionOpInterface>(op);
      if (!function || function.isExternal())
        continue;
      FusionCounters counters;
      if (failed(fuseFunction(function, counters)))
        return signalPassFailure();
      numSharedAmax += counters.sharedAmax;
      numSharedWeightQuantizations += counters.sharedWeightQuantizations;
      numFoldedHadamards += counters.foldedHadamards;
      numFusedOutputAmaxes += counters.fusedOutputAmaxes;
      numFusedEpilogueQuantizations += counters.fusedEpilogueQuantizations;
      numFusedDualQuantizations += counters.fusedDualQuantizations;
      numDeadOpsRemoved += counters.deadOpsRemoved;
      numSharedQuantizations += counters.sharedQuantizations;
      if (reportCounts)
        function.emitRemark()
            << "nvfp4-fuse-quantization: shared-amax = " << counters.sharedAmax
            << ", shared-weight-quantizations = "
            << counters.sharedWeightQuantizations
            << ", folded-hadamards = " << counters.foldedHadamards
            << ", fused-output-amaxes = " << counters.fusedOutputAmaxes
            << ", fused-epilogue-quantizations = "
            << counters.fusedEpilogueQuantizations
            << ", fused-dual-quantizations = "
            << counters.fusedDualQuantizations
            << ", dead-ops-removed = " << counters.deadOpsRemoved
            << ", shared-quantizations = " << counters.sharedQuantizations;
    }
  }

  LogicalResult fuseFunction(FunctionOpInterface function,
                             FusionCounters &counters) {
    // Dead ops first: the greedy driver below would erase them uncounted.
    if (removeDead)
      counters.deadOpsRemoved = removeDeadQuantizations(function);
    // Weight sharing before amax sharing, so that the two weight copies do
    // not first get an amax of their own.
    auto run = [&](void (*populate)(RewritePatternSet &, FusionCounters *)) {
      RewritePatternSet patterns(&getContext());
      populate(patterns, &counters);
      return applyPatternsGreedily(function, std::move(patterns));
    };
    if (shareWeightQuantization &&
        failed(run(populateShareWeightQuantizationPatterns)))
      return failure();
    // RHTs before amax sharing: a folded quantization works on the RHT's
    // input, whose other quantizations must not share its (post-RHT) amax.
    if (foldHadamard && failed(run(populateFoldHadamardPatterns)))
      return failure();
    if (shareAmax && failed(run(populateShareAmaxPatterns)))
      return failure();
    // A quantization with an amax known before its GEMM moves into the
    // GEMM's epilogue whole.
    if (fuseEpilogueQuantization &&
        failed(run(populateFuseEpilogueQuantizationPatterns)))
      return failure();
    // After amax sharing, so that one epilogue amax serves every
    // quantization of the output.
    if (fuseOutputAmax && failed(run(populateFuseOutputAmaxPatterns)))
      return failure();
    // Once every amax is final (shared, from an epilogue), equal
    // quantizations are identical ops.
    if (shareQuantization && failed(run(populateShareQuantizationPatterns)))
      return failure();
    // Last: every amax the quantizations of a tensor end up with (shared,
    // from an epilogue) is final, and the pair keeps them.
    if (fuseDualQuantization &&
        failed(run(populateFuseDualQuantizationPatterns)))
      return failure();
    if (removeDead)
      counters.deadOpsRemoved += removeDeadQuantizations(function);
    return success();
  }
};
} // namespace
