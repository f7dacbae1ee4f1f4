//===- Tcgen05Encoding.cpp - Blackwell/Hopper MMA operand encodings -------===//
//
// Part of the nvfp4 project.
//
//===----------------------------------------------------------------------===//
//
// Field tables: see the header and docs/Blackwell.md. Each function first
// validates its inputs against the PTX ISA rule it cites, then packs the
// fields; decoders only split bits and never fail.
//
//===----------------------------------------------------------------------===//

#include "nvfp4/Target/Tcgen05Encoding.h"

#include <string>

using namespace nvfp4::target;

namespace {

/// Bit positions of the block-scaled instruction descriptor (Tables 43/44).
namespace idesc {
constexpr unsigned SparseBit = 2;
constexpr unsigned ScaleFactorBIdShift = 4;
constexpr unsigned ATypeShift = 7;
constexpr unsigned BTypeShift = 10;
constexpr unsigned NegateABit = 13;
constexpr unsigned NegateBBit = 14;
constexpr unsigned TransposeABit = 15;
constexpr unsigned TransposeBBit = 16;
constexpr unsigned NDimShift = 17;
constexpr unsigned ScaleTypeBit = 23;
constexpr unsigned MDimShift = 27;
constexpr unsigned ScaleFactorAIdShift = 29;
constexpr unsigned KDimBit = 31;
/// Reserved bits common to both tables: 0-1, 3, 6, 24-26.
constexpr uint32_t CommonReservedMask =
    0x3u | (1u << 3) | (1u << 6) | (0x7u << 24);
} // namespace idesc

/// Bit positions of the shared-memory descriptors (Table 40, wgmma table).
namespace sdesc {
constexpr unsigned LeadingDimShift = 16;
constexpr unsigned StrideDimShift = 32;
constexpr unsigned FixedConstantShift = 46;
constexpr unsigned BaseOffsetShift = 49;
constexpr unsigned LeadingDimModeBit = 52;
constexpr unsigned Tcgen05SwizzleShift = 61;
constexpr unsigned WgmmaSwizzleShift = 62;
constexpr uint64_t Field14Mask = 0x3FFFu;
/// The largest byte value matrix-descriptor-encode keeps (18 bits).
constexpr uint32_t MaxEncodableBytes = 0x3FFFFu;
/// tcgen05 reserved bits: 14-15, 30-31, 53-60.
constexpr uint64_t Tcgen05ReservedMask =
    (0x3ull << 14) | (0x3ull << 30) | (0xFFull << 53);
/// wgmma reserved bits: 14-15, 30-31, 46-48, 52-61.
constexpr uint64_t WgmmaReservedMask =
    (0x3ull << 14) | (0x3ull << 30) | (0x7ull << 46) | (0x3FFull << 52);
} // namespace sdesc

std::string str(uint64_t Value) { return std::to_string(Value); }

const char *kindName(MmaKind Kind) {
  switch (Kind) {
  case MmaKind::MXF8F6F4:
    return ".kind::mxf8f6f4";
  case MmaKind::MXF4:
    return ".kind::mxf4";
  case MmaKind::MXF4NVF4:
    return ".kind::mxf4nvf4";
  }
  return "<unknown kind>";
}

const char *groupName(CtaGroup Group) {
  return Group == CtaGroup::One ? "cta_group::1" : "cta_group::2";
}

bool isPowerOf2(uint32_t Value) { return Value && !(Value & (Value - 1)); }

bool isFp4Kind(MmaKind Kind) {
  return Kind == MmaKind::MXF4 || Kind == MmaKind::MXF4NVF4;
}

/// The element-type code of `Type` in the descriptor of `Kind`, or nullopt
/// if the kind does not accept it (Table 43: E4M3 0, E5M2 1, E2M3 3, E3M2 4,
/// E2M1 5; Table 44: E2M1 1 only).
std::optional<uint32_t> elementTypeCode(MmaKind Kind, ElementType Type) {
  if (isFp4Kind(Kind))
    return Type == ElementType::E2M1 ? std::optional<uint32_t>(1)
                                     : std::nullopt;
  switch (Type) {
  case ElementType::E4M3:
    return 0;
  case ElementType::E5M2:
    return 1;
  case ElementType::E2M3:
    return 3;
  case ElementType::E3M2:
    return 4;
  case ElementType::E2M1:
    return 5;
  }
  return std::nullopt;
}

/// Checks the (kind, scale_vec, scale type) triple against PTX ISA
/// 9.7.16.10.7.1 Table 55.
Status verifyScaleCombination(MmaKind Kind, ScaleVecSize VecSize,
                              ScaleFactorType ScaleType) {
  bool VecOk = false;
  switch (Kind) {
  case MmaKind::MXF8F6F4:
    VecOk = VecSize == ScaleVecSize::X1;
    break;
  case MmaKind::MXF4:
    VecOk = VecSize == ScaleVecSize::X2;
    break;
  case MmaKind::MXF4NVF4:
    VecOk = VecSize == ScaleVecSize::X2 || VecSize == ScaleVecSize::X4;
    break;
  }
  if (!VecOk)
    return Status::error(
        std::string("tcgen05.mma ") + kindName(Kind) +
        " does not take .scale_vec::" + str(static_cast<unsigned>(VecSize)) +
        "X (PTX ISA 9.7.16.10.7.1 Table 55)");
  // UE4M3 scales exist only for mxf4nvf4 with 16-element blocks (4X).
  if (ScaleType == ScaleFactorType::UE4M3 &&
      !(Kind == MmaKind::MXF4NVF4 && VecSize == ScaleVecSize::X4))
    return Status::error(
        std::string("tcgen05.mma ") + kindName(Kind) +
        " with .scale_vec::" + str(static_cast<unsigned>(VecSize)) +
        "X needs UE8M0 scales; UE4M3 requires "
        ".kind::mxf4nvf4 with .block16/.scale_vec::4X (PTX "
        "ISA 9.7.16.10.7.1 Table 55)");
  return Status::success();
}

/// Legal scale factor IDs (9.7.16.10.7.2/3 and the "0 or 2" of Table 44):
/// 1X: 0-3 (byte), 2X: 0 or 2 (half word), 4X: 0 (whole word); with K = 96,
/// 4X (6 scales) allows 0 or 2 and 2X (3 scales) is restricted to Table 44's
/// 0 or 2 although the section's figures also show 1 and 3.
bool isValidScaleFactorId(ScaleVecSize VecSize, bool K96, uint32_t Id) {
  switch (VecSize) {
  case ScaleVecSize::X1:
    return Id <= 3;
  case ScaleVecSize::X2:
    return Id == 0 || Id == 2;
  case ScaleVecSize::X4:
    return Id == 0 || (K96 && Id == 2);
  }
  return false;
}

Status verifySmemField(uint32_t Bytes, const char *What) {
  if (Bytes % 16 != 0)
    return Status::error(std::string("shared memory descriptor: ") + What +
                         " " + str(Bytes) +
                         " is not 16-byte aligned (PTX ISA 9.7.16.4.1)");
  if (Bytes > sdesc::MaxEncodableBytes)
    return Status::error(std::string("shared memory descriptor: ") + What +
                         " " + str(Bytes) +
                         " does not fit matrix-descriptor-encode's 18 bits "
                         "(max 262128)");
  return Status::success();
}

/// Checks the fields both descriptor formats share.
Status verifyCommonSmemFields(const SmemDescriptorConfig &Config) {
  if (Status S = verifySmemField(Config.StartAddress, "start address"); !S.ok())
    return S;
  const char *LeadingName =
      Config.LeadingMode == LeadingDimMode::AbsoluteAddress
          ? "leading dimension absolute address"
          : "leading dimension byte offset";
  if (Status S = verifySmemField(Config.LeadingDimByteOffset, LeadingName);
      !S.ok())
    return S;
  if (Status S = verifySmemField(Config.StrideDimByteOffset,
                                 "stride dimension byte offset");
      !S.ok())
    return S;
  if (Config.BaseOffset > 7)
    return Status::error("shared memory descriptor: matrix base offset " +
                         str(Config.BaseOffset) + " does not fit 3 bits");
  if (Config.BaseOffset != 0 && Config.Swizzle == SmemSwizzle::None)
    return Status::error("shared memory descriptor: a matrix base offset "
                         "applies to swizzled layouts only, got " +
                         str(Config.BaseOffset) + " without swizzling");
  return Status::success();
}

/// Packs the fields both formats share (start, LBO, SBO, base offset).
uint64_t packCommonSmemFields(const SmemDescriptorConfig &Config) {
  return uint64_t(encodeMatrixDescriptorField(Config.StartAddress)) |
         uint64_t(encodeMatrixDescriptorField(Config.LeadingDimByteOffset))
             << sdesc::LeadingDimShift |
         uint64_t(encodeMatrixDescriptorField(Config.StrideDimByteOffset))
             << sdesc::StrideDimShift |
         uint64_t(Config.BaseOffset) << sdesc::BaseOffsetShift;
}

SmemDescriptor splitCommonSmemFields(uint64_t Value) {
  SmemDescriptor Desc;
  Desc.StartAddress = static_cast<uint32_t>(Value & sdesc::Field14Mask);
  Desc.LeadingDim = static_cast<uint32_t>((Value >> sdesc::LeadingDimShift) &
                                          sdesc::Field14Mask);
  Desc.StrideDim = static_cast<uint32_t>((Value >> sdesc::StrideDimShift) &
                                         sdesc::Field14Mask);
  Desc.BaseOffset =
      static_cast<uint32_t>((Value >> sdesc::BaseOffsetShift) & 0x7u);
  Desc.Value = Value;
  return Desc;
}

uint32_t scaleCount(ScaleVecSize VecSize) {
  return static_cast<uint32_t>(VecSize);
}

} // namespace

