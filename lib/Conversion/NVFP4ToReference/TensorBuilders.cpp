//===- TensorBuilders.cpp - tensor helpers of the reference lowering -----===//
//
// Part of the nvfp4 project.
//
//===----------------------------------------------------------------------===//

#include "TensorBuilders.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "llvm/Support/MathExtras.h"

using namespace mlir;
using namespace mlir::nvfp4;
using namespace mlir::nvfp4::reference;

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

Value reference::transposeLastTwo(OpBuilder &b, Location loc, Value input) {
  auto type = cast<RankedTensorType>(input.getType());
  int64_t rank = type.getRank();
  SmallVector<int64_t> permutation =
      llvm::to_vector(llvm::seq<int64_t>(0, rank));
  std::swap(permutation[rank - 2], permutation[rank - 1]);
  SmallVector<int64_t> shape;
  for (int64_t dim : permutation)
    shape.push_back(type.getDimSize(dim));
  Value init = emptyTensor(b, loc, shape, type.getElementType());
  return linalg::TransposeOp::create(b, loc, input, init, permutation)
      .getResult()[0];
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

Value reference::tensorAmax(OpBuilder &b, Location loc, Value input) {
  auto type = cast<RankedTensorType>(input.getType());
  Value reduced = reduceAmax(
      b, loc, input, llvm::to_vector(llvm::seq<int64_t>(0, type.getRank())));
  return tensor::ExtractOp::create(b, loc, reduced, ValueRange{});
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
