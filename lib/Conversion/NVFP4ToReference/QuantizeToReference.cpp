//===- QuantizeToReference.cpp - amax, quantize, hadamard -----------------===//
//
// Part of the nvfp4 project.
//
// Lowers the ops that produce NVFP4 data to tensor code that reproduces
// lib/Numerics bit for bit: nvfp4.amax (computeAmax), nvfp4.quantize
// (quantize, with stochastic rounding) and nvfp4.hadamard
// (hadamardTransform); amax and quantize with a `hadamard` sign mask are
// the RHT followed by the op.
//
//===----------------------------------------------------------------------===//

#include "TensorBuilders.h"
#include "nvfp4/Conversion/NVFP4ToReference/NVFP4ToReference.h"
#include "nvfp4/Dialect/NVFP4/IR/NVFP4Ops.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

#include <limits>

using namespace mlir;
using namespace mlir::nvfp4;
using namespace mlir::nvfp4::reference;

/// Product of the leading dimensions: the rows of the [rows, cols] matrix a
/// tensor is quantized as (blocks never cross rows).
static int64_t flatRows(ArrayRef<int64_t> shape) {
  int64_t rows = 1;
  for (int64_t d : shape.drop_back())
    rows *= d;
  return rows;
}

/// The 16-point RHT of `input` (a BF16 tensor of static shape) with
/// `signMask`, rounded to BF16: hadamardTransform of lib/Numerics, i.e. the
/// butterfly of NUMERICS.md section 4 with the same FP32 operations on the
/// same operands. Each stage is one linalg.generic.
static Value buildHadamard(OpBuilder &b, Location loc, Value input,
                           uint32_t signMask) {
  auto type = cast<RankedTensorType>(input.getType());
  MLIRContext *ctx = b.getContext();
  int64_t chunks = type.getNumElements() / kBlockSize;
  auto parallel = utils::IteratorType::parallel;
  AffineMap id2 = AffineMap::getMultiDimIdentityMap(2, ctx);

  // u_i = sign_i * v_i in f32 (a negation: exact, zeros included).
  SmallVector<bool> flips;
  for (unsigned i = 0; i < kBlockSize; ++i)
    flips.push_back((signMask >> i) & 1u);
  Value flipTensor = arith::ConstantOp::create(
      b, loc,
      DenseElementsAttr::get(
          RankedTensorType::get({kBlockSize}, b.getI1Type()), flips));
  AffineExpr n, i;
  bindDims(ctx, n, i);
  Value u = buildGeneric(
      b, loc, {reshape(b, loc, input, {chunks, kBlockSize}), flipTensor},
      emptyTensor(b, loc, {chunks, kBlockSize}, b.getF32Type()),
      {id2, AffineMap::get(2, 0, {i}, ctx), id2}, {parallel, parallel},
      [](OpBuilder &b, Location l, ValueRange args) -> SmallVector<Value> {
        Value v = ScalarBuilder(b, l).toF32(args[0]);
        return {arith::SelectOp::create(b, l, args[1],
                                        arith::NegFOp::create(b, l, v), v)};
      })[0];

  // Stage h: (u_i, u_{i+h}) = (u_i + u_{i+h}, u_i - u_{i+h}) for i & h == 0.
  // Viewed as [chunks, 16 / 2h, 2, h], entry (n, g, p, j) is u_i with
  // i = 2h * g + h * p + j: p = 0 is the first of the pair, p = 1 its
  // partner.
  AffineExpr g, p, j;
  bindDims(ctx, n, g, p, j);
  AffineExpr zero = getAffineConstantExpr(0, ctx),
             one = getAffineConstantExpr(1, ctx);
  AffineMap first = AffineMap::get(4, 0, {n, g, zero, j}, ctx);
  AffineMap second = AffineMap::get(4, 0, {n, g, one, j}, ctx);
  AffineMap id4 = AffineMap::getMultiDimIdentityMap(4, ctx);
  for (int64_t h = 1; h < kBlockSize; h *= 2) {
    SmallVector<int64_t> pairs = {chunks, kBlockSize / (2 * h), 2, h};
    Value staged = reshape(b, loc, u, pairs);
    u = buildGeneric(
        b, loc, {staged, staged}, emptyTensor(b, loc, pairs, b.getF32Type()),
        {first, second, id4}, {parallel, parallel, parallel, parallel},
        [](OpBuilder &b, Location l, ValueRange args) -> SmallVector<Value> {
          Value isFirst = arith::CmpIOp::create(
              b, l, arith::CmpIPredicate::eq, linalg::IndexOp::create(b, l, 2),
              arith::ConstantIndexOp::create(b, l, 0));
          return {arith::SelectOp::create(
              b, l, isFirst, arith::AddFOp::create(b, l, args[0], args[1]),
              arith::SubFOp::create(b, l, args[0], args[1]))};
        })[0];
  }

  // w_i = bf16(u_i * 0.25).
  Value rounded = buildGeneric(
      b, loc, reshape(b, loc, u, {chunks, kBlockSize}),
      emptyTensor(b, loc, {chunks, kBlockSize}, type.getElementType()),
      {id2, id2}, {parallel, parallel},
      [&](OpBuilder &b, Location l, ValueRange args) -> SmallVector<Value> {
        ScalarBuilder s(b, l);
        Value quarter = arith::MulFOp::create(b, l, args[0], s.f32(0.25f));
        return {s.fromF32(quarter, type.getElementType())};
      })[0];
  return reshape(b, loc, rounded, type.getShape());
}

