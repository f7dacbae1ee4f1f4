//===- ReferenceBuilders.cpp - IR builders for bit-exact NVFP4 -----------===//
//
// Part of the nvfp4 project.
//
//===----------------------------------------------------------------------===//

#include "ReferenceBuilders.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "llvm/ADT/bit.h"
#include "llvm/Support/MathExtras.h"

#include <limits>

using namespace mlir;
using namespace mlir::nvfp4;
using namespace mlir::nvfp4::reference;

//===----------------------------------------------------------------------===//
// ScalarBuilder: constants and small helpers
//===----------------------------------------------------------------------===//

Value ScalarBuilder::f32(float value) {
  return arith::ConstantOp::create(b, loc, b.getF32FloatAttr(value));
}

Value ScalarBuilder::i8(int64_t value) {
  return arith::ConstantOp::create(b, loc, b.getI8IntegerAttr(value));
}

Value ScalarBuilder::i32(int64_t value) {
  return arith::ConstantOp::create(b, loc,
                                   b.getI32IntegerAttr(static_cast<int32_t>(
                                       static_cast<uint32_t>(value))));
}

Value ScalarBuilder::i64(int64_t value) {
  return arith::ConstantOp::create(b, loc, b.getI64IntegerAttr(value));
}

Value ScalarBuilder::select(Value cond, Value a, Value c) {
  return arith::SelectOp::create(b, loc, cond, a, c);
}

Value ScalarBuilder::stdMin(Value a, Value c) {
  Value less =
      arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OLT, c, a);
  return select(less, c, a);
}

Value ScalarBuilder::toF32(Value value) {
  if (value.getType().isF32())
    return value;
  return arith::ExtFOp::create(b, loc, b.getF32Type(), value);
}

Value ScalarBuilder::fromF32(Value value, Type type) {
  if (type.isF32())
    return value;
  // arith.truncf rounds to nearest even unless told otherwise.
  return arith::TruncFOp::create(b, loc, type, value);
}

Value ScalarBuilder::bitsOf(Value f32Value) {
  return arith::BitcastOp::create(b, loc, b.getI32Type(), f32Value);
}

Value ScalarBuilder::floatFromBits(Value i32Bits) {
  return arith::BitcastOp::create(b, loc, b.getF32Type(), i32Bits);
}

//===----------------------------------------------------------------------===//
// E2M1
//===----------------------------------------------------------------------===//

Value ScalarBuilder::encodeE2M1(Value value) {
  // The magnitude code is the number of RNE decision boundaries below |y|:
  // strict comparisons send a tie down, non-strict ones up, and both pick the
  // code with an even mantissa. NaN fails every comparison and is mapped to
  // +6 below.
  Value magnitude = math::AbsFOp::create(b, loc, value);
  struct Boundary {
    float value;
    arith::CmpFPredicate predicate;
  };
  const Boundary boundaries[] = {
      {0.25f, arith::CmpFPredicate::OGT}, {0.75f, arith::CmpFPredicate::OGE},
      {1.25f, arith::CmpFPredicate::OGT}, {1.75f, arith::CmpFPredicate::OGE},
      {2.5f, arith::CmpFPredicate::OGT},  {3.5f, arith::CmpFPredicate::OGE},
      {5.0f, arith::CmpFPredicate::OGT}};
  Value code = i8(0);
  for (const Boundary &boundary : boundaries) {
    Value above = arith::CmpFOp::create(b, loc, boundary.predicate, magnitude,
                                        f32(boundary.value));
    code = arith::AddIOp::create(
        b, loc, code, arith::ExtUIOp::create(b, loc, b.getI8Type(), above));
  }
  // The sign comes from the float's sign bit, so -0.0 and small negatives
  // become code 8 (-0).
  Value signBit = arith::ShRUIOp::create(b, loc, bitsOf(value), i32(31));
  Value sign = arith::ShLIOp::create(
      b, loc, arith::TruncIOp::create(b, loc, b.getI8Type(), signBit), i8(3));
  code = arith::OrIOp::create(b, loc, code, sign);
  Value isNaN =
      arith::CmpFOp::create(b, loc, arith::CmpFPredicate::UNO, value, value);
  return select(isNaN, i8(7), code);
}

