//===- NVFP4ToReference.cpp - the convert-nvfp4-to-reference pass --------===//
//
// Part of the nvfp4 project.
//
//===----------------------------------------------------------------------===//

#include "nvfp4/Conversion/NVFP4ToReference/NVFP4ToReference.h"
#include "TensorBuilders.h"
#include "nvfp4/Conversion/Passes.h"
#include "nvfp4/Conversion/Utils/BoundaryConversion.h"
#include "nvfp4/Dialect/NVFP4/IR/NVFP4Ops.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

namespace mlir {
namespace nvfp4 {
#define GEN_PASS_DEF_CONVERTNVFP4TOREFERENCE
#include "nvfp4/Conversion/Passes.h.inc"
} // namespace nvfp4
} // namespace mlir

using namespace mlir;
using namespace mlir::nvfp4;

ReferenceTypeConverter::ReferenceTypeConverter() {
  addConversion([](Type type) { return type; });
  addConversion([](BlockScaledTensorType type,
                   SmallVectorImpl<Type> &results) -> LogicalResult {
    MLIRContext *ctx = type.getContext();
    auto i8 = IntegerType::get(ctx, 8);
    results.push_back(RankedTensorType::get(type.getShape(), i8));
    results.push_back(RankedTensorType::get(type.getScalesType().getShape(), i8));
    results.push_back(Float32Type::get(ctx));
    return success();
  });
}

void mlir::nvfp4::populateNVFP4ToReferencePatterns(
    const TypeConverter &converter, RewritePatternSet &patterns) {
  populateQuantizeToReferencePatterns(converter, patterns);
  populateMatmulToReferencePatterns(converter, patterns);
  populatePackingToReferencePatterns(converter, patterns);
}

std::pair<QuantizeOp, QuantizeOp>
mlir::nvfp4::decomposeDualQuantize(RewriterBase &rewriter, DualQuantizeOp op) {
  OpBuilder::InsertionGuard guard(rewriter);
  rewriter.setInsertionPoint(op);
  Location loc = op.getLoc();
  auto rowwise = QuantizeOp::create(
      rewriter, loc, op.getRowwise().getType(), op.getInput(), op.getAmax(),
      op.getSeed(), op.getRounding(), /*hadamard=*/nullptr);
  Value transposed = reference::transposeLastTwo(rewriter, loc, op.getInput());
  auto columnwise = QuantizeOp::create(
      rewriter, loc, op.getColumnwise().getType(), transposed,
      op.getColumnwiseAmax(), op.getColumnwiseSeed(),
      op.getColumnwiseRounding(), op.getHadamardAttr());
  rewriter.replaceOp(op, ValueRange{rowwise.getResult(),
                                    columnwise.getResult()});
  return {rowwise, columnwise};
}

/// Ops that the conversion rewrites or whose block-scaled operands and
/// results it splits: nvfp4 ops, function boundaries and scf control flow.
static bool isHandledByConversion(Operation *op) {
  // Unregistered ops have no dialect.
  Dialect *dialect = op->getDialect();
  return (dialect && isa<NVFP4Dialect, scf::SCFDialect>(dialect)) ||
         isa<func::FuncOp, func::CallOp, func::ReturnOp>(op);
}

/// Reports ops outside the conversion's reach that carry block-scaled
/// values, with a hint, instead of a generic "failed to legalize".
static LogicalResult checkBlockScaledUsers(ModuleOp module) {
  WalkResult result = module.walk([](Operation *op) {
    // The Hadamard lowering multiplies [elements / 16, 16] chunks, also
    // for an amax or quantize that carries the RHT; nvfp4.amax is the one
    // op here that otherwise lowers with dynamic sizes.
    auto rhtOperand = [](Operation *op) -> Value {
      if (auto hadamard = dyn_cast<HadamardOp>(op))
        return hadamard.getInput();
      if (auto amax = dyn_cast<AmaxOp>(op); amax && amax.getHadamard())
        return amax.getInput();
      if (auto quantize = dyn_cast<QuantizeOp>(op);
          quantize && quantize.getHadamard())
        return quantize.getInput();
      return nullptr;
    };
    if (Value input = rhtOperand(op);
        input && !cast<ShapedType>(input.getType()).hasStaticShape()) {
      op->emitOpError("needs a static shape for the RHT in the reference "
                      "lowering, got ")
          << input.getType();
      return WalkResult::interrupt();
    }
    if (isHandledByConversion(op))
      return WalkResult::advance();
    auto isBlockScaled = [](Type t) { return isa<BlockScaledTensorType>(t); };
    if (llvm::any_of(op->getOperandTypes(), isBlockScaled) ||
        llvm::any_of(op->getResultTypes(), isBlockScaled)) {
      op->emitOpError("takes or returns a block-scaled tensor and has no "
                      "reference lowering; nvfp4.unpack the value into codes, "
                      "scales and amax first");
      return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  return failure(result.wasInterrupted());
}

namespace {
struct ConvertNVFP4ToReferencePass
    : public mlir::nvfp4::impl::ConvertNVFP4ToReferenceBase<ConvertNVFP4ToReferencePass> {
  void runOnOperation() override {
    MLIRContext *ctx = &getContext();
    if (failed(checkNoNVFP4OpsInGraphRegions(getOperation())) ||
        failed(checkBlockScaledUsers(getOperation())))
      return signalPassFailure();
    // The epilogue-quantizing GEMM is, on the CPU, the GEMM and the
    // quantization it stands for; the dual quantization is its two
    // quantizations.
    IRRewriter rewriter(ctx);
    getOperation().walk([&](ScaledMatmulQuantizeOp op) {
      op.decompose(rewriter);
    });
    getOperation().walk(
        [&](DualQuantizeOp op) { decomposeDualQuantize(rewriter, op); });
    ReferenceTypeConverter converter;
    RewritePatternSet patterns(ctx);
    populateNVFP4ToReferencePatterns(converter, patterns);

    // Block-scaled values crossing function, call, return and scf
    // boundaries become their three parts.
    ConversionTarget target(*ctx);
    target.addLegalDialect<arith::ArithDialect, bufferization::BufferizationDialect,
                           linalg::LinalgDialect, math::MathDialect,
                           tensor::TensorDialect>();
    populateBlockScaledBoundaryConversion(converter, patterns, target);

    if (failed(applyPartialConversion(getOperation(), target,
                                      std::move(patterns))))
      signalPassFailure();
  }
};
} // namespace
