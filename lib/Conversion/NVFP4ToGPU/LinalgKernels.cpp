//===- LinalgKernels.cpp - the rest of a model as GPU kernels --------------===//
//
// Part of the nvfp4 project.
//
// What a transformer block computes around its NVFP4 GEMMs -- RMSNorm,
// RoPE, softmax, SiLU/SwiGLU, residual adds, casts, head splits and
// repeats, the BF16 attention GEMMs -- arrives as linalg on tensors. These
// patterns make kernels of it inside convert-nvfp4-to-gpu, with the same
// conventions as the nvfp4 kernels (flat buffers from gpu.alloc, one
// gpu.module, launches the manifest describes):
//
//   * reductions over the last loop and the elementwise op that reads
//     their results along the same rows (softmax, RMSNorm): one row kernel
//     (RowKernels.cpp, populateRowKernelPatterns);
//   * a linalg op whose loops are all parallel (linalg.generic, transpose,
//     broadcast, fill with a non-constant, elementwise named ops): one
//     thread per run of V points along the last loop (V = 16 bytes of the
//     widest operand contiguous along it, when V divides that loop; else
//     1; emitElementwisePoints in RowKernels.cpp); the op's body is cloned
//     into the kernel for each point with its operands loaded through the
//     indexing maps (a 16-byte vector load for each contiguous operand),
//     and linalg.index / tensor.extract of a tensor from outside become the
//     loop index / a load from that tensor's buffer;
//   * any other linalg op with one reduction loop (a reduction whose
//     result is also used elsewhere, or not over the last loop): one warp
//     per output element; each lane runs
//     the body over every 32nd point of the reduction loop from the
//     combiner's neutral element, the lanes combine by an xor butterfly of
//     shuffles, and lane 0 combines the result with the init value. The body
//     must yield `combiner(acc, f(...))` (addf, mulf, maximumf, ...), which
//     is what makes the reassociation legal (the CPU reference sums in loop
//     order; the two differ by rounding only);
//   * linalg.fill with a constant: gpu.memset (no kernel);
//   * tensor.expand_shape / collapse_shape: views of the buffer;
//   * linalg.matmul / batch_matmul with BF16 operands on sm_90a: the route's
//     wgmma GEMM (DecodeWgmmaMatmul.cpp) fed by TMA from the operands
//     themselves (GemmPlan::operandElement), FP32 accumulation, C rounded
//     once. K is padded to the pipeline's K step by the tensor maps' zero
//     fill; a B operand stored [k, n] is transposed into [n, k] by a kernel
//     first.
//
// The alternative, upstream's linalg -> scf.parallel -> gpu.launch route
// (convert-parallel-loops-to-gpu + gpu-kernel-outlining), was not taken: it
// maps a reduction to one thread per row, outlines each kernel into its own
// gpu.module with memref descriptors (the manifest and the runtime take bare
// pointers of one module), and needs the host function bufferized first --
// which the nvfp4 lowering does op by op. docs/Runtime.md section "Whole
// models" says what runs where.
//
// Fusion: an nvfp4.amax of an elementwise op's result is computed by that
// op's kernel (ProducerAmaxToGPU, before the nvfp4 ops are converted), so
// the activation a quantization reads is not read once more for its amax.
// Not fused yet: an RMSNorm whose result feeds an amax keeps its
// reduction kernel apart (ProducerAmaxToGPU takes its elementwise half
// first), and the quantization itself reads the tensor the producer wrote.
//
//===----------------------------------------------------------------------===//

#include "GemmPipeline.h"
#include "KernelBuilder.h"
#include "KernelUtils.h"
#include "LinalgKernels.h"
#include "nvfp4/Conversion/NVFP4ToGPU/NVFP4ToGPU.h"
#include "nvfp4/Dialect/NVFP4/IR/NVFP4Ops.h"
#include "nvfp4/Numerics/RowDivision.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/IR/LinalgInterfaces.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/MathExtras.h"

using namespace mlir;
using namespace mlir::nvfp4;
using namespace mlir::nvfp4::kernels;

namespace {
constexpr int64_t kWarpSize = 32;
} // namespace

LogicalResult kernels::checkTopLevel(Operation *op, PatternRewriter &rewriter) {
  if (!isa_and_present<func::FuncOp>(op->getParentOp()))
    return rewriter.notifyMatchFailure(op, "not at a function's top level");
  return success();
}

/// Row-major strides of a static shape.
SmallVector<int64_t> kernels::stridesOf(ArrayRef<int64_t> shape) {
  SmallVector<int64_t> strides(shape.size(), 1);
  for (int64_t d = static_cast<int64_t>(shape.size()) - 2; d >= 0; --d)
    strides[d] = strides[d + 1] * shape[d + 1];
  return strides;
}

Value kernels::evaluateAffine(IndexMath &m, AffineExpr expr, ArrayRef<Value> loops) {
  if (auto dim = dyn_cast<AffineDimExpr>(expr))
    return loops[dim.getPosition()];
  if (auto constant = dyn_cast<AffineConstantExpr>(expr))
    return m.c(constant.getValue());
  auto binary = cast<AffineBinaryOpExpr>(expr);
  Value lhs = evaluateAffine(m, binary.getLHS(), loops);
  Value rhs = evaluateAffine(m, binary.getRHS(), loops);
  switch (expr.getKind()) {
  case AffineExprKind::Add:
    return arith::AddIOp::create(m.b, m.loc, lhs, rhs);
  case AffineExprKind::Mul:
    return arith::MulIOp::create(m.b, m.loc, lhs, rhs);
  case AffineExprKind::Mod:
    return arith::RemUIOp::create(m.b, m.loc, lhs, rhs);
  case AffineExprKind::FloorDiv:
    return arith::DivUIOp::create(m.b, m.loc, lhs, rhs);
  default:
    return arith::CeilDivUIOp::create(m.b, m.loc, lhs, rhs);
  }
}

/// Whether the kernels can evaluate `map`: results that stay non-negative
/// (loop indices are), so unsigned division is floor division.
bool kernels::isEvaluable(AffineMap map) {
  bool ok = true;
  for (AffineExpr result : map.getResults())
    result.walk([&](AffineExpr e) {
      if (auto c = dyn_cast<AffineConstantExpr>(e); c && c.getValue() < 0)
        ok = false;
    });
  return ok;
}

Value kernels::linearOffset(IndexMath &m, ArrayRef<Value> indices,
                   ArrayRef<int64_t> shape) {
  SmallVector<int64_t> strides = stridesOf(shape);
  Value offset = m.c(0);
  for (auto [index, stride] : llvm::zip(indices, strides))
    offset = m.add(offset, stride == 1 ? index : m.mul(index, stride));
  return offset;
}

