//===- ScaleLayoutTest.cpp - Per-target block scale-factor layouts --------===//
//
// Part of the nvfp4 project.
//
//===----------------------------------------------------------------------===//

#include "nvfp4/Target/Tcgen05Encoding.h"

#include "gtest/gtest.h"

#include <set>
#include <vector>

using namespace nvfp4::target;

// CUTLASS include/cutlass/detail/sm100_blockscaled_layout.hpp
// (Sm1xxBlockScaledBasicChunk, K-major SfAtom
// Shape((32,4),(V,4)):Stride((16,4),(0,1))), which NUMERICS.md section 8 writes
// as (r % 32) * 16 + ((r % 128) / 32) * 4 + c % 4: hand-derived points and a
// bijection onto the 512 bytes of the atom.
TEST(ScaleLayout, Sm100AtomOffsets) {
  struct Case {
    uint32_t Row, Block, Offset;
  } Cases[] = {{0, 0, 0},           {0, 3, 3},
               {1, 0, 16},          // next row: +16 bytes
               {31, 0, 31 * 16},    // last row of the first 32
               {32, 0, 4},          // row 32 shares row 0's 16 bytes
               {33, 2, 16 + 4 + 2}, // (33 % 32) * 16 + 1 * 4 + 2
               {96, 1, 3 * 4 + 1},  // fourth row group
               {127, 3, 511}};
  for (const Case &C : Cases) {
    Expected<uint32_t> Offset = getSm100ScaleAtomOffset(C.Row, C.Block);
    ASSERT_TRUE(Offset.ok()) << Offset.message();
    EXPECT_EQ(*Offset, C.Offset) << C.Row << "," << C.Block;
  }
  std::set<uint32_t> Seen;
  for (uint32_t Row = 0; Row < 128; ++Row)
    for (uint32_t Block = 0; Block < 4; ++Block) {
      uint32_t Offset = *getSm100ScaleAtomOffset(Row, Block);
      EXPECT_EQ(Offset, (Row % 32) * 16 + ((Row % 128) / 32) * 4 + Block % 4);
      EXPECT_LT(Offset, kScaleAtomBytes);
      Seen.insert(Offset);
    }
  EXPECT_EQ(Seen.size(), size_t(kScaleAtomBytes));
  EXPECT_FALSE(getSm100ScaleAtomOffset(128, 0).ok());
  EXPECT_FALSE(getSm100ScaleAtomOffset(0, 4).ok());
}

// CUTLASS include/cutlass/detail/sm103_blockscaled_layout.hpp (commit
// 39c9fc4, Sm103BlockScaledBasicChunk, K-major SfAtom
// Shape((8,4,4),(V,4)):Stride((16,128,4),(0,1))) is a different CuTe
// factorisation of the row index (8 x 4 x 4 instead of 32 x 4) but, byte for
// byte, the same function as the sm_100 atom; both configs tile atoms with
// tile_to_shape(..., Step<_2,_1,_3>), so a global scale buffer in the 128x4
// swizzled layout serves both chips. This test is the evidence.
TEST(ScaleLayout, Sm103AtomEqualsSm100Atom) {
  for (uint32_t Row = 0; Row < 128; ++Row)
    for (uint32_t Block = 0; Block < 4; ++Block) {
      Expected<uint32_t> A = getSm100ScaleAtomOffset(Row, Block);
      Expected<uint32_t> B = getSm103ScaleAtomOffset(Row, Block);
      ASSERT_TRUE(A.ok() && B.ok());
      EXPECT_EQ(*A, *B) << Row << "," << Block;
    }
  // The sm_103 strides read directly: row 8 is one 8-row group = 128 bytes.
  EXPECT_EQ(*getSm103ScaleAtomOffset(8, 0), 128u);
  EXPECT_EQ(*getSm103ScaleAtomOffset(7, 1), 7 * 16 + 1u);
  EXPECT_FALSE(getSm103ScaleAtomOffset(200, 0).ok());
}

