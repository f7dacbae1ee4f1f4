//===- ReferenceBuilders.h - IR builders for bit-exact NVFP4 ---*- C++ -*-===//
//
// Part of the nvfp4 project.
//
//===----------------------------------------------------------------------===//
//
// The building blocks shared by the reference patterns: scalar element
// conversions (E2M1, E4M3, stochastic rounding, Philox) that are emitted
// inside linalg bodies, and a few tensor helpers (row-major reshape, fill,
// reductions, elementwise generics). Every function here is the IR form of
// one function of the C++ numerics library (lib/Numerics) and must stay
// bit-identical to it; the comments say which.
//
//===----------------------------------------------------------------------===//

#ifndef NVFP4_LIB_CONVERSION_NVFP4TOREFERENCE_REFERENCEBUILDERS_H
#define NVFP4_LIB_CONVERSION_NVFP4TOREFERENCE_REFERENCEBUILDERS_H

#include "mlir/Dialect/Utils/StructuredOpsUtils.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"

#include <array>

namespace mlir {
namespace nvfp4 {
namespace reference {

/// Emits scalar IEEE FP32 / integer code at one location. Used inside linalg
/// region bodies, where every value is a scalar.
class ScalarBuilder {
public:
  ScalarBuilder(OpBuilder &builder, Location loc) : b(builder), loc(loc) {}

  Value f32(float value);
  Value i8(int64_t value);
  Value i32(int64_t value);
  Value i64(int64_t value);

  /// std::min(a, c) as the numerics library computes it: `c < a ? c : a`
  /// (a NaN in `a` is kept, a NaN in `c` is dropped).
  Value stdMin(Value a, Value c);
  /// Extends bf16/f16 to f32; f32 is returned unchanged.
  Value toF32(Value value);
  /// Rounds an f32 to `type` (bf16, f16 or f32) to nearest even.
  Value fromF32(Value value, Type type);

  /// encodeE2M1: f32 -> i8 code (RNE, satfinite, NaN -> +6, sign of zero
  /// kept).
  Value encodeE2M1(Value value);
  /// decodeE2M1: i8 code (low nibble) -> f32.
  Value decodeE2M1(Value code);
  /// encodeE4M3 for a block scale: `value` is >= 0 (or NaN). Returns the i8
  /// code and its exact f32 value.
  std::pair<Value, Value> roundToE4M3(Value value);
  /// decodeE4M3: i8 bits -> f32 (NaN for 0x7F/0xFF).
  Value decodeE4M3(Value bits);
  /// Philox4x32-10 of a 4-word counter under a 2-word key (i32 values).
  std::array<Value, 4> philox(std::array<Value, 4> counter,
                              std::array<Value, 2> key);
  /// encodeE2M1Stochastic: f32 and an 8-bit random value (i32 in [0, 255])
  /// -> i8 code.
  Value encodeE2M1Stochastic(Value value, Value randomByte);

private:
  Value bitsOf(Value f32Value);
  Value floatFromBits(Value i32Bits);
  Value select(Value cond, Value a, Value c);

  OpBuilder &b;
  Location loc;
};

/// Row-major reshape of a static tensor (collapse to 1-D, expand to
/// `shape`); no data moves.
Value reshape(OpBuilder &b, Location loc, Value tensor,
              ArrayRef<int64_t> shape);

/// A tensor.empty of `shape` and `elementType`.
Value emptyTensor(OpBuilder &b, Location loc, ArrayRef<int64_t> shape,
                  Type elementType);

/// A tensor of `shape` filled with `value`.
Value filledTensor(OpBuilder &b, Location loc, ArrayRef<int64_t> shape,
                   Value value);

/// max |x| over dimensions `dims` of `input` (any float type), as f32,
/// skipping NaN (computeAmax).
Value reduceAmax(OpBuilder &b, Location loc, Value input,
                 ArrayRef<int64_t> dims);

/// A linalg.generic over the iteration space of the first output. `maps`
/// holds one map per input then one per output; the body receives the
/// scalars of inputs and outputs and returns one value per output.
using BodyBuilder =
    function_ref<SmallVector<Value>(OpBuilder &, Location, ValueRange)>;
SmallVector<Value> buildGeneric(OpBuilder &b, Location loc, ValueRange inputs,
                                ValueRange outputs, ArrayRef<AffineMap> maps,
                                ArrayRef<utils::IteratorType> iterators,
                                BodyBuilder body);

/// The 16x16 RHT matrix `diag(sign) * H16 * 0.25` as an f32 constant.
Value hadamardMatrix(OpBuilder &b, Location loc, uint32_t signMask);

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

#endif // NVFP4_LIB_CONVERSION_NVFP4TOREFERENCE_REFERENCEBUILDERS_H
