//===- Numerics.h - The NVFP4 numerics reference library --------*- C++ -*-===//
//
// Part of the nvfp4 project.
//
//===----------------------------------------------------------------------===//
//
// Umbrella header of the pure C++ (no MLIR/LLVM) bit-exact reference for NVFP4:
// formats, quantization, stochastic rounding, the Hadamard transform, scale
// layouts and the block-scaled GEMM. docs/Numerics.md describes the algorithms.
//
//===----------------------------------------------------------------------===//

#ifndef NVFP4_NUMERICS_NUMERICS_H
#define NVFP4_NUMERICS_NUMERICS_H

#include "nvfp4/Numerics/Formats.h"
#include "nvfp4/Numerics/Gemm.h"
#include "nvfp4/Numerics/Hadamard.h"
#include "nvfp4/Numerics/MX.h"
#include "nvfp4/Numerics/Philox.h"
#include "nvfp4/Numerics/Quantize.h"
#include "nvfp4/Numerics/ScaleLayout.h"
#include "nvfp4/Numerics/Status.h"
#include "nvfp4/Numerics/StochasticRounding.h"

#endif // NVFP4_NUMERICS_NUMERICS_H
