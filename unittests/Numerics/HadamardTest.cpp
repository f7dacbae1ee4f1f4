//===- HadamardTest.cpp - 16-point Random Hadamard Transform tests --------===//
//
// Part of the nvfp4 project.
//
//===----------------------------------------------------------------------===//

#include "ReferenceModel.h"

#include "nvfp4/Numerics/Formats.h"
#include "nvfp4/Numerics/Hadamard.h"

#include "gtest/gtest.h"

#include <array>
#include <cmath>
#include <random>

using namespace nvfp4::numerics;
namespace ref = nvfp4::reference;

namespace {

using Matrix16 = std::array<std::array<int, 16>, 16>;

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

/// v * diag(Signs) * H16 * 0.25 by a fast Walsh-Hadamard butterfly in double.
std::array<double, 16> butterflyTransform(const float *Input,
                                          const int *Signs) {
  std::array<double, 16> X;
  for (int I = 0; I < 16; ++I)
    X[I] = double(Input[I]) * Signs[I];
  for (int Half = 1; Half < 16; Half *= 2)
    for (int Start = 0; Start < 16; Start += 2 * Half)
      for (int I = Start; I < Start + Half; ++I) {
        double A = X[I], B = X[I + Half];
        X[I] = A + B;
        X[I + Half] = A - B;
      }
  for (double &Value : X)
    Value *= 0.25;
  return X;
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

TEST(Hadamard, MatchesButterflyWhenSumsAreExact) {
  // Inputs n * 2^e with |n| <= 255 integer are BF16, every term is n/4 * 2^e,
  // and every partial sum is a multiple of 2^(e-2) below 16 * 255 * 2^(e-2)
  // < 2^24 * 2^(e-2): all exact in binary32. So the sequential FP32 sums
  // equal the exact transform, which the double butterfly computes exactly,
  // and both round once to BF16.
  std::mt19937 Rng(5);
  std::uniform_int_distribution<int> Integer(-255, 255);
  std::uniform_int_distribution<int> Exponent(-20, 20);
  for (int Trial = 0; Trial < 200; ++Trial) {
    int Shift = Exponent(Rng);
    std::vector<float> Input(64);
    for (float &Value : Input)
      Value = std::ldexp(float(Integer(Rng)), Shift);
    Expected<std::vector<float>> Output =
        hadamardTransform(Input.data(), Input.size());
    ASSERT_TRUE(Output.ok()) << Output.message();
    for (int Chunk = 0; Chunk < 4; ++Chunk) {
      std::array<double, 16> Exact =
          butterflyTransform(Input.data() + 16 * Chunk, kDefaultSigns);
      for (int Col = 0; Col < 16; ++Col) {
        uint16_t Want = ref::roundToBF16Bits(float(Exact[Col]));
        ASSERT_EQ(floatToBF16((*Output)[16 * Chunk + Col]), Want)
            << "trial " << Trial << " chunk " << Chunk << " col " << Col;
      }
    }
  }
}

TEST(Hadamard, CloseToExactOnGeneralData) {
  // With inputs of mixed magnitude the FP32 sums round, so only a bound
  // holds: one BF16 ulp of the result plus the accumulated FP32 error.
  std::mt19937 Rng(6);
  std::vector<float> Input(16 * 64);
  for (float &Value : Input)
    Value = ref::randomBF16Normal(Rng, 1.0);
  Expected<std::vector<float>> Output =
      hadamardTransform(Input.data(), Input.size());
  ASSERT_TRUE(Output.ok());
  for (size_t Chunk = 0; Chunk < Input.size(); Chunk += 16) {
    std::array<double, 16> Exact =
        butterflyTransform(Input.data() + Chunk, kDefaultSigns);
    double TermSum = 0.0;
    for (int I = 0; I < 16; ++I)
      TermSum += std::fabs(Input[Chunk + I]) * 0.25;
    for (int Col = 0; Col < 16; ++Col) {
      double Bound =
          std::ldexp(std::fabs(Exact[Col]), -7) + 16 * std::ldexp(TermSum, -24);
      EXPECT_NEAR((*Output)[Chunk + Col], Exact[Col], Bound);
    }
  }
}

TEST(Hadamard, SumsSequentiallyFromPositiveZero) {
  // Column 0 with an all-positive mask sums the terms v_r / 4 in order. Here
  // the terms are 2^23, thirteen 1/4, -2^23 and a last 1/4. Each 2^23 + 1/4
  // rounds back to 2^23 (binary32 ulp 1 there), so the spec's order gives
  // exactly 1/4, while the exact sum is 3.5 and the reversed order 0.
  std::vector<float> Input(16, 1.0f);
  Input[0] = std::ldexp(1.0f, 25);
  Input[14] = -std::ldexp(1.0f, 25);
  Expected<std::vector<float>> Output = hadamardTransform(Input.data(), 16, 0);
  ASSERT_TRUE(Output.ok());
  EXPECT_EQ((*Output)[0], 0.25f);
  // All -0.0 inputs with the all-positive mask: every term of column 0 is -0
  // and +0 + -0 = +0, so the accumulator's +0.0 start shows in the sign.
  std::vector<float> NegativeZeros(16, -0.0f);
  Output = hadamardTransform(NegativeZeros.data(), 16, 0);
  ASSERT_TRUE(Output.ok());
  for (float Value : *Output)
    EXPECT_EQ(floatToBits(Value), 0u);
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
