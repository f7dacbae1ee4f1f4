//===- ScanKernels.cpp - slices, pads and sequential scans as kernels -----===//
//
// Part of the nvfp4 project.
//
// The ops of a Mamba-2 mixer that are not plain linalg (docs/Runtime.md,
// "Whole models"):
//
//   * tensor.extract_slice and tensor.pad at a function's top level become
//     linalg.generic ops that read their source with tensor.extract (a pad
//     selects its value outside the source, reading a clamped index), which
//     LinalgToGPU then makes copy kernels of;
//   * an scf.for over tokens that carries a state (the selective scan)
//     becomes ONE kernel: each warp owns one point of the state's dimensions
//     other than the reduced one (Mamba-2: a head and a channel), its lanes
//     the reduced one (the state index, 32 apart: ceil(N / 32) registers per
//     state tensor), and walks the tokens in order with the state in
//     registers. The loop is recognized structurally; a loop that does not
//     fit stays on the host, where nvfp4-compile reports it.
//
// What a scan loop may contain (ScanPlan::analyze): slices and reshapes of
// tensors from outside (read where a kernel body needs them), linalg ops
// over the state's iteration space (all parallel, or one reduction over the
// lanes' dimension whose body is combiner(acc, f(...)): the lanes combine by
// a butterfly of shuffles) or over the state's space without the reduced
// dimension, and tensor.insert_slice of a result into a carried tensor at
// the token's row (each row written once, so the tensor needs no init).
//
//===----------------------------------------------------------------------===//

#include "KernelBuilder.h"
#include "KernelUtils.h"
#include "LinalgKernels.h"
#include "nvfp4/Conversion/NVFP4ToGPU/NVFP4ToGPU.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"
#include "llvm/ADT/DenseMap.h"

using namespace mlir;
using namespace mlir::nvfp4;
using namespace mlir::nvfp4::kernels;

namespace {

constexpr int64_t kWarpSize = 32;
/// Registers per state tensor and thread at most (the reduced dimension is
/// then at most 256): more would spill.
constexpr int64_t kMaxSlots = 8;

LogicalResult checkTopLevel(Operation *op, PatternRewriter &rewriter) {
  if (!isa_and_present<func::FuncOp>(op->getParentOp()))
    return rewriter.notifyMatchFailure(op, "not at a function's top level");
  return success();
}

/// The dimensions of `source` that a slice of `resultType` drops (sizes of
/// 1 that the result does not have).
llvm::SmallDenseSet<unsigned> droppedDims(ArrayRef<int64_t> sizes,
                                          RankedTensorType resultType) {
  std::optional<llvm::SmallDenseSet<unsigned>> mask =
      computeRankReductionMask(sizes, resultType.getShape());
  return mask ? *mask : llvm::SmallDenseSet<unsigned>();
}

//===----------------------------------------------------------------------===//
// Slices and pads: generics that LinalgToGPU makes kernels of
//===----------------------------------------------------------------------===//

/// tensor.extract_slice with static offsets, sizes and strides: a
/// linalg.generic over the result that reads source[offset + i * stride].
struct SliceToGeneric : OpRewritePattern<tensor::ExtractSliceOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(tensor::ExtractSliceOp op,
                                PatternRewriter &rewriter) const override {
    if (failed(checkTopLevel(op, rewriter)))
      return failure();
    RankedTensorType source = op.getSourceType();
    RankedTensorType result = op.getResultType();
    if (!source.hasStaticShape() || !result.hasStaticShape() ||
        ShapedType::isDynamicShape(op.getStaticStrides()))
      return rewriter.notifyMatchFailure(op, "dynamic shapes or strides");
    if (ShapedType::isDynamicShape(op.getStaticOffsets()))
      return rewriter.notifyMatchFailure(op, "dynamic offsets");
    SmallVector<int64_t> offsets(op.getStaticOffsets());
    SmallVector<int64_t> strides(op.getStaticStrides());
    llvm::SmallDenseSet<unsigned> dropped =
        droppedDims(op.getStaticSizes(), result);
    Location loc = op.getLoc();
    int64_t rank = result.getRank();
    SmallVector<AffineMap> maps = {rewriter.getMultiDimIdentityMap(rank)};
    SmallVector<utils::IteratorType> iterators(rank,
                                               utils::IteratorType::parallel);
    Value empty = tensor::EmptyOp::create(rewriter, loc, result.getShape(),
                                          result.getElementType());
    auto generic = linalg::GenericOp::create(
        rewriter, loc, TypeRange{result}, ValueRange{}, ValueRange{empty},
        maps, iterators, [&](OpBuilder &b, Location l, ValueRange) {
          SmallVector<Value> indices;
          int64_t k = 0;
          for (int64_t d = 0; d < source.getRank(); ++d) {
            Value offset = arith::ConstantIndexOp::create(b, l, offsets[d]);
            if (dropped.contains(d)) {
              indices.push_back(offset);
              continue;
            }
            Value i = linalg::IndexOp::create(b, l, k++);
            if (strides[d] != 1)
              i = arith::MulIOp::create(
                  b, l, i, arith::ConstantIndexOp::create(b, l, strides[d]));
            indices.push_back(offsets[d] ? arith::AddIOp::create(b, l, i, offset)
                                         : i);
          }
          Value v = tensor::ExtractOp::create(b, l, op.getSource(), indices);
          linalg::YieldOp::create(b, l, v);
        });
    rewriter.replaceOp(op, generic->getResults());
    return success();
  }
};