//===----------------------------------------------------------------------===//
// Instruction descriptor
//===----------------------------------------------------------------------===//

Status nvfp4::target::verifyBlockScaledMmaShape(MmaKind Kind, CtaGroup Group,
                                                uint32_t M, uint32_t N,
                                                uint32_t K, bool Sparse) {
  std::string Where = std::string("tcgen05.mma ") + kindName(Kind) + " " +
                      groupName(Group) + (Sparse ? " sparse" : " dense");
  const char *Table = " (PTX ISA 9.7.16.2.1 Table 39)";

  // K: 32/64 (mxf8f6f4 dense/sparse), 64/128 (mxf4*), and K1 = 96 for dense
  // mxf4*: Table 39 lists 256xNxK1 for cta_group::2; sm_103a also takes
  // 128xNx96 with cta_group::1 -- CUTLASS's SM103_MXF4_ULTRA_SS_VS 1-SM atom,
  // whose PTX (../shared/reference/cutlass-ptx/cutlass_89_sm103a_ultra_mma.ptx)
  // issues tcgen05.mma.cta_group::1 with idesc 0x88400480 (M = 128, N = 256,
  // bit 31). Whether the chip has the K = 96 form is the chip table's
  // business (Instruction::Tcgen05BlockScaleMmaK96).
  uint32_t DenseK = Kind == MmaKind::MXF8F6F4 ? 32 : 64;
  uint32_t ExpectedK = Sparse ? 2 * DenseK : DenseK;
  bool IsK96 = isFp4Kind(Kind) && !Sparse && K == 96;
  if (K != ExpectedK && !IsK96)
    return Status::error(Where + ": K = " + str(K) + " is not supported, " +
                         "expected " + str(ExpectedK) +
                         (isFp4Kind(Kind) && !Sparse ? " (or 96)" : "") +
                         Table);

  if (Group == CtaGroup::One) {
    if (M != 128)
      return Status::error(Where + ": M = " + str(M) +
                           " is not supported, expected 128" + Table);
    if (N < 8 || N > 256 || N % 8 != 0)
      return Status::error(Where + ": N = " + str(N) +
                           " is not a multiple of 8 in [8, 256]" + Table);
    return Status::success();
  }

  if (Sparse || IsK96) {
    if (M != 256)
      return Status::error(Where + ": M = " + str(M) + " is not supported" +
                           (IsK96 ? " with K = 96" : "") + ", expected 256" +
                           Table);
  } else if (M != 128 && M != 256) {
    return Status::error(Where + ": M = " + str(M) +
                         " is not supported, expected 128 or 256" + Table);
  }
  if (N < 16 || N > 256 || N % 16 != 0)
    return Status::error(Where + ": N = " + str(N) +
                         " is not a multiple of 16 in [16, 256]" + Table);
  return Status::success();
}

Expected<uint32_t> nvfp4::target::getScaleFactorsPerRow(MmaKind Kind,
                                                        ScaleVecSize VecSize,
                                                        uint32_t K) {
  // The scale type does not change the count; UE8M0 is legal for every
  // (kind, scale_vec) pair that exists.
  if (Status S = verifyScaleCombination(Kind, VecSize, ScaleFactorType::UE8M0);
      !S.ok())
    return S;
  if (K == 96 && isFp4Kind(Kind)) // block32 -> 3X, block16 -> 6X.
    return VecSize == ScaleVecSize::X2 ? 3u : 6u;
  return scaleCount(VecSize);
}