SmallVector<Value> kernels::delinearize(IndexMath &m, Value linear,
                               ArrayRef<int64_t> ranges) {
  SmallVector<Value> indices(ranges.size());
  for (int64_t d = static_cast<int64_t>(ranges.size()) - 1; d >= 0; --d) {
    indices[d] = d == 0 ? linear : m.rem(linear, ranges[d]);
    if (d > 0)
      linear = m.div(linear, ranges[d]);
  }
  return indices;
}

/// The math ops a kernel body may use: those that become one exact PTX
/// instruction, and exp / log / rsqrt, which expandMath writes out.
bool kernels::isKernelMath(Operation *op) {
  return isa<math::ExpOp, math::Exp2Op, math::LogOp, math::RsqrtOp,
             math::SqrtOp, math::AbsFOp, math::FmaOp, math::CopySignOp,
             math::FloorOp, math::RoundEvenOp>(op);
}

std::string kernels::LinalgKernelPlan::analyze() {
  if (!op.hasPureTensorSemantics())
    return "not on tensors";
  if (op->getNumResults() == 0)
    return "no results";
  for (Value v : op->getOperands())
    if (auto shaped = dyn_cast<ShapedType>(v.getType());
        shaped && (!shaped.hasStaticShape() || !isa<RankedTensorType>(shaped)))
      return "dynamic or unranked shapes";
  ranges = op.getStaticLoopRanges();
  if (llvm::any_of(ranges, [](int64_t r) { return r <= 0; }))
    return "an empty or dynamic iteration space";
  for (AffineMap map : op.getIndexingMapsArray())
    if (!isEvaluable(map))
      return "an indexing map with negative constants";
  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  for (auto [i, it] : llvm::enumerate(iterators)) {
    if (it == utils::IteratorType::parallel)
      continue;
    if (reductionLoop >= 0)
      return "more than one reduction loop";
    reductionLoop = i;
  }
  Block *body = op.getBlock();
  Region *region = body->getParent();
  std::string why;
  body->walk([&](Operation *inner) {
    if (!why.empty())
      return;
    if (inner->getNumRegions())
      why = "a body op with regions (" + inner->getName().getStringRef().str() +
            ")";
    else if (!isa<linalg::IndexOp, linalg::YieldOp, tensor::ExtractOp>(inner) &&
             !isa<arith::ArithDialect>(inner->getDialect()) &&
             !isKernelMath(inner))
      why = "a body op other than arith, exp, log, sqrt, rsqrt, abs, fma, "
            "copysign, floor, roundeven, linalg.index and tensor.extract (" +
            inner->getName().getStringRef().str() + ")";
    else if (isa<math::MathDialect>(inner->getDialect()) &&
             !inner->getResult(0).getType().isF32() &&
             isa<math::ExpOp, math::Exp2Op, math::LogOp, math::SqrtOp,
                 math::RsqrtOp>(inner))
      why = "exp, log, sqrt or rsqrt of a type other than f32";
    for (Value operand : inner->getOperands()) {
      if (region->isAncestor(operand.getParentRegion()))
        continue;
      if (isa<RankedTensorType>(operand.getType())) {
        if (!isa<tensor::ExtractOp>(inner) ||
            !cast<RankedTensorType>(operand.getType()).hasStaticShape()) {
          why = "a tensor from outside used other than by tensor.extract";
          return;
        }
        if (!llvm::is_contained(capturedTensors, operand))
          capturedTensors.push_back(operand);
      } else if (Operation *def = operand.getDefiningOp();
                 def && def->hasTrait<OpTrait::ConstantLike>()) {
        if (!llvm::is_contained(capturedConstants, def))
          capturedConstants.push_back(def);
      } else if (operand.getType().isIntOrIndexOrFloat()) {
        if (!llvm::is_contained(capturedScalars, operand))
          capturedScalars.push_back(operand);
      } else {
        why = "a value from outside of type that kernels cannot take";
      }
    }
  });
  if (!why.empty())
    return why;
  for (OpOperand *input : op.getDpsInputOperands())
    if (!isa<RankedTensorType>(input->get().getType()) &&
        !input->get().getType().isIntOrIndexOrFloat())
      return "an input that is neither a tensor nor a scalar";

  initRead.clear();
  for (OpOperand &init : op.getDpsInitsMutable())
    initRead.push_back(reductionLoop >= 0 ||
                       !op.getMatchingBlockArgument(&init).use_empty());
  if (reductionLoop < 0)
    return "";

  // A reduction: one result, indexed without the reduction loop, whose
  // accumulator only feeds the yielded combiner.
  if (op.getNumDpsInits() != 1)
    return "a reduction with more than one result";
  AffineMap outMap = op.getMatchingIndexingMap(op.getDpsInitOperand(0));
  if (outMap.isFunctionOfDim(reductionLoop))
    return "a reduction whose result is indexed by the reduction loop";
  BlockArgument acc = op.getMatchingBlockArgument(op.getDpsInitOperand(0));
  auto yield = cast<linalg::YieldOp>(body->getTerminator());
  combiner = yield.getOperand(0).getDefiningOp();
  if (!combiner || !acc.hasOneUse() || *acc.getUsers().begin() != combiner ||
      combiner->getNumOperands() != 2 || combiner->getNumResults() != 1 ||
      !arith::getNeutralElement(combiner))
    return "a reduction body that is not combiner(acc, value) with addf, "
           "mulf, maximumf, minimumf, maxnumf, minnumf or an integer "
           "equivalent";
  unsigned bits = acc.getType().getIntOrFloatBitWidth();
  if (bits != 32)
    return "a reduction over a type other than 32 bits (the lanes combine "
           "with 32-bit shuffles)";
  return "";
}

std::string kernels::LinalgKernelPlan::kernelName() const {
  std::string text;
  llvm::raw_string_ostream os(text);
  OpPrintingFlags flags;
  flags.printGenericOpForm().useLocalScope().elideLargeElementsAttrs(16);
  op->print(os, flags);
  for (Operation *constant : capturedConstants)
    constant->print(os, flags);
  for (Value t : capturedTensors)
    os << t.getType();
  std::string name = op->getName().stripDialect().str();
  std::replace(name.begin(), name.end(), '.', '_');
  return "nvfp4_linalg_" + name + "_" + shapeName(ranges) +
         (reductionLoop >= 0 ? "_r" + std::to_string(reductionLoop) : "") +
         "_" + llvm::utohexstr(llvm::hash_value(text));
}