Value ScalarBuilder::decodeE2M1(Value code) {
  // Magnitude code m = eem: m < 2 is m * 0.5; otherwise (2 + lowbit) *
  // 2^(ee - 2). Both are significand * 2^(max(ee, 1) - 2).
  Value magnitude = arith::AndIOp::create(b, loc, code, i8(7));
  Value exponent = arith::ShRUIOp::create(b, loc, magnitude, i8(1));
  Value mantissa = arith::AndIOp::create(b, loc, magnitude, i8(1));
  Value isSubnormal = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                            exponent, i8(0));
  Value significand = select(
      isSubnormal, mantissa, arith::AddIOp::create(b, loc, mantissa, i8(2)));
  Value scaleExponent = arith::MaxUIOp::create(b, loc, exponent, i8(1));
  // 2^(e - 2) as f32 bits: (e - 2 + 127) << 23.
  Value biased = arith::AddIOp::create(
      b, loc, arith::ExtUIOp::create(b, loc, b.getI32Type(), scaleExponent),
      i32(125));
  Value scale =
      floatFromBits(arith::ShLIOp::create(b, loc, biased, i32(23)));
  Value result = arith::MulFOp::create(
      b, loc, arith::UIToFPOp::create(b, loc, b.getF32Type(), significand),
      scale);
  Value isNegative = arith::CmpIOp::create(
      b, loc, arith::CmpIPredicate::ne,
      arith::AndIOp::create(b, loc, code, i8(8)), i8(0));
  return select(isNegative, arith::NegFOp::create(b, loc, result), result);
}

//===----------------------------------------------------------------------===//
// E4M3
//===----------------------------------------------------------------------===//

std::pair<Value, Value> ScalarBuilder::roundToE4M3(Value value) {
  // Precondition (the block-scale formula guarantees it): value is NaN or in
  // [0, 448]. Round to a multiple of the E4M3 quantum of value's binade --
  // 2^(E-3) for normals (E >= -6), 2^-9 below -- with roundeven; the
  // division and multiplication by a power of two are exact.
  Value bits = bitsOf(value);
  Value exponent = arith::SubIOp::create(
      b, loc, arith::ShRUIOp::create(b, loc, bits, i32(23)), i32(127));
  Value quantumExponent = arith::MaxSIOp::create(
      b, loc, arith::SubIOp::create(b, loc, exponent, i32(3)), i32(-9));
  Value quantum = floatFromBits(arith::ShLIOp::create(
      b, loc, arith::AddIOp::create(b, loc, quantumExponent, i32(127)),
      i32(23)));
  Value units = math::RoundEvenOp::create(
      b, loc, arith::DivFOp::create(b, loc, value, quantum));
  Value rounded = arith::MulFOp::create(b, loc, units, quantum);

  // Encode the exact rounded value: normals (>= 2^-6) take the f32 exponent
  // rebased from 127 to 7 and the top 3 mantissa bits; subnormals count
  // 2^-9 units.
  Value roundedBits = bitsOf(rounded);
  Value normalCode = arith::OrIOp::create(
      b, loc,
      arith::ShLIOp::create(
          b, loc,
          arith::SubIOp::create(
              b, loc, arith::ShRUIOp::create(b, loc, roundedBits, i32(23)),
              i32(120)),
          i32(3)),
      arith::AndIOp::create(
          b, loc, arith::ShRUIOp::create(b, loc, roundedBits, i32(20)),
          i32(7)));
  Value subnormalCode = arith::FPToUIOp::create(
      b, loc, b.getI32Type(),
      arith::MulFOp::create(b, loc, rounded, f32(512.0f)));
  Value isNormal = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OGE,
                                         rounded, f32(0x1p-6f));
  Value code = arith::TruncIOp::create(
      b, loc, b.getI8Type(), select(isNormal, normalCode, subnormalCode));
  Value isNaN =
      arith::CmpFOp::create(b, loc, arith::CmpFPredicate::UNO, value, value);
  return {select(isNaN, i8(0x7F), code), rounded};
}

Value ScalarBuilder::decodeE4M3(Value bits) {
  // eeee fff: e == 0 is f * 2^-9, otherwise (8 + f) * 2^(e - 10); both are
  // significand * 2^(max(e, 1) - 10). 0x7F is NaN.
  Value wide = arith::ExtUIOp::create(b, loc, b.getI32Type(), bits);
  Value magnitude = arith::AndIOp::create(b, loc, wide, i32(0x7F));
  Value exponent = arith::ShRUIOp::create(b, loc, magnitude, i32(3));
  Value fraction = arith::AndIOp::create(b, loc, magnitude, i32(7));
  Value isSubnormal = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                            exponent, i32(0));
  Value significand = select(isSubnormal, fraction,
                             arith::AddIOp::create(b, loc, fraction, i32(8)));
  Value scale = floatFromBits(arith::ShLIOp::create(
      b, loc,
      arith::AddIOp::create(
          b, loc, arith::MaxUIOp::create(b, loc, exponent, i32(1)),
          i32(127 - 10)),
      i32(23)));
  Value result = arith::MulFOp::create(
      b, loc, arith::UIToFPOp::create(b, loc, b.getF32Type(), significand),
      scale);
  Value isNaN = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                      magnitude, i32(0x7F));
  result = select(isNaN, f32(std::numeric_limits<float>::quiet_NaN()), result);
  Value isNegative = arith::CmpIOp::create(
      b, loc, arith::CmpIPredicate::ne,
      arith::AndIOp::create(b, loc, wide, i32(0x80)), i32(0));
  return select(isNegative, arith::NegFOp::create(b, loc, result), result);
}

