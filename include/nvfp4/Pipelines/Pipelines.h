//===- Pipelines.h - nvfp4 pass pipelines -----------------------*- C++ -*-===//
//
// Part of the nvfp4 project.
//
//===----------------------------------------------------------------------===//

#ifndef NVFP4_PIPELINES_PIPELINES_H
#define NVFP4_PIPELINES_PIPELINES_H

#include "llvm/ADT/StringRef.h"

namespace mlir {
class OpPassManager;

namespace nvfp4 {

/// nvfp4-reference-pipeline: nvfp4 IR (and any func/linalg/arith/tensor code
/// around it) to LLVM dialect IR that `mlir-runner` executes on the host:
/// convert-nvfp4-to-reference, bufferization, loops, and the conversions to
/// the LLVM dialect.
void buildReferencePipeline(OpPassManager &pm);

/// nvfp4 IR to NVVM/LLVM-dialect kernels for `chip` plus host-side launches
/// (no serialization): convert-nvfp4-to-gpu{chip} and the kernel lowering.
/// nvfp4-compile continues from here with LLVM's NVPTX backend.
void buildGPUKernelPipeline(OpPassManager &pm, llvm::StringRef chip,
                            llvm::StringRef gemmSchedule = "",
                            llvm::StringRef quantizeSchedule = "",
                            llvm::StringRef mxGemm = "");

/// nvfp4-to-ptx{chip=...}: buildGPUKernelPipeline, then the kernels are
/// serialized to PTX inside the IR (`gpu.binary`, nvvm-attach-target +
/// gpu-module-to-binary{format=isa}).
void buildToPTXPipeline(OpPassManager &pm, llvm::StringRef chip,
                        llvm::StringRef gemmSchedule = "");

/// nvfp4-to-upstream-gpu{chip=...}: model IR (with `recipe`, the graph
/// passes of nvfp4-compile first) or nvfp4 IR to one LLVM-dialect module
/// for upstream's tools: kernels serialized as gpu.binary (`format`: isa
/// for PTX, bin or fatbin through ptxas) with the chip's PTX features, host
/// code calling upstream's GPU runtime (mgpu*) with bare-pointer kernel
/// arguments as the manifest describes them, a free for every device
/// buffer not returned. `mlir-translate --mlir-to-llvmir` takes it to LLVM
/// IR (docs/Embedding.md, section 6).
void buildUpstreamGPUPipeline(OpPassManager &pm, llvm::StringRef chip,
                              llvm::StringRef gemmSchedule = "",
                              llvm::StringRef format = "isa",
                              bool recipe = true);

/// Registers the nvfp4 pipelines with the global pass registry.
void registerNVFP4Pipelines();

} // namespace nvfp4
} // namespace mlir

#endif // NVFP4_PIPELINES_PIPELINES_H