Expected<BlockScaledInstrDesc>
nvfp4::target::encodeBlockScaledInstrDesc(const BlockScaledMmaConfig &Config) {
  const MmaKind Kind = Config.Kind;
  std::string Where = std::string("tcgen05.mma ") + kindName(Kind);

  if (Status S = verifyBlockScaledMmaShape(Kind, Config.Group, Config.M,
                                           Config.N, Config.K, Config.Sparse);
      !S.ok())
    return S;
  if (Status S = verifyScaleCombination(Kind, Config.VecSize, Config.ScaleType);
      !S.ok())
    return S;

  std::optional<uint32_t> ACode = elementTypeCode(Kind, Config.AType);
  std::optional<uint32_t> BCode = elementTypeCode(Kind, Config.BType);
  if (!ACode || !BCode)
    return Status::error(
        Where + ": operand types must be " +
        (isFp4Kind(Kind) ? "E2M1" : "E4M3, E5M2, E2M3, E3M2 or E2M1") +
        " (PTX ISA 9.7.16.4.2 Tables 43/44)");

  // Table 44 allows only "No Transpose" for mxf4/mxf4nvf4. For mxf8f6f4,
  // CUTLASS (cute/arch/mma_sm100_desc.hpp) documents MN-major as valid for
  // 8-bit types only; sub-byte operands must stay K-major.
  auto IsEightBit = [](ElementType Type) {
    return Type == ElementType::E4M3 || Type == ElementType::E5M2;
  };
  if (Config.TransposeA || Config.TransposeB) {
    if (isFp4Kind(Kind))
      return Status::error(Where + ": transposed (MN-major) operands are not "
                                   "supported (PTX ISA 9.7.16.4.2 Table 44)");
    if ((Config.TransposeA && !IsEightBit(Config.AType)) ||
        (Config.TransposeB && !IsEightBit(Config.BType)))
      return Status::error(Where + ": only 8-bit operands (E4M3, E5M2) may "
                                   "be transposed (MN-major)");
  }

  bool K96 = Config.K == 96;
  if (!isValidScaleFactorId(Config.VecSize, K96, Config.ScaleFactorAId) ||
      !isValidScaleFactorId(Config.VecSize, K96, Config.ScaleFactorBId))
    return Status::error(
        Where + ": scale factor IDs (A " + str(Config.ScaleFactorAId) + ", B " +
        str(Config.ScaleFactorBId) + ") are invalid for .scale_vec::" +
        str(static_cast<unsigned>(Config.VecSize)) +
        "X (1X: 0-3, 2X: 0 or 2, 4X: 0; 4X with K = 96: 0 or 2; PTX ISA "
        "9.7.16.10.7.2)");

  BlockScaledInstrDesc Desc;
  Desc.Sparse = Config.Sparse ? 1 : 0;
  Desc.ScaleFactorBId = Config.ScaleFactorBId;
  Desc.AType = *ACode;
  Desc.BType = *BCode;
  Desc.NegateA = Config.NegateA ? 1 : 0;
  Desc.NegateB = Config.NegateB ? 1 : 0;
  Desc.TransposeA = Config.TransposeA ? 1 : 0;
  Desc.TransposeB = Config.TransposeB ? 1 : 0;
  Desc.NDim = Config.N >> 3;
  Desc.ScaleType = static_cast<uint32_t>(Config.ScaleType);
  Desc.MDim = Config.M >> 7;
  Desc.ScaleFactorAId = Config.ScaleFactorAId;
  Desc.KDim = K96 ? 1 : 0;
  Desc.Value =
      Desc.Sparse << idesc::SparseBit |
      Desc.ScaleFactorBId << idesc::ScaleFactorBIdShift |
      Desc.AType << idesc::ATypeShift | Desc.BType << idesc::BTypeShift |
      Desc.NegateA << idesc::NegateABit | Desc.NegateB << idesc::NegateBBit |
      Desc.TransposeA << idesc::TransposeABit |
      Desc.TransposeB << idesc::TransposeBBit | Desc.NDim << idesc::NDimShift |
      Desc.ScaleType << idesc::ScaleTypeBit | Desc.MDim << idesc::MDimShift |
      Desc.ScaleFactorAId << idesc::ScaleFactorAIdShift |
      Desc.KDim << idesc::KDimBit;
  return Desc;
}

BlockScaledInstrDesc nvfp4::target::decodeBlockScaledInstrDesc(uint32_t Value,
                                                               MmaKind Kind) {
  bool Fp4 = isFp4Kind(Kind);
  BlockScaledInstrDesc Desc;
  Desc.Sparse = (Value >> idesc::SparseBit) & 1u;
  Desc.ScaleFactorBId = (Value >> idesc::ScaleFactorBIdShift) & 0x3u;
  Desc.AType = (Value >> idesc::ATypeShift) & 0x7u;
  Desc.BType = (Value >> idesc::BTypeShift) & (Fp4 ? 0x3u : 0x7u);
  Desc.NegateA = (Value >> idesc::NegateABit) & 1u;
  Desc.NegateB = (Value >> idesc::NegateBBit) & 1u;
  Desc.TransposeA = (Value >> idesc::TransposeABit) & 1u;
  Desc.TransposeB = (Value >> idesc::TransposeBBit) & 1u;
  Desc.NDim = (Value >> idesc::NDimShift) & 0x3Fu;
  Desc.ScaleType = (Value >> idesc::ScaleTypeBit) & 1u;
  Desc.MDim = (Value >> idesc::MDimShift) & 0x3u;
  Desc.ScaleFactorAId = (Value >> idesc::ScaleFactorAIdShift) & 0x3u;
  Desc.KDim = Fp4 ? (Value >> idesc::KDimBit) & 1u : 0u;
  uint32_t ReservedMask =
      idesc::CommonReservedMask | (Fp4 ? 1u << 12 : 1u << idesc::KDimBit);
  Desc.Reserved = Value & ReservedMask;
  Desc.Value = Value;
  return Desc;
}

Expected<BlockScaledInstrDesc>
nvfp4::target::encodeNvfp4InstrDesc(CtaGroup Group, uint32_t M, uint32_t N) {
  BlockScaledMmaConfig Config;
  Config.Kind = MmaKind::MXF4NVF4;
  Config.Group = Group;
  Config.M = M;
  Config.N = N;
  Config.K = 64;
  Config.ScaleType = ScaleFactorType::UE4M3;
  Config.VecSize = ScaleVecSize::X4;
  return encodeBlockScaledInstrDesc(Config);
}

