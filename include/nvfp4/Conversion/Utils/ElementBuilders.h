//===- ElementBuilders.h - scalar IR builders for NVFP4 ---------*- C++ -*-===//
//
// Part of the nvfp4 project.
//
//===----------------------------------------------------------------------===//
//
// Scalar element arithmetic shared by the reference lowering (inside linalg
// bodies) and the GPU kernels (inside gpu.func bodies): E2M1 and E4M3
// conversions, stochastic rounding and Philox4x32-10. Every function here is
// the IR form of one function of the C++ numerics library (lib/Numerics)
// and must stay bit-identical to it; the comments say which.
//
//===----------------------------------------------------------------------===//

#ifndef NVFP4_CONVERSION_UTILS_ELEMENTBUILDERS_H
#define NVFP4_CONVERSION_UTILS_ELEMENTBUILDERS_H

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "nvfp4/Dialect/NVFP4/IR/NVFP4Dialect.h"
#include "llvm/ADT/STLFunctionalExtras.h"

#include <array>

namespace mlir {
namespace nvfp4 {

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
  /// The high and low words of the full 64-bit product of two i32 values.
  using MultiplyExtended =
      function_ref<std::pair<Value, Value>(Value lhs, Value rhs)>;

  /// Philox4x32-10 of a 4-word counter under a 2-word key (i32 values).
  /// `multiply` forms the 32x32->64 products (default:
  /// arith.mului_extended); a code generator can pass the instructions its
  /// target has.
  std::array<Value, 4> philox(std::array<Value, 4> counter,
                              std::array<Value, 2> key,
                              MultiplyExtended multiply = nullptr);
  /// encodeE2M1Stochastic: f32 and an 8-bit random value (i32 in [0, 255])
  /// -> i8 code.
  Value encodeE2M1Stochastic(Value value, Value randomByte);

  /// Per-tensor factors of quantization (computeTensorScale).
  struct TensorScale {
    Value decode;          ///< S_dec = 1 / S_enc
    Value blockMultiplier; ///< S_enc * fp32(1/6)
  };
  TensorScale tensorScale(Value amax);

  /// Per-block scale (computeBlockScale) and encode factor
  /// (computeBlockEncodeFactor) from the block amax.
  struct BlockScale {
    Value code;   ///< i8 E4M3 bits
    Value encode; ///< f32 factor the block's elements are multiplied by
  };
  BlockScale blockScale(Value blockAmax, const TensorScale &scale);
  /// computeBlockEncodeFactor: the factor a block's elements are multiplied
  /// by, from the exact f32 value of its E4M3 scale.
  Value blockEncode(Value scaleValue, const TensorScale &scale);

  /// The 8 random bits of lane `lane` (i32, 0..15) from the four Philox words
  /// of its group: word lane / 4, byte lane % 4.
  Value randomByte(std::array<Value, 4> words, Value lane);

  /// The Philox4x32-10 words of group `group` (i64) under `seed` (i64).
  std::array<Value, 4> philoxGroup(Value seed, Value group,
                                   MultiplyExtended multiply = nullptr);

  //===--------------------------------------------------------------------===//
  // MX formats (docs/Numerics.md section 11)
  //===--------------------------------------------------------------------===//

  /// encodeE4M3 / encodeE5M2 of any f32 (signed): RNE, satfinite, NaN ->
  /// 0x7F with the input's sign, sign of zero kept. `format` is the MX
  /// element format (E4M3 or E5M2 for MXFP8, E2M1 for MXFP4).
  Value encodeMXElement(BlockScaledFormat format, Value value);
  /// decodeMXElement: i8 code -> f32.
  Value decodeMXElement(BlockScaledFormat format, Value code);
  /// The E8M0 byte (i8) of a block whose amax is `blockAmax` (f32, >= 0):
  /// 2^ceil(log2(fp32(blockAmax * fp32(1 / max_elem)))) clamped to
  /// [2^-127, 2^127] (computeMXScaleExponent), and 2^-e as f32, the factor
  /// the block's elements are multiplied by.
  std::pair<Value, Value> mxBlockScale(BlockScaledFormat format,
                                       Value blockAmax);
  /// decodeE8M0: i8 bits -> 2^(bits - 127) as f32, NaN for 0xFF.
  Value decodeE8M0(Value bits);

private:
  Value bitsOf(Value f32Value);
  Value floatFromBits(Value i32Bits);
  Value select(Value cond, Value a, Value c);

  OpBuilder &b;
  Location loc;
};

} // namespace nvfp4
} // namespace mlir

#endif // NVFP4_CONVERSION_UTILS_ELEMENTBUILDERS_H
