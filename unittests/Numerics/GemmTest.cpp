//===- GemmTest.cpp - Block-scaled GEMM reference tests -------------------===//
//
// Part of the nvfp4 project.
//
//===----------------------------------------------------------------------===//

#include "ReferenceModel.h"

#include "nvfp4/Numerics/Formats.h"
#include "nvfp4/Numerics/Gemm.h"
#include "nvfp4/Numerics/Quantize.h"

#include "gtest/gtest.h"

#include <cmath>
#include <random>

using namespace nvfp4::numerics;
namespace ref = nvfp4::reference;

namespace {

QuantizedTensor randomQuantized(int64_t Rows, int64_t Cols, BlockShape Block,
                                unsigned Seed, double Sigma) {
  std::mt19937 Rng(Seed);
  std::vector<float> Data(Rows * Cols);
  for (float &Value : Data)
    Value = ref::randomBF16Normal(Rng, Sigma);
  QuantizeOptions Options;
  Options.Block = Block;
  Expected<QuantizedTensor> Q =
      quantize(Data.data(), Data.size(), Rows, Cols, Options);
  EXPECT_TRUE(Q.ok()) << Q.message();
  return Q.take();
}

/// Value of element (Row, Col) of a quantized tensor in double, from the
/// model's format tables: e2m1 * s_b * amax / 2688 without any rounding.
double exactValue(const QuantizedTensor &Q, int64_t Row, int64_t Col) {
  int64_t BlockRows = Q.Block == BlockShape::Tile16x16 ? 16 : 1;
  unsigned Scale = Q.Scales[(Row / BlockRows) * (Q.Cols / 16) + Col / 16];
  return ref::e2m1Value(Q.Codes[Row * Q.Cols + Col]) * ref::e4m3Value(Scale) *
         double(Q.Amax) / 2688.0;
}

TEST(Gemm, MatchesDequantizedMatmul) {
  const BlockShape Blocks[] = {BlockShape::Row1x16, BlockShape::Tile16x16};
  for (BlockShape BlockA : Blocks)
    for (BlockShape BlockB : Blocks) {
      const int64_t M = 32, N = 48, K = 128;
      QuantizedTensor A = randomQuantized(M, K, BlockA, 1, 2.0);
      QuantizedTensor B = randomQuantized(N, K, BlockB, 2, 0.01);
      const float AlphaIn = 0.5f;
      Expected<std::vector<float>> C = scaledMatmul(A, B, AlphaIn);
      ASSERT_TRUE(C.ok()) << C.message();
      for (int64_t I = 0; I < M; ++I)
        for (int64_t J = 0; J < N; ++J) {
          double Sum = 0.0, Magnitude = 0.0;
          for (int64_t K0 = 0; K0 < K; ++K0) {
            double Term = exactValue(A, I, K0) * exactValue(B, J, K0);
            Sum += Term;
            Magnitude += std::fabs(Term);
          }
          // FP32 accumulation over K/16 blocks plus the alpha roundings.
          double Tolerance = 1e-6 * AlphaIn * Magnitude + 1e-30;
          EXPECT_NEAR((*C)[I * N + J], AlphaIn * Sum, Tolerance)
              << I << "," << J;
        }
    }
}

TEST(Gemm, AlphaFollowsTransformerEngineOrder) {
  std::mt19937 Rng(8);
  bool FoundDifference = false;
  for (int Trial = 0; Trial < 1000; ++Trial) {
    float AmaxA = std::fabs(ref::randomBF16LogUniform(Rng, -10, 10));
    float AmaxB = std::fabs(ref::randomBF16LogUniform(Rng, -10, 10));
    float AlphaIn = std::fabs(ref::randomBF16LogUniform(Rng, -2, 2));
    float Want = ref::toFloat(
        ref::toFloat(ref::toFloat(double(AlphaIn) * AmaxA) * double(AmaxB)) *
        double(ref::toFloat(1.0 / 7225344.0)));
    ASSERT_EQ(floatToBits(computeGemmAlpha(AlphaIn, AmaxA, AmaxB)),
              floatToBits(Want));
    // The product of the two dequantization factors is a different number
    // for some amax pairs; the test data must contain such a pair.
    float Dequant = ref::toFloat(
        ref::toFloat(double(AlphaIn) * ref::toFloat(AmaxA / 2688.0)) *
        double(ref::toFloat(AmaxB / 2688.0)));
    FoundDifference |= Dequant != Want;
  }
  EXPECT_TRUE(FoundDifference);
}

/// A [1, 48] tensor with explicit codes and scales and amax 2688.
QuantizedTensor makeRow(std::vector<uint8_t> Codes,
                        std::vector<uint8_t> Scales) {
  QuantizedTensor Q;
  Q.Rows = 1;
  Q.Cols = 48;
  Q.Codes = std::move(Codes);
  Q.Scales = std::move(Scales);
  Q.Amax = 2688.0f;
  return Q;
}

TEST(Gemm, AccumulatesBlocksInOrder) {
  // Block contributions 2^20, 2^-4 and -2^20: in the spec's order 2^20 + 2^-4
  // is a tie (binary32 ulp at 2^20 is 2^-3) and rounds to even 2^20, so the
  // result is exactly 0; summed exactly, or with the small block last, it
  // would be 2^-4 * alpha.
  std::vector<uint8_t> CodesA(48, 0), CodesB(48, 0);
  CodesA[0] = 0x6;  // 4
  CodesB[0] = 0x6;  // 4   -> partial 16, scales 256 * 256 -> 2^20
  CodesA[16] = 0x1; // 0.5
  CodesB[16] = 0x1; // 0.5 -> partial 0.25, scales 0.5 * 0.5 -> 2^-4
  CodesA[32] = 0x6; // 4
  CodesB[32] = 0xE; // -4  -> partial -16, scales 256 * 256 -> -2^20
  const uint8_t Scale256 = 0x78, ScaleHalf = 0x30;
  ASSERT_EQ(decodeE4M3(Scale256), 256.0f);
  ASSERT_EQ(decodeE4M3(ScaleHalf), 0.5f);
  QuantizedTensor A = makeRow(CodesA, {Scale256, ScaleHalf, Scale256});
  QuantizedTensor B = makeRow(CodesB, {Scale256, ScaleHalf, Scale256});
  Expected<std::vector<float>> C = scaledMatmul(A, B);
  ASSERT_TRUE(C.ok()) << C.message();
  EXPECT_EQ(floatToBits((*C)[0]), 0u);

  // Moving the small block last changes the result, so the test above can
  // tell the orders apart.
  std::swap(A.Codes[16], A.Codes[32]);
  std::swap(B.Codes[16], B.Codes[32]);
  std::swap(A.Scales[1], A.Scales[2]);
  std::swap(B.Scales[1], B.Scales[2]);
  C = scaledMatmul(A, B);
  ASSERT_TRUE(C.ok());
  EXPECT_EQ((*C)[0], 0.0625f * computeGemmAlpha(1.0f, 2688.0f, 2688.0f));
}

TEST(Gemm, RejectsMismatchedOperands) {
  QuantizedTensor A = randomQuantized(16, 32, BlockShape::Row1x16, 3, 1.0);
  QuantizedTensor B = randomQuantized(16, 64, BlockShape::Row1x16, 4, 1.0);
  Expected<std::vector<float>> C = scaledMatmul(A, B);
  ASSERT_FALSE(C.ok());
  EXPECT_NE(C.message().find("contraction"), std::string::npos);
  B = randomQuantized(16, 32, BlockShape::Row1x16, 4, 1.0);
  B.Scales.pop_back();
  EXPECT_FALSE(scaledMatmul(A, B).ok());
}

} // namespace
