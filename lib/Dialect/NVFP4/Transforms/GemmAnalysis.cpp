//===- GemmAnalysis.cpp - linalg contractions seen as GEMMs ---------------===//
//
// Part of the nvfp4 project.
//
//===----------------------------------------------------------------------===//

#include "nvfp4/Dialect/NVFP4/Transforms/GemmAnalysis.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/RegionKindInterface.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/Support/CheckedArithmetic.h"

#include <algorithm>
#include <limits>
#include <set>
#include <vector>

using namespace mlir;
using namespace mlir::nvfp4;

//===----------------------------------------------------------------------===//
// GEMM shape
//===----------------------------------------------------------------------===//

bool GemmShape::isStatic() const {
  return !ShapedType::isDynamic(batch) && !ShapedType::isDynamic(m) &&
         !ShapedType::isDynamic(n) && !ShapedType::isDynamic(k);
}

std::optional<int64_t> GemmShape::flops() const {
  if (!isStatic())
    return std::nullopt;
  std::optional<int64_t> product = 2;
  for (int64_t dim : {batch, m, n, k})
    if (product)
      product = llvm::checkedMul(*product, dim);
  return product;
}

/// Product of the static ranges of `loops`; kDynamic if one is dynamic.
/// Saturates at INT64_MAX: a shape that large is only ever rejected (by
/// checkRecipeApplicable's size check), never computed with.
static int64_t loopProduct(ArrayRef<int64_t> ranges, ArrayRef<unsigned> loops) {
  int64_t product = 1;
  for (unsigned loop : loops) {
    if (ShapedType::isDynamic(ranges[loop]))
      return ShapedType::kDynamic;
    std::optional<int64_t> next = llvm::checkedMul(product, ranges[loop]);
    product = next ? *next : std::numeric_limits<int64_t>::max();
  }
  return product;
}

FailureOr<GemmShape> mlir::nvfp4::matchGemm(Operation *op) {
  auto linalgOp = dyn_cast<linalg::LinalgOp>(op);
  if (!linalgOp || linalgOp.getNumDpsInputs() != 2 ||
      linalgOp.getNumDpsInits() != 1 ||
      !linalg::isaContractionOpInterface(linalgOp))
    return failure();
  for (Value operand : op->getOperands())
    if (!isa<FloatType>(getElementTypeOrSelf(operand.getType())))
      return failure();
  if (!llvm::all_of(linalgOp.getIndexingMapsArray(),
                    [](AffineMap map) { return map.isProjectedPermutation(); }))
    return failure();

  FailureOr<linalg::ContractionDimensions> dims =
      linalg::inferContractionDims(linalgOp);
  if (failed(dims) || dims->m.empty() || dims->n.empty() || dims->k.empty())
    return failure();
  // Every loop must belong to one of the groups (no stray reductions).
  if (dims->batch.size() + dims->m.size() + dims->n.size() + dims->k.size() !=
      linalgOp.getNumLoops())
    return failure();

  GemmShape shape;
  shape.dims = *dims;
  SmallVector<int64_t> ranges = linalgOp.getStaticLoopRanges();
  shape.batch = loopProduct(ranges, dims->batch);
  shape.m = loopProduct(ranges, dims->m);
  shape.n = loopProduct(ranges, dims->n);
  shape.k = loopProduct(ranges, dims->k);
  return shape;
}

//===----------------------------------------------------------------------===//
// Tracing operands to their sources
//===----------------------------------------------------------------------===//

/// An elementwise linalg.generic copy: one input, one output, all loops
/// parallel, a permutation input map, an identity output map and a body
/// that yields the input (possibly through a floating-point extension or
/// truncation). Returns the input map on success.
static std::optional<AffineMap> matchCopyGeneric(linalg::GenericOp generic,
                                                 bool allowTruncation) {
  if (generic.getNumDpsInputs() != 1 || generic.getNumDpsInits() != 1 ||
      generic.getNumReductionLoops() != 0)
    return std::nullopt;
  SmallVector<AffineMap> maps = generic.getIndexingMapsArray();
  if (!maps[0].isPermutation() || !maps[1].isIdentity())
    return std::nullopt;
  Block &body = generic.getRegion().front();
  auto yield = cast<linalg::YieldOp>(body.getTerminator());
  Value yielded = yield.getValues()[0];
  if (Operation *def = yielded.getDefiningOp()) {
    if (!isa<arith::ExtFOp>(def) &&
        !(allowTruncation && isa<arith::TruncFOp>(def)))
      return std::nullopt;
    yielded = def->getOperand(0);
  }
  if (yielded != body.getArgument(0))
    return std::nullopt;
  return maps[0];
}

