//===- Tcgen05Encoding.h - Blackwell/Hopper MMA operand encodings -*- C++
//-*-===//
//
// Part of the nvfp4 project.
//
//===----------------------------------------------------------------------===//
//
// The bit-level encodings that the GPU code generator materialises as
// constants (or builds at run time) for the Blackwell tensor-core path, plus
// the scale-factor placement rules that the kernels must follow:
//
//   1. the 32-bit tcgen05.mma instruction descriptor for the block-scaled
//      kinds (.kind::mxf8f6f4, .kind::mxf4, .kind::mxf4nvf4) and for the
//      16-bit .kind::f16 (the BF16 GEMM),
//   2. the 64-bit shared-memory matrix descriptor of tcgen05 (and the Hopper
//      wgmma variant, which shares the skeleton),
//   3. Tensor Memory addresses, allocation sizes, accumulator footprints and
//      where block scale factors live in Tensor Memory (tcgen05.cp plans),
//   4. the scale-factor layouts: the sm_100a/sm_103a 128x4 atom and the
//      sm_120a mma.sync register layout.
//
// Every field table is transcribed from the PTX ISA (section numbers of PTX
// ISA 8.8/9.1, "9.7.16.*"; later revisions renumber tcgen05 to 9.7.17 and
// 9.7.18 without changing the tables) or from CUTLASS where the PTX ISA only
// has a figure; docs/Blackwell.md lists the sources and what is unverified.
//
// Inputs come from user-derived shapes, so nothing here asserts: every
// encoder validates and returns an error message meant for a diagnostic.
// The library is plain C++17 without MLIR/LLVM; it reuses the header-only
// Status/Expected pair of the numerics library.
//
//===----------------------------------------------------------------------===//

#ifndef NVFP4_TARGET_TCGEN05ENCODING_H
#define NVFP4_TARGET_TCGEN05ENCODING_H

#include "nvfp4/Numerics/Status.h"

#include <cstdint>
#include <optional>

