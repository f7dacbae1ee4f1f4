//===- SmemDescTest.cpp - tcgen05 and wgmma shared-memory descriptors -----===//
//
// Part of the nvfp4 project.
//
//===----------------------------------------------------------------------===//
//
// PTX ISA 9.7.16.4.1 Table 40 (tcgen05 shared memory descriptor):
//   0-13 encode(start) | 16-29 encode(LBO or absolute address) |
//   32-45 encode(SBO) | 46-48 fixed 0b001 | 49-51 base offset |
//   52 leading-dimension mode | 53-60 fixed 0 | 61-63 swizzle
//   (0 none, 1 128B with 32B atoms, 2 128B, 4 64B, 6 32B)
// PTX ISA 9.7.15.5.1.2.2 (wgmma matrix descriptor): same 0-13, 16-29,
//   32-45, 49-51; 62-63 swizzle (0 none, 1 128B, 2 64B, 3 32B).
// encode(x) = (x & 0x3FFFF) >> 4.
//
//===----------------------------------------------------------------------===//

#include "nvfp4/Target/Tcgen05Encoding.h"

#include "gtest/gtest.h"

#include <random>

using namespace nvfp4::target;

namespace {

SmemDescriptorConfig
config(uint32_t Start, uint32_t Lbo, uint32_t Sbo, SmemSwizzle Swizzle,
       uint32_t Base = 0,
       LeadingDimMode Mode = LeadingDimMode::RelativeOffset) {
  SmemDescriptorConfig Config;
  Config.StartAddress = Start;
  Config.LeadingDimByteOffset = Lbo;
  Config.StrideDimByteOffset = Sbo;
  Config.Swizzle = Swizzle;
  Config.BaseOffset = Base;
  Config.LeadingMode = Mode;
  return Config;
}

uint64_t tcgen05OrDie(const SmemDescriptorConfig &Config) {
  Expected<SmemDescriptor> Desc = encodeTcgen05SmemDescriptor(Config);
  EXPECT_TRUE(Desc.ok()) << Desc.message();
  return Desc.ok() ? Desc->Value : 0xDEADBEEFull;
}

uint64_t wgmmaOrDie(const SmemDescriptorConfig &Config) {
  Expected<SmemDescriptor> Desc = encodeWgmmaSmemDescriptor(Config);
  EXPECT_TRUE(Desc.ok()) << Desc.message();
  return Desc.ok() ? Desc->Value : 0xDEADBEEFull;
}

void expectTcgen05Rejected(const SmemDescriptorConfig &Config,
                           const char *Fragment) {
  Expected<SmemDescriptor> Desc = encodeTcgen05SmemDescriptor(Config);
  ASSERT_FALSE(Desc.ok()) << "accepted, value 0x" << std::hex << Desc->Value;
  EXPECT_NE(Desc.message().find(Fragment), std::string::npos)
      << "message: " << Desc.message();
}

} // namespace

// PTX ISA 9.7.16.4.1 Table 40: a K-major operand with 128-byte swizzling at
// shared address 0x1000, LBO 16 (unused by swizzled K-major layouts), SBO
// 1024 (eight 128-byte rows).
TEST(SmemDesc, Tcgen05KMajorSwizzle128) {
  uint64_t Want = uint64_t(0x1000 >> 4)       // bits 0-13 start
                  | uint64_t(16 >> 4) << 16   // bits 16-29 LBO
                  | uint64_t(1024 >> 4) << 32 // bits 32-45 SBO
                  | uint64_t(1) << 46         // bits 46-48 = 0b001
                  | uint64_t(0) << 49         // base offset 0
                  | uint64_t(0) << 52         // relative LBO
                  | uint64_t(2) << 61;        // 128-byte swizzle
  EXPECT_EQ(Want, 0x4000404000010100ull);
  EXPECT_EQ(tcgen05OrDie(config(0x1000, 16, 1024, SmemSwizzle::Bytes128)),
            Want);
}

