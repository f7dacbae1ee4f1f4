//===- LowerToUpstreamScaling.cpp - MX nvfp4 ops in upstream's scaling ops -===//
//
// Part of the nvfp4 project.
//
//===----------------------------------------------------------------------===//
//
// nvfp4-lower-to-upstream-scaling: an MX quantize or dequantize written in
// upstream ops, arith.scaling_truncf / arith.scaling_extf for the per-element
// scaling and conversion and linalg/tensor ops for what those ops leave to
// their caller (the block amax, the scale rule, the broadcast). The form is
// docs/Numerics.md section 11.6; nvfp4-raise-upstream-scaling inverts it.
//
//===----------------------------------------------------------------------===//

#include "nvfp4/Conversion/UpstreamScaling/UpstreamScaling.h"
#include "UpstreamScalingForm.h"

#include "nvfp4/Conversion/Passes.h"
#include "nvfp4/Dialect/NVFP4/IR/NVFP4Ops.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir {
namespace nvfp4 {
#define GEN_PASS_DEF_NVFP4LOWERTOUPSTREAMSCALING
#include "nvfp4/Conversion/Passes.h.inc"
} // namespace nvfp4
} // namespace mlir

using namespace mlir;
using namespace mlir::nvfp4;
using namespace mlir::nvfp4::upstream_scaling;

/// [[0], ..., [rank - 2], [rank - 1, rank]]: the last dimension split into
/// (blocks, 32).
static SmallVector<ReassociationIndices> blockReassociation(int64_t rank) {
  SmallVector<ReassociationIndices> result;
  for (int64_t d = 0; d + 1 < rank; ++d)
    result.push_back({d});
  result.push_back({rank - 1, rank});
  return result;
}

/// `shape` with its last dimension C replaced by (C / 32, 32).
static SmallVector<int64_t> blockedShape(ArrayRef<int64_t> shape) {
  SmallVector<int64_t> result(shape.drop_back());
  result.push_back(shape.back() / kBlock);
  result.push_back(kBlock);
  return result;
}

/// The per-element scale tensor: `scales` ([..., C / 32] E8M0) broadcast to
/// each element of its block, linalg.broadcast then tensor.collapse_shape.
static Value broadcastScales(OpBuilder &b, Location loc, Value scales,
                             ArrayRef<int64_t> shape) {
  int64_t rank = shape.size();
  Type e8m0 = b.getType<Float8E8M0FNUType>();
  Value empty = tensor::EmptyOp::create(b, loc, blockedShape(shape), e8m0);
  Value broadcast =
      linalg::BroadcastOp::create(b, loc, scales, empty, {rank})->getResult(0);
  return tensor::CollapseShapeOp::create(b, loc,
                                         RankedTensorType::get(shape, e8m0),
                                         broadcast, blockReassociation(rank));
}

static Value i32Const(OpBuilder &b, Location loc, int64_t value) {
  return arith::ConstantIntOp::create(b, loc, b.getI32Type(), value);
}

/// A code of `type` from its bits.
static Value codeConst(OpBuilder &b, Location loc, Type type, uint64_t bits) {
  auto floatType = cast<FloatType>(type);
  APFloat value(floatType.getFloatSemantics(),
                APInt(floatType.getWidth(), bits));
  return arith::ConstantOp::create(b, loc, b.getFloatAttr(type, value));
}

