//===- Passes.h - nvfp4 graph-level passes ----------------------*- C++ -*-===//
//
// Part of the nvfp4 project.
//
//===----------------------------------------------------------------------===//

#ifndef NVFP4_DIALECT_NVFP4_TRANSFORMS_PASSES_H
#define NVFP4_DIALECT_NVFP4_TRANSFORMS_PASSES_H

#include "nvfp4/Dialect/NVFP4/IR/NVFP4Dialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Pass/Pass.h"

namespace mlir {
namespace nvfp4 {

#define GEN_PASS_DECL
#include "nvfp4/Dialect/NVFP4/Transforms/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "nvfp4/Dialect/NVFP4/Transforms/Passes.h.inc"

} // namespace nvfp4
} // namespace mlir

#endif // NVFP4_DIALECT_NVFP4_TRANSFORMS_PASSES_H