/// tensor.pad with static widths and a padding value from outside its
/// region: a linalg.generic over the result that selects the source element
/// (read at a clamped index, so that the load stays in bounds) or the
/// padding value.
struct PadToGeneric : OpRewritePattern<tensor::PadOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(tensor::PadOp op,
                                PatternRewriter &rewriter) const override {
    if (failed(checkTopLevel(op, rewriter)))
      return failure();
    RankedTensorType source = op.getSourceType();
    RankedTensorType result = op.getResultType();
    if (!source.hasStaticShape() || !result.hasStaticShape() ||
        ShapedType::isDynamicShape(op.getStaticLow()))
      return rewriter.notifyMatchFailure(op, "dynamic shapes or widths");
    Value padding = op.getConstantPaddingValue();
    if (!padding)
      return rewriter.notifyMatchFailure(
          op, "the padding value is not one value from outside the region");
    SmallVector<int64_t> low(op.getStaticLow());
    Location loc = op.getLoc();
    int64_t rank = result.getRank();
    SmallVector<AffineMap> maps = {rewriter.getMultiDimIdentityMap(rank)};
    SmallVector<utils::IteratorType> iterators(rank,
                                               utils::IteratorType::parallel);
    Value empty = tensor::EmptyOp::create(rewriter, loc, result.getShape(),
                                          result.getElementType());
    auto generic = linalg::GenericOp::create(
        rewriter, loc, TypeRange{result}, ValueRange{}, ValueRange{empty},
        maps, iterators, [&](OpBuilder &b, Location l, ValueRange) {
          SmallVector<Value> indices;
          Value inside;
          auto both = [&](Value c) {
            inside = inside ? arith::AndIOp::create(b, l, inside, c) : c;
          };
          Value zero = arith::ConstantIndexOp::create(b, l, 0);
          for (int64_t d = 0; d < rank; ++d) {
            Value i = linalg::IndexOp::create(b, l, d);
            Value first = arith::ConstantIndexOp::create(b, l, low[d]);
            Value end =
                arith::ConstantIndexOp::create(b, l, low[d] + source.getDimSize(d));
            Value in = arith::CmpIOp::create(b, l, arith::CmpIPredicate::ult,
                                             i, end);
            if (low[d])
              in = arith::AndIOp::create(
                  b, l, in,
                  arith::CmpIOp::create(b, l, arith::CmpIPredicate::uge, i,
                                        first));
            both(in);
            Value shifted = low[d] ? arith::SubIOp::create(b, l, i, first) : i;
            indices.push_back(arith::SelectOp::create(b, l, in, shifted, zero));
          }
          Value v = tensor::ExtractOp::create(b, l, op.getSource(), indices);
          linalg::YieldOp::create(
              b, l, ValueRange{arith::SelectOp::create(b, l, inside, v, padding)});
        });
    rewriter.replaceOp(op, generic->getResults());
    return success();
  }
};

//===----------------------------------------------------------------------===//
// The scan
//===----------------------------------------------------------------------===//

/// One step of a view: a slice (offsets static or the loop's induction
/// variable) or a reshape.
struct ViewStep {
  tensor::ExtractSliceOp slice;     ///< null for a reshape
  SmallVector<int64_t> sourceShape; ///< the shape the step reads
  SmallVector<int64_t> resultShape;
};

/// How a tensor inside the loop is held by the kernel.
struct ScanValue {
  enum Kind {
    View,     ///< a slice / reshape of a tensor from outside: loaded
    Full,     ///< over the state's space: one register per slot
    Outer,    ///< over the state's space without the lanes' dimension
    Reshaped, ///< a reshape of a Full or Outer value (insert_slice only)
    Unread    ///< tensor.empty: only an init no body reads
  } kind;
  Value root;                 ///< View: the tensor from outside
  SmallVector<ViewStep> steps; ///< View: from the root outward
  Value base;                 ///< Reshaped: the Full or Outer value
};

/// What the scan's kernel needs to know about the loop.
struct ScanPlan {
  scf::ForOp loop;
  int64_t tokens = 0;
  SmallVector<int64_t> space; ///< the state's shape
  int64_t lanesDim = 0;       ///< the dimension the lanes own
  int64_t slots = 0;          ///< ceil(space[lanesDim] / 32)
  SmallVector<int64_t> outerShape;
  /// Per iter_arg: a state (Full, carried in registers) or rows (written by
  /// insert_slice).
  SmallVector<bool> isState;
  DenseMap<Value, ScanValue> values;
  /// Tensors and scalars from outside, in kernel-argument order.
  SmallVector<Value> roots, scalars;
  SmallVector<Operation *> constants;

  std::string analyze();
  std::string classify(Operation *op);
  std::string classifyGeneric(linalg::GenericOp op);
  std::string use(Value v, Operation *user);
  bool isProjection(AffineMap map) const;
};

