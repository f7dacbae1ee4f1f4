//===- GPUPipeline.cpp - nvfp4-to-ptx ---------------------------------------===//
//
// Part of the nvfp4 project.
//
//===----------------------------------------------------------------------===//

#include "nvfp4/Conversion/Passes.h"
#include "nvfp4/Pipelines/Pipelines.h"
#include "nvfp4/Target/Chip.h"

#include "mlir/Conversion/Passes.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;

void mlir::nvfp4::buildGPUKernelPipeline(OpPassManager &pm, StringRef chip) {
  ConvertNVFP4ToGPUOptions convert;
  convert.chip = chip.str();
  pm.addPass(createConvertNVFP4ToGPU(convert));
  OpPassManager &kernels = pm.nest<gpu::GPUModuleOp>();
  kernels.addPass(createSCFToControlFlowPass());
  // Bare pointers: a kernel parameter per buffer, so a runtime can launch
  // kernels from the manifest without MLIR's memref descriptors.
  kernels.addPass(createConvertNVFP4KernelsToNVVM());
  kernels.addPass(createReconcileUnrealizedCastsPass());
  kernels.addPass(createCanonicalizerPass());
  kernels.addPass(createCSEPass());
}

void mlir::nvfp4::buildToPTXPipeline(OpPassManager &pm, StringRef chip) {
  buildGPUKernelPipeline(pm, chip);
  // An unknown chip is diagnosed by convert-nvfp4-to-gpu, which runs first.
  const ::nvfp4::target::ChipInfo *info = ::nvfp4::target::lookupChip(chip);
  GpuNVVMAttachTargetOptions attach;
  attach.chip = chip.str();
  attach.features = info ? std::string(info->llvmFeatures) : "";
  pm.addPass(createGpuNVVMAttachTarget(attach));
  GpuModuleToBinaryPassOptions toBinary;
  toBinary.compilationTarget = "isa";
  pm.addPass(createGpuModuleToBinaryPass(toBinary));
}
