//===- Chip.h - NVFP4 code generation targets -------------------*- C++ -*-===//
//
// Part of the nvfp4 project.
//
//===----------------------------------------------------------------------===//
//
// What each supported GPU offers NVFP4 code generation: which instructions
// exist, the PTX version and LLVM features they need, how the block-scaled
// MMA wants its scale factors, and the GEMM tile configuration. The code
// generators ask this table before they emit an instruction, so a chip that
// lacks one gets a diagnostic instead of an LLVM "Cannot select" abort.
// Facts: PTX ISA 8.8 (cvt, tcgen05, mma.sync block_scale tables),
// docs/Numerics.md section 9, TOOLCHAIN.md.
//
//===----------------------------------------------------------------------===//

#ifndef NVFP4_TARGET_CHIP_H
#define NVFP4_TARGET_CHIP_H

#include <cstdint>
#include <string>
#include <string_view>

namespace nvfp4::target {

/// Instructions (or instruction families) the generators may use.
enum class Instruction : uint32_t {
  /// cvt.rn.satfinite.e2m1x2.f32 (PTX 8.6).
  CvtE2M1x2 = 1u << 0,
  /// cvt.rs.satfinite.e2m1x4.f32, hardware stochastic rounding (PTX 8.7).
  CvtRsE2M1x4 = 1u << 1,
  /// cvt.rn.satfinite.e4m3x2.f32 and e4m3x2 -> f16x2 (PTX 8.1, sm_89+).
  CvtE4M3x2 = 1u << 2,
  /// tcgen05.alloc/cp/mma/commit/ld with kind::mxf4nvf4 block_scale.
  Tcgen05BlockScaleMma = 1u << 3,
  /// mma.sync.aligned.m16n8k64...kind::mxf4nvf4.block_scale...ue4m3.
  MmaSyncBlockScale = 1u << 4,
  /// wgmma.mma_async (Hopper warpgroup MMA).
  Wgmma = 1u << 5,
  /// cp.async.bulk.tensor (TMA) with mbarrier completion.
  Tma = 1u << 6,
  /// Thread-block clusters.
  Clusters = 1u << 7,
  /// mma.sync m16n8k16 with bf16 inputs and f32 accumulation.
  MmaSyncBF16 = 1u << 8,
  /// The dense K = 96 form of tcgen05.mma.kind::mxf4nvf4.block_scale
  /// (instruction descriptor bit 31) and the shared-memory descriptor's
  /// absolute leading-dimension address mode that feeds it (PTX ISA
  /// 9.7.16.3.1.2, 9.7.16.4.1.1: sm_103a).
  Tcgen05BlockScaleMmaK96 = 1u << 9,
};

/// How the chip's block-scaled MMA reads scale factors.
enum class MmaScaleSource {
  /// No block-scaled MMA: scales are applied by emulation code (sm_90a).
  Emulated,
  /// Tensor memory, filled by tcgen05.cp from shared memory holding the
  /// 128x4 swizzled atom (sm_100a).
  TensorMemorySwizzled128x4,
  /// Tensor memory like sm_100a; CUTLASS uses a different shared-memory
  /// scale atom on sm_103a (see docs/Blackwell.md).
  TensorMemorySm103,
  /// Registers: 4 UE4M3 bytes per 32-bit register plus byte/thread
  /// selectors (sm_120a mma.sync).
  Registers,
};

/// One GEMM tile configuration.
struct GemmTile {
  int64_t m, n, k;   ///< CTA tile, in elements (k along the contraction)
  int64_t stages;    ///< shared-memory pipeline depth
  int64_t ctaGroup;  ///< 1, or 2 for tcgen05 cta_group::2 pairs
  int64_t threads;   ///< threads per CTA
};

/// A supported chip.
struct ChipInfo {
  std::string_view name;      ///< "sm_100a"
  unsigned smVersion;         ///< 100
  unsigned ptxVersion;        ///< 88 means PTX ISA 8.8
  std::string_view llvmFeatures; ///< "+ptx88"
  uint32_t instructions;      ///< Instruction bits
  MmaScaleSource scaleSource;
  GemmTile gemmTile;
  unsigned maxSharedMemoryPerBlock; ///< bytes, opt-in maximum
  std::string_view marketing; ///< e.g. "Blackwell B200/GB200"
  /// Streaming multiprocessors of the part the tuning targets (the grid of
  /// a persistent GEMM: one CTA per SM); 0 where no persistent schedule is
  /// used yet.
  unsigned multiprocessors = 0;

  bool has(Instruction instruction) const {
    return (instructions & static_cast<uint32_t>(instruction)) != 0;
  }
};

/// The chip called `name` (e.g. "sm_103a"), or nullptr.
const ChipInfo *lookupChip(std::string_view name);

/// "sm_90a, sm_100a, sm_103a, sm_120a": for diagnostics.
std::string supportedChipNames();

/// The PTX spelling of an instruction family, for diagnostics.
std::string_view instructionName(Instruction instruction);

} // namespace nvfp4::target

#endif // NVFP4_TARGET_CHIP_H