bool ScanPlan::isProjection(AffineMap map) const {
  if (map.getNumDims() != space.size() ||
      map.getNumResults() != space.size() - 1)
    return false;
  int64_t k = 0;
  for (int64_t d = 0; d < static_cast<int64_t>(space.size()); ++d) {
    if (d == lanesDim)
      continue;
    if (map.getResult(k++) != getAffineDimExpr(d, map.getContext()))
      return false;
  }
  return true;
}

/// Records `v`, used by `user` inside the loop, if it comes from outside:
/// a tensor is a view root, a constant is cloned, a scalar an argument.
std::string ScanPlan::use(Value v, Operation *user) {
  if (v == loop.getInductionVar())
    return "";
  if (loop.getRegion().isAncestor(v.getParentRegion()))
    return "";
  if (auto tensor = dyn_cast<RankedTensorType>(v.getType())) {
    if (!tensor.hasStaticShape())
      return "a tensor of dynamic shape from outside";
    if (!values.count(v)) {
      values[v] = ScanValue{ScanValue::View, v, {}, Value()};
      roots.push_back(v);
    }
    return "";
  }
  if (Operation *def = v.getDefiningOp();
      def && def->hasTrait<OpTrait::ConstantLike>()) {
    if (!llvm::is_contained(constants, def))
      constants.push_back(def);
    return "";
  }
  if (v.getType().isIntOrIndexOrFloat()) {
    if (!llvm::is_contained(scalars, v))
      scalars.push_back(v);
    return "";
  }
  return "a value from outside of a type kernels cannot take (" +
         user->getName().getStringRef().str() + ")";
}

std::string ScanPlan::analyze() {
  std::optional<int64_t> lb = getConstantIntValue(loop.getLowerBound());
  std::optional<int64_t> ub = getConstantIntValue(loop.getUpperBound());
  std::optional<int64_t> step = getConstantIntValue(loop.getStep());
  if (!lb || !ub || !step || *lb != 0 || *step != 1 || *ub <= 0)
    return "not a loop from 0 by 1 to a constant";
  tokens = *ub;
  if (loop.getNumRegionIterArgs() == 0)
    return "no iter_args";
  auto yield = cast<scf::YieldOp>(loop.getBody()->getTerminator());

  // The iter_args: states (the yielded value is a linalg result) and rows
  // (the yielded value is an insert_slice into the arg).
  for (auto [arg, next] :
       llvm::zip(loop.getRegionIterArgs(), yield.getOperands())) {
    auto type = dyn_cast<RankedTensorType>(arg.getType());
    if (!type || !type.hasStaticShape())
      return "an iter_arg that is not a static tensor";
    if (auto insert = next.getDefiningOp<tensor::InsertSliceOp>();
        insert && insert.getDest() == arg) {
      isState.push_back(false);
      continue;
    }
    if (!next.getDefiningOp<linalg::GenericOp>())
      return "an iter_arg yielded neither by a linalg.generic nor by an "
             "insert_slice into itself";
    if (!space.empty() && ArrayRef(space) != type.getShape())
      return "states of different shapes";
    space.assign(type.getShape().begin(), type.getShape().end());
    isState.push_back(true);
  }
  if (space.empty())
    return "no state (an iter_arg updated by a linalg op)";

  // The lanes' dimension: the one the reductions reduce (the last one
  // without reductions).
  lanesDim = static_cast<int64_t>(space.size()) - 1;
  bool haveReduction = false;
  for (auto generic : loop.getBody()->getOps<linalg::GenericOp>()) {
    if (ArrayRef(generic.getStaticLoopRanges()) != ArrayRef(space))
      continue;
    for (auto [d, it] : llvm::enumerate(generic.getIteratorTypesArray())) {
      if (it != utils::IteratorType::reduction)
        continue;
      if (haveReduction && lanesDim != static_cast<int64_t>(d))
        return "reductions over different dimensions of the state";
      haveReduction = true;
      lanesDim = d;
    }
  }
  slots = llvm::divideCeil(space[lanesDim], kWarpSize);
  if (slots > kMaxSlots)
    return "a reduced dimension larger than " +
           std::to_string(kMaxSlots * kWarpSize) +
           " (the state would not fit in registers)";
  outerShape.clear();
  for (auto [d, extent] : llvm::enumerate(space))
    if (static_cast<int64_t>(d) != lanesDim)
      outerShape.push_back(extent);

  for (auto [arg, state, init] :
       llvm::zip(loop.getRegionIterArgs(), isState, loop.getInitArgs())) {
    if (!state)
      continue;
    values[arg] = ScanValue{ScanValue::Full, Value(), {}, Value()};
    std::string why = use(init, loop);
    if (!why.empty())
      return why;
  }
  for (Operation &op : loop.getBody()->without_terminator()) {
    std::string why = classify(&op);
    if (!why.empty())
      return why;
  }
  for (auto [arg, next, state] :
       llvm::zip(loop.getRegionIterArgs(), yield.getOperands(), isState)) {
    if (state && values.lookup(next).kind != ScanValue::Full)
      return "a state yielded that is not over the state's space";
    if (!state && !arg.hasOneUse())
      return "a carried tensor used other than by its insert_slice";
  }
  return "";
}

