//===- MXBlockScaledGemm.cpp - MX GEMMs on Blackwell's block-scaled MMAs --===//
//
// Part of the nvfp4 project.
//
// MXFP8 (E4M3 / E5M2 codes) and MXFP4 (E2M1) operands with UE8M0 scales per
// 32 elements go to the block-scaled tensor-core GEMM that the chip has
// (docs/Blackwell.md section 10):
//
//   sm_100a, sm_103a  the tcgen05 kernel (Tcgen05Matmul.cpp) with
//                     .kind::mxf8f6f4.block32 (scale_vec::1X, K = 32) or
//                     .kind::mxf4.block32 (scale_vec::2X, K = 64);
//   sm_120a           the mma.sync kernel (MmaBlockScaleMatmul.cpp) with
//                     mma.sync.aligned.m16n8k32.row.col.kind::mxf8f6f4
//                     .block_scale.scale_vec::1X...ue8m0 or m16n8k64
//                     .kind::mxf4.block_scale.scale_vec::2X...ue8m0, 2
//                     stages (two 33-34 KiB stages fit its 99 KiB);
//
// the same shared pipeline as NVFP4's (GemmPipeline.h): a K step is one
// 128-byte swizzle row of codes of every tile row -- 128 MXFP8 codes or
// 256 MXFP4 codes -- and its scales (4 or 8 bytes a row) one or two 128x4
// atoms, which tcgen05.cp moves to Tensor Memory as for NVFP4 (sm_120a: the
// consumers load a row's words from them). What differs
// is data: the plan's code width and scale block (makeGemmPlan), the
// instruction descriptor and the scale factor ID of each MMA
// (::nvfp4::target::encodeMXInstrDesc, getKStepMmaScales). There is no
// tensor scale: C = alpha * sum (GemmPipelineEmitter::epilogueScale).
//
//===----------------------------------------------------------------------===//

#include "GemmPipeline.h"
#include "KernelBuilder.h"
#include "KernelUtils.h"

#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "llvm/Support/MathExtras.h"

using namespace mlir;
using namespace mlir::nvfp4;
using namespace mlir::nvfp4::kernels;

namespace tgt = ::nvfp4::target;

bool kernels::hasMXBlockScaledGemm(const tgt::ChipInfo &chip) {
  return chip.has(tgt::Instruction::Tcgen05BlockScaleMma) ||
         chip.has(tgt::Instruction::MmaSyncBlockScale);
}

/// The tcgen05 kernel, or (sm_120a) the mma.sync one.
static bool usesTcgen05(const tgt::ChipInfo &chip) {
  return chip.has(tgt::Instruction::Tcgen05BlockScaleMma);
}

