//===- PackingToReference.cpp - pack, unpack, swizzle_scales --------------===//
//
// Part of the nvfp4 project.
//
// The reference form of a block-scaled value is (i8 codes, i8 scale bits,
// f32 amax). pack/unpack bitcast between that and the builtin f4E2M1FN /
// f8E4M3FN tensors; swizzle_scales permutes the scale bytes; transpose
// swaps the last two dimensions of the codes and of the scale matrix.
//
//===----------------------------------------------------------------------===//

#include "TensorBuilders.h"
#include "nvfp4/Conversion/NVFP4ToReference/NVFP4ToReference.h"
#include "nvfp4/Dialect/NVFP4/IR/NVFP4Ops.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;
using namespace mlir::nvfp4;
using namespace mlir::nvfp4::reference;

/// Applies `convert` to every element of a static tensor, producing a tensor
/// of the same shape with element type `elementType`.
static Value
mapElements(OpBuilder &b, Location loc, Value input, Type elementType,
            function_ref<Value(OpBuilder &, Location, Value)> convert) {
  auto type = cast<RankedTensorType>(input.getType());
  AffineMap id = AffineMap::getMultiDimIdentityMap(type.getRank(),
                                                   b.getContext());
  SmallVector<utils::IteratorType> iterators(type.getRank(),
                                             utils::IteratorType::parallel);
  Value init =
      tensor::EmptyOp::create(b, loc, type.getShape(), elementType);
  return buildGeneric(
      b, loc, input, init, {id, id}, iterators,
      [&](OpBuilder &nested, Location l, ValueRange args)
          -> SmallVector<Value> { return {convert(nested, l, args[0])}; })[0];
}

namespace {

struct PackOpLowering : OpConversionPattern<PackOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(PackOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Type i8 = rewriter.getI8Type();
    Value codes = mapElements(
        rewriter, loc, adaptor.getCodes(), i8,
        [](OpBuilder &b, Location l, Value code) -> Value {
          // E2M1 codes widen from 4 bits; FP8 codes (MXFP8) are the byte.
          unsigned width = code.getType().getIntOrFloatBitWidth();
          Value bits =
              arith::BitcastOp::create(b, l, b.getIntegerType(width), code);
          if (width == 8)
            return bits;
          return arith::ExtUIOp::create(b, l, b.getI8Type(), bits);
        });
    Value scales = mapElements(
        rewriter, loc, adaptor.getScales(), i8,
        [](OpBuilder &b, Location l, Value scale) -> Value {
          return arith::BitcastOp::create(b, l, b.getI8Type(), scale);
        });
    rewriter.replaceOpWithMultiple(op, {{codes, scales, adaptor.getAmax()}});
    return success();
  }
};

struct UnpackOpLowering : OpConversionPattern<UnpackOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(UnpackOp op, OneToNOpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    ValueRange parts = adaptor.getInput();
    Type f4 = op.getCodes().getType().getElementType();
    Type f8 = op.getScales().getType().getElementType();
    Value codes = mapElements(
        rewriter, loc, parts[0], f4,
        [&](OpBuilder &b, Location l, Value code) -> Value {
          unsigned width = f4.getIntOrFloatBitWidth();
          if (width == 8)
            return arith::BitcastOp::create(b, l, f4, code);
          Value bits =
              arith::TruncIOp::create(b, l, b.getIntegerType(width), code);
          return arith::BitcastOp::create(b, l, f4, bits);
        });
    Value scales = mapElements(
        rewriter, loc, parts[1], f8,
        [&](OpBuilder &b, Location l, Value scale) -> Value {
          return arith::BitcastOp::create(b, l, f8, scale);
        });
    rewriter.replaceOp(op, ValueRange{codes, scales, parts[2]});
    return success();
  }
};

struct SwizzleScalesOpLowering : OpConversionPattern<SwizzleScalesOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(SwizzleScalesOp op, OneToNOpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    BlockScaledTensorType from = op.getInput().getType();
    BlockScaledTensorType to = op.getResult().getType();
    ValueRange parts = adaptor.getInput();
    Value scales = parts[1];
    // The swizzle helpers count 16-column blocks: an MX type's cols / 32
    // scale columns are (cols / 2) / 16.
    auto args = std::make_tuple(
        from.getBatchShape(), from.getRows(),
        from.getCols() / from.getBlockCols() * kBlockSize, from.getBlockRows());
    // Go through the linear layout: every layout converts to and from it.
    if (from.getLayout() == ScaleLayout::Swizzled128x4)
      scales = unswizzleScales(rewriter, loc, scales, std::get<0>(args),
                               std::get<1>(args), std::get<2>(args),
                               std::get<3>(args));
    if (to.getLayout() == ScaleLayout::Swizzled128x4)
      scales = swizzleScales(rewriter, loc, scales, std::get<0>(args),
                             std::get<1>(args), std::get<2>(args),
                             std::get<3>(args));
    rewriter.replaceOpWithMultiple(op, {{parts[0], scales, parts[2]}});
    return success();
  }
};

struct TransposeOpLowering : OpConversionPattern<TransposeOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(TransposeOp op, OneToNOpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    ValueRange parts = adaptor.getInput();
    // 16x16 tiles with linear scales (transpose_c1, transpose_c2): the scale
    // matrix is [batch..., rows / 16, cols / 16] and transposes like the
    // codes.
    Value codes = transposeLastTwo(rewriter, loc, parts[0]);
    Value scales = transposeLastTwo(rewriter, loc, parts[1]);
    rewriter.replaceOpWithMultiple(op, {{codes, scales, parts[2]}});
    return success();
  }
};

} // namespace

void mlir::nvfp4::populatePackingToReferencePatterns(
    const TypeConverter &converter, RewritePatternSet &patterns) {
  patterns.add<PackOpLowering, UnpackOpLowering, SwizzleScalesOpLowering,
               TransposeOpLowering>(
      converter, patterns.getContext());
}