/// exp, exp2, log, sqrt and rsqrt without libdevice (the kernels link
/// none): exp(x) = ex2.approx(x * log2(e)) (within 2 ulp of exp2, plus the
/// rounding of the product), log(x) = lg2.approx(x) * ln(2) (the dt
/// softplus of Mamba-2), sqrt is sqrt.rn and rsqrt 1 / sqrt.rn -- exactly
/// what the CPU lowering computes for rsqrt. Null for other ops.
Value kernels::expandMath(OpBuilder &b, Location loc, Operation &op,
                          const IRMapping &map) {
  if (!isa<math::ExpOp, math::Exp2Op, math::LogOp, math::SqrtOp,
           math::RsqrtOp>(op) ||
      !op.getResult(0).getType().isF32())
    return Value();
  Value x = map.lookupOrDefault(op.getOperand(0));
  if (isa<math::LogOp>(op)) {
    Value log2 = LLVM::CallIntrinsicOp::create(
                     b, loc, b.getF32Type(),
                     b.getStringAttr("llvm.nvvm.lg2.approx.f"), ValueRange{x})
                     .getResult(0);
    return arith::MulFOp::create(
        b, loc, log2,
        arith::ConstantOp::create(b, loc,
                                  b.getF32FloatAttr(0.6931471805599453f)));
  }
  if (isa<math::ExpOp>(op))
    x = arith::MulFOp::create(
        b, loc, x,
        arith::ConstantOp::create(b, loc,
                                  b.getF32FloatAttr(1.4426950408889634f)));
  if (isa<math::ExpOp, math::Exp2Op>(op))
    return LLVM::Exp2Op::create(b, loc, x);
  Value root = LLVM::SqrtOp::create(b, loc, x);
  if (isa<math::SqrtOp>(op))
    return root;
  return arith::DivFOp::create(
      b, loc, arith::ConstantOp::create(b, loc, b.getF32FloatAttr(1.0f)),
      root);
}

/// x / s for an f32 divisor s that is the same at every point of a row
/// (include/nvfp4/Numerics/RowDivision.h): one reciprocal, a multiply and
/// two fmas, correctly rounded where the returned check (an i1) holds. The
/// reciprocal and the divisor's range check depend on s alone: LLVM
/// computes them once a row.
static std::pair<Value, Value> emitRowQuotient(OpBuilder &b, Location loc,
                                               Value x, Value s) {
  namespace nn = ::nvfp4::numerics;
  auto f32 = [&](float v) {
    return arith::ConstantOp::create(b, loc, b.getF32FloatAttr(v));
  };
  auto cmp = [&](arith::CmpFPredicate p, Value lhs, float rhs) {
    return arith::CmpFOp::create(b, loc, p, lhs, f32(rhs));
  };
  using P = arith::CmpFPredicate;
  Value r = arith::DivFOp::create(b, loc, f32(1.0f), s);
  Value divisorOk =
      arith::AndIOp::create(b, loc, cmp(P::OGE, s, nn::kRowDivisorMin),
                            cmp(P::OLE, s, nn::kRowDivisorMax));
  Value q0 = arith::MulFOp::create(b, loc, x, r);
  Value e = LLVM::FMAOp::create(b, loc, q0, s, arith::NegFOp::create(b, loc, x));
  Value q =
      LLVM::FMAOp::create(b, loc, arith::NegFOp::create(b, loc, e), r, q0);
  Value ax = LLVM::FAbsOp::create(b, loc, x);
  Value dividendOk = arith::OrIOp::create(
      b, loc,
      arith::AndIOp::create(b, loc, cmp(P::OGE, ax, nn::kRowDividendMin),
                            cmp(P::OLE, ax, nn::kRowDividendMax)),
      cmp(P::OEQ, x, 0.0f));
  return {q, arith::AndIOp::create(b, loc, divisorOk, dividendOk)};
}

SmallVector<Value> kernels::emitBody(OpBuilder &b, Location loc,
                                     const LinalgKernelPlan &plan,
                                     ValueRange args, ArrayRef<Value> loops,
                                     Value acc, int64_t firstInput,
                                     GivenOperandFn given,
                                     const llvm::DenseSet<Value> *rowValues,
                                     SmallVectorImpl<Value> *rowDivisionChecks) {
  IndexMath m{b, loc};
  linalg::LinalgOp op = plan.op;
  IRMapping map;
  int64_t arg = firstInput;
  auto load = [&](Value buffer, AffineMap indexing, RankedTensorType type) {
    SmallVector<Value> indices;
    for (AffineExpr e : indexing.getResults())
      indices.push_back(evaluateAffine(m, e, loops));
    return memref::LoadOp::create(
               b, loc, buffer,
               ValueRange{linearOffset(m, indices, type.getShape())})
        .getResult();
  };
  auto givenValue = [&](OpOperand &operand) {
    return given ? given(operand) : Value();
  };
  for (OpOperand *input : op.getDpsInputOperands()) {
    Value kernelArg = args[arg++];
    Value value = givenValue(*input);
    if (!value) {
      value = kernelArg;
      if (auto type = dyn_cast<RankedTensorType>(input->get().getType()))
        value = load(kernelArg, op.getMatchingIndexingMap(input), type);
    }
    map.map(op.getMatchingBlockArgument(input), value);
  }
  for (auto [i, init] : llvm::enumerate(op.getDpsInitsMutable())) {
    if (!plan.initRead[i])
      continue;
    Value kernelArg = args[arg++];
    if (acc)
      continue; // the reduction combines the init once, at the end
    Value value = givenValue(init);
    if (!value)
      value = load(kernelArg, op.getMatchingIndexingMap(&init),
                   cast<RankedTensorType>(init.get().getType()));
    map.map(op.getMatchingBlockArgument(&init), value);
  }
  if (acc)
    map.map(op.getMatchingBlockArgument(op.getDpsInitOperand(0)), acc);
  llvm::DenseMap<Value, Value> capturedBuffers;
  for (Value t : plan.capturedTensors)
    capturedBuffers[t] = args[arg++];
  for (Value s : plan.capturedScalars)
    map.map(s, args[arg++]);
  for (Operation *constant : plan.capturedConstants)
    b.clone(*constant, map);

  // With `rowValues`: the values equal at every point of the row -- those
  // the caller gives, the captured scalars and constants, and what the body
  // computes from them alone.
  llvm::DenseSet<Value> invariant;
  auto isInvariant = [&](Value v) {
    return rowValues && (rowValues->contains(v) || invariant.contains(v) ||
                         matchPattern(v, m_Constant()));
  };
  if (rowValues)
    for (Value s : plan.capturedScalars)
      invariant.insert(map.lookupOrDefault(s));

  SmallVector<Value> yielded;
  for (Operation &inner : op.getBlock()->without_terminator()) {
    bool fromRowValues =
        rowValues && !isa<linalg::IndexOp, tensor::ExtractOp>(inner) &&
        isPure(&inner) && llvm::all_of(inner.getOperands(), [&](Value v) {
          return isInvariant(map.lookupOrDefault(v));
        });
    if (rowDivisionChecks && isa<arith::DivFOp>(inner) &&
        inner.getResult(0).getType().isF32() && !fromRowValues &&
        isInvariant(map.lookupOrDefault(inner.getOperand(1)))) {
      auto [q, ok] =
          emitRowQuotient(b, loc, map.lookupOrDefault(inner.getOperand(0)),
                          map.lookupOrDefault(inner.getOperand(1)));
      map.map(inner.getResult(0), q);
      rowDivisionChecks->push_back(ok);
      continue;
    }
    if (auto index = dyn_cast<linalg::IndexOp>(inner)) {
      map.map(index.getResult(), loops[index.getDim()]);
    } else if (auto extract = dyn_cast<tensor::ExtractOp>(inner)) {
      SmallVector<Value> indices;
      for (Value i : extract.getIndices())
        indices.push_back(map.lookupOrDefault(i));
      Value buffer = capturedBuffers.lookup(extract.getTensor());
      map.map(extract.getResult(),
              memref::LoadOp::create(
                  b, loc, buffer,
                  ValueRange{linearOffset(
                      m, indices, extract.getTensor().getType().getShape())})
                  .getResult());
    } else if (Value expanded = expandMath(b, loc, inner, map)) {
      map.map(inner.getResult(0), expanded);
    } else {
      b.clone(inner, map);
    }
    if (fromRowValues)
      for (Value result : inner.getResults())
        invariant.insert(map.lookupOrDefault(result));
  }
  for (Value v : op.getBlock()->getTerminator()->getOperands())
    yielded.push_back(map.lookupOrDefault(v));
  return yielded;
}

