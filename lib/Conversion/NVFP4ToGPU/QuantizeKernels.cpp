//===- QuantizeKernels.cpp - amax, quantize, hadamard, dequantize kernels -===//
//
// Part of the nvfp4 project.
//
// Elementwise NVFP4 kernels. Each thread owns one run of 16 consecutive
// elements of a row (one 1x16 block, one Philox group, one row of a 16x16
// tile), loads it with one vector load and computes in registers; the
// arithmetic is the ScalarBuilder's, i.e. lib/Numerics's order of FP32
// operations, so the bytes equal the reference lowering's. Only the final
// E2M1 rounding differs per chip: the hardware cvt where it exists,
// emulation elsewhere.
//
//===----------------------------------------------------------------------===//

#include "KernelBuilder.h"
#include "KernelUtils.h"
#include "nvfp4/Conversion/NVFP4ToGPU/NVFP4ToGPU.h"
#include "nvfp4/Conversion/Utils/ElementBuilders.h"
#include "nvfp4/Dialect/NVFP4/IR/NVFP4Ops.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "llvm/ADT/bit.h"
#include "llvm/Support/MathExtras.h"

using namespace mlir;
using namespace mlir::nvfp4;
using namespace mlir::nvfp4::kernels;
using ::nvfp4::target::ChipInfo;
using ::nvfp4::target::Instruction;

//===----------------------------------------------------------------------===//
// Index arithmetic helpers
//===----------------------------------------------------------------------===//