//===----------------------------------------------------------------------===//
// Stochastic rounding
//===----------------------------------------------------------------------===//

std::array<Value, 4> ScalarBuilder::philox(std::array<Value, 4> counter,
                                           std::array<Value, 2> key) {
  // Salmon et al., "Parallel random numbers: as easy as 1, 2, 3" (SC'11):
  // 10 rounds of two 32x32->64 multiplies; the key advances by the Weyl
  // constants between rounds.
  Value multiplier0 = i32(0xD2511F53), multiplier1 = i32(0xCD9E8D57);
  Value weyl0 = i32(0x9E3779B9), weyl1 = i32(0xBB67AE85);
  for (int round = 0; round < 10; ++round) {
    if (round != 0) {
      key[0] = arith::AddIOp::create(b, loc, key[0], weyl0);
      key[1] = arith::AddIOp::create(b, loc, key[1], weyl1);
    }
    auto product0 =
        arith::MulUIExtendedOp::create(b, loc, multiplier0, counter[0]);
    auto product1 =
        arith::MulUIExtendedOp::create(b, loc, multiplier1, counter[2]);
    Value hi0 = product0.getHigh(), lo0 = product0.getLow();
    Value hi1 = product1.getHigh(), lo1 = product1.getLow();
    counter = {
        arith::XOrIOp::create(
            b, loc, arith::XOrIOp::create(b, loc, hi1, counter[1]), key[0]),
        lo1,
        arith::XOrIOp::create(
            b, loc, arith::XOrIOp::create(b, loc, hi0, counter[3]), key[1]),
        lo0};
  }
  return counter;
}

/// The E2M1 spacing of the binade that starts at `magnitude`.
static Value e2m1Step(ScalarBuilder &s, OpBuilder &b, Location loc,
                      Value magnitude) {
  Value atLeast4 = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OGE,
                                         magnitude, s.f32(4.0f));
  Value atLeast2 = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OGE,
                                         magnitude, s.f32(2.0f));
  Value lower = arith::SelectOp::create(b, loc, atLeast2, s.f32(1.0f),
                                        s.f32(0.5f));
  return arith::SelectOp::create(b, loc, atLeast4, s.f32(2.0f), lower);
}

Value ScalarBuilder::encodeE2M1Stochastic(Value value, Value randomByte) {
  // NUMERICS.md section 5: t = fma(u, step(|y|), |y|), then truncate t to the
  // E2M1 grid of its own binade and saturate at 6.
  Value uniform = arith::MulFOp::create(
      b, loc, arith::UIToFPOp::create(b, loc, b.getF32Type(), randomByte),
      f32(1.0f / 256.0f));
  Value magnitude = math::AbsFOp::create(b, loc, value);
  Value threshold = math::FmaOp::create(
      b, loc, uniform, e2m1Step(*this, b, loc, magnitude), magnitude);
  Value step = e2m1Step(*this, b, loc, threshold);
  Value truncated = arith::MulFOp::create(
      b, loc,
      math::FloorOp::create(b, loc,
                            arith::DivFOp::create(b, loc, threshold, step)),
      step);
  Value rounded = stdMin(truncated, f32(6.0f));
  Value code = encodeE2M1(math::CopySignOp::create(b, loc, rounded, value));
  Value isNaN =
      arith::CmpFOp::create(b, loc, arith::CmpFPredicate::UNO, value, value);
  return select(isNaN, i8(7), code);
}

//===----------------------------------------------------------------------===//
// Tensor helpers
//===----------------------------------------------------------------------===//

