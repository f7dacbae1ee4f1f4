//===- BF16Gemm.cpp - the tensor-core GEMM on BF16 operands ---------------===//
//
// Part of the nvfp4 project.
//
// C[batch, M, N] = alpha * A[batch, M, K] B[batch, N, K]^T for BF16 A and B
// in device memory (row-major, K elements a row), FP32 accumulation, C =
// fp32(acc * alpha) rounded once to C's type, on each chip's tensor-core
// pipeline fed by TMA from the operands themselves (K zero-padded to the K
// step by the tensor maps):
//
//   sm_90a             the route's kernel (DecodeWgmmaMatmul.cpp,
//                      GemmPlan::operandElement = BF16, no decode);
//   sm_100a, sm_103a   the tcgen05 kernel (Tcgen05Matmul.cpp) with
//                      tcgen05.mma .kind::f16: stages of 64 BF16 a row (the
//                      128-byte rows of an NVFP4 K step), no scales;
//   sm_120a            the mma.sync kernel (MmaBlockScaleMatmul.cpp) with
//                      mma.sync m16n8k16 .bf16: stages of 32 BF16 a row (the
//                      64-byte rows of its NVFP4 K step), no scales.
//
// Two callers: the model's BF16 linalg.matmul / batch_matmul
// (LinalgKernels.cpp) and the MX GEMM's tensor-core form on Hopper
// (MXKernels.cpp: both MX operands decoded into exact BF16 scratch first,
// docs/Numerics.md section 11.7).
//
//===----------------------------------------------------------------------===//

#include "GemmPipeline.h"
#include "KernelBuilder.h"
#include "KernelUtils.h"
#include "nvfp4/Conversion/NVFP4ToGPU/NVFP4ToGPU.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "llvm/Support/MathExtras.h"

using namespace mlir;
using namespace mlir::nvfp4;
using namespace mlir::nvfp4::kernels;

