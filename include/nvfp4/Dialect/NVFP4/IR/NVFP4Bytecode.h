//===- NVFP4Bytecode.h - the dialect's bytecode version ---------*- C++ -*-===//
//
// Part of the nvfp4 project.
//
//===----------------------------------------------------------------------===//

#ifndef NVFP4_DIALECT_NVFP4_IR_NVFP4BYTECODE_H
#define NVFP4_DIALECT_NVFP4_IR_NVFP4BYTECODE_H

#include <cstdint>

namespace mlir {
namespace nvfp4 {
class NVFP4Dialect;

/// The nvfp4 dialect version written into bytecode. 1: nvfp4 0.1 (the first
/// versioned encoding; 0.1.0 files without a version read the same way).
/// Raised, with an upgrade in the bytecode interface, whenever an op, type
/// or attribute changes its form (docs/Embedding.md, section 7).
inline constexpr uint64_t kNVFP4BytecodeVersion = 1;

namespace detail {
/// Attaches the bytecode interface (NVFP4Dialect::initialize).
void addBytecodeInterface(NVFP4Dialect *dialect);
} // namespace detail

} // namespace nvfp4
} // namespace mlir

#endif // NVFP4_DIALECT_NVFP4_IR_NVFP4BYTECODE_H
