//===- ReferenceModel.cpp - Independent NVFP4 formulation for tests -------===//
//
// Part of the nvfp4 project.
//
//===----------------------------------------------------------------------===//

#include "ReferenceModel.h"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstring>
#include <limits>

using namespace nvfp4::reference;

double nvfp4::reference::e2m1Value(unsigned Code) {
  // Fields: sign bit 3, exponent bits 2..1 (bias 1), mantissa bit 0.
  unsigned Exponent = (Code >> 1) & 0x3, Mantissa = Code & 0x1;
  double Magnitude =
      Exponent == 0 ? Mantissa * 0.5
                    : (1.0 + Mantissa * 0.5) * std::ldexp(1.0, Exponent - 1);
  return (Code & 0x8) ? -Magnitude : Magnitude;
}

double nvfp4::reference::e4m3Value(unsigned Code) {
  // Fields: sign bit 7, exponent bits 6..3 (bias 7), mantissa bits 2..0.
  if ((Code & 0x7F) == 0x7F)
    return std::numeric_limits<double>::quiet_NaN();
  unsigned Exponent = (Code >> 3) & 0xF, Mantissa = Code & 0x7;
  double Magnitude = Exponent == 0
                         ? Mantissa / 8.0 * std::ldexp(1.0, -6)
                         : (1.0 + Mantissa / 8.0) *
                               std::ldexp(1.0, static_cast<int>(Exponent) - 7);
  return (Code & 0x80) ? -Magnitude : Magnitude;
}

/// Nearest magnitude code in [0, LastCode] with ties to the even code.
template <typename ValueFn>
static unsigned searchNearest(double Magnitude, unsigned LastCode,
                              ValueFn Value) {
  unsigned Best = 0;
  double BestDistance = std::numeric_limits<double>::infinity();
  for (unsigned Code = 0; Code <= LastCode; ++Code) {
    double Distance = std::fabs(Value(Code) - Magnitude);
    bool Tie = Distance == BestDistance;
    if (Distance < BestDistance || (Tie && (Code % 2 == 0))) {
      Best = Code;
      BestDistance = Distance;
    }
  }
  return Best;
}

uint8_t nvfp4::reference::roundToE2M1(double Value) {
  if (std::isnan(Value))
    return 0x7;
  unsigned Sign = std::signbit(Value) ? 0x8 : 0x0;
  double Magnitude = std::fabs(Value);
  if (Magnitude >= 6.0)
    return static_cast<uint8_t>(Sign | 0x7);
  return static_cast<uint8_t>(Sign | searchNearest(Magnitude, 7, e2m1Value));
}

uint8_t nvfp4::reference::roundToE4M3(double Value) {
  unsigned Sign = std::signbit(Value) ? 0x80 : 0x0;
  if (std::isnan(Value))
    return static_cast<uint8_t>(Sign | 0x7F);
  double Magnitude = std::fabs(Value);
  if (Magnitude >= 448.0)
    return static_cast<uint8_t>(Sign | 0x7E);
  return static_cast<uint8_t>(Sign | searchNearest(Magnitude, 0x7E, e4m3Value));
}

double nvfp4::reference::bf16Value(uint16_t Bits) {
  unsigned Exponent = (Bits >> 7) & 0xFF, Mantissa = Bits & 0x7F;
  double Magnitude;
  if (Exponent == 0xFF)
    Magnitude = Mantissa ? std::numeric_limits<double>::quiet_NaN()
                         : std::numeric_limits<double>::infinity();
  else if (Exponent == 0)
    Magnitude = Mantissa * std::ldexp(1.0, -133);
  else
    Magnitude =
        (128 + Mantissa) * std::ldexp(1.0, static_cast<int>(Exponent) - 134);
  return (Bits & 0x8000) ? -Magnitude : Magnitude;
}

uint16_t nvfp4::reference::roundToBF16Bits(float Value) {
  uint32_t Bits;
  std::memcpy(&Bits, &Value, sizeof(Bits));
  uint16_t Down = static_cast<uint16_t>(Bits >> 16);
  uint16_t Up = static_cast<uint16_t>(Down + 1);
  double Magnitude = std::fabs(static_cast<double>(Value));
  double DownValue = std::fabs(bf16Value(Down));
  // Rounding past the largest finite BF16 goes to Inf; for the distance
  // comparison Inf stands at 2^128, where the next binade would start.
  double UpValue = ((Up >> 7) & 0xFF) == 0xFF ? std::ldexp(1.0, 128)
                                              : std::fabs(bf16Value(Up));
  double DistanceDown = Magnitude - DownValue, DistanceUp = UpValue - Magnitude;
  if (DistanceDown < DistanceUp)
    return Down;
  if (DistanceUp < DistanceDown)
    return Up;
  return (Down & 1) ? Up : Down;
}

