//===- TmemTest.cpp - Tensor Memory addresses, allocation, scale placement ===//
//
// Part of the nvfp4 project.
//
//===----------------------------------------------------------------------===//

#include "nvfp4/Target/Tcgen05Encoding.h"

#include "gtest/gtest.h"

#include <set>

using namespace nvfp4::target;

// PTX ISA 9.7.16.1.1 "Tensor Memory Addressing": lane index in bits 31-16,
// column index in bits 15-0; 9.7.16.1: 128 lanes x 512 columns per CTA.
TEST(Tmem, AddressEncoding) {
  struct Case {
    uint32_t Lane, Column, Value;
  } Cases[] = {{0, 0, 0x00000000u},    {0, 1, 0x00000001u},
               {1, 0, 0x00010000u},    {32, 64, (32u << 16) | 64u},
               {96, 256, 0x00600100u}, {127, 511, 0x007F01FFu}};
  for (const Case &C : Cases) {
    Expected<TmemAddress> Addr = encodeTmemAddress(C.Lane, C.Column);
    ASSERT_TRUE(Addr.ok()) << Addr.message();
    EXPECT_EQ(Addr->Value, C.Value);
    TmemAddress Back = decodeTmemAddress(C.Value);
    EXPECT_EQ(Back.Lane, C.Lane);
    EXPECT_EQ(Back.Column, C.Column);
  }
  for (uint32_t Lane = 0; Lane < kTmemLanes; ++Lane)
    for (uint32_t Column = 0; Column < kTmemColumns; Column += 31) {
      Expected<TmemAddress> Addr = encodeTmemAddress(Lane, Column);
      ASSERT_TRUE(Addr.ok());
      EXPECT_EQ(decodeTmemAddress(Addr->Value).Lane, Lane);
      EXPECT_EQ(decodeTmemAddress(Addr->Value).Column, Column);
    }
  EXPECT_FALSE(encodeTmemAddress(128, 0).ok());
  EXPECT_FALSE(encodeTmemAddress(0, 512).ok());
  EXPECT_FALSE(encodeTmemAddress(0xFFFF, 0xFFFF).ok());
}

// PTX ISA 9.7.16.7.1 (tcgen05.alloc): nCols is a power of 2 in [32, 512].
TEST(Tmem, AllocColumns) {
  std::set<uint32_t> Legal = {32, 64, 128, 256, 512};
  for (uint32_t N = 0; N <= 1100; ++N)
    EXPECT_EQ(verifyTmemAllocColumns(N).ok(), Legal.count(N) == 1) << N;
  EXPECT_FALSE(verifyTmemAllocColumns(0xFFFFFFFFu).ok());
  EXPECT_FALSE(verifyTmemAllocColumns(0x80000000u).ok());

  for (uint32_t Required = 1; Required <= 512; ++Required) {
    Expected<uint32_t> Cols = getTmemAllocColumns(Required);
    ASSERT_TRUE(Cols.ok()) << Required;
    EXPECT_TRUE(verifyTmemAllocColumns(*Cols).ok());
    EXPECT_GE(*Cols, Required);
    EXPECT_TRUE(*Cols == 32 || *Cols < 2 * Required) << Required;
  }
  EXPECT_EQ(*getTmemAllocColumns(33), 64u);
  EXPECT_EQ(*getTmemAllocColumns(256 + 16), 512u);
  EXPECT_FALSE(getTmemAllocColumns(0).ok());
  EXPECT_FALSE(getTmemAllocColumns(513).ok());
}

