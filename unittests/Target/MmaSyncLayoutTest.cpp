//===- MmaSyncLayoutTest.cpp - sm_120a ldmatrix and scale-lane layouts ----===//
//
// Part of the nvfp4 project.
//
//===----------------------------------------------------------------------===//
//
// The sm_120a GEMM (MmaBlockScaleMatmul.cpp) loads its mma.sync.m16n8k64
// e2m1 fragments with ldmatrix.x4 from TMA-swizzled code tiles and its
// scales with 32-bit loads. These tests check the layout functions it uses
// against the PTX ISA's fragment tables and against the address arithmetic
// of CUTLASS's own sm_120a NVFP4 kernel, transcribed from
// ../shared/reference/cutlass-ptx/cutlass_79a.sm_120a.ptx (CUTLASS 7107b055,
// example 79a: 128x128x128 tile, 4 stages, 8 consumer warps as 4 (M) x 2
// (N), tid 128..383; line numbers below are that file's).
//
//===----------------------------------------------------------------------===//

#include "nvfp4/Target/Tcgen05Encoding.h"

#include "gtest/gtest.h"

#include <set>

using namespace nvfp4::target;

namespace {

// CUTLASS's byte offset of a consumer thread's A ldmatrix row inside an A
// stage, lines 2214-2242 (%r827 counts 4-bit elements; shr.u16 by 1 makes
// bytes: %rd11). The first A ldmatrix.x4 reads stage + 14336 + this (line
// 2390), the second + 4096 (the warp's second m16 block, 64 rows on).
uint32_t cutlassLdmatrixA(uint32_t Tid) {
  uint32_t Warp = Tid >> 5;
  uint32_t R811 = Tid << 7, R812 = R811 & 768, R813 = Tid << 1;
  uint32_t R814 = R813 & 32, R817 = R811 & 1152;
  uint32_t R819 = (Warp << 11) & 6144, R820 = R817 | R819;
  uint32_t R824 = (Tid << 4) & 96, R825 = R812 | R824;
  uint32_t R827 = R820 | (R825 ^ R814);
  return (R827 & 0xFFFF) >> 1;
}

// B, lines 2244-2260 (%rd12): stage + 47104 + this, then + 2048 j for the
// warp's four x4 loads (lines 2402-2417), each two n8 blocks.
uint32_t cutlassLdmatrixB(uint32_t Tid) {
  uint32_t R811 = Tid << 7, R812 = R811 & 768, R816 = R811 & 128;
  uint32_t R823 = Tid << 4, R824 = R823 & 96, R825 = R812 | R824;
  uint32_t R830 = (Tid << 2) & 32, R833 = (Tid << 6) & 1024;
  uint32_t R834 = R823 & 2048;
  uint32_t R838 = R816 | R834 | R833 | (R825 ^ R830);
  return (R838 & 0xFFFF) >> 1;
}

// The scale loads, lines 2263-2277: SFA at %r241 - smem - 79872 (two
// ld.shared.u32 at +0 and +8, line 2421-2422: the warp's two m16 blocks),
// SFB at %r242 - smem - 83968 (ld.shared.v2.u64 at +0 and +128, lines
// 2424-2425: 4 words each). The next K = 64 block reads +512 (line 2538).
uint32_t cutlassScaleA(uint32_t Tid) {
  uint32_t Warp = Tid >> 5;
  uint32_t R816 = (Tid << 7) & 128, R839 = (Tid << 2) & 112;
  uint32_t R842 = ((Warp << 8) | (Tid >> 4)) & 260;
  return R816 | R839 | R842;
}
uint32_t cutlassScaleB(uint32_t Tid) {
  uint32_t R839 = (Tid << 2) & 112, R846 = (Tid << 1) & 256;
  return R839 | R846;
}

} // namespace

// TMA's 64- and 128-byte swizzles on a 1024-byte aligned tile: known points
// and a bijection on each 8-row (128B) or 8-row (64B: 512-byte) pattern.
TEST(MmaSyncLayout, SwizzledTileOffsets) {
  EXPECT_EQ(*getSwizzledTileOffset(0, 0, 64), 0u);
  EXPECT_EQ(*getSwizzledTileOffset(1, 16, 64), 64u + 16u); // rows 0-1: no XOR
  EXPECT_EQ(*getSwizzledTileOffset(2, 0, 64), 128u + 16u); // (2 / 2) % 4 = 1
  EXPECT_EQ(*getSwizzledTileOffset(7, 48, 64), 448u + 0u); // 3 ^ 3
  EXPECT_EQ(*getSwizzledTileOffset(8, 16, 64), 512u + 16u); // repeats
  EXPECT_EQ(*getSwizzledTileOffset(3, 16, 128), 384u + 32u); // 1 ^ 3
  EXPECT_EQ(*getSwizzledTileOffset(9, 5, 128), 1152u + 16u + 5u);
  for (uint32_t RowBytes : {64u, 128u}) {
    std::set<uint32_t> Seen;
    for (uint32_t Row = 0; Row < 8; ++Row)
      for (uint32_t Byte = 0; Byte < RowBytes; ++Byte) {
        uint32_t Offset = *getSwizzledTileOffset(Row, Byte, RowBytes);
        EXPECT_EQ(Offset / RowBytes, Row); // the swizzle stays in the row
        EXPECT_EQ(Offset % 16, Byte % 16); // and moves whole 16-byte chunks
        Seen.insert(Offset);
      }
    EXPECT_EQ(Seen.size(), 8 * RowBytes);
  }
  EXPECT_FALSE(getSwizzledTileOffset(0, 0, 32).ok());
  EXPECT_FALSE(getSwizzledTileOffset(0, 64, 64).ok());
}

