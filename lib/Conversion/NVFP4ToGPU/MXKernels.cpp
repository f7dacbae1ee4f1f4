//===- MXKernels.cpp - MXFP8 / MXFP4 quantize and dequantize kernels ------===//
//
// Part of the nvfp4 project.
//
// The MX members of the block-scaled family on the GPU (docs/Numerics.md
// section 11): one thread per 1x32 block. It loads the block's 32 elements
// with 16-byte vector loads, takes their amax, the E8M0 scale by the RCEIL
// rule and 2^-e, and converts each scaled element with round to nearest
// even and saturation. The scalar arithmetic is the ScalarBuilder the
// reference lowering uses (mxBlockScale, encodeMXElement, decodeMXElement,
// decodeE8M0) with the format as data, so the bytes equal the CPU path's
// and the numerics library's on every chip: no chip-specific conversion,
// and no tensor scale (the amax part of an MX value is 0).
//
// Codes: MXFP8 one byte per element, MXFP4 two per byte (even element in
// the low nibble, as NVFP4 and Python's `.packed`). Scales: one E8M0 byte per
// block, linear or 128x4-swizzled over (row, column block).
//
// The MX GEMM has two forms. The portable SIMT kernel (one thread per
// output, the block order of section 11.4, bit-exact with the reference)
// runs on every chip. On sm_90a the tensor-core form decodes both operands
// into BF16 scratch with the dequantize kernel below -- E2M1/E4M3/E5M2 x
// 2^k is exact in BF16 over the scale range of section 11.7 -- and
// multiplies with the route's BF16 wgmma GEMM (BF16Gemm.cpp); a rule over
// the shape picks it (kMXTensorCoreMinMultiplyAdds), the mx-gemm option
// forces either. On sm_100a / sm_103a / sm_120a the block-scaled MMAs take
// the MX codes and scales as they are (MXBlockScaledGemm.cpp: tcgen05 /
// mma.sync .kind::mxf8f6f4 and .kind::mxf4), wherever the shape allows.
//
//===----------------------------------------------------------------------===//

#include "GemmPipeline.h"
#include "KernelBuilder.h"
#include "KernelUtils.h"
#include "nvfp4/Conversion/NVFP4ToGPU/NVFP4ToGPU.h"
#include "nvfp4/Conversion/Utils/ElementBuilders.h"
#include "nvfp4/Dialect/NVFP4/IR/NVFP4Ops.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "llvm/Support/MathExtras.h"

using namespace mlir;
using namespace mlir::nvfp4;
using namespace mlir::nvfp4::kernels;

