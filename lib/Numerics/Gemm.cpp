//===- Gemm.cpp - Block-scaled NVFP4 GEMM reference -----------------------===//
//
// Part of the nvfp4 project.
//
//===----------------------------------------------------------------------===//

#include "nvfp4/Numerics/Gemm.h"

#include "nvfp4/Numerics/Formats.h"

#include <array>
#include <limits>
#include <string>

using namespace nvfp4::numerics;

float nvfp4::numerics::computeGemmAlpha(float AlphaIn, float AmaxA,
                                        float AmaxB) {
  constexpr float InverseDenominator = 1.0f / kGemmAlphaDenominator;
  float Alpha = AlphaIn * AmaxA;
  Alpha = Alpha * AmaxB;
  return Alpha * InverseDenominator;
}

float nvfp4::numerics::gemmAlphaConstant(bool DecodeA, bool DecodeB) {
  if (DecodeA && DecodeB)
    return 1.0f;
  if (DecodeA || DecodeB)
    return 1.0f / kNVFP4RangeProduct;
  return 1.0f / kGemmAlphaDenominator;
}

float nvfp4::numerics::computeGemmAlpha(float AlphaIn,
                                        const QuantizedTensor &A,
                                        const QuantizedTensor &B) {
  float Alpha = AlphaIn * A.DecodeScale.value_or(A.Amax);
  Alpha = Alpha * B.DecodeScale.value_or(B.Amax);
  return Alpha * gemmAlphaConstant(A.DecodeScale.has_value(),
                                   B.DecodeScale.has_value());
}

/// Decodes the codes of `Tensor` once so the inner loop is a plain multiply.
static std::vector<float> decodeCodes(const QuantizedTensor &Tensor) {
  std::array<float, 16> Table;
  for (unsigned Code = 0; Code < 16; ++Code)
    Table[Code] = decodeE2M1(static_cast<uint8_t>(Code));
  std::vector<float> Values(Tensor.Codes.size());
  for (size_t I = 0; I < Values.size(); ++I)
    Values[I] = Table[Tensor.Codes[I] & 0xF];
  return Values;
}

/// The scale of block column `BlockCol` of row `Row`.
static float blockScaleAt(const QuantizedTensor &Tensor, int64_t Row,
                          int64_t BlockCol) {
  int64_t ScaleRow = Row / blockRows(Tensor.Block);
  return decodeE4M3(Tensor.Scales[ScaleRow * Tensor.scaleCols() + BlockCol]);
}

Expected<std::vector<float>>
nvfp4::numerics::scaledMatmul(const QuantizedTensor &A,
                              const QuantizedTensor &B, float AlphaIn) {
  if (Status S = validateQuantizedTensor(A); !S.ok())
    return Status::error("operand A: " + S.message());
  if (Status S = validateQuantizedTensor(B); !S.ok())
    return Status::error("operand B: " + S.message());
  if (A.Cols != B.Cols)
    return Status::error(
        "contraction sizes differ: A is [" + std::to_string(A.Rows) + ", " +
        std::to_string(A.Cols) + "], B is [" + std::to_string(B.Rows) + ", " +
        std::to_string(B.Cols) + "]");

  int64_t M = A.Rows, N = B.Rows, K = A.Cols, KBlocks = K / kBlockSize;
  if (M > std::numeric_limits<int64_t>::max() / N)
    return Status::error("result has too many elements");
  std::vector<float> ValuesA = decodeCodes(A), ValuesB = decodeCodes(B);
  float Alpha = computeGemmAlpha(AlphaIn, A, B);

  std::vector<float> Result(static_cast<size_t>(M * N));
  for (int64_t I = 0; I < M; ++I) {
    for (int64_t J = 0; J < N; ++J) {
      const float *RowA = ValuesA.data() + I * K;
      const float *RowB = ValuesB.data() + J * K;
      float Acc = 0.0f;
      for (int64_t KBlock = 0; KBlock < KBlocks; ++KBlock) {
        float Partial = 0.0f;
        for (int64_t Lane = 0; Lane < kBlockSize; ++Lane)
          Partial += RowA[KBlock * kBlockSize + Lane] *
                     RowB[KBlock * kBlockSize + Lane];
        float ScaleProduct =
            blockScaleAt(A, I, KBlock) * blockScaleAt(B, J, KBlock);
        Acc += Partial * ScaleProduct;
      }
      Result[I * N + J] = Acc * Alpha;
    }
  }
  return Result;
}
