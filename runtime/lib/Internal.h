//===- Internal.h - Helpers shared by the runtime's sources -----*- C++ -*-===//
//
// Part of the nvfp4 project.
//
//===----------------------------------------------------------------------===//

#ifndef NVFP4_RUNTIME_LIB_INTERNAL_H
#define NVFP4_RUNTIME_LIB_INTERNAL_H

#include "nvfp4/Runtime/Runtime.h"

#include <cstdint>

namespace nvfp4::runtime::detail {

/// Scalar kernel parameters may be integers, f32 or f64 (the narrow float
/// types only occur as buffer elements).
bool isSupportedScalarParamType(ScalarType type);

/// The bits of `value` as a `type` (in the low scalarTypeSize(type) bytes):
/// integers are truncated to the type's width (two's complement), floats
/// rounded to it; a non-integral float for an integer type is an error.
Expected<uint64_t> encodeScalar(ScalarType type, const ScalarValue &value);

} // namespace nvfp4::runtime::detail

#endif // NVFP4_RUNTIME_LIB_INTERNAL_H
