//===- ReferenceModel.h - Independent NVFP4 formulation for tests -*- C++
//-*-===//
//
// Part of the nvfp4 project.
//
//===----------------------------------------------------------------------===//
//
// A second formulation of the NVFP4 numerics that shares no code with the
// library under test. It derives format values from their bit fields, rounds
// by searching the whole value table with explicit tie rules, and evaluates
// every fp32(...) step of NUMERICS.md in double precision followed by one
// conversion to float. For +, -, * and / of binary32 operands that double
// rounding is innocuous (double has more than 2*24+2 significand bits), so the
// result equals the correctly rounded binary32 operation without relying on
// it.
//
//===----------------------------------------------------------------------===//

#ifndef NVFP4_UNITTESTS_NUMERICS_REFERENCEMODEL_H
#define NVFP4_UNITTESTS_NUMERICS_REFERENCEMODEL_H

#include <cstdint>
#include <optional>
#include <random>
#include <vector>

namespace nvfp4::reference {

/// Value of a 4-bit E2M1 code, computed from its sign/exponent/mantissa.
double e2m1Value(unsigned Code);

/// Value of an 8-bit E4M3FN code from its fields; NaN for 0x7F/0xFF.
double e4m3Value(unsigned Code);

/// E2M1 RNE-satfinite by nearest-value search over the 8 magnitudes (ties to
/// the even code); NaN -> 7; zero sign kept.
uint8_t roundToE2M1(double Value);

/// E4M3FN RNE with saturation by search over the 127 finite magnitudes.
uint8_t roundToE4M3(double Value);

/// BF16 bits nearest to a finite float by search over its two neighbours.
uint16_t roundToBF16Bits(float Value);

/// Float value of BF16 bits, from the bit fields.
double bf16Value(uint16_t Bits);

/// The E2M1 magnitudes bracketing |Value| (Lower <= |Value| < Upper), for
/// |Value| < 6.
void e2m1Neighbours(double Magnitude, double &Lower, double &Upper);

/// Stochastic rounding to E2M1 written as "round up iff the fp32 sum a + u *
/// step reaches the upper neighbour".
uint8_t stochasticRoundToE2M1(float Value, uint8_t RandomByte);

/// Result of the reference quantizer.
struct ReferenceQuantized {
  std::vector<uint8_t> Codes;
  std::vector<uint8_t> Scales;
  float Amax = 0.0f;
};

/// The random byte of element `Index` (supplied by the caller so that the
/// reference SR path is keyed exactly like the library without calling it).
using RandomByteFn = uint8_t (*)(uint64_t Seed, uint64_t Index);

/// NUMERICS.md section 2 on a row-major [Rows, Cols] tensor with blocks of
/// `BlockRows` x 16. `Random` selects stochastic rounding.
ReferenceQuantized quantize(const std::vector<float> &Data, int64_t Rows,
                            int64_t Cols, int64_t BlockRows,
                            std::optional<float> Amax = std::nullopt,
                            RandomByteFn Random = nullptr, uint64_t Seed = 0);

/// Rounds a double to binary32 (the single conversion after a double op).
inline float toFloat(double Value) { return static_cast<float>(Value); }

/// A BF16-representable float drawn from N(0, Sigma).
float randomBF16Normal(std::mt19937 &Rng, double Sigma);

/// A BF16-representable float with log-uniform magnitude in [2^MinExp,
/// 2^MaxExp) and a random sign (exercises many binades in one tensor).
float randomBF16LogUniform(std::mt19937 &Rng, int MinExp, int MaxExp);

} // namespace nvfp4::reference

#endif // NVFP4_UNITTESTS_NUMERICS_REFERENCEMODEL_H
