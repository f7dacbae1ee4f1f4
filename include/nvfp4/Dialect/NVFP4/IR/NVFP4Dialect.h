//===- NVFP4Dialect.h - nvfp4 dialect, attributes and types -----*- C++ -*-===//
//
// Part of the nvfp4 project.
//
//===----------------------------------------------------------------------===//
//
// The dialect class, its enum attributes (rounding, scale layout, precision,
// GEMM role) and the `!nvfp4.tensor` block-scaled tensor type.
//
//===----------------------------------------------------------------------===//

#ifndef NVFP4_DIALECT_NVFP4_IR_NVFP4DIALECT_H
#define NVFP4_DIALECT_NVFP4_IR_NVFP4DIALECT_H

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Dialect.h"

#include "nvfp4/Dialect/NVFP4/IR/NVFP4Dialect.h.inc"
#include "nvfp4/Dialect/NVFP4/IR/NVFP4Enums.h.inc"

#define GET_ATTRDEF_CLASSES
#include "nvfp4/Dialect/NVFP4/IR/NVFP4Attrs.h.inc"

#define GET_TYPEDEF_CLASSES
#include "nvfp4/Dialect/NVFP4/IR/NVFP4Types.h.inc"

namespace mlir {
namespace nvfp4 {

/// Names of the discardable attributes a frontend (or nvfp4-assign-precision)
/// puts on linalg contractions and function arguments. The dialect verifies
/// their values wherever they appear.
struct ModelAnnotation {
  static constexpr llvm::StringLiteral kLayer = "nvfp4.layer";
  static constexpr llvm::StringLiteral kKind = "nvfp4.kind";
  static constexpr llvm::StringLiteral kRole = "nvfp4.role";
  static constexpr llvm::StringLiteral kPrecision = "nvfp4.precision";
  static constexpr llvm::StringLiteral kWeight = "nvfp4.weight";
};

/// Elements per block along the contraction dimension (the NVFP4 block).
constexpr int64_t kBlockSize = 16;

} // namespace nvfp4
} // namespace mlir

#endif // NVFP4_DIALECT_NVFP4_IR_NVFP4DIALECT_H