// NUMERICS.md section 8 / CUTLASS tile_to_shape(SfAtom, (M, K, L),
// Step<_2,_1,_3>): atoms are row-major over (row / 128, block / 4).
TEST(ScaleLayout, SwizzledOffsets) {
  auto Off = [](uint64_t Row, uint64_t Block, uint64_t Rows, uint64_t Blocks) {
    Expected<uint64_t> O = getSwizzledScaleOffset(Row, Block, Rows, Blocks);
    return O.ok() ? static_cast<int64_t>(*O) : -1;
  };
  EXPECT_EQ(Off(0, 4, 256, 8), 512);       // second atom along K
  EXPECT_EQ(Off(128, 0, 256, 8), 2 * 512); // next atom row: skips C/4 atoms
  EXPECT_EQ(Off(129, 5, 256, 8), 3 * 512 + 16 + 1);
  EXPECT_EQ(Off(255, 7, 256, 8), 4 * 512 - 1);
  for (uint64_t Row = 0; Row < 256; Row += 7)
    for (uint64_t Block = 0; Block < 12; ++Block)
      EXPECT_EQ(Off(Row, Block, 256, 12),
                static_cast<int64_t>(((Row / 128) * 3 + Block / 4) * 512 +
                                     (Row % 32) * 16 + ((Row % 128) / 32) * 4 +
                                     Block % 4));
  EXPECT_EQ(Off(0, 0, 100, 8), -1); // rows not padded to 128
  EXPECT_EQ(Off(0, 0, 128, 6), -1); // blocks not padded to 4
  EXPECT_EQ(Off(128, 0, 128, 4), -1);
  EXPECT_EQ(Off(0, 4, 128, 4), -1);
  EXPECT_EQ(Off(0, 0, uint64_t(1) << 40, uint64_t(1) << 40), -1); // overflow
}

// mma.sync .block_scale selectors (PTX ISA 9.7.14.5.14 syntax; ranges as
// ptxas 13.0 enforces them for sm_120a): byte-id 0-3 (1X), 0 or 2 (2X),
// 0 (4X); thread-id 0-1 for A, 0-3 for B.
TEST(ScaleLayout, MmaSyncSelectors) {
  auto Ok = [](ScaleVecSize Vec, bool IsA, uint16_t Byte, uint16_t Thread) {
    return verifyMmaSyncScaleSelector(Vec, IsA, {Byte, Thread}).ok();
  };
  EXPECT_TRUE(Ok(ScaleVecSize::X4, true, 0, 0));
  EXPECT_TRUE(Ok(ScaleVecSize::X4, true, 0, 1));
  EXPECT_FALSE(Ok(ScaleVecSize::X4, true, 0, 2));
  EXPECT_FALSE(Ok(ScaleVecSize::X4, true, 1, 0));
  EXPECT_TRUE(Ok(ScaleVecSize::X4, false, 0, 3));
  EXPECT_FALSE(Ok(ScaleVecSize::X4, false, 0, 4));
  EXPECT_FALSE(Ok(ScaleVecSize::X4, false, 2, 0));
  EXPECT_TRUE(Ok(ScaleVecSize::X2, true, 2, 0));
  EXPECT_FALSE(Ok(ScaleVecSize::X2, true, 1, 0));
  EXPECT_FALSE(Ok(ScaleVecSize::X2, false, 3, 0));
  EXPECT_TRUE(Ok(ScaleVecSize::X1, true, 3, 1));
  EXPECT_FALSE(Ok(ScaleVecSize::X1, false, 4, 0));
}

// sm_120a mma.sync.m16n8k64 .kind::mxf4nvf4 .scale_vec::4X .ue4m3 with
// {byte-id, thread-id} = {0, 0}, the selectors CUTLASS's
// SM120_16x8x64_TN_VS uses: A row m comes from lane 4 * (m % 8) + m / 8, B
// column n from lane 4 * n; byte j of the register scales K block j
// (K 16j..16j+15).
TEST(ScaleLayout, MmaSyncScaleLanes) {
  struct Case {
    uint32_t Row, Lane;
  } ACases[] = {{0, 0}, {8, 1}, {1, 4}, {9, 5}, {7, 28}, {15, 29}};
  for (const Case &C : ACases)
    for (uint32_t Block = 0; Block < 4; ++Block) {
      Expected<RegisterScaleLocation> Loc =
          getMmaSyncScaleALocation(C.Row, Block, {0, 0});
      ASSERT_TRUE(Loc.ok()) << Loc.message();
      EXPECT_EQ(Loc->Lane, C.Lane) << "row " << C.Row;
      EXPECT_EQ(Loc->Byte, Block);
    }
  for (uint32_t Col = 0; Col < 8; ++Col) {
    Expected<RegisterScaleLocation> Loc =
        getMmaSyncScaleBLocation(Col, 3, {0, 0});
    ASSERT_TRUE(Loc.ok());
    EXPECT_EQ(Loc->Lane, 4 * Col);
    EXPECT_EQ(Loc->Byte, 3u);
  }
  EXPECT_EQ(getMmaSyncScaleALocation(0, 0, {0, 1})->Lane, 2u);
  EXPECT_EQ(getMmaSyncScaleALocation(15, 0, {0, 1})->Lane, 31u);
  EXPECT_EQ(getMmaSyncScaleBLocation(7, 0, {0, 3})->Lane, 31u);
  EXPECT_FALSE(getMmaSyncScaleALocation(16, 0, {0, 0}).ok());
  EXPECT_FALSE(getMmaSyncScaleALocation(0, 4, {0, 0}).ok());
  EXPECT_FALSE(getMmaSyncScaleALocation(0, 0, {1, 0}).ok());
  EXPECT_FALSE(getMmaSyncScaleBLocation(8, 0, {0, 0}).ok());
  EXPECT_FALSE(getMmaSyncScaleBLocation(0, 0, {0, 4}).ok());
}