Expected<BlockScaledInstrDesc>
nvfp4::target::encodeNvfp4K96InstrDesc(CtaGroup Group, uint32_t M, uint32_t N,
                                       uint32_t ScaleFactorId) {
  BlockScaledMmaConfig Config;
  Config.Kind = MmaKind::MXF4NVF4;
  Config.Group = Group;
  Config.M = M;
  Config.N = N;
  Config.K = 96;
  Config.ScaleType = ScaleFactorType::UE4M3;
  Config.VecSize = ScaleVecSize::X4;
  Config.ScaleFactorAId = ScaleFactorId;
  Config.ScaleFactorBId = ScaleFactorId;
  return encodeBlockScaledInstrDesc(Config);
}

Expected<BlockScaledInstrDesc>
nvfp4::target::encodeMXInstrDesc(MmaKind Kind, ElementType AType,
                                 ElementType BType, CtaGroup Group, uint32_t M,
                                 uint32_t N, uint32_t ScaleFactorId) {
  BlockScaledMmaConfig Config;
  Config.Kind = Kind;
  Config.Group = Group;
  Config.M = M;
  Config.N = N;
  Config.AType = AType;
  Config.BType = BType;
  Config.ScaleType = ScaleFactorType::UE8M0;
  switch (Kind) {
  case MmaKind::MXF8F6F4:
    // Only the 8-bit members: E2M1 under mxf8f6f4 is the unpacked
    // one-nibble-per-byte container, which MXFP4's packed codes are not.
    if ((AType != ElementType::E4M3 && AType != ElementType::E5M2) ||
        (BType != ElementType::E4M3 && BType != ElementType::E5M2))
      return Status::error("the MXFP8 MMA (.kind::mxf8f6f4) takes E4M3 or "
                           "E5M2 operands");
    Config.K = 32;
    Config.VecSize = ScaleVecSize::X1;
    break;
  case MmaKind::MXF4:
    Config.K = 64;
    Config.VecSize = ScaleVecSize::X2;
    break;
  case MmaKind::MXF4NVF4:
    return Status::error("the MX GEMM issues .kind::mxf8f6f4 or .kind::mxf4, "
                         "not .kind::mxf4nvf4");
  }
  Config.ScaleFactorAId = ScaleFactorId;
  Config.ScaleFactorBId = ScaleFactorId;
  return encodeBlockScaledInstrDesc(Config);
}

uint32_t nvfp4::target::getKStepScaleAtoms(ScaleVecSize VecSize) {
  return static_cast<uint32_t>(VecSize);
}

Expected<KStepMmaScales>
nvfp4::target::getKStepMmaScales(ScaleVecSize VecSize, uint32_t Index) {
  if (Index >= kMmasPerKStep)
    return Status::error("MMA " + str(Index) + " is outside the " +
                         str(kMmasPerKStep) + " MMAs of a K step");
  // Blocks of the step this MMA reads: Index * (scales per MMA) onwards;
  // an atom holds 4 of them, one byte each.
  uint32_t PerMma = scaleCount(VecSize);
  uint32_t FirstBlock = Index * PerMma;
  KStepMmaScales Scales;
  Scales.ScaleAtom = FirstBlock / kScaleAtomBlocks;
  Scales.ScaleFactorId = FirstBlock % kScaleAtomBlocks;
  if (!isValidScaleFactorId(VecSize, /*K96=*/false, Scales.ScaleFactorId))
    return Status::error("internal: scale factor ID " +
                         str(Scales.ScaleFactorId) + " for .scale_vec::" +
                         str(PerMma) + "X");
  return Scales;
}

Expected<F16InstrDesc>
nvfp4::target::encodeF16InstrDesc(const F16MmaConfig &Config) {
  const char *Table = " (PTX ISA 9.7.16.2.1 Table 39)";
  std::string Where =
      std::string("tcgen05.mma .kind::f16 ") +
      (Config.Group == CtaGroup::One ? ".cta_group::1" : ".cta_group::2") +
      " dense";
  // Table 39: .f16 x .f16 accumulates in .f16 or .f32, .bf16 only in .f32;
  // A and B are one type (atype and btype are separate fields, but every
  // row of the table lists them together).
  if (Config.AType != Config.BType)
    return Status::error(Where + ": A and B must have the same type" + Table);
  if (Config.AType == F16OperandType::BF16 &&
      Config.DType != F16AccumulatorType::F32)
    return Status::error(Where + ": BF16 operands need an F32 accumulator" +
                         Table);
  bool One = Config.Group == CtaGroup::One;
  uint32_t M = Config.M, N = Config.N;
  if (One ? (M != 64 && M != 128) : (M != 128 && M != 256))
    return Status::error(Where + ": M = " + str(M) +
                         " is not supported, expected " +
                         (One ? "64 or 128" : "128 or 256") + Table);
  uint32_t NStep = One ? 8 : 16;
  if (N < NStep || N > 256 || N % NStep != 0)
    return Status::error(Where + ": N = " + str(N) + " is not a multiple of " +
                         str(NStep) + " in [" + str(NStep) + ", 256]" + Table);
  // Table 42: bits 0-3 (sparsity selector and flag, saturate), 6, 23 and
  // 29-31 (.ws's B-reuse shift) are 0 for a dense MMA without .ws.
  F16InstrDesc Desc;
  Desc.DType = static_cast<uint32_t>(Config.DType);
  Desc.AType = static_cast<uint32_t>(Config.AType);
  Desc.BType = static_cast<uint32_t>(Config.BType);
  Desc.NegateA = Config.NegateA;
  Desc.NegateB = Config.NegateB;
  Desc.TransposeA = Config.TransposeA;
  Desc.TransposeB = Config.TransposeB;
  Desc.NDim = N >> 3;
  Desc.MDim = M >> 4;
  Desc.Value = Desc.DType << 4 | Desc.AType << 7 | Desc.BType << 10 |
               Desc.NegateA << 13 | Desc.NegateB << 14 | Desc.TransposeA << 15 |
               Desc.TransposeB << 16 | Desc.NDim << 17 | Desc.MDim << 24;
  return Desc;
}

Expected<F16InstrDesc>
nvfp4::target::encodeBF16InstrDesc(CtaGroup Group, uint32_t M, uint32_t N) {
  F16MmaConfig Config;
  Config.Group = Group;
  Config.M = M;
  Config.N = N;
  return encodeF16InstrDesc(Config);
}

