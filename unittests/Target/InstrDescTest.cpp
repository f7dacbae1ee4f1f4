//===- InstrDescTest.cpp - tcgen05 block-scaled instruction descriptor ----===//
//
// Part of the nvfp4 project.
//
//===----------------------------------------------------------------------===//
//
// Expected values are written field by field from PTX ISA 9.7.16.4.2,
// Table 44 ("Instruction descriptor format for .kind::mxf4 and
// .kind::mxf4nvf4") and Table 43 (".kind::mxf8f6f4"):
//
//   bits 0-1 reserved | 2 sparsity | 3 reserved | 4-5 scale factor B ID |
//   6 reserved | 7-9 atype | 10-11 btype (10-12 for mxf8f6f4) |
//   12 reserved (mxf4*) | 13 negate A | 14 negate B | 15 transpose A |
//   16 transpose B | 17-22 N >> 3 | 23 scale type (UE4M3 0, UE8M0 1) |
//   24-26 reserved | 27-28 M >> 7 | 29-30 scale factor A ID |
//   31 K dimension (mxf4*: 0 = K 64 dense / 128 sparse, 1 = K 96)
//
//===----------------------------------------------------------------------===//

#include "nvfp4/Target/Tcgen05Encoding.h"

#include "gtest/gtest.h"

#include <array>
#include <random>

using namespace nvfp4::target;

namespace {

BlockScaledMmaConfig nvfp4Config(CtaGroup Group, uint32_t M, uint32_t N) {
  BlockScaledMmaConfig Config;
  Config.Kind = MmaKind::MXF4NVF4;
  Config.Group = Group;
  Config.M = M;
  Config.N = N;
  Config.K = 64;
  Config.ScaleType = ScaleFactorType::UE4M3;
  Config.VecSize = ScaleVecSize::X4;
  return Config;
}

uint32_t encodeOrDie(const BlockScaledMmaConfig &Config) {
  Expected<BlockScaledInstrDesc> Desc = encodeBlockScaledInstrDesc(Config);
  EXPECT_TRUE(Desc.ok()) << Desc.message();
  return Desc.ok() ? Desc->Value : 0xDEADBEEF;
}

void expectRejected(const BlockScaledMmaConfig &Config, const char *Fragment) {
  Expected<BlockScaledInstrDesc> Desc = encodeBlockScaledInstrDesc(Config);
  ASSERT_FALSE(Desc.ok()) << "accepted, value 0x" << std::hex << Desc->Value;
  EXPECT_NE(Desc.message().find(Fragment), std::string::npos)
      << "message: " << Desc.message();
}

} // namespace

// PTX ISA 9.7.16.4.2 Table 44, .kind::mxf4nvf4: the NVFP4 GEMM of one CTA,
// M = 128, N = 128, K = 64, E2M1 x E2M1, UE4M3 scales, .block16.
TEST(InstrDesc, Nvfp4M128N128) {
  uint32_t Want = (0u << 2)           // dense
                  | (0u << 4)         // scale factor B ID 0
                  | (1u << 7)         // atype E2M1 = 1
                  | (1u << 10)        // btype E2M1 = 1
                  | (0u << 13)        // no negate A
                  | (0u << 14)        // no negate B
                  | (0u << 15)        // no transpose A
                  | (0u << 16)        // no transpose B
                  | (128u >> 3) << 17 // N >> 3 = 16
                  | (0u << 23)        // UE4M3
                  | (128u >> 7) << 27 // M >> 7 = 1
                  | (0u << 29)        // scale factor A ID 0
                  | (0u << 31);       // K = 64
  EXPECT_EQ(Want, 0x08200480u);
  EXPECT_EQ(encodeOrDie(nvfp4Config(CtaGroup::One, 128, 128)), Want);

  Expected<BlockScaledInstrDesc> Short =
      encodeNvfp4InstrDesc(CtaGroup::One, 128, 128);
  ASSERT_TRUE(Short.ok()) << Short.message();
  EXPECT_EQ(Short->Value, Want);
  EXPECT_EQ(Short->NDim, 16u);
  EXPECT_EQ(Short->MDim, 1u);
  EXPECT_EQ(Short->AType, 1u);
  EXPECT_EQ(Short->BType, 1u);
  EXPECT_EQ(Short->ScaleType, 0u);
}

// PTX ISA 9.7.16.4.2 Table 44 with Table 39's cta_group::2 row 256xNxK:
// M = 256 across the CTA pair, N = 256.
TEST(InstrDesc, Nvfp4M256N256CtaPair) {
  uint32_t Want = (1u << 7)            // atype E2M1
                  | (1u << 10)         // btype E2M1
                  | (256u >> 3) << 17  // N >> 3 = 32
                  | (0u << 23)         // UE4M3
                  | (256u >> 7) << 27; // M >> 7 = 2
  EXPECT_EQ(Want, 0x10400480u);
  EXPECT_EQ(encodeOrDie(nvfp4Config(CtaGroup::Two, 256, 256)), Want);
  // cta_group::2 with M = 128 (data-path Layout B) is also a legal MMA.
  EXPECT_EQ(encodeOrDie(nvfp4Config(CtaGroup::Two, 128, 16)),
            (1u << 7) | (1u << 10) | (16u >> 3) << 17 | (128u >> 7) << 27);
}

