//===- RowDivisionTest.cpp - the reciprocal path of row divisions ---------===//
//
// Part of the nvfp4 project.
//
//===----------------------------------------------------------------------===//
//
// RowDivision.h claims that, inside its ranges, three operations from one
// reciprocal give exactly the IEEE quotient. The independent formulation
// here is the division itself (binary32 `/`, correctly rounded): every
// pair must agree bit for bit, signed zeros included. The pairs cover the
// whole admitted range (log-uniform exponents, random significands, both
// signs), the range ends, divisors next to powers of two, and softmax's own
// operands (exp values in (0, 1] over sums in [1, 16384]).
//
//===----------------------------------------------------------------------===//

#include "nvfp4/Numerics/RowDivision.h"

#include "gtest/gtest.h"

#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

using namespace nvfp4::numerics;

namespace {

uint32_t bitsOf(float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, sizeof bits);
  return bits;
}

float floatOf(uint32_t bits) {
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

/// Counts the pairs (x, s), s fixed, whose reciprocal-path quotient differs
/// from x / s in any bit; the first difference goes to the failure message.
int64_t mismatches(const std::vector<float> &xs, float s) {
  float r = 1.0f / s;
  int64_t bad = 0;
  for (float x : xs) {
    EXPECT_TRUE(rowQuotientApplies(x, s)) << x << " / " << s;
    float got = rowQuotient(x, s, r);
    float want = x / s;
    if (bitsOf(got) != bitsOf(want)) {
      if (bad == 0)
        ADD_FAILURE() << "x = " << std::hexfloat << x << ", s = " << s
                      << ": got " << got << ", division " << want;
      ++bad;
    }
  }
  return bad;
}

/// A float with a random significand and exponent uniform in [lo, hi].
float randomFloat(std::mt19937_64 &rng, int lo, int hi) {
  std::uniform_int_distribution<int> exponent(lo, hi);
  std::uniform_int_distribution<uint32_t> significand(0, (1u << 23) - 1);
  uint32_t bits = (uint32_t(exponent(rng) + 127) << 23) | significand(rng);
  return floatOf(bits);
}

TEST(RowDivision, WholeRangeAgreesWithTheDivision) {
  std::mt19937_64 rng(20261201);
  std::vector<float> xs;
  for (int i = 0; i < 4096; ++i) {
    float x = randomFloat(rng, -60, 59);
    xs.push_back(rng() & 1 ? -x : x);
  }
  xs.insert(xs.end(), {0.0f, -0.0f, kRowDividendMin, -kRowDividendMin,
                       kRowDividendMax, -kRowDividendMax,
                       std::nextafter(kRowDividendMax, 0.0f),
                       std::nextafter(kRowDividendMin, 1.0f)});
  std::vector<float> divisors = {kRowDivisorMin, kRowDivisorMax, 1.0f, 3.0f,
                                 std::nextafter(1.0f, 2.0f),
                                 std::nextafter(1.0f, 0.0f),
                                 std::nextafter(kRowDivisorMax, 0.0f)};
  for (int i = 0; i < 2048; ++i)
    divisors.push_back(randomFloat(rng, -50, 49));
  int64_t bad = 0;
  for (float s : divisors)
    bad += mismatches(xs, s);
  EXPECT_EQ(bad, 0);
}

TEST(RowDivision, SoftmaxOperands) {
  // exp(x - max) in (0, 1], the row's sum in [1, 16384].
  std::mt19937_64 rng(7);
  std::vector<float> xs;
  for (int i = 0; i < 16384; ++i)
    xs.push_back(randomFloat(rng, -60, -1));
  for (int i = 0; i < 4096; ++i)
    xs.push_back(std::uniform_real_distribution<float>(0.5f, 1.0f)(rng));
  xs.push_back(1.0f);
  xs.push_back(0.0f);
  int64_t bad = 0;
  for (int i = 0; i < 512; ++i)
    bad += mismatches(xs, randomFloat(rng, 0, 13));
  EXPECT_EQ(bad, 0);
}

TEST(RowDivision, SignedZeros) {
  for (float s : {kRowDivisorMin, 1.0f, 1234.5f, kRowDivisorMax}) {
    float r = 1.0f / s;
    EXPECT_EQ(bitsOf(rowQuotient(0.0f, s, r)), 0u);
    EXPECT_EQ(bitsOf(rowQuotient(-0.0f, s, r)), 0x80000000u);
  }
}

TEST(RowDivision, OutsideTheRangesTheDivisionIsTaken) {
  constexpr float inf = std::numeric_limits<float>::infinity();
  constexpr float nan = std::numeric_limits<float>::quiet_NaN();
  for (float s : {-1.0f, 0.0f, -0.0f, 0x1p-51f, 0x1p51f, inf, nan})
    EXPECT_FALSE(rowQuotientApplies(1.0f, s)) << s;
  for (float x : {inf, -inf, nan, 0x1p-61f, -0x1p-61f, 0x1p61f,
                  std::numeric_limits<float>::denorm_min()})
    EXPECT_FALSE(rowQuotientApplies(x, 1.0f)) << x;
  // Why the dividend's lower bound: where the quotient is subnormal the
  // reciprocal path can be wrong, so the guard must send it to the division.
  int64_t wrong = 0;
  std::mt19937_64 rng(3);
  for (int i = 0; i < 100000; ++i) {
    float x = randomFloat(rng, -126, -110), s = randomFloat(rng, 10, 20);
    wrong += bitsOf(rowQuotient(x, s, 1.0f / s)) !=
             bitsOf(x / s);
  }
  EXPECT_GT(wrong, 0);
}

} // namespace
