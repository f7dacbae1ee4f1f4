//===- UpstreamGPUPipeline.cpp - nvfp4-to-upstream-gpu --------------------===//
//
// Part of the nvfp4 project.
//
//===----------------------------------------------------------------------===//
//
// Model or nvfp4 IR to one LLVM-dialect module that upstream's tools take
// the rest of the way: kernels serialized for the chip (gpu.binary, PTX
// features from our chip table), host code calling upstream's GPU runtime
// (mgpuMemAlloc, mgpuLaunchKernel, mgpuMemFree, ... of
// libmlir_cuda_runtime), every device buffer the host code does not return
// freed, and `mlir-translate --mlir-to-llvmir` giving LLVM IR. The recipe
// that makes it work with upstream's passes -- the host code bufferized
// with identity layouts at function boundaries, made asynchronous on one
// stream (gpu-async-region: gpu-to-llvm lowers only asynchronous
// allocations), kernels called with bare pointers as our kernel lowering
// and the manifest expect -- lives here instead of in every user's head.
//
//===----------------------------------------------------------------------===//

#include "nvfp4/Conversion/Passes.h"
#include "nvfp4/Dialect/NVFP4/Transforms/Passes.h"
#include "nvfp4/Pipelines/Pipelines.h"

#include "mlir/Conversion/Passes.h"
#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;

void mlir::nvfp4::buildUpstreamGPUPipeline(OpPassManager &pm, StringRef chip,
                                           StringRef gemmSchedule,
                                           StringRef format, bool recipe) {
  // Annotated model IR becomes nvfp4 IR as in nvfp4-compile; nvfp4 IR
  // passes through unchanged.
  if (recipe) {
    pm.addPass(createNVFP4AssignPrecision());
    pm.addPass(createNVFP4ApplyRecipe());
    pm.addPass(createNVFP4FuseQuantization());
  }
  // Kernels to NVVM with bare-pointer parameters, host launches with
  // gpu.dealloc for every buffer not returned (nvfp4-free-device-buffers),
  // kernels serialized with the chip's PTX version and target features.
  buildGPUKernelPipeline(pm, chip, gemmSchedule);
  NVFP4VerifyKernelTargetOptions attach;
  attach.chip = chip.str();
  attach.attachTarget = true;
  pm.nest<gpu::GPUModuleOp>().addPass(createNVFP4VerifyKernelTarget(attach));
  GpuModuleToBinaryPassOptions toBinary;
  toBinary.compilationTarget = format.str();
  pm.addPass(createGpuModuleToBinaryPass(toBinary));

  // Host code: the tensors at the function boundary become memrefs with
  // identity layouts (the descriptors a caller passes).
  // Host computation no kernel covers: elementwise arith on tensors becomes
  // linalg so that it bufferizes.
  pm.addPass(createConvertElementwiseToLinalgPass());
  bufferization::OneShotBufferizePassOptions bufferize;
  bufferize.bufferizeFunctionBoundaries = true;
  bufferize.functionBoundaryTypeConversion =
      bufferization::LayoutMapOption::IdentityLayoutMap;
  pm.addPass(bufferization::createOneShotBufferizePass(bufferize));
  // Not upstream's buffer-deallocation pipeline: it rejects the launches
  // (ops with unknown memory side effects). Device buffers are freed above;
  // host buffers only come from host computation (section 6 of
  // docs/Embedding.md: such a module is for inspection).
  pm.addPass(createConvertBufferizationToMemRefPass());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  pm.addNestedPass<func::FuncOp>(createConvertLinalgToLoopsPass());
  pm.addPass(memref::createExpandStridedMetadataPass());
  pm.addPass(createLowerAffinePass());
  pm.addPass(createSCFToControlFlowPass());
  // One stream per host function, allocations, fills, launches and frees
  // ordered on it: gpu-to-llvm lowers only the asynchronous forms.
  pm.addNestedPass<func::FuncOp>(createGpuAsyncRegionPass());
  // TMA tensor maps (the sm_90a GEMM): nvgpu.tma.create_descriptor becomes
  // upstream's mgpuTensorMapEncodeTiledMemref, which encodes the map and
  // copies its 128 bytes to the device -- the device address our kernels
  // take (the manifest's "tensormap" parameter).
  pm.addPass(createConvertNVGPUToNVVMPass());
  // ... and the launches pass that address (gpu-to-llvm cannot convert the
  // descriptor type itself).
  pm.addNestedPass<func::FuncOp>(createNVFP4TensorMapsAsPointers());
  GpuToLLVMConversionPassOptions toLLVM;
  toLLVM.kernelBarePtrCallConv = true;
  pm.addPass(createGpuToLLVMConversionPass(toLLVM));
  pm.addPass(createConvertIndexToLLVMPass());
  pm.addPass(createArithToLLVMConversionPass());
  pm.addPass(createFinalizeMemRefToLLVMConversionPass());
  pm.addPass(createConvertControlFlowToLLVMPass());
  pm.addPass(createConvertFuncToLLVMPass());
  pm.addPass(createReconcileUnrealizedCastsPass());
  // Dead host ops (views, casts, constants of the removed tensor code) and
  // functions nothing calls any more.
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  pm.addPass(createSymbolDCEPass());
}
