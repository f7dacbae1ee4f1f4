//===- BoundaryConversion.cpp - block-scaled values across regions --------===//
//
// Part of the nvfp4 project.
//
//===----------------------------------------------------------------------===//

#include "nvfp4/Conversion/Utils/BoundaryConversion.h"
#include "nvfp4/Dialect/NVFP4/IR/NVFP4Dialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Func/Transforms/FuncConversions.h"
#include "mlir/Dialect/SCF/Transforms/Patterns.h"
#include "mlir/IR/RegionKindInterface.h"

using namespace mlir;

void mlir::nvfp4::populateBlockScaledBoundaryConversion(
    const TypeConverter &converter, RewritePatternSet &patterns,
    ConversionTarget &target) {
  target.addIllegalDialect<NVFP4Dialect>();
  populateFunctionOpInterfaceTypeConversionPattern<func::FuncOp>(patterns,
                                                                 converter);
  populateCallOpTypeConversionPattern(patterns, converter);
  populateReturnOpTypeConversionPattern(patterns, converter);
  target.addDynamicallyLegalOp<func::FuncOp>([&converter](func::FuncOp op) {
    return converter.isSignatureLegal(op.getFunctionType()) &&
           converter.isLegal(&op.getBody());
  });
  target.addDynamicallyLegalOp<func::CallOp, func::ReturnOp>(
      [&converter](Operation *op) { return converter.isLegal(op); });
  scf::populateSCFStructuralTypeConversionsAndLegality(converter, patterns,
                                                       target);
  target.markUnknownOpDynamicallyLegal(
      [&converter](Operation *op) { return converter.isLegal(op); });
}

LogicalResult mlir::nvfp4::checkNoNVFP4OpsInGraphRegions(Operation *root) {
  WalkResult result = root->walk([](Operation *op) {
    if (!isa_and_present<NVFP4Dialect>(op->getDialect()) ||
        mayHaveSSADominance(*op->getParentRegion()))
      return WalkResult::advance();
    op->emitOpError("is in a graph region (the body of '")
        << op->getParentOp()->getName()
        << "'), where operands need not be defined before their uses; the "
           "lowerings need program order: put nvfp4 operations in a function";
    return WalkResult::interrupt();
  });
  return failure(result.wasInterrupted());
}