Value kernels::combine(OpBuilder &b, const LinalgKernelPlan &plan, Value lhs,
                       Value rhs) {
  IRMapping map;
  linalg::LinalgOp op = plan.op;
  Value accArg = op.getMatchingBlockArgument(op.getDpsInitOperand(0));
  for (Value operand : plan.combiner->getOperands())
    map.map(operand, operand == accArg ? lhs : rhs);
  return b.clone(*plan.combiner, map)->getResult(0);
}

namespace {

/// Stores the yielded `values` at the loop indices `loops` into the output
/// buffers args[0 ..].
void storeResults(OpBuilder &b, Location loc, const LinalgKernelPlan &plan,
                  ValueRange args, ArrayRef<Value> loops,
                  ArrayRef<Value> values) {
  IndexMath m{b, loc};
  linalg::LinalgOp op = plan.op;
  for (auto [i, init] : llvm::enumerate(op.getDpsInitsMutable())) {
    SmallVector<Value> indices;
    for (AffineExpr e : op.getMatchingIndexingMap(&init).getResults())
      indices.push_back(evaluateAffine(m, e, loops));
    auto type = cast<RankedTensorType>(init.get().getType());
    memref::StoreOp::create(
        b, loc, values[i], args[i],
        ValueRange{linearOffset(m, indices, type.getShape())});
  }
}

/// Whether `fill` only initializes GEMMs that BF16GemmToGPU takes (which
/// need no zeroed C): it is left to die with them.
bool onlyInitializesGemms(linalg::FillOp fill, bool haveBF16Gemm) {
  if (!haveBF16Gemm || !matchPattern(fill.getInputs()[0], m_AnyZeroFloat()))
    return false;
  return llvm::all_of(fill->getUsers(), [&](Operation *user) {
    return isa<linalg::MatmulOp, linalg::BatchMatmulOp>(user) &&
           cast<linalg::LinalgOp>(user).getDpsInits()[0] == fill.getResult(0);
  });
}

/// A fused amax: the kernel of an all-parallel op also computes max |y| of
/// its (single) result into `buffer` (memref<1xi32> of FP32 bits, zeroed).
struct FusedAmax {
  Value buffer;
  int64_t multiprocessors = 0;
};

/// Blocks per multiprocessor of a grid-stride kernel with a fused amax: a
/// wave of 48 warps, as the amax kernel's.
constexpr int64_t kAmaxBlocksPerMultiprocessor = 6;

/// Replaces `plan.op` by the launch of its kernel (one thread per point, or
/// one warp per output element of a reduction; grid-stride with `amax`).
void emitLinalgKernel(PatternRewriter &rewriter, const LinalgKernelPlan &plan,
                      FusedAmax amax) {
  linalg::LinalgOp op = plan.op;
  Location loc = op.getLoc();
  auto module = op->getParentOfType<ModuleOp>();

  // Kernel arguments: outputs, tensor/scalar inputs, the inits it reads,
  // captured tensors, captured scalars.
  SmallVector<Value> args;
  SmallVector<Type> argTypes;
  SmallVector<Value> outputs;
  auto addBuffer = [&](Value tensor) {
    auto type = cast<RankedTensorType>(tensor.getType());
    Value buffer = bufferization::ToBufferOp::create(
        rewriter, loc,
        MemRefType::get(type.getShape(), type.getElementType()), tensor,
        /*readOnly=*/true);
    args.push_back(flatten(rewriter, loc, buffer));
    argTypes.push_back(args.back().getType());
  };
  auto addScalar = [&](Value scalar) {
    args.push_back(scalar);
    argTypes.push_back(scalar.getType());
  };
  for (Value result : op->getResults()) {
    auto type = cast<RankedTensorType>(result.getType());
    Value buffer = allocDevice(
        rewriter, loc,
        MemRefType::get(type.getShape(), type.getElementType()),
        /*zeroFill=*/false);
    outputs.push_back(buffer);
    args.push_back(flatten(rewriter, loc, buffer));
    argTypes.push_back(args.back().getType());
  }
  int64_t firstInput = args.size();
  for (OpOperand *input : op.getDpsInputOperands()) {
    if (isa<RankedTensorType>(input->get().getType()))
      addBuffer(input->get());
    else
      addScalar(input->get());
  }
  for (auto [i, init] : llvm::enumerate(op.getDpsInits()))
    if (plan.initRead[i])
      addBuffer(init);
  for (Value t : plan.capturedTensors)
    addBuffer(t);
  for (Value s : plan.capturedScalars)
    addScalar(s);

  if (amax.buffer) {
    args.push_back(amax.buffer);
    argTypes.push_back(amax.buffer.getType());
  }

  std::string name = plan.kernelName();
  gpu::GPUFuncOp kernel;
  int64_t threads;
  if (amax.buffer) {
    // Grid-stride over the points, at most one wave of the chip, so that
    // the amax costs one atomic per warp of that wave (as the amax kernel's).
    // A point of the loop is a run of `width` points along the last loop.
    int64_t width = elementwiseVectorWidth(plan);
    int64_t points = product(plan.ranges) / width;
    threads = std::min<int64_t>(
        llvm::alignTo(points, kThreadsPerBlock),
        amax.multiprocessors * kAmaxBlocksPerMultiprocessor * kThreadsPerBlock);
    int64_t amaxArg = args.size() - 1;
    kernel = getOrCreateKernel(
        module, name + "_amax", argTypes, kThreadsPerBlock,
        [&](OpBuilder &b, Location l, ValueRange kargs) {
          IndexMath m{b, l};
          ScalarBuilder s(b, l);
          // The stride as the kernel sees it (gridDim), not a constant:
          // LLVM then keeps the loop a loop.
          Value stride = arith::MulIOp::create(
              b, l, gpu::GridDimOp::create(b, l, gpu::Dimension::x),
              m.c(kThreadsPerBlock));
          auto loop = scf::ForOp::create(b, l, globalThreadIndex(b, l),
                                         m.c(points), stride,
                                         ValueRange{s.f32(0.0f)});
          {
            OpBuilder::InsertionGuard g(b);
            b.setInsertionPointToStart(loop.getBody());
            SmallVector<SmallVector<Value>> values = emitElementwisePoints(
                b, l, plan, kargs, firstInput, loop.getInductionVar(), width);
            // |y| of the values as stored, NaN dropped by maxnumf: what
            // nvfp4.amax of the result computes, bit for bit (maxnumf is
            // associative and commutative, so the order does not matter).
            Value max = loop.getRegionIterArgs()[0];
            for (const SmallVector<Value> &point : values)
              max = arith::MaxNumFOp::create(
                  b, l, max, math::AbsFOp::create(b, l, s.toF32(point[0])));
            scf::YieldOp::create(b, l, ValueRange{max});
          }
          warpMaxToAmax(b, l, loop.getResult(0), kargs[amaxArg]);
        });
  } else if (plan.reductionLoop < 0) {
    int64_t width = elementwiseVectorWidth(plan);
    int64_t points = product(plan.ranges) / width;
    threads = points;
    kernel = getOrCreateKernel(
        module, name, argTypes, kThreadsPerBlock,
        [&](OpBuilder &b, Location l, ValueRange kargs) {
          IndexMath m{b, l};
          Value tid = globalThreadIndex(b, l);
          auto ifValid = scf::IfOp::create(b, l, m.lt(tid, points), false);
          OpBuilder::InsertionGuard guard(b);
          b.setInsertionPointToStart(ifValid.thenBlock());
          emitElementwisePoints(b, l, plan, kargs, firstInput, tid, width);
        });
  } else {
    SmallVector<int64_t> parallelRanges;
    for (auto [i, r] : llvm::enumerate(plan.ranges))
      if (static_cast<int64_t>(i) != plan.reductionLoop)
        parallelRanges.push_back(r);
    int64_t rows = product(parallelRanges);
    int64_t length = plan.ranges[plan.reductionLoop];
    threads = rows * kWarpSize;
    kernel = getOrCreateKernel(
        module, name, argTypes, kThreadsPerBlock,
        [&](OpBuilder &b, Location l, ValueRange kargs) {
          IndexMath m{b, l};
          Value tid = globalThreadIndex(b, l);
          // One warp per output element: warp-uniform, so the whole warp
          // takes the branch and the shuffles see every lane.
          Value row = m.div(tid, kWarpSize);
          Value lane = m.rem(tid, kWarpSize);
          auto ifValid = scf::IfOp::create(b, l, m.lt(row, rows), false);
          OpBuilder::InsertionGuard guard(b);
          b.setInsertionPointToStart(ifValid.thenBlock());
          SmallVector<Value> outer = delinearize(m, row, parallelRanges);
          auto loopsAt = [&](Value r) {
            SmallVector<Value> loops(outer);
            loops.insert(loops.begin() + plan.reductionLoop, r);
            return loops;
          };
          Type accType = plan.combiner->getResult(0).getType();
          Value neutral = arith::ConstantOp::create(
              b, l, *arith::getNeutralElement(plan.combiner));
          (void)accType;
          auto loop = scf::ForOp::create(b, l, lane, m.c(length),
                                         m.c(kWarpSize), ValueRange{neutral});
          {
            OpBuilder::InsertionGuard g(b);
            b.setInsertionPointToStart(loop.getBody());
            SmallVector<Value> values =
                emitBody(b, l, plan, kargs, loopsAt(loop.getInductionVar()),
                         loop.getRegionIterArgs()[0], firstInput);
            scf::YieldOp::create(b, l, values);
          }
          Value partial = loop.getResult(0);
          for (int32_t offset : {16, 8, 4, 2, 1}) {
            Value other = gpu::ShuffleOp::create(b, l, partial, offset,
                                                 kWarpSize,
                                                 gpu::ShuffleMode::XOR)
                              .getShuffleResult();
            partial = combine(b, plan, partial, other);
          }
          auto ifLeader = scf::IfOp::create(b, l, m.eq(lane, 0), false);
          b.setInsertionPointToStart(ifLeader.thenBlock());
          SmallVector<Value> loops = loopsAt(m.c(0));
          OpOperand *init = op.getDpsInitOperand(0);
          // The init buffer is the first argument after the inputs.
          Value initBuffer = kargs[firstInput + op.getNumDpsInputs()];
          SmallVector<Value> indices;
          for (AffineExpr e : op.getMatchingIndexingMap(init).getResults())
            indices.push_back(evaluateAffine(m, e, loops));
          Value initValue = memref::LoadOp::create(
              b, l, initBuffer,
              ValueRange{linearOffset(
                  m, indices,
                  cast<RankedTensorType>(init->get().getType()).getShape())});
          Value total = combine(b, plan, initValue, partial);
          storeResults(b, l, plan, kargs, loops, total);
        });
  }
  launchKernel(rewriter, loc, kernel, threads, kThreadsPerBlock, args);
  SmallVector<Value> results;
  for (auto [result, buffer] : llvm::zip(op->getResults(), outputs))
    results.push_back(bufferization::ToTensorOp::create(
        rewriter, loc, result.getType(), buffer, /*restrict=*/true,
        /*writable=*/true));
  rewriter.replaceOp(op, results);
}

/// Any linalg op on tensors with at most one reduction loop (contractions
/// excepted: the GEMM pattern below, or the host).
struct LinalgToGPU : OpInterfaceRewritePattern<linalg::LinalgOp> {
  LinalgToGPU(MLIRContext *ctx, bool haveBF16Gemm)
      : OpInterfaceRewritePattern(ctx), haveBF16Gemm(haveBF16Gemm) {}
  bool haveBF16Gemm;