std::string ScanPlan::classify(Operation *op) {
  for (Value operand : op->getOperands()) {
    std::string why = use(operand, op);
    if (!why.empty())
      return why;
  }
  auto known = [&](Value v) { return values.count(v) != 0; };
  if (op->hasTrait<OpTrait::ConstantLike>())
    return "";
  if (auto empty = dyn_cast<tensor::EmptyOp>(op)) {
    values[empty] = ScanValue{ScanValue::Unread, Value(), {}, Value()};
    return "";
  }
  if (auto slice = dyn_cast<tensor::ExtractSliceOp>(op)) {
    if (!known(slice.getSource()) ||
        values[slice.getSource()].kind != ScanValue::View)
      return "a slice of a value computed in the loop";
    if (!slice.getResultType().hasStaticShape() ||
        ShapedType::isDynamicShape(slice.getStaticStrides()))
      return "a slice of dynamic sizes or strides";
    for (Value offset : slice.getOffsets())
      if (offset != loop.getInductionVar())
        return "a slice offset other than a constant or the induction variable";
    ScanValue view = values[slice.getSource()];
    view.steps.push_back(
        {slice, SmallVector<int64_t>(slice.getSourceType().getShape()),
         SmallVector<int64_t>(slice.getResultType().getShape())});
    values[slice] = view;
    return "";
  }
  if (isa<tensor::ExpandShapeOp, tensor::CollapseShapeOp>(op)) {
    Value source = op->getOperand(0);
    if (!known(source))
      return "a reshape of an unknown value";
    auto sourceType = cast<RankedTensorType>(source.getType());
    auto resultType = cast<RankedTensorType>(op->getResult(0).getType());
    if (!resultType.hasStaticShape())
      return "a reshape to a dynamic shape";
    ScanValue value = values[source];
    switch (value.kind) {
    case ScanValue::View:
      value.steps.push_back({tensor::ExtractSliceOp(),
                             SmallVector<int64_t>(sourceType.getShape()),
                             SmallVector<int64_t>(resultType.getShape())});
      break;
    case ScanValue::Full:
    case ScanValue::Outer:
      value = ScanValue{ScanValue::Reshaped, Value(), {}, source};
      break;
    case ScanValue::Reshaped:
      break;
    case ScanValue::Unread:
      return "a reshape of tensor.empty";
    }
    values[op->getResult(0)] = value;
    return "";
  }
  if (auto insert = dyn_cast<tensor::InsertSliceOp>(op)) {
    auto arg = dyn_cast<BlockArgument>(insert.getDest());
    if (!arg || arg.getOwner() != loop.getBody() || arg.getArgNumber() == 0 ||
        isState[arg.getArgNumber() - 1])
      return "an insert_slice into a tensor other than a carried one";
    auto yield = cast<scf::YieldOp>(loop.getBody()->getTerminator());
    if (yield.getOperand(arg.getArgNumber() - 1) != insert.getResult() ||
        !insert.getResult().hasOneUse())
      return "an insert_slice whose result is not the yielded tensor";
    Value source = insert.getSource();
    if (!known(source) || (values[source].kind != ScanValue::Reshaped &&
                           values[source].kind != ScanValue::Full &&
                           values[source].kind != ScanValue::Outer))
      return "an insert_slice of a value not computed over the state's space";
    // Each token writes its own rows, all of them: the carried tensor's row
    // dimension is the tokens, every other dimension is whole.
    RankedTensorType dest = insert.getDestType();
    if (!insert.hasUnitStride() ||
        ShapedType::isDynamicShape(insert.getStaticSizes()))
      return "an insert_slice with strides or dynamic sizes";
    int64_t rowDims = 0;
    for (auto [d, offset] : llvm::enumerate(insert.getMixedOffsets())) {
      int64_t size = insert.getStaticSizes()[d];
      if (auto v = dyn_cast<Value>(offset)) {
        if (v != loop.getInductionVar() || size != 1 ||
            dest.getDimSize(d) != tokens)
          return "an insert_slice that does not write row t of a tensor of "
                 "t rows";
        ++rowDims;
      } else if (getConstantIntValue(offset) != 0 ||
                 size != dest.getDimSize(d)) {
        return "an insert_slice that does not write whole rows";
      }
    }
    if (rowDims != 1)
      return "an insert_slice that does not write row t of a tensor of t rows";
    return "";
  }
  if (auto generic = dyn_cast<linalg::GenericOp>(op))
    return classifyGeneric(generic);
  return "an op the scan kernel does not take (" +
         op->getName().getStringRef().str() + ")";
}