void nvfp4::reference::e2m1Neighbours(double Magnitude, double &Lower,
                                      double &Upper) {
  Lower = 0.0;
  Upper = 0.5;
  for (unsigned Code = 1; Code < 8; ++Code) {
    if (e2m1Value(Code) > Magnitude) {
      Upper = e2m1Value(Code);
      return;
    }
    Lower = e2m1Value(Code);
  }
}

uint8_t nvfp4::reference::stochasticRoundToE2M1(float Value,
                                                uint8_t RandomByte) {
  if (std::isnan(Value))
    return 0x7;
  double Magnitude = std::fabs(static_cast<double>(Value));
  double Result = 6.0;
  if (Magnitude < 6.0) {
    double Lower, Upper;
    e2m1Neighbours(Magnitude, Lower, Upper);
    float Sum = toFloat(Magnitude + RandomByte / 256.0 * (Upper - Lower));
    Result = Sum >= Upper ? Upper : Lower;
  }
  return roundToE2M1(std::copysign(Result, static_cast<double>(Value)));
}

/// max |x| skipping NaN, in double.
static double maxMagnitude(const float *Data, size_t Count, size_t Stride,
                           size_t Rows) {
  double Max = 0.0;
  for (size_t Row = 0; Row < Rows; ++Row)
    for (size_t I = 0; I < Count; ++I) {
      double Value = Data[Row * Stride + I];
      if (!std::isnan(Value))
        Max = std::max(Max, std::fabs(Value));
    }
  return Max;
}

ReferenceQuantized nvfp4::reference::quantize(const std::vector<float> &Data,
                                              int64_t Rows, int64_t Cols,
                                              int64_t BlockRows,
                                              std::optional<float> Amax,
                                              RandomByteFn Random,
                                              uint64_t Seed) {
  ReferenceQuantized Result;
  Result.Amax =
      Amax ? *Amax : toFloat(maxMagnitude(Data.data(), Data.size(), 0, 1));
  double AmaxValue = Result.Amax;

  float Encode = std::min(toFloat(2688.0 / AmaxValue), FLT_MAX);
  if (AmaxValue == 0.0 || std::isinf(AmaxValue) || Encode == 0.0f)
    Encode = 1.0f;
  float Decode = toFloat(1.0 / Encode);
  float Multiplier = toFloat(static_cast<double>(Encode) * toFloat(1.0 / 6.0));

  Result.Codes.assign(Data.size(), 0xFF);
  for (int64_t BlockRow = 0; BlockRow < Rows / BlockRows; ++BlockRow) {
    for (int64_t BlockCol = 0; BlockCol < Cols / 16; ++BlockCol) {
      size_t First = BlockRow * BlockRows * Cols + BlockCol * 16;
      double BlockAmax = maxMagnitude(Data.data() + First, 16, Cols, BlockRows);
      float Scaled = std::min(toFloat(BlockAmax * Multiplier), 448.0f);
      uint8_t Scale = roundToE4M3(Scaled);
      Result.Scales.push_back(Scale);
      float Denominator = toFloat(e4m3Value(Scale) * Decode);
      float Factor = std::min(toFloat(1.0 / Denominator), FLT_MAX);
      for (int64_t R = 0; R < BlockRows; ++R)
        for (int64_t C = 0; C < 16; ++C) {
          size_t Index = First + R * Cols + C;
          float Y = toFloat(static_cast<double>(Data[Index]) * Factor);
          Result.Codes[Index] =
              Random ? stochasticRoundToE2M1(Y, Random(Seed, Index))
                     : roundToE2M1(Y);
        }
    }
  }
  return Result;
}

float nvfp4::reference::randomBF16Normal(std::mt19937 &Rng, double Sigma) {
  std::normal_distribution<float> Normal(0.0f, static_cast<float>(Sigma));
  float Value = Normal(Rng);
  uint32_t Bits;
  std::memcpy(&Bits, &Value, sizeof(Bits));
  Bits &= 0xFFFF0000u; // truncation keeps it BF16 without the code under test
  std::memcpy(&Value, &Bits, sizeof(Bits));
  return Value;
}

float nvfp4::reference::randomBF16LogUniform(std::mt19937 &Rng, int MinExp,
                                             int MaxExp) {
  std::uniform_real_distribution<double> Exponent(MinExp, MaxExp);
  double Magnitude = std::exp2(Exponent(Rng));
  float Value = static_cast<float>(Rng() & 1 ? -Magnitude : Magnitude);
  uint32_t Bits;
  std::memcpy(&Bits, &Value, sizeof(Bits));
  Bits &= 0xFFFF0000u;
  std::memcpy(&Value, &Bits, sizeof(Bits));
  return Value;
}
