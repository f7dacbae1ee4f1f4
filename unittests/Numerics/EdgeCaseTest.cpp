//===- EdgeCaseTest.cpp - NUMERICS.md section 6 edge cases ----------------===//
//
// Part of the nvfp4 project.
//
//===----------------------------------------------------------------------===//
//
// One named test per decision of NUMERICS.md section 6 (and the saturation
// rules of section 2), with the expected bytes worked out by hand in the
// comments and cross-checked against the reference model.
//
//===----------------------------------------------------------------------===//

#include "ReferenceModel.h"

#include "nvfp4/Numerics/Formats.h"
#include "nvfp4/Numerics/Quantize.h"

#include "gtest/gtest.h"

#include <cmath>
#include <limits>

using namespace nvfp4::numerics;
namespace ref = nvfp4::reference;

namespace {

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
constexpr float kInf = std::numeric_limits<float>::infinity();

QuantizedTensor quantizeOrFail(const std::vector<float> &Data, int64_t Rows,
                               int64_t Cols,
                               BlockShape Block = BlockShape::Row1x16,
                               std::optional<float> Amax = std::nullopt) {
  QuantizeOptions Options;
  Options.Block = Block;
  Options.Amax = Amax;
  Expected<QuantizedTensor> Q =
      quantize(Data.data(), Data.size(), Rows, Cols, Options);
  EXPECT_TRUE(Q.ok()) << Q.message();
  if (!Q.ok())
    return QuantizedTensor();
  ref::ReferenceQuantized Want =
      ref::quantize(Data, Rows, Cols, blockRows(Block), Amax);
  EXPECT_EQ(Q->Codes, Want.Codes);
  EXPECT_EQ(Q->Scales, Want.Scales);
  return Q.take();
}

TEST(EdgeCases, NaNElementBecomesPlusSix) {
  std::vector<float> Data(16, 1.0f);
  Data[3] = kNaN;
  Data[4] = -kNaN;
  QuantizedTensor Q = quantizeOrFail(Data, 1, 16);
  // amax skips the NaN: amax = 1, the block scale is 448 (0x7E).
  EXPECT_EQ(Q.Amax, 1.0f);
  EXPECT_EQ(Q.Scales[0], 0x7E);
  EXPECT_EQ(Q.Codes[3], 0x7);
  EXPECT_EQ(Q.Codes[4], 0x7);
  EXPECT_EQ(Q.Codes[0], 0x7);
}

TEST(EdgeCases, NegativeZeroKeepsItsSign) {
  std::vector<float> Data(16, 0.0f);
  Data[0] = 6.0f;
  Data[1] = -0.0f;
  // y = -0.25 after scaling (x * enc = x since enc is 1 here) is a tie that
  // rounds to zero, and it is negative: code 8.
  Data[2] = -0.25f;
  Data[3] = -0.1f;
  QuantizedTensor Q = quantizeOrFail(Data, 1, 16, BlockShape::Row1x16, 2688.0f);
  // amax 2688: S_enc = 1, mult = fp32(1/6); bamax 6 -> s_b = e4m3(1) = 0x38;
  // enc = 1 / (1 * 1) = 1.
  EXPECT_EQ(Q.Scales[0], 0x38);
  EXPECT_EQ(Q.Codes[0], 0x7);
  EXPECT_EQ(Q.Codes[1], 0x8);
  EXPECT_EQ(Q.Codes[2], 0x8);
  EXPECT_EQ(Q.Codes[3], 0x8);
  EXPECT_EQ(Q.Codes[4], 0x0);
}

TEST(EdgeCases, ZeroScaleBlockStoresSaturatedNibbles) {
  // Block 0 holds the tensor amax 448; block 1 holds values around 1e-4:
  // S_enc = 2688/448 = 6, mult = fp32(6 * fp32(1/6)) = 1, so s_b =
  // e4m3(1e-4) = 0 (below 2^-10). enc = min(1/0, FLT_MAX) = FLT_MAX and every
  // non-zero element saturates to +-6 while zeros stay 0.
  std::vector<float> Data(32, 0.0f);
  Data[0] = 448.0f;
  Data[16] = 1e-4f;
  Data[17] = -1e-4f;
  Data[18] = 3e-5f;
  Data[19] = -0.0f;
  QuantizedTensor Q = quantizeOrFail(Data, 1, 32);
  EXPECT_EQ(Q.Scales[1], 0x00);
  EXPECT_EQ(Q.Codes[16], 0x7);
  EXPECT_EQ(Q.Codes[17], 0xF);
  EXPECT_EQ(Q.Codes[18], 0x7);
  EXPECT_EQ(Q.Codes[19], 0x8);
  EXPECT_EQ(Q.Codes[20], 0x0);
  // ...and it all dequantizes to zero.
  Expected<std::vector<float>> Values = dequantize(Q);
  ASSERT_TRUE(Values.ok());
  for (int I = 16; I < 32; ++I)
    EXPECT_EQ(std::fabs((*Values)[I]), 0.0f) << I;
}

TEST(EdgeCases, ZeroTensor) {
  std::vector<float> Data(32 * 32, 0.0f);
  for (BlockShape Block : {BlockShape::Row1x16, BlockShape::Tile16x16}) {
    QuantizedTensor Q = quantizeOrFail(Data, 32, 32, Block);
    EXPECT_EQ(Q.Amax, 0.0f);
    for (uint8_t Scale : Q.Scales)
      EXPECT_EQ(Scale, 0);
    for (uint8_t Code : Q.Codes)
      EXPECT_EQ(Code, 0);
    Expected<std::vector<float>> Values = dequantize(Q);
    ASSERT_TRUE(Values.ok());
    for (float Value : *Values)
      EXPECT_EQ(Value, 0.0f);
  }
}

TEST(EdgeCases, InfiniteAmax) {
  // amax = +inf -> S_enc = 1, mult = fp32(1/6). The Inf block gets scale
  // min(inf, 448) = 448 and enc = 1/448; a finite block with bamax 3 gets
  // e4m3(0.5) = 0x30 and enc = 2, so 3 -> 6 and 1 -> 2.
  std::vector<float> Data(32, 0.0f);
  Data[0] = kInf;
  Data[1] = 448.0f;
  Data[16] = 3.0f;
  Data[17] = -1.0f;
  QuantizedTensor Q = quantizeOrFail(Data, 1, 32);
  EXPECT_EQ(Q.Amax, kInf);
  EXPECT_EQ(Q.Scales[0], 0x7E);
  EXPECT_EQ(Q.Codes[0], 0x7);
  EXPECT_EQ(Q.Codes[1], 0x2); // 448 / 448 = 1
  EXPECT_EQ(Q.Scales[1], 0x30);
  EXPECT_EQ(Q.Codes[16], 0x7);
  EXPECT_EQ(Q.Codes[17], 0xC); // -2
}

TEST(EdgeCases, SubnormalBlockScale) {
  // amax 448 -> mult 1; bamax 0.005 -> s_b = e4m3(0.005) = 3 * 2^-9 (0x03,
  // 0.005 / 2^-9 = 2.56 rounds to 3). enc = fp32(1 / fp32(3 * 2^-9 / 6)).
  std::vector<float> Data(32, 0.0f);
  Data[0] = 448.0f;
  Data[16] = 0.005f;
  Data[17] = -0.0025f;
  QuantizedTensor Q = quantizeOrFail(Data, 1, 32);
  EXPECT_EQ(Q.Scales[1], 0x03);
  // y = 0.005 * 1024 = 5.12 -> 6; y = -2.56 -> -3 (code 0xD).
  EXPECT_EQ(Q.Codes[16], 0x7);
  EXPECT_EQ(Q.Codes[17], 0xD);
}

TEST(EdgeCases, SaturationAt448And6) {
  // An explicit amax far below the data: S_enc = 2688, mult = 448, so every
  // block scale clamps to 448, enc = 1/(448/2688) = 6 and elements >= 1
  // saturate at 6.
  std::vector<float> Data(16);
  for (int I = 0; I < 16; ++I)
    Data[I] = (I % 2 ? -1.0f : 1.0f) * (I + 1);
  QuantizedTensor Q = quantizeOrFail(Data, 1, 16, BlockShape::Row1x16, 1.0f);
  EXPECT_EQ(Q.Scales[0], 0x7E);
  for (int I = 0; I < 16; ++I)
    EXPECT_EQ(Q.Codes[I], I % 2 ? 0xF : 0x7) << I;
}

TEST(EdgeCases, BlockAmaxElementMapsToSix) {
  // With amax itself in a block, bamax * mult * enc is 6 up to the E4M3
  // rounding of the scale; the amax element always lands on code 7.
  std::vector<float> Data(16, 0.5f);
  Data[7] = -3.0f;
  QuantizedTensor Q = quantizeOrFail(Data, 1, 16);
  EXPECT_EQ(Q.Codes[7], 0xF);
  // 0.5 / 3 * 6 = 1 exactly.
  EXPECT_EQ(Q.Codes[0], 0x2);
}

TEST(EdgeCases, TileBlocksShareOneScale) {
  // 16x16 tiles: the tile amax comes from all 256 elements, so a large value
  // in row 15 changes the scale (and codes) of row 0 of the same tile only.
  std::vector<float> Data(32 * 16, 1.0f);
  Data[15 * 16 + 3] = 4.0f;
  QuantizedTensor Q = quantizeOrFail(Data, 32, 16, BlockShape::Tile16x16);
  ASSERT_EQ(Q.Scales.size(), 2u);
  EXPECT_EQ(Q.Scales[0], 0x7E); // tile amax 4 = tensor amax -> 448
  EXPECT_EQ(Q.Codes[0], 0x3);   // 1 * 6/4 = 1.5
  EXPECT_EQ(Q.Codes[15 * 16 + 3], 0x7);
  EXPECT_NE(Q.Scales[1], Q.Scales[0]);
  EXPECT_EQ(Q.Codes[16 * 16], 0x7); // tile amax 1 -> 1 maps to 6
}

} // namespace