/// Whether `op` is in a region with SSA dominance. A graph region (the body
/// of builtin.module, for one) may hold use-def cycles
/// (`%t = linalg.transpose ins(%u)`, `%u = linalg.transpose ins(%t)`), so
/// walks back through producers stop at its ops instead of looping.
static bool inProgramOrder(Operation *op) {
  return mayHaveSSADominance(*op->getParentRegion());
}

/// One step back through an op that only moves (or exactly converts)
/// elements. `allowTruncation` also steps through rounding casts.
static Value stepBack(Value value, bool allowTruncation) {
  Operation *def = value.getDefiningOp();
  if (!def || !inProgramOrder(def))
    return nullptr;
  if (auto transpose = dyn_cast<linalg::TransposeOp>(def))
    return transpose.getInput();
  if (auto broadcast = dyn_cast<linalg::BroadcastOp>(def))
    return broadcast.getInput();
  if (auto copy = dyn_cast<linalg::CopyOp>(def))
    return copy.getInputs()[0];
  if (isa<tensor::CastOp, tensor::ExpandShapeOp, tensor::CollapseShapeOp>(def))
    return def->getOperand(0);
  if (isa<arith::ExtFOp>(def) || (allowTruncation && isa<arith::TruncFOp>(def)))
    return def->getOperand(0);
  if (auto generic = dyn_cast<linalg::GenericOp>(def))
    if (matchCopyGeneric(generic, allowTruncation))
      return generic.getInputs()[0];
  return nullptr;
}

Value mlir::nvfp4::getElementMoveSource(Value value, bool throughRounding) {
  return stepBack(value, throughRounding);
}

Value mlir::nvfp4::stripElementMoves(Value value, bool throughRounding) {
  while (Value previous = stepBack(value, throughRounding))
    value = previous;
  return value;
}

BlockArgument mlir::nvfp4::getWeightArgument(Value value) {
  auto arg = dyn_cast<BlockArgument>(stripElementMoves(value));
  if (!arg)
    return nullptr;
  auto function = dyn_cast<FunctionOpInterface>(arg.getOwner()->getParentOp());
  if (!function || arg.getOwner() != &function.getFunctionBody().front())
    return nullptr;
  if (!function.getArgAttr(arg.getArgNumber(), ModelAnnotation::kWeight))
    return nullptr;
  return arg;
}

/// The dimension of the source of `value` (as stripElementMoves finds it)
/// that dimension `dim` of `value` comes from, through permutations only.
static std::optional<unsigned> traceDimension(Value value, unsigned dim) {
  while (Operation *def = value.getDefiningOp()) {
    if (!inProgramOrder(def))
      break;
    if (auto transpose = dyn_cast<linalg::TransposeOp>(def)) {
      dim = transpose.getPermutation()[dim];
      value = transpose.getInput();
      continue;
    }
    if (isa<linalg::CopyOp, tensor::CastOp, arith::ExtFOp, arith::TruncFOp>(
            def)) {
      value = def->getOperand(0);
      continue;
    }
    if (auto generic = dyn_cast<linalg::GenericOp>(def)) {
      if (std::optional<AffineMap> map =
              matchCopyGeneric(generic, /*allowTruncation=*/true)) {
        // Output dim `dim` is loop `dim`; find the input dim reading it.
        std::optional<unsigned> inputDim =
            map->getResultPosition(getAffineDimExpr(dim, def->getContext()));
        if (!inputDim)
          return std::nullopt;
        dim = *inputDim;
        value = generic.getInputs()[0];
        continue;
      }
    }
    // Reshapes and broadcasts do not map dimensions one to one.
    if (stepBack(value, /*allowTruncation=*/true))
      return std::nullopt;
    break;
  }
  return dim;
}

//===----------------------------------------------------------------------===//
// GemmInfo
//===----------------------------------------------------------------------===//