namespace {

/// Where thread `segment` (one 16-element row run) sits in a
/// [rows, cols] matrix (batch folded into rows) quantized with
/// `blockRows` x 16 blocks. For 16x16 blocks the 16 rows of a tile go to 16
/// consecutive threads so that they can reduce the tile amax by shuffles.
struct SegmentPosition {
  Value row;       ///< flattened row
  Value colBlock;  ///< column block (cols / 16 of them)
  Value rowInTile; ///< 0..15 (16x16 blocks only)
  Value tileRow;   ///< row / 16 (16x16 blocks only)
};

SegmentPosition locateSegment(IndexMath &m, Value segment, int64_t colBlocks,
                              int64_t blockRows) {
  if (blockRows == 1)
    return {m.div(segment, colBlocks), m.rem(segment, colBlocks), Value(),
            Value()};
  Value tile = m.div(segment, 16), rowInTile = m.rem(segment, 16);
  Value tileRow = m.div(tile, colBlocks);
  return {m.add(m.mul(tileRow, 16), rowInTile), m.rem(tile, colBlocks),
          rowInTile, tileRow};
}

/// Loads 16 elements at `base` as f32 values.
SmallVector<Value> loadSixteen(OpBuilder &b, Location loc, Value memref,
                               Value base) {
  Type elementType = cast<MemRefType>(memref.getType()).getElementType();
  Value vector = vector::LoadOp::create(
      b, loc, VectorType::get({16}, elementType), memref, base);
  ScalarBuilder s(b, loc);
  SmallVector<Value> values;
  for (int64_t j = 0; j < 16; ++j)
    values.push_back(
        s.toF32(vector::ExtractOp::create(b, loc, vector, ArrayRef<int64_t>{j})));
  return values;
}

/// Maximum over the 16 lanes of a half warp (xor butterfly).
Value halfWarpMax(OpBuilder &b, Location loc, Value value) {
  for (int32_t offset : {1, 2, 4, 8}) {
    Value other = gpu::ShuffleOp::create(b, loc, value, offset, /*width=*/32,
                                         gpu::ShuffleMode::XOR)
                      .getShuffleResult();
    value = arith::MaxNumFOp::create(b, loc, value, other);
  }
  return value;
}

/// The 8 packed bytes (even element in the low nibble) of 16 scaled values,
/// rounded to nearest even.
SmallVector<Value> packNearestEven(OpBuilder &b, Location loc,
                                   ArrayRef<Value> scaled,
                                   const ChipInfo &chip) {
  ScalarBuilder s(b, loc);
  SmallVector<Value> bytes;
  for (int64_t j = 0; j < 8; ++j) {
    Value even = scaled[2 * j], odd = scaled[2 * j + 1];
    if (chip.has(Instruction::CvtE2M1x2)) {
      // cvt.rn.satfinite.e2m1x2.f32 puts its first operand in the high
      // nibble.
      bytes.push_back(NVVM::ConvertF32x2ToF4x2Op::create(
          b, loc, b.getI8Type(), odd, even, /*relu=*/false,
          b.getType<Float4E2M1FNType>()));
      continue;
    }
    Value high =
        arith::ShLIOp::create(b, loc, s.encodeE2M1(odd), s.i8(4));
    bytes.push_back(arith::OrIOp::create(b, loc, s.encodeE2M1(even), high));
  }
  return bytes;
}

/// The 8 packed bytes of 16 scaled values, rounded stochastically with the
/// Philox words of their group.
SmallVector<Value> packStochastic(OpBuilder &b, Location loc,
                                  ArrayRef<Value> scaled,
                                  std::array<Value, 4> words,
                                  const ChipInfo &chip) {
  ScalarBuilder s(b, loc);
  SmallVector<Value> bytes;
  if (chip.has(Instruction::CvtRsE2M1x4)) {
    // cvt.rs.satfinite.e2m1x4.f32 d, {a, b, e, f}, rbits packs a into bits
    // 15:12 ... f into 3:0, so elements go in reverse; word q holds the
    // random bits of elements 4q..4q+3.
    for (int64_t q = 0; q < 4; ++q) {
      Value quad = vector::FromElementsOp::create(
          b, loc, VectorType::get({4}, b.getF32Type()),
          ValueRange{scaled[4 * q + 3], scaled[4 * q + 2], scaled[4 * q + 1],
                     scaled[4 * q]});
      Value packed = NVVM::ConvertF32x4ToF4x4Op::create(
          b, loc, b.getI16Type(), quad, words[q], /*relu=*/false,
          b.getType<Float4E2M1FNType>());
      bytes.push_back(arith::TruncIOp::create(b, loc, b.getI8Type(), packed));
      bytes.push_back(arith::TruncIOp::create(
          b, loc, b.getI8Type(),
          arith::ShRUIOp::create(
              b, loc, packed,
              arith::ConstantOp::create(b, loc, b.getI16IntegerAttr(8)))));
    }
    return bytes;
  }
  SmallVector<Value> codes;
  for (int64_t j = 0; j < 16; ++j)
    codes.push_back(s.encodeE2M1Stochastic(
        scaled[j], s.randomByte(words, s.i32(j))));
  for (int64_t j = 0; j < 8; ++j)
    bytes.push_back(arith::OrIOp::create(
        b, loc, codes[2 * j],
        arith::ShLIOp::create(b, loc, codes[2 * j + 1], s.i8(4))));
  return bytes;
}

//===----------------------------------------------------------------------===//
// Kernels
//===----------------------------------------------------------------------===//

/// Grid-stride max |x| over `x`, finished by warp shuffles and one atomic
/// integer max per warp on the FP32 bits (non-negative floats order like
/// their bits; NaN never enters, maxnumf drops it).
gpu::GPUFuncOp buildAmaxKernel(ModuleOp module, MemRefType input,
                               int64_t &threads) {
  int64_t count = input.getNumElements();
  // 16-byte vector loads when the size allows (every quantizable tensor:
  // its last dimension is a multiple of 16), elements one by one otherwise.
  Type elementType = input.getElementType();
  int64_t width = 16 / (elementType.getIntOrFloatBitWidth() / 8);
  if (count % width != 0)
    width = 1;
  int64_t chunks = count / width;
  // About four chunks per thread, at most 1024 blocks (a full H200).
  threads = std::min<int64_t>(
      llvm::alignTo(llvm::divideCeil(chunks, 4), kThreadsPerBlock),
      1024 * kThreadsPerBlock);
  int64_t totalThreads = threads;
  std::string name = "nvfp4_amax_" + std::to_string(count) + "x" +
                     typeName(elementType);
  Type amaxType = MemRefType::get({1}, IntegerType::get(module.getContext(), 32));
  return getOrCreateKernel(
      module, name, {input, amaxType}, kThreadsPerBlock,
      [&](OpBuilder &b, Location loc, ValueRange args) {
        ScalarBuilder s(b, loc);
        IndexMath m{b, loc};
        Value tid = globalThreadIndex(b, loc);
        auto loop = scf::ForOp::create(
            b, loc, tid, m.c(chunks), m.c(totalThreads),
            ValueRange{s.f32(0.0f)},
            [&](OpBuilder &nb, Location nl, Value chunk, ValueRange acc) {
              ScalarBuilder ns(nb, nl);
              IndexMath nm{nb, nl};
              SmallVector<Value> values;
              if (width == 1) {
                values.push_back(
                    memref::LoadOp::create(nb, nl, args[0], ValueRange{chunk}));
              } else {
                Value vector = vector::LoadOp::create(
                    nb, nl, VectorType::get({width}, elementType), args[0],
                    nm.mul(chunk, width));
                for (int64_t j = 0; j < width; ++j)
                  values.push_back(vector::ExtractOp::create(
                      nb, nl, vector, ArrayRef<int64_t>{j}));
              }
              Value max = acc[0];
              for (Value x : values)
                max = arith::MaxNumFOp::create(
                    nb, nl, max, math::AbsFOp::create(nb, nl, ns.toF32(x)));
              scf::YieldOp::create(nb, nl, max);
            });
        Value max = loop.getResult(0);
        for (int32_t offset : {16, 8, 4, 2, 1}) {
          Value other = gpu::ShuffleOp::create(b, loc, max, offset, 32,
                                               gpu::ShuffleMode::XOR)
                            .getShuffleResult();
          max = arith::MaxNumFOp::create(b, loc, max, other);
        }
        Value lane = m.rem(gpu::ThreadIdOp::create(b, loc, gpu::Dimension::x), 32);
        auto ifLeader = scf::IfOp::create(b, loc, m.eq(lane, 0),
                                          /*withElseRegion=*/false);
        OpBuilder::InsertionGuard guard(b);
        b.setInsertionPointToStart(ifLeader.thenBlock());
        Value bits = arith::BitcastOp::create(b, loc, b.getI32Type(), max);
        memref::AtomicRMWOp::create(b, loc, arith::AtomicRMWKind::maxs, bits,
                                    args[1], ValueRange{m.c(0)});
      });
}

/// Quantization of a flattened tensor of `type`'s shape.
gpu::GPUFuncOp buildQuantizeKernel(ModuleOp module, BlockScaledTensorType type,
                                   Type elementType, bool stochastic,
                                   const ChipInfo &chip) {
  MLIRContext *ctx = module.getContext();
  int64_t count = product(type.getShape());
  int64_t cols = type.getCols(), colBlocks = cols / 16;
  int64_t blockRows = type.getBlockRows();
  int64_t segments = count / 16;
  auto i8 = IntegerType::get(ctx, 8);
  SmallVector<Type> argTypes = {
      MemRefType::get({count}, elementType),
      MemRefType::get({1}, IntegerType::get(ctx, 32)),
      MemRefType::get({count / 2}, i8),
      MemRefType::get({product(type.getScalesType().getShape())}, i8)};
  if (stochastic)
    argTypes.push_back(IntegerType::get(ctx, 64));
  std::string name =
      "nvfp4_quantize_" + shapeName(type.getShape()) + "x" +
      typeName(elementType) + "_" + std::to_string(blockRows) + "x16" +
      (stochastic ? "_sr" : "_rn") +
      (type.getLayout() == ScaleLayout::Linear ? "" : "_swizzled");
  return getOrCreateKernel(
      module, name, argTypes, kThreadsPerBlock,
      [&](OpBuilder &b, Location loc, ValueRange args) {
        ScalarBuilder s(b, loc);
        IndexMath m{b, loc};
        // Threads past the end compute on segment 0 and skip the stores: all
        // lanes must take part in the tile shuffles.
        Value tid = globalThreadIndex(b, loc);
        Value valid = m.lt(tid, segments);
        Value segment = arith::SelectOp::create(b, loc, valid, tid, m.c(0));
        SegmentPosition pos = locateSegment(m, segment, colBlocks, blockRows);
        Value base = m.add(m.mul(pos.row, cols), m.mul(pos.colBlock, 16));

        SmallVector<Value> values = loadSixteen(b, loc, args[0], base);
        ScalarBuilder::TensorScale scale =
            s.tensorScale(loadAmax(b, loc, args[1]));
        Value blockAmax = s.f32(0.0f);
        for (Value v : values)
          blockAmax = arith::MaxNumFOp::create(
              b, loc, blockAmax, math::AbsFOp::create(b, loc, v));
        if (blockRows != 1)
          blockAmax = halfWarpMax(b, loc, blockAmax);
        ScalarBuilder::BlockScale block = s.blockScale(blockAmax, scale);

        SmallVector<Value> scaled;
        for (Value v : values)
          scaled.push_back(arith::MulFOp::create(b, loc, v, block.encode));
        SmallVector<Value> bytes;
        if (stochastic) {
          // Philox group = linear index of the first element / 16.
          Value group = arith::IndexCastUIOp::create(b, loc, b.getI64Type(),
                                                     m.div(base, 16));
          bytes = packStochastic(b, loc, scaled,
                                 s.philoxGroup(args[4], group), chip);
        } else {
          bytes = packNearestEven(b, loc, scaled, chip);
        }

        auto ifValid = scf::IfOp::create(b, loc, valid, false);
        OpBuilder::InsertionGuard guard(b);
        b.setInsertionPointToStart(ifValid.thenBlock());
        Value packed = vector::FromElementsOp::create(
            b, loc, VectorType::get({8}, b.getI8Type()), bytes);
        vector::StoreOp::create(b, loc, packed, args[2], m.div(base, 2));
        Value offset = scaleOffset(m, type, pos.row, pos.colBlock);
        bool onePerTile = blockRows != 1 && type.getLayout() == ScaleLayout::Linear;
        if (onePerTile) {
          auto ifFirst = scf::IfOp::create(b, loc, m.eq(pos.rowInTile, 0), false);
          b.setInsertionPointToStart(ifFirst.thenBlock());
        }
        memref::StoreOp::create(b, loc, block.code, args[3], ValueRange{offset});
      });
}

/// 16-point RHT of each 16-element run, sums in row order from +0.0.
gpu::GPUFuncOp buildHadamardKernel(ModuleOp module, RankedTensorType type,
                                   uint32_t signMask) {
  int64_t count = type.getNumElements();
  MemRefType flat = MemRefType::get({count}, type.getElementType());
  std::string name = "nvfp4_hadamard_" + std::to_string(count) + "x" +
                     typeName(type.getElementType()) + "_mask" +
                     std::to_string(signMask);
  return getOrCreateKernel(
      module, name, {flat, flat}, kThreadsPerBlock,
      [&](OpBuilder &b, Location loc, ValueRange args) {
        ScalarBuilder s(b, loc);
        IndexMath m{b, loc};
        Value tid = globalThreadIndex(b, loc);
        Value valid = m.lt(tid, count / 16);
        Value chunk = arith::SelectOp::create(b, loc, valid, tid, m.c(0));
        Value base = m.mul(chunk, 16);
        SmallVector<Value> v = loadSixteen(b, loc, args[0], base);
        SmallVector<Value> out;
        for (unsigned col = 0; col < 16; ++col) {
          Value sum = s.f32(0.0f);
          for (unsigned row = 0; row < 16; ++row) {
            bool negative = llvm::popcount(row & col) % 2 != 0;
            if ((signMask >> row) & 1u)
              negative = !negative;
            Value term = arith::MulFOp::create(b, loc, v[row],
                                               s.f32(negative ? -0.25f : 0.25f));
            sum = arith::AddFOp::create(b, loc, sum, term);
          }
          out.push_back(s.fromF32(sum, type.getElementType()));
        }
        auto ifValid = scf::IfOp::create(b, loc, valid, false);
        OpBuilder::InsertionGuard guard(b);
        b.setInsertionPointToStart(ifValid.thenBlock());
        Value vector = vector::FromElementsOp::create(
            b, loc, VectorType::get({16}, type.getElementType()), out);
        vector::StoreOp::create(b, loc, vector, args[1], base);
      });
}

/// (e2m1 * s_b) * amax / 2688 for each element, rounded to the result type.
gpu::GPUFuncOp buildDequantizeKernel(ModuleOp module,
                                     BlockScaledTensorType type,
                                     Type resultElementType) {
  MLIRContext *ctx = module.getContext();
  int64_t count = product(type.getShape());
  int64_t cols = type.getCols(), colBlocks = cols / 16;
  auto i8 = IntegerType::get(ctx, 8);
  SmallVector<Type> argTypes = {
      MemRefType::get({count / 2}, i8),
      MemRefType::get({product(type.getScalesType().getShape())}, i8),
      MemRefType::get({1}, IntegerType::get(ctx, 32)),
      MemRefType::get({count}, resultElementType)};
  std::string name = "nvfp4_dequantize_" + shapeName(type.getShape()) + "_" +
                     std::to_string(type.getBlockRows()) + "x16" +
                     (type.getLayout() == ScaleLayout::Linear ? "" : "_swizzled") +
                     "_to_" + typeName(resultElementType);
  return getOrCreateKernel(
      module, name, argTypes, kThreadsPerBlock,
      [&](OpBuilder &b, Location loc, ValueRange args) {
        ScalarBuilder s(b, loc);
        IndexMath m{b, loc};
        Value tid = globalThreadIndex(b, loc);
        Value valid = m.lt(tid, count / 16);
        Value segment = arith::SelectOp::create(b, loc, valid, tid, m.c(0));
        Value row = m.div(segment, colBlocks), colBlock = m.rem(segment, colBlocks);
        Value base = m.add(m.mul(row, cols), m.mul(colBlock, 16));
        Value factor = arith::DivFOp::create(b, loc, loadAmax(b, loc, args[2]),
                                             s.f32(2688.0f));
        Value scale = s.decodeE4M3(memref::LoadOp::create(
            b, loc, args[1], ValueRange{scaleOffset(m, type, row, colBlock)}));
        Value packed = vector::LoadOp::create(
            b, loc, VectorType::get({8}, b.getI8Type()), args[0], m.div(base, 2));
        SmallVector<Value> out;
        for (int64_t j = 0; j < 16; ++j) {
          Value byte = vector::ExtractOp::create(b, loc, packed,
                                                 ArrayRef<int64_t>{j / 2});
          Value code = j % 2 ? arith::ShRUIOp::create(b, loc, byte, s.i8(4))
                             : byte;
          Value value = arith::MulFOp::create(
              b, loc,
              arith::MulFOp::create(b, loc, s.decodeE2M1(code), scale), factor);
          out.push_back(s.fromF32(value, resultElementType));
        }
        auto ifValid = scf::IfOp::create(b, loc, valid, false);
        OpBuilder::InsertionGuard guard(b);
        b.setInsertionPointToStart(ifValid.thenBlock());
        Value vector = vector::FromElementsOp::create(
            b, loc, VectorType::get({16}, resultElementType), out);
        vector::StoreOp::create(b, loc, vector, args[3], base);
      });
}

//===----------------------------------------------------------------------===//
// Host-side patterns
//===----------------------------------------------------------------------===//

/// A tensor operand as a flat device buffer.
Value tensorToFlatBuffer(OpBuilder &b, Location loc, Value tensor) {
  auto type = cast<RankedTensorType>(tensor.getType());
  Value buffer = bufferization::ToBufferOp::create(
      b, loc, MemRefType::get(type.getShape(), type.getElementType()), tensor,
      /*readOnly=*/true);
  return flatten(b, loc, buffer);
}

/// Computes the amax of the flat buffer `input` into a new device buffer.
Value launchAmax(OpBuilder &b, Location loc, ModuleOp module, Value input) {
  Value amax = allocDevice(
      b, loc, MemRefType::get({1}, b.getI32Type()), /*zeroFill=*/true);
  int64_t threads = 0;
  gpu::GPUFuncOp kernel =
      buildAmaxKernel(module, cast<MemRefType>(input.getType()), threads);
  launchKernel(b, loc, kernel, threads, kThreadsPerBlock, {input, amax});
  return amax;
}

struct AmaxToGPU : OpConversionPattern<AmaxOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(AmaxOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    ModuleOp module = op->getParentOfType<ModuleOp>();
    Value input = tensorToFlatBuffer(rewriter, loc, adaptor.getInput());
    Value amax = launchAmax(rewriter, loc, module, input);
    Value bits = memref::LoadOp::create(rewriter, loc, amax,
                                        ValueRange{indexConstant(rewriter, loc, 0)});
    rewriter.replaceOpWithNewOp<arith::BitcastOp>(op, rewriter.getF32Type(), bits);
    return success();
  }
};

