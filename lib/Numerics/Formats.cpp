//===- Formats.cpp - E2M1, E4M3 and BF16 scalar conversions ---------------===//
//
// Part of the nvfp4 project.
//
//===----------------------------------------------------------------------===//
//
// The conversions are written with integer arithmetic on the float bits and
// comparisons against exactly representable thresholds, so they do not depend
// on the floating-point environment (rounding mode, flush-to-zero aside).
//
//===----------------------------------------------------------------------===//

#include "nvfp4/Numerics/Formats.h"

#include <cmath>
#include <limits>

using namespace nvfp4::numerics;

uint8_t nvfp4::numerics::encodeE2M1(float Value) {
  if (std::isnan(Value))
    return kE2M1NaNCode;
  uint8_t Sign = std::signbit(Value) ? 0x8 : 0x0;
  float Magnitude = std::fabs(Value);
  // The midpoints between consecutive magnitudes are exact in binary32, so
  // comparing against them is exact. Strict comparisons send the tie down,
  // non-strict ones send it up; both pick the even code (the one whose
  // mantissa bit is 0): 0.25->0, 0.75->1, 1.25->1, 1.75->2, 2.5->2, 3.5->4,
  // 5->4. Everything above 5, Inf included, saturates to 6.
  uint8_t Code = 0;
  Code += Magnitude > 0.25f;
  Code += Magnitude >= 0.75f;
  Code += Magnitude > 1.25f;
  Code += Magnitude >= 1.75f;
  Code += Magnitude > 2.5f;
  Code += Magnitude >= 3.5f;
  Code += Magnitude > 5.0f;
  return Sign | Code;
}

float nvfp4::numerics::decodeE2M1(uint8_t Code) {
  static constexpr float Magnitudes[8] = {0.0f, 0.5f, 1.0f, 1.5f,
                                          2.0f, 3.0f, 4.0f, 6.0f};
  float Magnitude = Magnitudes[Code & 0x7];
  return (Code & 0x8) ? -Magnitude : Magnitude;
}

uint8_t nvfp4::numerics::encodeE4M3(float Value) {
  uint32_t Bits = floatToBits(Value);
  uint8_t Sign = static_cast<uint8_t>((Bits >> 24) & 0x80);
  if (std::isnan(Value))
    return Sign | kE4M3NaNCode;
  float Magnitude = std::fabs(Value);
  // Anything above 448 rounds to at least 448 and saturates there.
  if (Magnitude > kE4M3Max)
    return Sign | kE4M3MaxCode;
  // Below 2^-10 (half the smallest subnormal) the value rounds to zero; the
  // exact tie 2^-10 is handled by the general path (it goes to even, 0).
  if (Magnitude < 0x1p-10f)
    return Sign;

  uint32_t MagnitudeBits = Bits & 0x7FFFFFFFu;
  int Exponent = static_cast<int>(MagnitudeBits >> 23) - 127;
  // Magnitude >= 2^-10 implies a normal binary32 number: add the hidden bit.
  uint32_t Significand = (MagnitudeBits & 0x7FFFFFu) | 0x800000u;
  // Value = Significand * 2^(Exponent-23). E4M3 keeps 3 fraction bits for
  // normal numbers (exponent >= -6) and a fixed quantum of 2^-9 below that.
  int QuantumExponent = Exponent >= -6 ? Exponent - 3 : -9;
  int Shift = 23 + QuantumExponent - Exponent; // 20 .. 24
  uint32_t Quotient = Significand >> Shift;
  uint32_t Remainder = Significand & ((1u << Shift) - 1u);
  uint32_t Half = 1u << (Shift - 1);
  if (Remainder > Half || (Remainder == Half && (Quotient & 1u)))
    ++Quotient;
  if (Exponent < -6) {
    // Subnormal quantum: Quotient counts 2^-9 units; 8 units is the smallest
    // normal, whose code is 0x08 as well.
    return Sign | static_cast<uint8_t>(Quotient);
  }
  // Normal: Quotient is 1.fff in [8, 16]. A carry to 16 moves to the next
  // binade, which the addition below produces naturally.
  uint32_t Code = (static_cast<uint32_t>(Exponent + 7) << 3) + Quotient - 8u;
  return Sign | static_cast<uint8_t>(Code);
}