namespace {

constexpr int64_t kMXBlock = kMXBlockSize;

/// Whether the format's codes are E2M1 nibbles (two a byte on the GPU).
bool hasPackedCodes(BlockScaledTensorType type) {
  return isa<Float4E2M1FNType>(type.getElementType());
}

/// Bytes of the codes of one block: 32 (FP8) or 16 (E2M1).
int64_t blockCodeBytes(BlockScaledTensorType type) {
  return hasPackedCodes(type) ? kMXBlock / 2 : kMXBlock;
}

/// Loads `count` elements of `memref` at `base` with 16-byte vector loads
/// (every block starts at a multiple of 32 elements, so at a multiple of
/// 16 bytes of any element type here); returns the scalars.
SmallVector<Value> loadElements(OpBuilder &b, Location loc, Value memref,
                                Value base, int64_t count) {
  IndexMath m{b, loc};
  Type elementType = cast<MemRefType>(memref.getType()).getElementType();
  int64_t width = std::min<int64_t>(
      count, 16 / std::max<int64_t>(1, elementType.getIntOrFloatBitWidth() / 8));
  SmallVector<Value> values;
  for (int64_t first = 0; first < count; first += width) {
    Value vector = vector::LoadOp::create(
        b, loc, VectorType::get({width}, elementType), memref,
        ValueRange{m.add(base, m.c(first))}, /*nontemporal=*/false,
        llvm::Align(std::min<int64_t>(
            16, width * elementType.getIntOrFloatBitWidth() / 8)));
    for (int64_t j = 0; j < width; ++j)
      values.push_back(
          vector::ExtractOp::create(b, loc, vector, ArrayRef<int64_t>{j}));
  }
  return values;
}

/// Stores the scalars `values` (of one type) at `base` with 16-byte vector
/// stores.
void storeElements(OpBuilder &b, Location loc, ArrayRef<Value> values,
                   Value memref, Value base) {
  IndexMath m{b, loc};
  Type elementType = values.front().getType();
  int64_t count = values.size();
  int64_t width = std::min<int64_t>(
      count, 16 / std::max<int64_t>(1, elementType.getIntOrFloatBitWidth() / 8));
  for (int64_t first = 0; first < count; first += width) {
    Value vector = vector::FromElementsOp::create(
        b, loc, VectorType::get({width}, elementType),
        values.slice(first, width));
    vector::StoreOp::create(
        b, loc, vector, memref, ValueRange{m.add(base, m.c(first))},
        /*nontemporal=*/false,
        llvm::Align(std::min<int64_t>(
            16, width * elementType.getIntOrFloatBitWidth() / 8)));
  }
}

/// The kernel name's form of an MX type: "mxfp8_e4m3", "mxfp4_swizzled".
std::string mxName(BlockScaledTensorType type) {
  return stringifyBlockScaledFormat(type.getFormat()).str() +
         (type.getLayout() == ScaleLayout::Linear ? "" : "_swizzled");
}

/// "nvfp4_scaled_matmul_[B x]MxNxK_<format A>_<format B>_to_<C>[_amax]":
/// the MX GEMM's kernel name up to the implementation suffix (`_amax`: the
/// kernel also writes the amax of C, as the NVFP4 GEMMs' "_amax_").
std::string mxMatmulName(BlockScaledTensorType lhs, BlockScaledTensorType rhs,
                         Type resultElement, bool outputAmax) {
  int64_t batch = product(lhs.getBatchShape());
  return "nvfp4_scaled_matmul_" +
         (batch > 1 ? std::to_string(batch) + "x" : "") +
         std::to_string(lhs.getRows()) + "x" + std::to_string(rhs.getRows()) +
         "x" + std::to_string(lhs.getCols()) + "_" + mxName(lhs) + "_" +
         mxName(rhs) + "_to_" + typeName(resultElement) +
         (outputAmax ? "_amax" : "");
}

/// Quantization of a [batch..., rows, cols] tensor of `elementType` (flat)
/// to the MX `type`: arguments input, codes (flat i8), scales (flat i8).
gpu::GPUFuncOp buildMXQuantizeKernel(ModuleOp module,
                                     BlockScaledTensorType type,
                                     Type elementType) {
  MLIRContext *ctx = module.getContext();
  int64_t count = product(type.getShape());
  int64_t blocks = count / kMXBlock;
  int64_t colBlocks = type.getCols() / kMXBlock;
  BlockScaledFormat format = type.getFormat();
  bool packed = hasPackedCodes(type);
  auto i8 = IntegerType::get(ctx, 8);
  SmallVector<Type> argTypes = {
      MemRefType::get({count}, elementType),
      MemRefType::get({blocks * blockCodeBytes(type)}, i8),
      MemRefType::get({product(type.getScalesType().getShape())}, i8)};
  std::string name = "nvfp4_quantize_" + shapeName(type.getShape()) + "x" +
                     typeName(elementType) + "_" + mxName(type) + "_rn";
  return getOrCreateKernel(
      module, name, argTypes, kThreadsPerBlock,
      [&](OpBuilder &b, Location loc, ValueRange args) {
        ScalarBuilder s(b, loc);
        IndexMath m{b, loc};
        Value tid = globalThreadIndex(b, loc);
        auto ifValid = scf::IfOp::create(b, loc, m.lt(tid, blocks), false);
        OpBuilder::InsertionGuard guard(b);
        b.setInsertionPointToStart(ifValid.thenBlock());
        SmallVector<Value> raw =
            loadElements(b, loc, args[0], m.mul(tid, kMXBlock), kMXBlock);
        // Block amax: maxnumf skips NaN (+Inf counts), as computeAmax.
        Value amax = s.f32(0.0f);
        SmallVector<Value> values;
        for (Value element : raw) {
          values.push_back(s.toF32(element));
          amax = arith::MaxNumFOp::create(
              b, loc, amax, math::AbsFOp::create(b, loc, values.back()));
        }
        auto [scaleCode, inverse] = s.mxBlockScale(format, amax);
        unsigned rawBits = elementType.getIntOrFloatBitWidth();
        auto rawType = b.getIntegerType(rawBits);
        SmallVector<Value> codes;
        for (auto [element, value] : llvm::zip(raw, values)) {
          Value code = s.encodeMXElement(
              format, arith::MulFOp::create(b, loc, value, inverse));
          if (!packed) {
            // An FP8 NaN keeps the input's sign (0x7F | sign). The GPU's
            // multiply (and conversions) return the canonical, positive
            // NaN, so the sign comes from the input's bits.
            Value sign = arith::TruncIOp::create(
                b, loc, b.getI8Type(),
                arith::ShRUIOp::create(
                    b, loc, arith::BitcastOp::create(b, loc, rawType, element),
                    arith::ConstantIntOp::create(b, loc, rawType,
                                                 rawBits - 8)));
            Value nanCode = arith::OrIOp::create(
                b, loc, arith::AndIOp::create(b, loc, sign, s.i8(0x80)),
                s.i8(0x7F));
            Value isNaN = arith::CmpFOp::create(
                b, loc, arith::CmpFPredicate::UNO, value, value);
            code = arith::SelectOp::create(b, loc, isNaN, nanCode, code);
          }
          codes.push_back(code);
        }
        if (packed) {
          // Even element in the low nibble.
          SmallVector<Value> bytes;
          for (int64_t j = 0; j < kMXBlock; j += 2)
            bytes.push_back(arith::OrIOp::create(
                b, loc, arith::AndIOp::create(b, loc, codes[j], s.i8(0xF)),
                arith::ShLIOp::create(b, loc, codes[j + 1], s.i8(4))));
          codes = std::move(bytes);
        }
        storeElements(b, loc, codes, args[1],
                      m.mul(tid, blockCodeBytes(type)));
        Value offset = scaleOffset(m, type, m.div(tid, colBlocks),
                                     m.rem(tid, colBlocks));
        memref::StoreOp::create(b, loc, scaleCode, args[2], ValueRange{offset});
      });
}

/// Dequantization of the MX `type` to `resultElementType`: arguments codes,
/// scales, result (all flat).
gpu::GPUFuncOp buildMXDequantizeKernel(ModuleOp module,
                                       BlockScaledTensorType type,
                                       Type resultElementType) {
  MLIRContext *ctx = module.getContext();
  int64_t count = product(type.getShape());
  int64_t blocks = count / kMXBlock;
  int64_t colBlocks = type.getCols() / kMXBlock;
  BlockScaledFormat format = type.getFormat();
  bool packed = hasPackedCodes(type);
  auto i8 = IntegerType::get(ctx, 8);
  SmallVector<Type> argTypes = {
      MemRefType::get({blocks * blockCodeBytes(type)}, i8),
      MemRefType::get({product(type.getScalesType().getShape())}, i8),
      MemRefType::get({count}, resultElementType)};
  std::string name = "nvfp4_dequantize_" + shapeName(type.getShape()) + "_" +
                     mxName(type) + "_to_" + typeName(resultElementType);
  return getOrCreateKernel(
      module, name, argTypes, kThreadsPerBlock,
      [&](OpBuilder &b, Location loc, ValueRange args) {
        ScalarBuilder s(b, loc);
        IndexMath m{b, loc};
        Value tid = globalThreadIndex(b, loc);
        auto ifValid = scf::IfOp::create(b, loc, m.lt(tid, blocks), false);
        OpBuilder::InsertionGuard guard(b);
        b.setInsertionPointToStart(ifValid.thenBlock());
        Value offset = scaleOffset(m, type, m.div(tid, colBlocks),
                                     m.rem(tid, colBlocks));
        Value scale = s.decodeE8M0(
            memref::LoadOp::create(b, loc, args[1], ValueRange{offset}));
        SmallVector<Value> bytes = loadElements(
            b, loc, args[0], m.mul(tid, blockCodeBytes(type)),
            blockCodeBytes(type));
        SmallVector<Value> out;
        for (int64_t j = 0; j < kMXBlock; ++j) {
          Value code = bytes[packed ? j / 2 : j];
          if (packed && j % 2)
            code = arith::ShRUIOp::create(b, loc, code, s.i8(4));
          // elem * 2^e, one rounding (docs/Numerics.md 11.3).
          Value value = arith::MulFOp::create(
              b, loc, s.decodeMXElement(format, code), scale);
          out.push_back(s.fromF32(value, resultElementType));
        }
        storeElements(b, loc, out, args[2], m.mul(tid, kMXBlock));
      });
}

/// C[batch, M, N] = alpha * A[batch, M, K] * B[batch, N, K]^T for MX A and
/// B (element formats may differ: E4M3 x E5M2 as kind::mxf8f6f4), in the
/// order of docs/Numerics.md section 11.4: per 1x32 block an in-order FP32
/// sum of the element products, times 2^eA, times 2^eB, added to the
/// accumulator block after block. One thread per element of C (adjacent
/// threads share the A row): the portable SIMT kernel, bit-exact with the
/// reference, on every chip. Arguments codesA, scalesA, codesB, scalesB,
/// alpha (f32), C, and with `outputAmax` the amax of C (FP32 bits,
/// zero-filled): max |C| of the rounded values it stores, one atomic max per
/// warp, as the NVFP4 SIMT GEMM.
gpu::GPUFuncOp buildMXScaledMatmulKernel(ModuleOp module,
                                         BlockScaledTensorType lhs,
                                         BlockScaledTensorType rhs,
                                         RankedTensorType result,
                                         bool outputAmax) {
  MLIRContext *ctx = module.getContext();
  int64_t batch = product(lhs.getBatchShape());
  int64_t m = lhs.getRows(), n = rhs.getRows(), k = lhs.getCols();
  int64_t colBlocks = k / kMXBlock;
  auto i8 = IntegerType::get(ctx, 8);
  Type elementType = result.getElementType();
  SmallVector<Type> argTypes = {
      MemRefType::get({batch * m * colBlocks * blockCodeBytes(lhs)}, i8),
      MemRefType::get({product(lhs.getScalesType().getShape())}, i8),
      MemRefType::get({batch * n * colBlocks * blockCodeBytes(rhs)}, i8),
      MemRefType::get({product(rhs.getScalesType().getShape())}, i8),
      Float32Type::get(ctx),
      MemRefType::get({batch * m * n}, elementType)};
  if (outputAmax)
    argTypes.push_back(MemRefType::get({1}, IntegerType::get(ctx, 32)));
  std::string name = mxMatmulName(lhs, rhs, elementType, outputAmax) + "_simt";
  return getOrCreateKernel(
      module, name, argTypes, kThreadsPerBlock,
      [&](OpBuilder &b, Location loc, ValueRange args) {
        ScalarBuilder s(b, loc);
        IndexMath im{b, loc};
        Value tid = globalThreadIndex(b, loc);
        // With the amax, threads past C yield 0 so that every lane of a
        // warp reaches the warp reduction.
        TypeRange yielded =
            outputAmax ? TypeRange(b.getF32Type()) : TypeRange();
        auto ifValid = scf::IfOp::create(b, loc, yielded,
                                         im.lt(tid, batch * m * n),
                                         /*withElseRegion=*/outputAmax);
        OpBuilder::InsertionGuard guard(b);
        if (outputAmax) {
          b.setInsertionPointToStart(ifValid.elseBlock());
          scf::YieldOp::create(b, loc, ValueRange{s.f32(0.0f)});
        }
        b.setInsertionPointToStart(ifValid.thenBlock());
        Value j = im.rem(tid, n);
        Value bi = im.div(tid, n);
        Value i = im.rem(bi, m), bt = im.div(bi, m);
        Value rowA = im.add(im.mul(bt, m), i);
        Value rowB = im.add(im.mul(bt, n), j);
        // The 32 element values of block kb of `row` of an operand.
        auto blockValues = [](OpBuilder &nb, Location nl,
                              BlockScaledTensorType type, Value codes,
                              Value row, Value kb) {
          ScalarBuilder ns(nb, nl);
          IndexMath nm{nb, nl};
          int64_t bytes = blockCodeBytes(type);
          Value offset = nm.mul(
              nm.add(nm.mul(row, type.getCols() / kMXBlock), kb), bytes);
          SmallVector<Value> raw = loadElements(nb, nl, codes, offset, bytes);
          bool packed = hasPackedCodes(type);
          SmallVector<Value> values;
          for (int64_t e = 0; e < kMXBlock; ++e) {
            Value code = raw[packed ? e / 2 : e];
            if (packed && e % 2)
              code = arith::ShRUIOp::create(nb, nl, code, ns.i8(4));
            values.push_back(ns.decodeMXElement(type.getFormat(), code));
          }
          return values;
        };
        auto loop = scf::ForOp::create(
            b, loc, im.c(0), im.c(colBlocks), im.c(1),
            ValueRange{s.f32(0.0f)},
            [&](OpBuilder &nb, Location nl, Value kb, ValueRange acc) {
              ScalarBuilder ns(nb, nl);
              IndexMath nm{nb, nl};
              SmallVector<Value> a = blockValues(nb, nl, lhs, args[0], rowA, kb);
              SmallVector<Value> bv =
                  blockValues(nb, nl, rhs, args[2], rowB, kb);
              Value partial = ns.f32(0.0f);
              for (int64_t e = 0; e < kMXBlock; ++e)
                partial = arith::AddFOp::create(
                    nb, nl, partial,
                    arith::MulFOp::create(nb, nl, a[e], bv[e]));
              Value scaleA = ns.decodeE8M0(memref::LoadOp::create(
                  nb, nl, args[1],
                  ValueRange{scaleOffset(nm, lhs, rowA, kb)}));
              Value scaleB = ns.decodeE8M0(memref::LoadOp::create(
                  nb, nl, args[3],
                  ValueRange{scaleOffset(nm, rhs, rowB, kb)}));
              // One scale after the other: 2^eA * 2^eB can leave the FP32
              // range when the term does not.
              Value term = arith::MulFOp::create(
                  nb, nl, arith::MulFOp::create(nb, nl, partial, scaleA),
                  scaleB);
              scf::YieldOp::create(
                  nb, nl,
                  ValueRange{arith::AddFOp::create(nb, nl, acc[0], term)});
            });
        Value value = s.fromF32(
            arith::MulFOp::create(b, loc, loop.getResult(0), args[4]),
            elementType);
        memref::StoreOp::create(b, loc, value, args[5], ValueRange{tid});
        if (!outputAmax)
          return;
        // |C| of the value as stored (rounded to C's type).
        scf::YieldOp::create(
            b, loc, math::AbsFOp::create(b, loc, s.toF32(value)).getResult());
        b.setInsertionPointAfter(ifValid);
        warpMaxToAmax(b, loc, ifValid.getResult(0), args[6]);
      });
}

/// A tensor operand as a flat device buffer.
Value flatBufferOf(OpBuilder &b, Location loc, Value tensor) {
  auto type = cast<RankedTensorType>(tensor.getType());
  Value buffer = bufferization::ToBufferOp::create(
      b, loc, MemRefType::get(type.getShape(), type.getElementType()), tensor,
      /*readOnly=*/true);
  return flatten(b, loc, buffer);
}

/// nvfp4.quantize to an MX type (round to nearest, no amax: quantize_c6).
struct MXQuantizeToGPU : OpConversionPattern<QuantizeOp> {
  MXQuantizeToGPU(const TypeConverter &converter, MLIRContext *ctx)
      : OpConversionPattern(converter, ctx, /*benefit=*/2) {}

