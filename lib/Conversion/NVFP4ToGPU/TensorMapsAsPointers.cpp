//===- TensorMapsAsPointers.cpp - tensor-map launch operands as pointers --===//
//
// Part of the nvfp4 project.
//
//===----------------------------------------------------------------------===//
//
// nvfp4-tensor-maps-as-pointers: between upstream's convert-nvgpu-to-nvvm
// and gpu-to-llvm, a gpu.launch_func operand that reads a converted
// nvgpu.tma.create_descriptor through an unrealized cast takes the
// descriptor's device pointer instead (Passes.td says why that is the
// kernel's ABI).
//
//===----------------------------------------------------------------------===//

#include "nvfp4/Conversion/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "llvm/ADT/SetVector.h"

namespace mlir {
namespace nvfp4 {
#define GEN_PASS_DEF_NVFP4TENSORMAPSASPOINTERS
#include "nvfp4/Conversion/Passes.h.inc"
} // namespace nvfp4
} // namespace mlir

using namespace mlir;

namespace {

/// The !llvm.ptr a converted tensor-map descriptor `value` was cast from,
/// or null when `value` has another origin.
Value devicePointerOf(Value value) {
  if (!isa<nvgpu::TensorMapDescriptorType>(value.getType()))
    return {};
  auto cast = value.getDefiningOp<UnrealizedConversionCastOp>();
  if (!cast || cast.getInputs().size() != 1 ||
      !isa<LLVM::LLVMPointerType>(cast.getInputs()[0].getType()))
    return {};
  return cast.getInputs()[0];
}

struct TensorMapsAsPointers
    : mlir::nvfp4::impl::NVFP4TensorMapsAsPointersBase<TensorMapsAsPointers> {
  void runOnOperation() override {
    llvm::SetVector<Operation *> casts;
    getOperation().walk([&](gpu::LaunchFuncOp launch) {
      for (OpOperand &operand : launch.getKernelOperandsMutable())
        if (Value pointer = devicePointerOf(operand.get())) {
          casts.insert(operand.get().getDefiningOp());
          operand.set(pointer);
        }
    });
    // Casts nothing reads any more.
    for (Operation *cast : casts)
      if (cast->use_empty())
        cast->erase();
  }
};

} // namespace