// PTX ISA 9.7.16.10.5 (data-path layouts): Layout D (M = 128,
// cta_group::1) and Layout A (M = 256, cta_group::2) put row i of the FP32
// accumulator in lane i and column j in column j: 128 lanes x N columns per
// CTA.
TEST(Tmem, AccumulatorFootprint) {
  Expected<TmemRegion> One =
      getAccumulatorTmemFootprint(128, 256, CtaGroup::One);
  ASSERT_TRUE(One.ok()) << One.message();
  EXPECT_EQ(One->Lanes, 128u);
  EXPECT_EQ(One->Columns, 256u);
  Expected<TmemRegion> Pair =
      getAccumulatorTmemFootprint(256, 128, CtaGroup::Two);
  ASSERT_TRUE(Pair.ok()) << Pair.message();
  EXPECT_EQ(Pair->Lanes, 128u);
  EXPECT_EQ(Pair->Columns, 128u);
  EXPECT_EQ(getAccumulatorTmemFootprint(128, 8, CtaGroup::One)->Columns, 8u);
  // Layout B (M = 128 with cta_group::2) is not modelled; M = 64 is not a
  // block-scaled shape.
  EXPECT_FALSE(getAccumulatorTmemFootprint(128, 128, CtaGroup::Two).ok());
  EXPECT_FALSE(getAccumulatorTmemFootprint(64, 128, CtaGroup::One).ok());
  EXPECT_FALSE(getAccumulatorTmemFootprint(128, 100, CtaGroup::One).ok());
  EXPECT_FALSE(getAccumulatorTmemFootprint(256, 24, CtaGroup::Two).ok());
  EXPECT_FALSE(getAccumulatorTmemFootprint(128, 264, CtaGroup::One).ok());
}

// PTX ISA 9.7.16.10.7.2.3/9.7.16.10.7.3.3 (scale_vec::4X: four scales per row
// fill a 32-bit word, ID 0) and 9.7.16.10.7 ("duplicated to all 32 lane
// partitions"); the row -> (lane, column) placement follows CUTLASS
// UMMA::tmem_sf_frg (4x1 data path): row r in lane r % 32, column r / 32.
TEST(Tmem, ScaleFactorLayout) {
  Expected<ScaleFactorTmemLayout> A =
      getScaleFactorTmemLayout(128, ScaleVecSize::X4);
  ASSERT_TRUE(A.ok()) << A.message();
  EXPECT_EQ(A->ScalesPerRow, 4u);
  EXPECT_EQ(A->ColumnsPerMma, 4u);
  EXPECT_EQ(getScaleFactorTmemLayout(256, ScaleVecSize::X4)->ColumnsPerMma, 8u);
  EXPECT_EQ(getScaleFactorTmemLayout(8, ScaleVecSize::X4)->ColumnsPerMma, 1u);
  EXPECT_EQ(getScaleFactorTmemLayout(64, ScaleVecSize::X2)->ScalesPerRow, 2u);
  EXPECT_FALSE(getScaleFactorTmemLayout(0, ScaleVecSize::X4).ok());
  EXPECT_FALSE(getScaleFactorTmemLayout(257, ScaleVecSize::X4).ok());

  struct Case {
    uint32_t Row, Index;
    ScaleVecSize Vec;
    uint32_t Id, Lane, Column, Byte;
  } Cases[] = {{0, 0, ScaleVecSize::X4, 0, 0, 0, 0},
               {33, 2, ScaleVecSize::X4, 0, 1, 1, 2},
               {127, 3, ScaleVecSize::X4, 0, 31, 3, 3},
               {255, 0, ScaleVecSize::X4, 0, 31, 7, 0},
               {5, 1, ScaleVecSize::X2, 2, 5, 0, 3},
               {70, 0, ScaleVecSize::X1, 3, 6, 2, 3}};
  for (const Case &C : Cases) {
    Expected<ScaleFactorTmemLocation> Loc =
        getScaleFactorTmemLocation(C.Row, C.Index, C.Vec, C.Id);
    ASSERT_TRUE(Loc.ok()) << Loc.message();
    EXPECT_EQ(Loc->Lane, C.Lane) << C.Row;
    EXPECT_EQ(Loc->Column, C.Column) << C.Row;
    EXPECT_EQ(Loc->Byte, C.Byte) << C.Row;
  }
  EXPECT_FALSE(getScaleFactorTmemLocation(0, 0, ScaleVecSize::X4, 2).ok());
  EXPECT_FALSE(getScaleFactorTmemLocation(0, 4, ScaleVecSize::X4, 0).ok());
  EXPECT_FALSE(getScaleFactorTmemLocation(0, 2, ScaleVecSize::X2, 0).ok());
  EXPECT_FALSE(getScaleFactorTmemLocation(0, 0, ScaleVecSize::X2, 1).ok());
  EXPECT_FALSE(getScaleFactorTmemLocation(256, 0, ScaleVecSize::X4, 0).ok());
}

