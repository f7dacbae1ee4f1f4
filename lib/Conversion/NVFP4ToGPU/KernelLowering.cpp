//===- KernelLowering.cpp - generated kernels to LLVM/NVVM ----------------===//
//
// Part of the nvfp4 project.
//
//===----------------------------------------------------------------------===//

#include "nvfp4/Conversion/Passes.h"

#include "mlir/Conversion/ArithToLLVM/ArithToLLVM.h"
#include "mlir/Conversion/ControlFlowToLLVM/ControlFlowToLLVM.h"
#include "mlir/Conversion/GPUToNVVM/GPUToNVVMPass.h"
#include "mlir/Conversion/LLVMCommon/ConversionTarget.h"
#include "mlir/Conversion/LLVMCommon/LoweringOptions.h"
#include "mlir/Conversion/LLVMCommon/TypeConverter.h"
#include "mlir/Conversion/MathToLLVM/MathToLLVM.h"
#include "mlir/Conversion/MemRefToLLVM/MemRefToLLVM.h"
#include "mlir/Conversion/VectorToLLVM/ConvertVectorToLLVM.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"

namespace mlir {
namespace nvfp4 {
#define GEN_PASS_DEF_CONVERTNVFP4KERNELSTONVVM
#include "nvfp4/Conversion/Passes.h.inc"
} // namespace nvfp4
} // namespace mlir

using namespace mlir;

namespace {
struct ConvertNVFP4KernelsToNVVMPass
    : public mlir::nvfp4::impl::ConvertNVFP4KernelsToNVVMBase<
          ConvertNVFP4KernelsToNVVMPass> {
  void runOnOperation() override {
    gpu::GPUModuleOp module = getOperation();
    MLIRContext *ctx = &getContext();
    LowerToLLVMOptions options(ctx);
    options.useBarePtrCallConv = true;
    LLVMTypeConverter converter(ctx, options);
    configureGpuToNVVMTypeConverter(converter);
    // A TMA tensor map parameter is the generic address of its 128 bytes
    // (the runtime keeps them in global memory; GemmPipeline.h).
    converter.addConversion([ctx](nvgpu::TensorMapDescriptorType) -> Type {
      return LLVM::LLVMPointerType::get(ctx);
    });

    RewritePatternSet patterns(ctx);
    populateGpuToNVVMConversionPatterns(converter, patterns);
    arith::populateArithToLLVMConversionPatterns(converter, patterns);
    cf::populateControlFlowToLLVMConversionPatterns(converter, patterns);
    populateFinalizeMemRefToLLVMConversionPatterns(converter, patterns);
    populateVectorToLLVMConversionPatterns(converter, patterns);
    // Intrinsics, not libdevice: populateLibDeviceConversionPatterns is
    // deliberately not added.
    populateMathToLLVMConversionPatterns(converter, patterns);

    LLVMConversionTarget target(*ctx);
    configureGpuToNVVMConversionLegality(target);
    // configureGpuToNVVMConversionLegality forbids these intrinsics so that
    // libdevice patterns take over; each is one exact PTX instruction.
    target.addLegalOp<LLVM::FAbsOp, LLVM::FFloorOp, LLVM::RoundEvenOp,
                      LLVM::FMAOp, LLVM::CopySignOp>();
    // ex2.approx.f32 and sqrt.rn.f32, which the linalg kernels' exp and
    // rsqrt are written with (LinalgKernels.cpp).
    target.addLegalOp<LLVM::Exp2Op, LLVM::SqrtOp>();
    if (failed(applyPartialConversion(module, target, std::move(patterns))))
      signalPassFailure();
  }
};
} // namespace
