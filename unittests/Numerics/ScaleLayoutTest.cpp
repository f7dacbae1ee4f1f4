//===- ScaleLayoutTest.cpp - 128x4 swizzled scale layout tests ------------===//
//
// Part of the nvfp4 project.
//
//===----------------------------------------------------------------------===//

#include "nvfp4/Numerics/ScaleLayout.h"

#include "gtest/gtest.h"

#include <random>

using namespace nvfp4::numerics;

namespace {

/// Builds the swizzled buffer the way CUTLASS/cuBLAS describe it: a grid of
/// 128x4 tiles in row-major tile order, each a [32][4][4] byte atom indexed
/// [row % 32][row / 32 within the tile][column within the tile].
std::vector<uint8_t> buildFromAtoms(const std::vector<uint8_t> &Scales,
                                    int Rows, int Cols) {
  int TileRows = (Rows + 127) / 128, TileCols = (Cols + 3) / 4;
  std::vector<uint8_t> Buffer;
  for (int TileRow = 0; TileRow < TileRows; ++TileRow)
    for (int TileCol = 0; TileCol < TileCols; ++TileCol) {
      uint8_t Atom[32][4][4] = {};
      for (int R = 0; R < 128; ++R)
        for (int C = 0; C < 4; ++C) {
          int Row = TileRow * 128 + R, Col = TileCol * 4 + C;
          if (Row < Rows && Col < Cols)
            Atom[R % 32][R / 32][C] = Scales[Row * Cols + Col];
        }
      const uint8_t *Bytes = &Atom[0][0][0];
      Buffer.insert(Buffer.end(), Bytes, Bytes + 512);
    }
  return Buffer;
}

std::vector<uint8_t> randomScales(int Count, unsigned Seed) {
  std::mt19937 Rng(Seed);
  std::vector<uint8_t> Scales(Count);
  // Non-zero bytes so that a missing element cannot pass for padding.
  for (uint8_t &Scale : Scales)
    Scale = uint8_t(1 + Rng() % 0x7E);
  return Scales;
}

const std::pair<int, int> kShapes[] = {{1, 1},   {127, 3},  {128, 4}, {129, 5},
                                       {256, 8}, {300, 17}, {64, 32}};

TEST(ScaleLayout, MatchesAtomConstruction) {
  for (auto [Rows, Cols] : kShapes) {
    std::vector<uint8_t> Scales = randomScales(Rows * Cols, Rows * 31 + Cols);
    Expected<std::vector<uint8_t>> Swizzled =
        swizzleScales(Scales.data(), Scales.size(), Rows, Cols);
    ASSERT_TRUE(Swizzled.ok()) << Swizzled.message();
    EXPECT_EQ(*Swizzled, buildFromAtoms(Scales, Rows, Cols))
        << Rows << "x" << Cols;
  }
}

TEST(ScaleLayout, OffsetFormulaSpotChecks) {
  // Hand-evaluated offset(r, c) with C = 8 padded columns (two atoms wide).
  EXPECT_EQ(getSwizzledScaleOffset(0, 0, 8), 0);
  EXPECT_EQ(getSwizzledScaleOffset(0, 3, 8), 3);
  EXPECT_EQ(getSwizzledScaleOffset(1, 0, 8), 16);
  EXPECT_EQ(getSwizzledScaleOffset(32, 0, 8), 4);
  EXPECT_EQ(getSwizzledScaleOffset(127, 3, 8), 31 * 16 + 3 * 4 + 3);
  EXPECT_EQ(getSwizzledScaleOffset(0, 4, 8), 512);
  EXPECT_EQ(getSwizzledScaleOffset(128, 0, 8), 2 * 512);
  EXPECT_EQ(getSwizzledScaleOffset(130, 5, 8), 3 * 512 + 2 * 16 + 1);
}

TEST(ScaleLayout, RoundTrip) {
  for (auto [Rows, Cols] : kShapes) {
    std::vector<uint8_t> Scales = randomScales(Rows * Cols, Rows + Cols);
    Expected<std::vector<uint8_t>> Swizzled =
        swizzleScales(Scales.data(), Scales.size(), Rows, Cols);
    ASSERT_TRUE(Swizzled.ok());
    Expected<std::vector<uint8_t>> Back =
        unswizzleScales(Swizzled->data(), Swizzled->size(), Rows, Cols);
    ASSERT_TRUE(Back.ok()) << Back.message();
    EXPECT_EQ(*Back, Scales);
  }
}

TEST(ScaleLayout, PadsWithZeros) {
  std::vector<uint8_t> Scales(130 * 5, 0xFF);
  Expected<std::vector<uint8_t>> Swizzled =
      swizzleScales(Scales.data(), Scales.size(), 130, 5);
  ASSERT_TRUE(Swizzled.ok());
  Expected<SwizzledScaleShape> Shape = getSwizzledScaleShape(130, 5);
  ASSERT_TRUE(Shape.ok());
  EXPECT_EQ(Shape->PaddedRows, 256);
  EXPECT_EQ(Shape->PaddedCols, 8);
  ASSERT_EQ(Swizzled->size(), 256u * 8u);
  size_t NonZero = 0;
  for (uint8_t Byte : *Swizzled) {
    EXPECT_TRUE(Byte == 0 || Byte == 0xFF);
    NonZero += Byte != 0;
  }
  EXPECT_EQ(NonZero, Scales.size());
}

TEST(ScaleLayout, ReplicatesTileScalesIntoRows) {
  std::vector<uint8_t> Tiles = {1, 2, 3, 4, 5, 6}; // [2, 3]
  Expected<std::vector<uint8_t>> Rows =
      replicateTileScales(Tiles.data(), Tiles.size(), 2, 3);
  ASSERT_TRUE(Rows.ok());
  ASSERT_EQ(Rows->size(), 32u * 3u);
  for (int Row = 0; Row < 32; ++Row)
    for (int Col = 0; Col < 3; ++Col)
      EXPECT_EQ((*Rows)[Row * 3 + Col], Row < 16 ? 1 + Col : 4 + Col);
}

TEST(ScaleLayout, RejectsBadShapes) {
  std::vector<uint8_t> Scales(12, 1);
  EXPECT_FALSE(swizzleScales(Scales.data(), 12, 5, 3).ok());
  EXPECT_FALSE(swizzleScales(Scales.data(), 12, 0, 12).ok());
  EXPECT_FALSE(unswizzleScales(Scales.data(), 12, 4, 3).ok());
  EXPECT_FALSE(replicateTileScales(Scales.data(), 12, 2, 5).ok());
  EXPECT_FALSE(getSwizzledScaleShape(-1, 4).ok());
}

} // namespace
