//===- GPUPipeline.cpp - nvfp4-to-ptx ---------------------------------------===//
//
// Part of the nvfp4 project.
//
//===----------------------------------------------------------------------===//

#include "nvfp4/Conversion/Passes.h"
#include "nvfp4/Pipelines/Pipelines.h"
#include "nvfp4/Target/Chip.h"

#include "mlir/Conversion/NVVMToLLVM/NVVMToLLVM.h"
#include "mlir/Conversion/Passes.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;

void mlir::nvfp4::buildGPUKernelPipeline(OpPassManager &pm, StringRef chip,
                                         StringRef gemmSchedule,
                                         StringRef quantizeSchedule,
                                         StringRef mxGemm) {
  // A model's helper functions (norms, RoPE, softmax) become part of the
  // host function, whose linalg ops convert-nvfp4-to-gpu makes kernels of
  // (the manifest describes one function); elementwise arith on tensors
  // (residual adds, casts) becomes linalg.generic first. No simplification
  // in between: only what the inlining itself needs.
  pm.addPass(createInlinerPass({}, [](OpPassManager &) {}));
  pm.addPass(createConvertElementwiseToLinalgPass());
  ConvertNVFP4ToGPUOptions convert;
  convert.chip = chip.str();
  convert.gemmSchedule = gemmSchedule.str();
  convert.quantizeSchedule = quantizeSchedule.str();
  convert.mxGemm = mxGemm.str();
  pm.addPass(createConvertNVFP4ToGPU(convert));
  pm.addNestedPass<func::FuncOp>(createNVFP4FreeDeviceBuffers());
  OpPassManager &kernels = pm.nest<gpu::GPUModuleOp>();
  // Upstream's scaling ops (arith.scaling_truncf / scaling_extf) and the
  // casts to and from the FP8/FP4/E8M0 types in the linalg ops' kernels
  // (IR a frontend writes in upstream ops, docs/Numerics.md 11.6), which
  // NVPTX cannot lower, as the numerics library's conversions: the CPU
  // reference pipeline's expansion, so both give nvfp4's bytes.
  kernels.addPass(createNVFP4ExpandSmallFloatCasts());
  kernels.addPass(createSCFToControlFlowPass());
  // Bare pointers: a kernel parameter per buffer, so a runtime can launch
  // kernels from the manifest without MLIR's memref descriptors.
  kernels.addPass(createConvertNVFP4KernelsToNVVM());
  // NVVM ops without an LLVM intrinsic (mbarrier.try_wait.parity's wait
  // loop, ...) become inline PTX.
  kernels.addPass(createConvertNVVMToLLVMPass());
  kernels.addPass(createReconcileUnrealizedCastsPass());
  kernels.addPass(createCanonicalizerPass());
  kernels.addPass(createCSEPass());
  // Our target check, in front of translation: LLVM must never see an
  // instruction it cannot select for the chip.
  NVFP4VerifyKernelTargetOptions verify;
  verify.chip = chip.str();
  kernels.addPass(createNVFP4VerifyKernelTarget(verify));
}

void mlir::nvfp4::buildToPTXPipeline(OpPassManager &pm, StringRef chip,
                                     StringRef gemmSchedule) {
  buildGPUKernelPipeline(pm, chip, gemmSchedule);
  // Not nvvm-attach-target: MLIR 22.1.8's target check rejects every
  // tcgen05 op on sm_103a (TOOLCHAIN.md). nvfp4-verify-kernel-target checks
  // against the chip table instead and attaches the target without it.
  NVFP4VerifyKernelTargetOptions attach;
  attach.chip = chip.str();
  attach.attachTarget = true;
  pm.nest<gpu::GPUModuleOp>().addPass(createNVFP4VerifyKernelTarget(attach));
  GpuModuleToBinaryPassOptions toBinary;
  toBinary.compilationTarget = "isa";
  pm.addPass(createGpuModuleToBinaryPass(toBinary));
}