bool GemmInfo::isAttentionBMM() const {
  if (weightOperand >= 0 || role == GemmRole::Wgrad)
    return false;
  if (kind == "attention")
    return true;
  return kind.empty() && !shape.dims.batch.empty();
}

//===----------------------------------------------------------------------===//
// GemmAnalysis
//===----------------------------------------------------------------------===//

GemmAnalysis::GemmAnalysis(Operation *root) {
  root->walk([&](linalg::LinalgOp op) {
    FailureOr<GemmShape> shape = matchGemm(op);
    if (failed(shape))
      return;
    GemmInfo info;
    info.op = op;
    info.shape = *shape;
    if (auto layer = op->getAttrOfType<IntegerAttr>(ModelAnnotation::kLayer))
      info.layer = layer.getInt();
    if (auto kind = op->getAttrOfType<StringAttr>(ModelAnnotation::kKind))
      info.kind = kind.getValue().str();
    if (auto precision =
            op->getAttrOfType<StringAttr>(ModelAnnotation::kPrecision))
      info.precision = symbolizePrecision(precision.getValue());
    index[op] = gemms.size();
    gemms.push_back(std::move(info));
  });

  // Roles are resolved per function: data flow does not cross functions.
  llvm::MapVector<Operation *, SmallVector<unsigned>> byFunction;
  for (auto [i, info] : llvm::enumerate(gemms))
    byFunction[info.op->getParentOfType<FunctionOpInterface>()].push_back(i);
  for (auto &entry : byFunction) {
    SmallVector<GemmInfo> group;
    for (unsigned i : entry.second)
      group.push_back(std::move(gemms[i]));
    resolveRoles(group);
    for (auto [i, info] : llvm::zip(entry.second, group))
      gemms[i] = std::move(info);
  }
}

const GemmInfo *GemmAnalysis::lookup(Operation *op) const {
  auto it = index.find(op);
  return it == index.end() ? nullptr : &gemms[it->second];
}

void mlir::nvfp4::collectTransitiveUsers(Value value,
                                         SetVector<Operation *> &slice) {
  SmallVector<Value> worklist = {value};
  while (!worklist.empty()) {
    Value current = worklist.pop_back_val();
    for (Operation *user : current.getUsers()) {
      // A use inside a region makes the enclosing ops depend on it too.
      for (Operation *op = user; op && !isa<FunctionOpInterface>(op);
           op = op->getParentOp()) {
        if (!slice.insert(op))
          break;
        llvm::append_range(worklist, op->getResults());
      }
    }
  }
}

/// Appends to `worklist` the operands of `def` and the values its regions
/// capture from above: what `def` depends on.
static void appendDependencies(Operation *def,
                               SmallVectorImpl<Value> &worklist) {
  llvm::append_range(worklist, def->getOperands());
  // Values the op's regions capture from above.
  if (def->getNumRegions() == 0)
    return;
  def->walk([&](Operation *nested) {
    if (nested == def)
      return;
    for (Value operand : nested->getOperands()) {
      Operation *owner = operand.getParentRegion()
                             ? operand.getParentRegion()->getParentOp()
                             : nullptr;
      bool definedInside =
          owner && (owner == def || def->isProperAncestor(owner));
      if (!definedInside)
        worklist.push_back(operand);
    }
  });
}

void mlir::nvfp4::collectTransitiveProducers(Value value,
                                             SetVector<Operation *> &slice) {
  SmallVector<Value> worklist = {value};
  while (!worklist.empty()) {
    Operation *def = worklist.pop_back_val().getDefiningOp();
    if (!def || !slice.insert(def))
      continue;
    appendDependencies(def, worklist);
  }
}

//===----------------------------------------------------------------------===//
// DataFlowIndex
//===----------------------------------------------------------------------===//

