//===- SmallFloatCasts.cpp - bit-exact CPU code for the small float casts --===//
//
// Part of the nvfp4 project.
//
//===----------------------------------------------------------------------===//
//
// nvfp4-expand-small-float-casts: upstream's LLVM lowering has no code for
// arith.truncf / arith.extf to and from f8E4M3FN or f8E5M2, and the
// arith-expand code for f4E2M1FN and f8E8M0FNU is not the conversions the
// types define (docs/Numerics.md section 11.6: f4E2M1FN ties round away
// from zero, negative values above -1 lose their sign, E8M0 0x00 becomes
// +0.0). The reference pipeline therefore lowers them, scalar by scalar
// after linalg-to-loops, with the ScalarBuilder conversions that equal the
// numerics library, so that IR written in upstream's scaling ops runs on
// the CPU with the same bytes as the nvfp4 ops.
//
//===----------------------------------------------------------------------===//

#include "nvfp4/Conversion/UpstreamScaling/UpstreamScaling.h"

#include "nvfp4/Conversion/Passes.h"
#include "nvfp4/Conversion/Utils/ElementBuilders.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Transforms/Passes.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

#include <optional>

namespace mlir {
namespace nvfp4 {
#define GEN_PASS_DEF_NVFP4EXPANDSMALLFLOATCASTS
#include "nvfp4/Conversion/Passes.h.inc"
} // namespace nvfp4
} // namespace mlir

using namespace mlir;
using namespace mlir::nvfp4;

/// The MX element format whose codes `type` holds (scalar types only).
static std::optional<BlockScaledFormat> elementFormatOf(Type type) {
  if (isa<Float8E4M3FNType>(type))
    return BlockScaledFormat::MXFP8E4M3;
  if (isa<Float8E5M2Type>(type))
    return BlockScaledFormat::MXFP8E5M2;
  if (isa<Float4E2M1FNType>(type))
    return BlockScaledFormat::MXFP4;
  return std::nullopt;
}

static bool isWideFloat(Type type) {
  return type.isF32() || type.isBF16() || type.isF16();
}

namespace {
/// arith.truncf f32/bf16/f16 -> f8E4M3FN/f8E5M2/f4E2M1FN, round to nearest
/// even: the source widened to f32 (exact), then encodeMXElement.
struct TruncFToSmallFloat : OpRewritePattern<arith::TruncFOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(arith::TruncFOp op,
                                PatternRewriter &rewriter) const override {
    Type source = op.getIn().getType(), result = op.getType();
    std::optional<BlockScaledFormat> format = elementFormatOf(result);
    if (!format || !isWideFloat(source))
      return rewriter.notifyMatchFailure(op, "not a scalar small-float truncf");
    if (std::optional<arith::RoundingMode> mode = op.getRoundingmode();
        mode && *mode != arith::RoundingMode::to_nearest_even)
      return rewriter.notifyMatchFailure(op, "only round to nearest even");
    Location loc = op.getLoc();
    ScalarBuilder s(rewriter, loc);
    Value code = s.encodeMXElement(*format, s.toF32(op.getIn()));
    Type bitsType = rewriter.getIntegerType(result.getIntOrFloatBitWidth());
    if (bitsType != code.getType())
      code = arith::TruncIOp::create(rewriter, loc, bitsType, code);
    rewriter.replaceOpWithNewOp<arith::BitcastOp>(op, result, code);
    return success();
  }
};

/// arith.extf f8E4M3FN/f8E5M2/f4E2M1FN/f8E8M0FNU -> f32/bf16/f16: the exact
/// f32 value (decodeMXElement, decodeE8M0: 0x00 is 2^-127, 0xFF NaN), then
/// rounded to the result type.
struct ExtFFromSmallFloat : OpRewritePattern<arith::ExtFOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(arith::ExtFOp op,
                                PatternRewriter &rewriter) const override {
    Type source = op.getIn().getType(), result = op.getType();
    std::optional<BlockScaledFormat> format = elementFormatOf(source);
    bool isE8M0 = isa<Float8E8M0FNUType>(source);
    if ((!format && !isE8M0) || !isWideFloat(result))
      return rewriter.notifyMatchFailure(op, "not a scalar small-float extf");
    Location loc = op.getLoc();
    ScalarBuilder s(rewriter, loc);
    Value bits = arith::BitcastOp::create(
        rewriter, loc,
        rewriter.getIntegerType(source.getIntOrFloatBitWidth()), op.getIn());
    if (!bits.getType().isInteger(8))
      bits = arith::ExtUIOp::create(rewriter, loc, rewriter.getI8Type(), bits);
    Value value =
        isE8M0 ? s.decodeE8M0(bits) : s.decodeMXElement(*format, bits);
    rewriter.replaceOp(op, s.fromF32(value, result));
    return success();
  }
};

