//===- RowKernels.cpp - row-fused reductions, vectorized elementwise -------===//
//
// Part of the nvfp4 project.
//
// Two kernel builders for the linalg ops of a model (LinalgKernels.cpp has
// the one-op-one-kernel forms they replace where they apply):
//
//   * Row groups. Reductions over the last loop and the elementwise op that
//     reads their results broadcast along the same rows -- softmax's max,
//     sum of exp(x - max) and normalization, RMSNorm's sum of squares and
//     scaling -- become ONE kernel: W threads own a row (a warp for short
//     rows, a CTA of up to 1024 threads for long ones), read it once in
//     vectors of 16 bytes, keep the vectors in registers between the phases
//     when they fit (else each phase reads the row again, from L2), reduce
//     each phase by xor shuffles within warps and the warps' partials
//     through shared memory, and store the result once, in vectors.
//   * Vectorized elementwise ops: where the last loop's range is a multiple
//     of the vector width, a thread computes V consecutive points along it,
//     reading every operand that is contiguous along the last loop with one
//     vector load and storing the results with one vector store each.
//
// Reduction order (docs/Runtime.md, "Whole models"): a thread combines its
// own elements in increasing order along the row (chunk by chunk, V
// elements a chunk, its chunks W chunks apart), the 32 lanes of a warp by an
// xor butterfly, the warps of a row in increasing order, and then the init
// (combiner(init, partial), as the one-op kernel). Every thread of the row
// ends with the same value: the float combiners are commutative, so both
// lanes of a butterfly pair compute the same sum, and the warps' partials
// are combined in one fixed order by all.
//
//===----------------------------------------------------------------------===//

#include "KernelBuilder.h"
#include "KernelUtils.h"
#include "LinalgKernels.h"
#include "nvfp4/Conversion/NVFP4ToGPU/NVFP4ToGPU.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/Matchers.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/Support/MathExtras.h"

using namespace mlir;
using namespace mlir::nvfp4;
using namespace mlir::nvfp4::kernels;

