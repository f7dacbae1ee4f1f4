//===- ElementBuilders.cpp - scalar IR builders for NVFP4 ----------------===//
//
// Part of the nvfp4 project.
//
//===----------------------------------------------------------------------===//

#include "nvfp4/Conversion/Utils/ElementBuilders.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "llvm/ADT/bit.h"
#include "llvm/Support/MathExtras.h"

#include <cmath>
#include <limits>

static constexpr float kFloatMax = std::numeric_limits<float>::max();

using namespace mlir;
using namespace mlir::nvfp4;

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
                                           std::array<Value, 2> key,
                                           MultiplyExtended multiply) {
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
    auto product = [&](Value lhs, Value rhs) -> std::pair<Value, Value> {
      if (multiply)
        return multiply(lhs, rhs);
      auto extended = arith::MulUIExtendedOp::create(b, loc, lhs, rhs);
      return {extended.getHigh(), extended.getLow()};
    };
    auto [hi0, lo0] = product(multiplier0, counter[0]);
    auto [hi1, lo1] = product(multiplier1, counter[2]);
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
// Quantization formulas (NUMERICS.md section 2)
//===----------------------------------------------------------------------===//

ScalarBuilder::TensorScale ScalarBuilder::tensorScale(Value amax) {
  Value encode =
      stdMin(arith::DivFOp::create(b, loc, f32(2688.0f), amax), f32(kFloatMax));
  auto eq = [&](Value lhs, Value rhs) {
    return arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ, lhs, rhs);
  };
  // amax == 0 (zero tensor), amax == inf and an underflowing quotient fall
  // back to S_enc = 1, as TransformerEngine does.
  Value useOne = arith::OrIOp::create(
      b, loc,
      arith::OrIOp::create(
          b, loc, eq(amax, f32(0.0f)),
          eq(math::AbsFOp::create(b, loc, amax),
             f32(std::numeric_limits<float>::infinity()))),
      eq(encode, f32(0.0f)));
  encode = select(useOne, f32(1.0f), encode);
  Value decode = arith::DivFOp::create(b, loc, f32(1.0f), encode);
  // fp32(1/6) is folded into S_enc first: the order changes bits.
  Value multiplier = arith::MulFOp::create(b, loc, encode, f32(1.0f / 6.0f));
  return {decode, multiplier};
}

ScalarBuilder::BlockScale ScalarBuilder::blockScale(Value blockAmax,
                                                    const TensorScale &scale) {
  Value scaled = stdMin(
      arith::MulFOp::create(b, loc, blockAmax, scale.blockMultiplier),
      f32(448.0f));
  auto [code, value] = roundToE4M3(scaled);
  return {code, blockEncode(value, scale)};
}

Value ScalarBuilder::blockEncode(Value scaleValue, const TensorScale &scale) {
  // A zero scale gives 1/0 = inf, clamped so that zeros stay zeros instead
  // of becoming 0 * inf = NaN.
  return stdMin(arith::DivFOp::create(
                    b, loc, f32(1.0f),
                    arith::MulFOp::create(b, loc, scaleValue, scale.decode)),
                f32(kFloatMax));
}

std::array<Value, 4> ScalarBuilder::philoxGroup(Value seed, Value group,
                                                MultiplyExtended multiply) {
  auto i32Type = b.getI32Type();
  auto low32 = [&](Value v64) {
    return arith::TruncIOp::create(b, loc, i32Type, v64);
  };
  auto high32 = [&](Value v64) {
    return low32(arith::ShRUIOp::create(b, loc, v64, i64(32)));
  };
  return philox({low32(group), high32(group), i32(0), i32(0)},
                {low32(seed), high32(seed)}, multiply);
}

Value ScalarBuilder::randomByte(std::array<Value, 4> words, Value lane) {
  Value wordIndex = arith::ShRUIOp::create(b, loc, lane, i32(2));
  Value word = words[3];
  for (int w = 2; w >= 0; --w) {
    Value isW = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                      wordIndex, i32(w));
    word = select(isW, words[w], word);
  }
  Value shift = arith::ShLIOp::create(
      b, loc, arith::AndIOp::create(b, loc, lane, i32(3)), i32(3));
  return arith::AndIOp::create(
      b, loc, arith::ShRUIOp::create(b, loc, word, shift), i32(0xFF));
}