// PTX ISA 9.7.16.9.2 (tcgen05.cp): .64x128b requires .warpx2::02_13 or
// .warpx2::01_23, .32x128b requires .warpx4 (ptxas 13.0 agrees: "Modifier
// '.warptype' require..."), the other shapes take none.
TEST(Tmem, CopyShapes) {
  using S = Tcgen05CpShape;
  using C = Tcgen05CpMulticast;
  const S Shapes[] = {S::Lanes128x256b, S::Lanes4x256b, S::Lanes128x128b,
                      S::Lanes64x128b, S::Lanes32x128b};
  const C Casts[] = {C::None, C::Warpx2_02_13, C::Warpx2_01_23, C::Warpx4};
  int Legal = 0;
  for (S Shape : Shapes)
    for (C Cast : Casts) {
      bool Want = (Shape == S::Lanes64x128b)
                      ? (Cast == C::Warpx2_02_13 || Cast == C::Warpx2_01_23)
                  : (Shape == S::Lanes32x128b) ? Cast == C::Warpx4
                                               : Cast == C::None;
      EXPECT_EQ(verifyTcgen05CpShape(Shape, Cast).ok(), Want);
      Legal += Want;
    }
  EXPECT_EQ(Legal, 6);
  // 9.7.16.2.3: lanes x bits.
  EXPECT_EQ(getTcgen05CpSourceBytes(S::Lanes128x256b), 4096u);
  EXPECT_EQ(getTcgen05CpSourceBytes(S::Lanes4x256b), 128u);
  EXPECT_EQ(getTcgen05CpSourceBytes(S::Lanes128x128b), 2048u);
  EXPECT_EQ(getTcgen05CpSourceBytes(S::Lanes64x128b), 1024u);
  EXPECT_EQ(getTcgen05CpSourceBytes(S::Lanes32x128b), kScaleAtomBytes);
}

// The three facts meet: a 512-byte sm_100a scale atom copied by
// tcgen05.cp.32x128b.warpx4 (PTX 9.7.16.9.2: 32 lanes x 128 bits from an
// unswizzled K-major source whose row l is bytes 16l..16l+15, multicast to
// the four warps' lane quarters) lands exactly where scale_vec::4X reads
// each (row, block): lane row % 32, column row / 32, byte block.
TEST(Tmem, ScaleAtomCopyMatchesMmaPlacement) {
  for (uint32_t Row = 0; Row < kScaleAtomRows; ++Row)
    for (uint32_t Block = 0; Block < kScaleAtomBlocks; ++Block) {
      Expected<uint32_t> Offset = getSm100ScaleAtomOffset(Row, Block);
      ASSERT_TRUE(Offset.ok());
      // Where tcgen05.cp.32x128b puts shared byte `Offset`.
      uint32_t CopyLane = *Offset / 16;
      uint32_t CopyColumn = (*Offset % 16) / 4;
      uint32_t CopyByte = *Offset % 4;
      Expected<ScaleFactorTmemLocation> Loc =
          getScaleFactorTmemLocation(Row, Block, ScaleVecSize::X4, 0);
      ASSERT_TRUE(Loc.ok());
      EXPECT_EQ(CopyLane, Loc->Lane) << Row << "," << Block;
      EXPECT_EQ(CopyColumn, Loc->Column) << Row << "," << Block;
      EXPECT_EQ(CopyByte, Loc->Byte) << Row << "," << Block;
    }
}

