//===- StochasticRounding.cpp - Stochastic rounding to E2M1 ---------------===//
//
// Part of the nvfp4 project.
//
//===----------------------------------------------------------------------===//

#include "nvfp4/Numerics/StochasticRounding.h"

#include "nvfp4/Numerics/Formats.h"

#include <algorithm>
#include <cmath>

using namespace nvfp4::numerics;

/// The E2M1 spacing of the binade that starts at `Magnitude`: 0.5 on [0, 2),
/// 1 on [2, 4) and 2 from 4 on.
static float e2m1Step(float Magnitude) {
  if (Magnitude >= 4.0f)
    return 2.0f;
  if (Magnitude >= 2.0f)
    return 1.0f;
  return 0.5f;
}

uint8_t nvfp4::numerics::encodeE2M1Stochastic(float Value, uint8_t RandomByte) {
  if (std::isnan(Value))
    return kE2M1NaNCode;
  float Uniform = static_cast<float>(RandomByte) * (1.0f / 256.0f);
  float Magnitude = std::fabs(Value);
  // u * step is exact (8 bits times a power of two), so the fma only rounds
  // the sum; written as an fma so every target performs the same single
  // rounding.
  float Threshold = std::fma(Uniform, e2m1Step(Magnitude), Magnitude);
  // The step is re-derived from t: crossing a binade boundary lands exactly
  // on the boundary value, which is an E2M1 magnitude.
  float Step = e2m1Step(Threshold);
  float Rounded = std::min(std::floor(Threshold / Step) * Step, kE2M1Max);
  // Rounded is an exact E2M1 magnitude, so the RNE encoder maps it to its code
  // and keeps the sign of zero.
  return encodeE2M1(std::copysign(Rounded, Value));
}