std::string ScanPlan::classifyGeneric(linalg::GenericOp op) {
  if (!op.hasPureTensorSemantics())
    return "a linalg op not on tensors";
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  bool full = ranges == space;
  if (!full && ranges != outerShape)
    return "a linalg op over a space other than the state's, or the state's "
           "without its reduced dimension";
  int64_t reduction = -1;
  for (auto [d, it] : llvm::enumerate(op.getIteratorTypesArray()))
    if (it == utils::IteratorType::reduction)
      reduction = d;
  if (reduction >= 0 && (!full || reduction != lanesDim))
    return "a reduction over a dimension the lanes do not own";
  for (AffineMap map : op.getIndexingMapsArray())
    if (!isEvaluable(map))
      return "an indexing map with negative constants";

  Block *body = op.getBlock();
  std::string why;
  body->walk([&](Operation *inner) {
    if (!why.empty())
      return;
    if (!isa<linalg::IndexOp, linalg::YieldOp>(inner) &&
        !isa<arith::ArithDialect>(inner->getDialect()) && !isKernelMath(inner))
      why = "a body op the kernel cannot compute (" +
            inner->getName().getStringRef().str() + ")";
    for (Value operand : inner->getOperands()) {
      if (op->isAncestor(operand.getParentRegion()->getParentOp()))
        continue;
      if (isa<ShapedType>(operand.getType())) {
        why = "a body that reads a tensor (tensor.extract)";
        return;
      }
      std::string w = use(operand, op);
      if (!w.empty())
        why = w;
    }
  });
  if (!why.empty())
    return why;
  for (Operation &inner : body->without_terminator())
    if (isa<math::ExpOp, math::Exp2Op, math::LogOp, math::SqrtOp,
            math::RsqrtOp>(inner) &&
        !inner.getResult(0).getType().isF32())
      return "exp, log, sqrt or rsqrt of a type other than f32";

  // The operands the body reads, each by a map the kernel can follow.
  auto check = [&](OpOperand &operand) -> std::string {
    Value v = operand.get();
    if (!isa<RankedTensorType>(v.getType()))
      return "";
    AffineMap map = op.getMatchingIndexingMap(&operand);
    const ScanValue &value = values[v];
    switch (value.kind) {
    case ScanValue::View:
      return "";
    case ScanValue::Full:
      return full && map.isIdentity()
                 ? ""
                 : "a state-space value read other than at its own point";
    case ScanValue::Outer:
      return (full && isProjection(map)) || (!full && map.isIdentity())
                 ? ""
                 : "a reduced value read other than at its own point";
    case ScanValue::Reshaped:
      return "a reshaped result read by a linalg op";
    case ScanValue::Unread:
      return "a body that reads tensor.empty";
    }
    return "";
  };
  for (OpOperand *input : op.getDpsInputOperands()) {
    if (isa<RankedTensorType>(input->get().getType()) &&
        !values.count(input->get()))
      return "an input of unknown origin";
    std::string w = check(*input);
    if (!w.empty())
      return w;
  }
  for (OpOperand &init : op.getDpsInitsMutable()) {
    if (!values.count(init.get()))
      return "an init of unknown origin";
    bool read = reduction >= 0 || !op.getMatchingBlockArgument(&init).use_empty();
    if (!read)
      continue;
    std::string w = check(init);
    if (!w.empty())
      return w;
  }

  if (reduction < 0) {
    for (AffineMap map :
         ArrayRef(op.getIndexingMapsArray()).drop_front(op.getNumDpsInputs()))
      if (!map.isIdentity())
        return "a result not stored at its own point";
    for (Value result : op->getResults())
      values[result] = ScanValue{full ? ScanValue::Full : ScanValue::Outer,
                                 Value(), {}, Value()};
    return "";
  }
  if (op.getNumDpsInits() != 1)
    return "a reduction with more than one result";
  if (!isProjection(op.getMatchingIndexingMap(op.getDpsInitOperand(0))))
    return "a reduction whose result is not the state's space without the "
           "reduced dimension";
  if (values[op.getDpsInits()[0]].kind == ScanValue::Unread)
    return "a reduction into tensor.empty";
  BlockArgument acc = op.getMatchingBlockArgument(op.getDpsInitOperand(0));
  auto yield = cast<linalg::YieldOp>(body->getTerminator());
  Operation *combiner = yield.getOperand(0).getDefiningOp();
  if (!combiner || !acc.hasOneUse() || *acc.getUsers().begin() != combiner ||
      combiner->getNumOperands() != 2 || combiner->getNumResults() != 1 ||
      !arith::getNeutralElement(combiner) ||
      acc.getType().getIntOrFloatBitWidth() != 32)
    return "a reduction body that is not combiner(acc, value) on 32 bits";
  values[op->getResult(0)] =
      ScanValue{ScanValue::Outer, Value(), {}, Value()};
  return "";
}

/// Emits the scan's kernel body: `args` are the kernel arguments (outputs,
/// roots, scalars), laid out by ScanToGPU.
struct ScanEmitter {
  const ScanPlan &plan;
  scf::ForOp loop; ///< plan.loop (ops are handles: not const)
  OpBuilder &b;
  Location loc;
  IndexMath m;
  IRMapping outside;                       ///< constants, scalars, t
  DenseMap<Value, Value> buffers;          ///< root -> its kernel argument
  DenseMap<Value, Value> outputs;          ///< loop result -> its argument
  SmallVector<Value> outer;                ///< the warp's outer point
  SmallVector<SmallVector<Value>> points;  ///< per slot: the full point
  SmallVector<Value> valid;                ///< per slot: inside the space
  Value lane;
  /// Full values: one per slot; Outer values: one.
  DenseMap<Value, SmallVector<Value>> regs;

  ScanEmitter(const ScanPlan &plan, OpBuilder &b, Location loc)
      : plan(plan), loop(plan.loop), b(b), loc(loc), m{b, loc} {}

  Value loadRoot(Value root, ArrayRef<Value> indices) {
    auto type = cast<RankedTensorType>(root.getType());
    return memref::LoadOp::create(
               b, loc, buffers.lookup(root),
               ValueRange{linearOffset(m, indices, type.getShape())})
        .getResult();
  }