DataFlowIndex::DataFlowIndex(FunctionOpInterface functionOp)
    : function(functionOp.getOperation()) {
  int64_t next = 0;
  function->walk<WalkOrder::PreOrder>([&](Operation *op) {
    if (op != function)
      spans[op] = Span{next, next};
    ++next;
  });
  // end(): the largest number in the op's subtree.
  function->walk<WalkOrder::PostOrder>([&](Operation *op) {
    if (op == function)
      return;
    Operation *parent = op->getParentOp();
    if (parent == function)
      return;
    Span &parentSpan = spans.find(parent)->second;
    parentSpan.end = std::max(parentSpan.end, spans.find(op)->second.end);
  });
  // Every use of a result after its definition's subtree. Functions are
  // isolated from above, so every operand is defined in `function`.
  ordered = function->hasTrait<OpTrait::IsIsolatedFromAbove>();
  if (!ordered)
    return;
  function->walk([&](Operation *user) {
    if (user == function)
      return WalkResult::advance();
    int64_t pre = spans.find(user)->second.pre;
    for (Value operand : user->getOperands()) {
      Operation *def = operand.getDefiningOp();
      if (!def)
        continue;
      auto it = spans.find(def);
      if (it == spans.end() || it->second.end >= pre) {
        ordered = false;
        return WalkResult::interrupt();
      }
    }
    return WalkResult::advance();
  });
}

int64_t DataFlowIndex::endOf(Operation *op) const {
  auto it = spans.find(op);
  return it == spans.end() ? std::numeric_limits<int64_t>::max()
                           : it->second.end;
}

int64_t DataFlowIndex::usersAbove(Value from) const {
  if (!ordered)
    return std::numeric_limits<int64_t>::min();
  // A result is used after its op's subtree; a block argument inside the
  // op that owns the block.
  if (Operation *def = from.getDefiningOp()) {
    auto it = spans.find(def);
    return it == spans.end() ? std::numeric_limits<int64_t>::min()
                             : it->second.end;
  }
  Operation *owner = cast<BlockArgument>(from).getOwner()->getParentOp();
  auto it = spans.find(owner);
  return it == spans.end() ? std::numeric_limits<int64_t>::min()
                           : it->second.pre;
}

/// Walks the transitive users of `values` as collectTransitiveUsers does,
/// skipping ops whose end() is above `limit` (with their enclosing ops,
/// whose end() is larger still). Stops and returns true as soon as `stop`
/// holds for a visited op.
template <typename EndOf, typename Stop>
static bool walkUsers(SmallVector<Value> worklist, EndOf endOf, int64_t limit,
                      Stop stop) {
  llvm::DenseSet<Operation *> visited;
  while (!worklist.empty()) {
    Value current = worklist.pop_back_val();
    for (Operation *user : current.getUsers()) {
      for (Operation *op = user; op && !isa<FunctionOpInterface>(op);
           op = op->getParentOp()) {
        if (endOf(op) > limit || !visited.insert(op).second)
          break;
        if (stop(op))
          return true;
        llvm::append_range(worklist, op->getResults());
      }
    }
  }
  return false;
}

bool DataFlowIndex::anyOnPath(
    Value from, Value to,
    llvm::function_ref<bool(Operation *)> predicate) const {
  Operation *toDef = to.getDefiningOp();
  if (!toDef)
    return false;
  int64_t low = usersAbove(from);
  int64_t high = ordered ? endOf(toDef) : std::numeric_limits<int64_t>::max();
  auto endOrZero = [&](Operation *op) {
    return ordered ? endOf(op) : int64_t(0);
  };

  // Producers of `to` that can be users of `from`: a producer of an op
  // that cannot be a user cannot be one either, so the search stops there.
  llvm::DenseSet<Operation *> upstream;
  llvm::SmallPtrSet<Operation *, 16> candidates;
  SmallVector<Value> worklist = {to};
  while (!worklist.empty()) {
    Operation *def = worklist.pop_back_val().getDefiningOp();
    if (!def || (ordered && endOf(def) <= low) || !upstream.insert(def).second)
      continue;
    if (predicate(def))
      candidates.insert(def);
    appendDependencies(def, worklist);
  }
  if (candidates.empty())
    return false;

  // Users of `from`, up to the last op that can be a producer of `to`.
  return walkUsers({from}, endOrZero, high,
                   [&](Operation *op) { return candidates.contains(op); });
}

bool DataFlowIndex::reaches(Operation *from, Operation *to) const {
  int64_t high = ordered ? endOf(to) : std::numeric_limits<int64_t>::max();
  auto endOrZero = [&](Operation *op) {
    return ordered ? endOf(op) : int64_t(0);
  };
  return walkUsers(SmallVector<Value>(from->getResults()), endOrZero, high,
                   [&](Operation *op) { return op == to; });
}