// ldmatrix.x4 delivers to register j of lane (g, t) bytes 4t..4t+3 of row
// g of matrix j, whose rows lanes 8j..8j+7 address (PTX ISA 9.7.14.5.15,
// ldmatrix). With the row addresses of getMmaSyncLdmatrixAddress{A,B},
// that is exactly the mma.m16n8k64 fragment of the PTX ISA for every lane
// and register: the loaded registers go to the MMA unchanged, as CUTLASS
// passes them (line 2390 -> 2546: {%r2802, %r2801, %r2800, %r2799} is A;
// line 2402 -> 2546, 2555: {%r2818, %r2817} and {%r2816, %r2815} are the B
// of two n8 blocks).
TEST(MmaSyncLayout, LdmatrixRegistersAreMmaFragments) {
  for (uint32_t Lane = 0; Lane < 32; ++Lane) {
    uint32_t G = Lane / 4, T = Lane % 4;
    for (uint32_t Reg = 0; Reg < 4; ++Reg) {
      LdmatrixRowAddress Source = *getMmaSyncLdmatrixAddressA(8 * Reg + G);
      MmaSyncFragmentBytes Want = *getMmaSyncFragmentBytesA(Lane, Reg);
      EXPECT_EQ(Source.Row, Want.Row) << Lane << "," << Reg;
      EXPECT_EQ(16 * Source.Half + 4 * T, Want.Byte) << Lane << "," << Reg;

      LdmatrixRowAddress SourceB = *getMmaSyncLdmatrixAddressB(8 * Reg + G);
      MmaSyncFragmentBytes WantB = *getMmaSyncFragmentBytesB(Lane, Reg % 2);
      EXPECT_EQ(SourceB.Row, 8 * (Reg / 2) + WantB.Row) << Lane << "," << Reg;
      EXPECT_EQ(16 * SourceB.Half + 4 * T, WantB.Byte) << Lane << "," << Reg;
    }
  }
  // The PTX ISA table itself, at a few points: a1 of lane 5 is row 1 + 8,
  // bytes 4..7; a2 of lane 31 is row 7, bytes 16 + 12; b1 of lane 9 is
  // column 2, bytes 16 + 4.
  EXPECT_EQ(getMmaSyncFragmentBytesA(5, 1)->Row, 9u);
  EXPECT_EQ(getMmaSyncFragmentBytesA(5, 1)->Byte, 4u);
  EXPECT_EQ(getMmaSyncFragmentBytesA(31, 2)->Row, 7u);
  EXPECT_EQ(getMmaSyncFragmentBytesA(31, 2)->Byte, 28u);
  EXPECT_EQ(getMmaSyncFragmentBytesB(9, 1)->Row, 2u);
  EXPECT_EQ(getMmaSyncFragmentBytesB(9, 1)->Byte, 20u);
  EXPECT_FALSE(getMmaSyncFragmentBytesB(0, 2).ok());
  EXPECT_FALSE(getMmaSyncLdmatrixAddressA(32).ok());
}

// Every consumer thread of CUTLASS's kernel addresses the same shared-memory
// byte as our layout of the same row and K half: its warp w's m16 block
// starts at row 16 (w % 4) (A, lines 2218-2227: (%r2 << 11) & 6144
// elements), its first B pair at row 16 ((tid >> 7) & 1) (line 2253), and
// its code tiles are 64-byte rows in the 64-byte swizzle (the kernel's
// Swizzle<2,4,3> smem layout). The second K = 64 step adds +-32 (line
// 2439: %r244 = tid & 4 ? -32 : 32), which is half + 2 in our terms.
TEST(MmaSyncLayout, LdmatrixAddressesMatchCutlass79a) {
  for (uint32_t Tid = 128; Tid < 384; ++Tid) {
    uint32_t Lane = Tid % 32, Warp = Tid / 32;
    LdmatrixRowAddress A = *getMmaSyncLdmatrixAddressA(Lane);
    uint32_t RowA = 16 * (Warp % 4) + A.Row;
    EXPECT_EQ(cutlassLdmatrixA(Tid),
              *getSwizzledTileOffset(RowA, 16 * A.Half, 64))
        << Tid;
    int32_t Step = (Tid & 4) ? -32 : 32;
    EXPECT_EQ(cutlassLdmatrixA(Tid) + Step,
              *getSwizzledTileOffset(RowA, 32 + 16 * A.Half, 64))
        << Tid;
    EXPECT_EQ(cutlassLdmatrixA(Tid) + 4096,
              *getSwizzledTileOffset(RowA + 64, 16 * A.Half, 64))
        << Tid;

    LdmatrixRowAddress B = *getMmaSyncLdmatrixAddressB(Lane);
    uint32_t RowB = 16 * ((Tid >> 7) & 1) + B.Row;
    for (uint32_t J = 0; J < 4; ++J)
      EXPECT_EQ(cutlassLdmatrixB(Tid) + 2048 * J,
                *getSwizzledTileOffset(RowB + 32 * J, 16 * B.Half, 64))
          << Tid << "," << J;
  }
}

