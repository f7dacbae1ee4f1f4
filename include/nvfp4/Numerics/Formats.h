//===- Formats.h - E2M1, E4M3 and BF16 scalar conversions -------*- C++ -*-===//
//
// Part of the nvfp4 project.
//
//===----------------------------------------------------------------------===//
//
// Scalar conversions between IEEE binary32 and the three narrow formats used by
// NVFP4 (docs/Numerics.md, NUMERICS.md section 1):
//   - E2M1 (MLIR f4E2M1FN): 4-bit codes, magnitudes {0,.5,1,1.5,2,3,4,6}, no
//     Inf/NaN, code 8 is -0.
//   - E4M3 (MLIR f8E4M3FN): 8-bit block scales, max 448, min subnormal 2^-9,
//     0x7F/0xFF are NaN, no Inf.
//   - BF16: the storage type of the high-precision tensors.
// Every conversion is bit exact and independent of the host rounding mode.
//
//===----------------------------------------------------------------------===//

#ifndef NVFP4_NUMERICS_FORMATS_H
#define NVFP4_NUMERICS_FORMATS_H

#include <cstdint>
#include <cstring>

namespace nvfp4::numerics {

/// Reinterprets the bits of a float.
inline uint32_t floatToBits(float Value) {
  uint32_t Bits;
  std::memcpy(&Bits, &Value, sizeof(Bits));
  return Bits;
}

/// Builds a float from its bits.
inline float bitsToFloat(uint32_t Bits) {
  float Value;
  std::memcpy(&Value, &Bits, sizeof(Value));
  return Value;
}

//===----------------------------------------------------------------------===//
// E2M1
//===----------------------------------------------------------------------===//

/// The largest E2M1 magnitude.
inline constexpr float kE2M1Max = 6.0f;

/// The E2M1 code of the NaN replacement (+6), see NUMERICS.md section 6.
inline constexpr uint8_t kE2M1NaNCode = 0x7;

/// Converts `Value` to an E2M1 code (low 4 bits of the result) with round to
/// nearest even and saturation to +-6 ("satfinite"). NaN becomes code 7 (+6)
/// regardless of its sign; the sign of zero is kept, so -0.0 and negative
/// values that round to zero (-0.25 <= Value < 0) give code 8.
uint8_t encodeE2M1(float Value);

/// Returns the value of an E2M1 code; only the low 4 bits of `Code` are used.
float decodeE2M1(uint8_t Code);

//===----------------------------------------------------------------------===//
// E4M3 (f8E4M3FN)
//===----------------------------------------------------------------------===//

/// The largest finite E4M3 magnitude and its code.
inline constexpr float kE4M3Max = 448.0f;
inline constexpr uint8_t kE4M3MaxCode = 0x7E;

/// The canonical E4M3FN NaN code (positive sign).
inline constexpr uint8_t kE4M3NaNCode = 0x7F;

/// Converts `Value` to E4M3FN bits with round to nearest even and saturation:
/// finite or infinite magnitudes above 448 become +-448 (as PTX
/// `cvt.rn.satfinite.e4m3x2.f32` does). NaN becomes 0x7F with the sign of the
/// input. The sign of zero is kept.
uint8_t encodeE4M3(float Value);

/// Returns the value of E4M3FN bits; 0x7F and 0xFF decode to NaN.
float decodeE4M3(uint8_t Bits);

//===----------------------------------------------------------------------===//
// E5M2 (f8E5M2), an MXFP8 element format
//===----------------------------------------------------------------------===//

/// The largest finite E5M2 magnitude and its code.
inline constexpr float kE5M2Max = 57344.0f;
inline constexpr uint8_t kE5M2MaxCode = 0x7B;

/// The canonical E5M2 NaN code (positive sign).
inline constexpr uint8_t kE5M2NaNCode = 0x7F;

/// Converts `Value` to E5M2 bits with round to nearest even and saturation:
/// finite or infinite magnitudes above 57344 become +-57344 (as PTX
/// `cvt.rn.satfinite.e5m2x2.f32` does). NaN becomes 0x7F with the sign of
/// the input. The sign of zero is kept.
uint8_t encodeE5M2(float Value);

/// Returns the value of E5M2 bits: 0x7C/0xFC are +-Inf, 0x7D-0x7F and
/// 0xFD-0xFF NaN.
float decodeE5M2(uint8_t Bits);

//===----------------------------------------------------------------------===//
// E8M0 (f8E8M0FNU), the MX block scale
//===----------------------------------------------------------------------===//

/// The E8M0 NaN code; every other byte b is 2^(b - 127).
inline constexpr uint8_t kE8M0NaNCode = 0xFF;
inline constexpr int kE8M0Bias = 127;

/// Returns 2^(Bits - 127), or NaN for 0xFF. Exact (2^-127 is a binary32
/// subnormal).
float decodeE8M0(uint8_t Bits);

//===----------------------------------------------------------------------===//
// BF16
//===----------------------------------------------------------------------===//

/// Rounds a float to BF16 bits with round to nearest even. NaN stays NaN: the
/// sign and the top payload bits are kept and the quiet bit is set so that a
/// signalling NaN whose payload lives in the low bits cannot become Inf.
uint16_t floatToBF16(float Value);

/// Widens BF16 bits to a float (exact).
inline float bf16ToFloat(uint16_t Bits) {
  return bitsToFloat(static_cast<uint32_t>(Bits) << 16);
}

/// True when `Value` is exactly representable in BF16 (its low 16 bits are
/// zero). NaN payloads count: only NaNs whose low 16 bits are zero pass.
inline bool isBF16Representable(float Value) {
  return (floatToBits(Value) & 0xFFFFu) == 0;
}

/// Rounds a float to the nearest BF16 value (RNE) and widens it back.
inline float roundToBF16(float Value) {
  return bf16ToFloat(floatToBF16(Value));
}

} // namespace nvfp4::numerics

#endif // NVFP4_NUMERICS_FORMATS_H