//===----------------------------------------------------------------------===//
// MX formats (docs/Numerics.md section 11)
//===----------------------------------------------------------------------===//

namespace {
/// The fields of an FP8 element format.
struct FP8Format {
  int mantissaBits;
  int bias;
  float max;
};
FP8Format fp8FormatOf(BlockScaledFormat format) {
  return format == BlockScaledFormat::MXFP8E5M2 ? FP8Format{2, 15, 57344.0f}
                                                : FP8Format{3, 7, 448.0f};
}
} // namespace

/// Whether `format`'s elements are E2M1 (NVFP4 and MXFP4).
static bool hasE2M1Elements(BlockScaledFormat format) {
  return format == BlockScaledFormat::NVFP4 ||
         format == BlockScaledFormat::MXFP4;
}

Value ScalarBuilder::encodeMXElement(BlockScaledFormat format, Value value) {
  if (hasE2M1Elements(format))
    return encodeE2M1(value);
  FP8Format fp8 = fp8FormatOf(format);
  int minNormalExponent = 1 - fp8.bias;
  // Saturate first (stdMin keeps a NaN, which is replaced at the end), then
  // round to a multiple of the quantum of the value's binade -- 2^(E - m) for
  // normals, the subnormal quantum below -- with roundeven. Dividing and
  // multiplying by a power of two (>= 2^-16, normal) is exact.
  Value magnitude = stdMin(math::AbsFOp::create(b, loc, value), f32(fp8.max));
  auto exponentOf = [&](Value v) {
    return arith::SubIOp::create(
        b, loc, arith::ShRUIOp::create(b, loc, bitsOf(v), i32(23)), i32(127));
  };
  auto powerOfTwo = [&](Value exponent) {
    return floatFromBits(arith::ShLIOp::create(
        b, loc, arith::AddIOp::create(b, loc, exponent, i32(127)), i32(23)));
  };
  int subnormalQuantum = minNormalExponent - fp8.mantissaBits;
  Value quantumExponent = arith::MaxSIOp::create(
      b, loc,
      arith::SubIOp::create(b, loc, exponentOf(magnitude),
                            i32(fp8.mantissaBits)),
      i32(subnormalQuantum));
  Value quantum = powerOfTwo(quantumExponent);
  Value rounded = arith::MulFOp::create(
      b, loc,
      math::RoundEvenOp::create(
          b, loc, arith::DivFOp::create(b, loc, magnitude, quantum)),
      quantum);
  // The code of the rounded (representable) magnitude: a normal one packs
  // its biased exponent and top mantissa bits; a subnormal one (or zero)
  // counts subnormal quanta.
  Value roundedBits = bitsOf(rounded);
  Value roundedExponent = exponentOf(rounded);
  Value normalCode = arith::OrIOp::create(
      b, loc,
      arith::ShLIOp::create(
          b, loc, arith::AddIOp::create(b, loc, roundedExponent, i32(fp8.bias)),
          i32(fp8.mantissaBits)),
      arith::AndIOp::create(
          b, loc,
          arith::ShRUIOp::create(b, loc, roundedBits,
                                 i32(23 - fp8.mantissaBits)),
          i32((1 << fp8.mantissaBits) - 1)));
  Value subnormalCode = arith::FPToUIOp::create(
      b, loc, b.getI32Type(),
      arith::MulFOp::create(b, loc, rounded,
                            f32(std::ldexp(1.0f, -subnormalQuantum))));
  Value isNormal = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sge,
                                         roundedExponent,
                                         i32(minNormalExponent));
  Value code = select(isNormal, normalCode, subnormalCode);
  Value sign = arith::AndIOp::create(
      b, loc, arith::ShRUIOp::create(b, loc, bitsOf(value), i32(24)),
      i32(0x80));
  Value isNaN =
      arith::CmpFOp::create(b, loc, arith::CmpFPredicate::UNO, value, value);
  code = arith::OrIOp::create(b, loc, select(isNaN, i32(0x7F), code), sign);
  return arith::TruncIOp::create(b, loc, b.getI8Type(), code);
}