namespace {

namespace tgt = ::nvfp4::target;

/// K elements of one stage of the Blackwell BF16 GEMMs: 128-byte rows
/// (tcgen05: 4 MMAs of K = 16, the SWIZZLE_128B rows of the NVFP4 kernel)
/// and 64-byte rows (sm_120a: 2 mma.sync k16 steps, the 64-byte swizzle of
/// its NVFP4 K step of 128).
constexpr int64_t kTcgen05BF16TileK = 64;
constexpr int64_t kMmaSyncBF16TileK = 32;

/// The operands of a BF16 plan, described as block-scaled tensors of the
/// same shape ([batch, rows, K]); with GemmPlan::operandElement no part of
/// a kernel reads their codes or scales as such.
BlockScaledTensorType planOperand(MLIRContext *ctx, int64_t batch, int64_t rows,
                                  int64_t paddedK) {
  return BlockScaledTensorType::get(ctx, {batch, rows, paddedK}, {1, 16});
}

/// sm_100a / sm_103a: the tcgen05 kernel's 128 x 128 tile with 6 stages of
/// 32 KiB (192 KiB of A and B rows in flight; with the 32 KiB of TMA-store
/// staging 224 KiB of the 227), persistent where the tiles exceed the SMs
/// (the NVFP4 rule's reason: the epilogue of a tile under the next tile's
/// MMAs), C by the TMA store where its rows allow it.
std::optional<GemmPlan> planTcgen05BF16Gemm(const tgt::ChipInfo &chip,
                                            int64_t batch, int64_t m, int64_t n,
                                            int64_t k, Type resultElement,
                                            std::string &whyNot) {
  MLIRContext *ctx = resultElement.getContext();
  GemmSchedule schedule;
  schedule.tileM = 128;
  schedule.tileN = 128;
  schedule.tileK = kTcgen05BF16TileK;
  schedule.stages = 6;
  int64_t tiles = batch * llvm::divideCeil(m, schedule.tileM) *
                  llvm::divideCeil(n, schedule.tileN);
  schedule.persistent = chip.multiprocessors && tiles > chip.multiprocessors;
  schedule.tmaStore = true;
  int64_t paddedK = llvm::alignTo(k, kTcgen05BF16TileK);
  auto planFor = [&](const GemmSchedule &s) {
    GemmPlan plan = makeGemmPlan(chip, s, planOperand(ctx, batch, m, paddedK),
                                 planOperand(ctx, batch, n, paddedK),
                                 resultElement, BFloat16Type::get(ctx));
    plan.consumerSharedBytes = tcgen05GemmSharedBytes(plan);
    return plan;
  };
  GemmPlan plan = planFor(schedule);
  if (!gemmTmaStoreUnsupportedReason(plan).empty()) {
    schedule.tmaStore = false;
    plan = planFor(schedule);
  }
  whyNot = tcgen05GemmUnsupportedReason(plan);
  if (!whyNot.empty())
    return std::nullopt;
  return plan;
}

/// sm_120a: the mma.sync kernel's 128 x 128 tile (8 consumer warps of 32 x
/// 64) with 6 stages of 16 KiB (96 KiB of the 99), C by the TMA store
/// (staged over the idle ring) where its rows allow it.
std::optional<GemmPlan> planMmaSyncBF16Gemm(const tgt::ChipInfo &chip,
                                            int64_t batch, int64_t m, int64_t n,
                                            int64_t k, Type resultElement,
                                            std::string &whyNot) {
  MLIRContext *ctx = resultElement.getContext();
  GemmSchedule schedule;
  schedule.tileM = 128;
  schedule.tileN = 128;
  schedule.tileK = kMmaSyncBF16TileK;
  schedule.stages = 6;
  schedule.tmaStore = true;
  int64_t paddedK = llvm::alignTo(k, kMmaSyncBF16TileK);
  auto planFor = [&](const GemmSchedule &s) {
    return makeGemmPlan(chip, s, planOperand(ctx, batch, m, paddedK),
                        planOperand(ctx, batch, n, paddedK), resultElement,
                        BFloat16Type::get(ctx));
  };
  GemmPlan plan = planFor(schedule);
  if (!gemmTmaStoreUnsupportedReason(plan).empty()) {
    schedule.tmaStore = false;
    plan = planFor(schedule);
  }
  whyNot =
      mmaBlockScaleGemmUnsupportedReason(plan, chip.maxSharedMemoryPerBlock);
  if (!whyNot.empty())
    return std::nullopt;
  return plan;
}

} // namespace

std::optional<GemmPlan>
kernels::planBF16Gemm(const ::nvfp4::target::ChipInfo &chip, int64_t batch,
                      int64_t m, int64_t n, int64_t k, Type resultElement,
                      std::string &whyNot) {
  if (k % 8 != 0) {
    whyNot = "K must be a multiple of 8 (16-byte TMA row strides)";
    return std::nullopt;
  }
  // cuTensorMapEncodeTiled takes dimensions up to 2^32; the kernels index
  // rows in 32 bits.
  if (batch > (int64_t(1) << 31) || m > (int64_t(1) << 31) ||
      n > (int64_t(1) << 31) || k > (int64_t(1) << 31)) {
    whyNot = "a dimension exceeds the 2^31 rows the GEMM kernels index";
    return std::nullopt;
  }
  if (chip.has(tgt::Instruction::Tcgen05BlockScaleMma))
    return planTcgen05BF16Gemm(chip, batch, m, n, k, resultElement, whyNot);
  if (chip.has(tgt::Instruction::MmaSyncBlockScale))
    return planMmaSyncBF16Gemm(chip, batch, m, n, k, resultElement, whyNot);
  if (!hasBF16GemmKernel(chip)) {
    whyNot = "there is no BF16 GEMM kernel for " + std::string(chip.name);
    return std::nullopt;
  }
  MLIRContext *ctx = resultElement.getContext();
  // The route's schedule: 128 x N tiles, 4 decoded (here: BF16) stages,
  // persistent, C through the TMA-store epilogue as on the NVFP4 route
  // (chooseGemmSchedule says why) where C's rows allow it; K padded to the
  // pipeline's K step (the tensor maps fill what lies past K with zeros).
  GemmSchedule schedule;
  schedule.tileM = 128;
  schedule.tileN = n > 128 ? 256 : 128;
  schedule.stages = 0;
  schedule.decodedStages = 4;
  schedule.decoderWarpgroups = 0;
  schedule.persistent = true;
  schedule.rasterGroup = 16;
  schedule.tmaStore = true;
  int64_t paddedK = llvm::alignTo(k, kGemmTileK);
  // The plan's operands are described as block-scaled tensors of the same
  // shape; with operandElement set no part of the kernel reads their codes
  // or scales as such.
  auto shapeOf = [&](int64_t rows) {
    return SmallVector<int64_t>{batch, rows, paddedK};
  };
  auto planA = BlockScaledTensorType::get(ctx, shapeOf(m), {1, 16});
  auto planB = BlockScaledTensorType::get(ctx, shapeOf(n), {1, 16});
  auto planFor = [&](const GemmSchedule &s) {
    GemmPlan plan = makeGemmPlan(chip, s, planA, planB, resultElement);
    plan.operandElement = BFloat16Type::get(ctx);
    return plan;
  };
  GemmPlan plan = planFor(schedule);
  if (!gemmTmaStoreUnsupportedReason(plan).empty()) {
    schedule.tmaStore = false;
    plan = planFor(schedule);
  }
  whyNot = decodeWgmmaGemmUnsupportedReason(plan, chip.maxSharedMemoryPerBlock);
  if (!whyNot.empty())
    return std::nullopt;
  plan.consumerSharedBytes = decodeWgmmaGemmSharedBytes(plan);
  return plan;
}