std::optional<GemmPlan>
kernels::planMXBlockScaledGemm(const tgt::ChipInfo &chip,
                               BlockScaledTensorType lhs,
                               BlockScaledTensorType rhs, Type resultElement,
                               std::string &whyNot) {
  if (!hasMXBlockScaledGemm(chip)) {
    whyNot = std::string(chip.name) + " has no block-scaled MX MMA";
    return std::nullopt;
  }
  bool fp4 = isa<Float4E2M1FNType>(lhs.getElementType());
  if (fp4 != isa<Float4E2M1FNType>(rhs.getElementType())) {
    whyNot = "MXFP8 x MXFP4 has no block-scaled MMA form here "
             "(.kind::mxf8f6f4 reads E2M1 from byte containers, not MXFP4's "
             "packed codes)";
    return std::nullopt;
  }
  // One K step = one 128-byte row of codes.
  GemmSchedule schedule;
  schedule.tileM = 128;
  schedule.tileN = 128;
  schedule.tileK = fp4 ? kGemmTileK : kGemmTileKHalf;
  schedule.stages = chip.gemmTile.stages;
  if (!usesTcgen05(chip)) {
    // sm_120a: 99 KiB of shared memory hold two 128-byte-row stages; C
    // through the TMA store where its rows are 16-byte multiples, as its
    // NVFP4 rule (chooseMmaBlockScaleSchedule).
    schedule.stages = 2;
    schedule.tmaStore = rhs.getRows() % 8 == 0;
  }
  int64_t k = lhs.getCols();
  if (k % schedule.tileK != 0) {
    whyNot = "K = " + std::to_string(k) + " is not a multiple of " +
             std::to_string(schedule.tileK) +
             " (one K step: 128 bytes of codes a row)";
    return std::nullopt;
  }
  for (BlockScaledTensorType t : {lhs, rhs})
    if (product(t.getBatchShape()) > (int64_t(1) << 32) ||
        t.getRows() > (int64_t(1) << 32)) {
      whyNot = "a dimension exceeds the 2^32 elements of a TMA tensor map";
      return std::nullopt;
    }
  // As for NVFP4 (chooseTcgen05Schedule): persistent, with two TMEM
  // accumulator stages, where the tiles do not fit in one wave.
  int64_t tiles = product(lhs.getBatchShape()) *
                  llvm::divideCeil(lhs.getRows(), schedule.tileM) *
                  llvm::divideCeil(rhs.getRows(), schedule.tileN);
  if (usesTcgen05(chip) && chip.multiprocessors &&
      tiles > chip.multiprocessors)
    schedule.persistent = true;
  auto unsupported = [&](const GemmPlan &plan) {
    return usesTcgen05(chip) ? tcgen05GemmUnsupportedReason(plan)
                             : mmaBlockScaleGemmUnsupportedReason(
                                   plan, chip.maxSharedMemoryPerBlock);
  };
  GemmPlan plan = makeGemmPlan(chip, schedule, lhs, rhs, resultElement);
  whyNot = unsupported(plan);
  if (!whyNot.empty() && schedule.tmaStore) {
    schedule.tmaStore = false;
    plan = makeGemmPlan(chip, schedule, lhs, rhs, resultElement);
    whyNot = unsupported(plan);
  }
  if (!whyNot.empty())
    return std::nullopt;
  return plan;
}

void kernels::launchMXBlockScaledGemm(OpBuilder &b, Location loc,
                                      ModuleOp module,
                                      const GemmPlan &basePlan,
                                      ValueRange lhs, ValueRange rhs,
                                      Value alpha, Value result,
                                      StringRef name, Value outputAmax) {
  GemmPlan plan = basePlan;
  plan.outputAmax = static_cast<bool>(outputAmax);
  // The NVFP4 GEMM's arguments (codes, scales, amax of each operand, alpha,
  // C, and C's amax with one); the amax parts of MX values are unused (0).
  SmallVector<Value> args = {flatten(b, loc, lhs[0]), flatten(b, loc, lhs[1]),
                             lhs[2],
                             flatten(b, loc, rhs[0]), flatten(b, loc, rhs[1]),
                             rhs[2],
                             alpha,
                             flatten(b, loc, result)};
  if (outputAmax)
    args.push_back(outputAmax);
  SmallVector<Type> bufferTypes;
  for (Value arg : args)
    bufferTypes.push_back(arg.getType());
  SmallVector<Type> argTypes = gemmKernelArgTypes(plan, bufferTypes);
  // Codes by tensor maps of [batch, rows, K code bytes]; the scales are
  // copied (swizzled) or re-laid (linear) as 128x4 atoms.
  int64_t rowBytes = plan.k * plan.codeBits / 8;
  for (int64_t i : {0, 1, 3, 4})
    if (isa<nvgpu::TensorMapDescriptorType>(argTypes[i]))
      args[i] =
          createTensorMap(b, loc, args[i], plan.batch, rowBytes, argTypes[i]);
  // The TMA-store epilogue (sm_120a) writes C through its tensor map.
  if (isa<nvgpu::TensorMapDescriptorType>(argTypes[7]))
    args[7] = createTensorMap(b, loc, args[7], plan.batch, plan.n,
                              argTypes[7]);
  gpu::GPUFuncOp kernel =
      plan.stageRelease == GemmStageRelease::Tcgen05Commit
          ? buildTcgen05GemmKernel(module, plan, argTypes,
                                   (name + "_tcgen05_" + plan.name()).str())
          : buildMmaBlockScaleGemmKernel(
                module, plan, argTypes,
                (name + "_mma_sync_" + plan.name()).str());
  launchKernel(b, loc, kernel, plan.grid(), plan.threads(),
               plan.sharedMemoryBytes(), args);
}
