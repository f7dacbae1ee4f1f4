//===- Quantize.cpp - NVFP4 quantize, dequantize and packing --------------===//
//
// Part of the nvfp4 project.
//
//===----------------------------------------------------------------------===//
//
// Every expression below maps to one line of NUMERICS.md section 2; each
// fp32(...) there is one binary32 operation here. Do not re-associate: the
// folded 1/6 multiplier and the reciprocal-of-product encode factor are what
// make the bytes equal TransformerEngine's.
//
//===----------------------------------------------------------------------===//

#include "nvfp4/Numerics/Quantize.h"

#include "nvfp4/Numerics/Formats.h"
#include "nvfp4/Numerics/Philox.h"
#include "nvfp4/Numerics/StochasticRounding.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

using namespace nvfp4::numerics;

static constexpr float kFloatMax = std::numeric_limits<float>::max();

int64_t nvfp4::numerics::blockRows(BlockShape Shape) {
  return Shape == BlockShape::Tile16x16 ? kBlockSize : 1;
}

TensorScale nvfp4::numerics::computeTensorScale(float Amax) {
  TensorScale Scale;
  Scale.Encode = std::min(kNVFP4RangeProduct / Amax, kFloatMax);
  // amax == 0 (zero tensor), amax == Inf and an underflowing quotient would
  // give a useless encode scale; TE falls back to 1 in all three cases.
  if (Amax == 0.0f || std::isinf(Amax) || Scale.Encode == 0.0f)
    Scale.Encode = 1.0f;
  Scale.Decode = 1.0f / Scale.Encode;
  // fp32(1/6) is rounded first and multiplied into S_enc once per tensor;
  // (bamax / 6) * S_enc would round differently in ~0.05 % of blocks.
  constexpr float OneSixth = 1.0f / 6.0f;
  Scale.BlockMultiplier = Scale.Encode * OneSixth;
  return Scale;
}

uint8_t nvfp4::numerics::computeBlockScale(float BlockAmax,
                                           float BlockMultiplier) {
  float Scaled = std::min(BlockAmax * BlockMultiplier, kE4M3Max);
  return encodeE4M3(Scaled);
}

float nvfp4::numerics::computeBlockEncodeFactor(uint8_t ScaleBits,
                                                float DecodeScale) {
  float DecodedBlockScale = decodeE4M3(ScaleBits) * DecodeScale;
  // A zero block scale makes this 1/0 = Inf; clamping to FLT_MAX keeps
  // x * enc finite-or-saturating instead of producing 0 * Inf = NaN for zeros.
  return std::min(1.0f / DecodedBlockScale, kFloatMax);
}

float nvfp4::numerics::computeDequantFactor(float Amax) {
  return Amax / kNVFP4RangeProduct;
}

float QuantizedTensor::tensorDecodeFactor() const {
  return DecodeScale ? *DecodeScale : computeDequantFactor(Amax);
}

float nvfp4::numerics::computeAmax(const float *Data, size_t Count) {
  float Amax = 0.0f;
  for (size_t I = 0; I < Count; ++I) {
    float Magnitude = std::fabs(Data[I]);
    // A NaN comparison is false, so NaN never replaces the running max.
    if (Magnitude > Amax)
      Amax = Magnitude;
  }
  return Amax;
}

Status nvfp4::numerics::validateQuantizeShape(int64_t Rows, int64_t Cols,
                                              BlockShape Shape) {
  if (Rows <= 0 || Cols <= 0)
    return Status::error("tensor must be non-empty, got shape [" +
                         std::to_string(Rows) + ", " + std::to_string(Cols) +
                         "]");
  if (Cols % kBlockSize != 0)
    return Status::error("last dimension (" + std::to_string(Cols) +
                         ") must be a multiple of 16");
  if (Shape == BlockShape::Tile16x16 && Rows % kBlockSize != 0)
    return Status::error("16x16 blocks need the row dimension (" +
                         std::to_string(Rows) + ") to be a multiple of 16");
  if (Rows > std::numeric_limits<int64_t>::max() / Cols)
    return Status::error("tensor has too many elements");
  return Status::success();
}

/// Checks that `Count` matches the product of the dimensions.
static Status validateElementCount(size_t Count, int64_t Rows, int64_t Cols) {
  if (static_cast<uint64_t>(Rows) * static_cast<uint64_t>(Cols) != Count)
    return Status::error("buffer holds " + std::to_string(Count) +
                         " elements but the shape [" + std::to_string(Rows) +
                         ", " + std::to_string(Cols) + "] needs " +
                         std::to_string(Rows * Cols));
  return Status::success();
}

