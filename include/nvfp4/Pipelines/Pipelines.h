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
                            llvm::StringRef gemmSchedule = "");

/// nvfp4-to-ptx{chip=...}: buildGPUKernelPipeline, then the kernels are
/// serialized to PTX inside the IR (`gpu.binary`, nvvm-attach-target +
/// gpu-module-to-binary{format=isa}).
void buildToPTXPipeline(OpPassManager &pm, llvm::StringRef chip,
                        llvm::StringRef gemmSchedule = "");

/// Registers the nvfp4 pipelines with the global pass registry.
void registerNVFP4Pipelines();

} // namespace nvfp4
} // namespace mlir

#endif // NVFP4_PIPELINES_PIPELINES_H
