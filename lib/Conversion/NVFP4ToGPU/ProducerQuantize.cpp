//===- ProducerQuantize.cpp - an elementwise op that writes NVFP4 ---------===//
//
// Part of the nvfp4 project.
//
// nvfp4.quantize of an elementwise linalg op's result, when nothing else
// reads that result and the amax is given (an operand of the quantize that
// the op does not compute: a host function argument, a constant, a value
// from earlier kernels -- delayed scaling): ONE kernel computes the op's
// points and quantizes them. Each thread of a grid-stride loop takes a run
// of 16 consecutive points along the last loop (one 1x16 block: the last
// loop's range is a multiple of 16, the result row-major), computes them
// in vectors as the vectorized elementwise kernel does (RowKernels.cpp),
// rounds them to the result's element type (what the tensor would have
// held), and writes the block's 8 code bytes and its E4M3 scale with
// quantizeRunNearestEven, the arithmetic of the quantize kernels and of the
// GEMM's quantizing epilogue (docs/Numerics.md section 2). The op's result
// never reaches memory: the quantize kernel's read of it and the op's
// write are gone.
//
// Why only a given amax: with current scaling the amax is a property of the
// whole result, needed before the first block scale, so the producer can
// only quantize in a second pass over its inputs. That pass saves nothing
// for a SwiGLU (it reads two inputs again to spare one write and one read
// of the result), and the bundled models' producers already compute that
// amax in their own kernels (ProducerAmaxToGPU, RowGroupToGPU); docs/
// Runtime.md, "Whole models", has the numbers.
//
//===----------------------------------------------------------------------===//

#include "KernelBuilder.h"
#include "KernelUtils.h"
#include "LinalgKernels.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Transforms/DialectConversion.h"

using namespace mlir;
using namespace mlir::nvfp4;
using namespace mlir::nvfp4::kernels;

namespace {

/// Points of a run: one 1x16 block.
constexpr int64_t kRunLength = 16;
/// Blocks of 256 threads a multiprocessor in the grid-stride loop (one
/// wave; each thread keeps a run's loads in flight).
constexpr int64_t kBlocksPerMultiprocessor = 6;

/// Why `op`'s quantization cannot be fused into the kernel of its input's
/// producer, or "" (then `plan` describes the producer).
std::string unfusableReason(QuantizeOp op, LinalgKernelPlan &plan) {
  BlockScaledTensorType type = op.getResult().getType();
  if (type.isMX() || type.isTwoDimensionalBlock() ||
      type.getLayout() != ScaleLayout::Linear)
    return "not 1x16 NVFP4 blocks with linear scales";
  if (op.getRounding() == RoundingMode::Stochastic || op.getHadamard())
    return "stochastic rounding or an RHT";
  if (!op.getAmax())
    return "no given amax (the producer computes it: ProducerAmaxToGPU)";
  auto producer = op.getInput().getDefiningOp<linalg::LinalgOp>();
  if (!producer || producer->getNumResults() != 1 ||
      isa<linalg::FillOp>(producer) ||
      linalg::isaContractionOpInterface(producer))
    return "the input is not an elementwise linalg op's only result";
  if (!op.getInput().hasOneUse())
    return "the producer's result has other users";
  if (producer->getBlock() != op->getBlock())
    return "the producer is in another block";
  plan = LinalgKernelPlan{producer};
  if (std::string why = plan.analyze(); !why.empty())
    return why;
  if (plan.reductionLoop >= 0 || plan.ranges.empty())
    return "the producer is a reduction";
  if (plan.initRead[0])
    return "the producer reads its init";
  AffineMap out = producer.getMatchingIndexingMap(producer.getDpsInitOperand(0));
  if (!out.isIdentity())
    return "the producer's result is not written in loop order";
  if (plan.ranges.back() % kRunLength != 0)
    return "the last loop is not whole blocks";
  return "";
}

struct ProducerQuantizeToGPU : OpConversionPattern<QuantizeOp> {
  ProducerQuantizeToGPU(const TypeConverter &converter, MLIRContext *ctx,
                        const ::nvfp4::target::ChipInfo &chip)
      : OpConversionPattern(converter, ctx, /*benefit=*/2), chip(chip) {}