// The CTA pair's descriptor is CUTLASS's 2-SM one: cutlass_72a.sm_100a.ptx
// (../shared/reference/cutlass-ptx/, 256x256x256 on 2 CTAs) builds the
// idesc of every MMA from two 16-bit halves, `or.b16 %rs42, %rs41, 4160`
// (0x1040, line 1464) and `or.b16 %rs45, %rs44, 1152` (0x0480, line 1468),
// where the ORed-in bits are the scale factor IDs taken from bits 30-31 of
// the scale addresses (0 for 4X). Tcgen05Matmul.cpp's pair kernel uses
// encodeNvfp4InstrDesc(Two, 256, 256) (tcgen05-gemm-pair.test checks the
// PTX constant 272630912).
TEST(InstrDesc, CtaPairMatchesCutlass72a) {
  uint32_t Cutlass = (0x1040u << 16) | 0x0480u;
  Expected<BlockScaledInstrDesc> Pair =
      encodeNvfp4InstrDesc(CtaGroup::Two, 256, 256);
  ASSERT_TRUE(Pair.ok()) << Pair.message();
  EXPECT_EQ(Pair->Value, Cutlass);
  EXPECT_EQ(Pair->Value, 272630912u);
  EXPECT_EQ(Pair->MDim, 2u);  // M = 256 across the pair
  EXPECT_EQ(Pair->NDim, 32u); // N = 256
  EXPECT_EQ(Pair->ScaleFactorAId, 0u);
  EXPECT_EQ(Pair->ScaleFactorBId, 0u);
}

// CUTLASS's InstrDescriptorBlockScaled (cute/arch/mma_sm100_desc.hpp) writes
// M >> 4 into bits 24-28, the PTX table M >> 7 into bits 27-28 with 24-26
// reserved: for the two legal M the bits coincide.
TEST(InstrDesc, MFieldAgreesWithCutlassMShift4) {
  for (uint32_t M : {128u, 256u}) {
    uint32_t Value = encodeOrDie(nvfp4Config(CtaGroup::Two, M, 128));
    EXPECT_EQ(Value & (0x1Fu << 24), (M >> 4) << 24) << "M = " << M;
  }
}

// PTX ISA 9.7.16.2.1 Table 39: .kind::mxf4nvf4 cta_group::1 dense takes
// N = 8..256 in steps of 8; bits 17-22 hold N >> 3.
TEST(InstrDesc, EveryNOfCtaGroup1) {
  for (uint32_t N = 0; N <= 300; ++N) {
    BlockScaledMmaConfig Config = nvfp4Config(CtaGroup::One, 128, N);
    bool Legal = N >= 8 && N <= 256 && N % 8 == 0;
    Expected<BlockScaledInstrDesc> Desc = encodeBlockScaledInstrDesc(Config);
    ASSERT_EQ(Desc.ok(), Legal) << "N = " << N;
    if (!Legal) {
      EXPECT_NE(Desc.message().find("multiple of 8 in [8, 256]"),
                std::string::npos);
      continue;
    }
    EXPECT_EQ(Desc->Value,
              (1u << 7) | (1u << 10) | (N >> 3) << 17 | (1u << 27));
    EXPECT_EQ(decodeBlockScaledInstrDesc(Desc->Value, MmaKind::MXF4NVF4).NDim,
              N >> 3);
  }
}

// PTX ISA 9.7.16.2.1 Table 39: cta_group::2 takes N = 16..256 in steps of 16.
TEST(InstrDesc, EveryNOfCtaGroup2) {
  for (uint32_t N = 0; N <= 300; ++N) {
    bool Legal = N >= 16 && N <= 256 && N % 16 == 0;
    Expected<BlockScaledInstrDesc> Desc =
        encodeBlockScaledInstrDesc(nvfp4Config(CtaGroup::Two, 256, N));
    ASSERT_EQ(Desc.ok(), Legal) << "N = " << N;
    if (Legal) {
      EXPECT_EQ(Desc->Value,
                (1u << 7) | (1u << 10) | (N >> 3) << 17 | (2u << 27));
    }
  }
}

// PTX ISA 9.7.16.2.1 Table 39: block-scaled MMAs have M = 128 with
// cta_group::1 and M = 128 or 256 with cta_group::2 (no M = 64).
TEST(InstrDesc, RejectsIllegalM) {
  expectRejected(nvfp4Config(CtaGroup::One, 256, 128), "M = 256");
  expectRejected(nvfp4Config(CtaGroup::One, 64, 128), "expected 128");
  expectRejected(nvfp4Config(CtaGroup::Two, 64, 128), "expected 128 or 256");
  expectRejected(nvfp4Config(CtaGroup::Two, 512, 128), "expected 128 or 256");
  expectRejected(nvfp4Config(CtaGroup::One, 0, 128), "M = 0");
}

// PTX ISA 9.7.16.2.1 Table 39: mxf4nvf4 is K = 64 dense, K = 128 sparse.
TEST(InstrDesc, RejectsIllegalK) {
  BlockScaledMmaConfig Config = nvfp4Config(CtaGroup::One, 128, 128);
  Config.K = 32;
  expectRejected(Config, "K = 32");
  Config.K = 128; // Only the sparse K.
  expectRejected(Config, "K = 128");
  Config.K = 256;
  expectRejected(Config, "K = 256");
}

// PTX ISA 9.7.16.4.2 Table 44 bit 2 and Table 39's sparse rows: sparse
// mxf4nvf4 is K = 128; with cta_group::2 only M = 256 exists.
TEST(InstrDesc, Sparse) {
  BlockScaledMmaConfig Config = nvfp4Config(CtaGroup::One, 128, 64);
  Config.Sparse = true;
  Config.K = 128;
  EXPECT_EQ(encodeOrDie(Config), (1u << 2)        // sparse
                                     | (1u << 7)  // atype E2M1
                                     | (1u << 10) // btype E2M1
                                     | (64u >> 3) << 17 | (1u << 27));
  Config.K = 64;
  expectRejected(Config, "expected 128");
  Config = nvfp4Config(CtaGroup::Two, 128, 64);
  Config.Sparse = true;
  Config.K = 128;
  expectRejected(Config, "expected 256");
  Config.M = 256;
  EXPECT_EQ(encodeOrDie(Config),
            (1u << 2) | (1u << 7) | (1u << 10) | (64u >> 3) << 17 | (2u << 27));
}