// The scale-lane layout with selector {0, 0}: the lanes the MMA reads
// (getMmaSyncScale{A,B}{Row,Col}ForLane) load, in CUTLASS's kernel, the
// 128x4-atom bytes (getSm100ScaleAtomOffset) of exactly the row or column
// our inverse names; the other lanes load what our consumer's formula
// (row g + 8 (lane % 2), column g) names too.
TEST(MmaSyncLayout, ScaleLanesMatchCutlass79a) {
  for (uint32_t Tid = 128; Tid < 384; ++Tid) {
    uint32_t Lane = Tid % 32, Warp = Tid / 32, G = Lane / 4;
    std::optional<uint32_t> RowA =
        getMmaSyncScaleARowForLane(Lane, MmaSyncScaleSelector{});
    if (RowA) {
      EXPECT_EQ(*RowA, G + 8 * (Lane % 2));
    }
    uint32_t Row = 16 * (Warp % 4) + G + 8 * (Lane % 2);
    EXPECT_EQ(cutlassScaleA(Tid), *getSm100ScaleAtomOffset(Row, 0)) << Tid;
    // The warp's second m16 block, 64 rows on: +8 (line 2422).
    EXPECT_EQ(cutlassScaleA(Tid) + 8, *getSm100ScaleAtomOffset(Row + 64, 0));

    std::optional<uint32_t> ColB =
        getMmaSyncScaleBColForLane(Lane, MmaSyncScaleSelector{});
    if (ColB) {
      EXPECT_EQ(*ColB, G);
    }
    for (uint32_t H = 0; H < 2; ++H)
      for (uint32_t J = 0; J < 4; ++J) {
        // Word J of the 16 bytes at +128 H: the n8 block of the warp's
        // pair J (32 rows apart), half H.
        uint32_t Col = 16 * ((Tid >> 7) & 1) + 32 * J + 8 * H + G;
        EXPECT_EQ(cutlassScaleB(Tid) + 128 * H + 4 * J,
                  *getSm100ScaleAtomOffset(Col, 0))
            << Tid << "," << H << "," << J;
      }
  }
}

// sm_120a's MX forms (docs/Blackwell.md section 10.4): MMA step j of a
// 128-byte K step takes byte-id j with .scale_vec::1X (mxf8f6f4, one
// 32-element block per m16n8k32) and 2 (j % 2) with .scale_vec::2X (mxf4,
// two blocks per m16n8k64), out of the step's scale word j / 2 (2X) or 0
// (1X): PTX ISA 9.7.14.3, "one byte ... determined by byte-id" (1X) and "0
// selects lower two bytes whereas value of 2 selects upper two bytes"
// (2X); Table 37's ranges, which verifyMmaSyncScaleSelector checks (and
// ptxas 13.0 enforces), admit exactly these.
TEST(MmaSyncLayout, MXByteIdsPerMmaStep) {
  for (uint32_t J = 0; J < kMmasPerKStep; ++J) {
    Expected<KStepMmaScales> One = getKStepMmaScales(ScaleVecSize::X1, J);
    Expected<KStepMmaScales> Two = getKStepMmaScales(ScaleVecSize::X2, J);
    ASSERT_TRUE(One.ok() && Two.ok());
    EXPECT_EQ(One->ScaleFactorId, J);
    EXPECT_EQ(One->ScaleAtom, 0u);
    EXPECT_EQ(Two->ScaleFactorId, 2 * (J % 2));
    EXPECT_EQ(Two->ScaleAtom, J / 2);
    for (bool IsA : {true, false}) {
      EXPECT_TRUE(verifyMmaSyncScaleSelector(
                      ScaleVecSize::X1, IsA,
                      MmaSyncScaleSelector{uint16_t(One->ScaleFactorId), 0})
                      .ok());
      EXPECT_TRUE(verifyMmaSyncScaleSelector(
                      ScaleVecSize::X2, IsA,
                      MmaSyncScaleSelector{uint16_t(Two->ScaleFactorId), 0})
                      .ok());
    }
  }
  // 2X takes half words only; 4X only byte-id 0.
  EXPECT_FALSE(verifyMmaSyncScaleSelector(ScaleVecSize::X2, true,
                                          MmaSyncScaleSelector{1, 0})
                   .ok());
  EXPECT_FALSE(verifyMmaSyncScaleSelector(ScaleVecSize::X4, true,
                                          MmaSyncScaleSelector{2, 0})
                   .ok());
}