/// `input`, or its RHT when the op carries a `hadamard` sign mask (the
/// fused form nvfp4-fuse-quantization creates). The pass rejects dynamic
/// shapes with a diagnostic before converting (checkBlockScaledUsers).
static FailureOr<Value> maybeHadamard(ConversionPatternRewriter &rewriter,
                                      Operation *op, Value input,
                                      std::optional<uint32_t> signMask) {
  if (!signMask)
    return input;
  if (!cast<RankedTensorType>(input.getType()).hasStaticShape())
    return rewriter.notifyMatchFailure(op, "the RHT needs a static shape");
  return buildHadamard(rewriter, op->getLoc(), input, *signMask);
}

namespace {

//===----------------------------------------------------------------------===//
// nvfp4.amax
//===----------------------------------------------------------------------===//

struct AmaxOpLowering : OpConversionPattern<AmaxOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(AmaxOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    FailureOr<Value> input =
        maybeHadamard(rewriter, op, adaptor.getInput(), op.getHadamard());
    if (failed(input))
      return failure();
    rewriter.replaceOp(op, tensorAmax(rewriter, op.getLoc(), *input));
    return success();
  }
};

//===----------------------------------------------------------------------===//
// nvfp4.quantize
//===----------------------------------------------------------------------===//

struct QuantizeOpLowering : OpConversionPattern<QuantizeOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(QuantizeOp op, OneToNOpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    BlockScaledTensorType type = op.getResult().getType();
    if (type.isMX())
      return lowerMX(op, adaptor.getInput().front(), rewriter);
    FailureOr<Value> transformed = maybeHadamard(
        rewriter, op, adaptor.getInput().front(), op.getHadamard());
    if (failed(transformed))
      return failure();
    Value input = *transformed;
    ScalarBuilder s(rewriter, loc);
    MLIRContext *ctx = rewriter.getContext();

    int64_t rows = flatRows(type.getShape()), cols = type.getCols();
    int64_t blockRows = type.getBlockRows();
    int64_t rowBlocks = rows / blockRows, colBlocks = cols / kBlockSize;
    // [row blocks, rows per block, column blocks, 16]: a block is the
    // sub-tensor at fixed (dim 0, dim 2).
    Value blocked = reshape(rewriter, loc, input,
                            {rowBlocks, blockRows, colBlocks, kBlockSize});

    Value amax = adaptor.getAmax().empty()
                     ? tensorAmax(rewriter, loc, blocked)
                     : adaptor.getAmax().front();
    ScalarBuilder::TensorScale scale = s.tensorScale(amax);

    // Block scales and encode factors.
    Value blockAmax = reduceAmax(rewriter, loc, blocked, {1, 3});
    AffineMap id2 = AffineMap::getMultiDimIdentityMap(2, ctx);
    auto parallel = utils::IteratorType::parallel;
    SmallVector<Value> perBlock = buildGeneric(
        rewriter, loc, blockAmax,
        {emptyTensor(rewriter, loc, {rowBlocks, colBlocks}, rewriter.getI8Type()),
         emptyTensor(rewriter, loc, {rowBlocks, colBlocks}, rewriter.getF32Type())},
        {id2, id2, id2}, {parallel, parallel},
        [&](OpBuilder &b, Location l, ValueRange args) -> SmallVector<Value> {
          ScalarBuilder::BlockScale block =
              ScalarBuilder(b, l).blockScale(args[0], scale);
          return {block.code, block.encode};
        });

    // Elements: scale by the block's encode factor, round to E2M1.
    AffineExpr d0, d1, d2, d3;
    bindDims(ctx, d0, d1, d2, d3);
    AffineMap id4 = AffineMap::getMultiDimIdentityMap(4, ctx);
    AffineMap blockOf = AffineMap::get(4, 0, {d0, d2}, ctx);
    Value seed = adaptor.getSeed().empty() ? Value() : adaptor.getSeed().front();
    Value codes = buildGeneric(
        rewriter, loc, {blocked, perBlock[1]},
        emptyTensor(rewriter, loc, {rowBlocks, blockRows, colBlocks, kBlockSize}, rewriter.getI8Type()),
        {id4, blockOf, id4}, {parallel, parallel, parallel, parallel},
        [&](OpBuilder &b, Location l, ValueRange args) -> SmallVector<Value> {
          ScalarBuilder bs(b, l);
          Value scaled = arith::MulFOp::create(b, l, bs.toF32(args[0]), args[1]);
          if (!seed)
            return {bs.encodeE2M1(scaled)};
          // Philox group = linear element index / 16 = row * colBlocks +
          // column block, since rows are whole groups.
          auto index = [&](int64_t dim) {
            return arith::IndexCastUIOp::create(
                b, l, b.getI64Type(), linalg::IndexOp::create(b, l, dim));
          };
          Value row = arith::AddIOp::create(
              b, l, arith::MulIOp::create(b, l, index(0), bs.i64(blockRows)),
              index(1));
          Value group = arith::AddIOp::create(
              b, l, arith::MulIOp::create(b, l, row, bs.i64(colBlocks)),
              index(2));
          Value lane = arith::IndexCastUIOp::create(
              b, l, b.getI32Type(), linalg::IndexOp::create(b, l, 3));
          return {bs.encodeE2M1Stochastic(
              scaled, bs.randomByte(bs.philoxGroup(seed, group), lane))};
        })[0];

    codes = reshape(rewriter, loc, codes, type.getShape());
    SmallVector<int64_t> linearScaleShape(type.getBatchShape());
    linearScaleShape.append({type.getRows() / blockRows, colBlocks});
    Value scales = reshape(rewriter, loc, perBlock[0], linearScaleShape);
    if (type.getLayout() == ScaleLayout::Swizzled128x4)
      scales = swizzleScales(rewriter, loc, scales, type.getBatchShape(),
                             type.getRows(), cols, blockRows);
    rewriter.replaceOpWithMultiple(op, {{codes, scales, amax}});
    return success();
  }

  /// The MX formats (docs/Numerics.md section 11.2): per 1x32 block the E8M0
  /// scale from the block amax, elements times 2^-e rounded to the element
  /// format; no tensor scale (the amax part is 0). The verifier (quantize_c6)
  /// rules out hadamard, stochastic rounding and an amax operand.
  LogicalResult lowerMX(QuantizeOp op, Value input,
                        ConversionPatternRewriter &rewriter) const {
    Location loc = op.getLoc();
    BlockScaledTensorType type = op.getResult().getType();
    BlockScaledFormat format = type.getFormat();
    MLIRContext *ctx = rewriter.getContext();
    int64_t rows = flatRows(type.getShape()), cols = type.getCols();
    int64_t blockCols = type.getBlockCols(), colBlocks = cols / blockCols;
    Value blocked = reshape(rewriter, loc, input, {rows, colBlocks, blockCols});

    Value blockAmax = reduceAmax(rewriter, loc, blocked, {2});
    AffineMap id2 = AffineMap::getMultiDimIdentityMap(2, ctx);
    auto parallel = utils::IteratorType::parallel;
    SmallVector<Value> perBlock = buildGeneric(
        rewriter, loc, blockAmax,
        {emptyTensor(rewriter, loc, {rows, colBlocks}, rewriter.getI8Type()),
         emptyTensor(rewriter, loc, {rows, colBlocks}, rewriter.getF32Type())},
        {id2, id2, id2}, {parallel, parallel},
        [&](OpBuilder &b, Location l, ValueRange args) -> SmallVector<Value> {
          auto [code, inverse] = ScalarBuilder(b, l).mxBlockScale(format, args[0]);
          return {code, inverse};
        });

    AffineMap id3 = AffineMap::getMultiDimIdentityMap(3, ctx);
    AffineExpr d0, d1, d2;
    bindDims(ctx, d0, d1, d2);
    Value codes = buildGeneric(
        rewriter, loc, {blocked, perBlock[1]},
        emptyTensor(rewriter, loc, {rows, colBlocks, blockCols},
                    rewriter.getI8Type()),
        {id3, AffineMap::get(3, 0, {d0, d1}, ctx), id3},
        {parallel, parallel, parallel},
        [&](OpBuilder &b, Location l, ValueRange args) -> SmallVector<Value> {
          ScalarBuilder bs(b, l);
          Value scaled = arith::MulFOp::create(b, l, bs.toF32(args[0]), args[1]);
          return {bs.encodeMXElement(format, scaled)};
        })[0];

    codes = reshape(rewriter, loc, codes, type.getShape());
    SmallVector<int64_t> linearScaleShape(type.getBatchShape());
    linearScaleShape.append({type.getRows(), colBlocks});
    Value scales = reshape(rewriter, loc, perBlock[0], linearScaleShape);
    // The swizzle helper counts 16-column blocks (cols / 32 = (cols/2) / 16).
    if (type.getLayout() == ScaleLayout::Swizzled128x4)
      scales = swizzleScales(rewriter, loc, scales, type.getBatchShape(),
                             type.getRows(), colBlocks * kBlockSize, 1);
    Value amax = arith::ConstantOp::create(rewriter, loc,
                                           rewriter.getF32FloatAttr(0.0f));
    rewriter.replaceOpWithMultiple(op, {{codes, scales, amax}});
    return success();
  }
};

//===----------------------------------------------------------------------===//
// nvfp4.hadamard
//===----------------------------------------------------------------------===//

struct HadamardOpLowering : OpConversionPattern<HadamardOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(HadamardOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    if (!cast<RankedTensorType>(op.getType()).hasStaticShape())
      return rewriter.notifyMatchFailure(op, "needs a static shape");
    rewriter.replaceOp(op, buildHadamard(rewriter, op.getLoc(),
                                         adaptor.getInput(), op.getSignMask()));
    return success();
  }
};

} // namespace

void mlir::nvfp4::populateQuantizeToReferencePatterns(
    const TypeConverter &converter, RewritePatternSet &patterns) {
  patterns.add<AmaxOpLowering, QuantizeOpLowering, HadamardOpLowering>(
      converter, patterns.getContext());
}