Expected<K96MmaStep> nvfp4::target::getK96MmaStep(uint32_t Index) {
  if (Index >= kK96MmasPerGroup)
    return Status::error("K = 96 MMA " + str(Index) + " is outside the " +
                         str(kK96MmasPerGroup) + " of a 768-code group");
  constexpr uint32_t RowBytes = kK96RowCodes / 2, MmaBytes = 96 / 2;
  K96MmaStep Step;
  uint32_t First = Index * MmaBytes, Last = First + MmaBytes - 1;
  Step.FirstRow = First / RowBytes;
  Step.ByteOffset = First % RowBytes;
  Step.LastRow = Last / RowBytes;
  Step.Straddles = Step.FirstRow != Step.LastRow;
  // 96 codes = 6 blocks of 16; atoms hold 4 blocks.
  uint32_t FirstBlock = Index * 6;
  Step.ScaleAtom = FirstBlock / kScaleAtomBlocks;
  Step.ScaleFactorId = FirstBlock % kScaleAtomBlocks;
  return Step;
}

//===----------------------------------------------------------------------===//
// Shared-memory descriptors
//===----------------------------------------------------------------------===//

uint32_t nvfp4::target::getTcgen05SwizzleCode(SmemSwizzle Swizzle) {
  switch (Swizzle) {
  case SmemSwizzle::None:
    return 0;
  case SmemSwizzle::Bytes128Atom32:
    return 1;
  case SmemSwizzle::Bytes128:
    return 2;
  case SmemSwizzle::Bytes64:
    return 4;
  case SmemSwizzle::Bytes32:
    return 6;
  }
  return 0;
}

Expected<uint32_t> nvfp4::target::getWgmmaSwizzleCode(SmemSwizzle Swizzle) {
  switch (Swizzle) {
  case SmemSwizzle::None:
    return 0u;
  case SmemSwizzle::Bytes128:
    return 1u;
  case SmemSwizzle::Bytes64:
    return 2u;
  case SmemSwizzle::Bytes32:
    return 3u;
  case SmemSwizzle::Bytes128Atom32:
    break;
  }
  return Status::error("wgmma shared memory descriptor: 128-byte swizzling "
                       "with 32-byte atoms exists only for tcgen05 (PTX ISA "
                       "9.7.15.5.1.2.2)");
}

Expected<uint32_t> nvfp4::target::getSwizzleRepeatBytes(SmemSwizzle Swizzle) {
  switch (Swizzle) {
  case SmemSwizzle::Bytes128:
    return 1024u;
  case SmemSwizzle::Bytes64:
    return 512u;
  case SmemSwizzle::Bytes32:
    return 256u;
  case SmemSwizzle::None:
    return Status::error("shared memory descriptor: an unswizzled layout has "
                         "no repeating pattern");
  case SmemSwizzle::Bytes128Atom32:
    break;
  }
  return Status::error("shared memory descriptor: PTX ISA Table 41 gives no "
                       "pattern boundary for 128-byte swizzling with 32-byte "
                       "atoms");
}

Expected<uint32_t>
nvfp4::target::computeMatrixBaseOffset(uint32_t PatternStartAddress,
                                       SmemSwizzle Swizzle) {
  Expected<uint32_t> Repeat = getSwizzleRepeatBytes(Swizzle);
  if (!Repeat.ok())
    return Repeat.status();
  if (PatternStartAddress % *Repeat == 0)
    return 0u;
  return (PatternStartAddress >> 7) & 0x7u;
}

Expected<SmemDescriptor>
nvfp4::target::encodeTcgen05SmemDescriptor(const SmemDescriptorConfig &Config) {
  if (Status S = verifyCommonSmemFields(Config); !S.ok())
    return S;
  // PTX ISA 9.7.16.3.1.2.1: the absolute-address mode works only with
  // 128-byte swizzling (16-byte atoms), K-major operands and base offset 0.
  if (Config.LeadingMode == LeadingDimMode::AbsoluteAddress) {
    if (Config.Swizzle != SmemSwizzle::Bytes128)
      return Status::error("tcgen05 shared memory descriptor: the leading "
                           "dimension absolute-address mode requires 128-byte "
                           "swizzling (PTX ISA 9.7.16.3.1.2.1)");
    if (Config.BaseOffset != 0)
      return Status::error("tcgen05 shared memory descriptor: the leading "
                           "dimension absolute-address mode requires matrix "
                           "base offset 0 (PTX ISA 9.7.16.3.1.2.1)");
  }
  uint64_t Value = packCommonSmemFields(Config) |
                   uint64_t(1) << sdesc::FixedConstantShift |
                   uint64_t(static_cast<uint32_t>(Config.LeadingMode))
                       << sdesc::LeadingDimModeBit |
                   uint64_t(getTcgen05SwizzleCode(Config.Swizzle))
                       << sdesc::Tcgen05SwizzleShift;
  return decodeTcgen05SmemDescriptor(Value);
}

SmemDescriptor nvfp4::target::decodeTcgen05SmemDescriptor(uint64_t Value) {
  SmemDescriptor Desc = splitCommonSmemFields(Value);
  Desc.FixedConstant =
      static_cast<uint32_t>((Value >> sdesc::FixedConstantShift) & 0x7u);
  Desc.LeadingDimMode =
      static_cast<uint32_t>((Value >> sdesc::LeadingDimModeBit) & 1u);
  Desc.SwizzleMode =
      static_cast<uint32_t>((Value >> sdesc::Tcgen05SwizzleShift) & 0x7u);
  Desc.Reserved = Value & sdesc::Tcgen05ReservedMask;
  return Desc;
}

Expected<SmemDescriptor>
nvfp4::target::encodeWgmmaSmemDescriptor(const SmemDescriptorConfig &Config) {
  if (Config.LeadingMode != LeadingDimMode::RelativeOffset)
    return Status::error("wgmma shared memory descriptor: there is no "
                         "absolute-address leading dimension mode on sm_90a "
                         "(PTX ISA 9.7.15.5.1.2.2)");
  Expected<uint32_t> Code = getWgmmaSwizzleCode(Config.Swizzle);
  if (!Code.ok())
    return Code.status();
  if (Status S = verifyCommonSmemFields(Config); !S.ok())
    return S;
  uint64_t Value = packCommonSmemFields(Config) |
                   uint64_t(*Code) << sdesc::WgmmaSwizzleShift;
  return decodeWgmmaSmemDescriptor(Value);
}

SmemDescriptor nvfp4::target::decodeWgmmaSmemDescriptor(uint64_t Value) {
  SmemDescriptor Desc = splitCommonSmemFields(Value);
  Desc.SwizzleMode =
      static_cast<uint32_t>((Value >> sdesc::WgmmaSwizzleShift) & 0x3u);
  Desc.Reserved = Value & sdesc::WgmmaReservedMask;
  return Desc;
}