/// arith.scaling_extf of an MX element with an E8M0 scale to f32 or bf16:
/// the product in f32, rounded once. It is exact in f32 (an element has at
/// most 4 significant bits, the scale is a power of two, the smallest
/// product is 2^-143), so this is the correctly rounded product that the
/// op defines; upstream's expansion multiplies in bf16, which the CPU
/// lowering flushes to zero below 2^-126.
struct ScalingExtFToF32 : OpRewritePattern<arith::ScalingExtFOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(arith::ScalingExtFOp op,
                                PatternRewriter &rewriter) const override {
    Type result = op.getType();
    if (!elementFormatOf(op.getIn().getType()) ||
        !isa<Float8E8M0FNUType>(op.getScale().getType()) ||
        !(result.isF32() || result.isBF16()))
      return rewriter.notifyMatchFailure(op, "not an MX element to f32/bf16");
    Location loc = op.getLoc();
    ScalarBuilder s(rewriter, loc);
    Type f32 = rewriter.getF32Type();
    Value element = arith::ExtFOp::create(rewriter, loc, f32, op.getIn());
    Value scale = arith::ExtFOp::create(rewriter, loc, f32, op.getScale());
    Value product = arith::MulFOp::create(rewriter, loc, element, scale);
    rewriter.replaceOp(op, s.fromF32(product, result));
    return success();
  }
};

/// arith.scaling_truncf of f32 or bf16 with an E8M0 scale: the quotient in
/// f32, then arith.truncf. For bf16 the op divides in bf16; the quotient
/// differs from the f32 one only below 2^-126, where every MX element
/// format rounds both to the same signed zero.
struct ScalingTruncFFromF32 : OpRewritePattern<arith::ScalingTruncFOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(arith::ScalingTruncFOp op,
                                PatternRewriter &rewriter) const override {
    Type source = op.getIn().getType();
    if (!elementFormatOf(op.getType()) ||
        !isa<Float8E8M0FNUType>(op.getScale().getType()) ||
        !(source.isF32() || source.isBF16()))
      return rewriter.notifyMatchFailure(op, "not f32/bf16 to an MX element");
    Location loc = op.getLoc();
    ScalarBuilder s(rewriter, loc);
    Type f32 = rewriter.getF32Type();
    Value scale = arith::ExtFOp::create(rewriter, loc, f32, op.getScale());
    Value quotient =
        arith::DivFOp::create(rewriter, loc, s.toF32(op.getIn()), scale);
    auto trunc = arith::TruncFOp::create(rewriter, loc, op.getType(), quotient);
    if (op.getRoundingmodeAttr())
      trunc.setRoundingmodeAttr(op.getRoundingmodeAttr());
    rewriter.replaceOp(op, trunc.getResult());
    return success();
  }
};

struct ExpandSmallFloatCastsPass
    : public mlir::nvfp4::impl::NVFP4ExpandSmallFloatCastsBase<
          ExpandSmallFloatCastsPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    populateSmallFloatCastPatterns(patterns);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};
} // namespace

void mlir::nvfp4::populateSmallFloatCastPatterns(RewritePatternSet &patterns) {
  // scaling_truncf -> extf(scale), divf, truncf; scaling_extf -> extf, extf,
  // mulf (upstream's definition of the ops), in f32 where the result is the
  // same (the two patterns above, tried first) and as upstream expands them
  // otherwise; then the casts.
  patterns.add<ScalingExtFToF32, ScalingTruncFFromF32>(patterns.getContext(),
                                                       /*benefit=*/2);
  arith::populateExpandScalingExtTruncPatterns(patterns);
  patterns.add<TruncFToSmallFloat, ExtFFromSmallFloat>(patterns.getContext());
}
