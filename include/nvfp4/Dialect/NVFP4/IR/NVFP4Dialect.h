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

#include <optional>

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

/// Unit attribute on the `gpu.module @nvfp4_kernels` that convert-nvfp4-to-gpu
/// creates. The lowering finds its kernel module by name; a symbol of that
/// name without this mark is the user's, and the lowering refuses it rather
/// than adding kernels to it (or reusing a user kernel of a generated name).
constexpr llvm::StringLiteral kGeneratedKernelsAttrName = "nvfp4.generated";

/// Elements per block along the contraction dimension (the NVFP4 block).
constexpr int64_t kBlockSize = 16;

/// Elements per block of the MX formats (OCP MX v1.0: 32).
constexpr int64_t kMXBlockSize = 32;

/// The most elements a block-scaled tensor may have (rule T6 of
/// !nvfp4.tensor): 2^47. Padding the trailing dimensions to the 128x64
/// swizzled scale tile multiplies the count by at most 512, and a byte size
/// by at most 8 more, so no size or linear index derived from a valid type
/// overflows int64.
constexpr int64_t kMaxBlockScaledElements = int64_t(1) << 47;

/// The number of elements of a tensor of `shape`, or std::nullopt when a
/// dimension is dynamic or negative or the product exceeds
/// kMaxBlockScaledElements (never overflowing on the way).
std::optional<int64_t> getBoundedElementCount(llvm::ArrayRef<int64_t> shape);

} // namespace nvfp4
} // namespace mlir

#endif // NVFP4_DIALECT_NVFP4_IR_NVFP4DIALECT_H