// Known answer: MLIR 22.1.8's nvvm.tcgen05.mma_smem_desc, translated with
// `mlir-translate --mlir-to-llvmir` from constant operands (startAddr 1024,
// leadingDimOffset 16, strideDimOffset 1024, baseOffset 0, leadingDimMode 0,
// swizzleMode 2) folds to i64 4611760785219126272 = 0x4000440000100400.
// That op takes the *encoded* 14-bit fields, so the byte values are 16x.
TEST(SmemDesc, Tcgen05KnownAnswerFromMlirNvvmOp) {
  EXPECT_EQ(tcgen05OrDie(
                config(1024 * 16, 16 * 16, 1024 * 16, SmemSwizzle::Bytes128)),
            0x4000440000100400ull);
  EXPECT_EQ(0x4000440000100400ull, 4611760785219126272ull);
}

// Known answer: the same MLIR op with startAddr 64, leadingDimOffset 1,
// strideDimOffset 8, baseOffset 3, leadingDimMode 1, swizzleMode 6 folds to
// i64 -4605423165835771840 = 0xC016400800010040. Decoding recovers each
// field; our encoder refuses that combination (absolute mode needs 128B
// swizzling and base offset 0, PTX ISA 9.7.16.3.1.2.1).
TEST(SmemDesc, Tcgen05DecodeKnownAnswerFromMlirNvvmOp) {
  SmemDescriptor Desc = decodeTcgen05SmemDescriptor(0xC016400800010040ull);
  EXPECT_EQ(Desc.StartAddress, 64u);
  EXPECT_EQ(Desc.LeadingDim, 1u);
  EXPECT_EQ(Desc.StrideDim, 8u);
  EXPECT_EQ(Desc.FixedConstant, 1u);
  EXPECT_EQ(Desc.BaseOffset, 3u);
  EXPECT_EQ(Desc.LeadingDimMode, 1u);
  EXPECT_EQ(Desc.SwizzleMode, 6u);
  EXPECT_EQ(Desc.Reserved, 0u);
  expectTcgen05Rejected(config(64 * 16, 16, 8 * 16, SmemSwizzle::Bytes32, 3,
                               LeadingDimMode::AbsoluteAddress),
                        "requires 128-byte swizzling");
}

// PTX ISA 9.7.16.4.1 Table 40, bits 61-63: each swizzle mode's code.
TEST(SmemDesc, Tcgen05SwizzleCodes) {
  struct Case {
    SmemSwizzle Swizzle;
    uint64_t Code;
  } Cases[] = {{SmemSwizzle::None, 0},
               {SmemSwizzle::Bytes128Atom32, 1},
               {SmemSwizzle::Bytes128, 2},
               {SmemSwizzle::Bytes64, 4},
               {SmemSwizzle::Bytes32, 6}};
  for (const Case &C : Cases) {
    EXPECT_EQ(getTcgen05SwizzleCode(C.Swizzle), C.Code);
    uint64_t Value = tcgen05OrDie(config(0, 0, 0, C.Swizzle));
    EXPECT_EQ(Value, uint64_t(1) << 46 | C.Code << 61);
  }
}

// PTX ISA 9.7.16.4.1: start address, LBO and SBO must be 16-byte aligned and
// fit the 18 bits matrix-descriptor-encode keeps; the base offset is 3 bits.
TEST(SmemDesc, Tcgen05RejectsBadFields) {
  expectTcgen05Rejected(config(8, 0, 0, SmemSwizzle::None),
                        "start address 8 is not 16-byte aligned");
  expectTcgen05Rejected(config(0, 24, 0, SmemSwizzle::None),
                        "leading dimension byte offset 24");
  expectTcgen05Rejected(config(0, 0, 0x40000, SmemSwizzle::None),
                        "does not fit");
  expectTcgen05Rejected(config(0x40000, 0, 0, SmemSwizzle::None),
                        "does not fit");
  expectTcgen05Rejected(config(0, 0, 1024, SmemSwizzle::Bytes128, 8),
                        "does not fit 3 bits");
  expectTcgen05Rejected(config(0, 0, 1024, SmemSwizzle::None, 1),
                        "swizzled layouts only");
  // The largest encodable values pass and fill every field bit.
  uint64_t Max =
      tcgen05OrDie(config(0x3FFF0, 0x3FFF0, 0x3FFF0, SmemSwizzle::Bytes128, 7));
  EXPECT_EQ(Max, 0x3FFFull | 0x3FFFull << 16 | 0x3FFFull << 32 |
                     uint64_t(1) << 46 | uint64_t(7) << 49 | uint64_t(2) << 61);
}

