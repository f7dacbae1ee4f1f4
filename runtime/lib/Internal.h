//===- Internal.h - Helpers shared by the runtime's sources -----*- C++ -*-===//
//
// Part of the nvfp4 project.
//
//===----------------------------------------------------------------------===//

#ifndef NVFP4_RUNTIME_LIB_INTERNAL_H
#define NVFP4_RUNTIME_LIB_INTERNAL_H

#include "nvfp4/Runtime/Runtime.h"

#include <cstdint>
#include <string>

namespace nvfp4::runtime::detail {

/// Scalar kernel parameters may be integers, f32 or f64 (the narrow float
/// types only occur as buffer elements).
bool isSupportedScalarParamType(ScalarType type);

/// The bits of `value` as a `type` (in the low scalarTypeSize(type) bytes):
/// integers are truncated to the type's width (two's complement), floats
/// rounded to it; a non-integral float for an integer type is an error.
Expected<uint64_t> encodeScalar(ScalarType type, const ScalarValue &value);

/// The bits a scalar kernel parameter gets at launch: its constant, its
/// host argument's value (`argumentValue`, non-null when p.argument >= 0),
/// or, for a "seed_stream" parameter, the stream seed derived from it.
Expected<uint64_t> scalarParamBits(const ParamSpec &param,
                                   const ScalarValue *argumentValue);

/// The 8-byte fill pattern of buffer `b` (fill_bits or its
/// fill_from_argument's value, `fillValue`), when it has one.
Expected<std::optional<uint64_t>>
bufferFillBits(const Manifest &m, const BufferSpec &b,
               const ScalarValue *fillValue);

/// "tensormap buffer 3 [2x200x512 i8, box 1x128x128, swizzle 128B, l2 256B,
/// oob zero]" (for describe() and messages).
std::string describeTensorMap(const TensorMapSpec &spec);

/// "cuTensorMapEncodeTiled(UINT8, rank 3, globalDim [512, 200, 2], ...)":
/// the driver arguments with cuda.h's enumerator names (less the common
/// CU_TENSOR_MAP_ prefix); runtime/python/nvfp4_tensormap.py prints the
/// same text, and test/Runtime compares the two.
std::string describeTensorMapEncoding(const TensorMapEncoding &encoding);

} // namespace nvfp4::runtime::detail

#endif // NVFP4_RUNTIME_LIB_INTERNAL_H