  LogicalResult matchAndRewrite(linalg::LinalgOp op,
                                PatternRewriter &rewriter) const override {
    if (failed(checkTopLevel(op, rewriter)))
      return failure();
    if (isa<linalg::MatmulOp, linalg::BatchMatmulOp>(op) ||
        linalg::isaContractionOpInterface(op))
      return rewriter.notifyMatchFailure(op, "a contraction (GEMM)");
    if (auto fill = dyn_cast<linalg::FillOp>(op.getOperation());
        fill && onlyInitializesGemms(fill, haveBF16Gemm))
      return rewriter.notifyMatchFailure(op, "the GEMMs it feeds need no C");
    if (auto fill = dyn_cast<linalg::FillOp>(op.getOperation());
        fill && onlyInitializesRowGroups(fill))
      return rewriter.notifyMatchFailure(op, "the row kernels it feeds take "
                                             "its constant");
    LinalgKernelPlan plan{op};
    std::string why = plan.analyze();
    if (!why.empty())
      return rewriter.notifyMatchFailure(op, why);
    emitLinalgKernel(rewriter, plan, /*amax=*/{});
    return success();
  }
};

} // namespace

AmaxUsers kernels::amaxUsersOf(Value result) {
  AmaxUsers users;
  SmallVector<Value> views{result};
  while (!views.empty()) {
    Value view = views.pop_back_val();
    for (Operation *user : view.getUsers()) {
      if (auto amax = dyn_cast<AmaxOp>(user); amax && !amax.getHadamard())
        users.amaxes.push_back(amax);
      else if (auto q = dyn_cast<QuantizeOp>(user);
               q && !q.getAmax() && !q.getHadamard() && !q.getType().isMX())
        users.quantizations.push_back(q);
      else if (isa<tensor::ExpandShapeOp, tensor::CollapseShapeOp>(user))
        views.push_back(user->getResult(0));
    }
  }
  return users;
}