// One K = 256 step of the 128x128x256 NVFP4 tile: SFA is 128 rows x 16
// scale blocks = 4 atoms = 4 copies of .32x128b.warpx4, 4 columns each; MMA
// step k (K = 64) reads its SFA at column base + 4k.
TEST(Tmem, ScaleCopyPlanSfa) {
  Expected<ScaleFactorCopyPlan> Plan = planScaleFactorCopy(128, 16, 0x8000);
  ASSERT_TRUE(Plan.ok()) << Plan.message();
  EXPECT_EQ(Plan->Shape, Tcgen05CpShape::Lanes32x128b);
  EXPECT_EQ(Plan->Multicast, Tcgen05CpMulticast::Warpx4);
  EXPECT_TRUE(verifyTcgen05CpShape(Plan->Shape, Plan->Multicast).ok());
  EXPECT_EQ(Plan->AtomsM, 1u);
  EXPECT_EQ(Plan->AtomsK, 4u);
  EXPECT_EQ(Plan->AtomStrideK, 512u);
  EXPECT_EQ(Plan->ColumnsPerMmaStep, 4u);
  EXPECT_EQ(Plan->TotalColumns, 16u);
  for (uint32_t K = 0; K < 4; ++K) {
    Expected<ScaleFactorCopy> Copy = getScaleFactorCopy(*Plan, 0, K);
    ASSERT_TRUE(Copy.ok());
    EXPECT_EQ(Copy->SmemAddress, 0x8000u + 512 * K);
    EXPECT_EQ(Copy->TmemColumnOffset, 4 * K);
  }
  // The source descriptor of the first atom: no swizzle, SBO = 128 (eight
  // 16-byte rows per core matrix group), LBO = 16 (PTX 9.7.16.4.1 Table 40;
  // unused by a one-column copy, and CUTLASS's value: its constant
  // 0x0000400800010000 = 70403103981568 in cutlass_72a_1sm.sm_100a.ptx line
  // 1412 and cutlass_89.sm_103a.ptx line 4265).
  Expected<SmemDescriptor> Desc = encodeTcgen05SmemDescriptor(Plan->FirstAtom);
  ASSERT_TRUE(Desc.ok()) << Desc.message();
  EXPECT_EQ(Desc->Value, uint64_t(0x8000 >> 4)          // start
                             | uint64_t(16 >> 4) << 16  // LBO
                             | uint64_t(128 >> 4) << 32 // SBO
                             | uint64_t(1) << 46        // 0b001
                             | uint64_t(0) << 61);      // no swizzle
  uint64_t Cutlass = 70403103981568ull;
  EXPECT_EQ(Desc->Value & ~uint64_t(0x3FFF), Cutlass);
  EXPECT_FALSE(getScaleFactorCopy(*Plan, 1, 0).ok());
  EXPECT_FALSE(getScaleFactorCopy(*Plan, 0, 4).ok());
}

// SFB of N = 256 (two 128-row atoms per MMA step): step k reads 8 columns
// at base + 8k; atom m of step k sits at column base + 8k + 4m, matching
// "row r in column r / 32" of getScaleFactorTmemLocation.
// The CTA pair's B scales (Tcgen05Matmul.cpp, N = 256): CUTLASS's 2-SM
// kernel (cutlass_72a.sm_100a.ptx lines 1654-1675) issues 8
// tcgen05.cp.cta_group::2.32x128b.warpx4 per K block to columns SFB + 4 i,
// i = 0..7, and MMA j reads SFB + 8 j (lines 1715-1802: [%r164] = +400,
// [%r183] = +408, [%r185] = +416, [%r187] = +424): atom (m, k) at column
// 8 k + 4 m. The plan places it there; only the shared-memory order of the
// atoms differs (CUTLASS [k][m] from its multicast box, ours [m][k], the
// global 128x4 order), and tcgen05.cp takes each atom's address.
TEST(Tmem, ScaleCopyPlanPairSfbMatchesCutlass72a) {
  Expected<ScaleFactorCopyPlan> Plan = planScaleFactorCopy(256, 16, 0);
  ASSERT_TRUE(Plan.ok()) << Plan.message();
  ASSERT_EQ(Plan->AtomsM, 2u);
  ASSERT_EQ(Plan->AtomsK, 4u);
  for (uint32_t K = 0; K < 4; ++K)
    for (uint32_t M = 0; M < 2; ++M) {
      Expected<ScaleFactorCopy> Copy = getScaleFactorCopy(*Plan, M, K);
      ASSERT_TRUE(Copy.ok());
      uint32_t CutlassCopy = 2 * K + M; // its i-th copy of the K block
      EXPECT_EQ(Copy->TmemColumnOffset, 4 * CutlassCopy);
      EXPECT_EQ(Copy->TmemColumnOffset, K * Plan->ColumnsPerMmaStep + 4 * M);
    }
}