// PTX ISA 9.7.16.3.1.2 (absolute address mode for 48-byte K) and
// 9.7.16.3.1.2.1 (restrictions): bit 52 = 1, bits 16-29 = encode(address of
// the second chunk); only 128B swizzling and base offset 0.
TEST(SmemDesc, Tcgen05AbsoluteLeadingDimension) {
  uint64_t Want = uint64_t(0x2000 >> 4)         // start
                  | uint64_t(0x2080 >> 4) << 16 // second chunk address
                  | uint64_t(1024 >> 4) << 32   // SBO
                  | uint64_t(1) << 46           // 0b001
                  | uint64_t(1) << 52           // absolute mode
                  | uint64_t(2) << 61;          // 128B swizzle
  EXPECT_EQ(tcgen05OrDie(config(0x2000, 0x2080, 1024, SmemSwizzle::Bytes128, 0,
                                LeadingDimMode::AbsoluteAddress)),
            Want);
  expectTcgen05Rejected(config(0x2000, 0x2080, 1024, SmemSwizzle::Bytes64, 0,
                               LeadingDimMode::AbsoluteAddress),
                        "requires 128-byte swizzling");
  expectTcgen05Rejected(config(0x2000, 0x2080, 1024,
                               SmemSwizzle::Bytes128Atom32, 0,
                               LeadingDimMode::AbsoluteAddress),
                        "requires 128-byte swizzling");
  expectTcgen05Rejected(config(0x2000, 0x2080, 1024, SmemSwizzle::Bytes128, 2,
                               LeadingDimMode::AbsoluteAddress),
                        "base offset 0");
}

// PTX ISA 9.7.16.4.1 Table 41: the base offset is 0 when the swizzle
// pattern starts on a 1024/512/256-byte boundary, else
// (pattern start address >> 7) & 7.
TEST(SmemDesc, MatrixBaseOffset) {
  auto Base = [](uint32_t Address, SmemSwizzle Swizzle) {
    Expected<uint32_t> B = computeMatrixBaseOffset(Address, Swizzle);
    return B.ok() ? static_cast<int>(*B) : -1;
  };
  EXPECT_EQ(Base(1024, SmemSwizzle::Bytes128), 0);
  EXPECT_EQ(Base(1024 + 384, SmemSwizzle::Bytes128), 3);
  EXPECT_EQ(Base(1024 + 896, SmemSwizzle::Bytes128), 7);
  // 512 is a 64B-swizzle boundary although (512 >> 7) & 7 = 4.
  EXPECT_EQ(Base(512, SmemSwizzle::Bytes64), 0);
  EXPECT_EQ(Base(512 + 128, SmemSwizzle::Bytes64), 5);
  EXPECT_EQ(Base(256, SmemSwizzle::Bytes32), 0);
  EXPECT_EQ(Base(384, SmemSwizzle::Bytes32), 3);
  EXPECT_EQ(Base(128, SmemSwizzle::None), -1);
  EXPECT_EQ(Base(128, SmemSwizzle::Bytes128Atom32), -1); // Not in Table 41.
  Expected<uint32_t> Repeat = getSwizzleRepeatBytes(SmemSwizzle::Bytes64);
  ASSERT_TRUE(Repeat.ok());
  EXPECT_EQ(*Repeat, 512u);
}

// Round trip over random legal descriptors: every field survives, bits
// 46-48 are 0b001 and the reserved bits 14-15, 30-31, 53-60 stay clear.
TEST(SmemDesc, Tcgen05RoundTrip) {
  std::mt19937 Rng(11);
  const SmemSwizzle Swizzles[] = {SmemSwizzle::None, SmemSwizzle::Bytes32,
                                  SmemSwizzle::Bytes64, SmemSwizzle::Bytes128,
                                  SmemSwizzle::Bytes128Atom32};
  for (int I = 0; I < 20000; ++I) {
    SmemSwizzle Swizzle = Swizzles[Rng() % 5];
    SmemDescriptorConfig Config = config(
        (Rng() & 0x3FFFu) << 4, (Rng() & 0x3FFFu) << 4, (Rng() & 0x3FFFu) << 4,
        Swizzle, Swizzle == SmemSwizzle::None ? 0 : Rng() % 8);
    SmemDescriptor Desc = decodeTcgen05SmemDescriptor(tcgen05OrDie(Config));
    EXPECT_EQ(Desc.StartAddress << 4, Config.StartAddress);
    EXPECT_EQ(Desc.LeadingDim << 4, Config.LeadingDimByteOffset);
    EXPECT_EQ(Desc.StrideDim << 4, Config.StrideDimByteOffset);
    EXPECT_EQ(Desc.BaseOffset, Config.BaseOffset);
    EXPECT_EQ(Desc.FixedConstant, 1u);
    EXPECT_EQ(Desc.LeadingDimMode, 0u);
    EXPECT_EQ(Desc.SwizzleMode, getTcgen05SwizzleCode(Swizzle));
    EXPECT_EQ(Desc.Reserved, 0u);
  }
}