// PTX ISA 9.7.16.4.2 Table 44 bit 31 ("Dense K=96 = 1") and Table 39's
// 256xNxK1 (K1 = 96) row for cta_group::2; 9.7.16.10.7.2.5: block16 with
// K = 96 selects scale factor ID 0 or 2.
TEST(InstrDesc, K96) {
  BlockScaledMmaConfig Config = nvfp4Config(CtaGroup::Two, 256, 128);
  Config.K = 96;
  Config.ScaleFactorAId = 2;
  Config.ScaleFactorBId = 2;
  EXPECT_EQ(encodeOrDie(Config), (2u << 4)        // scale factor B ID 2
                                     | (1u << 7)  // atype E2M1
                                     | (1u << 10) // btype E2M1
                                     | (128u >> 3) << 17 | (0u << 23) // UE4M3
                                     | (2u << 27)                     // M >> 7
                                     | (2u << 29)   // scale factor A ID 2
                                     | (1u << 31)); // K = 96
  Config.M = 128;
  expectRejected(Config, "expected 256");
  Config = nvfp4Config(CtaGroup::Two, 256, 128);
  Config.K = 96;
  Config.Sparse = true;
  expectRejected(Config, "K = 96");
}

// sm_103a's 1-CTA K = 96 MMA, against the CUTLASS PTX of
// examples/89_sm103_fp4_ultra_gemm (../shared/reference/cutlass-ptx/
// cutlass_89_sm103a_ultra_mma.ptx, MMA tile 128x256x768, cta_group::1). Its
// two idesc registers are built from 16-bit halves: the first MMA of a pair
// gets {0x0480 | B id << 4, 0x8840 | A id << 13} with both IDs 0 (the
// TMEM scale addresses r435 = base + 448 and r436 = base + 460 have no bit
// 30/31 set), i.e. 0x88400480; the second gets IDs 2 (r450/r451 =
// base + 0x80000000 + 452/468): 0xC84004A0. This kernel's 128 x 128 tile
// differs only in N >> 3 (bits 17-22).
TEST(InstrDesc, K96OneCtaMatchesCutlassSm103) {
  auto Cutlass0 = encodeNvfp4K96InstrDesc(CtaGroup::One, 128, 256, 0);
  ASSERT_TRUE(Cutlass0.ok()) << Cutlass0.message();
  EXPECT_EQ(Cutlass0->Value, 0x88400480u);
  auto Cutlass2 = encodeNvfp4K96InstrDesc(CtaGroup::One, 128, 256, 2);
  ASSERT_TRUE(Cutlass2.ok()) << Cutlass2.message();
  EXPECT_EQ(Cutlass2->Value, 0xC84004A0u);
  EXPECT_EQ(Cutlass2->ScaleFactorAId, 2u);
  EXPECT_EQ(Cutlass2->ScaleFactorBId, 2u);
  EXPECT_EQ(Cutlass2->KDim, 1u);
  // Ours (N = 128).
  auto Ours = encodeNvfp4K96InstrDesc(CtaGroup::One, 128, 128, 0);
  ASSERT_TRUE(Ours.ok()) << Ours.message();
  EXPECT_EQ(Ours->Value, 0x88200480u);
  EXPECT_EQ(Ours->Value, 0x08200480u | (1u << 31));
  // The decoder reads the fields back.
  BlockScaledInstrDesc Decoded =
      decodeBlockScaledInstrDesc(0xC84004A0u, MmaKind::MXF4NVF4);
  EXPECT_EQ(Decoded.KDim, 1u);
  EXPECT_EQ(Decoded.NDim, 256u >> 3);
  EXPECT_EQ(Decoded.MDim, 1u);
  // 4X with K = 96 takes scale factor IDs 0 and 2 only; K = 96 is dense
  // and M = 128 with one CTA.
  auto Odd = encodeNvfp4K96InstrDesc(CtaGroup::One, 128, 128, 1);
  ASSERT_FALSE(Odd.ok());
  EXPECT_NE(Odd.message().find("scale factor IDs"), std::string::npos);
  auto Wide = encodeNvfp4K96InstrDesc(CtaGroup::One, 256, 128, 0);
  ASSERT_FALSE(Wide.ok());
  BlockScaledMmaConfig Config = nvfp4Config(CtaGroup::One, 128, 128);
  Config.K = 96;
  Config.Sparse = true;
  expectRejected(Config, "K = 96");
}

// PTX ISA 9.7.16.10.7.1 Table 55: mxf4nvf4 takes UE4M3 only with
// .scale_vec::4X/.block16; UE8M0 with 2X or 4X. Table 44 bit 23: UE8M0 = 1.
TEST(InstrDesc, ScaleTypeAndVectorSize) {
  BlockScaledMmaConfig Config = nvfp4Config(CtaGroup::One, 128, 128);
  Config.ScaleType = ScaleFactorType::UE8M0;
  EXPECT_EQ(encodeOrDie(Config), 0x08200480u | (1u << 23));
  Config.VecSize = ScaleVecSize::X2; // MXFP4 through mxf4nvf4, .block32.
  Config.ScaleFactorAId = 2;
  Config.ScaleFactorBId = 2;
  EXPECT_EQ(encodeOrDie(Config),
            0x08200480u | (1u << 23) | (2u << 29) | (2u << 4));
  Config.ScaleType = ScaleFactorType::UE4M3;
  expectRejected(Config, "needs UE8M0");
  Config.VecSize = ScaleVecSize::X1;
  Config.ScaleType = ScaleFactorType::UE8M0;
  expectRejected(Config, "does not take .scale_vec::1X");
}

