//===- MX.cpp - MXFP8 and MXFP4 quantize, dequantize and GEMM -------------===//
//
// Part of the nvfp4 project.
//
//===----------------------------------------------------------------------===//
//
// Each fp32(...) of docs/Numerics.md section 11 is one binary32 operation
// here; the power-of-two factors are built with ldexp, which is exact.
//
//===----------------------------------------------------------------------===//

#include "nvfp4/Numerics/MX.h"

#include "nvfp4/Numerics/Formats.h"
#include "nvfp4/Numerics/Quantize.h"

#include <cmath>
#include <cstring>
#include <limits>

using namespace nvfp4::numerics;

const char *nvfp4::numerics::mxFormatName(MXFormat Format) {
  switch (Format) {
  case MXFormat::MXFP8E4M3:
    return "mxfp8_e4m3";
  case MXFormat::MXFP8E5M2:
    return "mxfp8_e5m2";
  case MXFormat::MXFP4:
    return "mxfp4";
  }
  return "unknown";
}

std::optional<MXFormat> nvfp4::numerics::parseMXFormat(const std::string &Name) {
  for (MXFormat Format :
       {MXFormat::MXFP8E4M3, MXFormat::MXFP8E5M2, MXFormat::MXFP4})
    if (Name == mxFormatName(Format))
      return Format;
  return std::nullopt;
}

float nvfp4::numerics::mxElementMax(MXFormat Format) {
  switch (Format) {
  case MXFormat::MXFP8E4M3:
    return kE4M3Max;
  case MXFormat::MXFP8E5M2:
    return kE5M2Max;
  case MXFormat::MXFP4:
    return kE2M1Max;
  }
  return kE4M3Max;
}

uint8_t nvfp4::numerics::encodeMXElement(MXFormat Format, float Value) {
  switch (Format) {
  case MXFormat::MXFP8E4M3:
    return encodeE4M3(Value);
  case MXFormat::MXFP8E5M2:
    return encodeE5M2(Value);
  case MXFormat::MXFP4:
    return encodeE2M1(Value);
  }
  return 0;
}

float nvfp4::numerics::decodeMXElement(MXFormat Format, uint8_t Code) {
  switch (Format) {
  case MXFormat::MXFP8E4M3:
    return decodeE4M3(Code);
  case MXFormat::MXFP8E5M2:
    return decodeE5M2(Code);
  case MXFormat::MXFP4:
    return decodeE2M1(Code);
  }
  return 0.0f;
}

int nvfp4::numerics::computeMXScaleExponent(MXFormat Format, float BlockAmax) {
  // TE multiplies by the rounded reciprocal; fp32(1/448), fp32(1/57344) and
  // fp32(1/6) are all rounded up by less than 2^-24 relative, so the product
  // rounds to the same side of every power of two as the exact quotient
  // (docs/Numerics.md 11.2; the unit tests check each boundary).
  float Reciprocal = 1.0f / mxElementMax(Format);
  float Value = BlockAmax * Reciprocal;
  if (!(Value > 0.0f))
    return -kE8M0Bias;
  if (std::isinf(Value))
    return kE8M0Bias;
  // Value = Fraction * 2^Exponent with Fraction in [0.5, 1): 2^Exponent is the
  // ceiling unless Value is exactly a power of two (Fraction == 0.5).
  int Exponent;
  float Fraction = std::frexp(Value, &Exponent);
  int Ceiling = Fraction == 0.5f ? Exponent - 1 : Exponent;
  if (Ceiling < -kE8M0Bias)
    return -kE8M0Bias;
  if (Ceiling > kE8M0Bias)
    return kE8M0Bias;
  return Ceiling;
}

Status nvfp4::numerics::validateMXShape(int64_t Rows, int64_t Cols) {
  if (Rows <= 0 || Cols <= 0)
    return Status::error("tensor must be non-empty, got shape [" +
                         std::to_string(Rows) + ", " + std::to_string(Cols) +
                         "]");
  if (Cols % kMXBlockSize != 0)
    return Status::error("last dimension must be a multiple of 32 for the "
                         "MX formats' 1x32 blocks, got " +
                         std::to_string(Cols));
  if (Rows > std::numeric_limits<int64_t>::max() / Cols)
    return Status::error("tensor has too many elements");
  return Status::success();
}