// Known answer: MLIR 22.1.8's -convert-nvgpu-to-nvvm lowering of
// nvgpu.warpgroup.generate.descriptor for memref<128x64xf16, 3> with a
// swizzle_128b tensor map folds its constant part to
// 4611686293372403712 = 0x4000004004000000 (LBO field 1024, SBO field 64,
// swizzle 1 at bit 62) and ORs in encode(base address).
TEST(SmemDesc, WgmmaKnownAnswerFromMlirNvgpuLowering) {
  uint64_t Want = uint64_t(0)                  // start address 0
                  | uint64_t(16384 >> 4) << 16 // LBO field 1024
                  | uint64_t(1024 >> 4) << 32  // SBO field 64
                  | uint64_t(1) << 62;         // 128B swizzle = 1
  EXPECT_EQ(Want, 4611686293372403712ull);
  EXPECT_EQ(wgmmaOrDie(config(0, 16384, 1024, SmemSwizzle::Bytes128)), Want);
}

// PTX ISA 9.7.15.5.1.2.2: wgmma swizzle codes in bits 62-63 (0 none, 1 128B,
// 2 64B, 3 32B), no fixed 0b001 at bit 46, no absolute mode, no 32-byte-atom
// 128B swizzle.
TEST(SmemDesc, WgmmaVariant) {
  struct Case {
    SmemSwizzle Swizzle;
    uint64_t Code;
  } Cases[] = {{SmemSwizzle::None, 0},
               {SmemSwizzle::Bytes128, 1},
               {SmemSwizzle::Bytes64, 2},
               {SmemSwizzle::Bytes32, 3}};
  for (const Case &C : Cases) {
    uint64_t Value = wgmmaOrDie(config(0x400, 128, 256, C.Swizzle));
    EXPECT_EQ(Value, uint64_t(0x400 >> 4) | uint64_t(128 >> 4) << 16 |
                         uint64_t(256 >> 4) << 32 | C.Code << 62);
    SmemDescriptor Desc = decodeWgmmaSmemDescriptor(Value);
    EXPECT_EQ(Desc.SwizzleMode, C.Code);
    EXPECT_EQ(Desc.Reserved, 0u);
  }
  EXPECT_FALSE(
      encodeWgmmaSmemDescriptor(config(0, 0, 1024, SmemSwizzle::Bytes128Atom32))
          .ok());
  EXPECT_FALSE(
      encodeWgmmaSmemDescriptor(config(0, 0, 1024, SmemSwizzle::Bytes128, 0,
                                       LeadingDimMode::AbsoluteAddress))
          .ok());
  EXPECT_FALSE(
      encodeWgmmaSmemDescriptor(config(8, 0, 0, SmemSwizzle::None)).ok());
  EXPECT_EQ(decodeWgmmaSmemDescriptor(~0ull).Reserved,
            (0x3ull << 14) | (0x3ull << 30) | (0x7ull << 46) |
                (0x3FFull << 52));
}

// The shared skeleton: for the same operand, the tcgen05 and wgmma
// descriptors agree on bits 0-45 and 49-51 and differ only in the version
// bits and the swizzle encoding.
TEST(SmemDesc, Tcgen05AndWgmmaShareTheSkeleton) {
  for (SmemSwizzle Swizzle :
       {SmemSwizzle::Bytes32, SmemSwizzle::Bytes64, SmemSwizzle::Bytes128}) {
    SmemDescriptorConfig Config = config(0x8400, 0x80, 0x400, Swizzle, 5);
    uint64_t Blackwell = tcgen05OrDie(Config);
    uint64_t Hopper = wgmmaOrDie(Config);
    uint64_t Shared = ((uint64_t(1) << 46) - 1) | uint64_t(7) << 49;
    EXPECT_EQ(Blackwell & Shared, Hopper & Shared);
    EXPECT_EQ(Blackwell & ~Shared,
              uint64_t(1) << 46 | uint64_t(getTcgen05SwizzleCode(Swizzle))
                                      << 61);
  }
}