//===----------------------------------------------------------------------===//
// Tensor Memory
//===----------------------------------------------------------------------===//

Expected<TmemAddress> nvfp4::target::encodeTmemAddress(uint32_t Lane,
                                                       uint32_t Column) {
  if (Lane >= kTmemLanes)
    return Status::error("tensor memory address: lane " + str(Lane) +
                         " is outside the 128 lanes of a CTA (PTX ISA "
                         "9.7.16.1)");
  if (Column >= kTmemColumns)
    return Status::error("tensor memory address: column " + str(Column) +
                         " is outside the 512 columns of a CTA (PTX ISA "
                         "9.7.16.1)");
  TmemAddress Addr;
  Addr.Lane = Lane;
  Addr.Column = Column;
  Addr.Value = Lane << 16 | Column;
  return Addr;
}

TmemAddress nvfp4::target::decodeTmemAddress(uint32_t Value) {
  TmemAddress Addr;
  Addr.Lane = Value >> 16;
  Addr.Column = Value & 0xFFFFu;
  Addr.Value = Value;
  return Addr;
}

Status nvfp4::target::verifyTmemAllocColumns(uint32_t NumColumns) {
  if (NumColumns < kTmemMinAllocColumns || NumColumns > kTmemColumns ||
      !isPowerOf2(NumColumns))
    return Status::error("tcgen05.alloc: nCols = " + str(NumColumns) +
                         " must be a power of 2 in [32, 512] (PTX ISA "
                         "9.7.16.7.1)");
  return Status::success();
}

Expected<uint32_t>
nvfp4::target::getTmemAllocColumns(uint32_t RequiredColumns) {
  if (RequiredColumns == 0)
    return Status::error("tcgen05.alloc: nothing to allocate (0 columns)");
  if (RequiredColumns > kTmemColumns)
    return Status::error("tcgen05.alloc: " + str(RequiredColumns) +
                         " columns exceed the 512 columns of a CTA's tensor "
                         "memory");
  uint32_t Columns = kTmemMinAllocColumns;
  while (Columns < RequiredColumns)
    Columns *= 2;
  return Columns;
}

Expected<TmemRegion>
nvfp4::target::getAccumulatorTmemFootprint(uint32_t M, uint32_t N,
                                           CtaGroup Group) {
  bool LayoutD = Group == CtaGroup::One && M == 128;
  bool LayoutA = Group == CtaGroup::Two && M == 256;
  if (!LayoutD && !LayoutA)
    return Status::error(
        "tensor memory accumulator: M = " + str(M) + " with " +
        groupName(Group) +
        " is not supported; only data-path Layout D (M = 128, cta_group::1) "
        "and Layout A (M = 256, cta_group::2) are modelled (PTX ISA "
        "9.7.16.10.5)");
  uint32_t Step = LayoutD ? 8 : 16;
  if (N < Step || N > 256 || N % Step != 0)
    return Status::error("tensor memory accumulator: N = " + str(N) +
                         " is not a multiple of " + str(Step) + " in [" +
                         str(Step) + ", 256] for " + groupName(Group));
  TmemRegion Region;
  Region.Lanes = kTmemLanes;
  Region.Columns = N; // One FP32 element per 32-bit column.
  return Region;
}

Expected<ScaleFactorTmemLayout>
nvfp4::target::getScaleFactorTmemLayout(uint32_t Rows, ScaleVecSize VecSize) {
  if (Rows == 0 || Rows > 256)
    return Status::error("tensor memory scale factors: " + str(Rows) +
                         " rows per MMA operand are outside [1, 256]");
  ScaleFactorTmemLayout Layout;
  Layout.ScalesPerRow = scaleCount(VecSize);
  Layout.ColumnsPerMma = (Rows + 31) / 32;
  return Layout;
}

Expected<ScaleFactorTmemLocation>
nvfp4::target::getScaleFactorTmemLocation(uint32_t Row, uint32_t ScaleIndex,
                                          ScaleVecSize VecSize,
                                          uint32_t ScaleFactorId) {
  if (Row >= 256)
    return Status::error("tensor memory scale factors: row " + str(Row) +
                         " is outside an MMA operand (at most 256 rows)");
  if (ScaleIndex >= scaleCount(VecSize))
    return Status::error("tensor memory scale factors: scale index " +
                         str(ScaleIndex) + " is outside the " +
                         str(scaleCount(VecSize)) + " scales per row of " +
                         ".scale_vec::" + str(scaleCount(VecSize)) + "X");
  if (!isValidScaleFactorId(VecSize, /*K96=*/false, ScaleFactorId))
    return Status::error(
        "tensor memory scale factors: scale factor ID " + str(ScaleFactorId) +
        " is invalid for .scale_vec::" + str(scaleCount(VecSize)) +
        "X (PTX ISA 9.7.16.10.7.2)");
  ScaleFactorTmemLocation Loc;
  Loc.Lane = Row % 32;
  Loc.Column = Row / 32;
  Loc.Byte = ScaleFactorId + ScaleIndex;
  return Loc;
}

Status nvfp4::target::verifyTcgen05CpShape(Tcgen05CpShape Shape,
                                           Tcgen05CpMulticast Multicast) {
  bool Ok = false;
  switch (Shape) {
  case Tcgen05CpShape::Lanes64x128b:
    Ok = Multicast == Tcgen05CpMulticast::Warpx2_02_13 ||
         Multicast == Tcgen05CpMulticast::Warpx2_01_23;
    break;
  case Tcgen05CpShape::Lanes32x128b:
    Ok = Multicast == Tcgen05CpMulticast::Warpx4;
    break;
  case Tcgen05CpShape::Lanes128x256b:
  case Tcgen05CpShape::Lanes4x256b:
  case Tcgen05CpShape::Lanes128x128b:
    Ok = Multicast == Tcgen05CpMulticast::None;
    break;
  }
  if (!Ok)
    return Status::error("tcgen05.cp: .64x128b requires .warpx2::02_13 or "
                         ".warpx2::01_23, .32x128b requires .warpx4, and the "
                         "other shapes take no multicast (PTX ISA 9.7.16.9.2)");
  return Status::success();
}