// The inverse maps: for each thread-id, 16 lanes carry the 16 A rows and 8
// lanes the 8 B columns, each exactly once.
TEST(ScaleLayout, MmaSyncInverse) {
  for (uint16_t Tid = 0; Tid < 2; ++Tid) {
    std::vector<int> RowOfLane(32, -1);
    for (uint32_t Row = 0; Row < 16; ++Row) {
      uint32_t Lane = getMmaSyncScaleALocation(Row, 0, {0, Tid})->Lane;
      ASSERT_EQ(RowOfLane[Lane], -1) << "lane used twice";
      RowOfLane[Lane] = static_cast<int>(Row);
    }
    for (uint32_t Lane = 0; Lane < 32; ++Lane) {
      std::optional<uint32_t> Row = getMmaSyncScaleARowForLane(Lane, {0, Tid});
      EXPECT_EQ(Row ? static_cast<int>(*Row) : -1, RowOfLane[Lane]) << Lane;
    }
  }
  for (uint16_t Tid = 0; Tid < 4; ++Tid) {
    int Carriers = 0;
    for (uint32_t Lane = 0; Lane < 32; ++Lane) {
      std::optional<uint32_t> Col = getMmaSyncScaleBColForLane(Lane, {0, Tid});
      if (!Col)
        continue;
      ++Carriers;
      EXPECT_EQ(getMmaSyncScaleBLocation(*Col, 0, {0, Tid})->Lane, Lane);
    }
    EXPECT_EQ(Carriers, 8);
  }
  EXPECT_FALSE(getMmaSyncScaleARowForLane(32, {0, 0}).has_value());
}

// Cross-check against the CuTe layouts of CUTLASS
// include/cute/atom/mma_traits_sm120.hpp, evaluated independently:
//   SFALayout = Shape((2,2,8),64) : Stride((8,0,1),16)  (T32,V64) -> (M16,K64)
//   SFBLayout = Shape((4,8),64)   : Stride((0,1),8)     (T32,V64) -> (N8,K64)
// CUTLASS gives every lane a copy (the stride-0 modes); the lanes our
// selector-dependent map picks must hold the same row/column.
TEST(ScaleLayout, MmaSyncMatchesCutlassSm120Layouts) {
  for (uint32_t Lane = 0; Lane < 32; ++Lane) {
    uint32_t T0 = Lane % 2, T2 = Lane / 4;        // the (2,2,8) thread modes
    uint32_t CutlassRow = (8 * T0 + 1 * T2) % 16; // coordinate m + 16 k, k = v
    uint32_t CutlassCol = (1 * (Lane / 4)) % 8;   // (4,8): mode 0 has stride 0
    uint16_t TidA = static_cast<uint16_t>((Lane % 4) / 2);
    std::optional<uint32_t> Row = getMmaSyncScaleARowForLane(Lane, {0, TidA});
    ASSERT_TRUE(Row.has_value()) << Lane;
    EXPECT_EQ(*Row, CutlassRow) << Lane;
    std::optional<uint32_t> Col =
        getMmaSyncScaleBColForLane(Lane, {0, static_cast<uint16_t>(Lane % 4)});
    ASSERT_TRUE(Col.has_value()) << Lane;
    EXPECT_EQ(*Col, CutlassCol) << Lane;
  }
}
