//===- KernelBuilder.cpp - the skeleton of generated GPU kernels ----------===//
//
// Part of the nvfp4 project.
//
//===----------------------------------------------------------------------===//

#include "KernelBuilder.h"
#include "nvfp4/Dialect/NVFP4/IR/NVFP4Dialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/Support/MathExtras.h"

using namespace mlir;
using namespace mlir::nvfp4;
using namespace mlir::nvfp4::kernels;

static gpu::GPUModuleOp getKernelModule(ModuleOp module) {
  if (auto existing = module.lookupSymbol<gpu::GPUModuleOp>(kKernelModuleName))
    return existing;
  module->setAttr(gpu::GPUDialect::getContainerModuleAttrName(),
                  UnitAttr::get(module.getContext()));
  OpBuilder b = OpBuilder::atBlockEnd(module.getBody());
  auto kernelModule =
      gpu::GPUModuleOp::create(b, module.getLoc(), kKernelModuleName);
  kernelModule->setAttr(kGeneratedKernelsAttrName, b.getUnitAttr());
  return kernelModule;
}

gpu::GPUFuncOp kernels::getOrCreateKernel(ModuleOp module, StringRef name,
                                          TypeRange argTypes,
                                          int64_t blockSize,
                                          KernelBodyBuilder body) {
  KernelOptions options;
  options.blockSize = blockSize;
  return getOrCreateKernel(module, name, argTypes, options, body);
}

gpu::GPUFuncOp kernels::getOrCreateKernel(ModuleOp module, StringRef name,
                                          TypeRange argTypes,
                                          const KernelOptions &options,
                                          KernelBodyBuilder body) {
  gpu::GPUModuleOp kernelModule = getKernelModule(module);
  if (auto existing = kernelModule.lookupSymbol<gpu::GPUFuncOp>(name))
    return existing;
  OpBuilder b = OpBuilder::atBlockEnd(kernelModule.getBody());
  Location loc = module.getLoc();
  auto func = gpu::GPUFuncOp::create(b, loc, name,
                                     b.getFunctionType(argTypes, {}),
                                     TypeRange(options.workgroupBuffers));
  func->setAttr(gpu::GPUDialect::getKernelFuncAttrName(), b.getUnitAttr());
  // The block size is fixed: tell the backend (it becomes .reqntid).
  func.setKnownBlockSizeAttr(b.getDenseI32ArrayAttr(
      {static_cast<int32_t>(options.blockSize), 1, 1}));
  for (auto [index, alignment] : llvm::enumerate(options.workgroupAlignments))
    if (alignment > 0)
      func.setWorkgroupAttributionAttr(index, "llvm.align",
                                       b.getI64IntegerAttr(alignment));
  if (options.minBlocksPerMultiprocessor > 0)
    func->setAttr("nvvm.minctasm",
                  b.getI32IntegerAttr(options.minBlocksPerMultiprocessor));
  b.setInsertionPointToStart(&func.getBody().front());
  body(b, loc, func.getArguments());
  gpu::ReturnOp::create(b, loc);
  return func;
}

Value kernels::globalThreadIndex(OpBuilder &b, Location loc) {
  Value block = gpu::BlockIdOp::create(b, loc, gpu::Dimension::x);
  Value size = gpu::BlockDimOp::create(b, loc, gpu::Dimension::x);
  Value thread = gpu::ThreadIdOp::create(b, loc, gpu::Dimension::x);
  return arith::AddIOp::create(b, loc,
                               arith::MulIOp::create(b, loc, block, size),
                               thread);
}

Value kernels::indexConstant(OpBuilder &b, Location loc, int64_t value) {
  return arith::ConstantIndexOp::create(b, loc, value);
}

void kernels::launchKernel(OpBuilder &b, Location loc, gpu::GPUFuncOp kernel,
                           int64_t threads, int64_t blockSize,
                           ValueRange args) {
  int64_t blocks = llvm::divideCeil(threads, blockSize);
  Value one = indexConstant(b, loc, 1);
  gpu::KernelDim3 grid{indexConstant(b, loc, blocks), one, one};
  gpu::KernelDim3 block{indexConstant(b, loc, blockSize), one, one};
  gpu::LaunchFuncOp::create(b, loc, kernel, grid, block,
                            /*dynamicSharedMemorySize=*/Value(), args);
}

void kernels::launchKernel(OpBuilder &b, Location loc, gpu::GPUFuncOp kernel,
                           std::array<int64_t, 3> grid, int64_t blockSize,
                           int64_t sharedMemoryBytes, ValueRange args) {
  Value one = indexConstant(b, loc, 1);
  gpu::KernelDim3 gridDims{indexConstant(b, loc, grid[0]),
                           indexConstant(b, loc, grid[1]),
                           indexConstant(b, loc, grid[2])};
  gpu::KernelDim3 block{indexConstant(b, loc, blockSize), one, one};
  Value smem = arith::ConstantIntOp::create(b, loc, b.getI32Type(),
                                            sharedMemoryBytes);
  gpu::LaunchFuncOp::create(b, loc, kernel, gridDims, block, smem, args);
}

Value kernels::flatten(OpBuilder &b, Location loc, Value memref) {
  auto type = cast<MemRefType>(memref.getType());
  if (type.getRank() == 1)
    return memref;
  // A rank-0 memref holds one element: expand it to memref<1x...>, as
  // collapse_shape cannot produce a rank higher than its source's.
  if (type.getRank() == 0)
    return memref::ExpandShapeOp::create(
        b, loc, MemRefType::get({1}, type.getElementType()), memref,
        ArrayRef<ReassociationIndices>{});
  SmallVector<ReassociationIndices> all(1);
  for (int64_t d = 0; d < type.getRank(); ++d)
    all[0].push_back(d);
  return memref::CollapseShapeOp::create(b, loc, memref, all);
}

Value kernels::allocDevice(OpBuilder &b, Location loc, MemRefType type,
                           bool zeroFill) {
  Value buffer = gpu::AllocOp::create(b, loc, type, /*asyncToken=*/Type(),
                                      ValueRange(), ValueRange(), ValueRange(),
                                      /*hostShared=*/false)
                     .getMemref();
  if (zeroFill) {
    Value zero = arith::ConstantOp::create(
        b, loc, b.getZeroAttr(type.getElementType()));
    gpu::MemsetOp::create(b, loc, /*asyncToken=*/Type(), ValueRange(), buffer,
                          zero);
  }
  return buffer;
}