Value reference::reshape(OpBuilder &b, Location loc, Value tensor,
                         ArrayRef<int64_t> shape) {
  auto type = cast<RankedTensorType>(tensor.getType());
  if (type.getShape() == shape)
    return tensor;
  Value flat = tensor;
  if (type.getRank() != 1) {
    SmallVector<ReassociationIndices> all(1);
    for (int64_t d = 0; d < type.getRank(); ++d)
      all[0].push_back(d);
    flat = tensor::CollapseShapeOp::create(b, loc, tensor, all);
  }
  if (shape.size() == 1)
    return flat;
  SmallVector<ReassociationIndices> all(1);
  for (int64_t d = 0, e = shape.size(); d < e; ++d)
    all[0].push_back(d);
  return tensor::ExpandShapeOp::create(
      b, loc, RankedTensorType::get(shape, type.getElementType()), flat, all);
}

Value reference::emptyTensor(OpBuilder &b, Location loc,
                             ArrayRef<int64_t> shape, Type elementType) {
  return tensor::EmptyOp::create(b, loc, shape, elementType);
}

Value reference::filledTensor(OpBuilder &b, Location loc,
                              ArrayRef<int64_t> shape, Value value) {
  Value empty = emptyTensor(b, loc, shape, value.getType());
  return linalg::FillOp::create(b, loc, value, empty).getResult(0);
}

Value reference::reduceAmax(OpBuilder &b, Location loc, Value input,
                            ArrayRef<int64_t> dims) {
  auto type = cast<RankedTensorType>(input.getType());
  SmallVector<int64_t> resultShape;
  for (int64_t d = 0; d < type.getRank(); ++d)
    if (!llvm::is_contained(dims, d))
      resultShape.push_back(type.getDimSize(d));
  ScalarBuilder s(b, loc);
  Value init = filledTensor(b, loc, resultShape, s.f32(0.0f));
  auto reduce = linalg::ReduceOp::create(
      b, loc, input, init, dims,
      [](OpBuilder &nested, Location nestedLoc, ValueRange args) {
        ScalarBuilder ns(nested, nestedLoc);
        Value magnitude =
            math::AbsFOp::create(nested, nestedLoc, ns.toF32(args[0]));
        // maxnumf returns the accumulator when the element is NaN: NaN is
        // skipped, as computeAmax does.
        Value max =
            arith::MaxNumFOp::create(nested, nestedLoc, args[1], magnitude);
        linalg::YieldOp::create(nested, nestedLoc, max);
      });
  return reduce.getResult(0);
}

SmallVector<Value>
reference::buildGeneric(OpBuilder &b, Location loc, ValueRange inputs,
                        ValueRange outputs, ArrayRef<AffineMap> maps,
                        ArrayRef<utils::IteratorType> iterators,
                        BodyBuilder body) {
  auto generic = linalg::GenericOp::create(
      b, loc, TypeRange(outputs), inputs, outputs, maps, iterators,
      [&](OpBuilder &nested, Location nestedLoc, ValueRange args) {
        linalg::YieldOp::create(nested, nestedLoc, body(nested, nestedLoc, args));
      });
  return llvm::to_vector_of<Value>(generic.getResults());
}

Value reference::hadamardMatrix(OpBuilder &b, Location loc,
                                uint32_t signMask) {
  SmallVector<float> entries;
  for (unsigned row = 0; row < 16; ++row) {
    for (unsigned col = 0; col < 16; ++col) {
      // Sylvester order: H[r][c] = (-1)^popcount(r & c); row r is negated
      // when bit r of the mask is set (diag(sign) * H).
      bool negative = llvm::popcount(row & col) % 2 != 0;
      if ((signMask >> row) & 1u)
        negative = !negative;
      entries.push_back(negative ? -0.25f : 0.25f);
    }
  }
  auto type = RankedTensorType::get({16, 16}, b.getF32Type());
  return arith::ConstantOp::create(
      b, loc, DenseElementsAttr::get(type, ArrayRef<float>(entries)));
}

//===----------------------------------------------------------------------===//
// 128x4 scale swizzle
//
// The swizzled byte offset of scale (r, c) is
//   ((r/128) * (C/4) + c/4) * 512 + (r%32) * 16 + ((r%128)/32) * 4 + c%4,
// i.e. a row-major [R/128, C/4, 32, 4, 4] array indexed by
// (r/128, c/4, r%32, (r%128)/32, c%4). Viewing the padded [R, C] matrix as
// [R/128, 4, 32, C/4, 4] (indices r/128, (r%128)/32, r%32, c/4, c%4), the
// swizzle is the transpose that swaps dimensions 1 and 3 (after a batch
// dimension); the transpose is its own inverse.
//===----------------------------------------------------------------------===//

static constexpr int64_t kSwizzlePermutation[] = {0, 1, 4, 3, 2, 5};