struct QuantizeToGPU : OpConversionPattern<QuantizeOp> {
  QuantizeToGPU(const TypeConverter &converter, MLIRContext *ctx,
                const ChipInfo &chip)
      : OpConversionPattern(converter, ctx), chip(chip) {}

  LogicalResult
  matchAndRewrite(QuantizeOp op, OneToNOpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    ModuleOp module = op->getParentOfType<ModuleOp>();
    BlockScaledTensorType type = op.getResult().getType();
    Value input = tensorToFlatBuffer(rewriter, loc, adaptor.getInput().front());

    Value amax;
    if (adaptor.getAmax().empty()) {
      amax = launchAmax(rewriter, loc, module, input);
    } else {
      // A given amax is written into the device buffer the kernel reads.
      amax = allocDevice(rewriter, loc,
                         MemRefType::get({1}, rewriter.getI32Type()), false);
      Value bits = arith::BitcastOp::create(rewriter, loc, rewriter.getI32Type(),
                                            adaptor.getAmax().front());
      gpu::MemsetOp::create(rewriter, loc, Type(), ValueRange(), amax, bits);
    }

    SmallVector<Type> partTypes;
    if (failed(getTypeConverter()->convertType(type, partTypes)))
      return rewriter.notifyMatchFailure(op, "unconvertible result type");
    Value codes = allocDevice(rewriter, loc, cast<MemRefType>(partTypes[0]),
                              false);
    // The swizzled layout's padding must read as zero scales.
    Value scales =
        allocDevice(rewriter, loc, cast<MemRefType>(partTypes[1]),
                    /*zeroFill=*/type.getLayout() != ScaleLayout::Linear);

    bool stochastic = op.getRounding() == RoundingMode::Stochastic;
    gpu::GPUFuncOp kernel = buildQuantizeKernel(
        module, type, cast<MemRefType>(input.getType()).getElementType(),
        stochastic, chip);
    SmallVector<Value> args = {input, amax, flatten(rewriter, loc, codes),
                               flatten(rewriter, loc, scales)};
    if (stochastic)
      args.push_back(adaptor.getSeed().front());
    launchKernel(rewriter, loc, kernel, product(type.getShape()) / 16,
                 kThreadsPerBlock, args);
    rewriter.replaceOpWithMultiple(op, {{codes, scales, amax}});
    return success();
  }