void kernels::giveFusedAmax(PatternRewriter &rewriter, Location loc,
                            const AmaxUsers &users, Value buffer) {
  // A quantize kernel takes an amax loaded like this from its device
  // buffer (givenAmaxBuffer): no round trip through the host.
  Value amax = loadAmax(rewriter, loc, buffer);
  for (AmaxOp user : users.amaxes)
    rewriter.replaceOp(user, amax);
  for (QuantizeOp user : users.quantizations)
    rewriter.modifyOpInPlace(user,
                             [&] { user.getAmaxMutable().assign(amax); });
}

namespace {

/// An elementwise linalg op (RMSNorm's scaling, SwiGLU, a residual add, a
/// head merge) whose result feeds an amax or a quantization that computes
/// its own: the op's kernel computes the amax of what it stores, and the
/// tensor is not read again for it. Every such user takes the fused value
/// (an nvfp4.amax is replaced by it, a quantization gets it as its amax
/// operand: the value it would have computed). Runs before the nvfp4 ops
/// are converted, while they still name their producer.
struct ProducerAmaxToGPU : OpInterfaceRewritePattern<linalg::LinalgOp> {
  ProducerAmaxToGPU(MLIRContext *ctx, const ::nvfp4::target::ChipInfo &chip)
      : OpInterfaceRewritePattern(ctx), chip(chip) {}

  LogicalResult matchAndRewrite(linalg::LinalgOp op,
                                PatternRewriter &rewriter) const override {
    if (failed(checkTopLevel(op, rewriter)))
      return failure();
    if (op->getNumResults() != 1 || isa<linalg::FillOp>(op) ||
        linalg::isaContractionOpInterface(op))
      return rewriter.notifyMatchFailure(op, "not an elementwise op with one result");
    AmaxUsers users = amaxUsersOf(op->getResult(0));
    if (users.empty())
      return rewriter.notifyMatchFailure(op, "no amax of its result");
    LinalgKernelPlan plan{op};
    std::string why = plan.analyze();
    if (!why.empty())
      return rewriter.notifyMatchFailure(op, why);
    if (plan.reductionLoop >= 0)
      return rewriter.notifyMatchFailure(op, "a reduction");

    Location loc = op.getLoc();
    Value buffer = allocDevice(
        rewriter, loc, MemRefType::get({1}, rewriter.getI32Type()),
        /*zeroFill=*/true);
    emitLinalgKernel(rewriter, plan,
                     {buffer, chip.multiprocessors ? chip.multiprocessors : 1});
    giveFusedAmax(rewriter, loc, users, buffer);
    return success();
  }

  const ::nvfp4::target::ChipInfo &chip;
};

/// linalg.fill with a constant the manifest can describe (zero bits, or an
/// f32 / i32): gpu.memset of a new buffer.
struct FillToMemset : OpRewritePattern<linalg::FillOp> {
  FillToMemset(MLIRContext *ctx, bool haveBF16Gemm)
      : OpRewritePattern(ctx, /*benefit=*/2), haveBF16Gemm(haveBF16Gemm) {}

  LogicalResult matchAndRewrite(linalg::FillOp op,
                                PatternRewriter &rewriter) const override {
    if (failed(checkTopLevel(op, rewriter)))
      return failure();
    auto type = dyn_cast<RankedTensorType>(op.getResult(0).getType());
    if (!type || !type.hasStaticShape())
      return rewriter.notifyMatchFailure(op, "not a static tensor");
    if (onlyInitializesGemms(op, haveBF16Gemm))
      return rewriter.notifyMatchFailure(op, "the GEMMs it feeds need no C");
    if (onlyInitializesRowGroups(op))
      return rewriter.notifyMatchFailure(op, "the row kernels it feeds take "
                                             "its constant");
    Value value = op.getInputs()[0];
    Attribute constant;
    if (!matchPattern(value, m_Constant(&constant)))
      return rewriter.notifyMatchFailure(op, "not a constant");
    bool zero = matchPattern(value, m_Zero()) ||
                matchPattern(value, m_PosZeroFloat());
    Type element = type.getElementType();
    if (!zero && !element.isF32() && !element.isInteger(32))
      return rewriter.notifyMatchFailure(op, "not zero, f32 or i32");
    if (value.getType() != element)
      return rewriter.notifyMatchFailure(op, "a converting fill");
    Location loc = op.getLoc();
    Value buffer = allocDevice(
        rewriter, loc, MemRefType::get(type.getShape(), element), false);
    gpu::MemsetOp::create(rewriter, loc, Type(), ValueRange(), buffer,
                          arith::ConstantOp::create(
                              rewriter, loc, cast<TypedAttr>(constant)));
    rewriter.replaceOpWithNewOp<bufferization::ToTensorOp>(
        op, type, buffer, /*restrict=*/true, /*writable=*/true);
    return success();
  }