// PTX ISA 9.7.16.10.7.2.3: with scale_vec::4X/block16 (K = 64) the scale
// factor ID must be 0; 9.7.16.10.7.2.2: 2X selects half words 0 or 2.
TEST(InstrDesc, ScaleFactorIds) {
  for (uint32_t Id = 0; Id < 8; ++Id) {
    BlockScaledMmaConfig Config = nvfp4Config(CtaGroup::One, 128, 128);
    Config.ScaleFactorAId = Id;
    Expected<BlockScaledInstrDesc> Desc = encodeBlockScaledInstrDesc(Config);
    EXPECT_EQ(Desc.ok(), Id == 0) << "4X, A ID " << Id;
    Config = nvfp4Config(CtaGroup::One, 128, 128);
    Config.ScaleFactorBId = Id;
    EXPECT_EQ(encodeBlockScaledInstrDesc(Config).ok(), Id == 0)
        << "4X, B ID " << Id;
    Config.ScaleFactorBId = 0;
    Config.ScaleType = ScaleFactorType::UE8M0;
    Config.VecSize = ScaleVecSize::X2;
    Config.ScaleFactorAId = Id;
    Desc = encodeBlockScaledInstrDesc(Config);
    ASSERT_EQ(Desc.ok(), Id == 0 || Id == 2) << "2X, A ID " << Id;
    if (Desc.ok()) {
      EXPECT_EQ((Desc->Value >> 29) & 3u, Id);
    }
  }
}

// PTX ISA 9.7.16.4.2 Table 44: .kind::mxf4 is E2M1 with UE8M0 scales and
// scale_vec::2X; the layout is the same as mxf4nvf4's.
TEST(InstrDesc, Mxf4) {
  BlockScaledMmaConfig Config;
  Config.Kind = MmaKind::MXF4;
  Config.M = 128;
  Config.N = 256;
  Config.K = 64;
  Config.ScaleType = ScaleFactorType::UE8M0;
  Config.VecSize = ScaleVecSize::X2;
  Config.ScaleFactorBId = 2;
  EXPECT_EQ(encodeOrDie(Config), (2u << 4)        // scale factor B ID 2
                                     | (1u << 7)  // atype E2M1 = 1
                                     | (1u << 10) // btype E2M1 = 1
                                     | (256u >> 3) << 17 | (1u << 23) // UE8M0
                                     | (128u >> 7) << 27);
  Config.VecSize = ScaleVecSize::X4;
  expectRejected(Config, "does not take .scale_vec::4X");
  Config.VecSize = ScaleVecSize::X2;
  Config.AType = ElementType::E4M3;
  expectRejected(Config, "must be E2M1");
}

// PTX ISA 9.7.16.4.2 Table 43, .kind::mxf8f6f4: 3-bit btype at 10-12,
// E4M3 0, E5M2 1, E2M3 3, E3M2 4, E2M1 5; bit 31 reserved; K = 32;
// 9.7.16.10.7.2.1: scale_vec::1X selects any byte 0-3.
TEST(InstrDesc, Mxf8f6f4) {
  BlockScaledMmaConfig Config;
  Config.Kind = MmaKind::MXF8F6F4;
  Config.M = 128;
  Config.N = 64;
  Config.K = 32;
  Config.AType = ElementType::E4M3;
  Config.BType = ElementType::E5M2;
  Config.ScaleType = ScaleFactorType::UE8M0;
  Config.VecSize = ScaleVecSize::X1;
  Config.ScaleFactorAId = 3;
  Config.ScaleFactorBId = 1;
  Config.NegateA = true;
  Config.TransposeB = true;                // MN-major B, legal for 8-bit types.
  EXPECT_EQ(encodeOrDie(Config), (1u << 4) // scale factor B ID 1
                                     | (0u << 7)  // atype E4M3 = 0
                                     | (1u << 10) // btype E5M2 = 1
                                     | (1u << 13) // negate A
                                     | (1u << 16) // transpose B
                                     | (64u >> 3) << 17 | (1u << 23) // UE8M0
                                     | (1u << 27)                    // M >> 7
                                     | (3u << 29)); // scale factor A ID 3
  Config = {};
  Config.Kind = MmaKind::MXF8F6F4;
  Config.K = 32;
  Config.AType = ElementType::E3M2;
  Config.BType = ElementType::E2M1; // 5 = 0b101 reaches bit 12.
  Config.ScaleType = ScaleFactorType::UE8M0;
  Config.VecSize = ScaleVecSize::X1;
  EXPECT_EQ(encodeOrDie(Config), (4u << 7) | (5u << 10) | (128u >> 3) << 17 |
                                     (1u << 23) | (1u << 27));
  Config.AType = ElementType::E2M3;
  EXPECT_EQ((encodeOrDie(Config) >> 7) & 7u, 3u);
  Config.TransposeA = true; // E2M3 is a sub-byte type: K-major only.
  expectRejected(Config, "only 8-bit operands");
  Config.TransposeA = false;
  Config.ScaleType = ScaleFactorType::UE4M3;
  expectRejected(Config, "needs UE8M0");
  Config.ScaleType = ScaleFactorType::UE8M0;
  Config.K = 96;
  expectRejected(Config, "K = 96");
}

// PTX ISA 9.7.16.4.2 Table 44: bits 13/14 negate A/B; bits 15/16 transpose
// only "No Transpose = 0" for mxf4/mxf4nvf4.
TEST(InstrDesc, NegateAndTranspose) {
  BlockScaledMmaConfig Config = nvfp4Config(CtaGroup::One, 128, 128);
  Config.NegateA = true;
  EXPECT_EQ(encodeOrDie(Config), 0x08200480u | (1u << 13));
  Config.NegateA = false;
  Config.NegateB = true;
  EXPECT_EQ(encodeOrDie(Config), 0x08200480u | (1u << 14));
  Config.NegateB = false;
  Config.TransposeA = true;
  expectRejected(Config, "transposed");
  Config.TransposeA = false;
  Config.TransposeB = true;
  expectRejected(Config, "transposed");
}

