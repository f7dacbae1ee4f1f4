//===- StochasticRounding.h - Stochastic rounding to E2M1 -------*- C++ -*-===//
//
// Part of the nvfp4 project.
//
//===----------------------------------------------------------------------===//
//
// The software form of `cvt.rs.satfinite.e2m1x4.f32` (NUMERICS.md section 5),
// used on every target that lacks the instruction and by the CPU reference.
// The random bits come from Philox.h.
//
//===----------------------------------------------------------------------===//

#ifndef NVFP4_NUMERICS_STOCHASTICROUNDING_H
#define NVFP4_NUMERICS_STOCHASTICROUNDING_H

#include <cstdint>

namespace nvfp4::numerics {

/// Rounds `Value` stochastically to an E2M1 code using 8 random bits:
///   u = RandomByte / 256, a = |Value|,
///   step(v) = 2 if v >= 4, 1 if v >= 2, else 0.5,
///   t = fma(u, step(a), a),  q = min(floor(t / step(t)) * step(t), 6),
///   result = copysign(q, Value); NaN gives code 7 (+6).
/// The result is always one of the two E2M1 neighbours of a finite |Value|
/// <= 6, and rounds up with probability (a - lower) / step up to the 1/256
/// resolution of the random byte. Zero signs are kept as in encodeE2M1.
uint8_t encodeE2M1Stochastic(float Value, uint8_t RandomByte);

} // namespace nvfp4::numerics

#endif // NVFP4_NUMERICS_STOCHASTICROUNDING_H