namespace {

constexpr int64_t kWarpSize = 32;
/// Bytes of a vector access.
constexpr int64_t kVectorBytes = 16;
/// Register budget of a thread for the row's vectors kept between the
/// phases (8 vectors of 16 bytes: 32 registers).
constexpr int64_t kRowCacheBytes = 128;
/// Chunks a thread of a row kernel aims at (4 loads of 16 bytes in flight).
constexpr int64_t kChunksPerThread = 4;
constexpr int64_t kMaxThreadsPerRow = 1024;

/// How an operand of an op is read along the op's last loop.
enum class Access {
  /// The indexing map does not use the last loop: one value a row.
  Broadcast,
  /// The last result is the last loop and no other result uses it:
  /// consecutive points read consecutive elements (vector loads).
  Contiguous,
  /// Anything else: an element load per point.
  Gather,
};

Access accessOf(AffineMap map) {
  unsigned last = map.getNumDims() - 1;
  if (!map.isFunctionOfDim(last))
    return Access::Broadcast;
  ArrayRef<AffineExpr> results = map.getResults();
  auto dim = dyn_cast<AffineDimExpr>(results.back());
  if (!dim || dim.getPosition() != last)
    return Access::Gather;
  for (AffineExpr e : results.drop_back())
    if (e.isFunctionOfDim(last))
      return Access::Gather;
  return Access::Contiguous;
}

/// Bytes of an element of `type` that vector accesses can move, or 0.
int64_t vectorElementBytes(Type type) {
  if (!type.isIntOrFloat() || type.getIntOrFloatBitWidth() % 8 != 0)
    return 0;
  return type.getIntOrFloatBitWidth() / 8;
}

/// The kernel argument (in emitBody's layout from `firstInput`) that holds
/// `operand`, an input or an init the op reads.
Value argumentOf(const LinalgKernelPlan &plan, ValueRange args,
                 int64_t firstInput, OpOperand &operand) {
  linalg::LinalgOp op = plan.op;
  int64_t inputs = op.getNumDpsInputs();
  if (op.isDpsInput(&operand))
    return args[firstInput + operand.getOperandNumber()];
  int64_t slot = firstInput + inputs;
  for (auto [i, init] : llvm::enumerate(op.getDpsInitsMutable())) {
    if (&init == &operand)
      return plan.initRead[i] ? args[slot] : Value();
    slot += plan.initRead[i];
  }
  return Value();
}

/// The vectors and row values a chunk's points read, shared by the ops of a
/// kernel: a contiguous operand is loaded once per (buffer, map, chunk).
struct ChunkCache {
  /// Keyed by the chunk's number among the thread's unrolled chunks.
  llvm::DenseMap<std::tuple<Value, AffineMap, int64_t>, Value> vectors;
  /// Broadcast operands, loaded once per row (or chunk) before the loops.
  llvm::DenseMap<std::pair<Value, AffineMap>, Value> scalars;
};

/// The loop indices of point `j` of the row `outer`.
SmallVector<Value> loopsAt(ArrayRef<Value> outer, Value j) {
  SmallVector<Value> loops(outer);
  loops.push_back(j);
  return loops;
}

/// Offset of the element `map` reads at `loops` in a buffer of `type`.
Value offsetOf(IndexMath &m, AffineMap map, RankedTensorType type,
               ArrayRef<Value> loops) {
  SmallVector<Value> indices;
  for (AffineExpr e : map.getResults())
    indices.push_back(evaluateAffine(m, e, loops));
  return linearOffset(m, indices, type.getShape());
}

/// Loads, before the chunk loops, every broadcast tensor operand of `plan`
/// that is not in `given` (one value a row).
void loadBroadcasts(OpBuilder &b, Location loc, const LinalgKernelPlan &plan,
                    ValueRange args, int64_t firstInput,
                    ArrayRef<Value> outer, ChunkCache &cache,
                    GivenOperandFn given) {
  IndexMath m{b, loc};
  linalg::LinalgOp op = plan.op;
  SmallVector<Value> loops = loopsAt(outer, m.c(0));
  for (OpOperand &operand : op->getOpOperands()) {
    auto type = dyn_cast<RankedTensorType>(operand.get().getType());
    if (!type || (given && given(operand)) ||
        (plan.reductionLoop >= 0 && !op.isDpsInput(&operand)))
      continue;
    Value buffer = argumentOf(plan, args, firstInput, operand);
    AffineMap map = op.getMatchingIndexingMap(&operand);
    if (!buffer || accessOf(map) != Access::Broadcast ||
        cache.scalars.count({buffer, map}))
      continue;
    cache.scalars[{buffer, map}] = memref::LoadOp::create(
        b, loc, buffer, ValueRange{offsetOf(m, map, type, loops)});
  }
}

/// Runs `plan.op`'s body at the `width` points (outer..., j0 + e) of a
/// chunk (`chunkKey` among those of the thread whose vectors `cache`
/// keeps). Contiguous operands are one vector load each (through `cache`),
/// broadcast ones come from the cache (loadBroadcasts), `given` supplies
/// the row values of a group's reductions, emitBody loads the rest. A
/// reduction chains `acc` through the points (in increasing order) and
/// returns it; otherwise the yielded values of each point.
SmallVector<SmallVector<Value>>
emitChunk(OpBuilder &b, Location loc, const LinalgKernelPlan &plan,
          ValueRange args, int64_t firstInput, ArrayRef<Value> outer,
          Value j0, int64_t chunkKey, int64_t width, ChunkCache &cache,
          GivenOperandFn given, Value *acc) {
  IndexMath m{b, loc};
  linalg::LinalgOp op = plan.op;
  SmallVector<Value> loops0 = loopsAt(outer, j0);
  // The vectors this chunk reads, per operand.
  llvm::DenseMap<OpOperand *, Value> vectors;
  for (OpOperand &operand : op->getOpOperands()) {
    auto type = dyn_cast<RankedTensorType>(operand.get().getType());
    if (!type || (given && given(operand)))
      continue;
    if (!op.isDpsInput(&operand) && acc)
      continue; // a reduction's init: combined once, by the caller
    Value buffer = argumentOf(plan, args, firstInput, operand);
    AffineMap map = op.getMatchingIndexingMap(&operand);
    if (width == 1 || !buffer || accessOf(map) != Access::Contiguous)
      continue;
    Value &vector = cache.vectors[{buffer, map, chunkKey}];
    if (!vector) {
      int64_t bytes = vectorElementBytes(type.getElementType());
      vector = vector::LoadOp::create(
          b, loc, VectorType::get({width}, type.getElementType()), buffer,
          ValueRange{offsetOf(m, map, type, loops0)}, /*nontemporal=*/false,
          llvm::Align(width * bytes));
    }
    vectors[&operand] = vector;
  }

  // What every point of the chunk reads alike: the broadcast operands and
  // the row values `given` supplies (emitBody divides by them through one
  // reciprocal).
  llvm::DenseSet<Value> rowValues;
  for (auto &entry : cache.scalars)
    rowValues.insert(entry.second);
  if (given)
    for (OpOperand &operand : op->getOpOperands())
      if (Value v = given(operand))
        rowValues.insert(v);

  // The points in increasing order; with `checks`, divisions by row values
  // take the reciprocal path and leave their range checks there.
  Value acc0 = acc ? *acc : Value();
  auto emitPoints = [&](SmallVectorImpl<Value> *checks) {
    SmallVector<SmallVector<Value>> points;
    Value running = acc0;
    for (int64_t e = 0; e < width; ++e) {
      auto operandValue = [&](OpOperand &operand) -> Value {
        if (given)
          if (Value v = given(operand))
            return v;
        if (Value vector = vectors.lookup(&operand))
          return vector::ExtractOp::create(b, loc, vector, e);
        if (!isa<RankedTensorType>(operand.get().getType()))
          return Value();
        Value buffer = argumentOf(plan, args, firstInput, operand);
        if (!buffer)
          return Value();
        return cache.scalars.lookup(
            {buffer, op.getMatchingIndexingMap(&operand)});
      };
      Value j = e == 0 ? j0 : m.add(j0, m.c(e));
      SmallVector<Value> yielded =
          emitBody(b, loc, plan, args, loopsAt(outer, j), running, firstInput,
                   operandValue, &rowValues, checks);
      if (acc)
        running = yielded[0];
      else
        points.push_back(std::move(yielded));
    }
    if (acc)
      points.push_back({running});
    return points;
  };
  auto flat = [](ArrayRef<SmallVector<Value>> points) {
    SmallVector<Value> values;
    for (const SmallVector<Value> &point : points)
      llvm::append_range(values, point);
    return values;
  };

  SmallVector<Value> checks;
  SmallVector<SmallVector<Value>> points = emitPoints(&checks);
  if (!checks.empty()) {
    // One branch a chunk, not a point: if some point's division lies
    // outside the reciprocal path's ranges (rare: an infinite, NaN or tiny
    // dividend, a divisor outside [2^-50, 2^50]), the chunk is computed
    // again with IEEE divisions.
    Value allOk = checks.front();
    for (Value check : ArrayRef(checks).drop_front())
      allOk = arith::AndIOp::create(b, loc, allOk, check);
    SmallVector<Value> fast = flat(points);
    auto ifOk = scf::IfOp::create(b, loc, ValueRange(fast).getTypes(), allOk,
                                  /*withElseRegion=*/true);
    {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(ifOk.thenBlock());
      scf::YieldOp::create(b, loc, fast);
      b.setInsertionPointToStart(ifOk.elseBlock());
      scf::YieldOp::create(b, loc, flat(emitPoints(nullptr)));
    }
    ValueRange results = ifOk.getResults();
    for (SmallVector<Value> &point : points)
      for (Value &v : point) {
        v = results.front();
        results = results.drop_front();
      }
  }
  if (acc) {
    *acc = points.front().front();
    return {};
  }
  return points;
}

/// Stores the yielded values of a chunk's `points` into the op's output
/// buffers (`outputs`, one per result): one vector store per result whose
/// map is contiguous, element stores otherwise.
void storeChunk(OpBuilder &b, Location loc, const LinalgKernelPlan &plan,
                ValueRange outputs, ArrayRef<Value> outer, Value j0,
                ArrayRef<SmallVector<Value>> points) {
  IndexMath m{b, loc};
  linalg::LinalgOp op = plan.op;
  int64_t width = points.size();
  for (auto [i, init] : llvm::enumerate(op.getDpsInitsMutable())) {
    auto type = cast<RankedTensorType>(init.get().getType());
    AffineMap map = op.getMatchingIndexingMap(&init);
    if (width > 1 && accessOf(map) == Access::Contiguous) {
      SmallVector<Value> values;
      for (const SmallVector<Value> &point : points)
        values.push_back(point[i]);
      Value vector = vector::FromElementsOp::create(
          b, loc, VectorType::get({width}, type.getElementType()), values);
      vector::StoreOp::create(
          b, loc, vector, outputs[i],
          ValueRange{offsetOf(m, map, type, loopsAt(outer, j0))},
          /*nontemporal=*/false,
          llvm::Align(width * vectorElementBytes(type.getElementType())));
      continue;
    }
    for (int64_t e = 0; e < width; ++e) {
      Value j = e == 0 ? j0 : m.add(j0, m.c(e));
      memref::StoreOp::create(
          b, loc, points[e][i], outputs[i],
          ValueRange{offsetOf(m, map, type, loopsAt(outer, j))});
    }
  }
}

/// The widest vector (elements, a power of two) that every contiguous
/// tensor operand of `plans` moves in at most 16 bytes and that divides the
/// last loop's range `length`; 1 when some such operand's elements are not
/// whole bytes.
int64_t vectorWidthOf(ArrayRef<const LinalgKernelPlan *> plans,
                      int64_t length) {
  int64_t widest = 1;
  for (const LinalgKernelPlan *plan : plans) {
    linalg::LinalgOp op = plan->op;
    for (OpOperand &operand : op->getOpOperands()) {
      auto type = dyn_cast<RankedTensorType>(operand.get().getType());
      if (!type ||
          accessOf(op.getMatchingIndexingMap(&operand)) != Access::Contiguous)
        continue;
      int64_t bytes = vectorElementBytes(type.getElementType());
      if (bytes == 0)
        return 1;
      widest = std::max(widest, bytes);
    }
  }
  int64_t width = std::max<int64_t>(1, kVectorBytes / widest);
  while (width > 1 && length % width != 0)
    width /= 2;
  return width;
}

//===----------------------------------------------------------------------===//
// Row groups
//===----------------------------------------------------------------------===//

/// Whether `map` reads a row value: (d0, ..., d(n-2)) of n loops.
bool isRowBroadcast(AffineMap map) {
  unsigned rank = map.getNumDims();
  if (map.getNumResults() + 1 != rank || map.getNumSymbols() != 0)
    return false;
  for (auto [i, e] : llvm::enumerate(map.getResults())) {
    auto dim = dyn_cast<AffineDimExpr>(e);
    if (!dim || dim.getPosition() != i)
      return false;
  }
  return true;
}

/// Whether `plan` (analyzed) reduces over its last loop into a result
/// indexed by the other loops in order: (d0, ..., d(n-2)).
bool isRowReduction(const LinalgKernelPlan &plan) {
  int64_t rank = plan.ranges.size();
  linalg::LinalgOp op = plan.op;
  return rank >= 2 && plan.reductionLoop == rank - 1 &&
         isRowBroadcast(op.getMatchingIndexingMap(op.getDpsInitOperand(0)));
}

/// Reductions over the last loop and the one all-parallel op that reads
/// their results (broadcast along the rows), over the same loops: one
/// kernel of row programs.
struct RowGroup {
  /// Program order; the last is the consumer.
  SmallVector<LinalgKernelPlan, 4> plans;
  SmallVector<int64_t> ranges;
  int64_t rows = 0, length = 0;

