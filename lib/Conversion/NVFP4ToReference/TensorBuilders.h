//===- TensorBuilders.h - tensor helpers of the reference lowering -*- C++ -*-===//
//
// Part of the nvfp4 project.
//
//===----------------------------------------------------------------------===//
//
// Tensor-level helpers of convert-nvfp4-to-reference: row-major reshapes,
// fills, reductions, elementwise generics and the scale swizzle.
//
//===----------------------------------------------------------------------===//

#ifndef NVFP4_LIB_CONVERSION_NVFP4TOREFERENCE_TENSORBUILDERS_H
#define NVFP4_LIB_CONVERSION_NVFP4TOREFERENCE_TENSORBUILDERS_H

#include "nvfp4/Conversion/Utils/ElementBuilders.h"

#include "mlir/Dialect/Utils/StructuredOpsUtils.h"

namespace mlir {
namespace nvfp4 {
namespace reference {

/// Row-major reshape of a static tensor (collapse to 1-D, expand to
/// `shape`); no data moves.
Value reshape(OpBuilder &b, Location loc, Value tensor,
              ArrayRef<int64_t> shape);

/// A tensor.empty of `shape` and `elementType`.
Value emptyTensor(OpBuilder &b, Location loc, ArrayRef<int64_t> shape,
                  Type elementType);

/// The transpose of the last two dimensions of a static tensor
/// (linalg.transpose into a tensor.empty).
Value transposeLastTwo(OpBuilder &b, Location loc, Value input);

/// A tensor of `shape` filled with `value`.
Value filledTensor(OpBuilder &b, Location loc, ArrayRef<int64_t> shape,
                   Value value);

/// max |x| over dimensions `dims` of `input` (any float type), as f32,
/// skipping NaN (computeAmax).
Value reduceAmax(OpBuilder &b, Location loc, Value input,
                 ArrayRef<int64_t> dims);

/// The amax of the whole tensor `input` as an f32 scalar (computeAmax).
Value tensorAmax(OpBuilder &b, Location loc, Value input);

/// A linalg.generic over the iteration space of the first output. `maps`
/// holds one map per input then one per output; the body receives the
/// scalars of inputs and outputs and returns one value per output.
using BodyBuilder =
    function_ref<SmallVector<Value>(OpBuilder &, Location, ValueRange)>;
SmallVector<Value> buildGeneric(OpBuilder &b, Location loc, ValueRange inputs,
                                ValueRange outputs, ArrayRef<AffineMap> maps,
                                ArrayRef<utils::IteratorType> iterators,
                                BodyBuilder body);

/// Converts a per-block linear scale tensor [batch..., rows / blockRows,
/// cols / 16] (i8) into the 128x4 swizzled layout [batch..., roundUp(rows,
/// 128), roundUp(cols / 16, 4)], replicating 16x16-block scales into their
/// rows and padding with zeros.
Value swizzleScales(OpBuilder &b, Location loc, Value linear,
                    ArrayRef<int64_t> batchShape, int64_t rows, int64_t cols,
                    int64_t blockRows);
/// The inverse of swizzleScales.
Value unswizzleScales(OpBuilder &b, Location loc, Value swizzled,
                      ArrayRef<int64_t> batchShape, int64_t rows, int64_t cols,
                      int64_t blockRows);

} // namespace reference
} // namespace nvfp4
} // namespace mlir

#endif // NVFP4_LIB_CONVERSION_NVFP4TOREFERENCE_TENSORBUILDERS_H
