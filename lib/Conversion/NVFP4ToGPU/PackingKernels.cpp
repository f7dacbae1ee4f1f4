//===- PackingKernels.cpp - nvfp4.pack on the GPU -------------------------===//
//
// Part of the nvfp4 project.
//
// nvfp4.pack of a tensor quantized elsewhere (a checkpoint): the codes come
// one per element (tensor<...xf4E2M1FN>, one byte each in memory, the code
// in the low nibble), the scales already in the result's layout, the amax as
// an f32. The GPU form of a block-scaled value keeps two codes per byte, so
// one kernel packs the codes -- thread t writes byte t from codes 2t (low
// nibble) and 2t+1 (high nibble) -- and, in its first threads, copies the
// scale bytes; the amax goes to its device buffer as the quantize lowering
// gives one (givenAmaxBuffer).
//
//===----------------------------------------------------------------------===//

#include "KernelBuilder.h"
#include "KernelUtils.h"
#include "nvfp4/Conversion/NVFP4ToGPU/NVFP4ToGPU.h"
#include "nvfp4/Dialect/NVFP4/IR/NVFP4Ops.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Transforms/DialectConversion.h"

using namespace mlir;
using namespace mlir::nvfp4;
using namespace mlir::nvfp4::kernels;

/// Threads of the pack kernel of `type`: one per packed code byte, or one
/// per scale byte where the (padded, swizzled) scales are more.
static int64_t packThreads(BlockScaledTensorType type) {
  return std::max(product(type.getShape()) / 2,
                  product(type.getScalesType().getShape()));
}

/// The pack kernel for `type`: arguments are the flat codes (f4E2M1FN) and
/// scales (f8E4M3FN) and the flat packed codes and scale bytes written.
static gpu::GPUFuncOp buildPackKernel(ModuleOp module,
                                      BlockScaledTensorType type) {
  MLIRContext *ctx = module.getContext();
  int64_t count = product(type.getShape());
  int64_t scaleCount = product(type.getScalesType().getShape());
  auto i8 = IntegerType::get(ctx, 8);
  auto i4 = IntegerType::get(ctx, 4);
  SmallVector<Type> argTypes = {
      MemRefType::get({count}, type.getElementType()),
      MemRefType::get({scaleCount}, type.getScaleType()),
      MemRefType::get({count / 2}, i8), MemRefType::get({scaleCount}, i8)};
  std::string name = "nvfp4_pack_" + shapeName(type.getShape()) + "_" +
                     blockName(type);
  return getOrCreateKernel(
      module, name, argTypes, kThreadsPerBlock,
      [&](OpBuilder &b, Location loc, ValueRange args) {
        IndexMath m{b, loc};
        Value tid = globalThreadIndex(b, loc);
        auto ifCodes = scf::IfOp::create(b, loc, m.lt(tid, count / 2), false);
        {
          OpBuilder::InsertionGuard guard(b);
          b.setInsertionPointToStart(ifCodes.thenBlock());
          // The code's bits (bit 3 the sign), widened to a byte.
          auto code = [&](Value index) -> Value {
            Value element = memref::LoadOp::create(b, loc, args[0], index);
            Value bits = arith::BitcastOp::create(b, loc, i4, element);
            return arith::ExtUIOp::create(b, loc, i8, bits);
          };
          Value even = m.mul(tid, 2);
          Value low = code(even);
          Value high = arith::ShLIOp::create(
              b, loc, code(m.add(even, m.c(1))),
              arith::ConstantIntOp::create(b, loc, i8, 4));
          memref::StoreOp::create(b, loc,
                                  arith::OrIOp::create(b, loc, low, high),
                                  args[2], tid);
        }
        auto ifScale = scf::IfOp::create(b, loc, m.lt(tid, scaleCount), false);
        OpBuilder::InsertionGuard guard(b);
        b.setInsertionPointToStart(ifScale.thenBlock());
        Value scale = memref::LoadOp::create(b, loc, args[1], tid);
        memref::StoreOp::create(b, loc,
                                arith::BitcastOp::create(b, loc, i8, scale),
                                args[3], tid);
      });
}

/// A tensor operand as a flat device buffer.
static Value flatBuffer(OpBuilder &b, Location loc, Value tensor) {
  auto type = cast<RankedTensorType>(tensor.getType());
  Value buffer = bufferization::ToBufferOp::create(
      b, loc, MemRefType::get(type.getShape(), type.getElementType()), tensor,
      /*readOnly=*/true);
  return flatten(b, loc, buffer);
}

namespace {
struct PackToGPU : OpConversionPattern<PackOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(PackOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    BlockScaledTensorType type = op.getResult().getType();
    SmallVector<Type> partTypes;
    if (failed(getTypeConverter()->convertType(type, partTypes)) ||
        partTypes.size() != 3)
      return rewriter.notifyMatchFailure(op, "unconvertible result type");
    Location loc = op.getLoc();
    ModuleOp module = op->getParentOfType<ModuleOp>();
    Value codes = allocDevice(rewriter, loc, cast<MemRefType>(partTypes[0]),
                              /*zeroFill=*/false);
    Value scales = allocDevice(rewriter, loc, cast<MemRefType>(partTypes[1]),
                               /*zeroFill=*/false);
    Value amax = givenAmaxBuffer(rewriter, loc, adaptor.getAmax());
    gpu::GPUFuncOp kernel = buildPackKernel(module, type);
    launchKernel(rewriter, loc, kernel, packThreads(type), kThreadsPerBlock,
                 {flatBuffer(rewriter, loc, adaptor.getCodes()),
                  flatBuffer(rewriter, loc, adaptor.getScales()),
                  flatten(rewriter, loc, codes),
                  flatten(rewriter, loc, scales)});
    rewriter.replaceOpWithMultiple(op, {{codes, scales, amax}});
    return success();
  }
};
} // namespace

void mlir::nvfp4::populatePackingToGPUPatterns(const TypeConverter &converter,
                                               RewritePatternSet &patterns) {
  patterns.add<PackToGPU>(converter, patterns.getContext());
}