// sm_103a's K = 96 MMA reads its codes through absolute-mode descriptors.
// CUTLASS's ultra mainloop (../shared/reference/cutlass-ptx/
// cutlass_89.sm_103a.ptx, lines 4561-4627) takes its code descriptor
// 0x4000404000010000 (4611756662049538048, the same constant as our K = 64
// kernel), keeps bits 32-47 and 56-63, masks bits 48-55 with 0xEF (clearing
// bits 48 and 52), ORs in bit 52 (4503599627370496) and puts encode(start)
// in bits 0-13 and encode(second chunk) in bits 16-29. With start and
// second chunk 0 that is our constant.
TEST(SmemDesc, K96AbsoluteCodesMatchCutlassSm103) {
  const uint64_t Code = 4611756662049538048ull; // 0x4000404000010000
  uint64_t Cutlass = (Code & 0xFF00'FFFF'0000'0000ull) |
                     (Code & (0xEFull << 48)) | 4503599627370496ull;
  EXPECT_EQ(Cutlass, 0x4010404000000000ull);
  EXPECT_EQ(tcgen05OrDie(config(0, 0, 1024, SmemSwizzle::Bytes128, 0,
                                LeadingDimMode::AbsoluteAddress)),
            Cutlass);
}

// The 8 K = 96 MMAs of a 768-code group over three 128-byte swizzle rows,
// against CUTLASS's ultra mainloop (cutlass_89.sm_103a.ptx, the MMAs at
// lines 4627, 4692, 4905, 4992, 5169, 5276, 5481, 5546): their start
// fields are row + 0, +3, +6 | +1, +4, +7 | +2, +5 (encoded: x 16 bytes)
// with the second-chunk field set to the start of the row in which the MMA
// ends (rs26, rs26, rs28 | rs28, rs28, rs30 | rs30, rs30), and they read
// their scales with IDs 0, 2 alternating at columns 4 apart per 16 blocks.
TEST(K96MmaStep, MatchesCutlassSm103) {
  struct Want {
    uint32_t FirstRow, ByteOffset, LastRow, ScaleAtom, ScaleFactorId;
  };
  const Want Table[8] = {{0, 0, 0, 0, 0},   {0, 48, 0, 1, 2},
                         {0, 96, 1, 3, 0},  {1, 16, 1, 4, 2},
                         {1, 64, 1, 6, 0},  {1, 112, 2, 7, 2},
                         {2, 32, 2, 9, 0},  {2, 80, 2, 10, 2}};
  for (uint32_t I = 0; I < 8; ++I) {
    Expected<K96MmaStep> Step = getK96MmaStep(I);
    ASSERT_TRUE(Step.ok()) << Step.message();
    EXPECT_EQ(Step->FirstRow, Table[I].FirstRow) << I;
    EXPECT_EQ(Step->ByteOffset, Table[I].ByteOffset) << I;
    EXPECT_EQ(Step->LastRow, Table[I].LastRow) << I;
    EXPECT_EQ(Step->Straddles, Table[I].FirstRow != Table[I].LastRow) << I;
    EXPECT_EQ(Step->ScaleAtom, Table[I].ScaleAtom) << I;
    EXPECT_EQ(Step->ScaleFactorId, Table[I].ScaleFactorId) << I;
    // Independently: the MMA covers codes 96 I .. 96 I + 95, i.e. bytes
    // 48 I .. 48 I + 47 of the 384-byte group and blocks 6 I .. 6 I + 5;
    // both chunks stay inside their 128-byte rows.
    uint32_t FirstByte = 48 * I, LastByte = FirstByte + 47;
    EXPECT_EQ(Step->FirstRow * 128 + Step->ByteOffset, FirstByte);
    EXPECT_EQ(Step->LastRow, LastByte / 128);
    EXPECT_EQ(Step->ScaleAtom * 4 + Step->ScaleFactorId, 6 * I);
  }
  Expected<K96MmaStep> Outside = getK96MmaStep(8);
  ASSERT_FALSE(Outside.ok());
  EXPECT_NE(Outside.message().find("768"), std::string::npos);
}