  bool haveBF16Gemm;
};

/// tensor.expand_shape / collapse_shape: the same bytes, another shape.
template <typename TensorOp, typename MemRefOp>
struct ReshapeToView : OpRewritePattern<TensorOp> {
  using OpRewritePattern<TensorOp>::OpRewritePattern;

  LogicalResult matchAndRewrite(TensorOp op,
                                PatternRewriter &rewriter) const override {
    if (failed(checkTopLevel(op, rewriter)))
      return failure();
    auto source = dyn_cast<RankedTensorType>(op.getSrc().getType());
    RankedTensorType result = op.getResultType();
    if (!source || !source.hasStaticShape() || !result.hasStaticShape())
      return rewriter.notifyMatchFailure(op, "dynamic shapes");
    Location loc = op.getLoc();
    Value buffer = bufferization::ToBufferOp::create(
        rewriter, loc,
        MemRefType::get(source.getShape(), source.getElementType()),
        op.getSrc(), /*readOnly=*/true);
    Value view;
    if constexpr (std::is_same_v<MemRefOp, memref::ExpandShapeOp>)
      view = memref::ExpandShapeOp::create(
          rewriter, loc,
          MemRefType::get(result.getShape(), result.getElementType()), buffer,
          op.getReassociationIndices());
    else
      view = memref::CollapseShapeOp::create(rewriter, loc, buffer,
                                             op.getReassociationIndices());
    rewriter.replaceOpWithNewOp<bufferization::ToTensorOp>(
        op, result, view, /*restrict=*/true, /*writable=*/true);
    return success();
  }
};

/// Whether `init` needs no accumulation: a fill with zero or tensor.empty
/// (undefined contents).
bool isZeroInit(Value init) {
  if (init.getDefiningOp<tensor::EmptyOp>())
    return true;
  if (auto fill = init.getDefiningOp<linalg::FillOp>())
    return matchPattern(fill.getInputs()[0], m_AnyZeroFloat());
  return false;
}

/// What BF16GemmToGPU takes of a linalg.matmul / batch_matmul: its sizes,
/// B's layout, the contraction dims and the plan.
struct BF16GemmMatch {
  linalg::ContractionDimensions dims;
  int64_t batchSize = 1, sizeM = 0, sizeN = 0, sizeK = 0;
  bool bKMajor = true;
  GemmPlan plan;
};

/// Matches `op` against the BF16 GEMM of `chip`: "" with `match` filled, or
/// why the GEMM stays on the host (a pattern's failure note, and the
/// warning of warnAboutHostBF16Gemms).
std::string matchBF16Gemm(linalg::LinalgOp op,
                          const ::nvfp4::target::ChipInfo &chip,
                          BF16GemmMatch &match) {
  if (!isa<linalg::MatmulOp, linalg::BatchMatmulOp>(op))
    return "not a matmul";
  if (!op.hasPureTensorSemantics())
    return "not on tensors";
  auto lhsType = dyn_cast<RankedTensorType>(op.getDpsInputs()[0].getType());
  auto rhsType = dyn_cast<RankedTensorType>(op.getDpsInputs()[1].getType());
  auto resultType = cast<RankedTensorType>(op->getResult(0).getType());
  if (!lhsType || !rhsType || !lhsType.getElementType().isBF16() ||
      !rhsType.getElementType().isBF16() || !resultType.hasStaticShape() ||
      !lhsType.hasStaticShape() || !rhsType.hasStaticShape())
    return "the GEMM kernels take static BF16 operands";
  Type resultElement = resultType.getElementType();
  if (!resultElement.isBF16() && !resultElement.isF32())
    return "C is neither bf16 nor f32";
  if (!isZeroInit(op.getDpsInits()[0]))
    return "C is accumulated into (the GEMM kernels write C = A B)";
  FailureOr<linalg::ContractionDimensions> dims =
      linalg::inferContractionDims(op);
  if (failed(dims) || dims->m.size() != 1 || dims->n.size() != 1 ||
      dims->k.size() != 1 || dims->batch.size() > 1)
    return "not one M, N, K and at most one batch dimension";
  // The maps the kernel takes: A [b, m, k], C [b, m, n], B [b, n, k] or
  // [b, k, n] (transposed first).
  MLIRContext *ctx = op.getContext();
  auto dim = [&](unsigned d) { return getAffineDimExpr(d, ctx); };
  SmallVector<AffineExpr> batch;
  if (!dims->batch.empty())
    batch.push_back(dim(dims->batch[0]));
  auto results = [&](std::initializer_list<unsigned> rest) {
    SmallVector<AffineExpr> exprs(batch);
    for (unsigned d : rest)
      exprs.push_back(dim(d));
    return exprs;
  };
  unsigned m = dims->m[0], n = dims->n[0], k = dims->k[0];
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  match.bKMajor = maps[1].getResults() == ArrayRef(results({n, k}));
  if (maps[0].getResults() != ArrayRef(results({m, k})) ||
      maps[2].getResults() != ArrayRef(results({m, n})) ||
      (!match.bKMajor && maps[1].getResults() != ArrayRef(results({k, n}))))
    return "operand layouts (A [b, m, k], B [b, n, k] or [b, k, n], C [b, m, "
           "n])";
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  match.dims = *dims;
  match.batchSize = dims->batch.empty() ? 1 : ranges[dims->batch[0]];
  match.sizeM = ranges[m];
  match.sizeN = ranges[n];
  match.sizeK = ranges[k];
  std::string why;
  std::optional<GemmPlan> plan =
      planBF16Gemm(chip, match.batchSize, match.sizeM, match.sizeN, match.sizeK,
                   resultElement, why);
  if (!plan)
    return why;
  match.plan = *plan;
  return "";
}

/// linalg.matmul / batch_matmul of BF16 operands: the chip's BF16 GEMM
/// (BF16Gemm.cpp: sm_90a wgmma, sm_100a/sm_103a tcgen05 .kind::f16,
/// sm_120a mma.sync; C = A B^T per batch element, FP32 accumulation,
/// rounded once to C's type).
struct BF16GemmToGPU : OpInterfaceRewritePattern<linalg::LinalgOp> {
  BF16GemmToGPU(MLIRContext *ctx, const ::nvfp4::target::ChipInfo &chip)
      : OpInterfaceRewritePattern(ctx, /*benefit=*/2), chip(chip) {}