Expected<QuantizedTensor>
nvfp4::numerics::quantize(const float *Data, size_t Count, int64_t Rows,
                          int64_t Cols, const QuantizeOptions &Options) {
  if (Status S = validateQuantizeShape(Rows, Cols, Options.Block); !S.ok())
    return S;
  if (Status S = validateElementCount(Count, Rows, Cols); !S.ok())
    return S;
  if (Options.Amax && (std::isnan(*Options.Amax) || *Options.Amax < 0.0f))
    return Status::error("explicit amax must be non-negative and not NaN");

  QuantizedTensor Result;
  Result.Rows = Rows;
  Result.Cols = Cols;
  Result.Block = Options.Block;
  Result.Amax = Options.Amax ? *Options.Amax : computeAmax(Data, Count);
  Result.Codes.resize(Count);
  Result.Scales.resize(
      static_cast<size_t>(Result.scaleRows() * Result.scaleCols()));

  TensorScale Scale = computeTensorScale(Result.Amax);
  int64_t RowsPerBlock = blockRows(Options.Block);
  bool Stochastic = Options.Rounding == RoundingMode::Stochastic;

  for (int64_t BlockRow = 0; BlockRow < Result.scaleRows(); ++BlockRow) {
    for (int64_t BlockCol = 0; BlockCol < Result.scaleCols(); ++BlockCol) {
      // A block is RowsPerBlock row segments of 16 elements each.
      int64_t FirstRow = BlockRow * RowsPerBlock;
      int64_t FirstCol = BlockCol * kBlockSize;
      float BlockAmax = 0.0f;
      for (int64_t Row = FirstRow; Row < FirstRow + RowsPerBlock; ++Row)
        BlockAmax = std::max(
            BlockAmax, computeAmax(Data + Row * Cols + FirstCol, kBlockSize));

      uint8_t ScaleBits = computeBlockScale(BlockAmax, Scale.BlockMultiplier);
      float Encode = computeBlockEncodeFactor(ScaleBits, Scale.Decode);
      Result.Scales[BlockRow * Result.scaleCols() + BlockCol] = ScaleBits;

      for (int64_t Row = FirstRow; Row < FirstRow + RowsPerBlock; ++Row) {
        int64_t Base = Row * Cols + FirstCol;
        // Cols % 16 == 0, so a row segment is exactly one Philox group of 16.
        PhiloxBlock Random = {};
        if (Stochastic)
          Random = stochasticRoundingBlock(Options.Seed,
                                           static_cast<uint64_t>(Base) / 16);
        for (int64_t Lane = 0; Lane < kBlockSize; ++Lane) {
          float Scaled = Data[Base + Lane] * Encode;
          uint8_t Code;
          if (Stochastic) {
            uint8_t Byte =
                static_cast<uint8_t>(Random[Lane / 4] >> (8 * (Lane % 4)));
            Code = encodeE2M1Stochastic(Scaled, Byte);
          } else {
            Code = encodeE2M1(Scaled);
          }
          Result.Codes[Base + Lane] = Code;
        }
      }
    }
  }
  return Result;
}

Status nvfp4::numerics::validateQuantizedTensor(const QuantizedTensor &Tensor) {
  if (Status S = validateQuantizeShape(Tensor.Rows, Tensor.Cols, Tensor.Block);
      !S.ok())
    return S;
  if (Status S =
          validateElementCount(Tensor.Codes.size(), Tensor.Rows, Tensor.Cols);
      !S.ok())
    return S;
  size_t ScaleCount =
      static_cast<size_t>(Tensor.scaleRows() * Tensor.scaleCols());
  if (Tensor.Scales.size() != ScaleCount)
    return Status::error("expected " + std::to_string(ScaleCount) +
                         " block scales, got " +
                         std::to_string(Tensor.Scales.size()));
  for (uint8_t Code : Tensor.Codes)
    if (Code > 0xF)
      return Status::error("E2M1 code " + std::to_string(Code) +
                           " does not fit in 4 bits");
  if (std::isnan(Tensor.Amax) || Tensor.Amax < 0.0f)
    return Status::error("amax must be non-negative and not NaN");
  if (Tensor.DecodeScale && !(std::isfinite(*Tensor.DecodeScale) &&
                              *Tensor.DecodeScale >= 0.0f))
    return Status::error("a decode scale must be non-negative and finite");
  return Status::success();
}

Expected<std::vector<float>>
nvfp4::numerics::dequantize(const QuantizedTensor &Tensor) {
  if (Status S = validateQuantizedTensor(Tensor); !S.ok())
    return S;
  float TensorFactor = Tensor.tensorDecodeFactor();
  std::vector<float> Result(Tensor.Codes.size());
  int64_t RowsPerBlock = blockRows(Tensor.Block);
  for (int64_t Row = 0; Row < Tensor.Rows; ++Row) {
    for (int64_t Col = 0; Col < Tensor.Cols; ++Col) {
      int64_t Index = Row * Tensor.Cols + Col;
      uint8_t ScaleBits =
          Tensor.Scales[(Row / RowsPerBlock) * Tensor.scaleCols() +
                        Col / kBlockSize];
      float BlockValue =
          decodeE2M1(Tensor.Codes[Index]) * decodeE4M3(ScaleBits);
      Result[Index] = BlockValue * TensorFactor;
    }
  }
  return Result;
}

Expected<std::vector<uint8_t>>
nvfp4::numerics::packNibbles(const uint8_t *Codes, size_t Count) {
  if (Count % 2 != 0)
    return Status::error("cannot pack an odd number (" + std::to_string(Count) +
                         ") of 4-bit codes");
  std::vector<uint8_t> Packed(Count / 2);
  for (size_t I = 0; I < Packed.size(); ++I)
    Packed[I] = static_cast<uint8_t>((Codes[2 * I] & 0xF) |
                                     ((Codes[2 * I + 1] & 0xF) << 4));
  return Packed;
}

std::vector<uint8_t> nvfp4::numerics::unpackNibbles(const uint8_t *Packed,
                                                    size_t Count) {
  std::vector<uint8_t> Codes(2 * Count);
  for (size_t I = 0; I < Count; ++I) {
    Codes[2 * I] = Packed[I] & 0xF;
    Codes[2 * I + 1] = Packed[I] >> 4;
  }
  return Codes;
}
