//===- MatmulToReference.cpp - dequantize and scaled_matmul ---------------===//
//
// Part of the nvfp4 project.
//
// Lowers the ops that consume NVFP4 data: nvfp4.dequantize (dequantize) and
// nvfp4.scaled_matmul (scaledMatmul), with lib/Numerics's order of FP32
// operations.
//
//===----------------------------------------------------------------------===//

#include "TensorBuilders.h"
#include "nvfp4/Conversion/NVFP4ToReference/NVFP4ToReference.h"
#include "nvfp4/Dialect/NVFP4/IR/NVFP4Ops.h"
#include "nvfp4/Numerics/Gemm.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;
using namespace mlir::nvfp4;
using namespace mlir::nvfp4::reference;

/// The linear-layout scales of a converted block-scaled value.
static Value linearScales(OpBuilder &b, Location loc,
                          BlockScaledTensorType type, Value scales) {
  if (type.getLayout() == ScaleLayout::Linear)
    return scales;
  // The helper counts 16-column blocks: an MX type's cols / 32 scale
  // columns are (cols / 2) / 16.
  return unswizzleScales(b, loc, scales, type.getBatchShape(), type.getRows(),
                         type.getCols() / type.getBlockCols() * kBlockSize,
                         type.getBlockRows());
}

static int64_t product(ArrayRef<int64_t> shape) {
  int64_t result = 1;
  for (int64_t d : shape)
    result *= d;
  return result;
}

namespace {

//===----------------------------------------------------------------------===//
// nvfp4.dequantize
//===----------------------------------------------------------------------===//

struct DequantizeOpLowering : OpConversionPattern<DequantizeOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(DequantizeOp op, OneToNOpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    MLIRContext *ctx = rewriter.getContext();
    BlockScaledTensorType type = op.getInput().getType();
    auto resultType = cast<RankedTensorType>(op.getType());
    ValueRange parts = adaptor.getInput();
    ScalarBuilder s(rewriter, loc);

    int64_t blockRows = type.getBlockRows(), blockCols = type.getBlockCols();
    int64_t rowBlocks = product(type.getShape().drop_back()) / blockRows;
    int64_t colBlocks = type.getCols() / blockCols;
    Value codes = reshape(rewriter, loc, parts[0],
                          {rowBlocks, blockRows, colBlocks, blockCols});
    Value scales =
        reshape(rewriter, loc, linearScales(rewriter, loc, type, parts[1]),
                {rowBlocks, colBlocks});
    BlockScaledFormat format = type.getFormat();
    Value factor;
    // A checkpoint's decode scale is used as it is, bit for bit.
    if (type.hasDecodeScale())
      factor = parts[2];
    else if (!type.isMX())
      factor = arith::DivFOp::create(rewriter, loc, parts[2], s.f32(2688.0f));

    AffineExpr d0, d1, d2, d3;
    bindDims(ctx, d0, d1, d2, d3);
    AffineMap id4 = AffineMap::getMultiDimIdentityMap(4, ctx);
    auto parallel = utils::IteratorType::parallel;
    Type elementType = resultType.getElementType();
    Value result = buildGeneric(
        rewriter, loc, {codes, scales},
        emptyTensor(rewriter, loc, {rowBlocks, blockRows, colBlocks, blockCols}, elementType),
        {id4, AffineMap::get(4, 0, {d0, d2}, ctx), id4},
        {parallel, parallel, parallel, parallel},
        [&](OpBuilder &b, Location l, ValueRange args) -> SmallVector<Value> {
          ScalarBuilder bs(b, l);
          // MX: elem * 2^e, one rounding (docs/Numerics.md 11.3).
          if (!factor)
            return {bs.fromF32(
                arith::MulFOp::create(b, l, bs.decodeMXElement(format, args[0]),
                                      bs.decodeE8M0(args[1])),
                elementType)};
          // (e2m1 * s_b) is exact; the tensor factor is applied last.
          Value blockValue = arith::MulFOp::create(
              b, l, bs.decodeE2M1(args[0]), bs.decodeE4M3(args[1]));
          Value value = arith::MulFOp::create(b, l, blockValue, factor);
          return {bs.fromF32(value, elementType)};
        })[0];
    rewriter.replaceOp(op, reshape(rewriter, loc, result, resultType.getShape()));
    return success();
  }
};

//===----------------------------------------------------------------------===//
// nvfp4.scaled_matmul
//===----------------------------------------------------------------------===//

