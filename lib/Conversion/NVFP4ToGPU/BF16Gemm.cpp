//===- BF16Gemm.cpp - the route's wgmma GEMM on BF16 operands -------------===//
//
// Part of the nvfp4 project.
//
// C[batch, M, N] = alpha * A[batch, M, K] B[batch, N, K]^T for BF16 A and B
// in device memory (row-major, K elements a row): the sm_90a route's
// kernel (DecodeWgmmaMatmul.cpp, GemmPlan::operandElement = BF16) fed by
// TMA from the operands themselves, FP32 accumulation, C = fp32(acc *
// alpha) rounded once to C's type. Two callers: the model's BF16
// linalg.matmul / batch_matmul (LinalgKernels.cpp) and the MX GEMM's
// tensor-core form on Hopper (MXKernels.cpp: both MX operands decoded into
// exact BF16 scratch first, docs/Numerics.md section 11.7).
//
//===----------------------------------------------------------------------===//

#include "GemmPipeline.h"
#include "KernelBuilder.h"
#include "KernelUtils.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "llvm/Support/MathExtras.h"

using namespace mlir;
using namespace mlir::nvfp4;
using namespace mlir::nvfp4::kernels;

std::optional<GemmPlan>
kernels::planBF16Gemm(const ::nvfp4::target::ChipInfo &chip, int64_t batch,
                      int64_t m, int64_t n, int64_t k, Type resultElement,
                      std::string &whyNot) {
  if (k % 8 != 0) {
    whyNot = "K must be a multiple of 8 (16-byte TMA row strides)";
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
  gpu::GPUFuncOp kernel = buildDecodeWgmmaGemmKernel(
      module, plan, argTypes, (name + "_wgmma_" + plan.name()).str());
  launchKernel(b, loc, kernel, plan.grid(), plan.threads(),
               plan.sharedMemoryBytes(), args);
}