Value ScalarBuilder::decodeMXElement(BlockScaledFormat format, Value code) {
  if (hasE2M1Elements(format))
    return decodeE2M1(code);
  if (format == BlockScaledFormat::MXFP8E4M3)
    return decodeE4M3(code);
  // E5M2: eeeee ff; e == 0 is f * 2^-16, otherwise (4 + f) * 2^(e - 17);
  // e == 31 is Inf (f == 0) or NaN.
  Value wide = arith::ExtUIOp::create(b, loc, b.getI32Type(), code);
  Value magnitude = arith::AndIOp::create(b, loc, wide, i32(0x7F));
  Value exponent = arith::ShRUIOp::create(b, loc, magnitude, i32(2));
  Value fraction = arith::AndIOp::create(b, loc, magnitude, i32(3));
  Value isSubnormal = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                            exponent, i32(0));
  Value significand = select(isSubnormal, fraction,
                             arith::AddIOp::create(b, loc, fraction, i32(4)));
  Value scale = floatFromBits(arith::ShLIOp::create(
      b, loc,
      arith::AddIOp::create(
          b, loc, arith::MaxUIOp::create(b, loc, exponent, i32(1)),
          i32(127 - 17)),
      i32(23)));
  Value result = arith::MulFOp::create(
      b, loc, arith::UIToFPOp::create(b, loc, b.getF32Type(), significand),
      scale);
  Value isSpecial = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                          exponent, i32(31));
  Value special = select(
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, fraction, i32(0)),
      f32(std::numeric_limits<float>::infinity()),
      f32(std::numeric_limits<float>::quiet_NaN()));
  result = select(isSpecial, special, result);
  Value isNegative = arith::CmpIOp::create(
      b, loc, arith::CmpIPredicate::ne,
      arith::AndIOp::create(b, loc, wide, i32(0x80)), i32(0));
  return select(isNegative, arith::NegFOp::create(b, loc, result), result);
}

std::pair<Value, Value> ScalarBuilder::mxBlockScale(BlockScaledFormat format,
                                                    Value blockAmax) {
  float maxElement = format == BlockScaledFormat::MXFP4 ? 6.0f
                                                        : fp8FormatOf(format).max;
  Value v = arith::MulFOp::create(b, loc, blockAmax, f32(1.0f / maxElement));
  // The ceiling power of two from the bits of v >= 0: a normal 1.m * 2^E
  // rounds up to 2^(E+1) unless m == 0, which is the biased byte E + (m != 0)
  // clamped to 254 (Inf, E = 255, too); a subnormal is at most 2^-127 (byte
  // 0) when its mantissa is at most 2^22, else at most 2^-126 (byte 1).
  Value bits = bitsOf(v);
  Value biased = arith::ShRUIOp::create(b, loc, bits, i32(23));
  Value mantissa = arith::AndIOp::create(b, loc, bits, i32(0x7FFFFF));
  Value roundsUp = arith::ExtUIOp::create(
      b, loc, b.getI32Type(),
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne, mantissa,
                            i32(0)));
  Value normalByte = arith::MinUIOp::create(
      b, loc, arith::AddIOp::create(b, loc, biased, roundsUp), i32(254));
  Value subnormalByte = arith::ExtUIOp::create(
      b, loc, b.getI32Type(),
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ugt, mantissa,
                            i32(0x400000)));
  Value isSubnormal = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                            biased, i32(0));
  Value byte = select(isSubnormal, subnormalByte, normalByte);
  // 2^(127 - byte): exponent field 254 - byte, except 2^-127 (byte 254),
  // which is the subnormal 0x00400000.
  Value inverse = select(
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, byte, i32(254)),
      floatFromBits(i32(0x00400000)),
      floatFromBits(arith::ShLIOp::create(
          b, loc, arith::SubIOp::create(b, loc, i32(254), byte), i32(23))));
  return {arith::TruncIOp::create(b, loc, b.getI8Type(), byte), inverse};
}

Value ScalarBuilder::decodeE8M0(Value bits) {
  Value wide = arith::ExtUIOp::create(b, loc, b.getI32Type(), bits);
  Value value = select(
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, wide, i32(0)),
      floatFromBits(i32(0x00400000)),
      floatFromBits(arith::ShLIOp::create(b, loc, wide, i32(23))));
  return select(
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, wide, i32(255)),
      f32(std::numeric_limits<float>::quiet_NaN()), value);
}
