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