  /// Why the row reduction `member` and the ops it is read with cannot be
  /// one row kernel, or "". Any reduction of a group finds the same group.
  std::string collect(linalg::LinalgOp member);
  bool isReduction(size_t i) const { return i + 1 < plans.size(); }
  /// The group's reduction whose result is `value`, or -1.
  int64_t producerOf(Value value) const {
    for (auto [i, plan] : llvm::enumerate(plans))
      if (isReduction(i) && plan.op->getResult(0) == value)
        return i;
    return -1;
  }
};

std::string RowGroup::collect(linalg::LinalgOp root) {
  LinalgKernelPlan rootPlan{root};
  if (std::string why = rootPlan.analyze(); !why.empty())
    return why;
  if (!isRowReduction(rootPlan))
    return "not a reduction over the last loop into (d0, ..., d(n-2))";
  ranges = rootPlan.ranges;
  Block *block = root->getBlock();

  // Members by fixpoint: the users of every member reduction, and the row
  // reductions every member reads.
  llvm::SetVector<Operation *> members;
  members.insert(root);
  Operation *consumer = nullptr;
  auto sameLoops = [&](linalg::LinalgOp op) {
    return op->getBlock() == block && op.hasPureTensorSemantics() &&
           op.getStaticLoopRanges() == ranges;
  };
  auto asRowReduction = [&](Operation *op) -> bool {
    auto linalgOp = dyn_cast_or_null<linalg::LinalgOp>(op);
    if (!linalgOp || !sameLoops(linalgOp))
      return false;
    LinalgKernelPlan plan{linalgOp};
    return plan.analyze().empty() && isRowReduction(plan);
  };
  for (bool changed = true; changed;) {
    changed = false;
    for (size_t i = 0; i < members.size(); ++i) {
      Operation *member = members[i];
      if (member != consumer) {
        for (Operation *user : member->getResult(0).getUsers()) {
          if (members.contains(user))
            continue;
          auto linalgOp = dyn_cast<linalg::LinalgOp>(user);
          if (asRowReduction(user)) {
            members.insert(user);
          } else if (linalgOp && sameLoops(linalgOp) &&
                     linalgOp.getNumReductionLoops() == 0) {
            if (consumer)
              return "two ops read the reductions' results";
            consumer = user;
            members.insert(user);
          } else {
            return "a reduction's result is read by an op of other loops";
          }
          changed = true;
        }
      }
      for (Value operand : member->getOperands()) {
        Operation *def = operand.getDefiningOp();
        if (def && !members.contains(def) && asRowReduction(def)) {
          members.insert(def);
          changed = true;
        }
      }
    }
  }
  if (!consumer)
    return "no elementwise op reads the reductions";
  SmallVector<Operation *> ordered(members.begin(), members.end());
  llvm::sort(ordered,
             [](Operation *a, Operation *b) { return a->isBeforeInBlock(b); });
  if (ordered.back() != consumer)
    return "the consumer comes before a reduction it does not read";
  for (Operation *op : ordered) {
    plans.push_back(LinalgKernelPlan{cast<linalg::LinalgOp>(op)});
    if (std::string why = plans.back().analyze(); !why.empty())
      return why;
  }
  // A reduction's result is read only as an input, as a row value.
  for (LinalgKernelPlan &plan : plans)
    for (OpOperand &operand : plan.op->getOpOperands()) {
      if (producerOf(operand.get()) < 0)
        continue;
      if (!plan.op.isDpsInput(&operand))
        return "a reduction's result is an init of another op";
      if (!isRowBroadcast(plan.op.getMatchingIndexingMap(&operand)))
        return "a reduction's result is read other than along its row";
    }
  for (LinalgKernelPlan &plan : plans)
    if (!plan.capturedTensors.empty() &&
        llvm::any_of(plan.capturedTensors,
                     [&](Value t) { return producerOf(t) >= 0; }))
      return "a reduction's result is read by tensor.extract";
  length = ranges.back();
  rows = product(ArrayRef(ranges).drop_back());
  return "";
}

/// The kernel arguments of a row group or an elementwise op: host values
/// (flat buffers of tensors, scalars), each passed once.
struct KernelArguments {
  SmallVector<Value> host;
  SmallVector<Type> types;
  llvm::DenseMap<Value, int64_t> index;