static Value transposeAtoms(OpBuilder &b, Location loc, Value tensor) {
  auto type = cast<RankedTensorType>(tensor.getType());
  SmallVector<int64_t> shape;
  for (int64_t d : kSwizzlePermutation)
    shape.push_back(type.getDimSize(d));
  Value init = tensor::EmptyOp::create(b, loc, shape, type.getElementType());
  return linalg::TransposeOp::create(b, loc, tensor, init, kSwizzlePermutation)
      .getResult()[0];
}

static int64_t product(ArrayRef<int64_t> shape) {
  int64_t result = 1;
  for (int64_t d : shape)
    result *= d;
  return result;
}

Value reference::swizzleScales(OpBuilder &b, Location loc, Value linear,
                               ArrayRef<int64_t> batchShape, int64_t rows,
                               int64_t cols, int64_t blockRows) {
  int64_t batch = product(batchShape);
  int64_t scaleRows = rows / blockRows, scaleCols = cols / 16;
  int64_t paddedRows = llvm::alignTo(rows, 128);
  int64_t paddedCols = llvm::alignTo(scaleCols, 4);
  Value scales = reshape(b, loc, linear, {batch, scaleRows, scaleCols});

  if (blockRows != 1) {
    // Tensor cores read one scale per row: repeat each tile scale over its
    // 16 rows.
    auto i8 = b.getI8Type();
    Value init = emptyTensor(b, loc, {batch, scaleRows, blockRows, scaleCols}, i8);
    MLIRContext *ctx = b.getContext();
    AffineExpr d0, d1, d2, d3;
    bindDims(ctx, d0, d1, d2, d3);
    auto parallel = utils::IteratorType::parallel;
    scales = buildGeneric(
        b, loc, scales, init,
        {AffineMap::get(4, 0, {d0, d1, d3}, ctx),
         AffineMap::getMultiDimIdentityMap(4, ctx)},
        {parallel, parallel, parallel, parallel},
        [](OpBuilder &, Location, ValueRange args) -> SmallVector<Value> {
          return {args[0]};
        })[0];
    scales = reshape(b, loc, scales, {batch, rows, scaleCols});
  }

  // Zero padding: garbage in the padding has produced NaNs in other stacks.
  ScalarBuilder s(b, loc);
  Value padded = filledTensor(b, loc, {batch, paddedRows, paddedCols}, s.i8(0));
  SmallVector<OpFoldResult> offsets(3, b.getIndexAttr(0));
  SmallVector<OpFoldResult> sizes = {b.getIndexAttr(batch),
                                     b.getIndexAttr(rows),
                                     b.getIndexAttr(scaleCols)};
  SmallVector<OpFoldResult> strides(3, b.getIndexAttr(1));
  padded = tensor::InsertSliceOp::create(b, loc, scales, padded, offsets,
                                         sizes, strides);

  Value atoms = reshape(
      b, loc, padded,
      {batch, paddedRows / 128, 4, 32, paddedCols / 4, 4});
  SmallVector<int64_t> resultShape(batchShape);
  resultShape.append({paddedRows, paddedCols});
  return reshape(b, loc, transposeAtoms(b, loc, atoms), resultShape);
}

Value reference::unswizzleScales(OpBuilder &b, Location loc, Value swizzled,
                                 ArrayRef<int64_t> batchShape, int64_t rows,
                                 int64_t cols, int64_t blockRows) {
  int64_t batch = product(batchShape);
  int64_t scaleRows = rows / blockRows, scaleCols = cols / 16;
  int64_t paddedRows = llvm::alignTo(rows, 128);
  int64_t paddedCols = llvm::alignTo(scaleCols, 4);
  Value atoms = reshape(
      b, loc, swizzled,
      {batch, paddedRows / 128, paddedCols / 4, 32, 4, 4});
  Value padded = reshape(b, loc, transposeAtoms(b, loc, atoms),
                         {batch, paddedRows, paddedCols});
  // Drop the padding and, for 16x16 blocks, keep the first row of each tile
  // (all 16 hold the same scale).
  SmallVector<OpFoldResult> offsets(3, b.getIndexAttr(0));
  SmallVector<OpFoldResult> sizes = {b.getIndexAttr(batch),
                                     b.getIndexAttr(scaleRows),
                                     b.getIndexAttr(scaleCols)};
  SmallVector<OpFoldResult> strides = {b.getIndexAttr(1),
                                       b.getIndexAttr(blockRows),
                                       b.getIndexAttr(1)};
  Value linear = tensor::ExtractSliceOp::create(b, loc, padded, offsets, sizes,
                                                strides);
  SmallVector<int64_t> resultShape(batchShape);
  resultShape.append({scaleRows, scaleCols});
  return reshape(b, loc, linear, resultShape);
}