// PTX ISA 9.7.16.4.2 Table 44: decoding splits every field and reports the
// reserved bits 0-1, 3, 6, 12, 24-26 (Table 43: 0-1, 3, 6, 24-26, 31).
TEST(InstrDesc, DecodeReservedBits) {
  BlockScaledInstrDesc All = decodeBlockScaledInstrDesc(~0u, MmaKind::MXF4NVF4);
  EXPECT_EQ(All.Reserved,
            0x3u | (1u << 3) | (1u << 6) | (1u << 12) | (0x7u << 24));
  EXPECT_EQ(All.BType, 3u);
  EXPECT_EQ(All.NDim, 63u);
  EXPECT_EQ(All.MDim, 3u);
  EXPECT_EQ(All.KDim, 1u);
  BlockScaledInstrDesc All8 =
      decodeBlockScaledInstrDesc(~0u, MmaKind::MXF8F6F4);
  EXPECT_EQ(All8.Reserved,
            0x3u | (1u << 3) | (1u << 6) | (0x7u << 24) | (1u << 31));
  EXPECT_EQ(All8.BType, 7u);
  EXPECT_EQ(All8.KDim, 0u);
}

// Round trip over random legal configurations: decode(encode(c)) returns the
// fields of c and no reserved bit is ever set.
TEST(InstrDesc, RoundTrip) {
  std::mt19937 Rng(7);
  int Encoded = 0;
  for (int I = 0; I < 20000; ++I) {
    BlockScaledMmaConfig Config;
    Config.Kind = static_cast<MmaKind>(Rng() % 3);
    Config.Group = Rng() % 2 ? CtaGroup::One : CtaGroup::Two;
    Config.M = 128u << (Rng() % 2);
    Config.N = 8 * (1 + Rng() % 32);
    Config.Sparse = Rng() % 4 == 0;
    uint32_t DenseK = Config.Kind == MmaKind::MXF8F6F4 ? 32 : 64;
    Config.K = Config.Sparse ? 2 * DenseK : (Rng() % 8 == 0 ? 96 : DenseK);
    // Mostly legal types and vector sizes for the kind, sometimes not.
    bool Fp4 = Config.Kind != MmaKind::MXF8F6F4;
    Config.AType = Fp4 && Rng() % 8 ? ElementType::E2M1
                                    : static_cast<ElementType>(Rng() % 5);
    Config.BType = Fp4 && Rng() % 8 ? ElementType::E2M1
                                    : static_cast<ElementType>(Rng() % 5);
    Config.ScaleType = static_cast<ScaleFactorType>(Rng() % 2);
    Config.VecSize = std::array<ScaleVecSize, 3>{
        ScaleVecSize::X1, ScaleVecSize::X2, ScaleVecSize::X4}[Rng() % 3];
    if (Rng() % 4) {
      Config.VecSize = Config.Kind == MmaKind::MXF8F6F4 ? ScaleVecSize::X1
                       : Config.Kind == MmaKind::MXF4   ? ScaleVecSize::X2
                                                        : ScaleVecSize::X4;
      if (Config.Kind != MmaKind::MXF4NVF4)
        Config.ScaleType = ScaleFactorType::UE8M0;
    }
    Config.NegateA = Rng() % 2;
    Config.NegateB = Rng() % 2;
    Config.TransposeA = Rng() % 8 == 0;
    Config.TransposeB = Rng() % 8 == 0;
    Config.ScaleFactorAId = Rng() % 2 ? 0 : Rng() % 4;
    Config.ScaleFactorBId = Rng() % 2 ? 0 : Rng() % 4;
    Expected<BlockScaledInstrDesc> Desc = encodeBlockScaledInstrDesc(Config);
    if (!Desc.ok())
      continue;
    ++Encoded;
    BlockScaledInstrDesc Back =
        decodeBlockScaledInstrDesc(Desc->Value, Config.Kind);
    EXPECT_EQ(Back.Reserved, 0u);
    EXPECT_EQ(Back.Sparse, Config.Sparse ? 1u : 0u);
    EXPECT_EQ(Back.NDim << 3, Config.N);
    EXPECT_EQ(Back.MDim << 7, Config.M);
    EXPECT_EQ(Back.ScaleType, static_cast<uint32_t>(Config.ScaleType));
    EXPECT_EQ(Back.ScaleFactorAId, Config.ScaleFactorAId);
    EXPECT_EQ(Back.ScaleFactorBId, Config.ScaleFactorBId);
    EXPECT_EQ(Back.NegateA, Config.NegateA ? 1u : 0u);
    EXPECT_EQ(Back.NegateB, Config.NegateB ? 1u : 0u);
    EXPECT_EQ(Back.TransposeA, Config.TransposeA ? 1u : 0u);
    EXPECT_EQ(Back.TransposeB, Config.TransposeB ? 1u : 0u);
    EXPECT_EQ(Back.KDim, Config.K == 96 ? 1u : 0u);
    EXPECT_EQ(Back.AType, Desc->AType);
    EXPECT_EQ(Back.BType, Desc->BType);
    EXPECT_EQ(Back.Value, Desc->Value);
  }
  EXPECT_GT(Encoded, 2000); // The sweep must reach legal configurations.
}