  int64_t add(OpBuilder &b, Location loc, Value value) {
    auto [it, inserted] = index.try_emplace(value, host.size());
    if (!inserted)
      return it->second;
    Value arg = value;
    if (auto type = dyn_cast<RankedTensorType>(value.getType()))
      arg = flatten(b, loc,
                    bufferization::ToBufferOp::create(
                        b, loc,
                        MemRefType::get(type.getShape(), type.getElementType()),
                        value, /*readOnly=*/true));
    host.push_back(arg);
    types.push_back(arg.getType());
    return it->second;
  }
  int64_t addOutput(Value buffer) {
    host.push_back(buffer);
    types.push_back(buffer.getType());
    return host.size() - 1;
  }
};

/// The values of a reduction's init where it is a fill with a constant:
/// the constant, cloned into the kernel (no buffer, no memset).
std::optional<TypedAttr> constantInit(Value init) {
  auto fill = init.getDefiningOp<linalg::FillOp>();
  Attribute constant;
  if (!fill || !matchPattern(fill.getInputs()[0], m_Constant(&constant)))
    return std::nullopt;
  auto typed = dyn_cast<TypedAttr>(constant);
  if (!typed || typed.getType() != getElementTypeOrSelf(init.getType()))
    return std::nullopt;
  return typed;
}

/// The kernel's geometry: W threads a row, V elements a chunk, C chunks a
/// thread.
struct RowGeometry {
  int64_t width = 1;         // V
  int64_t chunks = 0;        // L / V
  int64_t threadsPerRow = 0; // W
  int64_t chunksPerThread = 0;
  int64_t blockSize = 0;
  int64_t rowsPerBlock = 1;
  bool cached = false;

