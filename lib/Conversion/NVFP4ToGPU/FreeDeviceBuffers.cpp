//===- FreeDeviceBuffers.cpp - a gpu.dealloc for every gpu.alloc ----------===//
//
// Part of the nvfp4 project.
//
//===----------------------------------------------------------------------===//
//
// nvfp4-free-device-buffers: the host code of convert-nvfp4-to-gpu
// allocates every intermediate on the device and frees nothing. Here each
// allocation is followed, through the ops that alias it, to its last use in
// its block, and freed after it. Anything the analysis does not understand
// keeps the buffer alive: a leak is safe, a use after free is not.
//
//===----------------------------------------------------------------------===//

#include "nvfp4/Conversion/Passes.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/IR/Builders.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

namespace mlir {
namespace nvfp4 {
#define GEN_PASS_DEF_NVFP4FREEDEVICEBUFFERS
#include "nvfp4/Conversion/Passes.h.inc"
} // namespace nvfp4
} // namespace mlir

using namespace mlir;

/// Whether `op` is asynchronous (returns a token): its use of a buffer is
/// not over when the host moves on.
static bool isAsync(Operation *op) {
  auto async = dyn_cast<gpu::AsyncOpInterface>(op);
  return async && async.getAsyncToken();
}

/// The op of `alloc`'s block after which its buffer is dead, or null when
/// it must not be freed here: it is returned, already freed, used
/// asynchronously, outside its block or by an op not known to only read or
/// write it.
static Operation *lastUseOf(gpu::AllocOp alloc) {
  Block *block = alloc->getBlock();
  Operation *last = alloc;
  SmallVector<Value> aliases = {alloc.getMemref()};
  DenseSet<Value> seen;
  while (!aliases.empty()) {
    Value value = aliases.pop_back_val();
    if (!seen.insert(value).second)
      continue;
    for (Operation *user : value.getUsers()) {
      if (isAsync(user))
        return nullptr;
      // Values that are the same memory: follow their uses too.
      if (isa<ViewLikeOpInterface, memref::CastOp, bufferization::ToTensorOp,
              bufferization::ToBufferOp, nvgpu::TmaCreateDescriptorOp,
              UnrealizedConversionCastOp>(user)) {
        llvm::append_range(aliases, user->getResults());
      } else if (!isa<gpu::LaunchFuncOp, gpu::MemsetOp, gpu::MemcpyOp,
                      memref::LoadOp, memref::StoreOp, memref::CopyOp>(
                     user)) {
        // A return (the caller owns it), a dealloc already there, a call,
        // host computation on the tensor, anything else.
        return nullptr;
      }
      Operation *inBlock = block->findAncestorOpInBlock(*user);
      if (!inBlock)
        return nullptr;
      if (last->isBeforeInBlock(inBlock))
        last = inBlock;
    }
  }
  return last;
}

unsigned mlir::nvfp4::freeDeviceBuffers(Region &region) {
  SmallVector<gpu::AllocOp> allocs;
  region.walk([&](gpu::AllocOp alloc) {
    // Synchronous allocations only, of memory the host code owns (not
    // host_shared, which a runtime may map).
    if (!alloc.getAsyncToken() && alloc.getAsyncDependencies().empty() &&
        !alloc.getHostShared())
      allocs.push_back(alloc);
  });
  unsigned inserted = 0;
  for (gpu::AllocOp alloc : allocs) {
    Operation *last = lastUseOf(alloc);
    if (!last)
      continue;
    OpBuilder builder(last->getContext());
    builder.setInsertionPointAfter(last);
    gpu::DeallocOp::create(builder, alloc.getLoc(), TypeRange(), ValueRange(),
                           alloc.getMemref());
    ++inserted;
  }
  return inserted;
}

namespace {
struct FreeDeviceBuffersPass
    : public mlir::nvfp4::impl::NVFP4FreeDeviceBuffersBase<FreeDeviceBuffersPass> {
  void runOnOperation() override {
    mlir::nvfp4::freeDeviceBuffers(getOperation().getBody());
  }
};
} // namespace
