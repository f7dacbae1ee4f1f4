//===- Chip.cpp - NVFP4 code generation targets ---------------------------===//
//
// Part of the nvfp4 project.
//
//===----------------------------------------------------------------------===//

#include "nvfp4/Target/Chip.h"

#include <array>

using namespace nvfp4::target;

namespace {
constexpr uint32_t bits(std::initializer_list<Instruction> list) {
  uint32_t result = 0;
  for (Instruction i : list)
    result |= static_cast<uint32_t>(i);
  return result;
}

// PTX 8.8 is the first version with the `.block16` spelling of tcgen05's
// 16-element scale vectors (LLVM 22 cannot select the MMA at 8.6/8.7), and
// sm_103a needs it anyway; sm_120a's mma.sync block_scale needs 8.7; sm_90a
// needs 8.3 for fence.proxy.tensormap::generic (the GEMM's tensor maps live
// in global memory) and no more, so that drivers from CUDA 12.3 on load it.
constexpr std::array<ChipInfo, 4> kChips = {{
    {"sm_90a", 90, 83, "+ptx83",
     bits({Instruction::CvtE4M3x2, Instruction::Wgmma, Instruction::Tma,
           Instruction::Clusters, Instruction::MmaSyncBF16}),
     MmaScaleSource::Emulated,
     /*gemmTile=*/{128, 128, 256, 4, 1, 288}, 227 * 1024,
     "Hopper H100/H200 (NVFP4 emulated)",
     /*multiprocessors=*/132}, // H100 and H200 SXM
    {"sm_100a", 100, 88, "+ptx88",
     bits({Instruction::CvtE2M1x2, Instruction::CvtRsE2M1x4,
           Instruction::CvtE4M3x2, Instruction::Tcgen05BlockScaleMma,
           Instruction::Tma, Instruction::Clusters,
           Instruction::MmaSyncBF16}),
     MmaScaleSource::TensorMemorySwizzled128x4,
     /*gemmTile=*/{128, 128, 256, 4, 1, 192}, 227 * 1024,
     "Blackwell B200/GB200",
     /*multiprocessors=*/148}, // B200
    {"sm_103a", 103, 88, "+ptx88",
     bits({Instruction::CvtE2M1x2, Instruction::CvtRsE2M1x4,
           Instruction::CvtE4M3x2, Instruction::Tcgen05BlockScaleMma,
           Instruction::Tcgen05BlockScaleMmaK96, Instruction::Tma,
           Instruction::Clusters, Instruction::MmaSyncBF16}),
     MmaScaleSource::TensorMemorySm103,
     /*gemmTile=*/{128, 128, 256, 4, 1, 192}, 227 * 1024,
     "Blackwell Ultra B300/GB300",
     /*multiprocessors=*/160}, // B300
    {"sm_120a", 120, 87, "+ptx87",
     bits({Instruction::CvtE2M1x2, Instruction::CvtE4M3x2,
           Instruction::MmaSyncBlockScale, Instruction::Tma,
           Instruction::MmaSyncBF16}),
     MmaScaleSource::Registers,
     // 99 KiB of shared memory per block: 4 stages of K = 128 (18-20 KiB
     // each), CUTLASS's sm_120a tile (docs/Blackwell.md section 7).
     /*gemmTile=*/{128, 128, 128, 4, 1, 288}, 99 * 1024,
     "Blackwell RTX 50 / RTX PRO"},
}};
} // namespace

const ChipInfo *nvfp4::target::lookupChip(std::string_view name) {
  for (const ChipInfo &chip : kChips)
    if (chip.name == name)
      return &chip;
  return nullptr;
}

std::string nvfp4::target::supportedChipNames() {
  std::string names;
  for (const ChipInfo &chip : kChips) {
    if (!names.empty())
      names += ", ";
    names += chip.name;
  }
  return names;
}

std::string_view nvfp4::target::instructionName(Instruction instruction) {
  switch (instruction) {
  case Instruction::CvtE2M1x2:
    return "cvt.rn.satfinite.e2m1x2.f32";
  case Instruction::CvtRsE2M1x4:
    return "cvt.rs.satfinite.e2m1x4.f32";
  case Instruction::CvtE4M3x2:
    return "cvt.rn.satfinite.e4m3x2.f32";
  case Instruction::Tcgen05BlockScaleMma:
    return "tcgen05.mma.kind::mxf4nvf4.block_scale";
  case Instruction::MmaSyncBlockScale:
    return "mma.sync.m16n8k64.kind::mxf4nvf4.block_scale";
  case Instruction::Wgmma:
    return "wgmma.mma_async";
  case Instruction::Tma:
    return "cp.async.bulk.tensor";
  case Instruction::Clusters:
    return "thread-block clusters";
  case Instruction::MmaSyncBF16:
    return "mma.sync.m16n8k16.bf16";
  case Instruction::Tcgen05BlockScaleMmaK96:
    return "tcgen05.mma.kind::mxf4nvf4.block_scale (K = 96)";
  }
  return "unknown instruction";
}