  RowGeometry(const RowGroup &group, int64_t cachedVectors) {
    SmallVector<const LinalgKernelPlan *> plans;
    for (const LinalgKernelPlan &plan : group.plans)
      plans.push_back(&plan);
    width = vectorWidthOf(plans, group.length);
    chunks = group.length / width;
    threadsPerRow = std::clamp<int64_t>(
        static_cast<int64_t>(llvm::bit_floor(static_cast<uint64_t>(
            std::max<int64_t>(1, chunks / kChunksPerThread)))),
        kWarpSize, kMaxThreadsPerRow);
    chunksPerThread =
        static_cast<int64_t>(llvm::divideCeil(chunks, threadsPerRow));
    // A warp a row: several rows a block, no barriers. More: a block a row.
    blockSize = threadsPerRow == kWarpSize ? kThreadsPerBlock : threadsPerRow;
    rowsPerBlock = blockSize / threadsPerRow;
    cached = cachedVectors * chunksPerThread * kVectorBytes <= kRowCacheBytes;
  }
  int64_t warpsPerRow() const { return threadsPerRow / kWarpSize; }
};

/// The number of distinct contiguous (tensor, map) pairs the group reads:
/// the vectors a thread keeps per chunk.
int64_t contiguousReads(const RowGroup &group) {
  llvm::DenseSet<std::pair<Value, AffineMap>> reads;
  for (auto [i, plan] : llvm::enumerate(group.plans)) {
    linalg::LinalgOp op = plan.op;
    for (OpOperand &operand : op->getOpOperands()) {
      if (!isa<RankedTensorType>(operand.get().getType()) ||
          group.producerOf(operand.get()) >= 0)
        continue;
      bool read = op.isDpsInput(&operand) ||
                  (!group.isReduction(i) &&
                   plan.initRead[operand.getOperandNumber() -
                                 op.getNumDpsInputs()]);
      AffineMap map = op.getMatchingIndexingMap(&operand);
      if (read && accessOf(map) == Access::Contiguous)
        reads.insert({operand.get(), map});
    }
  }
  return reads.size();
}

/// The row group from a reduction on: one kernel, launched where the
/// consumer was; the consumer's results are its buffers and the reductions
/// are gone.
struct RowGroupToGPU : OpInterfaceRewritePattern<linalg::LinalgOp> {
  /// `fuseAmax`: only groups whose elementwise result feeds an amax, which
  /// the kernel then computes too (the stage of ProducerAmaxToGPU).
  RowGroupToGPU(MLIRContext *ctx, bool fuseAmax)
      : OpInterfaceRewritePattern(ctx, /*benefit=*/3), fuseAmax(fuseAmax) {}
  bool fuseAmax;

  LogicalResult matchAndRewrite(linalg::LinalgOp root,
                                PatternRewriter &rewriter) const override {
    if (failed(checkTopLevel(root, rewriter)))
      return failure();
    if (root.getNumReductionLoops() != 1)
      return rewriter.notifyMatchFailure(root, "not a reduction");
    RowGroup group;
    if (std::string why = group.collect(root); !why.empty())
      return rewriter.notifyMatchFailure(root, why);
    // The kernel replaces the group when its first op is visited (the
    // driver goes top-down), before any op of it became a kernel alone.
    if (group.plans.front().op != root)
      return rewriter.notifyMatchFailure(root, "not the first op of its group");
    AmaxUsers users;
    if (fuseAmax) {
      linalg::LinalgOp consumer = group.plans.back().op;
      if (consumer->getNumResults() != 1)
        return rewriter.notifyMatchFailure(root, "a consumer of two results");
      users = amaxUsersOf(consumer->getResult(0));
      if (users.empty())
        return rewriter.notifyMatchFailure(root, "no amax of its result");
    }
    emitRowKernel(rewriter, group, users);
    return success();
  }