TEST(Tmem, ScaleCopyPlanSfbN256) {
  Expected<ScaleFactorCopyPlan> Plan = planScaleFactorCopy(256, 16, 0);
  ASSERT_TRUE(Plan.ok()) << Plan.message();
  EXPECT_EQ(Plan->ColumnsPerMmaStep, 8u);
  EXPECT_EQ(Plan->TotalColumns, 32u);
  EXPECT_EQ(Plan->AtomStrideM, 2048u); // Global order: K atoms first.
  Expected<ScaleFactorCopy> Copy = getScaleFactorCopy(*Plan, 1, 2);
  ASSERT_TRUE(Copy.ok());
  EXPECT_EQ(Copy->SmemAddress, 1 * 2048u + 2 * 512u);
  EXPECT_EQ(Copy->TmemColumnOffset, 2 * 8u + 4u);
  for (uint32_t Row : {0u, 127u, 128u, 200u, 255u}) {
    Expected<ScaleFactorTmemLocation> Loc =
        getScaleFactorTmemLocation(Row, 0, ScaleVecSize::X4, 0);
    ASSERT_TRUE(Loc.ok());
    Expected<ScaleFactorCopy> Atom = getScaleFactorCopy(*Plan, Row / 128, 2);
    ASSERT_TRUE(Atom.ok());
    EXPECT_EQ(Atom->TmemColumnOffset + (Row % 128) / 32,
              2 * Plan->ColumnsPerMmaStep + Loc->Column);
  }
  // Caller-chosen shared order (M atoms contiguous, as CUTLASS stages them).
  Expected<ScaleFactorCopyPlan> Staged =
      planScaleFactorCopy(256, 16, 0, /*AtomStrideM=*/512,
                          /*AtomStrideK=*/1024);
  ASSERT_TRUE(Staged.ok());
  EXPECT_EQ(getScaleFactorCopy(*Staged, 1, 2)->SmemAddress, 512u + 2048u);
  EXPECT_EQ(getScaleFactorCopy(*Staged, 1, 2)->TmemColumnOffset, 20u);
}

TEST(Tmem, ScaleCopyPlanRejectsBadShapes) {
  EXPECT_FALSE(planScaleFactorCopy(100, 16, 0).ok()); // Rows not x128.
  EXPECT_FALSE(planScaleFactorCopy(128, 6, 0).ok());  // Blocks not x4.
  EXPECT_FALSE(planScaleFactorCopy(0, 4, 0).ok());
  EXPECT_FALSE(planScaleFactorCopy(128, 0, 0).ok());
  EXPECT_FALSE(planScaleFactorCopy(1024, 512, 0).ok()); // > 512 columns.
  EXPECT_FALSE(planScaleFactorCopy(128, 4, 8).ok());    // Misaligned.
  EXPECT_FALSE(planScaleFactorCopy(128, 4, 0, 520).ok());
  EXPECT_FALSE(planScaleFactorCopy(128, 8, 0x3FF00).ok()); // Past 256 KiB.
  Expected<ScaleFactorCopyPlan> Fits = planScaleFactorCopy(128, 4, 0x3FE00);
  EXPECT_TRUE(Fits.ok()) << Fits.message();
}