  /// The element of view `value` at `indices` (in the view's shape).
  Value loadView(const ScanValue &value, SmallVector<Value> indices) {
    for (const ViewStep &step : llvm::reverse(value.steps)) {
      if (!step.slice) {
        Value linear = linearOffset(m, indices, step.resultShape);
        indices = delinearize(m, linear, step.sourceShape);
        continue;
      }
      tensor::ExtractSliceOp slice = step.slice;
      llvm::SmallDenseSet<unsigned> dropped =
          droppedDims(slice.getStaticSizes(), slice.getResultType());
      SmallVector<Value> source;
      int64_t k = 0;
      for (auto [d, offset] : llvm::enumerate(slice.getMixedOffsets())) {
        Value start = isa<Value>(offset)
                          ? outside.lookup(cast<Value>(offset))
                          : m.c(*getConstantIntValue(offset));
        if (dropped.contains(d)) {
          source.push_back(start);
          continue;
        }
        source.push_back(
            m.add(start, m.mul(indices[k++], slice.getStaticStrides()[d])));
      }
      indices = std::move(source);
    }
    return loadRoot(value.root, indices);
  }

  /// The value of operand `operand` of `op` at slot `slot` (full space) or
  /// at the outer point (slot -1) with loop indices `loops`.
  Value read(linalg::GenericOp op, OpOperand &operand, ArrayRef<Value> loops,
             int64_t slot) {
    Value v = operand.get();
    if (!isa<RankedTensorType>(v.getType()))
      return outside.lookupOrDefault(v);
    const ScanValue &value = plan.values.find(v)->second;
    if (value.kind == ScanValue::View) {
      SmallVector<Value> indices;
      for (AffineExpr e : op.getMatchingIndexingMap(&operand).getResults())
        indices.push_back(evaluateAffine(m, e, loops));
      return loadView(value, indices);
    }
    const SmallVector<Value> &held = regs.lookup(v);
    return value.kind == ScanValue::Full ? held[slot] : held[0];
  }

  /// `op`'s body at `loops`, with `acc` for the accumulator (reductions).
  SmallVector<Value> body(linalg::GenericOp op, ArrayRef<Value> loops,
                          int64_t slot, Value acc) {
    IRMapping map = outside;
    for (OpOperand *input : op.getDpsInputOperands())
      map.map(op.getMatchingBlockArgument(input),
              read(op, *input, loops, slot));
    for (OpOperand &init : op.getDpsInitsMutable()) {
      BlockArgument arg = op.getMatchingBlockArgument(&init);
      if (acc)
        map.map(arg, acc);
      else if (!arg.use_empty())
        map.map(arg, read(op, init, loops, slot));
    }
    for (Operation &inner : op.getBlock()->without_terminator()) {
      if (auto index = dyn_cast<linalg::IndexOp>(inner))
        map.map(index.getResult(), loops[index.getDim()]);
      else if (Value expanded = expandMath(b, loc, inner, map))
        map.map(inner.getResult(0), expanded);
      else
        b.clone(inner, map);
    }
    SmallVector<Value> yielded;
    for (Value v : op.getBlock()->getTerminator()->getOperands())
      yielded.push_back(map.lookupOrDefault(v));
    return yielded;
  }

  Value combine(Operation *combiner, BlockArgument acc, Value lhs,
                Value rhs) {
    IRMapping map;
    for (Value operand : combiner->getOperands())
      map.map(operand, operand == acc ? lhs : rhs);
    return b.clone(*combiner, map)->getResult(0);
  }

  void generic(linalg::GenericOp op) {
    SmallVector<int64_t> ranges = op.getStaticLoopRanges();
    if (ranges != plan.space) {
      SmallVector<Value> yielded = body(op, outer, -1, Value());
      for (auto [result, v] : llvm::zip(op->getResults(), yielded))
        regs[result] = {v};
      return;
    }
    bool reduction = llvm::is_contained(op.getIteratorTypesArray(),
                                        utils::IteratorType::reduction);
    if (!reduction) {
      for (Value result : op->getResults())
        regs[result].assign(plan.slots, Value());
      for (int64_t j = 0; j < plan.slots; ++j) {
        SmallVector<Value> yielded = body(op, points[j], j, Value());
        for (auto [result, v] : llvm::zip(op->getResults(), yielded))
          regs[result][j] = v;
      }
      return;
    }
    // Each lane runs the body over its slots from the neutral element (the
    // slots past the dimension keep the accumulator), then the lanes
    // combine by a butterfly: every lane ends with the same total.
    auto yield = cast<linalg::YieldOp>(op.getBlock()->getTerminator());
    Operation *combiner = yield.getOperand(0).getDefiningOp();
    BlockArgument accArg = op.getMatchingBlockArgument(op.getDpsInitOperand(0));
    Value partial = arith::ConstantOp::create(
        b, loc, *arith::getNeutralElement(combiner));
    for (int64_t j = 0; j < plan.slots; ++j) {
      Value next = body(op, points[j], j, partial)[0];
      partial = arith::SelectOp::create(b, loc, valid[j], next, partial);
    }
    for (int32_t offset : {16, 8, 4, 2, 1}) {
      Value other = gpu::ShuffleOp::create(b, loc, partial, offset, kWarpSize,
                                           gpu::ShuffleMode::XOR)
                        .getShuffleResult();
      partial = combine(combiner, accArg, partial, other);
    }
    Value init = read(op, *op.getDpsInitOperand(0), points[0], 0);
    regs[op->getResult(0)] = {combine(combiner, accArg, init, partial)};
  }