// A second, independent formulation: the Table 44 layout as a C++ bit-field
// struct (GCC/Clang allocate bit-fields from the least significant bit on
// little-endian targets; the test checks that before relying on it).
TEST(InstrDesc, MatchesBitFieldFormulation) {
  union Table44 {
    uint32_t Word;
    struct {
      uint32_t Reserved0 : 2, Sparse : 1, Reserved3 : 1, SfbId : 2,
          Reserved6 : 1, AType : 3, BType : 2, Reserved12 : 1, NegA : 1,
          NegB : 1, TrA : 1, TrB : 1, N : 6, ScaleType : 1, Reserved24 : 3,
          M : 2, SfaId : 2, K : 1;
    } Bits;
  };
  Table44 Probe{};
  Probe.Bits.Reserved0 = 1;
  if (Probe.Word != 1u)
    GTEST_SKIP() << "bit-fields are not allocated LSB first here";

  for (uint32_t N = 16; N <= 256; N += 16)
    for (uint32_t M : {128u, 256u})
      for (bool Ue8m0 : {false, true}) {
        BlockScaledMmaConfig Config = nvfp4Config(CtaGroup::Two, M, N);
        Config.ScaleType =
            Ue8m0 ? ScaleFactorType::UE8M0 : ScaleFactorType::UE4M3;
        Config.NegateB = N % 32 == 0;
        Table44 Ref{};
        Ref.Bits.AType = 1;
        Ref.Bits.BType = 1;
        Ref.Bits.N = N >> 3;
        Ref.Bits.M = M >> 7;
        Ref.Bits.ScaleType = Ue8m0;
        Ref.Bits.NegB = Config.NegateB;
        EXPECT_EQ(encodeOrDie(Config), Ref.Word) << "M " << M << " N " << N;
      }
}

// PTX ISA 9.7.16.10.7.1 Table 54: scales per row per MMA.
TEST(InstrDesc, ScaleFactorsPerRow) {
  auto Count = [](MmaKind Kind, ScaleVecSize Vec, uint32_t K) {
    Expected<uint32_t> C = getScaleFactorsPerRow(Kind, Vec, K);
    return C.ok() ? static_cast<int>(*C) : -1;
  };
  EXPECT_EQ(Count(MmaKind::MXF4NVF4, ScaleVecSize::X4, 64), 4);
  EXPECT_EQ(Count(MmaKind::MXF4NVF4, ScaleVecSize::X4, 128), 4);
  EXPECT_EQ(Count(MmaKind::MXF4NVF4, ScaleVecSize::X2, 64), 2);
  EXPECT_EQ(Count(MmaKind::MXF4NVF4, ScaleVecSize::X4, 96), 6);
  EXPECT_EQ(Count(MmaKind::MXF4, ScaleVecSize::X2, 96), 3);
  EXPECT_EQ(Count(MmaKind::MXF8F6F4, ScaleVecSize::X1, 32), 1);
  EXPECT_EQ(Count(MmaKind::MXF8F6F4, ScaleVecSize::X4, 32), -1);
  EXPECT_EQ(Count(MmaKind::MXF4, ScaleVecSize::X4, 64), -1);
}

// PTX ISA 9.7.16.2.1 Table 39 through the standalone shape check: the
// message names the rule and the table.
TEST(InstrDesc, ShapeMessages) {
  Status S = verifyBlockScaledMmaShape(MmaKind::MXF4NVF4, CtaGroup::One, 128,
                                       12, 64, false);
  ASSERT_FALSE(S.ok());
  EXPECT_NE(S.message().find("N = 12"), std::string::npos);
  EXPECT_NE(S.message().find("Table 39"), std::string::npos);
  EXPECT_TRUE(verifyBlockScaledMmaShape(MmaKind::MXF8F6F4, CtaGroup::Two, 256,
                                        16, 64, true)
                  .ok());
  EXPECT_FALSE(verifyBlockScaledMmaShape(MmaKind::MXF8F6F4, CtaGroup::Two, 128,
                                         16, 64, true)
                   .ok());
}

