//===- InitAll.h - register nvfp4 and the upstream pieces it needs -*- C++ -*-===//
//
// Part of the nvfp4 project.
//
//===----------------------------------------------------------------------===//
//
// Entry points for tools and for other compilers that embed nvfp4: register
// the dialect into a DialectRegistry, and register every upstream dialect
// and interface our pipelines use.
//
//===----------------------------------------------------------------------===//

#ifndef NVFP4_INITALL_H
#define NVFP4_INITALL_H

namespace mlir {
class DialectRegistry;

namespace nvfp4 {

/// Adds the nvfp4 dialect to `registry`. This is all an embedding compiler
/// needs to parse and build nvfp4 IR.
void registerNVFP4Dialect(DialectRegistry &registry);

/// Adds the upstream dialects (all of them, so that model IR from any
/// frontend parses; the pipelines use func, arith, math, linalg, tensor,
/// memref, bufferization, scf, vector, gpu, nvgpu, nvvm and llvm), the
/// external interface models they rely on (bufferization, inlining,
/// convert-to-llvm, the NVVM target) and the LLVM IR translations needed to
/// serialize GPU modules.
void registerUpstreamDependencies(DialectRegistry &registry);

/// Registers the nvfp4 passes (graph-level transforms, the precision report,
/// conversions) and pipelines with the global pass registry, for
/// `--pass-pipeline` parsing in tools.
void registerNVFP4Passes();

/// registerNVFP4Dialect + registerUpstreamDependencies: what nvfp4-opt and
/// nvfp4-compile load.
void registerAllNVFP4Dependencies(DialectRegistry &registry);

} // namespace nvfp4
} // namespace mlir

#endif // NVFP4_INITALL_H
