//===- InitAll.cpp - register nvfp4 and its upstream dependencies --------===//
//
// Part of the nvfp4 project.
//
//===----------------------------------------------------------------------===//

#include "nvfp4/InitAll.h"
#include "nvfp4/Conversion/Passes.h"
#include "nvfp4/Dialect/NVFP4/IR/NVFP4Dialect.h"
#include "nvfp4/Dialect/NVFP4/Transforms/Passes.h"
#include "nvfp4/Pipelines/Pipelines.h"
#include "nvfp4/Report/Passes.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/Target/LLVM/NVVM/Target.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/GPU/GPUToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/NVVM/NVVMToLLVMIRTranslation.h"

void mlir::nvfp4::registerNVFP4Dialect(DialectRegistry &registry) {
  registry.insert<NVFP4Dialect>();
}

void mlir::nvfp4::registerUpstreamDependencies(DialectRegistry &registry) {
  // All upstream dialects, not only the ones our pipelines emit (func,
  // arith, math, linalg, tensor, memref, bufferization, scf, vector, gpu,
  // nvgpu, nvvm, llvm): their external interface models (bufferization,
  // value bounds, tiling...) are registered together with the dialects, and
  // model IR from other frontends may use any of them. With libMLIR.so this
  // costs no link time.
  registerAllDialects(registry);
  // Interface models attached when a dialect loads (inlining,
  // convert-to-llvm, ...).
  registerAllExtensions(registry);
  // gpu-module-to-binary needs the NVVM target attribute's serialization
  // model and the LLVM IR translations of every dialect a kernel contains.
  NVVM::registerNVVMTargetInterfaceExternalModels(registry);
  registerBuiltinDialectTranslation(registry);
  registerGPUDialectTranslation(registry);
  registerLLVMDialectTranslation(registry);
  registerNVVMDialectTranslation(registry);
}

void mlir::nvfp4::registerNVFP4Passes() {
  registerNVFP4ConversionPasses();
  registerNVFP4TransformsPasses();
  registerNVFP4ReportPasses();
  registerNVFP4Pipelines();
}

void mlir::nvfp4::registerAllNVFP4Dependencies(DialectRegistry &registry) {
  registerNVFP4Dialect(registry);
  registerUpstreamDependencies(registry);
}
