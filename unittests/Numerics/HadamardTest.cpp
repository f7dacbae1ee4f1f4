//===- HadamardTest.cpp - 16-point Random Hadamard Transform tests --------===//
//
// Part of the nvfp4 project.
//
//===----------------------------------------------------------------------===//
//
// Two formulations independent of lib/Numerics check hadamardTransform:
// - the exact matrix product v * diag(sign) * H16 * 0.25 in double, with H16
//   built by the Sylvester recursion, on data whose FP32 sums are all exact
//   (then every evaluation order agrees);
// - a recursive transform H_2n x = [H_n a + H_n b, H_n a - H_n b] on the two
//   halves (a, b) of x, each binary32 operation evaluated in double and
//   rounded once, on data whose sums round. It performs the additions of the
//   spec's iterative butterfly on the same operands, so the bits must agree.
// A third, the retired sequential 16-term sum, shows that the order is
// observable.
//
//===----------------------------------------------------------------------===//

#include "ReferenceModel.h"

#include "nvfp4/Numerics/Formats.h"
#include "nvfp4/Numerics/Hadamard.h"

#include "gtest/gtest.h"

#include <array>
#include <cmath>
#include <cstring>
#include <random>

using namespace nvfp4::numerics;
namespace ref = nvfp4::reference;

