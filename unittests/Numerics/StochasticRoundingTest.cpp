//===- StochasticRoundingTest.cpp - Philox and stochastic rounding --------===//
//
// Part of the nvfp4 project.
//
//===----------------------------------------------------------------------===//

#include "ReferenceModel.h"

#include "nvfp4/Numerics/Formats.h"
#include "nvfp4/Numerics/Philox.h"
#include "nvfp4/Numerics/Quantize.h"
#include "nvfp4/Numerics/StochasticRounding.h"

#include "gtest/gtest.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>

using namespace nvfp4::numerics;
namespace ref = nvfp4::reference;

namespace {

//===----------------------------------------------------------------------===//
// Philox4x32-10
//===----------------------------------------------------------------------===//

TEST(Philox, KnownAnswerVectors) {
  // Known-answer vectors of Random123 (kat_vectors, philox4x32 10 rounds).
  EXPECT_EQ(philox4x32x10({0, 0, 0, 0}, {0, 0}),
            (PhiloxBlock{0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8}));
  EXPECT_EQ(philox4x32x10({0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff},
                          {0xffffffff, 0xffffffff}),
            (PhiloxBlock{0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd}));
  EXPECT_EQ(philox4x32x10({0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344},
                          {0xa4093822, 0x299f31d0}),
            (PhiloxBlock{0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1}));
}

TEST(Philox, ElementKeying) {
  // The documented contract: key = seed halves, counter = (g lo, g hi, 0, 0)
  // with g = i / 16, word (i % 16) / 4, byte i % 4.
  const uint64_t Seeds[] = {0, 1, 0x123456789abcdef0ull};
  const uint64_t Indices[] = {
      0, 1, 3, 4, 15, 16, 17, 1000003, (uint64_t(5) << 36) + 21};
  for (uint64_t Seed : Seeds)
    for (uint64_t Index : Indices) {
      uint64_t Group = Index / 16;
      PhiloxBlock Words =
          philox4x32x10({uint32_t(Group), uint32_t(Group >> 32), 0, 0},
                        {uint32_t(Seed), uint32_t(Seed >> 32)});
      uint32_t Word = Words[(Index % 16) / 4];
      unsigned Shift = 8 * (Index % 4);
      EXPECT_EQ(stochasticRoundingByte(Seed, Index),
                uint8_t((Word >> Shift) & 0xFF))
          << "seed " << Seed << " index " << Index;
      EXPECT_EQ(stochasticRoundingWord(Seed, Index / 4), Word);
    }
}

//===----------------------------------------------------------------------===//
// Element-level stochastic rounding
//===----------------------------------------------------------------------===//

TEST(StochasticRounding, MatchesReferenceForAllBytes) {
  std::mt19937 Rng(3);
  std::vector<float> Values = {
      0.0f,       0.1f,
      0.25f,      0.5f,
      1.9999999f, 2.0f,
      3.3f,       4.0f,
      5.0f,       5.99f,
      6.0f,       6.5f,
      1e-30f,     std::numeric_limits<float>::denorm_min()};
  std::uniform_real_distribution<float> Uniform(-7.0f, 7.0f);
  for (int I = 0; I < 300; ++I)
    Values.push_back(Uniform(Rng));
  for (float Value : Values)
    for (float Signed : {Value, -Value})
      for (unsigned Byte = 0; Byte < 256; ++Byte)
        ASSERT_EQ(encodeE2M1Stochastic(Signed, uint8_t(Byte)),
                  ref::stochasticRoundToE2M1(Signed, uint8_t(Byte)))
            << Signed << " byte " << Byte;
}

TEST(StochasticRounding, AlwaysPicksANeighbour) {
  std::mt19937 Rng(4);
  std::uniform_real_distribution<float> Uniform(0.0f, 6.0f);
  for (int I = 0; I < 2000; ++I) {
    float Value = Uniform(Rng);
    double Lower, Upper;
    ref::e2m1Neighbours(Value, Lower, Upper);
    for (unsigned Byte = 0; Byte < 256; Byte += 5) {
      double Result = decodeE2M1(encodeE2M1Stochastic(Value, uint8_t(Byte)));
      EXPECT_TRUE(Result == Lower || Result == Upper)
          << Value << " -> " << Result;
    }
  }
}

TEST(StochasticRounding, ExactlyUnbiasedOnTheByteGrid) {
  // When (|y| - lower) / step is a multiple of 1/256, the 256 possible bytes
  // round up exactly that fraction of the time, so the mean over all bytes
  // equals y exactly. Walk every such y in [0, 6).
  const double Steps[][3] = {{0.0, 2.0, 0.5}, {2.0, 4.0, 1.0}, {4.0, 6.0, 2.0}};
  for (const auto &Range : Steps) {
    for (double Y = Range[0]; Y < Range[1]; Y += Range[2] / 256) {
      double Sum = 0.0;
      for (unsigned Byte = 0; Byte < 256; ++Byte)
        Sum += decodeE2M1(encodeE2M1Stochastic(float(Y), uint8_t(Byte)));
      ASSERT_EQ(Sum / 256, Y);
      double NegativeSum = 0.0;
      for (unsigned Byte = 0; Byte < 256; ++Byte)
        NegativeSum +=
            decodeE2M1(encodeE2M1Stochastic(float(-Y), uint8_t(Byte)));
      ASSERT_EQ(NegativeSum / 256, -Y);
    }
  }
}

TEST(StochasticRounding, SpecialValues) {
  for (unsigned Byte : {0u, 128u, 255u}) {
    uint8_t B = uint8_t(Byte);
    EXPECT_EQ(encodeE2M1Stochastic(std::numeric_limits<float>::quiet_NaN(), B),
              0x7);
    EXPECT_EQ(encodeE2M1Stochastic(std::numeric_limits<float>::infinity(), B),
              0x7);
    EXPECT_EQ(encodeE2M1Stochastic(-std::numeric_limits<float>::infinity(), B),
              0xF);
    EXPECT_EQ(encodeE2M1Stochastic(-0.0f, B), 0x8);
    EXPECT_EQ(encodeE2M1Stochastic(6.0f, B), 0x7);
    EXPECT_EQ(encodeE2M1Stochastic(-100.0f, B), 0xF);
  }
  // A byte of 0 truncates toward zero; a tiny negative keeps its sign.
  EXPECT_EQ(encodeE2M1Stochastic(-0.1f, 0), 0x8);
  EXPECT_EQ(encodeE2M1Stochastic(5.9f, 0), 0x6);
  EXPECT_EQ(encodeE2M1Stochastic(5.9f, 255), 0x7);
}

//===----------------------------------------------------------------------===//
// Tensor-level stochastic rounding
//===----------------------------------------------------------------------===//

Expected<QuantizedTensor> quantizeSR(const std::vector<float> &Data,
                                     int64_t Rows, int64_t Cols, uint64_t Seed,
                                     BlockShape Block = BlockShape::Row1x16) {
  QuantizeOptions Options;
  Options.Rounding = RoundingMode::Stochastic;
  Options.Seed = Seed;
  Options.Block = Block;
  return quantize(Data.data(), Data.size(), Rows, Cols, Options);
}

std::vector<float> gradientLikeTensor(size_t Count, unsigned Seed) {
  std::mt19937 Rng(Seed);
  std::vector<float> Data(Count);
  for (float &Value : Data)
    Value = ref::randomBF16Normal(Rng, 1e-3);
  return Data;
}

TEST(StochasticRounding, QuantizeMatchesReference) {
  std::vector<float> Data = gradientLikeTensor(48 * 96, 21);
  for (uint64_t Seed : {uint64_t(0), uint64_t(77), ~uint64_t(0)})
    for (BlockShape Block : {BlockShape::Row1x16, BlockShape::Tile16x16}) {
      Expected<QuantizedTensor> Q = quantizeSR(Data, 48, 96, Seed, Block);
      ASSERT_TRUE(Q.ok()) << Q.message();
      ref::ReferenceQuantized Want = ref::quantize(
          Data, 48, 96, blockRows(Block), std::nullopt,
          [](uint64_t S, uint64_t I) { return stochasticRoundingByte(S, I); },
          Seed);
      EXPECT_EQ(Q->Scales, Want.Scales);
      EXPECT_EQ(Q->Codes, Want.Codes);
    }
}

TEST(StochasticRounding, SeedsAreReproducibleAndDistinct) {
  std::vector<float> Data = gradientLikeTensor(16 * 64, 22);
  Expected<QuantizedTensor> A = quantizeSR(Data, 16, 64, 1234);
  Expected<QuantizedTensor> B = quantizeSR(Data, 16, 64, 1234);
  Expected<QuantizedTensor> C = quantizeSR(Data, 16, 64, 1235);
  ASSERT_TRUE(A.ok() && B.ok() && C.ok());
  EXPECT_EQ(A->Codes, B->Codes);
  EXPECT_EQ(A->Scales, C->Scales) << "scales do not depend on the seed";
  size_t Differences = 0;
  for (size_t I = 0; I < A->Codes.size(); ++I)
    Differences += A->Codes[I] != C->Codes[I];
  // Most elements are off the grid, so a new seed changes a large fraction.
  EXPECT_GT(Differences, A->Codes.size() / 10);
}

TEST(StochasticRounding, DequantizedMeanConvergesToInput) {
  // E[dequant(SR(x))] = x up to the fp32 roundings and the 1/256 resolution
  // of the random byte. Check each element's mean over many seeds within
  // 3 sigma plus that resolution.
  constexpr int64_t Rows = 2, Cols = 32;
  constexpr int Draws = 2000;
  std::vector<float> Data = gradientLikeTensor(Rows * Cols, 23);
  std::vector<double> Sum(Data.size(), 0.0), SumSquares(Data.size(), 0.0);
  QuantizedTensor Last;
  for (int Draw = 0; Draw < Draws; ++Draw) {
    Expected<QuantizedTensor> Q = quantizeSR(Data, Rows, Cols, 1000 + Draw);
    ASSERT_TRUE(Q.ok());
    Expected<std::vector<float>> Values = dequantize(*Q);
    ASSERT_TRUE(Values.ok());
    for (size_t I = 0; I < Data.size(); ++I) {
      Sum[I] += (*Values)[I];
      SumSquares[I] += double((*Values)[I]) * (*Values)[I];
    }
    Last = Q.take();
  }
  for (size_t I = 0; I < Data.size(); ++I) {
    double Mean = Sum[I] / Draws;
    double Variance = std::max(SumSquares[I] / Draws - Mean * Mean, 0.0);
    // The grid step around x, in x units, bounds the quantization bias.
    double Unit = decodeE4M3(Last.Scales[I / 16]) * double(Last.Amax) / 2688.0;
    double Tolerance = 3.0 * std::sqrt(Variance / Draws) + 2.0 * Unit / 256 +
                       1e-6 * std::fabs(Data[I]);
    // When the E4M3 scale rounded down, the block's largest elements land
    // above 6 and saturate: SR is unbiased only inside the E2M1 range.
    double Expected = std::clamp<double>(Data[I], -6.0 * Unit, 6.0 * Unit);
    EXPECT_NEAR(Mean, Expected, Tolerance) << "element " << I;
  }
}

} // namespace
