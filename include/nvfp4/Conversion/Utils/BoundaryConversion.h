//===- BoundaryConversion.h - block-scaled values across regions -*- C++ -*-===//
//
// Part of the nvfp4 project.
//
//===----------------------------------------------------------------------===//
//
// Both lowerings split one `!nvfp4.tensor` value into several values (1:N
// type conversion). This sets up what makes that work across function
// signatures, calls, returns and scf regions, and what is legal afterwards.
//
//===----------------------------------------------------------------------===//

#ifndef NVFP4_CONVERSION_UTILS_BOUNDARYCONVERSION_H
#define NVFP4_CONVERSION_UTILS_BOUNDARYCONVERSION_H

#include "mlir/Transforms/DialectConversion.h"

namespace mlir {
namespace nvfp4 {

/// Adds the func/call/return and scf structural patterns for `converter` to
/// `patterns`, makes the nvfp4 dialect illegal, and makes every other op
/// legal once its types are converted.
void populateBlockScaledBoundaryConversion(const TypeConverter &converter,
                                           RewritePatternSet &patterns,
                                           ConversionTarget &target);

/// Fails, with an error on the first nvfp4 op found in a region without SSA
/// dominance (a graph region: the body of builtin.module, for one). Such a
/// region may hold use-def cycles (`%x = nvfp4.transpose %y`,
/// `%y = nvfp4.transpose %x`) that no lowering can order; both lowerings
/// call this first.
LogicalResult checkNoNVFP4OpsInGraphRegions(Operation *root);

} // namespace nvfp4
} // namespace mlir

#endif // NVFP4_CONVERSION_UTILS_BOUNDARYCONVERSION_H