Status nvfp4::numerics::validateMXTensor(const MXTensor &Tensor) {
  if (Status S = validateMXShape(Tensor.Rows, Tensor.Cols); !S.ok())
    return S;
  size_t Count = static_cast<size_t>(Tensor.Rows * Tensor.Cols);
  if (Tensor.Codes.size() != Count)
    return Status::error("expected " + std::to_string(Count) + " codes, got " +
                         std::to_string(Tensor.Codes.size()));
  size_t ScaleCount = static_cast<size_t>(Tensor.Rows * Tensor.scaleCols());
  if (Tensor.Scales.size() != ScaleCount)
    return Status::error("expected " + std::to_string(ScaleCount) +
                         " scales, got " +
                         std::to_string(Tensor.Scales.size()));
  if (Tensor.Format == MXFormat::MXFP4)
    for (uint8_t Code : Tensor.Codes)
      if (Code > 0xF)
        return Status::error("E2M1 codes must be in 0..15, got " +
                             std::to_string(Code));
  return Status::success();
}

Expected<MXTensor> nvfp4::numerics::quantizeMX(const float *Data,
                                               size_t Count, int64_t Rows,
                                               int64_t Cols, MXFormat Format) {
  if (Status S = validateMXShape(Rows, Cols); !S.ok())
    return S;
  if (Count != static_cast<size_t>(Rows * Cols))
    return Status::error("expected " + std::to_string(Rows * Cols) +
                         " elements, got " + std::to_string(Count));
  MXTensor Result;
  Result.Rows = Rows;
  Result.Cols = Cols;
  Result.Format = Format;
  Result.Codes.resize(Count);
  Result.Scales.resize(static_cast<size_t>(Rows * Result.scaleCols()));
  for (size_t Block = 0; Block < Result.Scales.size(); ++Block) {
    const float *In = Data + Block * kMXBlockSize;
    int Exponent = computeMXScaleExponent(Format, computeAmax(In, kMXBlockSize));
    Result.Scales[Block] = static_cast<uint8_t>(Exponent + kE8M0Bias);
    // 2^-Exponent is exact: 2^127 is normal, 2^-127 a binary32 subnormal.
    float Inverse = std::ldexp(1.0f, -Exponent);
    uint8_t *Out = Result.Codes.data() + Block * kMXBlockSize;
    for (int64_t I = 0; I < kMXBlockSize; ++I)
      Out[I] = encodeMXElement(Format, In[I] * Inverse);
  }
  return Result;
}

Expected<std::vector<float>>
nvfp4::numerics::dequantizeMX(const MXTensor &Tensor) {
  if (Status S = validateMXTensor(Tensor); !S.ok())
    return S;
  std::vector<float> Result(Tensor.Codes.size());
  for (size_t I = 0; I < Result.size(); ++I) {
    float Scale = decodeE8M0(Tensor.Scales[I / kMXBlockSize]);
    Result[I] = decodeMXElement(Tensor.Format, Tensor.Codes[I]) * Scale;
  }
  return Result;
}

Expected<std::vector<float>>
nvfp4::numerics::scaledMatmulMX(const MXTensor &A, const MXTensor &B,
                                float Alpha) {
  if (Status S = validateMXTensor(A); !S.ok())
    return Status::error("lhs: " + S.message());
  if (Status S = validateMXTensor(B); !S.ok())
    return Status::error("rhs: " + S.message());
  if (A.Cols != B.Cols)
    return Status::error("contraction dimensions differ: " +
                         std::to_string(A.Cols) + " and " +
                         std::to_string(B.Cols));
  int64_t M = A.Rows, N = B.Rows, K = A.Cols, KBlocks = K / kMXBlockSize;
  std::vector<float> C(static_cast<size_t>(M * N));
  for (int64_t I = 0; I < M; ++I) {
    for (int64_t J = 0; J < N; ++J) {
      float Acc = 0.0f;
      for (int64_t KB = 0; KB < KBlocks; ++KB) {
        float Partial = 0.0f;
        for (int64_t L = 0; L < kMXBlockSize; ++L) {
          int64_t Kk = KB * kMXBlockSize + L;
          // Each product is exact (at most 8 significant bits); the sum
          // rounds for MXFP8, in this order.
          Partial += decodeMXElement(A.Format, A.Codes[I * K + Kk]) *
                     decodeMXElement(B.Format, B.Codes[J * K + Kk]);
        }
        // One power of two after the other: 2^eA * 2^eB can leave the
        // binary32 range when the scaled partial does not.
        float Scaled = Partial * decodeE8M0(A.Scales[I * KBlocks + KB]);
        Scaled = Scaled * decodeE8M0(B.Scales[J * KBlocks + KB]);
        Acc = Acc + Scaled;
      }
      C[I * N + J] = Acc * Alpha;
    }
  }
  return C;
}