  LogicalResult
  matchAndRewrite(QuantizeOp op, OneToNOpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    BlockScaledTensorType type = op.getResult().getType();
    if (!type.isMX())
      return rewriter.notifyMatchFailure(op, "not an MX format");
    Location loc = op.getLoc();
    SmallVector<Type> parts;
    if (failed(getTypeConverter()->convertType(type, parts)))
      return rewriter.notifyMatchFailure(op, "unconvertible result type");
    // Swizzled padding (rows to 128, scale columns to 4) is never written
    // by the kernel: zero it. The amax part of an MX value is 0.
    bool padded = type.getLayout() != ScaleLayout::Linear &&
                  (type.getRows() % 128 != 0 ||
                   (type.getCols() / kMXBlock) % 4 != 0);
    Value codes = allocDevice(rewriter, loc, cast<MemRefType>(parts[0]), false);
    Value scales =
        allocDevice(rewriter, loc, cast<MemRefType>(parts[1]), padded);
    Value amax = allocDevice(rewriter, loc, cast<MemRefType>(parts[2]), true);
    if (product(type.getShape()) != 0) {
      Value input = flatBufferOf(rewriter, loc, adaptor.getInput().front());
      gpu::GPUFuncOp kernel = buildMXQuantizeKernel(
          op->getParentOfType<ModuleOp>(), type,
          cast<MemRefType>(input.getType()).getElementType());
      launchKernel(rewriter, loc, kernel,
                   product(type.getShape()) / kMXBlock, kThreadsPerBlock,
                   {input, flatten(rewriter, loc, codes),
                    flatten(rewriter, loc, scales)});
    }
    rewriter.replaceOpWithMultiple(op, {{codes, scales, amax}});
    return success();
  }
};

/// nvfp4.dequantize of an MX value.
struct MXDequantizeToGPU : OpConversionPattern<DequantizeOp> {
  MXDequantizeToGPU(const TypeConverter &converter, MLIRContext *ctx)
      : OpConversionPattern(converter, ctx, /*benefit=*/2) {}