  void insert(tensor::InsertSliceOp op) {
    Value source = op.getSource();
    const ScanValue &value = plan.values.find(source)->second;
    Value base = value.kind == ScanValue::Reshaped ? value.base : source;
    bool full = plan.values.find(base)->second.kind == ScanValue::Full;
    auto sourceType = cast<RankedTensorType>(source.getType());
    llvm::SmallDenseSet<unsigned> dropped =
        droppedDims(op.getStaticSizes(), sourceType);
    Value buffer = outputs.lookup(
        loop.getResult(cast<BlockArgument>(op.getDest()).getArgNumber() -
                            1));
    auto store = [&](Value v, ArrayRef<Value> point, ArrayRef<int64_t> shape) {
      // Reshapes keep the row-major order: the element's place in the
      // slice is its place in the base value.
      SmallVector<Value> indices = delinearize(
          m, linearOffset(m, point, shape), sourceType.getShape());
      SmallVector<Value> dest;
      int64_t k = 0;
      for (auto [d, offset] : llvm::enumerate(op.getMixedOffsets())) {
        Value start = isa<Value>(offset)
                          ? outside.lookup(cast<Value>(offset))
                          : m.c(*getConstantIntValue(offset));
        dest.push_back(dropped.contains(d) ? start
                                           : m.add(start, indices[k++]));
      }
      memref::StoreOp::create(
          b, loc, v, buffer,
          ValueRange{linearOffset(m, dest, op.getDestType().getShape())});
    };
    const SmallVector<Value> &held = regs.lookup(base);
    if (!full) {
      // Every lane holds the value: lane 0 stores it.
      auto ifLeader = scf::IfOp::create(b, loc, m.eq(lane, 0), false);
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(ifLeader.thenBlock());
      store(held[0], outer, plan.outerShape);
      return;
    }
    for (int64_t j = 0; j < plan.slots; ++j) {
      auto ifValid = scf::IfOp::create(b, loc, valid[j], false);
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(ifValid.thenBlock());
      store(held[j], points[j], plan.space);
    }
  }

  /// The loop body for token `t` with the states `carried` (slots of each
  /// state in iter_arg order); returns the next states.
  SmallVector<Value> token(Value t, ValueRange carried) {
    outside.map(loop.getInductionVar(), t);
    int64_t next = 0;
    for (auto [arg, state] :
         llvm::zip(loop.getRegionIterArgs(), plan.isState)) {
      if (!state)
        continue;
      regs[arg].assign(carried.begin() + next,
                       carried.begin() + next + plan.slots);
      next += plan.slots;
    }
    for (Operation &op : loop.getBody()->without_terminator()) {
      if (auto g = dyn_cast<linalg::GenericOp>(op))
        generic(g);
      else if (auto i = dyn_cast<tensor::InsertSliceOp>(op))
        insert(i);
      else if (op.hasTrait<OpTrait::ConstantLike>())
        outside.map(op.getResult(0), b.clone(op)->getResult(0));
    }
    SmallVector<Value> states;
    auto yield = cast<scf::YieldOp>(loop.getBody()->getTerminator());
    for (auto [v, state] : llvm::zip(yield.getOperands(), plan.isState))
      if (state)
        llvm::append_range(states, regs.lookup(v));
    return states;
  }
};

