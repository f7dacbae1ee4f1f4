//===- ScaleLayout.cpp - Linear and 128x4-swizzled scale layouts ----------===//
//
// Part of the nvfp4 project.
//
//===----------------------------------------------------------------------===//

#include "nvfp4/Numerics/ScaleLayout.h"

#include <limits>
#include <string>

using namespace nvfp4::numerics;

/// Rounds `Value` up to a multiple of `Multiple`, or fails on overflow.
static bool roundUp(int64_t Value, int64_t Multiple, int64_t &Result) {
  if (Value > std::numeric_limits<int64_t>::max() - (Multiple - 1))
    return false;
  Result = (Value + Multiple - 1) / Multiple * Multiple;
  return true;
}

/// Checks a [Rows, Cols] matrix shape against its buffer size.
static Status validateMatrix(size_t Count, int64_t Rows, int64_t Cols,
                             const char *What) {
  if (Rows <= 0 || Cols <= 0)
    return Status::error(std::string(What) + " must be non-empty, got [" +
                         std::to_string(Rows) + ", " + std::to_string(Cols) +
                         "]");
  if (Rows > std::numeric_limits<int64_t>::max() / Cols ||
      static_cast<uint64_t>(Rows * Cols) != Count)
    return Status::error(
        std::string(What) + " buffer holds " + std::to_string(Count) +
        " bytes, which does not match the shape [" + std::to_string(Rows) +
        ", " + std::to_string(Cols) + "]");
  return Status::success();
}

Expected<SwizzledScaleShape>
nvfp4::numerics::getSwizzledScaleShape(int64_t Rows, int64_t Cols) {
  if (Rows <= 0 || Cols <= 0)
    return Status::error("scale matrix must be non-empty");
  SwizzledScaleShape Shape;
  if (!roundUp(Rows, kSwizzleAtomRows, Shape.PaddedRows) ||
      !roundUp(Cols, kSwizzleAtomCols, Shape.PaddedCols) ||
      Shape.PaddedRows > std::numeric_limits<int64_t>::max() / Shape.PaddedCols)
    return Status::error("scale matrix is too large to swizzle");
  return Shape;
}

int64_t nvfp4::numerics::getSwizzledScaleOffset(int64_t Row, int64_t Col,
                                                int64_t PaddedCols) {
  int64_t Atom = (Row / kSwizzleAtomRows) * (PaddedCols / kSwizzleAtomCols) +
                 Col / kSwizzleAtomCols;
  int64_t WithinAtom = (Row % 32) * 16 + ((Row % kSwizzleAtomRows) / 32) * 4 +
                       Col % kSwizzleAtomCols;
  return Atom * kSwizzleAtomBytes + WithinAtom;
}

Expected<std::vector<uint8_t>>
nvfp4::numerics::swizzleScales(const uint8_t *Scales, size_t Count,
                               int64_t Rows, int64_t Cols) {
  if (Status S = validateMatrix(Count, Rows, Cols, "scale matrix"); !S.ok())
    return S;
  Expected<SwizzledScaleShape> Shape = getSwizzledScaleShape(Rows, Cols);
  if (!Shape.ok())
    return Shape.status();
  // Zero padding matters: hardware reads the padded bytes, and garbage there
  // has produced NaNs in other stacks.
  std::vector<uint8_t> Result(static_cast<size_t>(Shape->size()), 0);
  for (int64_t Row = 0; Row < Rows; ++Row)
    for (int64_t Col = 0; Col < Cols; ++Col)
      Result[getSwizzledScaleOffset(Row, Col, Shape->PaddedCols)] =
          Scales[Row * Cols + Col];
  return Result;
}

Expected<std::vector<uint8_t>>
nvfp4::numerics::unswizzleScales(const uint8_t *Swizzled, size_t Count,
                                 int64_t Rows, int64_t Cols) {
  Expected<SwizzledScaleShape> Shape = getSwizzledScaleShape(Rows, Cols);
  if (!Shape.ok())
    return Shape.status();
  if (static_cast<uint64_t>(Shape->size()) != Count)
    return Status::error("swizzled buffer holds " + std::to_string(Count) +
                         " bytes but [" + std::to_string(Rows) + ", " +
                         std::to_string(Cols) + "] scales pad to " +
                         std::to_string(Shape->size()));
  std::vector<uint8_t> Result(static_cast<size_t>(Rows * Cols));
  for (int64_t Row = 0; Row < Rows; ++Row)
    for (int64_t Col = 0; Col < Cols; ++Col)
      Result[Row * Cols + Col] =
          Swizzled[getSwizzledScaleOffset(Row, Col, Shape->PaddedCols)];
  return Result;
}

Expected<std::vector<uint8_t>>
nvfp4::numerics::replicateTileScales(const uint8_t *TileScales, size_t Count,
                                     int64_t TileRows, int64_t Cols) {
  if (Status S = validateMatrix(Count, TileRows, Cols, "tile scale matrix");
      !S.ok())
    return S;
  if (TileRows > std::numeric_limits<int64_t>::max() / (16 * Cols))
    return Status::error("tile scale matrix is too large to replicate");
  std::vector<uint8_t> Result(static_cast<size_t>(TileRows * 16 * Cols));
  for (int64_t Row = 0; Row < TileRows * 16; ++Row)
    for (int64_t Col = 0; Col < Cols; ++Col)
      Result[Row * Cols + Col] = TileScales[(Row / 16) * Cols + Col];
  return Result;
}