namespace {
struct LowerMXQuantize : OpRewritePattern<QuantizeOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(QuantizeOp op,
                                PatternRewriter &rewriter) const override {
    auto type = cast<BlockScaledTensorType>(op.getResult().getType());
    if (!type.isMX())
      return rewriter.notifyMatchFailure(op, "NVFP4: E4M3 scales and a "
                                             "tensor scale, not E8M0");
    if (type.getLayout() != ScaleLayout::Linear)
      return rewriter.notifyMatchFailure(op, "swizzled scales");
    auto inputType = cast<RankedTensorType>(op.getInput().getType());
    Type inputElement = inputType.getElementType();
    // In f16, arith.scaling_truncf's division by 2^(s-127) overflows or
    // underflows for most scales.
    if (!inputElement.isF32() && !inputElement.isBF16())
      return rewriter.notifyMatchFailure(op, "f16 input");
    // C6 already excludes an amax, the RHT and stochastic rounding on MX.
    ElementInfo info = *elementInfoOf(type.getElementType());
    Location loc = op.getLoc();
    Value x = op.getInput();
    ArrayRef<int64_t> shape = type.getShape();
    int64_t rank = shape.size();
    Type f32 = rewriter.getF32Type();

    // Block amax: max |x| over each 1x32 block, NaN skipped, from +0.
    Value blocked = tensor::ExpandShapeOp::create(
        rewriter, loc, RankedTensorType::get(blockedShape(shape), inputElement),
        x, blockReassociation(rank));
    SmallVector<int64_t> scaleShape(shape.drop_back());
    scaleShape.push_back(shape.back() / kBlock);
    Value zero = arith::ConstantOp::create(rewriter, loc,
                                           rewriter.getF32FloatAttr(0.0f));
    Value amaxInit = linalg::FillOp::create(
                         rewriter, loc, zero,
                         tensor::EmptyOp::create(rewriter, loc, scaleShape, f32)
                             .getResult())
                         .getResult(0);
    Value amax =
        linalg::ReduceOp::create(
            rewriter, loc, ValueRange{blocked}, ValueRange{amaxInit}, {rank},
            [&](OpBuilder &b, Location l, ValueRange args) {
              Value v = args[0];
              if (!v.getType().isF32())
                v = arith::ExtFOp::create(b, l, b.getF32Type(), v);
              Value magnitude = math::AbsFOp::create(b, l, v);
              Value max = arith::MaxNumFOp::create(b, l, args[1], magnitude);
              linalg::YieldOp::create(b, l, max);
            })
            .getResult(0);

    // The E8M0 byte of each block (kRoundUp / kSubnormalLimit).
    Type e8m0 = rewriter.getType<Float8E8M0FNUType>();
    Value scales =
        linalg::MapOp::create(
            rewriter, loc, ValueRange{amax},
            tensor::EmptyOp::create(rewriter, loc, scaleShape, e8m0),
            [&](OpBuilder &b, Location l, ValueRange args) {
              Value rcp = arith::ConstantOp::create(
                  b, l, b.getF32FloatAttr(reciprocalOf(info)));
              Value v = arith::MulFOp::create(b, l, args[0], rcp);
              Value bits = arith::BitcastOp::create(b, l, b.getI32Type(), v);
              Value up = arith::AddIOp::create(b, l, bits,
                                               i32Const(b, l, kRoundUp));
              Value biased =
                  arith::ShRUIOp::create(b, l, up, i32Const(b, l, 23));
              Value clamped = arith::MinUIOp::create(
                  b, l, biased, i32Const(b, l, kMaxScaleByte));
              Value tiny = arith::CmpIOp::create(
                  b, l, arith::CmpIPredicate::ule, bits,
                  i32Const(b, l, kSubnormalLimit));
              Value byte = arith::SelectOp::create(b, l, tiny,
                                                   i32Const(b, l, 0), clamped);
              Value narrow =
                  arith::TruncIOp::create(b, l, b.getI8Type(), byte);
              linalg::YieldOp::create(
                  b, l, arith::BitcastOp::create(b, l, e8m0, narrow).getResult());
            })
            .getResult()[0];

    // Per element: x / 2^(s - 127), rounded to nearest even.
    Type element = type.getElementType();
    auto codesType = RankedTensorType::get(shape, element);
    Value scaled = arith::ScalingTruncFOp::create(
        rewriter, loc, codesType, x, broadcastScales(rewriter, loc, scales, shape),
        /*roundingmode=*/nullptr, /*fastmath=*/nullptr);

    // Non-finite elements, which the conversion leaves unspecified (NaN for
    // +-Inf in f8E4M3FN, Inf in f8E5M2): +-max_elem for +-Inf and the NaN
    // code of section 11.1.
    Value codes =
        linalg::MapOp::create(
            rewriter, loc, ValueRange{x, scaled},
            tensor::EmptyOp::create(rewriter, loc, shape, element),
            [&](OpBuilder &b, Location l, ValueRange args) {
              Value xi = args[0], qi = args[1];
              Type bitsType = b.getIntegerType(xi.getType().getIntOrFloatBitWidth());
              Value finite = math::IsFiniteOp::create(b, l, xi);
              Value nan = math::IsNaNOp::create(b, l, xi);
              Value negative = arith::CmpIOp::create(
                  b, l, arith::CmpIPredicate::slt,
                  arith::BitcastOp::create(b, l, bitsType, xi),
                  arith::ConstantIntOp::create(b, l, bitsType, 0));
              auto signedCode = [&](uint8_t code, bool keepsSign) -> Value {
                uint8_t negativeCode = keepsSign ? code | info.signBit : code;
                return arith::SelectOp::create(
                    b, l, negative, codeConst(b, l, element, negativeCode),
                    codeConst(b, l, element, code));
              };
              Value special = arith::SelectOp::create(
                  b, l, nan, signedCode(info.nanCode, info.nanKeepsSign),
                  signedCode(info.maxCode, true));
              linalg::YieldOp::create(
                  b, l,
                  arith::SelectOp::create(b, l, finite, qi, special).getResult());
            })
            .getResult()[0];

    rewriter.replaceOpWithNewOp<PackOp>(op, type, codes, scales, zero);
    return success();
  }
};

struct LowerMXDequantize : OpRewritePattern<DequantizeOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(DequantizeOp op,
                                PatternRewriter &rewriter) const override {
    auto type = cast<BlockScaledTensorType>(op.getInput().getType());
    if (!type.isMX())
      return rewriter.notifyMatchFailure(op, "NVFP4: E4M3 scales and a "
                                             "tensor scale, not E8M0");
    if (type.getLayout() != ScaleLayout::Linear)
      return rewriter.notifyMatchFailure(op, "swizzled scales");
    auto resultType = cast<RankedTensorType>(op.getResult().getType());
    // In f16, arith.scaling_extf's 2^(s-127) overflows or underflows.
    if (!resultType.getElementType().isF32() &&
        !resultType.getElementType().isBF16())
      return rewriter.notifyMatchFailure(op, "f16 result");
    Location loc = op.getLoc();
    auto parts = UnpackOp::create(rewriter, loc, type.getCodesType(),
                                  type.getScalesType(), rewriter.getF32Type(),
                                  op.getInput());
    Value scales =
        broadcastScales(rewriter, loc, parts.getScales(), type.getShape());
    rewriter.replaceOpWithNewOp<arith::ScalingExtFOp>(
        op, resultType, parts.getCodes(), scales, /*fastmath=*/nullptr);
    return success();
  }
};

struct LowerToUpstreamScalingPass
    : public mlir::nvfp4::impl::NVFP4LowerToUpstreamScalingBase<
          LowerToUpstreamScalingPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    populateLowerToUpstreamScalingPatterns(patterns);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};
} // namespace

void mlir::nvfp4::populateLowerToUpstreamScalingPatterns(
    RewritePatternSet &patterns) {
  patterns.add<LowerMXQuantize, LowerMXDequantize>(patterns.getContext());
}