void kernels::launchBF16Gemm(OpBuilder &b, Location loc, ModuleOp module,
                             const GemmPlan &basePlan, int64_t k, Value lhs,
                             Value rhs, Value alpha, Value result,
                             StringRef name, Value outputAmax) {
  GemmPlan plan = basePlan;
  plan.outputAmax = static_cast<bool>(outputAmax);
  // Scales and amaxes: unused, one zero-filled word for all four so that
  // nothing is undefined (an i32 buffer: upstream's gpu-to-llvm lowers 16-
  // and 32-bit memsets only, and the kernel never reads it as bytes).
  Value noAmax =
      allocDevice(b, loc, MemRefType::get({1}, b.getI32Type()), true);
  Value noScales = noAmax;
  Type mapA = gemmTensorMapType(plan, plan.a, /*scales=*/false);
  Type mapB = gemmTensorMapType(plan, plan.b, /*scales=*/false);
  SmallVector<Value> args = {
      createTensorMap(b, loc, lhs, plan.batch, k, mapA),
      noScales,
      noAmax,
      createTensorMap(b, loc, rhs, plan.batch, k, mapB),
      noScales,
      noAmax,
      alpha,
      flatten(b, loc, result)};
  // The TMA-store epilogue writes C through its tensor map ([batch, M, N]).
  if (plan.tmaStore)
    args[7] = createTensorMap(b, loc, args[7], plan.batch, plan.n,
                              gemmOutputTensorMapType(plan));
  if (outputAmax)
    args.push_back(outputAmax);
  SmallVector<Type> argTypes;
  for (Value a : args)
    argTypes.push_back(a.getType());
  gpu::GPUFuncOp kernel;
  if (plan.chip->has(tgt::Instruction::Tcgen05BlockScaleMma))
    kernel = buildTcgen05GemmKernel(module, plan, argTypes,
                                    (name + "_tcgen05_" + plan.name()).str());
  else if (plan.chip->has(tgt::Instruction::MmaSyncBlockScale))
    kernel = buildMmaBlockScaleGemmKernel(module, plan, argTypes,
                                          (name + "_mma_" + plan.name()).str());
  else
    kernel = buildDecodeWgmmaGemmKernel(module, plan, argTypes,
                                        (name + "_wgmma_" + plan.name()).str());
  launchKernel(b, loc, kernel, plan.grid(), plan.threads(),
               plan.sharedMemoryBytes(), args);
}