  LogicalResult
  matchAndRewrite(DequantizeOp op, OneToNOpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    BlockScaledTensorType type = op.getInput().getType();
    if (!type.isMX())
      return rewriter.notifyMatchFailure(op, "not an MX format");
    Location loc = op.getLoc();
    auto resultType = cast<RankedTensorType>(op.getType());
    ValueRange parts = adaptor.getInput();
    Value result = allocDevice(
        rewriter, loc,
        MemRefType::get(resultType.getShape(), resultType.getElementType()),
        false);
    if (resultType.getNumElements() != 0) {
      gpu::GPUFuncOp kernel =
          buildMXDequantizeKernel(op->getParentOfType<ModuleOp>(), type,
                                  resultType.getElementType());
      launchKernel(rewriter, loc, kernel,
                   resultType.getNumElements() / kMXBlock, kThreadsPerBlock,
                   {flatten(rewriter, loc, parts[0]),
                    flatten(rewriter, loc, parts[1]),
                    flatten(rewriter, loc, result)});
    }
    rewriter.replaceOpWithNewOp<bufferization::ToTensorOp>(
        op, resultType, result, /*restrict=*/true, /*writable=*/true);
    return success();
  }
};

/// nvfp4.scaled_matmul of MX operands (the verifier's scaled_matmul_c5
/// makes both operands MX), with or without the amax of its result: every
/// form writes it from its own epilogue (the SIMT kernel per warp, the
/// tensor-core kernels per tile as for NVFP4), so that an MX GEMM's output
/// can feed an NVFP4 quantization without an amax pass
/// (nvfp4-fuse-quantization's fuse-output-amax).
struct MXScaledMatmulToGPU : OpConversionPattern<ScaledMatmulOp> {
  MXScaledMatmulToGPU(const TypeConverter &converter, MLIRContext *ctx,
                      const ::nvfp4::target::ChipInfo &chip,
                      MXGemmKernel gemmKernel)
      : OpConversionPattern(converter, ctx, /*benefit=*/2), chip(chip),
        gemmKernel(gemmKernel) {}

