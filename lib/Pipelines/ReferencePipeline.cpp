//===- ReferencePipeline.cpp - nvfp4-reference-pipeline -------------------===//
//
// Part of the nvfp4 project.
//
//===----------------------------------------------------------------------===//

#include "nvfp4/Pipelines/Pipelines.h"
#include "nvfp4/Conversion/Passes.h"

#include "mlir/Conversion/Passes.h"
#include "mlir/Dialect/Arith/Transforms/Passes.h"
#include "mlir/Dialect/Bufferization/Pipelines/Passes.h"
#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;

namespace {
struct GPUPipelineOptions : public PassPipelineOptions<GPUPipelineOptions> {
  Option<std::string> chip{*this, "chip",
                           llvm::cl::desc("sm_90a, sm_100a, sm_103a or sm_120a"),
                           llvm::cl::init("sm_103a")};
  Option<std::string> gemmSchedule{
      *this, "gemm-schedule",
      llvm::cl::desc("force the tensor-core GEMM schedule (see "
                     "convert-nvfp4-to-gpu)"),
      llvm::cl::init("")};
};
struct UpstreamGPUPipelineOptions
    : public PassPipelineOptions<UpstreamGPUPipelineOptions> {
  Option<std::string> chip{*this, "chip",
                           llvm::cl::desc("sm_90a, sm_100a, sm_103a or sm_120a"),
                           llvm::cl::init("sm_103a")};
  Option<std::string> gemmSchedule{
      *this, "gemm-schedule",
      llvm::cl::desc("force the tensor-core GEMM schedule (see "
                     "convert-nvfp4-to-gpu)"),
      llvm::cl::init("")};
  Option<std::string> format{
      *this, "format",
      llvm::cl::desc("kernel serialization: isa (PTX, default), bin or "
                     "fatbin (ptxas)"),
      llvm::cl::init("isa")};
  Option<bool> recipe{*this, "recipe",
                      llvm::cl::desc("run nvfp4-assign-precision, "
                                     "nvfp4-apply-recipe and "
                                     "nvfp4-fuse-quantization first"),
                      llvm::cl::init(true)};
};
} // namespace

void mlir::nvfp4::buildReferencePipeline(OpPassManager &pm) {
  pm.addPass(createConvertNVFP4ToReference());
  pm.addPass(createCanonicalizerPass());
  // Elementwise arith on tensors (common in test and model code around the
  // nvfp4 ops) becomes linalg so that it bufferizes.
  pm.addPass(createConvertElementwiseToLinalgPass());

  bufferization::OneShotBufferizePassOptions bufferize;
  bufferize.bufferizeFunctionBoundaries = true;
  bufferize.functionBoundaryTypeConversion =
      bufferization::LayoutMapOption::IdentityLayoutMap;
  // A loop carrying a tensor that an nvfp4 op recomputes each iteration
  // (scf.for with nvfp4.hadamard of its iter_arg) yields a new buffer; the
  // deallocation pipeline below frees the old ones.
  bufferize.allowReturnAllocsFromLoops = true;
  pm.addPass(bufferization::createOneShotBufferizePass(bufferize));
  bufferization::buildBufferDeallocationPipeline(pm);
  // The clones deallocation inserts where a function returns one of its
  // arguments (or a view of one) become memref.alloc + copy.
  pm.addPass(createConvertBufferizationToMemRefPass());

  pm.addNestedPass<func::FuncOp>(createConvertLinalgToLoopsPass());
  // Upstream's scaling ops and the casts to and from the FP8/FP4/E8M0
  // types, which upstream's LLVM lowering lacks or gets wrong, as the
  // numerics library's conversions (IR written with arith.scaling_truncf /
  // scaling_extf runs here with nvfp4's bytes).
  pm.addNestedPass<func::FuncOp>(createNVFP4ExpandSmallFloatCasts());
  pm.addPass(memref::createExpandStridedMetadataPass());
  pm.addPass(createLowerAffinePass());
  // vector.print (used by tests and debugging output) and other vector ops
  // around the nvfp4 code.
  pm.addPass(createConvertVectorToSCFPass());
  pm.addPass(createSCFToControlFlowPass());
  // bf16 conversions become integer code (round to nearest even): the host
  // may have no bf16 instructions.
  arith::ArithExpandOpsPassOptions expand;
  expand.includeBf16 = true;
  pm.addPass(arith::createArithExpandOpsPass(expand));
  pm.addPass(createConvertVectorToLLVMPass());
  pm.addPass(createConvertMathToLLVMPass());
  pm.addPass(createArithToLLVMConversionPass());
  pm.addPass(createConvertIndexToLLVMPass());
  pm.addPass(createFinalizeMemRefToLLVMConversionPass());
  pm.addPass(createConvertControlFlowToLLVMPass());
  pm.addPass(createConvertFuncToLLVMPass());
  pm.addPass(createReconcileUnrealizedCastsPass());
}

void mlir::nvfp4::registerNVFP4Pipelines() {
  PassPipelineRegistration<>(
      "nvfp4-reference-pipeline",
      "Lower nvfp4 IR to LLVM dialect code that mlir-runner executes on the "
      "host, bit-exact with the numerics library",
      buildReferencePipeline);
  PassPipelineRegistration<GPUPipelineOptions>(
      "nvfp4-to-ptx",
      "Lower nvfp4 IR to GPU kernels for one chip and serialize them to PTX "
      "(gpu.binary); nvfp4-compile is the command-line driver of this path",
      [](OpPassManager &pm, const GPUPipelineOptions &options) {
        buildToPTXPipeline(pm, options.chip.getValue(),
                           options.gemmSchedule.getValue());
      });
  PassPipelineRegistration<UpstreamGPUPipelineOptions>(
      "nvfp4-to-upstream-gpu",
      "Lower model or nvfp4 IR to the LLVM dialect with kernels serialized "
      "for one chip and host code calling upstream's GPU runtime (mgpu*), "
      "for mlir-translate --mlir-to-llvmir",
      [](OpPassManager &pm, const UpstreamGPUPipelineOptions &options) {
        buildUpstreamGPUPipeline(pm, options.chip.getValue(),
                                 options.gemmSchedule.getValue(),
                                 options.format.getValue(),
                                 options.recipe.getValue());
      });
}