// The MX GEMM's descriptors, one per MMA of a 128-byte K step (docs/
// Blackwell.md section 10). Fields from PTX ISA 9.7.16.4.2 Table 43
// (.kind::mxf8f6f4: atype/btype E4M3 0, E5M2 1) and Table 44 (.kind::mxf4:
// E2M1 1), bit 23 UE8M0 = 1; the scale factor IDs walk the bytes (1X,
// 9.7.16.10.7.2.1 "SFA_ID specifies the byte offset in the Tensor Memory
// word") or half words (2X, 9.7.16.10.7.2.2 "the half word offset") of the
// scale words. CUTLASS writes the same codes (include/cute/arch/
// mma_sm100_desc.hpp: MXF8F6F4Format E4M3 = 0, E5M2 = 1; MXF4Format E2M1
// = 1; ScaleFormat UE8M0 = 1) and takes the IDs from bits 30-31 of the
// scale TMEM address (make_runtime_instr_desc_block_scaled), which the
// kernel sets too. The fields MX shares with NVFP4 (N, M, K-major, IDs at
// 4-5 and 29-30) are the ones CUTLASS's NVFP4 kernel sets in 0x08200480
// (../shared/reference/cutlass-ptx/README.md; the MMA at
// cutlass_72a_1sm.sm_100a.ptx line 1675).
TEST(InstrDesc, MXGemmKSteps) {
  constexpr uint32_t Base = (128u >> 3) << 17 // N = 128
                            | (1u << 23)      // UE8M0
                            | (128u >> 7) << 27; // M = 128
  EXPECT_EQ(Base, 0x08A00000u);
  for (uint32_t J = 0; J < kMmasPerKStep; ++J) {
    // MXFP8: one 32-element block per MMA, the four MMAs take bytes 0-3.
    Expected<KStepMmaScales> S8 = getKStepMmaScales(ScaleVecSize::X1, J);
    ASSERT_TRUE(S8.ok()) << S8.message();
    EXPECT_EQ(S8->ScaleAtom, 0u);
    EXPECT_EQ(S8->ScaleFactorId, J);
    Expected<BlockScaledInstrDesc> E4 =
        encodeMXInstrDesc(MmaKind::MXF8F6F4, ElementType::E4M3,
                          ElementType::E4M3, CtaGroup::One, 128, 128, J);
    ASSERT_TRUE(E4.ok()) << E4.message();
    EXPECT_EQ(E4->Value, Base | J << 29 | J << 4);
    Expected<BlockScaledInstrDesc> E5 =
        encodeMXInstrDesc(MmaKind::MXF8F6F4, ElementType::E5M2,
                          ElementType::E5M2, CtaGroup::One, 128, 128, J);
    ASSERT_TRUE(E5.ok());
    EXPECT_EQ(E5->Value, Base | 1u << 7 | 1u << 10 | J << 29 | J << 4);
    Expected<BlockScaledInstrDesc> Mixed =
        encodeMXInstrDesc(MmaKind::MXF8F6F4, ElementType::E4M3,
                          ElementType::E5M2, CtaGroup::One, 128, 128, J);
    ASSERT_TRUE(Mixed.ok());
    EXPECT_EQ(Mixed->Value, Base | 1u << 10 | J << 29 | J << 4);
    // MXFP4: two blocks per MMA, atom J / 2, half word 2 (J % 2).
    Expected<KStepMmaScales> S4 = getKStepMmaScales(ScaleVecSize::X2, J);
    ASSERT_TRUE(S4.ok());
    EXPECT_EQ(S4->ScaleAtom, J / 2);
    EXPECT_EQ(S4->ScaleFactorId, 2 * (J % 2));
    Expected<BlockScaledInstrDesc> F4 =
        encodeMXInstrDesc(MmaKind::MXF4, ElementType::E2M1, ElementType::E2M1,
                          CtaGroup::One, 128, 128, S4->ScaleFactorId);
    ASSERT_TRUE(F4.ok());
    EXPECT_EQ(F4->Value, Base | 1u << 7 | 1u << 10 |
                             S4->ScaleFactorId << 29 | S4->ScaleFactorId << 4);
    // NVFP4 (4X) keeps one atom per MMA and ID 0.
    Expected<KStepMmaScales> S16 = getKStepMmaScales(ScaleVecSize::X4, J);
    ASSERT_TRUE(S16.ok());
    EXPECT_EQ(S16->ScaleAtom, J);
    EXPECT_EQ(S16->ScaleFactorId, 0u);
  }
  EXPECT_EQ(encodeMXInstrDesc(MmaKind::MXF8F6F4, ElementType::E4M3,
                              ElementType::E4M3, CtaGroup::One, 128, 128, 0)
                ->Value,
            0x08A00000u);
  EXPECT_EQ(encodeMXInstrDesc(MmaKind::MXF4, ElementType::E2M1,
                              ElementType::E2M1, CtaGroup::One, 128, 128, 2)
                ->Value,
            0x48A004A0u);
  EXPECT_EQ(getKStepScaleAtoms(ScaleVecSize::X1), 1u);
  EXPECT_EQ(getKStepScaleAtoms(ScaleVecSize::X2), 2u);
  EXPECT_EQ(getKStepScaleAtoms(ScaleVecSize::X4), 4u);
  EXPECT_FALSE(getKStepMmaScales(ScaleVecSize::X1, 4).ok());
  // E2M1 under mxf8f6f4 is the unpacked container, not MXFP4's packed
  // codes; 2X takes half words only.
  EXPECT_FALSE(encodeMXInstrDesc(MmaKind::MXF8F6F4, ElementType::E2M1,
                                 ElementType::E4M3, CtaGroup::One, 128, 128, 0)
                   .ok());
  EXPECT_FALSE(encodeMXInstrDesc(MmaKind::MXF4, ElementType::E2M1,
                                 ElementType::E2M1, CtaGroup::One, 128, 128, 1)
                   .ok());
  EXPECT_FALSE(encodeMXInstrDesc(MmaKind::MXF4NVF4, ElementType::E2M1,
                                 ElementType::E2M1, CtaGroup::One, 128, 128, 0)
                   .ok());
}

// Independent of getKStepMmaScales: MMA j of a K step covers elements
// [j K, (j + 1) K) of each row (K = 64 E2M1 or 32 FP8 codes = 32 bytes);
// its first scale block is j K / block; the 128x4 atom order puts block b
// in atom b / 4, and tcgen05.cp.32x128b.warpx4 puts byte b % 4 of a row's
// atom word in byte b % 4 of its TMEM word (getScaleFactorTmemLocation),
// so the MMA's scale factor ID is the byte the block lands in, and its
// remaining scales (2X: 2, 4X: 4) are the following bytes of that word.
TEST(InstrDesc, KStepScalesFollowTheAtomBytes) {
  struct Form {
    ScaleVecSize Vec;
    uint32_t MmaK, Block;
  };
  for (Form F : {Form{ScaleVecSize::X1, 32, 32}, Form{ScaleVecSize::X2, 64, 32},
                 Form{ScaleVecSize::X4, 64, 16}})
    for (uint32_t J = 0; J < 4; ++J) {
      Expected<KStepMmaScales> S = getKStepMmaScales(F.Vec, J);
      ASSERT_TRUE(S.ok());
      uint32_t PerMma = F.MmaK / F.Block;
      for (uint32_t I = 0; I < PerMma; ++I) {
        uint32_t Block = J * F.MmaK / F.Block + I;
        EXPECT_EQ(S->ScaleAtom, Block / 4);
        Expected<ScaleFactorTmemLocation> Loc =
            getScaleFactorTmemLocation(/*Row=*/37, I, F.Vec, S->ScaleFactorId);
        ASSERT_TRUE(Loc.ok()) << Loc.message();
        EXPECT_EQ(Loc->Byte, Block % 4);
        EXPECT_EQ(Loc->Lane, 37u % 32);
        EXPECT_EQ(Loc->Column, 37u / 32);
      }
    }
}