  const ::nvfp4::target::ChipInfo &chip;
  MXGemmKernel gemmKernel;

  /// The tensor-core plan where the chip has one and the rule (or the
  /// option) takes it; an empty `whyNot` with no plan means SIMT. A forced
  /// tensor-core GEMM the chip or the shape cannot run sets `whyNot`.
  std::optional<GemmPlan> planTensorCoreGemm(BlockScaledTensorType lhs,
                                             BlockScaledTensorType rhs,
                                             Type resultElement,
                                             std::string &whyNot) const {
    if (gemmKernel == MXGemmKernel::Simt)
      return std::nullopt;
    bool forced = gemmKernel == MXGemmKernel::TensorCore;
    int64_t batch = product(lhs.getBatchShape());
    int64_t m = lhs.getRows(), n = rhs.getRows(), k = lhs.getCols();
    if (hasMXBlockScaledGemm(chip)) {
      // The block-scaled MMA reads the MX codes and scales as they are:
      // no decode, no scratch, so no size threshold (as for NVFP4).
      std::string why;
      std::optional<GemmPlan> plan =
          planMXBlockScaledGemm(chip, lhs, rhs, resultElement, why);
      if (!plan && forced)
        whyNot = why;
      return plan;
    }
    if (!hasBF16GemmKernel(chip)) {
      if (forced)
        whyNot = "no tensor-core MX GEMM on " + std::string(chip.name) +
                 " yet (the SIMT kernel runs there)";
      return std::nullopt;
    }
    if (!forced && batch * m * n * k < kMXTensorCoreMinMultiplyAdds)
      return std::nullopt;
    std::string why;
    std::optional<GemmPlan> plan =
        planBF16Gemm(chip, batch, m, n, k, resultElement, why);
    if (!plan && forced)
      whyNot = why;
    return plan;
  }

