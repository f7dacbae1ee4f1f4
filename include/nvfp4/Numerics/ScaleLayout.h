//===- ScaleLayout.h - Linear and 128x4-swizzled scale layouts --*- C++ -*-===//
//
// Part of the nvfp4 project.
//
//===----------------------------------------------------------------------===//
//
// Block scales are produced in the linear layout, a row-major [Rows, Cols]
// E4M3 matrix (Cols = tensor columns / 16). Blackwell tensor cores, cuBLASLt
// (VEC16_UE4M3), TE, torchao, vLLM and CUTLASS's sm_100 atom read them in the
// 128x4 swizzled layout (NUMERICS.md section 8):
//   pad Rows to a multiple of 128 and Cols to a multiple of 4 with zeros, then
//   offset(r, c) = ((r/128)*(C/4) + c/4)*512 + (r%32)*16 + ((r%128)/32)*4 + c%4
// where C is the padded column count. Each 128x4 tile is a 512-byte atom laid
// out as [32][4][4]: row r goes to (r % 32, (r % 128) / 32), column to c % 4;
// atoms are stored row-major over the (r/128, c/4) tile grid.
//
//===----------------------------------------------------------------------===//

#ifndef NVFP4_NUMERICS_SCALELAYOUT_H
#define NVFP4_NUMERICS_SCALELAYOUT_H

#include "nvfp4/Numerics/Status.h"

#include <cstddef>
#include <cstdint>
#include <vector>

namespace nvfp4::numerics {

/// Rows and columns of one swizzled atom, and its size in bytes.
inline constexpr int64_t kSwizzleAtomRows = 128;
inline constexpr int64_t kSwizzleAtomCols = 4;
inline constexpr int64_t kSwizzleAtomBytes = 512;

/// The padded extent of a [Rows, Cols] scale matrix in the 128x4 layout.
struct SwizzledScaleShape {
  int64_t PaddedRows; ///< Rows rounded up to a multiple of 128.
  int64_t PaddedCols; ///< Cols rounded up to a multiple of 4.
  /// Total bytes of the swizzled buffer.
  int64_t size() const { return PaddedRows * PaddedCols; }
};

/// Computes the padded shape; fails on non-positive or overflowing sizes.
Expected<SwizzledScaleShape> getSwizzledScaleShape(int64_t Rows, int64_t Cols);

/// Byte offset of linear scale (Row, Col) in the swizzled buffer whose padded
/// column count is `PaddedCols` (a multiple of 4).
int64_t getSwizzledScaleOffset(int64_t Row, int64_t Col, int64_t PaddedCols);

/// Converts a linear [Rows, Cols] scale matrix (`Count` == Rows * Cols) to the
/// zero-padded 128x4 swizzled layout.
Expected<std::vector<uint8_t>>
swizzleScales(const uint8_t *Scales, size_t Count, int64_t Rows, int64_t Cols);

/// The inverse of swizzleScales(): extracts the [Rows, Cols] linear matrix
/// from a swizzled buffer of `Count` bytes (which must equal the padded size).
Expected<std::vector<uint8_t>> unswizzleScales(const uint8_t *Swizzled,
                                               size_t Count, int64_t Rows,
                                               int64_t Cols);

/// Expands 16x16-tile scales, a [TileRows, Cols] matrix, into the per-row
/// form the tensor cores take: [TileRows * 16, Cols], each tile scale repeated
/// in its 16 rows.
Expected<std::vector<uint8_t>> replicateTileScales(const uint8_t *TileScales,
                                                   size_t Count,
                                                   int64_t TileRows,
                                                   int64_t Cols);

} // namespace nvfp4::numerics

#endif // NVFP4_NUMERICS_SCALELAYOUT_H
