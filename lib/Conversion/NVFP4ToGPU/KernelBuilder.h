//===- KernelBuilder.h - the skeleton of generated GPU kernels --*- C++ -*-===//
//
// Part of the nvfp4 project.
//
//===----------------------------------------------------------------------===//
//
// What every generated kernel shares: where kernels live (one
// `gpu.module @nvfp4_kernels`), how they are named and reused, the thread
// indexing, and the host-side launch. Kernels take flattened, statically
// shaped memrefs so that they lower to bare pointers.
//
//===----------------------------------------------------------------------===//

#ifndef NVFP4_LIB_CONVERSION_NVFP4TOGPU_KERNELBUILDER_H
#define NVFP4_LIB_CONVERSION_NVFP4TOGPU_KERNELBUILDER_H

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"

namespace mlir {
namespace nvfp4 {
namespace kernels {

/// Threads per block of the elementwise kernels.
constexpr int64_t kThreadsPerBlock = 256;

/// Name of the gpu.module that holds generated kernels.
constexpr llvm::StringLiteral kKernelModuleName = "nvfp4_kernels";

/// Fills a kernel body; `args` are the kernel's arguments. The caller adds
/// the terminator.
using KernelBodyBuilder =
    function_ref<void(OpBuilder &, Location, ValueRange args)>;

/// Returns kernel @`name` of the nvfp4 kernel module, creating the module
/// and the kernel (with `body`) on first use: a kernel's name encodes
/// everything it is specialized for, so equal names are equal kernels.
gpu::GPUFuncOp getOrCreateKernel(ModuleOp module, StringRef name,
                                 TypeRange argTypes, int64_t blockSize,
                                 KernelBodyBuilder body);

/// What a kernel declares beyond its arguments.
struct KernelOptions {
  /// Threads per block (fixed: it becomes .reqntid).
  int64_t blockSize = kThreadsPerBlock;
  /// Statically sized shared-memory buffers (memrefs in the workgroup
  /// address space); the body sees them after the arguments in `args`.
  SmallVector<Type> workgroupBuffers;
  /// Byte alignment of each workgroup buffer where vector accesses need
  /// more than its element type's (llvm.align); 0 or missing: the default.
  SmallVector<int64_t> workgroupAlignments;
  /// Blocks that must fit on one multiprocessor at once (nvvm.minctasm:
  /// ptxas caps the registers accordingly); 0 leaves it to ptxas.
  int64_t minBlocksPerMultiprocessor = 0;
};

/// getOrCreateKernel with the extras of `options`.
gpu::GPUFuncOp getOrCreateKernel(ModuleOp module, StringRef name,
                                 TypeRange argTypes,
                                 const KernelOptions &options,
                                 KernelBodyBuilder body);

/// blockIdx.x * blockDim.x + threadIdx.x, as an index.
Value globalThreadIndex(OpBuilder &b, Location loc);

/// An index constant.
Value indexConstant(OpBuilder &b, Location loc, int64_t value);

/// Launches `kernel` on enough blocks of `blockSize` threads to cover
/// `threads` (at most `maxBlocks` blocks when given, for grid-stride
/// kernels).
void launchKernel(OpBuilder &b, Location loc, gpu::GPUFuncOp kernel,
                  int64_t threads, int64_t blockSize, ValueRange args);

/// Launches `kernel` on a `grid` of blocks of `blockSize` threads with
/// `sharedMemoryBytes` of dynamic shared memory.
void launchKernel(OpBuilder &b, Location loc, gpu::GPUFuncOp kernel,
                  std::array<int64_t, 3> grid, int64_t blockSize,
                  int64_t sharedMemoryBytes, ValueRange args);

/// A 1-D view of a statically shaped, identity-layout memref.
Value flatten(OpBuilder &b, Location loc, Value memref);

/// Device memory of `type` (gpu.alloc), optionally zero-filled.
Value allocDevice(OpBuilder &b, Location loc, MemRefType type,
                  bool zeroFill);

} // namespace kernels
} // namespace nvfp4
} // namespace mlir

#endif // NVFP4_LIB_CONVERSION_NVFP4TOGPU_KERNELBUILDER_H
