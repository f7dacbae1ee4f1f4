//===- FormatsTest.cpp - E2M1, E4M3 and BF16 conversion tests -------------===//
//
// Part of the nvfp4 project.
//
//===----------------------------------------------------------------------===//

#include "ReferenceModel.h"

#include "nvfp4/Numerics/Formats.h"

#include "gtest/gtest.h"

#include <cmath>
#include <limits>
#include <random>

using namespace nvfp4::numerics;
namespace ref = nvfp4::reference;

namespace {

//===----------------------------------------------------------------------===//
// E2M1
//===----------------------------------------------------------------------===//

TEST(E2M1, DecodesAllSixteenCodes) {
  for (unsigned Code = 0; Code < 16; ++Code) {
    float Value = decodeE2M1(static_cast<uint8_t>(Code));
    EXPECT_EQ(static_cast<double>(Value), ref::e2m1Value(Code)) << Code;
    EXPECT_EQ(std::signbit(Value), Code >= 8) << Code;
  }
  // Only the low nibble is a code.
  EXPECT_EQ(decodeE2M1(0xF7), 6.0f);
}

TEST(E2M1, EncodeInvertsDecode) {
  for (unsigned Code = 0; Code < 16; ++Code)
    EXPECT_EQ(encodeE2M1(decodeE2M1(static_cast<uint8_t>(Code))), Code);
}

TEST(E2M1, EveryTieRoundsToEven) {
  struct Tie {
    float Input;
    float Expected;
  };
  // NUMERICS.md section 2: the midpoints between all consecutive magnitudes,
  // plus the first values past 5 that must saturate to 6.
  const Tie Ties[] = {{0.25f, 0.0f}, {0.75f, 1.0f},
                      {1.25f, 1.0f}, {1.75f, 2.0f},
                      {2.5f, 2.0f},  {3.5f, 4.0f},
                      {5.0f, 4.0f},  {std::nextafter(5.0f, 6.0f), 6.0f},
                      {6.0f, 6.0f},  {7.0f, 6.0f},
                      {1e30f, 6.0f}};
  for (const Tie &T : Ties) {
    for (float Sign : {1.0f, -1.0f}) {
      uint8_t Code = encodeE2M1(Sign * T.Input);
      EXPECT_EQ(decodeE2M1(Code), Sign * T.Expected) << Sign * T.Input;
      EXPECT_EQ(std::signbit(decodeE2M1(Code)), Sign < 0) << Sign * T.Input;
    }
  }
}

TEST(E2M1, ValuesJustAroundTiesGoToTheNearestSide) {
  const float Midpoints[] = {0.25f, 0.75f, 1.25f, 1.75f, 2.5f, 3.5f, 5.0f};
  for (float Mid : Midpoints) {
    float Below = std::nextafter(Mid, 0.0f), Above = std::nextafter(Mid, 8.0f);
    EXPECT_LT(decodeE2M1(encodeE2M1(Below)), Mid) << Mid;
    EXPECT_GT(decodeE2M1(encodeE2M1(Above)), Mid) << Mid;
  }
}

TEST(E2M1, SpecialValues) {
  float NaN = std::numeric_limits<float>::quiet_NaN();
  float Inf = std::numeric_limits<float>::infinity();
  EXPECT_EQ(encodeE2M1(NaN), 0x7);
  EXPECT_EQ(encodeE2M1(-NaN), 0x7);
  EXPECT_EQ(encodeE2M1(Inf), 0x7);
  EXPECT_EQ(encodeE2M1(-Inf), 0xF);
  EXPECT_EQ(encodeE2M1(0.0f), 0x0);
  EXPECT_EQ(encodeE2M1(-0.0f), 0x8);
  EXPECT_EQ(encodeE2M1(-0.25f), 0x8);
  EXPECT_EQ(encodeE2M1(-1e-30f), 0x8);
  EXPECT_EQ(encodeE2M1(std::numeric_limits<float>::denorm_min()), 0x0);
}

/// Exhaustive over all 65,536 BF16 bit patterns, each multiplied by `Scale`
/// in binary32 (the quantizer's x * enc_b), against the table search.
void checkAllBF16Patterns(float Scale) {
  unsigned Mismatches = 0;
  for (uint32_t Bits = 0; Bits < 0x10000; ++Bits) {
    float Value = bf16ToFloat(static_cast<uint16_t>(Bits)) * Scale;
    uint8_t Expected = ref::roundToE2M1(Value);
    uint8_t Actual = encodeE2M1(Value);
    if (Actual != Expected && ++Mismatches <= 5)
      ADD_FAILURE() << "bf16 0x" << std::hex << Bits << " * " << Scale
                    << ": got " << unsigned(Actual) << ", want "
                    << unsigned(Expected);
  }
  EXPECT_EQ(Mismatches, 0u) << "scale " << Scale;
}

TEST(E2M1, ExhaustiveOverBF16) { checkAllBF16Patterns(1.0f); }

TEST(E2M1, ExhaustiveOverScaledBF16) {
  // Scales that move many patterns into the E2M1 range and off the BF16 grid.
  for (float Scale : {1.0f / 3.0f, 0.7f, 6.0f / 448.3f, 1234.567f, 3e-38f,
                      std::numeric_limits<float>::max()})
    checkAllBF16Patterns(Scale);
}

//===----------------------------------------------------------------------===//
// E4M3
//===----------------------------------------------------------------------===//

TEST(E4M3, DecodesAll256Codes) {
  for (unsigned Code = 0; Code < 256; ++Code) {
    float Value = decodeE4M3(static_cast<uint8_t>(Code));
    double Expected = ref::e4m3Value(Code);
    if ((Code & 0x7F) == 0x7F) {
      EXPECT_TRUE(std::isnan(Value)) << Code;
      continue;
    }
    EXPECT_EQ(static_cast<double>(Value), Expected) << Code;
    EXPECT_EQ(std::signbit(Value), Code >= 0x80) << Code;
  }
  EXPECT_EQ(decodeE4M3(0x7E), 448.0f);
  EXPECT_EQ(decodeE4M3(0x01), std::ldexp(1.0f, -9));
  EXPECT_EQ(decodeE4M3(0x08), std::ldexp(1.0f, -6));
}

TEST(E4M3, ReencodesAllFiniteCodes) {
  for (unsigned Code = 0; Code < 256; ++Code) {
    if ((Code & 0x7F) == 0x7F)
      continue;
    EXPECT_EQ(encodeE4M3(decodeE4M3(static_cast<uint8_t>(Code))), Code) << Code;
  }
}

TEST(E4M3, EveryMidpointRoundsToEven) {
  for (unsigned Code = 0; Code < 0x7E; ++Code) {
    // Midpoints of neighbouring E4M3 values are exact in binary32.
    double Low = ref::e4m3Value(Code), High = ref::e4m3Value(Code + 1);
    float Mid = static_cast<float>((Low + High) / 2);
    ASSERT_EQ(static_cast<double>(Mid), (Low + High) / 2);
    unsigned Even = Code % 2 == 0 ? Code : Code + 1;
    EXPECT_EQ(encodeE4M3(Mid), Even) << "midpoint above code " << Code;
    EXPECT_EQ(encodeE4M3(-Mid), Even | 0x80) << "midpoint above code " << Code;
    EXPECT_EQ(encodeE4M3(std::nextafter(Mid, 0.0f)), Code);
    EXPECT_EQ(encodeE4M3(std::nextafter(Mid, 1000.0f)), Code + 1);
  }
}

TEST(E4M3, SaturatesAt448) {
  float Inf = std::numeric_limits<float>::infinity();
  for (float Value : {448.0f, 449.0f, 463.9f, 464.0f, 480.0f, 1e30f, Inf,
                      std::numeric_limits<float>::max()}) {
    EXPECT_EQ(encodeE4M3(Value), 0x7E) << Value;
    EXPECT_EQ(encodeE4M3(-Value), 0xFE) << Value;
  }
  EXPECT_EQ(encodeE4M3(std::numeric_limits<float>::quiet_NaN()), 0x7F);
  EXPECT_EQ(encodeE4M3(-std::numeric_limits<float>::quiet_NaN()), 0xFF);
}

TEST(E4M3, SubnormalAndUnderflow) {
  EXPECT_EQ(encodeE4M3(0.0f), 0x00);
  EXPECT_EQ(encodeE4M3(-0.0f), 0x80);
  // 2^-10 is the tie between 0 and the smallest subnormal: even is 0.
  EXPECT_EQ(encodeE4M3(std::ldexp(1.0f, -10)), 0x00);
  EXPECT_EQ(encodeE4M3(std::nextafter(std::ldexp(1.0f, -10), 1.0f)), 0x01);
  EXPECT_EQ(encodeE4M3(3 * std::ldexp(1.0f, -10)), 0x02);
  EXPECT_EQ(encodeE4M3(std::numeric_limits<float>::denorm_min()), 0x00);
  // The largest subnormal rounds up into the smallest normal.
  EXPECT_EQ(encodeE4M3(15 * std::ldexp(1.0f, -10)), 0x08);
}

TEST(E4M3, ExhaustiveOverBF16) {
  unsigned Mismatches = 0;
  for (uint32_t Bits = 0; Bits < 0x10000; ++Bits) {
    float Value = bf16ToFloat(static_cast<uint16_t>(Bits));
    uint8_t Expected = ref::roundToE4M3(Value);
    uint8_t Actual = encodeE4M3(Value);
    if (Actual != Expected && ++Mismatches <= 5)
      ADD_FAILURE() << "bf16 0x" << std::hex << Bits << ": got "
                    << unsigned(Actual) << ", want " << unsigned(Expected);
  }
  EXPECT_EQ(Mismatches, 0u);
}

TEST(E4M3, RandomFloatsInAndAroundTheRange) {
  std::mt19937 Rng(42);
  std::uniform_int_distribution<uint32_t> Mantissa(0, 0x7FFFFF);
  std::uniform_int_distribution<int> Exponent(127 - 14, 127 + 10);
  unsigned Mismatches = 0;
  for (int I = 0; I < 100000; ++I) {
    uint32_t Bits =
        (static_cast<uint32_t>(Exponent(Rng)) << 23) | Mantissa(Rng);
    float Value = bitsToFloat(Bits | ((Rng() & 1u) << 31));
    if (encodeE4M3(Value) != ref::roundToE4M3(Value) && ++Mismatches <= 5)
      ADD_FAILURE() << "value " << Value;
  }
  EXPECT_EQ(Mismatches, 0u);
}

//===----------------------------------------------------------------------===//
// BF16
//===----------------------------------------------------------------------===//

TEST(BF16, WidenAndNarrowAllPatterns) {
  for (uint32_t Bits = 0; Bits < 0x10000; ++Bits) {
    float Value = bf16ToFloat(static_cast<uint16_t>(Bits));
    double Expected = ref::bf16Value(static_cast<uint16_t>(Bits));
    if (std::isnan(Expected)) {
      EXPECT_TRUE(std::isnan(Value));
      EXPECT_TRUE(std::isnan(bf16ToFloat(floatToBF16(Value))));
      continue;
    }
    EXPECT_EQ(static_cast<double>(Value), Expected) << Bits;
    EXPECT_EQ(floatToBF16(Value), Bits);
    EXPECT_TRUE(isBF16Representable(Value));
  }
}

TEST(BF16, RoundsToNearestEven) {
  std::mt19937 Rng(7);
  unsigned Mismatches = 0;
  for (int I = 0; I < 200000; ++I) {
    float Value = bitsToFloat(static_cast<uint32_t>(Rng()));
    if (std::isnan(Value))
      continue;
    if (floatToBF16(Value) != ref::roundToBF16Bits(Value) && ++Mismatches <= 5)
      ADD_FAILURE() << "bits 0x" << std::hex << floatToBits(Value);
  }
  EXPECT_EQ(Mismatches, 0u);
  // Exact ties: the halfway pattern 0x8000 goes to the even neighbour.
  EXPECT_EQ(floatToBF16(bitsToFloat(0x3F808000u)), 0x3F80);
  EXPECT_EQ(floatToBF16(bitsToFloat(0x3F818000u)), 0x3F82);
  EXPECT_EQ(floatToBF16(std::numeric_limits<float>::max()), 0x7F80);
  EXPECT_FALSE(isBF16Representable(bitsToFloat(0x3F800001u)));
}

TEST(BF16, PreservesNaN) {
  // A signalling NaN whose payload is only in the low bits must not become
  // Inf when truncated.
  float SignallingNaN = bitsToFloat(0x7F800001u);
  EXPECT_TRUE(std::isnan(bf16ToFloat(floatToBF16(SignallingNaN))));
  float NegativeNaN = bitsToFloat(0xFFC12345u);
  uint16_t Bits = floatToBF16(NegativeNaN);
  EXPECT_TRUE(std::isnan(bf16ToFloat(Bits)));
  EXPECT_EQ(Bits & 0x8000, 0x8000);
}

} // namespace