/// Whether a result of `from` is used, transitively, by `to`.
static bool reaches(Operation *from, Operation *to) {
  SetVector<Operation *> slice;
  for (Value result : from->getResults())
    collectTransitiveUsers(result, slice);
  return slice.contains(to);
}

/// The dimension of `weight` that `gemm` contracts, when the operand is a
/// permuted view of it with a single K loop.
static std::optional<unsigned> contractedWeightDim(const GemmInfo &gemm,
                                                   int operand) {
  if (gemm.shape.dims.k.size() != 1)
    return std::nullopt;
  linalg::LinalgOp op = gemm.op;
  OpOperand *opOperand = op.getDpsInputOperand(operand);
  AffineMap map = op.getMatchingIndexingMap(opOperand);
  std::optional<unsigned> dim = map.getResultPosition(
      getAffineDimExpr(gemm.shape.dims.k[0], map.getContext()));
  if (!dim)
    return std::nullopt;
  return traceDimension(opOperand->get(), *dim);
}

void GemmAnalysis::resolveRoles(MutableArrayRef<GemmInfo> group) {
  // Weight operands.
  SmallVector<BlockArgument> weightOf(group.size());
  for (auto [info, weight] : llvm::zip(group, weightOf)) {
    for (int operand = 1; operand >= 0; --operand) {
      if (BlockArgument arg =
              getWeightArgument(info.op.getDpsInputs()[operand])) {
        weight = arg;
        info.weightOperand = operand;
        break;
      }
    }
  }

  // Annotated roles.
  SmallVector<bool> resolved(group.size(), false);
  for (auto [info, done] : llvm::zip(group, resolved)) {
    auto role = info.op->getAttrOfType<StringAttr>(ModelAnnotation::kRole);
    if (!role)
      continue;
    if (std::optional<GemmRole> value = symbolizeGemmRole(role.getValue())) {
      info.role = *value;
      info.roleSource = RoleSource::Annotated;
      // wgrad reads no weight (dW = dY^T X); a weight-like operand there
      // is a coincidence of tracing, not a weight to quantize in 16x16.
      if (info.role == GemmRole::Wgrad)
        info.weightOperand = -1;
      done = true;
    }
  }

  // The GEMMs that read each weight, in order.
  llvm::DenseMap<Value, SmallVector<unsigned, 2>> gemmsOfWeight;
  for (auto [j, weight] : llvm::enumerate(weightOf))
    if (weight)
      gemmsOfWeight[weight].push_back(j);
  // Data-flow queries between the GEMMs of one function; built on the
  // first weight with several uses.
  Operation *groupFunction =
      group.empty() ? nullptr
                    : group.front().op->getParentOfType<FunctionOpInterface>();
  std::optional<DataFlowIndex> dataFlow;
  auto flowsTo = [&](Operation *from, Operation *to) {
    if (!groupFunction)
      return reaches(from, to);
    if (!dataFlow)
      dataFlow.emplace(cast<FunctionOpInterface>(groupFunction));
    return dataFlow->reaches(from, to);
  };

  // GEMMs with a weight operand: fprop or dgrad.
  for (auto [i, info] : llvm::enumerate(group)) {
    if (resolved[i] || !weightOf[i])
      continue;
    resolved[i] = true;
    info.roleSource = RoleSource::Inferred;
    SmallVector<unsigned> uses;
    for (unsigned j : gemmsOfWeight.find(weightOf[i])->second)
      if (j != i)
        uses.push_back(j);
    if (uses.empty()) {
      info.role = GemmRole::Fprop;
      continue;
    }
    // A copy of the op for the lambdas: C++17 (and clang 14, which builds
    // the fuzzer) cannot capture a structured binding.
    auto op = info.op;
    if (llvm::any_of(
            uses, [&](unsigned j) { return flowsTo(op, group[j].op); })) {
      info.role = GemmRole::Fprop;
      continue;
    }
    if (llvm::any_of(
            uses, [&](unsigned j) { return flowsTo(group[j].op, op); })) {
      info.role = GemmRole::Dgrad;
      continue;
    }
    // No data flow between the uses: decide by the contracted dimension.
    int64_t rank = cast<ShapedType>(weightOf[i].getType()).getRank();
    std::optional<unsigned> dim = contractedWeightDim(info, info.weightOperand);
    bool allSame =
        dim && llvm::all_of(uses, [&](unsigned j) {
          return contractedWeightDim(group[j], group[j].weightOperand) == dim;
        });
    if (allSame) {
      info.role = GemmRole::Fprop;
    } else if (dim && rank >= 2 && *dim == rank - 1) {
      info.role = GemmRole::Fprop;
    } else if (dim && rank >= 2 && *dim == 0) {
      info.role = GemmRole::Dgrad;
    } else {
      info.role = GemmRole::Fprop;
      info.roleSource = RoleSource::Assumed;
      info.roleNote = "the weight is used by several GEMMs and its contracted "
                      "dimension does not tell fprop from dgrad";
    }
  }

  // GEMMs without a weight operand: wgrad when the result has the shape of
  // a weight argument, otherwise an activation GEMM assumed to be fprop.
  // The shapes of each function's weight arguments (dW), and of their
  // transposes (dW^T as X^T dY computes it), collected once per function.
  llvm::DenseMap<Operation *, std::set<std::vector<int64_t>>> weightShapes;
  auto weightShapesOf = [&](FunctionOpInterface function)
      -> const std::set<std::vector<int64_t>> & {
    auto [it, inserted] = weightShapes.try_emplace(function.getOperation());
    if (!inserted)
      return it->second;
    for (unsigned arg = 0, e = function.getNumArguments(); arg < e; ++arg) {
      auto argType =
          dyn_cast<RankedTensorType>(function.getArgument(arg).getType());
      if (!argType || !function.getArgAttr(arg, ModelAnnotation::kWeight))
        continue;
      std::vector<int64_t> shape(argType.getShape().begin(),
                                 argType.getShape().end());
      it->second.insert(shape);
      if (shape.size() >= 2)
        std::swap(shape[shape.size() - 2], shape.back());
      it->second.insert(shape);
    }
    return it->second;
  };
  for (auto [i, info] : llvm::enumerate(group)) {
    if (resolved[i])
      continue;
    resolved[i] = true;
    auto function = info.op->getParentOfType<FunctionOpInterface>();
    auto resultType =
        dyn_cast<RankedTensorType>(info.op.getDpsInits()[0].getType());
    bool matchesWeight = false;
    if (function && resultType && resultType.hasStaticShape())
      matchesWeight = weightShapesOf(function).count(std::vector<int64_t>(
          resultType.getShape().begin(), resultType.getShape().end()));
    if (matchesWeight) {
      info.role = GemmRole::Wgrad;
      info.roleSource = RoleSource::Inferred;
    } else {
      info.role = GemmRole::Fprop;
      info.roleSource = RoleSource::Assumed;
      info.roleNote = "no nvfp4.role and no {nvfp4.weight} operand";
    }
  }

  // Gradient operands.
  for (GemmInfo &info : group) {
    if (info.role == GemmRole::Dgrad)
      info.gradientOperand =
          info.weightOperand >= 0 ? 1 - info.weightOperand : 0;
  }
  auto sourceOf = [](const GemmInfo &gemm, int operand) {
    return stripElementMoves(gemm.op->getOperand(operand));
  };
  // Sources of the dgrads' dY and of the fprops' activations, collected once
  // (the wgrads below look them up).
  llvm::DenseSet<Value> dgradGradients, fpropActivations;
  bool anyWgrad = llvm::any_of(
      group, [](const GemmInfo &info) { return info.role == GemmRole::Wgrad; });
  if (anyWgrad) {
    for (const GemmInfo &other : group) {
      if (other.role == GemmRole::Dgrad && other.gradientOperand >= 0)
        dgradGradients.insert(sourceOf(other, other.gradientOperand));
      if (other.role == GemmRole::Fprop && other.weightOperand >= 0)
        fpropActivations.insert(sourceOf(other, 1 - other.weightOperand));
    }
  }
  for (GemmInfo &info : group) {
    if (info.role != GemmRole::Wgrad)
      continue;
    int gradient = -1;
    for (int operand = 0; operand < 2 && gradient < 0; ++operand)
      if (dgradGradients.contains(sourceOf(info, operand)))
        gradient = operand;
    for (int operand = 0; operand < 2 && gradient < 0; ++operand)
      if (fpropActivations.contains(sourceOf(info, operand)))
        gradient = 1 - operand;
    // dW = dY^T X: the gradient is operand A.
    info.gradientOperand = gradient >= 0 ? gradient : 0;
  }
}