/// The scan loop (see the file comment): one kernel, one warp per point of
/// the state's space without the lanes' dimension.
struct ScanToGPU : OpRewritePattern<scf::ForOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(scf::ForOp loop,
                                PatternRewriter &rewriter) const override {
    if (failed(checkTopLevel(loop, rewriter)))
      return failure();
    ScanPlan plan;
    plan.loop = loop;
    std::string why = plan.analyze();
    if (!why.empty())
      return rewriter.notifyMatchFailure(loop, why);

    Location loc = loop.getLoc();
    auto module = loop->getParentOfType<ModuleOp>();
    SmallVector<Value> args, outputs;
    SmallVector<Type> argTypes;
    SmallVector<Value> results;
    // Outputs: every rows tensor, and each state the program reads after
    // the loop.
    for (auto [result, state] : llvm::zip(loop.getResults(), plan.isState)) {
      auto type = cast<RankedTensorType>(result.getType());
      if (state && result.use_empty()) {
        outputs.push_back(Value());
        results.push_back(tensor::EmptyOp::create(
            rewriter, loc, type.getShape(), type.getElementType()));
        continue;
      }
      Value buffer = allocDevice(
          rewriter, loc,
          MemRefType::get(type.getShape(), type.getElementType()), false);
      outputs.push_back(buffer);
      args.push_back(flatten(rewriter, loc, buffer));
      results.push_back(Value());
    }
    for (Value root : plan.roots) {
      auto type = cast<RankedTensorType>(root.getType());
      args.push_back(flatten(
          rewriter, loc,
          bufferization::ToBufferOp::create(
              rewriter, loc,
              MemRefType::get(type.getShape(), type.getElementType()), root,
              /*readOnly=*/true)));
    }
    llvm::append_range(args, plan.scalars);
    for (Value a : args)
      argTypes.push_back(a.getType());

    std::string text;
    llvm::raw_string_ostream os(text);
    OpPrintingFlags flags;
    flags.printGenericOpForm().useLocalScope().elideLargeElementsAttrs(16);
    loop->print(os, flags);
    for (Operation *constant : plan.constants)
      constant->print(os, flags);
    for (Value root : plan.roots)
      os << root.getType();
    std::string name = "nvfp4_scan_" + shapeName(plan.space) + "_t" +
                       std::to_string(plan.tokens) + "_" +
                       llvm::utohexstr(llvm::hash_value(text));
    int64_t outerCount = product(plan.outerShape);
    gpu::GPUFuncOp kernel = getOrCreateKernel(
        module, name, argTypes, kThreadsPerBlock,
        [&](OpBuilder &b, Location l, ValueRange kargs) {
          ScanEmitter e(plan, b, l);
          IndexMath &m = e.m;
          int64_t arg = 0;
          for (auto [result, output] : llvm::zip(loop.getResults(), outputs))
            if (output)
              e.outputs[result] = kargs[arg++];
          for (Value root : plan.roots)
            e.buffers[root] = kargs[arg++];
          for (Value s : plan.scalars)
            e.outside.map(s, kargs[arg++]);
          for (Operation *constant : plan.constants)
            b.clone(*constant, e.outside);

          Value tid = globalThreadIndex(b, l);
          Value warp = m.div(tid, kWarpSize);
          e.lane = m.rem(tid, kWarpSize);
          // Warp-uniform: the shuffles see every lane.
          auto ifWarp = scf::IfOp::create(b, l, m.lt(warp, outerCount), false);
          OpBuilder::InsertionGuard guard(b);
          b.setInsertionPointToStart(ifWarp.thenBlock());
          e.outer = delinearize(m, warp, plan.outerShape);
          int64_t extent = plan.space[plan.lanesDim];
          for (int64_t j = 0; j < plan.slots; ++j) {
            Value inner = m.add(e.lane, m.c(j * kWarpSize));
            e.valid.push_back(m.lt(inner, extent));
            // Past the dimension a lane computes at its last point (loads
            // in bounds) and neither stores nor reduces it.
            Value clamped = arith::MinUIOp::create(b, l, inner, m.c(extent - 1));
            SmallVector<Value> point(e.outer);
            point.insert(point.begin() + plan.lanesDim, clamped);
            e.points.push_back(point);
          }
          SmallVector<Value> initial;
          for (auto [init, state] : llvm::zip(loop.getInitArgs(), plan.isState))
            if (state)
              for (int64_t j = 0; j < plan.slots; ++j)
                initial.push_back(e.loadRoot(init, e.points[j]));
          auto tokens = scf::ForOp::create(b, l, m.c(0), m.c(plan.tokens),
                                           m.c(1), initial);
          {
            OpBuilder::InsertionGuard g(b);
            b.setInsertionPointToStart(tokens.getBody());
            scf::YieldOp::create(
                b, l,
                e.token(tokens.getInductionVar(), tokens.getRegionIterArgs()));
          }
          int64_t next = 0;
          for (auto [result, state] :
               llvm::zip(loop.getResults(), plan.isState)) {
            if (!state)
              continue;
            Value buffer = e.outputs.lookup(result);
            for (int64_t j = 0; j < plan.slots; ++j, ++next) {
              if (!buffer)
                continue;
              auto ifValid = scf::IfOp::create(b, l, e.valid[j], false);
              OpBuilder::InsertionGuard g(b);
              b.setInsertionPointToStart(ifValid.thenBlock());
              memref::StoreOp::create(
                  b, l, tokens.getResult(next), buffer,
                  ValueRange{linearOffset(m, e.points[j], plan.space)});
            }
          }
        });
    launchKernel(rewriter, loc, kernel, outerCount * kWarpSize,
                 kThreadsPerBlock, args);
    for (auto [result, output, value] :
         llvm::zip(loop.getResults(), outputs, results))
      if (output)
        value = bufferization::ToTensorOp::create(
            rewriter, loc, result.getType(), output, /*restrict=*/true,
            /*writable=*/true);
    rewriter.replaceOp(loop, results);
    return success();
  }
};

} // namespace

void mlir::nvfp4::warnAboutHostLoops(ModuleOp module) {
  for (auto function : module.getOps<func::FuncOp>())
    for (auto loop : function.getBody().getOps<scf::ForOp>()) {
      if (llvm::none_of(loop.getResultTypes(),
                        [](Type t) { return isa<RankedTensorType>(t); }))
        continue;
      ScanPlan plan;
      plan.loop = loop;
      std::string why = plan.analyze();
      loop.emitWarning() << "this loop stays on the host: it is not a scan "
                            "the GPU lowering takes ("
                         << (why.empty() ? "not converted" : why) << ")";
    }
}

void mlir::nvfp4::populateScanToGPUPatterns(RewritePatternSet &patterns) {
  patterns.add<SliceToGeneric, PadToGeneric, ScanToGPU>(patterns.getContext());
}
