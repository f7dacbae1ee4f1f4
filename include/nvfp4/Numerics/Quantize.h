//===- Quantize.h - NVFP4 quantize, dequantize and packing ------*- C++ -*-===//
//
// Part of the nvfp4 project.
//
//===----------------------------------------------------------------------===//
//
// The bit-exact NVFP4 quantizer of NUMERICS.md section 2 (TransformerEngine's
// order of operations), its dequantizer (section 3) and the nibble packing
// (section 1). All arithmetic is IEEE binary32 with correctly rounded division.
//
// A tensor is viewed as a row-major [Rows, Cols] matrix whose last dimension
// is the contraction dimension; leading batch dimensions fold into Rows.
// Blocks are 1x16 (16 consecutive elements of a row) or 16x16 (a tile of 16
// rows by 16 columns).
//
//===----------------------------------------------------------------------===//

#ifndef NVFP4_NUMERICS_QUANTIZE_H
#define NVFP4_NUMERICS_QUANTIZE_H

#include "nvfp4/Numerics/Status.h"

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

namespace nvfp4::numerics {

/// Elements per block along the contraction dimension.
inline constexpr int64_t kBlockSize = 16;

/// 6 * 448: the largest E2M1 magnitude times the largest E4M3 scale.
inline constexpr float kNVFP4RangeProduct = 2688.0f;

/// The shape of the region that shares one E4M3 scale.
enum class BlockShape {
  Row1x16,   ///< 16 consecutive elements of one row (activations, gradients).
  Tile16x16, ///< 16 rows by 16 columns (weights, "2D" scaling).
};

/// How a scaled element is rounded to E2M1.
enum class RoundingMode {
  NearestEven, ///< RNE with saturation (`cvt.rn.satfinite`).
  Stochastic,  ///< Philox-driven stochastic rounding (Philox.h).
};

/// Number of rows covered by one block of `Shape` (1 or 16).
int64_t blockRows(BlockShape Shape);

/// The tensor-level scale factors derived from the amax.
struct TensorScale {
  float Encode;          ///< S_enc = fp32(2688 / amax), clamped (see below).
  float Decode;          ///< S_dec = fp32(1 / S_enc).
  float BlockMultiplier; ///< fp32(S_enc * fp32(1/6)), folded before use.
};

/// Computes S_enc, S_dec and the block multiplier from `Amax`:
/// S_enc = min(fp32(2688 / amax), FLT_MAX), replaced by 1 when amax is 0, Inf,
/// or the quotient underflows to 0. `Amax` must not be negative or NaN (the
/// callers validate user-provided values).
TensorScale computeTensorScale(float Amax);

/// The E4M3 block scale: e4m3_RNE(min(fp32(BlockAmax * BlockMultiplier), 448)).
/// It may be 0 or subnormal; there is no lower clamp.
uint8_t computeBlockScale(float BlockAmax, float BlockMultiplier);

/// The per-block encode factor: min(fp32(1 / fp32(s_b * S_dec)), FLT_MAX).
/// A zero scale gives FLT_MAX, so non-zero elements saturate to +-6.
float computeBlockEncodeFactor(uint8_t ScaleBits, float DecodeScale);

/// The dequantization factor fp32(amax / 2688) (not bitwise 1/S_enc).
float computeDequantFactor(float Amax);

/// max |x| over `Count` values, skipping NaN; +Inf is kept. Zero when empty
/// or all NaN.
float computeAmax(const float *Data, size_t Count);

/// Checks that a [Rows, Cols] tensor can be quantized with `Shape` blocks:
/// both dimensions positive, Cols % 16 == 0, Rows % 16 == 0 for 16x16, and
/// Rows * Cols representable.
Status validateQuantizeShape(int64_t Rows, int64_t Cols, BlockShape Shape);

/// Options of quantize().
struct QuantizeOptions {
  BlockShape Block = BlockShape::Row1x16;
  RoundingMode Rounding = RoundingMode::NearestEven;
  /// Philox key for stochastic rounding (ignored for NearestEven).
  uint64_t Seed = 0;
  /// Tensor amax to use instead of max |x|; must be >= 0 and not NaN.
  std::optional<float> Amax;
};

/// An NVFP4 tensor: one E2M1 code per element, E4M3 block scales in the
/// linear layout and the FP32 tensor amax.
struct QuantizedTensor {
  int64_t Rows = 0;
  int64_t Cols = 0;
  BlockShape Block = BlockShape::Row1x16;
  /// Rows * Cols codes in row-major order, each in the low 4 bits.
  std::vector<uint8_t> Codes;
  /// Row-major [scaleRows(), scaleCols()] E4M3 bits.
  std::vector<uint8_t> Scales;
  float Amax = 0.0f;
  /// The decode scale exactly as a checkpoint stores it (ModelOpt's
  /// `weight_scale_2`). When set, elements decode with it and `Amax` is
  /// unused: no amax reproduces every decode scale through fp32(amax / 2688)
  /// (docs/Rationale.md, "Exact tensor scales").
  std::optional<float> DecodeScale;

  int64_t scaleRows() const { return Rows / blockRows(Block); }
  /// The factor every element is multiplied by after its block scale:
  /// DecodeScale when set, else fp32(Amax / 2688).
  float tensorDecodeFactor() const;
  int64_t scaleCols() const { return Cols / kBlockSize; }
};

/// Checks that the parts of `Tensor` are consistent with its shape (sizes,
/// codes in 0..15, amax >= 0 or Inf, not NaN; a decode scale >= 0 and
/// finite).
Status validateQuantizedTensor(const QuantizedTensor &Tensor);

/// Quantizes the row-major [Rows, Cols] tensor at `Data` (`Count` must equal
/// Rows * Cols). With stochastic rounding, element (r, c) draws its random
/// byte with linear index r * Cols + c (Philox.h).
Expected<QuantizedTensor> quantize(const float *Data, size_t Count,
                                   int64_t Rows, int64_t Cols,
                                   const QuantizeOptions &Options);

/// x_hat = fp32(fp32(e2m1(q) * float(s_b)) * tensorDecodeFactor()),
/// row-major [Rows, Cols].
Expected<std::vector<float>> dequantize(const QuantizedTensor &Tensor);

/// Packs codes two per byte: element 2i in the low nibble of byte i, element
/// 2i+1 in the high nibble. `Count` must be even.
Expected<std::vector<uint8_t>> packNibbles(const uint8_t *Codes, size_t Count);

/// The inverse of packNibbles(): 2 * `Count` codes.
std::vector<uint8_t> unpackNibbles(const uint8_t *Packed, size_t Count);

} // namespace nvfp4::numerics

#endif // NVFP4_NUMERICS_QUANTIZE_H
