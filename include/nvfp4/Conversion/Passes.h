//===- Passes.h - nvfp4 conversion passes -----------------------*- C++ -*-===//
//
// Part of the nvfp4 project.
//
//===----------------------------------------------------------------------===//

#ifndef NVFP4_CONVERSION_PASSES_H
#define NVFP4_CONVERSION_PASSES_H

#include "nvfp4/Conversion/NVFP4ToGPU/NVFP4ToGPU.h"
#include "nvfp4/Conversion/NVFP4ToReference/NVFP4ToReference.h"
#include "nvfp4/Conversion/UpstreamScaling/UpstreamScaling.h"

#include "mlir/Pass/Pass.h"

namespace mlir {
namespace nvfp4 {

#define GEN_PASS_DECL
#include "nvfp4/Conversion/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "nvfp4/Conversion/Passes.h.inc"

} // namespace nvfp4
} // namespace mlir

#endif // NVFP4_CONVERSION_PASSES_H