float nvfp4::numerics::decodeE4M3(uint8_t Bits) {
  bool Negative = Bits & 0x80;
  uint8_t Magnitude = Bits & 0x7F;
  if (Magnitude == kE4M3NaNCode)
    return Negative ? -std::numeric_limits<float>::quiet_NaN()
                    : std::numeric_limits<float>::quiet_NaN();
  int Exponent = Magnitude >> 3;
  int Fraction = Magnitude & 0x7;
  float Result = Exponent == 0 ? std::ldexp(static_cast<float>(Fraction), -9)
                               : std::ldexp(static_cast<float>(8 + Fraction),
                                            Exponent - 10);
  return Negative ? -Result : Result;
}

uint8_t nvfp4::numerics::encodeE5M2(float Value) {
  uint32_t Bits = floatToBits(Value);
  uint8_t Sign = static_cast<uint8_t>((Bits >> 24) & 0x80);
  if (std::isnan(Value))
    return Sign | kE5M2NaNCode;
  float Magnitude = std::fabs(Value);
  // Anything above 57344 rounds to at least 57344 and saturates there (the
  // instruction's satfinite, not IEEE's overflow to Inf).
  if (Magnitude > kE5M2Max)
    return Sign | kE5M2MaxCode;
  // Below 2^-17 (half the smallest subnormal, 2^-16) the value rounds to
  // zero; the tie 2^-17 itself goes to even (0) through the general path.
  if (Magnitude < 0x1p-17f)
    return Sign;
  uint32_t MagnitudeBits = Bits & 0x7FFFFFFFu;
  int Exponent = static_cast<int>(MagnitudeBits >> 23) - 127;
  uint32_t Significand = (MagnitudeBits & 0x7FFFFFu) | 0x800000u;
  // E5M2 keeps 2 fraction bits for normal numbers (exponent >= -14) and a
  // fixed quantum of 2^-16 below that.
  int QuantumExponent = Exponent >= -14 ? Exponent - 2 : -16;
  int Shift = 23 + QuantumExponent - Exponent; // 21 .. 24
  uint32_t Quotient = Significand >> Shift;
  uint32_t Remainder = Significand & ((1u << Shift) - 1u);
  uint32_t Half = 1u << (Shift - 1);
  if (Remainder > Half || (Remainder == Half && (Quotient & 1u)))
    ++Quotient;
  if (Exponent < -14)
    return Sign | static_cast<uint8_t>(Quotient); // 2^-16 units; 4 = min normal
  // Normal: Quotient is 1.ff in [4, 8]; a carry to 8 is the next binade.
  uint32_t Code = (static_cast<uint32_t>(Exponent + 15) << 2) + Quotient - 4u;
  return Sign | static_cast<uint8_t>(Code);
}

float nvfp4::numerics::decodeE5M2(uint8_t Bits) {
  bool Negative = Bits & 0x80;
  int Exponent = (Bits >> 2) & 0x1F;
  int Fraction = Bits & 0x3;
  float Result;
  if (Exponent == 0x1F)
    Result = Fraction == 0 ? std::numeric_limits<float>::infinity()
                           : std::numeric_limits<float>::quiet_NaN();
  else if (Exponent == 0)
    Result = std::ldexp(static_cast<float>(Fraction), -16);
  else
    Result = std::ldexp(static_cast<float>(4 + Fraction), Exponent - 17);
  return Negative ? -Result : Result;
}

float nvfp4::numerics::decodeE8M0(uint8_t Bits) {
  if (Bits == kE8M0NaNCode)
    return std::numeric_limits<float>::quiet_NaN();
  return std::ldexp(1.0f, static_cast<int>(Bits) - kE8M0Bias);
}

uint16_t nvfp4::numerics::floatToBF16(float Value) {
  uint32_t Bits = floatToBits(Value);
  if (std::isnan(Value))
    return static_cast<uint16_t>((Bits >> 16) | 0x0040u);
  // Round to nearest even on the 16 dropped bits; a carry out of the
  // significand correctly bumps the exponent (up to Inf).
  uint32_t Rounding = 0x7FFFu + ((Bits >> 16) & 1u);
  return static_cast<uint16_t>((Bits + Rounding) >> 16);
}