  void emitRowKernel(PatternRewriter &rewriter, RowGroup &group,
                     const AmaxUsers &amaxUsers) const;
};

void RowGroupToGPU::emitRowKernel(PatternRewriter &rewriter, RowGroup &group,
                                  const AmaxUsers &amaxUsers) const {
  linalg::LinalgOp consumer = group.plans.back().op;
  Location loc = consumer.getLoc();
  auto module = consumer->getParentOfType<ModuleOp>();
  rewriter.setInsertionPoint(consumer);

  // Arguments: the consumer's outputs, then every op's operands in
  // emitBody's layout (deduplicated; a group result or a constant init has
  // no argument).
  KernelArguments arguments;
  SmallVector<Value> outputs;
  for (Value result : consumer->getResults()) {
    auto type = cast<RankedTensorType>(result.getType());
    Value buffer = allocDevice(
        rewriter, loc, MemRefType::get(type.getShape(), type.getElementType()),
        /*zeroFill=*/false);
    outputs.push_back(buffer);
    arguments.addOutput(flatten(rewriter, loc, buffer));
  }
  int64_t numOutputs = outputs.size();
  // Per op: its emitBody layout as indices into the arguments (-1: none).
  SmallVector<SmallVector<int64_t>> layouts;
  SmallVector<std::optional<TypedAttr>> initConstants;
  for (auto [i, plan] : llvm::enumerate(group.plans)) {
    linalg::LinalgOp op = plan.op;
    SmallVector<int64_t> layout;
    auto add = [&](Value v) {
      layout.push_back(group.producerOf(v) >= 0
                           ? -1
                           : arguments.add(rewriter, loc, v));
    };
    for (Value input : op.getDpsInputs())
      add(input);
    std::optional<TypedAttr> initConstant;
    for (auto [k, init] : llvm::enumerate(op.getDpsInits())) {
      if (!plan.initRead[k])
        continue;
      if (group.isReduction(i) && (initConstant = constantInit(init)))
        layout.push_back(-1);
      else
        add(init);
    }
    initConstants.push_back(initConstant);
    for (Value t : plan.capturedTensors)
      add(t);
    for (Value s : plan.capturedScalars)
      add(s);
    layouts.push_back(std::move(layout));
  }

  // The fused amax's buffer: the last argument.
  Value amaxBuffer;
  int64_t amaxArg = -1;
  if (!amaxUsers.empty()) {
    amaxBuffer = allocDevice(rewriter, loc,
                             MemRefType::get({1}, rewriter.getI32Type()),
                             /*zeroFill=*/true);
    amaxArg = arguments.addOutput(amaxBuffer);
  }

  RowGeometry geometry(group, contiguousReads(group));
  // The name covers the ops and what the signature depends on beyond
  // them: which operands share an argument, which inits are constants.
  std::string text;
  llvm::raw_string_ostream os(text);
  for (auto [plan, layout, constant] :
       llvm::zip(group.plans, layouts, initConstants)) {
    os << plan.kernelName() << "|";
    for (int64_t index : layout)
      os << index << ",";
    if (constant)
      os << *constant;
  }
  std::string name = "nvfp4_linalg_rows_" + shapeName(group.ranges) + "_" +
                     std::to_string(group.plans.size()) + "op_" +
                     llvm::utohexstr(llvm::hash_value(text)) +
                     (amaxBuffer ? "_amax" : "");

  KernelOptions options;
  options.blockSize = geometry.blockSize;
  SmallVector<int64_t> sharedOf(group.plans.size(), -1);
  if (geometry.warpsPerRow() > 1)
    for (auto [i, plan] : llvm::enumerate(group.plans)) {
      if (!group.isReduction(i))
        continue;
      sharedOf[i] = options.workgroupBuffers.size();
      options.workgroupBuffers.push_back(MemRefType::get(
          {geometry.warpsPerRow()}, plan.combiner->getResult(0).getType(),
          MemRefLayoutAttrInterface(),
          gpu::AddressSpaceAttr::get(rewriter.getContext(),
                                     gpu::AddressSpace::Workgroup)));
    }
  int64_t amaxShared = -1;
  if (amaxBuffer && geometry.warpsPerRow() > 1) {
    amaxShared = options.workgroupBuffers.size();
    options.workgroupBuffers.push_back(MemRefType::get(
        {geometry.warpsPerRow()}, rewriter.getF32Type(),
        MemRefLayoutAttrInterface(),
        gpu::AddressSpaceAttr::get(rewriter.getContext(),
                                   gpu::AddressSpace::Workgroup)));
  }

  gpu::GPUFuncOp kernel = getOrCreateKernel(
      module, name, arguments.types, options,
      [&](OpBuilder &b, Location l, ValueRange kargs) {
        IndexMath m{b, l};
        int64_t numArgs = arguments.host.size();
        SmallVector<SmallVector<Value>> opArgs;
        for (const SmallVector<int64_t> &layout : layouts) {
          SmallVector<Value> values;
          for (int64_t index : layout)
            values.push_back(index < 0 ? Value() : kargs[index]);
          opArgs.push_back(std::move(values));
        }
        Value tid = gpu::ThreadIdOp::create(b, l, gpu::Dimension::x);
        Value blockId = gpu::BlockIdOp::create(b, l, gpu::Dimension::x);
        Value t = tid, row = blockId;
        std::optional<OpBuilder::InsertionGuard> guard;
        if (geometry.rowsPerBlock > 1) {
          // A warp a row: the guard is warp-uniform, and nothing below
          // waits for the block.
          t = m.rem(tid, geometry.threadsPerRow);
          row = m.add(m.mul(blockId, geometry.rowsPerBlock),
                      m.div(tid, geometry.threadsPerRow));
          if (group.rows % geometry.rowsPerBlock != 0) {
            auto ifRow = scf::IfOp::create(b, l, m.lt(row, group.rows), false);
            guard.emplace(b);
            b.setInsertionPointToStart(ifRow.thenBlock());
          }
        }
        SmallVector<Value> outer =
            delinearize(m, row, ArrayRef(group.ranges).drop_back());

        // The reductions' results, per row, as the later ops read them.
        llvm::DenseMap<Value, Value> rowValues;
        auto given = [&](OpOperand &operand) -> Value {
          return rowValues.lookup(operand.get());
        };
        ChunkCache rowCache;
        for (auto [i, plan] : llvm::enumerate(group.plans))
          loadBroadcasts(b, l, plan, opArgs[i], 0, outer, rowCache, given);

        // Chunk c of this thread: chunk t + c W of the row. With a partial
        // last round, an invalid chunk reads the row's last chunk (valid
        // memory) and its contribution is dropped.
        bool partial = geometry.chunks % geometry.threadsPerRow != 0;
        auto chunkStart = [&](Value c) -> std::pair<Value, Value> {
          Value chunk = m.add(t, arith::MulIOp::create(
                                     b, l, c, m.c(geometry.threadsPerRow)));
          Value valid;
          if (partial) {
            valid = m.lt(chunk, geometry.chunks);
            chunk = arith::SelectOp::create(b, l, valid, chunk,
                                            m.c(geometry.chunks - 1));
          }
          return {m.mul(chunk, geometry.width), valid};
        };

        for (auto [i, plan] : llvm::enumerate(group.plans)) {
          ValueRange args = opArgs[i];
          if (!group.isReduction(i)) {
            // The consumer: every chunk's points, stored; with a fused
            // amax, this thread's max |y| of what it stores.
            ValueRange outs = kargs.take_front(numOutputs);
            ScalarBuilder sb(b, l);
            auto emitStores = [&](Value c, int64_t key, ChunkCache &cache,
                                  Value max) {
              auto [j0, valid] = chunkStart(c);
              SmallVector<SmallVector<Value>> points =
                  emitChunk(b, l, plan, args, 0, outer, j0, key,
                            geometry.width, cache, given, nullptr);
              if (max) {
                Value chunkMax = max;
                for (const SmallVector<Value> &point : points)
                  chunkMax = arith::MaxNumFOp::create(
                      b, l, chunkMax,
                      math::AbsFOp::create(b, l, sb.toF32(point[0])));
                max = valid ? arith::SelectOp::create(b, l, valid, chunkMax,
                                                      max)
                                  .getResult()
                            : chunkMax;
              }
              OpBuilder::InsertionGuard storeGuard(b);
              if (valid) {
                auto ifValid = scf::IfOp::create(b, l, valid, false);
                b.setInsertionPointToStart(ifValid.thenBlock());
              }
              storeChunk(b, l, plan, outs, outer, j0, points);
              return max;
            };
            Value max = amaxArg >= 0 ? sb.f32(0.0f) : Value();
            if (geometry.cached) {
              for (int64_t c = 0; c < geometry.chunksPerThread; ++c)
                max = emitStores(m.c(c), c, rowCache, max);
            } else {
              auto loop = scf::ForOp::create(
                  b, l, m.c(0), m.c(geometry.chunksPerThread), m.c(1),
                  max ? ValueRange{max} : ValueRange{});
              {
                OpBuilder::InsertionGuard g(b);
                b.setInsertionPointToStart(loop.getBody());
                ChunkCache cache = rowCache;
                cache.vectors.clear();
                Value next =
                    emitStores(loop.getInductionVar(), 0, cache,
                               max ? loop.getRegionIterArgs()[0] : Value());
                if (max)
                  scf::YieldOp::create(b, l, ValueRange{next});
              }
              if (max)
                max = loop.getResult(0);
            }
            if (!max)
              continue;
            Value amaxBits = kargs[amaxArg];
            if (geometry.warpsPerRow() == 1) {
              warpMaxToAmax(b, l, max, amaxBits);
              continue;
            }
            // The block's max, then one atomic: the warps' maxima meet in
            // shared memory, warp 0 combines them.
            for (int32_t offset : {16, 8, 4, 2, 1})
              max = arith::MaxNumFOp::create(
                  b, l, max,
                  gpu::ShuffleOp::create(b, l, max, offset, kWarpSize,
                                         gpu::ShuffleMode::XOR)
                      .getShuffleResult());
            Value shared = kargs[numArgs + amaxShared];
            Value lane = m.rem(t, kWarpSize);
            auto ifLeader = scf::IfOp::create(b, l, m.eq(lane, 0), false);
            {
              OpBuilder::InsertionGuard g(b);
              b.setInsertionPointToStart(ifLeader.thenBlock());
              memref::StoreOp::create(b, l, max, shared,
                                      ValueRange{m.div(t, kWarpSize)});
            }
            gpu::BarrierOp::create(b, l);
            auto ifFirstWarp = scf::IfOp::create(b, l, m.lt(t, kWarpSize),
                                                 false);
            OpBuilder::InsertionGuard g(b);
            b.setInsertionPointToStart(ifFirstWarp.thenBlock());
            Value slot = arith::SelectOp::create(
                b, l, m.lt(lane, geometry.warpsPerRow()), lane, m.c(0));
            warpMaxToAmax(
                b, l, memref::LoadOp::create(b, l, shared, ValueRange{slot}),
                amaxBits);
            continue;
          }

          // A reduction: this thread's partial, then the row's.
          Value neutral = arith::ConstantOp::create(
              b, l, *arith::getNeutralElement(plan.combiner));
          auto accumulate = [&](Value c, int64_t key, Value acc,
                                ChunkCache &cache) {
            auto [j0, valid] = chunkStart(c);
            Value next = acc;
            emitChunk(b, l, plan, args, 0, outer, j0, key, geometry.width,
                      cache, given, &next);
            return valid ? arith::SelectOp::create(b, l, valid, next, acc)
                               .getResult()
                         : next;
          };
          Value partialValue = neutral;
          if (geometry.cached) {
            for (int64_t c = 0; c < geometry.chunksPerThread; ++c)
              partialValue = accumulate(m.c(c), c, partialValue, rowCache);
          } else {
            auto loop = scf::ForOp::create(
                b, l, m.c(0), m.c(geometry.chunksPerThread), m.c(1),
                ValueRange{neutral});
            {
              OpBuilder::InsertionGuard g(b);
              b.setInsertionPointToStart(loop.getBody());
              ChunkCache cache = rowCache;
              cache.vectors.clear();
              scf::YieldOp::create(
                  b, l,
                  ValueRange{accumulate(loop.getInductionVar(), 0,
                                        loop.getRegionIterArgs()[0], cache)});
            }
            partialValue = loop.getResult(0);
          }
          for (int32_t offset : {16, 8, 4, 2, 1}) {
            Value other =
                gpu::ShuffleOp::create(b, l, partialValue, offset, kWarpSize,
                                       gpu::ShuffleMode::XOR)
                    .getShuffleResult();
            partialValue = combine(b, plan, partialValue, other);
          }
          if (geometry.warpsPerRow() > 1) {
            Value shared = kargs[numArgs + sharedOf[i]];
            Value warp = m.div(t, kWarpSize);
            auto ifLeader =
                scf::IfOp::create(b, l, m.eq(m.rem(t, kWarpSize), 0), false);
            {
              OpBuilder::InsertionGuard g(b);
              b.setInsertionPointToStart(ifLeader.thenBlock());
              memref::StoreOp::create(b, l, partialValue, shared,
                                      ValueRange{warp});
            }
            gpu::BarrierOp::create(b, l);
            partialValue =
                memref::LoadOp::create(b, l, shared, ValueRange{m.c(0)});
            for (int64_t w = 1; w < geometry.warpsPerRow(); ++w)
              partialValue = combine(
                  b, plan, partialValue,
                  memref::LoadOp::create(b, l, shared, ValueRange{m.c(w)}));
          }
          Value init;
          if (initConstants[i]) {
            init = arith::ConstantOp::create(b, l, *initConstants[i]);
          } else {
            // The init buffer, at this row (the init map is the output's).
            Value buffer = args[plan.op.getNumDpsInputs()];
            init = memref::LoadOp::create(b, l, buffer, ValueRange{row});
          }
          rowValues[plan.op->getResult(0)] =
              combine(b, plan, init, partialValue);
        }
      });
  launchKernel(rewriter, loc, kernel,
               {static_cast<int64_t>(
                   llvm::divideCeil(group.rows, geometry.rowsPerBlock)),
                1, 1},
               geometry.blockSize, /*sharedMemoryBytes=*/0, arguments.host);

  SmallVector<Value> results;
  for (auto [result, buffer] : llvm::zip(consumer->getResults(), outputs))
    results.push_back(bufferization::ToTensorOp::create(
        rewriter, loc, result.getType(), buffer, /*restrict=*/true,
        /*writable=*/true));
  rewriter.replaceOp(consumer, results);
  for (LinalgKernelPlan &plan : llvm::reverse(group.plans))
    if (plan.op != consumer)
      rewriter.eraseOp(plan.op);
  if (amaxBuffer)
    giveFusedAmax(rewriter, loc, amaxUsers, amaxBuffer);
}

} // namespace

