//===- NVFP4ToGPU.cpp - the convert-nvfp4-to-gpu pass ---------------------===//
//
// Part of the nvfp4 project.
//
//===----------------------------------------------------------------------===//

#include "nvfp4/Conversion/NVFP4ToGPU/NVFP4ToGPU.h"
#include "nvfp4/Conversion/Passes.h"
#include "nvfp4/Conversion/Utils/BoundaryConversion.h"
#include "nvfp4/Dialect/NVFP4/IR/NVFP4Ops.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

namespace mlir {
namespace nvfp4 {
#define GEN_PASS_DEF_CONVERTNVFP4TOGPU
#include "nvfp4/Conversion/Passes.h.inc"
} // namespace nvfp4
} // namespace mlir

using namespace mlir;
using namespace mlir::nvfp4;

GPUHostTypeConverter::GPUHostTypeConverter() {
  addConversion([](Type type) { return type; });
  addConversion([](BlockScaledTensorType type,
                   SmallVectorImpl<Type> &results) -> LogicalResult {
    MLIRContext *ctx = type.getContext();
    auto i8 = IntegerType::get(ctx, 8);
    // Two E2M1 codes per byte, even element in the low nibble.
    SmallVector<int64_t> packed(type.getShape());
    packed.back() /= 2;
    results.push_back(MemRefType::get(packed, i8));
    results.push_back(MemRefType::get(type.getScalesType().getShape(), i8));
    // The FP32 amax, kept as its bits: kernels reduce it with an integer
    // atomic max.
    results.push_back(MemRefType::get({1}, IntegerType::get(ctx, 32)));
    return success();
  });
}

/// Ops convert-nvfp4-to-gpu cannot lower yet, with the reason.
static LogicalResult checkSupportedOps(ModuleOp module,
                                       const ::nvfp4::target::ChipInfo &chip) {
  WalkResult result = module.walk([&](Operation *op) {
    if (isa<PackOp, UnpackOp, SwizzleScalesOp>(op)) {
      op->emitOpError("has no GPU lowering yet: the GPU path keeps codes "
                      "packed two per byte, and repacking kernels do not "
                      "exist yet");
      return WalkResult::interrupt();
    }
    // Kernels are specialized for their shapes (grid, loop bounds, names):
    // a dynamic size would be taken for kDynamic, INT64_MIN. amax and
    // hadamard accept dynamic shapes; the reference lowering handles them.
    if (!isa_and_present<NVFP4Dialect>(op->getDialect()))
      return WalkResult::advance();
    SmallVector<Type> types(op->getOperandTypes());
    llvm::append_range(types, op->getResultTypes());
    for (Type type : types) {
      auto shaped = dyn_cast<ShapedType>(type);
      if (shaped && !shaped.hasStaticShape()) {
        op->emitOpError("needs static shapes on the GPU path, got ") << type;
        return WalkResult::interrupt();
      }
    }
    return WalkResult::advance();
  });
  return failure(result.wasInterrupted());
}

namespace {
struct ConvertNVFP4ToGPUPass
    : public mlir::nvfp4::impl::ConvertNVFP4ToGPUBase<ConvertNVFP4ToGPUPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    const ::nvfp4::target::ChipInfo *chipInfo =
        ::nvfp4::target::lookupChip(chip);
    if (!chipInfo) {
      module.emitError() << "unsupported chip '" << chip << "' (supported: "
                         << ::nvfp4::target::supportedChipNames() << ")";
      return signalPassFailure();
    }
    if (failed(checkSupportedOps(module, *chipInfo)))
      return signalPassFailure();

    MLIRContext *ctx = &getContext();
    GPUHostTypeConverter converter;
    RewritePatternSet patterns(ctx);
    populateQuantizeToGPUPatterns(converter, patterns, *chipInfo);
    std::string message;
    if (failed(populateMatmulToGPUPatterns(converter, patterns, *chipInfo,
                                           gemmSchedule, message))) {
      module.emitError() << message;
      return signalPassFailure();
    }
    populateTransposeToGPUPatterns(converter, patterns);

    ConversionTarget target(*ctx);
    target.addLegalDialect<arith::ArithDialect,
                           bufferization::BufferizationDialect,
                           gpu::GPUDialect, LLVM::LLVMDialect,
                           math::MathDialect,
                           memref::MemRefDialect, NVVM::NVVMDialect,
                           nvgpu::NVGPUDialect, scf::SCFDialect,
                           vector::VectorDialect>();
    populateBlockScaledBoundaryConversion(converter, patterns, target);

    if (failed(applyPartialConversion(module, target, std::move(patterns))))
      signalPassFailure();
  }
};
} // namespace