  const ChipInfo &chip;
};

struct HadamardToGPU : OpConversionPattern<HadamardOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(HadamardOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto type = cast<RankedTensorType>(op.getType());
    if (!type.hasStaticShape())
      return op.emitOpError("needs a static shape on the GPU path");
    ModuleOp module = op->getParentOfType<ModuleOp>();
    Value input = tensorToFlatBuffer(rewriter, loc, adaptor.getInput());
    Value result = allocDevice(
        rewriter, loc, MemRefType::get(type.getShape(), type.getElementType()),
        false);
    gpu::GPUFuncOp kernel = buildHadamardKernel(module, type, op.getSignMask());
    launchKernel(rewriter, loc, kernel, type.getNumElements() / 16,
                 kThreadsPerBlock, {input, flatten(rewriter, loc, result)});
    rewriter.replaceOpWithNewOp<bufferization::ToTensorOp>(
        op, type, result, /*restrict=*/true, /*writable=*/true);
    return success();
  }
};

struct DequantizeToGPU : OpConversionPattern<DequantizeOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(DequantizeOp op, OneToNOpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    ModuleOp module = op->getParentOfType<ModuleOp>();
    auto resultType = cast<RankedTensorType>(op.getType());
    ValueRange parts = adaptor.getInput();
    Value result = allocDevice(
        rewriter, loc,
        MemRefType::get(resultType.getShape(), resultType.getElementType()),
        false);
    gpu::GPUFuncOp kernel = buildDequantizeKernel(
        module, op.getInput().getType(), resultType.getElementType());
    launchKernel(rewriter, loc, kernel, resultType.getNumElements() / 16,
                 kThreadsPerBlock,
                 {flatten(rewriter, loc, parts[0]),
                  flatten(rewriter, loc, parts[1]), parts[2],
                  flatten(rewriter, loc, result)});
    rewriter.replaceOpWithNewOp<bufferization::ToTensorOp>(
        op, resultType, result, /*restrict=*/true, /*writable=*/true);
    return success();
  }
};
} // namespace

void mlir::nvfp4::populateQuantizeToGPUPatterns(const TypeConverter &converter,
                                                RewritePatternSet &patterns,
                                                const ChipInfo &chip) {
  MLIRContext *ctx = patterns.getContext();
  patterns.add<AmaxToGPU, HadamardToGPU, DequantizeToGPU>(converter, ctx);
  patterns.add<QuantizeToGPU>(converter, ctx, chip);
}
