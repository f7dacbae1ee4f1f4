//===- RowDivision.h - exact division by a value shared by a row -*- C++ -*-===//
//
// Part of the nvfp4 project.
//
//===----------------------------------------------------------------------===//
//
// Softmax divides every element of a row by the row's sum. An IEEE division
// (PTX div.rn.f32) is a reciprocal, its refinement, a range check and a
// branch per element; on the H200 it halves the speed of the Llama block's
// softmax row kernel (bench/RESULTS.md, session 9). When the divisor s is
// the same for the whole row, the correctly rounded quotient needs only one
// reciprocal per row and three operations per element:
//
//   r  = RN(1 / s)                   once a row (rcp.rn.f32)
//   q0 = RN(x * r)                   within one ulp of x / s
//   e  = RN(q0 * s - x)              one fma; exact (below)
//   q  = RN(q0 - e * r)              one fma; q = RN(x / s)
//
// Markstein's theorem (P. Markstein, IBM J. Res. Dev. 34(1), 1990; stated as
// Theorem 1 in Cornea-Hasegan, Golliver, Markstein, ARITH-14, 1999): if r is
// within half an ulp of 1/s and q0 within one ulp of x/s, the residual
// x - q0 s is a floating-point number (so the fma computes it exactly) and
// RN(q0 + (x - q0 s) r) = RN(x / s) -- provided nothing underflows or
// overflows. The ranges below guarantee that with a wide margin: with
// 2^-50 <= s <= 2^50 and 2^-60 <= |x| <= 2^60, q0 and q lie within
// [2^-111, 2^111]; the residual is a multiple of ulp(q0) ulp(s) >= 2^(E-47),
// E = the exponent of x, so if nonzero it is at least 2^-107 (and at most
// 2^-22 |x|): every rounded intermediate is a normal, finite number.
// x = +-0 gives the correctly signed zero on the same path (for s > 0:
// q0 = +-0, e = +0, q = -0 * r + q0 = q0). Everything else -- s outside its
// range or negative, x infinite, NaN, tiny or huge -- takes the IEEE
// division. The kernels (LinalgKernels.cpp, emitBody) emit this sequence;
// unittests/Numerics/RowDivisionTest.cpp checks it against the division.
//
//===----------------------------------------------------------------------===//

#ifndef NVFP4_NUMERICS_ROWDIVISION_H
#define NVFP4_NUMERICS_ROWDIVISION_H

#include <cmath>

namespace nvfp4::numerics {

/// The divisors the reciprocal path takes (positive, in this range).
inline constexpr float kRowDivisorMin = 0x1p-50f;
inline constexpr float kRowDivisorMax = 0x1p50f;
/// The dividends the reciprocal path takes (zero, or |x| in this range).
inline constexpr float kRowDividendMin = 0x1p-60f;
inline constexpr float kRowDividendMax = 0x1p60f;

/// Whether rowQuotient(x, s, 1 / s) is RN(x / s) by the theorem above (NaN
/// compares false everywhere, so a NaN takes the division).
inline bool rowQuotientApplies(float x, float s) {
  float ax = std::fabs(x);
  bool divisorOk = s >= kRowDivisorMin && s <= kRowDivisorMax;
  bool dividendOk =
      (ax >= kRowDividendMin && ax <= kRowDividendMax) || x == 0.0f;
  return divisorOk && dividendOk;
}

/// The three operations per element, `r` = RN(1 / s) given.
inline float rowQuotient(float x, float s, float r) {
  float q0 = x * r;
  float e = std::fma(q0, s, -x);
  return std::fma(-e, r, q0);
}

} // namespace nvfp4::numerics

#endif // NVFP4_NUMERICS_ROWDIVISION_H
