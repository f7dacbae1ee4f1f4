//===- Pipelines.h - nvfp4 pass pipelines -----------------------*- C++ -*-===//
//
// Part of the nvfp4 project.
//
//===----------------------------------------------------------------------===//

#ifndef NVFP4_PIPELINES_PIPELINES_H
#define NVFP4_PIPELINES_PIPELINES_H

namespace mlir {
class OpPassManager;

namespace nvfp4 {

/// nvfp4-reference-pipeline: nvfp4 IR (and any func/linalg/arith/tensor code
/// around it) to LLVM dialect IR that `mlir-runner` executes on the host:
/// convert-nvfp4-to-reference, bufferization, loops, and the conversions to
/// the LLVM dialect.
void buildReferencePipeline(OpPassManager &pm);

/// Registers the nvfp4 pipelines with the global pass registry.
void registerNVFP4Pipelines();

} // namespace nvfp4
} // namespace mlir

#endif // NVFP4_PIPELINES_PIPELINES_H
