//===- TransposeKernels.cpp - nvfp4.transpose on the GPU ------------------===//
//
// Part of the nvfp4 project.
//
// nvfp4.transpose of a 16x16-block tensor with linear scales: one thread per
// output code byte gathers the two nibbles of (row 2p, col c) and
// (row 2p+1, col c) of the input into byte (col c, pair p) of the output;
// the first batch*(rows/16)*(cols/16) threads also move one tile scale.
// The amax buffer is shared with the input (buffers are never written
// after their producing kernel).
//
//===----------------------------------------------------------------------===//

#include "KernelBuilder.h"
#include "KernelUtils.h"
#include "nvfp4/Conversion/NVFP4ToGPU/NVFP4ToGPU.h"
#include "nvfp4/Dialect/NVFP4/IR/NVFP4Ops.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Transforms/DialectConversion.h"

using namespace mlir;
using namespace mlir::nvfp4;
using namespace mlir::nvfp4::kernels;

/// The transpose kernel for `type` (the input type): arguments are the flat
/// input codes and scales and the flat output codes and scales.
static gpu::GPUFuncOp buildTransposeKernel(ModuleOp module,
                                           BlockScaledTensorType type) {
  MLIRContext *ctx = module.getContext();
  int64_t count = product(type.getShape());
  int64_t rows = type.getRows(), cols = type.getCols();
  int64_t matrix = rows * cols;
  int64_t scaleRows = rows / 16, scaleCols = cols / 16;
  int64_t scaleCount = count / 256;
  auto i8 = IntegerType::get(ctx, 8);
  SmallVector<Type> argTypes = {MemRefType::get({count / 2}, i8),
                                MemRefType::get({scaleCount}, i8),
                                MemRefType::get({count / 2}, i8),
                                MemRefType::get({scaleCount}, i8)};
  std::string name = "nvfp4_transpose_" + shapeName(type.getShape()) + "_16x16";
  return getOrCreateKernel(
      module, name, argTypes, kThreadsPerBlock,
      [&](OpBuilder &b, Location loc, ValueRange args) {
        IndexMath m{b, loc};
        Value tid = globalThreadIndex(b, loc);
        auto ifCodes = scf::IfOp::create(b, loc, m.lt(tid, count / 2), false);
        {
          OpBuilder::InsertionGuard guard(b);
          b.setInsertionPointToStart(ifCodes.thenBlock());
          // Output byte tid is (batch, col, pair) of the [cols, rows / 2]
          // packed output matrix.
          Value batch = m.div(tid, matrix / 2);
          Value inMatrix = m.rem(tid, matrix / 2);
          Value col = m.div(inMatrix, rows / 2);
          Value pair = m.rem(inMatrix, rows / 2);
          Value rowBase = m.add(m.mul(batch, matrix / 2),
                                m.mul(pair, 2 * (cols / 2)));
          Value first = m.add(rowBase, m.div(col, 2));
          Value second = m.add(first, m.c(cols / 2));
          // Input (row, col) is the low nibble of its byte for even col.
          Value shift = arith::IndexCastOp::create(
              b, loc, i8, m.mul(m.rem(col, 2), 4));
          Value mask = arith::ConstantIntOp::create(b, loc, i8, 0xF);
          auto nibble = [&](Value index) -> Value {
            Value byte = memref::LoadOp::create(b, loc, args[0], index);
            return arith::AndIOp::create(
                b, loc, arith::ShRUIOp::create(b, loc, byte, shift), mask);
          };
          Value low = nibble(first);
          Value high = arith::ShLIOp::create(
              b, loc, nibble(second),
              arith::ConstantIntOp::create(b, loc, i8, 4));
          Value packed = arith::OrIOp::create(b, loc, low, high);
          memref::StoreOp::create(b, loc, packed, args[2], tid);
        }
        auto ifScale = scf::IfOp::create(b, loc, m.lt(tid, scaleCount), false);
        OpBuilder::InsertionGuard guard(b);
        b.setInsertionPointToStart(ifScale.thenBlock());
        // Output scale tid is (batch, tile col j, tile row i) of the
        // [cols / 16, rows / 16] output scale matrix.
        int64_t tiles = scaleRows * scaleCols;
        Value batch = m.div(tid, tiles);
        Value inMatrix = m.rem(tid, tiles);
        Value j = m.div(inMatrix, scaleRows);
        Value i = m.rem(inMatrix, scaleRows);
        Value source =
            m.add(m.mul(batch, tiles), m.add(m.mul(i, scaleCols), j));
        Value scale = memref::LoadOp::create(b, loc, args[1], source);
        memref::StoreOp::create(b, loc, scale, args[3], tid);
      });
}

namespace {
struct TransposeToGPU : OpConversionPattern<TransposeOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(TransposeOp op, OneToNOpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    BlockScaledTensorType inputType = op.getInput().getType();
    if (!inputType.isTwoDimensionalBlock() ||
        inputType.getLayout() != ScaleLayout::Linear)
      return rewriter.notifyMatchFailure(op, "not 16x16 with linear scales");
    SmallVector<Type> partTypes;
    if (failed(getTypeConverter()->convertType(op.getResult().getType(),
                                               partTypes)) ||
        partTypes.size() != 3)
      return rewriter.notifyMatchFailure(op, "unconvertible result type");
    Location loc = op.getLoc();
    ModuleOp module = op->getParentOfType<ModuleOp>();
    ValueRange parts = adaptor.getInput();
    Value codes = allocDevice(rewriter, loc, cast<MemRefType>(partTypes[0]),
                              /*zeroFill=*/false);
    Value scales = allocDevice(rewriter, loc, cast<MemRefType>(partTypes[1]),
                               /*zeroFill=*/false);
    gpu::GPUFuncOp kernel = buildTransposeKernel(module, inputType);
    launchKernel(rewriter, loc, kernel, product(inputType.getShape()) / 2,
                 kThreadsPerBlock,
                 {flatten(rewriter, loc, parts[0]),
                  flatten(rewriter, loc, parts[1]),
                  flatten(rewriter, loc, codes),
                  flatten(rewriter, loc, scales)});
    rewriter.replaceOpWithMultiple(op, {{codes, scales, parts[2]}});
    return success();
  }
};
} // namespace

void mlir::nvfp4::populateTransposeToGPUPatterns(
    const TypeConverter &converter, RewritePatternSet &patterns) {
  patterns.add<TransposeToGPU>(converter, patterns.getContext());
}