  LogicalResult
  matchAndRewrite(ScaledMatmulOp op, OneToNOpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    BlockScaledTensorType lhs = op.getLhs().getType();
    BlockScaledTensorType rhs = op.getRhs().getType();
    if (!lhs.isMX() || !rhs.isMX())
      return rewriter.notifyMatchFailure(op, "not an MX GEMM");
    Location loc = op.getLoc();
    auto resultType = cast<RankedTensorType>(op.getResult().getType());
    Value result = allocDevice(
        rewriter, loc,
        MemRefType::get(resultType.getShape(), resultType.getElementType()),
        false);
    bool outputAmax = static_cast<bool>(op.getResultAmax());
    Value amax;
    if (outputAmax)
      amax = allocDevice(rewriter, loc,
                         MemRefType::get({1}, rewriter.getI32Type()),
                         /*zeroFill=*/true);
    std::string name =
        mxMatmulName(lhs, rhs, resultType.getElementType(), outputAmax);
    Value alpha;
    if (op.getAlpha())
      alpha = adaptor.getAlpha().front();
    else
      alpha = arith::ConstantOp::create(rewriter, loc,
                                        rewriter.getF32FloatAttr(1.0f));
    auto module = op->getParentOfType<ModuleOp>();
    std::string whyNot;
    std::optional<GemmPlan> plan = planTensorCoreGemm(
        lhs, rhs, resultType.getElementType(), whyNot);
    if (!whyNot.empty())
      return op.emitOpError("cannot use mx-gemm=tensor-core: ") << whyNot;
    if (plan && hasMXBlockScaledGemm(chip)) {
      // sm_100a / sm_103a: tcgen05 .kind::mxf8f6f4 / .kind::mxf4; sm_120a:
      // mma.sync .kind::mxf8f6f4 / .kind::mxf4 -- on the codes and scales
      // as they are.
      launchMXBlockScaledGemm(rewriter, loc, module, *plan, adaptor.getLhs(),
                              adaptor.getRhs(), alpha, result, name, amax);
    } else if (plan) {
      // Both operands as exact BF16 values, [batch * rows, K] row-major
      // (the dequantize kernel: fp32(elem * 2^e), then RNE to BF16, which
      // keeps the value in the range of docs/Numerics.md 11.7), then the
      // route's BF16 wgmma GEMM with C = fp32(acc * alpha).
      SmallVector<Value> decoded;
      for (auto [type, parts] :
           {std::pair(lhs, adaptor.getLhs()), std::pair(rhs, adaptor.getRhs())}) {
        Value scratch = allocDevice(
            rewriter, loc,
            MemRefType::get({product(type.getShape())},
                            rewriter.getBF16Type()),
            /*zeroFill=*/false);
        gpu::GPUFuncOp decode =
            buildMXDequantizeKernel(module, type, rewriter.getBF16Type());
        launchKernel(rewriter, loc, decode,
                     product(type.getShape()) / kMXBlock, kThreadsPerBlock,
                     {flatten(rewriter, loc, parts[0]),
                      flatten(rewriter, loc, parts[1]), scratch});
        decoded.push_back(scratch);
      }
      launchBF16Gemm(rewriter, loc, module, *plan, lhs.getCols(), decoded[0],
                     decoded[1], alpha, result, name, amax);
    } else {
      gpu::GPUFuncOp kernel =
          buildMXScaledMatmulKernel(module, lhs, rhs, resultType, outputAmax);
      SmallVector<Value> args = {flatten(rewriter, loc, adaptor.getLhs()[0]),
                                 flatten(rewriter, loc, adaptor.getLhs()[1]),
                                 flatten(rewriter, loc, adaptor.getRhs()[0]),
                                 flatten(rewriter, loc, adaptor.getRhs()[1]),
                                 alpha, flatten(rewriter, loc, result)};
      if (outputAmax)
        args.push_back(amax);
      launchKernel(rewriter, loc, kernel, resultType.getNumElements(),
                   kThreadsPerBlock, args);
    }
    SmallVector<Value> results = {bufferization::ToTensorOp::create(
        rewriter, loc, resultType, result, /*restrict=*/true,
        /*writable=*/true)};
    if (outputAmax)
      results.push_back(loadAmax(rewriter, loc, amax));
    rewriter.replaceOp(op, results);
    return success();
  }
};

} // namespace

FailureOr<MXGemmKernel> mlir::nvfp4::parseMXGemmKernel(StringRef text,
                                                       std::string &message) {
  if (text.empty())
    return MXGemmKernel::Auto;
  if (text == "simt")
    return MXGemmKernel::Simt;
  if (text == "tensor-core")
    return MXGemmKernel::TensorCore;
  message = ("mx-gemm '" + text + "': expected simt or tensor-core").str();
  return failure();
}

void mlir::nvfp4::populateMXToGPUPatterns(const TypeConverter &converter,
                                          RewritePatternSet &patterns,
                                          const ::nvfp4::target::ChipInfo &chip,
                                          MXGemmKernel gemmKernel) {
  patterns.add<MXQuantizeToGPU, MXDequantizeToGPU>(converter,
                                                   patterns.getContext());
  patterns.add<MXScaledMatmulToGPU>(converter, patterns.getContext(), chip,
                                    gemmKernel);
}
