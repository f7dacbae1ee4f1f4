//===- TransposeKernels.cpp - nvfp4.transpose on the GPU ------------------===//
//
// Part of the nvfp4 project.
//
// nvfp4.transpose of a 16x16-block tensor with linear scales: a block of
// 256 threads takes 4 x 4 tiles, half warp h tile (h / 4, h % 4), lane i of
// it row i of the tile's codes (8 bytes); the 16 lanes transpose the tile's
// nibbles among themselves (transposeNibbles16) and lane i stores column i
// as row i of the transposed tile; the first lane moves the tile's scale.
// The amax buffer is shared with the input (buffers are never written
// after their producing kernel). A transpose of a quantization made in
// the same program never gets here: the 16x16 quantize kernel writes both
// copies (QuantizeKernels.cpp).
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
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Transforms/DialectConversion.h"

using namespace mlir;
using namespace mlir::nvfp4;
using namespace mlir::nvfp4::kernels;

/// The transpose kernel for `type` (the input type): arguments are the flat
/// input codes and scales and the flat output codes and scales.
static gpu::GPUFuncOp buildTransposeKernel(ModuleOp module,
                                           BlockScaledTensorType type,
                                           int64_t &blocks) {
  MLIRContext *ctx = module.getContext();
  int64_t count = product(type.getShape());
  int64_t rows = type.getRows(), cols = type.getCols();
  int64_t tileRows = count / cols / 16, tileCols = cols / 16;
  int64_t regionCols = llvm::divideCeil(tileCols, 4);
  blocks = llvm::divideCeil(tileRows, 4) * regionCols;
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
        Value region = gpu::BlockIdOp::create(b, loc, gpu::Dimension::x);
        Value tid = gpu::ThreadIdOp::create(b, loc, gpu::Dimension::x);
        Value halfWarp = m.div(tid, 16), rowInTile = m.rem(tid, 16);
        Value tileRow =
            m.add(m.mul(m.div(region, regionCols), 4), m.div(halfWarp, 4));
        Value tileCol =
            m.add(m.mul(m.rem(region, regionCols), 4), m.rem(halfWarp, 4));
        // Lanes of tiles past the edge transpose tile (0, 0) with the rest
        // of their warp and store nothing.
        Value valid = arith::AndIOp::create(b, loc, m.lt(tileRow, tileRows),
                                            m.lt(tileCol, tileCols));
        tileRow = arith::SelectOp::create(b, loc, valid, tileRow, m.c(0));
        tileCol = arith::SelectOp::create(b, loc, valid, tileCol, m.c(0));
        Value row = m.add(m.mul(tileRow, 16), rowInTile);
        Value inWords = codesAsWords(b, loc, args[0]);
        Value outWords = codesAsWords(b, loc, args[2]);
        auto wordPair = VectorType::get({2}, b.getI32Type());
        Value loaded = vector::LoadOp::create(
            b, loc, wordPair, inWords,
            ValueRange{m.add(m.mul(row, cols / 8), m.mul(tileCol, 2))},
            /*nontemporal=*/false, llvm::Align(8));
        std::array<Value, 2> words = {
            vector::ExtractOp::create(b, loc, loaded, ArrayRef<int64_t>{0}),
            vector::ExtractOp::create(b, loc, loaded, ArrayRef<int64_t>{1})};
        Value lane = arith::IndexCastUIOp::create(
            b, loc, b.getI32Type(),
            gpu::LaneIdOp::create(b, loc, /*upperBound=*/nullptr));
        std::array<Value, 2> columns =
            transposeNibbles16(b, loc, words, lane);
        auto ifValid = scf::IfOp::create(b, loc, valid, false);
        OpBuilder::InsertionGuard guard(b);
        b.setInsertionPointToStart(ifValid.thenBlock());
        auto [word, scale] =
            transposedTilePlace(m, tileRow, tileCol, rowInTile, rows, cols);
        vector::StoreOp::create(
            b, loc,
            vector::FromElementsOp::create(b, loc, wordPair,
                                           ValueRange{columns[0], columns[1]}),
            outWords, ValueRange{word}, /*nontemporal=*/false, llvm::Align(8));
        auto ifFirst = scf::IfOp::create(b, loc, m.eq(rowInTile, 0), false);
        b.setInsertionPointToStart(ifFirst.thenBlock());
        Value source = m.add(m.mul(tileRow, tileCols), tileCol);
        memref::StoreOp::create(
            b, loc, memref::LoadOp::create(b, loc, args[1], source), args[3],
            scale);
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
    int64_t blocks = 0;
    gpu::GPUFuncOp kernel = buildTransposeKernel(module, inputType, blocks);
    launchKernel(rewriter, loc, kernel, blocks * kThreadsPerBlock,
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