uint32_t nvfp4::target::getTcgen05CpSourceBytes(Tcgen05CpShape Shape) {
  switch (Shape) {
  case Tcgen05CpShape::Lanes128x256b:
    return 128 * 256 / 8;
  case Tcgen05CpShape::Lanes4x256b:
    return 4 * 256 / 8;
  case Tcgen05CpShape::Lanes128x128b:
    return 128 * 128 / 8;
  case Tcgen05CpShape::Lanes64x128b:
    return 64 * 128 / 8;
  case Tcgen05CpShape::Lanes32x128b:
    return 32 * 128 / 8;
  }
  return 0;
}

Expected<ScaleFactorCopyPlan>
nvfp4::target::planScaleFactorCopy(uint32_t Rows, uint32_t ScaleBlocks,
                                   uint32_t SmemTileAddress,
                                   uint32_t AtomStrideM, uint32_t AtomStrideK) {
  if (Rows == 0 || Rows % kScaleAtomRows != 0)
    return Status::error("scale factor copy: " + str(Rows) +
                         " rows are not a positive multiple of 128 (pad the "
                         "scales with zeros)");
  if (ScaleBlocks == 0 || ScaleBlocks % kScaleAtomBlocks != 0)
    return Status::error("scale factor copy: " + str(ScaleBlocks) +
                         " scale blocks are not a positive multiple of 4 (pad "
                         "the scales with zeros)");
  ScaleFactorCopyPlan Plan;
  Plan.AtomsM = Rows / kScaleAtomRows;
  Plan.AtomsK = ScaleBlocks / kScaleAtomBlocks;
  Plan.AtomStrideK = AtomStrideK ? AtomStrideK : kScaleAtomBytes;
  Plan.AtomStrideM = AtomStrideM ? AtomStrideM : kScaleAtomBytes * Plan.AtomsK;
  Plan.ColumnsPerCopy = 4;
  Plan.ColumnsPerMmaStep = Plan.AtomsM * Plan.ColumnsPerCopy;
  uint64_t TotalColumns = uint64_t(Plan.AtomsM) * Plan.AtomsK * 4;
  if (TotalColumns > kTmemColumns)
    return Status::error("scale factor copy: " + str(TotalColumns) +
                         " tensor memory columns exceed the 512 of a CTA");
  Plan.TotalColumns = static_cast<uint32_t>(TotalColumns);
  if (SmemTileAddress % 16 != 0 || Plan.AtomStrideM % 16 != 0 ||
      Plan.AtomStrideK % 16 != 0)
    return Status::error("scale factor copy: the tile address and the atom "
                         "strides must be 16-byte aligned (PTX ISA "
                         "9.7.16.4.1)");
  uint64_t LastAtomEnd =
      uint64_t(SmemTileAddress) + uint64_t(Plan.AtomsM - 1) * Plan.AtomStrideM +
      uint64_t(Plan.AtomsK - 1) * Plan.AtomStrideK + kScaleAtomBytes;
  if (LastAtomEnd > uint64_t(sdesc::MaxEncodableBytes) + 1)
    return Status::error("scale factor copy: the tile ends at shared byte " +
                         str(LastAtomEnd) +
                         ", beyond what a descriptor can address (262144)");
  Plan.FirstAtom.StartAddress = SmemTileAddress;
  // K-major without swizzle, LBO is the distance from the first to the
  // second 16-byte column of a core-matrix group (PTX ISA 9.7.16.3.1.1);
  // a 32x128b copy reads rows of one 16-byte column, so the field is never
  // used. 16 (encoded 1) is what CUTLASS writes (0x0000400800010000 in
  // cutlass_72a_1sm.sm_100a.ptx:1412 and cutlass_89.sm_103a.ptx:4265).
  Plan.FirstAtom.LeadingDimByteOffset = 16;
  Plan.FirstAtom.StrideDimByteOffset = 128;
  Plan.FirstAtom.Swizzle = SmemSwizzle::None;
  return Plan;
}

Expected<ScaleFactorCopy>
nvfp4::target::getScaleFactorCopy(const ScaleFactorCopyPlan &Plan,
                                  uint32_t AtomM, uint32_t AtomK) {
  if (AtomM >= Plan.AtomsM || AtomK >= Plan.AtomsK)
    return Status::error("scale factor copy: atom (" + str(AtomM) + ", " +
                         str(AtomK) + ") is outside the " + str(Plan.AtomsM) +
                         " x " + str(Plan.AtomsK) + " plan");
  ScaleFactorCopy Copy;
  Copy.SmemAddress = Plan.FirstAtom.StartAddress + AtomM * Plan.AtomStrideM +
                     AtomK * Plan.AtomStrideK;
  Copy.TmemColumnOffset = (AtomK * Plan.AtomsM + AtomM) * Plan.ColumnsPerCopy;
  return Copy;
}

//===----------------------------------------------------------------------===//
// Scale-factor layouts
//===----------------------------------------------------------------------===//

static Status verifyAtomCoordinate(uint32_t Row, uint32_t Block) {
  if (Row >= kScaleAtomRows || Block >= kScaleAtomBlocks)
    return Status::error("scale atom: (" + str(Row) + ", " + str(Block) +
                         ") is outside the 128 x 4 atom");
  return Status::success();
}

Expected<uint32_t> nvfp4::target::getSm100ScaleAtomOffset(uint32_t Row,
                                                          uint32_t Block) {
  if (Status S = verifyAtomCoordinate(Row, Block); !S.ok())
    return S;
  return (Row % 32) * 16 + (Row / 32) * 4 + Block;
}

Expected<uint32_t> nvfp4::target::getSm103ScaleAtomOffset(uint32_t Row,
                                                          uint32_t Block) {
  if (Status S = verifyAtomCoordinate(Row, Block); !S.ok())
    return S;
  return (Row % 8) * 16 + ((Row / 8) % 4) * 128 + (Row / 32) * 4 + Block;
}

Expected<uint64_t> nvfp4::target::getSwizzledScaleOffset(
    uint64_t Row, uint64_t Block, uint64_t PaddedRows, uint64_t PaddedBlocks) {
  if (PaddedRows == 0 || PaddedRows % kScaleAtomRows != 0 ||
      PaddedBlocks == 0 || PaddedBlocks % kScaleAtomBlocks != 0)
    return Status::error("swizzled scales: the padded shape [" +
                         str(PaddedRows) + ", " + str(PaddedBlocks) +
                         "] is not a positive multiple of [128, 4]");
  if (PaddedRows > (uint64_t(1) << 62) / PaddedBlocks)
    return Status::error("swizzled scales: the padded shape overflows");
  if (Row >= PaddedRows || Block >= PaddedBlocks)
    return Status::error("swizzled scales: (" + str(Row) + ", " + str(Block) +
                         ") is outside [" + str(PaddedRows) + ", " +
                         str(PaddedBlocks) + "]");
  uint64_t Atom = (Row / kScaleAtomRows) * (PaddedBlocks / kScaleAtomBlocks) +
                  Block / kScaleAtomBlocks;
  uint64_t InAtom = (Row % 32) * 16 + ((Row % kScaleAtomRows) / 32) * 4 +
                    Block % kScaleAtomBlocks;
  return Atom * kScaleAtomBytes + InAtom;
}

