//===- UpstreamScalingForm.h - the MX form in upstream ops -------*- C++ -*-===//
//
// Part of the nvfp4 project.
//
//===----------------------------------------------------------------------===//
//
// The constants of the upstream form of an MX quantization
// (docs/Numerics.md section 11.6), shared by the lowering that writes it and
// the raise that recognizes it.
//
//===----------------------------------------------------------------------===//

#ifndef NVFP4_LIB_CONVERSION_UPSTREAMSCALING_UPSTREAMSCALINGFORM_H
#define NVFP4_LIB_CONVERSION_UPSTREAMSCALING_UPSTREAMSCALINGFORM_H

#include "nvfp4/Dialect/NVFP4/IR/NVFP4Dialect.h"

#include "mlir/IR/BuiltinTypes.h"

#include <cstdint>
#include <optional>

namespace mlir {
namespace nvfp4 {
namespace upstream_scaling {

/// Elements per MX block.
inline constexpr int64_t kBlock = 32;

/// The E8M0 byte from the bits b of v = fp32(bamax * fp32(1 / max_elem))
/// (v >= +0): b <= kSubnormalLimit ? 0 : min((b + kRoundUp) >> 23, 254).
/// A normal v rounds up to the next power of two unless its mantissa is 0,
/// +Inf (and normals in the top binade) clamp to 254, and a subnormal is at
/// most 2^-127 (byte 0) up to 0x00400000, else at most 2^-126 (byte 1).
inline constexpr uint32_t kRoundUp = 0x7FFFFF;
inline constexpr uint32_t kSubnormalLimit = 0x400000;
inline constexpr uint32_t kMaxScaleByte = 254;

/// What an MX element type implies for the form.
struct ElementInfo {
  BlockScaledFormat format;
  float max;            ///< largest finite magnitude
  uint8_t maxCode;      ///< its code (sign bit clear)
  uint8_t nanCode;      ///< the code a NaN becomes (sign bit clear)
  bool nanKeepsSign;    ///< whether a NaN's sign is kept in its code
  uint8_t signBit;      ///< 0x80 (FP8) or 0x8 (E2M1)
};

inline std::optional<ElementInfo> elementInfoOf(Type type) {
  if (isa<Float8E4M3FNType>(type))
    return ElementInfo{BlockScaledFormat::MXFP8E4M3, 448.0f, 0x7E, 0x7F, true,
                       0x80};
  if (isa<Float8E5M2Type>(type))
    return ElementInfo{BlockScaledFormat::MXFP8E5M2, 57344.0f, 0x7B, 0x7F,
                       true, 0x80};
  if (isa<Float4E2M1FNType>(type))
    return ElementInfo{BlockScaledFormat::MXFP4, 6.0f, 0x7, 0x7, false, 0x8};
  return std::nullopt;
}

/// fp32(1 / max_elem), the factor the block amax is multiplied by.
inline float reciprocalOf(const ElementInfo &info) { return 1.0f / info.max; }

} // namespace upstream_scaling
} // namespace nvfp4
} // namespace mlir

#endif // NVFP4_LIB_CONVERSION_UPSTREAMSCALING_UPSTREAMSCALINGFORM_H