namespace {

using Matrix16 = std::array<std::array<int, 16>, 16>;
using Run = std::array<float, 16>;

/// H16 by the Sylvester recursion H_2n = [[H, H], [H, -H]] (not by popcount).
Matrix16 sylvesterHadamard() {
  Matrix16 H{};
  H[0][0] = 1;
  for (int Size = 1; Size < 16; Size *= 2)
    for (int R = 0; R < Size; ++R)
      for (int C = 0; C < Size; ++C) {
        H[R][C + Size] = H[R][C];
        H[R + Size][C] = H[R][C];
        H[R + Size][C + Size] = -H[R][C];
      }
  return H;
}

/// Signs of 0xD7E8, written out: bits 3, 5-10, 12, 14 and 15 are set.
constexpr int kDefaultSigns[16] = {+1, +1, +1, -1, +1, -1, -1, -1,
                                   -1, -1, -1, +1, -1, +1, -1, -1};

std::array<int, 16> signsOf(uint16_t Mask) {
  std::array<int, 16> Signs;
  for (int I = 0; I < 16; ++I)
    Signs[I] = Mask & (1u << I) ? -1 : +1;
  return Signs;
}

/// v * diag(Signs) * H16 * 0.25 in double: exact for the data it is used on
/// (16 terms of at most 8 + 12 + 4 significant bits).
std::array<double, 16> exactProduct(const float *Input,
                                    const std::array<int, 16> &Signs) {
  static const Matrix16 H = sylvesterHadamard();
  std::array<double, 16> Out{};
  for (int C = 0; C < 16; ++C)
    for (int R = 0; R < 16; ++R)
      Out[C] += double(Input[R]) * Signs[R] * H[R][C] * 0.25;
  return Out;
}

/// binary32 a + b and a - b, computed in double and rounded once.
float add32(float A, float B) { return ref::toFloat(double(A) + double(B)); }
float sub32(float A, float B) { return ref::toFloat(double(A) - double(B)); }

/// H_n x on x[0..n) in place, by recursion on the halves.
void recursiveHadamard(float *X, int N) {
  if (N == 1)
    return;
  int Half = N / 2;
  recursiveHadamard(X, Half);
  recursiveHadamard(X + Half, Half);
  for (int I = 0; I < Half; ++I) {
    float A = X[I], B = X[I + Half];
    X[I] = add32(A, B);
    X[I + Half] = sub32(A, B);
  }
}

/// The spec's RHT by the recursive transform, as BF16 bits.
std::array<uint16_t, 16> recursiveRHT(const float *Input,
                                      const std::array<int, 16> &Signs) {
  Run X;
  for (int I = 0; I < 16; ++I)
    X[I] = Signs[I] < 0 ? -Input[I] : Input[I];
  recursiveHadamard(X.data(), 16);
  std::array<uint16_t, 16> Bits;
  for (int I = 0; I < 16; ++I)
    Bits[I] = ref::roundToBF16Bits(ref::toFloat(double(X[I]) * 0.25));
  return Bits;
}

/// The retired order: each output a sequential sum of its 16 exact terms
/// from +0.0, as BF16 bits.
std::array<uint16_t, 16> sequentialRHT(const float *Input,
                                       const std::array<int, 16> &Signs) {
  static const Matrix16 H = sylvesterHadamard();
  std::array<uint16_t, 16> Bits;
  for (int C = 0; C < 16; ++C) {
    float Sum = 0.0f;
    for (int R = 0; R < 16; ++R)
      Sum = add32(Sum, ref::toFloat(double(Input[R]) * Signs[R] * H[R][C] *
                                    0.25));
    Bits[C] = ref::roundToBF16Bits(Sum);
  }
  return Bits;
}

uint32_t bitsOf(float Value) {
  uint32_t Bits;
  std::memcpy(&Bits, &Value, sizeof(Bits));
  return Bits;
}

/// A BF16 value of exponent Exponent (2^Exponent <= |v| < 2^(Exponent+1)),
/// random 7-bit fraction and sign.
float randomBF16InBinade(std::mt19937 &Rng, int Exponent) {
  float Fraction = 1.0f + float(Rng() % 128) / 128.0f;
  float Value = std::ldexp(Fraction, Exponent);
  return Rng() & 1 ? -Value : Value;
}

/// Runs whose sums round visibly: the final BF16 rounding hides most FP32
/// rounding, except where large terms cancel. Each run holds small values
/// (2^-8 .. 2^8) and two or four copies of one large value B (2^16 ..
/// 2^30, random signs): the copies of B cancel exactly in many outputs,
/// which then show what the additions with B did to the small values.
std::vector<float> cancellingRuns(std::mt19937 &Rng, int Runs) {
  std::vector<float> Data(16 * Runs);
  for (int Run = 0; Run < Runs; ++Run) {
    float *Values = Data.data() + 16 * Run;
    for (int I = 0; I < 16; ++I)
      Values[I] = ref::randomBF16LogUniform(Rng, -8, 8);
    float Big = randomBF16InBinade(Rng, 16 + int(Rng() % 15));
    int Copies = Rng() & 1 ? 2 : 4;
    for (int C = 0; C < Copies; ++C)
      Values[Rng() % 16] = Rng() & 1 ? Big : -Big;
  }
  return Data;
}

TEST(Hadamard, DefaultSignMask) {
  EXPECT_EQ(kDefaultHadamardSignMask, 0xD7E8);
  // Row r of R is the image of the unit vector e_r: sign_r * H[r] * 0.25.
  Matrix16 H = sylvesterHadamard();
  for (int Row = 0; Row < 16; ++Row) {
    std::vector<float> Unit(16, 0.0f);
    Unit[Row] = 1.0f;
    Expected<std::vector<float>> Image = hadamardTransform(Unit.data(), 16);
    ASSERT_TRUE(Image.ok()) << Image.message();
    for (int Col = 0; Col < 16; ++Col) {
      float Expected = 0.25f * kDefaultSigns[Row] * H[Row][Col];
      EXPECT_EQ((*Image)[Col], Expected) << Row << "," << Col;
      EXPECT_EQ(hadamardMatrixEntry(Row, Col, 0xD7E8), Expected);
    }
  }
}

TEST(Hadamard, MatrixIsOrthonormal) {
  // R * R^T = I exactly: the entries are +-1/4 and each dot product is a sum
  // of sixteen +-1/16, all exact in double.
  for (uint16_t Mask : {uint16_t(0xD7E8), uint16_t(0x0000), uint16_t(0xFFFF),
                        uint16_t(0x1234)}) {
    for (int I = 0; I < 16; ++I)
      for (int J = 0; J < 16; ++J) {
        double Dot = 0.0;
        for (int K = 0; K < 16; ++K)
          Dot += double(hadamardMatrixEntry(I, K, Mask)) *
                 hadamardMatrixEntry(J, K, Mask);
        EXPECT_EQ(Dot, I == J ? 1.0 : 0.0) << Mask << ": " << I << "," << J;
      }
  }
}

TEST(Hadamard, EqualsTheMatrixProductWhenInputsSpanTwelveBinades) {
  // docs/Numerics.md: BF16 inputs whose non-zero magnitudes lie in binades
  // Emin..Emin+12 are multiples of 2^(Emin-7), and every butterfly sum is
  // below 16 * 2^(Emin+13) = 2^(Emin+17) = 2^(Emin-7) * 2^24, so it is
  // exact in binary32 and the result is the exact product rounded once.
  std::mt19937 Rng(5);
  std::uniform_int_distribution<int> Base(-126, 100);
  const uint16_t Masks[] = {0xD7E8, 0x0000, 0xFFFF, 0x1234};
  for (int Trial = 0; Trial < 400; ++Trial) {
    int Emin = Base(Rng);
    uint16_t Mask = Masks[Trial % 4];
    std::vector<float> Input(64);
    for (float &Value : Input)
      Value = Rng() % 8 == 0 ? 0.0f
                             : randomBF16InBinade(Rng, Emin + int(Rng() % 13));
    if (Trial % 8 == 1) {
      // The extreme of the bound: 15 same-sign values just below
      // 2^(Emin+13) and one with the finest grain, 2^(Emin-7).
      for (int I = 0; I < 15; ++I)
        Input[I] = std::ldexp(255.0f / 128.0f, Emin + 12);
      Input[15] = std::ldexp(129.0f / 128.0f, Emin);
    }
    Expected<std::vector<float>> Output =
        hadamardTransform(Input.data(), Input.size(), Mask);
    ASSERT_TRUE(Output.ok()) << Output.message();
    for (int Chunk = 0; Chunk < 4; ++Chunk) {
      std::array<double, 16> Exact =
          exactProduct(Input.data() + 16 * Chunk, signsOf(Mask));
      for (int Col = 0; Col < 16; ++Col) {
        // The exact value fits binary32 (24 bits), so the conversion is
        // exact and only the BF16 rounding remains.
        ASSERT_EQ(double(float(Exact[Col])), Exact[Col]);
        uint16_t Want = ref::roundToBF16Bits(float(Exact[Col]));
        ASSERT_EQ(floatToBF16((*Output)[16 * Chunk + Col]), Want)
            << "trial " << Trial << " chunk " << Chunk << " col " << Col;
      }
    }
  }
}

TEST(Hadamard, MatchesTheRecursiveButterflyWhenSumsRound) {
  // Runs with cancelling large values, and magnitudes from 2^-40 to 2^40:
  // many sums round. The library must reproduce the butterfly's roundings
  // bit for bit, and the data must actually exercise them (results that
  // differ from the exact product).
  std::mt19937 Rng(6);
  const uint16_t Masks[] = {0xD7E8, 0x0000, 0xFFFF, 0xA5C3};
  int RoundedRuns = 0;
  for (uint16_t Mask : Masks) {
    std::vector<float> Input = cancellingRuns(Rng, 512);
    for (size_t I = 0; I < 16 * 128; ++I)
      Input[I] = ref::randomBF16LogUniform(Rng, -40, 40);
    Expected<std::vector<float>> Output =
        hadamardTransform(Input.data(), Input.size(), Mask);
    ASSERT_TRUE(Output.ok()) << Output.message();
    for (size_t Chunk = 0; Chunk < Input.size(); Chunk += 16) {
      std::array<uint16_t, 16> Want =
          recursiveRHT(Input.data() + Chunk, signsOf(Mask));
      std::array<double, 16> Exact =
          exactProduct(Input.data() + Chunk, signsOf(Mask));
      bool Rounded = false;
      for (int Col = 0; Col < 16; ++Col) {
        ASSERT_EQ(floatToBF16((*Output)[Chunk + Col]), Want[Col])
            << "mask " << Mask << " chunk " << Chunk / 16 << " col " << Col;
        Rounded |= Want[Col] != ref::roundToBF16Bits(ref::toFloat(Exact[Col]));
      }
      RoundedRuns += Rounded;
    }
  }
  EXPECT_GT(RoundedRuns, 500);
}

TEST(Hadamard, ButterflyOrderIsObservable) {
  // docs/Numerics.md's worked example, default mask: v = (2^24, 0, 2^24, 1,
  // 0, ...), so u = (2^24, 0, 2^24, -1, 0, ...) (bit 3 of 0xD7E8 is set).
  //   h = 1: (u0, u1) = (2^24, 2^24); (u2, u3) = (2^24 - 1, 2^24 + 1)
  //          and 2^24 + 1 rounds to 2^24 (a tie, to the even 2^24).
  //   h = 2: (u0, u2) = (2^25 - 1 -> 2^25, 1); (u1, u3) = (2^25, 0).
  //   h = 4, 8 copy these into the zero entries: u = (2^25, 2^25, 1, 0) x 4.
  // So w = (2^23, 2^23, 1/4, 0) x 4, where the exact product and the retired
  // sequential order both give w_3 = (2^24 - 2^24 - 1) / 4 = -1/4.
  std::vector<float> Input(16, 0.0f);
  Input[0] = Input[2] = std::ldexp(1.0f, 24);
  Input[3] = 1.0f;
  Expected<std::vector<float>> Output = hadamardTransform(Input.data(), 16);
  ASSERT_TRUE(Output.ok());
  const float Want[4] = {std::ldexp(1.0f, 23), std::ldexp(1.0f, 23), 0.25f,
                         0.0f};
  for (int Col = 0; Col < 16; ++Col)
    EXPECT_EQ(bitsOf((*Output)[Col]), bitsOf(Want[Col % 4])) << Col;
  std::array<int, 16> Signs = signsOf(kDefaultHadamardSignMask);
  std::array<uint16_t, 16> Sequential = sequentialRHT(Input.data(), Signs);
  EXPECT_EQ(Sequential[3], ref::roundToBF16Bits(-0.25f));
  EXPECT_EQ(exactProduct(Input.data(), Signs)[3], -0.25);

  // On data whose sums round, the two orders disagree in many runs.
  std::mt19937 Rng(7);
  std::vector<float> Data = cancellingRuns(Rng, 256);
  Output = hadamardTransform(Data.data(), Data.size());
  ASSERT_TRUE(Output.ok());
  int DifferentRuns = 0;
  for (size_t Chunk = 0; Chunk < Data.size(); Chunk += 16) {
    std::array<uint16_t, 16> Old = sequentialRHT(Data.data() + Chunk, Signs);
    bool Different = false;
    for (int Col = 0; Col < 16; ++Col)
      Different |= floatToBF16((*Output)[Chunk + Col]) != Old[Col];
    DifferentRuns += Different;
  }
  EXPECT_GT(DifferentRuns, 50);
}

TEST(Hadamard, SignsOfZeroFollowTheAdditions) {
  // All -0.0 inputs, no sign flips: a sum of -0 and -0 is -0 and a
  // difference of equal zeros is +0, so only w_0 (sums only) is -0. With
  // the all-ones mask, +0.0 inputs become -0.0 first and give the same.
  // (The retired order started each sum from +0.0 and gave +0 everywhere.)
  for (auto [Mask, Zero] : {std::pair<uint16_t, float>(0x0000, -0.0f),
                            std::pair<uint16_t, float>(0xFFFF, 0.0f)}) {
    std::vector<float> Input(16, Zero);
    Expected<std::vector<float>> Output =
        hadamardTransform(Input.data(), 16, Mask);
    ASSERT_TRUE(Output.ok());
    EXPECT_EQ(bitsOf((*Output)[0]), 0x80000000u) << Mask;
    for (int Col = 1; Col < 16; ++Col)
      EXPECT_EQ(bitsOf((*Output)[Col]), 0u) << Mask << " col " << Col;
  }
}

TEST(Hadamard, CloseToExactOnGeneralData) {
  // With inputs of mixed magnitude the FP32 sums round, so only a bound
  // holds: one BF16 ulp of the result plus the error of four additions.
  std::mt19937 Rng(6);
  std::vector<float> Input(16 * 64);
  for (float &Value : Input)
    Value = ref::randomBF16Normal(Rng, 1.0);
  Expected<std::vector<float>> Output =
      hadamardTransform(Input.data(), Input.size());
  ASSERT_TRUE(Output.ok());
  for (size_t Chunk = 0; Chunk < Input.size(); Chunk += 16) {
    std::array<double, 16> Exact =
        exactProduct(Input.data() + Chunk, signsOf(kDefaultHadamardSignMask));
    double TermSum = 0.0;
    for (int I = 0; I < 16; ++I)
      TermSum += std::fabs(Input[Chunk + I]) * 0.25;
    for (int Col = 0; Col < 16; ++Col) {
      double Bound =
          std::ldexp(std::fabs(Exact[Col]), -7) + 4 * std::ldexp(TermSum, -23);
      EXPECT_NEAR((*Output)[Chunk + Col], Exact[Col], Bound);
    }
  }
}

TEST(Hadamard, RejectsBadInput) {
  std::vector<float> Input(32, 1.0f);
  EXPECT_FALSE(hadamardTransform(Input.data(), 24).ok());
  EXPECT_FALSE(hadamardTransform(Input.data(), 0).ok());
  Input[17] = 1.0f + std::ldexp(1.0f, -20);
  Expected<std::vector<float>> Result = hadamardTransform(Input.data(), 32);
  ASSERT_FALSE(Result.ok());
  EXPECT_NE(Result.message().find("element 17"), std::string::npos);
}

} // namespace