  LogicalResult
  matchAndRewrite(QuantizeOp op, OneToNOpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    LinalgKernelPlan plan;
    if (std::string why = unfusableReason(op, plan); !why.empty())
      return rewriter.notifyMatchFailure(op, why);
    linalg::LinalgOp producer = plan.op;
    if (failed(checkTopLevel(producer, rewriter)))
      return failure();
    Location loc = op.getLoc();
    auto module = op->getParentOfType<ModuleOp>();
    FailureOr<std::pair<Value, Value>> parts = allocateQuantizedParts(
        rewriter, loc, *getTypeConverter(), op.getResult().getType());
    if (failed(parts))
      return rewriter.notifyMatchFailure(op, "unconvertible result type");
    auto [codes, scales] = *parts;
    // The result's amax part is the given amax's buffer; the kernel reads
    // the tensor scale from it.
    Value amax = givenAmaxBuffer(rewriter, loc, adaptor.getAmax().front());

    // Arguments: codes, scales, amax, then the producer's operands in
    // emitBody's layout (as emitLinalgKernel lays them out after its
    // outputs).
    SmallVector<Value> args = {flatten(rewriter, loc, codes),
                               flatten(rewriter, loc, scales), amax};
    int64_t firstInput = args.size();
    auto addBuffer = [&](Value tensor) {
      auto tensorType = cast<RankedTensorType>(tensor.getType());
      Value buffer = bufferization::ToBufferOp::create(
          rewriter, loc,
          MemRefType::get(tensorType.getShape(), tensorType.getElementType()),
          tensor, /*readOnly=*/true);
      args.push_back(flatten(rewriter, loc, buffer));
    };
    for (OpOperand *input : producer.getDpsInputOperands()) {
      if (isa<RankedTensorType>(input->get().getType()))
        addBuffer(input->get());
      else
        args.push_back(input->get());
    }
    for (Value t : plan.capturedTensors)
      addBuffer(t);
    for (Value s : plan.capturedScalars)
      args.push_back(s);
    SmallVector<Type> argTypes;
    for (Value a : args)
      argTypes.push_back(a.getType());

    // Points a chunk: the elementwise kernel's vector width, which divides
    // the last loop's range (a power of two of at most 16 bytes an operand).
    int64_t width = std::min(elementwiseVectorWidth(plan), kRunLength);
    int64_t runs = product(plan.ranges) / kRunLength;
    std::string name = plan.kernelName() + "_quantize_1x16_rn";
    gpu::GPUFuncOp kernel = getOrCreateKernel(
        module, name, argTypes, kThreadsPerBlock,
        [&](OpBuilder &b, Location l, ValueRange kargs) {
          IndexMath m{b, l};
          ScalarBuilder s(b, l);
          ScalarBuilder::TensorScale scale =
              s.tensorScale(loadAmax(b, l, kargs[2]));
          Value codeWords = codesAsWords(b, l, kargs[0]);
          Value stride = arith::MulIOp::create(
              b, l, gpu::GridDimOp::create(b, l, gpu::Dimension::x),
              m.c(kThreadsPerBlock));
          auto loop = scf::ForOp::create(b, l, globalThreadIndex(b, l),
                                         m.c(runs), stride);
          OpBuilder::InsertionGuard g(b);
          b.setInsertionPointToStart(loop.getBody());
          Value run = loop.getInductionVar();
          // The run's points, chunk by chunk: chunks of `width` points are
          // numbered in row-major order, so run r is chunks r * (16 / width)
          // and the next ones.
          SmallVector<Value> values;
          int64_t chunks = kRunLength / width;
          for (int64_t c = 0; c < chunks; ++c) {
            Value chunk = m.add(m.mul(run, chunks), m.c(c));
            for (const SmallVector<Value> &point :
                 emitElementwisePoints(b, l, plan, kargs, firstInput, chunk,
                                       width, /*store=*/false))
              values.push_back(s.toF32(point[0]));
          }
          QuantizedRun q = quantizeRunNearestEven(b, l, values, scale, chip);
          Value words = vector::FromElementsOp::create(
              b, l, VectorType::get({2}, b.getI32Type()),
              ValueRange{q.words[0], q.words[1]});
          vector::StoreOp::create(b, l, words, codeWords,
                                  ValueRange{m.mul(run, 2)},
                                  /*nontemporal=*/false, llvm::MaybeAlign(8));
          memref::StoreOp::create(b, l, q.scaleCode, kargs[1],
                                  ValueRange{run});
        });
    int64_t multiprocessors = chip.multiprocessors ? chip.multiprocessors : 1;
    int64_t threads = std::min<int64_t>(
        llvm::alignTo(runs, kThreadsPerBlock),
        multiprocessors * kBlocksPerMultiprocessor * kThreadsPerBlock);
    launchKernel(rewriter, loc, kernel, threads, kThreadsPerBlock, args);
    rewriter.replaceOpWithMultiple(op, {{codes, scales, amax}});
    rewriter.eraseOp(producer);
    return success();
  }

  const ::nvfp4::target::ChipInfo &chip;
};

} // namespace

void mlir::nvfp4::kernels::populateProducerQuantizeToGPUPatterns(
    const TypeConverter &converter, RewritePatternSet &patterns,
    const ::nvfp4::target::ChipInfo &chip) {
  patterns.add<ProducerQuantizeToGPU>(converter, patterns.getContext(), chip);
}