Status
nvfp4::target::verifyMmaSyncScaleSelector(ScaleVecSize VecSize, bool IsOperandA,
                                          MmaSyncScaleSelector Selector) {
  const char *Operand = IsOperandA ? "a" : "b";
  bool ByteOk = false;
  switch (VecSize) {
  case ScaleVecSize::X1:
    ByteOk = Selector.ByteId <= 3;
    break;
  case ScaleVecSize::X2:
    ByteOk = Selector.ByteId == 0 || Selector.ByteId == 2;
    break;
  case ScaleVecSize::X4:
    ByteOk = Selector.ByteId == 0;
    break;
  }
  if (!ByteOk)
    return Status::error(
        std::string("mma.sync block_scale: byte-id-") + Operand + " = " +
        str(Selector.ByteId) + " is invalid for .scale_vec::" +
        str(scaleCount(VecSize)) + "X (1X: 0-3, 2X: 0 or 2, 4X: 0)");
  uint32_t MaxThreadId = IsOperandA ? 1 : 3;
  if (Selector.ThreadId > MaxThreadId)
    return Status::error(std::string("mma.sync block_scale: thread-id-") +
                         Operand + " = " + str(Selector.ThreadId) +
                         " is outside [0, " + str(MaxThreadId) + "]");
  return Status::success();
}

Expected<RegisterScaleLocation>
nvfp4::target::getMmaSyncScaleALocation(uint32_t Row, uint32_t Block,
                                        MmaSyncScaleSelector Selector) {
  if (Status S = verifyMmaSyncScaleSelector(ScaleVecSize::X4, true, Selector);
      !S.ok())
    return S;
  if (Row >= 16 || Block >= 4)
    return Status::error("mma.sync m16n8k64 scale A: (row " + str(Row) +
                         ", block " + str(Block) +
                         ") is outside the 16 x 4 scale matrix");
  RegisterScaleLocation Loc;
  Loc.Lane = 4 * (Row % 8) + 2 * Selector.ThreadId + Row / 8;
  Loc.Byte = Block;
  return Loc;
}

Expected<RegisterScaleLocation>
nvfp4::target::getMmaSyncScaleBLocation(uint32_t Col, uint32_t Block,
                                        MmaSyncScaleSelector Selector) {
  if (Status S = verifyMmaSyncScaleSelector(ScaleVecSize::X4, false, Selector);
      !S.ok())
    return S;
  if (Col >= 8 || Block >= 4)
    return Status::error("mma.sync m16n8k64 scale B: (column " + str(Col) +
                         ", block " + str(Block) +
                         ") is outside the 4 x 8 scale matrix");
  RegisterScaleLocation Loc;
  Loc.Lane = 4 * Col + Selector.ThreadId;
  Loc.Byte = Block;
  return Loc;
}

std::optional<uint32_t>
nvfp4::target::getMmaSyncScaleARowForLane(uint32_t Lane,
                                          MmaSyncScaleSelector Selector) {
  if (Lane >= 32 || Selector.ThreadId > 1 ||
      (Lane % 4) / 2 != Selector.ThreadId)
    return std::nullopt;
  return Lane / 4 + 8 * (Lane % 2);
}

std::optional<uint32_t>
nvfp4::target::getMmaSyncScaleBColForLane(uint32_t Lane,
                                          MmaSyncScaleSelector Selector) {
  if (Lane >= 32 || Selector.ThreadId > 3 || Lane % 4 != Selector.ThreadId)
    return std::nullopt;
  return Lane / 4;
}

Expected<uint32_t> nvfp4::target::getSwizzledTileOffset(uint32_t Row,
                                                        uint32_t ByteInRow,
                                                        uint32_t RowBytes) {
  if (RowBytes != 64 && RowBytes != 128)
    return Status::error("swizzled tile: rows of " + std::to_string(RowBytes) +
                         " bytes (the 64- and 128-byte swizzles only)");
  if (ByteInRow >= RowBytes)
    return Status::error("swizzled tile: byte " + std::to_string(ByteInRow) +
                         " is past the row");
  uint32_t Address = Row * RowBytes + ByteInRow;
  // Bits 7-9 (128B) or 7-8 (64B) of the address select the XOR pattern.
  uint32_t Pattern = (Address >> 7) & (RowBytes == 128 ? 7 : 3);
  return Address ^ (Pattern << 4);
}

Expected<LdmatrixRowAddress>
nvfp4::target::getMmaSyncLdmatrixAddressA(uint32_t Lane) {
  if (Lane >= 32)
    return Status::error("ldmatrix: lane " + std::to_string(Lane));
  uint32_t Matrix = Lane / 8;
  return LdmatrixRowAddress{Lane % 8 + 8 * (Matrix % 2), Matrix / 2};
}

Expected<LdmatrixRowAddress>
nvfp4::target::getMmaSyncLdmatrixAddressB(uint32_t Lane) {
  if (Lane >= 32)
    return Status::error("ldmatrix: lane " + std::to_string(Lane));
  uint32_t Matrix = Lane / 8;
  return LdmatrixRowAddress{Lane % 8 + 8 * (Matrix / 2), Matrix % 2};
}

Expected<MmaSyncFragmentBytes>
nvfp4::target::getMmaSyncFragmentBytesA(uint32_t Lane, uint32_t Reg) {
  if (Lane >= 32 || Reg >= 4)
    return Status::error("mma.m16n8k64 A fragment: lane " +
                         std::to_string(Lane) + ", register " +
                         std::to_string(Reg));
  uint32_t G = Lane / 4, T = Lane % 4;
  return MmaSyncFragmentBytes{G + 8 * (Reg % 2), 16 * (Reg / 2) + 4 * T};
}

Expected<MmaSyncFragmentBytes>
nvfp4::target::getMmaSyncFragmentBytesB(uint32_t Lane, uint32_t Reg) {
  if (Lane >= 32 || Reg >= 2)
    return Status::error("mma.m16n8k64 B fragment: lane " +
                         std::to_string(Lane) + ", register " +
                         std::to_string(Reg));
  uint32_t G = Lane / 4, T = Lane % 4;
  return MmaSyncFragmentBytes{G, 16 * Reg + 4 * T};
}
