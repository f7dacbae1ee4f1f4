//===- LinalgKernels.h - helpers of the linalg kernels ----------*- C++ -*-===//
//
// Part of the nvfp4 project.
//
//===----------------------------------------------------------------------===//
//
// What the kernels of linalg ops (LinalgKernels.cpp) and of scans
// (ScanKernels.cpp) share: affine index maps evaluated in a kernel, row-major
// offsets, and the math a cloned linalg body may use.
//
//===----------------------------------------------------------------------===//

#ifndef NVFP4_LIB_CONVERSION_NVFP4TOGPU_LINALGKERNELS_H
#define NVFP4_LIB_CONVERSION_NVFP4TOGPU_LINALGKERNELS_H

#include "KernelUtils.h"

#include "mlir/IR/AffineMap.h"
#include "mlir/IR/IRMapping.h"

namespace mlir {
namespace nvfp4 {
namespace kernels {

/// Row-major strides of a static shape.
SmallVector<int64_t> stridesOf(ArrayRef<int64_t> shape);

/// `expr` over the loop indices `loops`, as index arithmetic.
Value evaluateAffine(IndexMath &m, AffineExpr expr, ArrayRef<Value> loops);

/// Whether the kernels can evaluate `map` (no negative constants: unsigned
/// division is then floor division).
bool isEvaluable(AffineMap map);

/// The flat element offset of `indices` in a row-major buffer of `shape`.
Value linearOffset(IndexMath &m, ArrayRef<Value> indices,
                   ArrayRef<int64_t> shape);

/// The indices of `linear` in a row-major space of `ranges`.
SmallVector<Value> delinearize(IndexMath &m, Value linear,
                               ArrayRef<int64_t> ranges);

/// Whether a kernel body may contain the math op `op`.
bool isKernelMath(Operation *op);

/// exp, exp2, log, sqrt and rsqrt of f32 written with PTX intrinsics
/// (operands looked up in `map`); null for any other op.
Value expandMath(OpBuilder &b, Location loc, Operation &op,
                 const IRMapping &map);

} // namespace kernels
} // namespace nvfp4
} // namespace mlir

#endif // NVFP4_LIB_CONVERSION_NVFP4TOGPU_LINALGKERNELS_H