bool kernels::onlyInitializesRowGroups(linalg::FillOp fill) {
  return !fill->use_empty() &&
         llvm::all_of(fill->getUses(), [](OpOperand &use) {
           auto op = dyn_cast<linalg::LinalgOp>(use.getOwner());
           if (!op || !op.isDpsInit(&use) || op.getNumReductionLoops() != 1)
             return false;
           RowGroup group;
           return group.collect(op).empty();
         });
}

//===----------------------------------------------------------------------===//
// Vectorized elementwise kernels
//===----------------------------------------------------------------------===//

int64_t kernels::elementwiseVectorWidth(const LinalgKernelPlan &plan) {
  if (plan.reductionLoop >= 0 || plan.ranges.empty())
    return 1;
  return vectorWidthOf({&plan}, plan.ranges.back());
}

SmallVector<SmallVector<Value>> kernels::emitElementwisePoints(
    OpBuilder &b, Location loc, const LinalgKernelPlan &plan, ValueRange args,
    int64_t firstInput, Value chunk, int64_t width, bool store) {
  IndexMath m{b, loc};
  SmallVector<int64_t> chunkRanges(plan.ranges);
  chunkRanges.back() /= width;
  SmallVector<Value> indices = delinearize(m, chunk, chunkRanges);
  Value j0 = width == 1 ? indices.back() : m.mul(indices.back(), width);
  indices.pop_back();
  ChunkCache cache;
  loadBroadcasts(b, loc, plan, args, firstInput, indices, cache, nullptr);
  SmallVector<SmallVector<Value>> points =
      emitChunk(b, loc, plan, args, firstInput, indices, j0, /*chunkKey=*/0,
                width, cache, nullptr, nullptr);
  if (store)
    storeChunk(b, loc, plan, args.take_front(plan.op->getNumResults()),
               indices, j0, points);
  return points;
}

void mlir::nvfp4::populateRowKernelPatterns(RewritePatternSet &patterns) {
  patterns.add<RowGroupToGPU>(patterns.getContext(), /*fuseAmax=*/false);
}

void mlir::nvfp4::populateRowKernelAmaxPatterns(RewritePatternSet &patterns) {
  patterns.add<RowGroupToGPU>(patterns.getContext(), /*fuseAmax=*/true);
}