//===----------------------------------------------------------------------===//
// .kind::f16 (the BF16 GEMM): PTX ISA 9.7.16.4.2, Table 42 ("Instruction
// descriptor format for .kind::tf32, .kind::f16, .kind::f8f6f4 and
// .kind::i8"), column .kind::f16:
//
//   bits 0-1 sparsity selector | 2 sparsity (dense 0) | 3 saturate (0) |
//   4-5 dtype (F16 0, F32 1) | 6 reserved | 7-9 atype (F16 0, BF16 1) |
//   10-12 btype | 13 negate A | 14 negate B | 15 transpose A |
//   16 transpose B | 17-22 N >> 3 | 23 reserved | 24-28 M >> 4 |
//   29 reserved | 30-31 maximum B-reuse shift (.ws only; 0)
//===----------------------------------------------------------------------===//

// The descriptor Tcgen05Matmul.cpp's BF16 GEMM issues: one CTA, M = N =
// 128, BF16 x BF16 -> F32, both K-major. tcgen05-bf16-gemm.mlir checks the
// PTX constant 136316048.
TEST(F16InstrDesc, BF16M128N128) {
  uint32_t Want = (0u << 2)           // dense
                  | (0u << 3)         // no saturate
                  | (1u << 4)         // dtype F32 = 1
                  | (1u << 7)         // atype BF16 = 1
                  | (1u << 10)        // btype BF16 = 1
                  | (0u << 13)        // no negate A
                  | (0u << 14)        // no negate B
                  | (0u << 15)        // A not transposed (K-major)
                  | (0u << 16)        // B not transposed (K-major)
                  | (128u >> 3) << 17 // N >> 3 = 16
                  | (128u >> 4) << 24 // M >> 4 = 8
                  | (0u << 30);       // no .ws shift
  EXPECT_EQ(Want, 0x08200490u);
  EXPECT_EQ(Want, 136316048u);
  Expected<F16InstrDesc> Desc = encodeBF16InstrDesc(CtaGroup::One, 128, 128);
  ASSERT_TRUE(Desc.ok()) << Desc.message();
  EXPECT_EQ(Desc->Value, Want);
  EXPECT_EQ(Desc->DType, 1u);
  EXPECT_EQ(Desc->AType, 1u);
  EXPECT_EQ(Desc->BType, 1u);
  EXPECT_EQ(Desc->NDim, 16u);
  EXPECT_EQ(Desc->MDim, 8u);
  // M = 128 sets the same bit (27) as the block-scaled tables' M >> 7 in
  // bits 27-28, and BF16 and E2M1 are both type code 1: the two descriptors
  // differ only in dtype (bit 4; bits 4-5 are scale factor B ID there).
  Expected<BlockScaledInstrDesc> Nvfp4 =
      encodeNvfp4InstrDesc(CtaGroup::One, 128, 128);
  ASSERT_TRUE(Nvfp4.ok());
  EXPECT_EQ(Desc->Value ^ Nvfp4->Value, (1u << 4));
}

// Every field on its own: F16 x F16 -> F16, M = 64, transposes, negates,
// the pair's M = 256.
TEST(F16InstrDesc, Fields) {
  F16MmaConfig Config;
  Config.AType = Config.BType = F16OperandType::F16;
  Config.DType = F16AccumulatorType::F16;
  Config.M = 64;
  Config.N = 8;
  Expected<F16InstrDesc> Half = encodeF16InstrDesc(Config);
  ASSERT_TRUE(Half.ok()) << Half.message();
  EXPECT_EQ(Half->Value, (8u >> 3) << 17 | (64u >> 4) << 24);
  Config.TransposeA = true;
  Config.NegateB = true;
  Expected<F16InstrDesc> Flags = encodeF16InstrDesc(Config);
  ASSERT_TRUE(Flags.ok());
  EXPECT_EQ(Flags->Value ^ Half->Value, (1u << 15) | (1u << 14));
  Expected<F16InstrDesc> Pair = encodeBF16InstrDesc(CtaGroup::Two, 256, 256);
  ASSERT_TRUE(Pair.ok()) << Pair.message();
  EXPECT_EQ(Pair->Value,
            (1u << 4) | (1u << 7) | (1u << 10) | (32u << 17) | (16u << 24));
}

// Table 39's .kind::f16 rows: M 64/128 (cta_group::1), 128/256
// (cta_group::2); N in steps of 8 (16 for the pair) up to 256; BF16 only
// with an F32 accumulator.
TEST(F16InstrDesc, RejectsWhatTable39Lacks) {
  auto rejected = [](const F16MmaConfig &Config, const char *Fragment) {
    Expected<F16InstrDesc> Desc = encodeF16InstrDesc(Config);
    ASSERT_FALSE(Desc.ok()) << "accepted 0x" << std::hex << Desc->Value;
    EXPECT_NE(Desc.message().find(Fragment), std::string::npos)
        << Desc.message();
  };
  F16MmaConfig Config;
  Config.M = 256;
  rejected(Config, "M = 256");
  Config.M = 128;
  Config.N = 260;
  rejected(Config, "N = 260");
  Config.N = 12;
  rejected(Config, "N = 12");
  Config.Group = CtaGroup::Two;
  Config.N = 24;
  rejected(Config, "N = 24");
  Config.M = 64;
  Config.N = 32;
  rejected(Config, "M = 64");
  Config = F16MmaConfig();
  Config.DType = F16AccumulatorType::F16;
  rejected(Config, "F32 accumulator");
  Config = F16MmaConfig();
  Config.AType = F16OperandType::F16;
  rejected(Config, "same type");
  for (uint32_t N = 8; N <= 256; N += 8)
    EXPECT_TRUE(encodeBF16InstrDesc(CtaGroup::One, 128, N).ok()) << N;
}
