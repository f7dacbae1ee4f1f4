//===- Hadamard.cpp - 16-point Random Hadamard Transform ------------------===//
//
// Part of the nvfp4 project.
//
//===----------------------------------------------------------------------===//

#include "nvfp4/Numerics/Hadamard.h"

#include "nvfp4/Numerics/Formats.h"

#include <array>
#include <bitset>
#include <string>

using namespace nvfp4::numerics;

static constexpr size_t kHadamardSize = 16;

float nvfp4::numerics::hadamardMatrixEntry(unsigned Row, unsigned Col,
                                           uint16_t SignMask) {
  Row %= kHadamardSize;
  Col %= kHadamardSize;
  bool Negative = std::bitset<4>(Row & Col).count() % 2 != 0;
  if ((SignMask >> Row) & 1u)
    Negative = !Negative;
  return Negative ? -0.25f : 0.25f;
}

Expected<std::vector<float>>
nvfp4::numerics::hadamardTransform(const float *Data, size_t Count,
                                   uint16_t SignMask) {
  if (Count == 0 || Count % kHadamardSize != 0)
    return Status::error("Hadamard transform needs a positive multiple of 16 "
                         "elements along the last dimension, got " +
                         std::to_string(Count));
  for (size_t I = 0; I < Count; ++I)
    if (!isBF16Representable(Data[I]))
      return Status::error("Hadamard input must be BF16-representable; "
                           "element " +
                           std::to_string(I) + " is not");

  std::vector<float> Result(Count);
  for (size_t Chunk = 0; Chunk < Count; Chunk += kHadamardSize) {
    // The butterfly of the header, in this order: it is the spec.
    std::array<float, kHadamardSize> U;
    for (size_t I = 0; I < kHadamardSize; ++I)
      U[I] = (SignMask >> I) & 1u ? -Data[Chunk + I] : Data[Chunk + I];
    for (size_t Half = 1; Half < kHadamardSize; Half *= 2)
      for (size_t I = 0; I < kHadamardSize; ++I) {
        if (I & Half)
          continue;
        float A = U[I], B = U[I + Half];
        U[I] = A + B;
        U[I + Half] = A - B;
      }
    for (size_t I = 0; I < kHadamardSize; ++I)
      Result[Chunk + I] = roundToBF16(U[I] * 0.25f);
  }
  return Result;
}