struct ScaledMatmulOpLowering : OpConversionPattern<ScaledMatmulOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(ScaledMatmulOp op, OneToNOpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    MLIRContext *ctx = rewriter.getContext();
    BlockScaledTensorType lhsType = op.getLhs().getType();
    BlockScaledTensorType rhsType = op.getRhs().getType();
    auto resultType = cast<RankedTensorType>(op.getResult().getType());
    ValueRange lhs = adaptor.getLhs(), rhs = adaptor.getRhs();
    ScalarBuilder s(rewriter, loc);

    int64_t batch = product(lhsType.getBatchShape());
    int64_t m = lhsType.getRows(), n = rhsType.getRows();
    // The verifier (scaled_matmul_c5) makes both operands NVFP4 or both MX,
    // so their K blocks line up.
    bool mx = lhsType.isMX();
    int64_t blockCols = lhsType.getBlockCols();
    int64_t colBlocks = lhsType.getCols() / blockCols;
    int64_t lhsBlockRows = lhsType.getBlockRows();
    int64_t rhsBlockRows = rhsType.getBlockRows();
    BlockScaledFormat lhsFormat = lhsType.getFormat();
    BlockScaledFormat rhsFormat = rhsType.getFormat();

    Value lhsCodes =
        reshape(rewriter, loc, lhs[0], {batch, m, colBlocks, blockCols});
    Value rhsCodes =
        reshape(rewriter, loc, rhs[0], {batch, n, colBlocks, blockCols});
    Value lhsScales = reshape(rewriter, loc,
                              linearScales(rewriter, loc, lhsType, lhs[1]),
                              {batch, m / lhsBlockRows, colBlocks});
    Value rhsScales = reshape(rewriter, loc,
                              linearScales(rewriter, loc, rhsType, rhs[1]),
                              {batch, n / rhsBlockRows, colBlocks});

    auto parallel = utils::IteratorType::parallel;
    auto reduction = utils::IteratorType::reduction;
    AffineExpr bt, i, j, kb, k;
    bindDims(ctx, bt, i, j, kb, k);

    // Step 1: the per-block dot products sum(qA * qB) of every block of K
    // (products of E2M1 values are exact, and so are their sums; MXFP8 sums
    // round, in k order, which is the order of this reduction).
    Value zeros = s.f32(0.0f);
    Value partials = buildGeneric(
        rewriter, loc, {lhsCodes, rhsCodes},
        filledTensor(rewriter, loc, {batch, m, n, colBlocks}, zeros),
        {AffineMap::get(5, 0, {bt, i, kb, k}, ctx),
         AffineMap::get(5, 0, {bt, j, kb, k}, ctx),
         AffineMap::get(5, 0, {bt, i, j, kb}, ctx)},
        {parallel, parallel, parallel, parallel, reduction},
        [&](OpBuilder &b, Location l, ValueRange args) -> SmallVector<Value> {
          ScalarBuilder bs(b, l);
          Value product = arith::MulFOp::create(
              b, l, bs.decodeMXElement(lhsFormat, args[0]),
              bs.decodeMXElement(rhsFormat, args[1]));
          return {arith::AddFOp::create(b, l, args[2], product)};
        })[0];

    // Step 2: acc += partial * (sA * sB), block by block in K order -- the
    // only rounding step, so its order is the spec.
    AffineExpr lhsScaleRow = lhsBlockRows == 1 ? i : i.floorDiv(lhsBlockRows);
    AffineExpr rhsScaleRow = rhsBlockRows == 1 ? j : j.floorDiv(rhsBlockRows);
    Value accumulators = buildGeneric(
        rewriter, loc, {partials, lhsScales, rhsScales},
        filledTensor(rewriter, loc, {batch, m, n}, zeros),
        {AffineMap::get(4, 0, {bt, i, j, kb}, ctx),
         AffineMap::get(4, 0, {bt, lhsScaleRow, kb}, ctx),
         AffineMap::get(4, 0, {bt, rhsScaleRow, kb}, ctx),
         AffineMap::get(4, 0, {bt, i, j}, ctx)},
        {parallel, parallel, parallel, reduction},
        [&](OpBuilder &b, Location l, ValueRange args) -> SmallVector<Value> {
          ScalarBuilder bs(b, l);
          if (mx) {
            // One power of two after the other: 2^eA * 2^eB can leave the
            // binary32 range when the scaled partial does not.
            Value term = arith::MulFOp::create(b, l, args[0],
                                               bs.decodeE8M0(args[1]));
            term = arith::MulFOp::create(b, l, term, bs.decodeE8M0(args[2]));
            return {arith::AddFOp::create(b, l, args[3], term)};
          }
          Value scale = arith::MulFOp::create(b, l, bs.decodeE4M3(args[1]),
                                              bs.decodeE4M3(args[2]));
          Value term = arith::MulFOp::create(b, l, args[0], scale);
          return {arith::AddFOp::create(b, l, args[3], term)};
        })[0];

    // Step 3: TransformerEngine's alpha, applied once.
    // MX has no tensor scale: alpha is alpha_in.
    Value alphaIn = op.getAlpha() ? adaptor.getAlpha().front() : s.f32(1.0f);
    Value alpha = alphaIn;
    if (!mx) {
      alpha = arith::MulFOp::create(rewriter, loc, alphaIn, lhs[2]);
      alpha = arith::MulFOp::create(rewriter, loc, alpha, rhs[2]);
      // 1 / 2688 per amax operand; a decode scale needs none.
      alpha = arith::MulFOp::create(
          rewriter, loc, alpha,
          s.f32(::nvfp4::numerics::gemmAlphaConstant(lhsType.hasDecodeScale(),
                                            rhsType.hasDecodeScale())));
    }
    AffineMap id3 = AffineMap::getMultiDimIdentityMap(3, ctx);
    Type elementType = resultType.getElementType();
    Value result = buildGeneric(
        rewriter, loc, accumulators,
        emptyTensor(rewriter, loc, {batch, m, n}, elementType),
        {id3, id3}, {parallel, parallel, parallel},
        [&](OpBuilder &b, Location l, ValueRange args) -> SmallVector<Value> {
          ScalarBuilder bs(b, l);
          return {bs.fromF32(arith::MulFOp::create(b, l, args[0], alpha),
                             elementType)};
        })[0];
    result = reshape(rewriter, loc, result, resultType.getShape());
    SmallVector<Value> results = {result};
    // The fused output amax: that of the rounded result.
    if (op.getResultAmax())
      results.push_back(tensorAmax(rewriter, loc, result));
    rewriter.replaceOp(op, results);
    return success();
  }
};

} // namespace

void mlir::nvfp4::populateMatmulToReferencePatterns(
    const TypeConverter &converter, RewritePatternSet &patterns) {
  patterns.add<DequantizeOpLowering, ScaledMatmulOpLowering>(
      converter, patterns.getContext());
}