  LogicalResult matchAndRewrite(linalg::LinalgOp op,
                                PatternRewriter &rewriter) const override {
    if (failed(checkTopLevel(op, rewriter)))
      return failure();
    BF16GemmMatch match;
    if (std::string why = matchBF16Gemm(op, chip, match); !why.empty())
      return rewriter.notifyMatchFailure(op, why);
    const linalg::ContractionDimensions *dims = &match.dims;
    int64_t batchSize = match.batchSize, sizeM = match.sizeM,
            sizeN = match.sizeN, sizeK = match.sizeK;
    bool bKMajor = match.bKMajor;
    std::optional<GemmPlan> plan = match.plan;
    auto resultType = cast<RankedTensorType>(op->getResult(0).getType());
    Type resultElement = resultType.getElementType();
    Location loc = op.getLoc();
    auto module = op->getParentOfType<ModuleOp>();
    auto bufferOf = [&](Value tensor) {
      auto type = cast<RankedTensorType>(tensor.getType());
      return flatten(rewriter, loc,
                     bufferization::ToBufferOp::create(
                         rewriter, loc,
                         MemRefType::get(type.getShape(), type.getElementType()),
                         tensor, /*readOnly=*/true));
    };
    Value lhs = op.getDpsInputs()[0], rhs = op.getDpsInputs()[1];
    if (!bKMajor) {
      // [b, k, n] -> [b, n, k] (a kernel of LinalgToGPU).
      SmallVector<int64_t> permutation = {0, 2, 1};
      if (dims->batch.empty())
        permutation = {1, 0};
      SmallVector<int64_t> shape;
      if (!dims->batch.empty())
        shape.push_back(batchSize);
      shape.append({sizeN, sizeK});
      Value empty = tensor::EmptyOp::create(rewriter, loc, shape,
                                            rewriter.getBF16Type());
      rhs = linalg::TransposeOp::create(rewriter, loc, rhs, empty, permutation)
                ->getResult(0);
    }
    Value result = allocDevice(
        rewriter, loc,
        MemRefType::get(resultType.getShape(), resultElement), false);
    std::string name = "nvfp4_bf16_matmul_" +
                       (dims->batch.empty() ? std::string()
                                            : std::to_string(batchSize) + "x") +
                       std::to_string(sizeM) + "x" + std::to_string(sizeN) +
                       "x" + std::to_string(sizeK) + "_to_" +
                       typeName(resultElement);
    launchBF16Gemm(rewriter, loc, module, *plan, sizeK, bufferOf(lhs),
                   bufferOf(rhs),
                   arith::ConstantOp::create(rewriter, loc,
                                             rewriter.getF32FloatAttr(1.0f)),
                   result, name);
    rewriter.replaceOpWithNewOp<bufferization::ToTensorOp>(
        op, resultType, result, /*restrict=*/true, /*writable=*/true);
    return success();
  }

  const ::nvfp4::target::ChipInfo &chip;
};

} // namespace

bool mlir::nvfp4::hasBF16GemmKernel(const ::nvfp4::target::ChipInfo &chip) {
  namespace tgt = ::nvfp4::target;
  // Every GEMM kernel is fed by TMA. sm_100a/sm_103a: the tcgen05 kernel
  // (.kind::f16); sm_120a: the mma.sync kernel (.bf16); sm_90a: the
  // route's wgmma pipeline (emulated block scales). BF16Gemm.cpp.
  if (!chip.has(tgt::Instruction::Tma))
    return false;
  return chip.has(tgt::Instruction::Tcgen05BlockScaleMma) ||
         chip.has(tgt::Instruction::MmaSyncBlockScale) ||
         (chip.scaleSource == tgt::MmaScaleSource::Emulated &&
          chip.has(tgt::Instruction::MmaSyncBF16));
}

void mlir::nvfp4::warnAboutHostBF16Gemms(
    ModuleOp module, const ::nvfp4::target::ChipInfo &chip) {
  module.walk([&](linalg::LinalgOp op) {
    if (!isa<linalg::MatmulOp, linalg::BatchMatmulOp>(op))
      return;
    if (llvm::none_of(op.getDpsInputs(), [](Value v) {
          return getElementTypeOrSelf(v.getType()).getIntOrFloatBitWidth() ==
                 16;
        }))
      return;
    if (!hasBF16GemmKernel(chip)) {
      op->emitWarning() << "this 16-bit GEMM stays on the host: there is no "
                           "BF16 GEMM kernel for "
                        << chip.name;
      return;
    }
    BF16GemmMatch match;
    std::string why = matchBF16Gemm(op, chip, match);
    op->emitWarning() << "this 16-bit GEMM stays on the host: the " << chip.name
                      << " BF16 GEMM kernel cannot take it ("
                      << (why.empty() ? std::string("not at the top level of "
                                                    "the function")
                                      : why)
                      << ")";
  });
}

void mlir::nvfp4::populateProducerAmaxToGPUPatterns(
    RewritePatternSet &patterns, const ::nvfp4::target::ChipInfo &chip) {
  populateRowKernelAmaxPatterns(patterns);
  patterns.add<ProducerAmaxToGPU>(patterns.getContext(), chip);
}

void mlir::nvfp4::populateLinalgToGPUPatterns(
    RewritePatternSet &patterns, const ::nvfp4::target::ChipInfo &chip) {
  MLIRContext *ctx = patterns.getContext();
  bool bf16Gemm = hasBF16GemmKernel(chip);
  populateRowKernelPatterns(patterns);
  patterns.add<LinalgToGPU>(ctx, bf16Gemm);
  patterns.add<FillToMemset>(ctx, bf16Gemm);
  patterns.add<ReshapeToView<tensor::ExpandShapeOp, memref::ExpandShapeOp>,
               ReshapeToView<tensor::CollapseShapeOp, memref::CollapseShapeOp>>(
      ctx);
  if (bf16Gemm)
    patterns.add<BF16GemmToGPU>(ctx, chip);
}
