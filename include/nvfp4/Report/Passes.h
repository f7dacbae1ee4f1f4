//===- Passes.h - nvfp4 report passes ---------------------------*- C++ -*-===//
//
// Part of the nvfp4 project.
//
//===----------------------------------------------------------------------===//

#ifndef NVFP4_REPORT_PASSES_H
#define NVFP4_REPORT_PASSES_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace mlir {
namespace nvfp4 {

#define GEN_PASS_DECL
#include "nvfp4/Report/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "nvfp4/Report/Passes.h.inc"

} // namespace nvfp4
} // namespace mlir

#endif // NVFP4_REPORT_PASSES_H
