//===- AssignPrecision.h - per-layer precision policy -----------*- C++ -*-===//
//
// Part of the nvfp4 project.
//
//===----------------------------------------------------------------------===//
//
// The policy of nvfp4-assign-precision as functions another compiler can
// call: block inference from residual connections, and the assignment of
// `nvfp4.precision` to every GEMM of a module.
//
//===----------------------------------------------------------------------===//

#ifndef NVFP4_DIALECT_NVFP4_TRANSFORMS_ASSIGNPRECISION_H
#define NVFP4_DIALECT_NVFP4_TRANSFORMS_ASSIGNPRECISION_H

#include "mlir/IR/Operation.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "llvm/ADT/DenseMap.h"

#include <string>

namespace mlir {
namespace nvfp4 {

/// Which GEMMs stay in high precision (the paper's 12B recipe by default).
struct PrecisionPolicy {
  /// Leading and trailing blocks kept in BF16.
  unsigned keepFirst = 2;
  unsigned keepLast = 8;
  /// `nvfp4.kind` values kept in BF16; "attention-bmm" names the attention
  /// BMMs (see GemmInfo::isAttentionBMM).
  llvm::SmallVector<std::string> keepKinds = {"attention-bmm", "embedding",
                                              "head"};
  /// Late-training switches: every GEMM, or every fprop GEMM, in BF16.
  bool allBF16 = false;
  bool forwardBF16 = false;
};

/// Blocks of a function inferred from its residual connections: an
/// elementwise add `a + f(a)` where `f` contains a contraction closes a
/// block, and a GEMM's block is the number of such adds upstream of it
/// (GEMMs after the last one count in the last block).
struct InferredBlocks {
  /// Number of residual connections found; 0 when there is none.
  unsigned numResidualConnections = 0;
  /// The block of every contraction of the function.
  llvm::DenseMap<Operation *, int64_t> blockOf;
};
InferredBlocks inferBlocksFromResiduals(FunctionOpInterface function);

/// Writes `nvfp4.precision` on every GEMM nested in `root` (and
/// `nvfp4.layer` where blocks were inferred), emitting remarks for the
/// assumptions it makes. Existing `nvfp4.precision` attributes are kept.
void assignPrecision(Operation *root, const PrecisionPolicy &policy);

} // namespace nvfp4
} // namespace mlir

#endif // NVFP4_DIALECT_NVFP4_TRANSFORMS_ASSIGNPRECISION_H