namespace nvfp4::target {

using numerics::Expected;
using numerics::Status;

//===----------------------------------------------------------------------===//
// Instruction descriptor (PTX ISA 9.7.16.4.2, Tables 43 and 44)
//===----------------------------------------------------------------------===//

/// The block-scaled tcgen05.mma kinds.
enum class MmaKind : uint8_t {
  MXF8F6F4, ///< .kind::mxf8f6f4 (Table 43), UE8M0 scales, scale_vec::1X.
  MXF4,     ///< .kind::mxf4 (Table 44), UE8M0 scales, scale_vec::2X.
  MXF4NVF4, ///< .kind::mxf4nvf4 (Table 44), UE8M0 or UE4M3 (NVFP4) scales.
};

/// The .cta_group qualifier: one CTA, or a CTA pair sharing the MMA.
enum class CtaGroup : uint8_t { One = 1, Two = 2 };

/// The .scale_vec::NX qualifier: how many scale factors one row of A (one
/// column of B) carries per MMA (Table 54). `.block16` is an alias of X4;
/// `.block32` is X1 for mxf8f6f4 and X2 for mxf4/mxf4nvf4. With K = 96, X2
/// means 3 scales (block32) and X4 means 6 scales (block16).
enum class ScaleVecSize : uint8_t { X1 = 1, X2 = 2, X4 = 4 };

/// Scale element type: instruction descriptor bit 23 ("Scale Matrix Type").
enum class ScaleFactorType : uint8_t { UE4M3 = 0, UE8M0 = 1 };

/// Operand element types of the block-scaled kinds. The encoder maps them to
/// the per-kind codes (E2M1 is 5 in .kind::mxf8f6f4 but 1 in .kind::mxf4*).
enum class ElementType : uint8_t { E2M1, E4M3, E5M2, E2M3, E3M2 };

/// Everything that determines a block-scaled instruction descriptor.
struct BlockScaledMmaConfig {
  MmaKind Kind = MmaKind::MXF4NVF4;
  CtaGroup Group = CtaGroup::One;
  /// M of the whole MMA: 128 for cta_group::1; 128 or 256 for cta_group::2
  /// (the pair's combined M).
  uint32_t M = 128;
  uint32_t N = 128;
  /// Logical K of one MMA: 64 (dense) / 128 (sparse) for mxf4*, 32 / 64 for
  /// mxf8f6f4, and 96 (dense mxf4*: cta_group::2 with M = 256, or on
  /// sm_103a cta_group::1 with M = 128).
  uint32_t K = 64;
  bool Sparse = false;
  ElementType AType = ElementType::E2M1;
  ElementType BType = ElementType::E2M1;
  ScaleFactorType ScaleType = ScaleFactorType::UE4M3;
  ScaleVecSize VecSize = ScaleVecSize::X4;
  bool NegateA = false;
  bool NegateB = false;
  /// Transpose = MN-major operand. Not allowed for mxf4/mxf4nvf4.
  bool TransposeA = false;
  bool TransposeB = false;
  /// "Scale Factor A/B ID": which byte sub-column of the scale words in
  /// Tensor Memory the MMA reads (9.7.16.10.7.2/3).
  uint32_t ScaleFactorAId = 0;
  uint32_t ScaleFactorBId = 0;
};

/// A block-scaled instruction descriptor, field by field (the values stored
/// in the bits, not the logical quantities) plus the packed word.
struct BlockScaledInstrDesc {
  uint32_t Sparse = 0;         ///< bit 2.
  uint32_t ScaleFactorBId = 0; ///< bits 4-5.
  uint32_t AType = 0;          ///< bits 7-9.
  uint32_t BType = 0;          ///< bits 10-11 (mxf4*) or 10-12 (mxf8f6f4).
  uint32_t NegateA = 0;        ///< bit 13.
  uint32_t NegateB = 0;        ///< bit 14.
  uint32_t TransposeA = 0;     ///< bit 15.
  uint32_t TransposeB = 0;     ///< bit 16.
  uint32_t NDim = 0;           ///< bits 17-22: N >> 3.
  uint32_t ScaleType = 0;      ///< bit 23: UE4M3 = 0, UE8M0 = 1.
  uint32_t MDim = 0;           ///< bits 27-28: M >> 7.
  uint32_t ScaleFactorAId = 0; ///< bits 29-30.
  uint32_t KDim = 0;           ///< bit 31 (mxf4*): K = 96 when 1.
  /// Bits that every table marks reserved (0-1, 3, 6, 24-26, and 12 / 31 as
  /// the kind dictates); non-zero only when decoding a foreign value.
  uint32_t Reserved = 0;
  uint32_t Value = 0; ///< The packed 32-bit descriptor.
};

/// Checks M/N/K against PTX ISA 9.7.16.2.1 Table 39 (block-scaled rows,
/// no .ws): the error message names the violated rule.
Status verifyBlockScaledMmaShape(MmaKind Kind, CtaGroup Group, uint32_t M,
                                 uint32_t N, uint32_t K, bool Sparse);

/// Number of scale factors one row of A carries per MMA (Table 54).
Expected<uint32_t> getScaleFactorsPerRow(MmaKind Kind, ScaleVecSize VecSize,
                                         uint32_t K);

/// Validates `Config` and packs the instruction descriptor.
Expected<BlockScaledInstrDesc>
encodeBlockScaledInstrDesc(const BlockScaledMmaConfig &Config);

/// Splits a packed descriptor into its fields (no validation). `Kind`
/// selects the width of the B-type field and the meaning of bit 31.
BlockScaledInstrDesc decodeBlockScaledInstrDesc(uint32_t Value, MmaKind Kind);

/// The NVFP4 GEMM descriptor: .kind::mxf4nvf4, E2M1 x E2M1, UE4M3 scales,
/// .block16 (scale_vec::4X), dense, K = 64, K-major, scale IDs 0.
Expected<BlockScaledInstrDesc> encodeNvfp4InstrDesc(CtaGroup Group, uint32_t M,
                                                    uint32_t N);

/// The K = 96 NVFP4 descriptor (bit 31; sm_103a with cta_group::1, M =
/// 128): scale factor IDs `ScaleFactorId` (0 or 2) for both operands.
Expected<BlockScaledInstrDesc> encodeNvfp4K96InstrDesc(CtaGroup Group,
                                                       uint32_t M, uint32_t N,
                                                       uint32_t ScaleFactorId);

/// The MX GEMM descriptors (docs/Blackwell.md section 10): MXFP8 through
/// .kind::mxf8f6f4 (`AType`/`BType` E4M3 or E5M2, K = 32, .scale_vec::1X)
/// and MXFP4 through .kind::mxf4 (E2M1 x E2M1, K = 64, .scale_vec::2X),
/// UE8M0 scales, dense, K-major, scale factor IDs `ScaleFactorId` for both
/// operands (1X: byte 0-3 of the scale word, 2X: half word 0 or 2).
Expected<BlockScaledInstrDesc> encodeMXInstrDesc(MmaKind Kind,
                                                 ElementType AType,
                                                 ElementType BType,
                                                 CtaGroup Group, uint32_t M,
                                                 uint32_t N,
                                                 uint32_t ScaleFactorId);

/// Bytes of codes of one row that one K step of the tcgen05 and sm_120a
/// GEMMs holds (one 128-byte swizzle row), and what one MMA reads of them:
/// 64 E2M1 codes (mxf4*) or 32 one-byte codes (mxf8f6f4) = 32 bytes. So
/// every kind issues 4 MMAs per K step.
inline constexpr uint32_t kKStepRowBytes = 128;
inline constexpr uint32_t kMmaRowBytes = 32;
inline constexpr uint32_t kMmasPerKStep = kKStepRowBytes / kMmaRowBytes;

/// Where MMA `Index` (0-3) of a K step reads its scales, when the step's
/// scales are stored as 128x4 atoms -- atom a holds scale blocks 4a..4a+3
/// of the step, and tcgen05.cp.32x128b.warpx4 puts block 4a + j of row r
/// into byte j of the row's word (section 3) -- at Tensor Memory columns 4
/// apart:
///
///   4X (NVFP4, 16-element blocks: 4 per MMA)  atom Index,     ID 0;
///   2X (MXFP4, 32-element blocks: 2 per MMA)  atom Index / 2, ID 2 (Index % 2);
///   1X (MXFP8, 32 one-byte codes: 1 per MMA)  atom 0,         ID Index.
///
/// The ID is the byte (1X) or half word (2X) offset of the MMA's scales in
/// the word (PTX ISA 9.7.16.10.7.2.1-3 and 9.7.16.10.7.3.1-3). The same
/// bytes are the byte-id selector of sm_120a's mma.sync forms.
struct KStepMmaScales {
  uint32_t ScaleAtom = 0;     ///< The atom (group of 4 TMEM columns).
  uint32_t ScaleFactorId = 0; ///< The scale factor ID / byte-id.
};
Expected<KStepMmaScales> getKStepMmaScales(ScaleVecSize VecSize,
                                           uint32_t Index);

/// 128x4 scale atoms per K step: 4 (4X), 2 (2X), 1 (1X).
uint32_t getKStepScaleAtoms(ScaleVecSize VecSize);

/// Codes of E2M1 that one K-major SWIZZLE_128B row holds (128 bytes), and
/// the K of the group after which K = 96 MMAs line up with such rows again:
/// lcm(96, 256) = 768 codes = 8 MMAs over 3 rows.
inline constexpr uint32_t kK96RowCodes = 256;
inline constexpr uint32_t kK96GroupK = 768;
inline constexpr uint32_t kK96MmasPerGroup = kK96GroupK / 96;

/// Where K = 96 MMA `Index` (0-7) of a 768-code group reads its operands
/// and scales, for operands whose group is 3 consecutive 128-byte swizzle
/// rows (row r = codes 256r..256r+255, each in its own 1024-byte aligned
/// tile) and scales stored as 128x4 atoms, atom a = blocks 4a..4a+3 of the
/// group, at Tensor Memory columns 4a apart.
///
/// An MMA reads 48 bytes of each row of A and B. Where they cross a 128-byte
/// row (MMAs 2 and 5), the descriptor uses the absolute leading-dimension
/// mode: bits 16-29 hold the address of the second chunk, the start of the
/// next row (PTX ISA 9.7.16.3.1.2 "Absolute address mode for K dimension
/// being 48B"). CUTLASS's sm_103 ultra mainloop sets that field for every
/// MMA, to the start of the row in which the MMA ends; so does this plan.
/// Its 6 scales per row start at byte ScaleFactorId of atom ScaleAtom's
/// word and continue into the next atom's (9.7.16.10.7.2: 0 or 2).
struct K96MmaStep {
  uint32_t FirstRow = 0;      ///< The row holding the MMA's first byte.
  uint32_t ByteOffset = 0;    ///< Its first byte inside that row.
  uint32_t LastRow = 0;       ///< The row holding its last byte.
  bool Straddles = false;     ///< FirstRow != LastRow.
  uint32_t ScaleAtom = 0;     ///< The atom holding its first scale.
  uint32_t ScaleFactorId = 0; ///< That scale's byte in the atom's words.
};
Expected<K96MmaStep> getK96MmaStep(uint32_t Index);

//===----------------------------------------------------------------------===//
// Instruction descriptor of .kind::f16 (PTX ISA 9.7.16.4.2, Table 42)
//===----------------------------------------------------------------------===//

/// Operand (atype / btype) and accumulator (dtype) types of .kind::f16.
enum class F16OperandType : uint8_t { F16 = 0, BF16 = 1 };
enum class F16AccumulatorType : uint8_t { F16 = 0, F32 = 1 };

/// Everything that determines a dense .kind::f16 instruction descriptor
/// (no .ws: bits 30-31, the B-reuse shift of .ws, stay 0).
struct F16MmaConfig {
  CtaGroup Group = CtaGroup::One;
  /// M of the whole MMA: 64 or 128 for cta_group::1, 128 or 256 for
  /// cta_group::2 (Table 39).
  uint32_t M = 128;
  uint32_t N = 128;
  F16OperandType AType = F16OperandType::BF16;
  F16OperandType BType = F16OperandType::BF16;
  F16AccumulatorType DType = F16AccumulatorType::F32;
  bool NegateA = false;
  bool NegateB = false;
  /// Transpose = MN-major operand.
  bool TransposeA = false;
  bool TransposeB = false;
};

/// A .kind::f16 instruction descriptor, field by field, and the packed word.
struct F16InstrDesc {
  uint32_t DType = 0;      ///< bits 4-5: F16 = 0, F32 = 1.
  uint32_t AType = 0;      ///< bits 7-9: F16 = 0, BF16 = 1.
  uint32_t BType = 0;      ///< bits 10-12.
  uint32_t NegateA = 0;    ///< bit 13.
  uint32_t NegateB = 0;    ///< bit 14.
  uint32_t TransposeA = 0; ///< bit 15.
  uint32_t TransposeB = 0; ///< bit 16.
  uint32_t NDim = 0;       ///< bits 17-22: N >> 3.
  uint32_t MDim = 0;       ///< bits 24-28: M >> 4.
  uint32_t Value = 0;
};

/// K of one dense .kind::f16 MMA (Table 39): 16 elements = 32 bytes of a
/// K-major row, as one block-scaled MMA's 32 code bytes (kMmaRowBytes).
inline constexpr uint32_t kF16MmaK = 16;

/// Validates `Config` against Table 39 (dense .kind::f16 rows without .ws:
/// BF16 operands need an F32 accumulator) and packs its descriptor.
Expected<F16InstrDesc> encodeF16InstrDesc(const F16MmaConfig &Config);

/// The BF16 GEMM descriptor: BF16 x BF16 -> F32, dense, both operands
/// K-major, no negation.
Expected<F16InstrDesc> encodeBF16InstrDesc(CtaGroup Group, uint32_t M,
                                           uint32_t N);

//===----------------------------------------------------------------------===//
// Shared-memory matrix descriptors (PTX ISA 9.7.16.4.1 Table 40 for tcgen05,
// 9.7.15.5.1.2.2 for wgmma)
//===----------------------------------------------------------------------===//

/// Swizzling mode of a shared-memory operand, independent of its encoding.
enum class SmemSwizzle : uint8_t {
  None,          ///< No swizzling (interleaved core matrices).
  Bytes32,       ///< 32-byte swizzle.
  Bytes64,       ///< 64-byte swizzle.
  Bytes128,      ///< 128-byte swizzle (16-byte atoms).
  Bytes128Atom32 ///< 128-byte swizzle with 32-byte atoms (tcgen05 only).
};

/// Bit 52 of the tcgen05 descriptor: how bits 16-29 are interpreted.
enum class LeadingDimMode : uint8_t {
  RelativeOffset = 0, ///< Byte offset between columns (the usual mode).
  AbsoluteAddress = 1 ///< Address of the second 128B chunk (K = 48 bytes).
};

/// The logical contents of a shared-memory descriptor, in bytes.
struct SmemDescriptorConfig {
  uint32_t StartAddress = 0;         ///< .shared::cta byte address.
  uint32_t LeadingDimByteOffset = 0; ///< LBO, or an address in absolute mode.
  uint32_t StrideDimByteOffset = 0;  ///< SBO.
  uint32_t BaseOffset = 0;           ///< Matrix base offset, 0-7.
  LeadingDimMode LeadingMode = LeadingDimMode::RelativeOffset;
  SmemSwizzle Swizzle = SmemSwizzle::None;
};

/// A shared-memory descriptor, field by field, plus the packed value.
struct SmemDescriptor {
  uint32_t StartAddress = 0;   ///< bits 0-13: encode(start address).
  uint32_t LeadingDim = 0;     ///< bits 16-29: encode(LBO or address).
  uint32_t StrideDim = 0;      ///< bits 32-45: encode(SBO).
  uint32_t FixedConstant = 0;  ///< bits 46-48: 0b001 (tcgen05); 0 (wgmma).
  uint32_t BaseOffset = 0;     ///< bits 49-51.
  uint32_t LeadingDimMode = 0; ///< bit 52 (tcgen05); reserved for wgmma.
  uint32_t SwizzleMode = 0;    ///< bits 61-63 (tcgen05) or 62-63 (wgmma).
  /// Bits reserved by the table (14-15, 30-31, 53-60, and 46-48/52/61 for
  /// wgmma); non-zero only when decoding a foreign value.
  uint64_t Reserved = 0;
  uint64_t Value = 0; ///< The packed 64-bit descriptor.
};

/// matrix-descriptor-encode(x) = (x & 0x3FFFF) >> 4 (both tables).
constexpr uint32_t encodeMatrixDescriptorField(uint32_t Bytes) {
  return (Bytes & 0x3FFFFu) >> 4;
}

/// The swizzle field code of tcgen05 (bits 61-63): 0 none, 1 128B with 32B
/// atoms, 2 128B, 4 64B, 6 32B.
uint32_t getTcgen05SwizzleCode(SmemSwizzle Swizzle);

/// The swizzle field code of wgmma (bits 62-63): 0 none, 1 128B, 2 64B,
/// 3 32B. Fails for the 32-byte-atom 128B mode, which Hopper lacks.
Expected<uint32_t> getWgmmaSwizzleCode(SmemSwizzle Swizzle);

/// Bytes after which a swizzle pattern repeats (PTX Table 41): 1024, 512,
/// 256. Fails for None and for the 32-byte-atom mode (not in the table).
Expected<uint32_t> getSwizzleRepeatBytes(SmemSwizzle Swizzle);

/// The "matrix base offset" for a swizzled operand whose repeating pattern
/// starts at `PatternStartAddress`: 0 on a pattern boundary, otherwise
/// (address >> 7) & 7 (PTX 9.7.16.4.1).
Expected<uint32_t> computeMatrixBaseOffset(uint32_t PatternStartAddress,
                                           SmemSwizzle Swizzle);

/// Validates and packs a tcgen05 shared-memory descriptor (tcgen05.mma
/// operands A/B and the tcgen05.cp source).
Expected<SmemDescriptor>
encodeTcgen05SmemDescriptor(const SmemDescriptorConfig &Config);

/// Splits a tcgen05 descriptor into its fields (no validation).
SmemDescriptor decodeTcgen05SmemDescriptor(uint64_t Value);

/// Validates and packs a Hopper wgmma shared-memory descriptor. Absolute
/// leading-dimension mode and 32-byte-atom swizzling do not exist there.
Expected<SmemDescriptor>
encodeWgmmaSmemDescriptor(const SmemDescriptorConfig &Config);

/// Splits a wgmma descriptor into its fields (no validation).
SmemDescriptor decodeWgmmaSmemDescriptor(uint64_t Value);

//===----------------------------------------------------------------------===//
// Tensor Memory (PTX ISA 9.7.16.1.1, 9.7.16.1.2, 9.7.16.7.1, 9.7.16.10.5)
//===----------------------------------------------------------------------===//

inline constexpr uint32_t kTmemLanes = 128;   ///< Lanes (rows) per CTA.
inline constexpr uint32_t kTmemColumns = 512; ///< 32-bit columns per CTA.
inline constexpr uint32_t kTmemMinAllocColumns = 32;

/// A Tensor Memory address: lane in bits 31-16, column in bits 15-0.
struct TmemAddress {
  uint32_t Lane = 0;
  uint32_t Column = 0;
  uint32_t Value = 0;
};

/// Packs (lane, column); fails outside 128 lanes x 512 columns.
Expected<TmemAddress> encodeTmemAddress(uint32_t Lane, uint32_t Column);

/// Splits a Tensor Memory address (no validation).
TmemAddress decodeTmemAddress(uint32_t Value);

/// Checks an nCols operand of tcgen05.alloc/dealloc: a power of 2 in
/// [32, 512].
Status verifyTmemAllocColumns(uint32_t NumColumns);

/// The smallest legal tcgen05.alloc column count holding `RequiredColumns`.
Expected<uint32_t> getTmemAllocColumns(uint32_t RequiredColumns);

/// A rectangle of Tensor Memory in one CTA.
struct TmemRegion {
  uint32_t Lanes = 0;
  uint32_t Columns = 0; ///< 32-bit columns.
};

/// The per-CTA footprint of an M x N FP32 accumulator: data-path Layout D
/// (M = 128, cta_group::1) and Layout A (M = 256, cta_group::2) put one
/// row per lane and one column per N, so both are 128 lanes x N columns.
/// Other layouts (M = 128 with cta_group::2, M = 64, .ws) are rejected.
Expected<TmemRegion> getAccumulatorTmemFootprint(uint32_t M, uint32_t N,
                                                 CtaGroup Group);

/// Where one operand's scale factors live in Tensor Memory for one MMA
/// (9.7.16.10.7; CUTLASS UMMA::tmem_sf_frg, 4x1 data path).
struct ScaleFactorTmemLayout {
  uint32_t ScalesPerRow = 0;  ///< Scale bytes per row per MMA.
  uint32_t ColumnsPerMma = 0; ///< 32-bit columns one MMA reads.
};

/// The Tensor Memory footprint of the scale factors of `Rows` rows of A
/// (or columns of B) for one MMA with scale_vec::4X/2X/1X and K = 64/32
/// (dense) or the sparse K: row r sits in lane r % 32 of every 32-lane
/// sub-partition and in column r / 32, its scales in bytes 0..S-1 (4X) of
/// that word. K = 96 (scales spanning words) is rejected.
Expected<ScaleFactorTmemLayout> getScaleFactorTmemLayout(uint32_t Rows,
                                                         ScaleVecSize VecSize);

/// Location of scale (row, scale index) relative to the column where an
/// MMA's scale operand starts: lane = row % 32 (+ 32 q for every
/// sub-partition q, all holding copies), column = row / 32, byte =
/// scale index + sub-column selected by the scale factor ID. The PTX ISA
/// shows this placement only as figures (9.7.16.10.7.2); the row -> (lane,
/// column) rule is CUTLASS's UMMA::tmem_sf_frg (4x1 data path), and the unit
/// tests check that it is what tcgen05.cp.32x128b.warpx4 produces from the
/// 128x4 atom. cta_group::2's 2x2 SFB data path is not modelled.
struct ScaleFactorTmemLocation {
  uint32_t Lane = 0;   ///< Lane in sub-partition 0 (copies in +32, +64, +96).
  uint32_t Column = 0; ///< Column offset from the operand's start column.
  uint32_t Byte = 0;   ///< Byte within the 32-bit Tensor Memory word.
};
Expected<ScaleFactorTmemLocation>
getScaleFactorTmemLocation(uint32_t Row, uint32_t ScaleIndex,
                           ScaleVecSize VecSize, uint32_t ScaleFactorId);

/// tcgen05.cp shapes (PTX ISA 9.7.16.9.2 / 9.7.16.2.3).
enum class Tcgen05CpShape : uint8_t {
  Lanes128x256b,
  Lanes4x256b,
  Lanes128x128b,
  Lanes64x128b,
  Lanes32x128b,
};

/// tcgen05.cp multicast qualifiers.
enum class Tcgen05CpMulticast : uint8_t {
  None,
  Warpx2_02_13,
  Warpx2_01_23,
  Warpx4,
};

/// Checks the shape/multicast pairing: .64x128b needs a .warpx2 form,
/// .32x128b needs .warpx4, the other shapes take none.
Status verifyTcgen05CpShape(Tcgen05CpShape Shape, Tcgen05CpMulticast Multicast);

/// Bytes one tcgen05.cp of `Shape` reads from shared memory
/// (lanes x bits / 8, before multicast).
uint32_t getTcgen05CpSourceBytes(Tcgen05CpShape Shape);

/// How to move a [Rows x ScaleBlocks] UE4M3/UE8M0 scale tile, stored in
/// shared memory as 128x4 atoms (512 bytes each, the sm_100a atom layout),
/// into Tensor Memory for tcgen05.mma with scale_vec::4X: one
/// tcgen05.cp.32x128b.warpx4 per atom. Atom (m, k) (rows 128m.., scale
/// blocks 4k..) is read at shared byte offset m * AtomStrideM + k *
/// AtomStrideK from the tile base and lands at column
/// ColumnBase + (k * AtomsM + m) * 4, i.e. MMA step k reads its scales at
/// ColumnBase + k * ColumnsPerMmaStep.
struct ScaleFactorCopyPlan {
  Tcgen05CpShape Shape = Tcgen05CpShape::Lanes32x128b;
  Tcgen05CpMulticast Multicast = Tcgen05CpMulticast::Warpx4;
  uint32_t AtomsM = 0;            ///< Rows / 128.
  uint32_t AtomsK = 0;            ///< ScaleBlocks / 4 (MMA steps).
  uint32_t AtomStrideM = 0;       ///< Shared bytes between M atoms.
  uint32_t AtomStrideK = 0;       ///< Shared bytes between K atoms.
  uint32_t ColumnsPerCopy = 4;    ///< 32-bit columns written per copy.
  uint32_t ColumnsPerMmaStep = 0; ///< AtomsM * 4.
  uint32_t TotalColumns = 0;      ///< AtomsM * AtomsK * 4.
  /// Descriptor fields for the first atom: no swizzle, SBO = 128 (8 rows of
  /// 16 bytes), LBO = 16 (unused: the 16-byte row is a single core-matrix
  /// column; 16 is CUTLASS's value).
  SmemDescriptorConfig FirstAtom;
};

/// Plans the copies. `Rows` must be a positive multiple of 128 and
/// `ScaleBlocks` a positive multiple of 4 (pad with zero scales, as
/// NUMERICS.md section 8 requires). `AtomStrideM`/`AtomStrideK` of 0 select
/// the global 128x4 swizzled order: K atoms contiguous, then M.
Expected<ScaleFactorCopyPlan> planScaleFactorCopy(uint32_t Rows,
                                                  uint32_t ScaleBlocks,
                                                  uint32_t SmemTileAddress,
                                                  uint32_t AtomStrideM = 0,
                                                  uint32_t AtomStrideK = 0);

/// The shared source address and Tensor Memory column of copy (m, k).
struct ScaleFactorCopy {
  uint32_t SmemAddress = 0;
  uint32_t TmemColumnOffset = 0; ///< Relative to the plan's column base.
};
Expected<ScaleFactorCopy> getScaleFactorCopy(const ScaleFactorCopyPlan &Plan,
                                             uint32_t AtomM, uint32_t AtomK);

//===----------------------------------------------------------------------===//
// Scale-factor layouts
//===----------------------------------------------------------------------===//

inline constexpr uint32_t kScaleAtomRows = 128;
inline constexpr uint32_t kScaleAtomBlocks = 4;
inline constexpr uint32_t kScaleAtomBytes = 512;

/// Byte offset of (row, scale block) inside one 128x4 atom as CUTLASS's
/// sm_100 atom lays it out (Sm1xxBlockScaledBasicChunk, K-major):
/// Shape ((32,4),(V,4)) : Stride ((16,4),(0,1)), i.e.
/// (row % 32) * 16 + (row / 32) * 4 + block.
Expected<uint32_t> getSm100ScaleAtomOffset(uint32_t Row, uint32_t Block);

/// The same for CUTLASS's sm_103 atom (Sm103BlockScaledBasicChunk):
/// Shape ((8,4,4),(V,4)) : Stride ((16,128,4),(0,1)), i.e.
/// (row % 8) * 16 + ((row / 8) % 4) * 128 + (row / 32) * 4 + block.
/// It is a different factorisation of the same function: the unit tests
/// prove the two agree on all 512 positions.
Expected<uint32_t> getSm103ScaleAtomOffset(uint32_t Row, uint32_t Block);

/// Offset of scale (Row, Block) in a zero-padded [PaddedRows, PaddedBlocks]
/// 128x4-swizzled buffer (NUMERICS.md section 8):
/// ((row/128) * (C/4) + block/4) * 512 + atom offset.
Expected<uint64_t> getSwizzledScaleOffset(uint64_t Row, uint64_t Block,
                                          uint64_t PaddedRows,
                                          uint64_t PaddedBlocks);

/// Which chips take which scale layout.
enum class ScaleLayoutKind : uint8_t {
  Swizzled128x4, ///< sm_100a and sm_103a: 128x4 atoms, tcgen05.cp to TMEM.
  Registers,     ///< sm_120a: mma.sync takes scales from registers.
};

/// The mma.sync block-scale selectors {byte-id, thread-id} of one operand.
struct MmaSyncScaleSelector {
  uint16_t ByteId = 0;
  uint16_t ThreadId = 0;
};

/// Checks a selector of mma.sync.m16n8k64/m16n8k32 .block_scale: byte-id
/// must be 0 for 4X, 0 or 2 for 2X, 0-3 for 1X; thread-id is 0-1 for A and
/// 0-3 for B (ranges checked against ptxas 13.0 for sm_120a).
Status verifyMmaSyncScaleSelector(ScaleVecSize VecSize, bool IsOperandA,
                                  MmaSyncScaleSelector Selector);

/// A scale's home in the warp: `Lane` holds it in byte `Byte` of its
/// scale-data register.
struct RegisterScaleLocation {
  uint32_t Lane = 0;
  uint32_t Byte = 0;
};

/// sm_120a mma.sync.m16n8k64 .kind::mxf4nvf4 .scale_vec::4X: the scale of
/// A row `Row` (0-15), K block `Block` (0-3, 16 elements each) lives in
/// lane 4 * (row % 8) + 2 * thread-id-a + row / 8, byte `Block`.
///
/// Source: CUTLASS cute/atom/mma_traits_sm120.hpp (SFALayout/SFBLayout of
/// SM120_16x8x64_TN_VS, which always issues {byte-id, thread-id} = {0, 0})
/// fixes the thread-id 0 case; CUTLASS gives the lanes of the other
/// thread-id the same values, which is consistent with, but does not prove,
/// the thread-id != 0 formula used here (docs/Blackwell.md lists it as
/// unverified). The code generator should use selector {0, 0}.
Expected<RegisterScaleLocation>
getMmaSyncScaleALocation(uint32_t Row, uint32_t Block,
                         MmaSyncScaleSelector Selector);

/// The same for B column `Col` (0-7): lane 4 * col + thread-id-b.
Expected<RegisterScaleLocation>
getMmaSyncScaleBLocation(uint32_t Col, uint32_t Block,
                         MmaSyncScaleSelector Selector);

/// The A row whose scales lane `Lane` must hold, or nullopt if the MMA
/// ignores that lane's register (inverse of getMmaSyncScaleALocation).
std::optional<uint32_t>
getMmaSyncScaleARowForLane(uint32_t Lane, MmaSyncScaleSelector Selector);

/// The B column whose scales lane `Lane` must hold, or nullopt.
std::optional<uint32_t>
getMmaSyncScaleBColForLane(uint32_t Lane, MmaSyncScaleSelector Selector);

/// Byte offset of byte `ByteInRow` of row `Row` in a K-major tile of
/// `RowBytes`-byte rows (64 or 128) written by TMA with the swizzle of the
/// same span (CU_TENSOR_MAP_SWIZZLE_64B / _128B), the tile starting on a
/// 1024-byte boundary: the swizzle XORs address bits 7-9 (128B) or 7-8 (64B)
/// into the 16-byte chunk bits 4-6 / 4-5. So chunk c of row r lands at
/// chunk c ^ (r % 8) (128B) or c ^ ((r / 2) % 4) (64B). CuTe calls these
/// Swizzle<3,4,3> and Swizzle<2,4,3> (CUTLASS's sm_120a kernel stores its
/// 128x128x128 code tiles in the latter).
Expected<uint32_t> getSwizzledTileOffset(uint32_t Row, uint32_t ByteInRow,
                                         uint32_t RowBytes);

/// The row address one lane gives ldmatrix.sync.aligned.m8n8.x4.shared.b16
/// when the four 8x8 matrices it loads are one mma.sync.m16n8k64 e2m1
/// operand: row `Row` of the block (A: 0-15 of the m16 block; B: 0-15 of
/// two adjacent n8 blocks, columns of B) and half `Half` (0 or 1) of the
/// MMA's 32 code bytes of that row (16 bytes = one 8 x b16 matrix row).
struct LdmatrixRowAddress {
  uint32_t Row = 0;
  uint32_t Half = 0;
};

/// A (m16 x k64): lane l addresses matrix l / 8, row l % 8; matrix j is
/// (rows 8 (j % 2).., half j / 2), so ldmatrix's result register j is the
/// MMA's a_j (PTX ISA 9.7.14.5, "Matrix fragments for mma.m16n8k64": a0 row
/// g, a1 row g + 8, a2 and a3 the same rows 16 bytes on). CUTLASS's
/// SM75_U32x4_LDSM_N for SM120_16x8x64_TN_VS gives the same rows (test
/// MmaSyncLayout.LdmatrixAddressesMatchCutlass79a).
Expected<LdmatrixRowAddress> getMmaSyncLdmatrixAddressA(uint32_t Lane);

/// B (two n8 x k64 blocks): matrix j is (columns 8 (j / 2).., half j % 2):
/// result registers 0-1 are b0-b1 of the first n8 block, 2-3 of the second.
Expected<LdmatrixRowAddress> getMmaSyncLdmatrixAddressB(uint32_t Lane);

/// What the MMA expects in fragment register `Reg` of lane `Lane` (PTX ISA
/// 9.7.14.5, .e2m1 laid out as .u4: 8 codes = 4 bytes per register): the
/// row of the operand block and the first of the 4 bytes in the row's 32.
/// A: Reg 0-3, rows 0-15; B: Reg 0-1 of one n8 block, rows 0-7 (columns).
struct MmaSyncFragmentBytes {
  uint32_t Row = 0;
  uint32_t Byte = 0;
};
Expected<MmaSyncFragmentBytes> getMmaSyncFragmentBytesA(uint32_t Lane,
                                                        uint32_t Reg);
Expected<MmaSyncFragmentBytes> getMmaSyncFragmentBytesB(uint32_t Lane,
                                                        uint32_t Reg);

} // namespace nvfp4::target

#endif // NVFP4_TARGET_TCGEN05ENCODING_H
