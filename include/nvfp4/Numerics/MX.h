//===- MX.h - MXFP8 and MXFP4 quantize, dequantize and GEMM -----*- C++ -*-===//
//
// Part of the nvfp4 project.
//
//===----------------------------------------------------------------------===//
//
// The OCP Microscaling members of the block-scaled family
// (docs/Numerics.md section 11): 32 consecutive elements along the
// contraction dimension share one E8M0 (power-of-two) scale, and there is no
// tensor scale. The scale exponent is TransformerEngine's rule, the smallest
// e with 2^e >= fp32(bamax * fp32(1 / max_elem)), not the OCP spec's
// floor(log2(bamax)) - emax_elem: the block maximum never saturates.
//
// A tensor is a row-major [Rows, Cols] matrix quantized along Cols, as in
// Quantize.h.
//
//===----------------------------------------------------------------------===//

#ifndef NVFP4_NUMERICS_MX_H
#define NVFP4_NUMERICS_MX_H

#include "nvfp4/Numerics/Status.h"

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace nvfp4::numerics {

/// Elements per MX block (OCP MX v1.0).
inline constexpr int64_t kMXBlockSize = 32;

/// The MX formats.
enum class MXFormat {
  MXFP8E4M3, ///< E4M3 elements (max 448).
  MXFP8E5M2, ///< E5M2 elements (max 57344).
  MXFP4,     ///< E2M1 elements (max 6).
};

/// The Python/IR name of `Format`: "mxfp8_e4m3", "mxfp8_e5m2" or "mxfp4".
const char *mxFormatName(MXFormat Format);

/// The format named `Name`, or std::nullopt.
std::optional<MXFormat> parseMXFormat(const std::string &Name);

/// The largest finite element magnitude: 448, 57344 or 6.
float mxElementMax(MXFormat Format);

/// Converts a scaled element to its code (RNE, satfinite): an FP8 byte, or an
/// E2M1 code in the low 4 bits.
uint8_t encodeMXElement(MXFormat Format, float Value);

/// The value of an element code.
float decodeMXElement(MXFormat Format, uint8_t Code);

/// The block scale exponent e (-127..127) for a block amax: the smallest e
/// with 2^e >= fp32(BlockAmax * fp32(1 / max_elem)); 0 gives -127 and +Inf
/// 127. `BlockAmax` must not be negative or NaN.
int computeMXScaleExponent(MXFormat Format, float BlockAmax);

/// An MX tensor: one element code per element and one E8M0 byte per 1x32
/// block (linear layout).
struct MXTensor {
  int64_t Rows = 0;
  int64_t Cols = 0;
  MXFormat Format = MXFormat::MXFP8E4M3;
  /// Rows * Cols codes in row-major order (E2M1 codes in the low 4 bits).
  std::vector<uint8_t> Codes;
  /// Row-major [Rows, Cols / 32] E8M0 bytes.
  std::vector<uint8_t> Scales;

  int64_t scaleCols() const { return Cols / kMXBlockSize; }
};

/// Checks that a [Rows, Cols] tensor can be quantized to MX: both dimensions
/// positive, Cols % 32 == 0, Rows * Cols representable.
Status validateMXShape(int64_t Rows, int64_t Cols);

/// Checks that the parts of `Tensor` are consistent with its shape (sizes,
/// E2M1 codes in 0..15).
Status validateMXTensor(const MXTensor &Tensor);

/// Quantizes the row-major [Rows, Cols] tensor at `Data` (`Count` must equal
/// Rows * Cols) with round to nearest even.
Expected<MXTensor> quantizeMX(const float *Data, size_t Count, int64_t Rows,
                              int64_t Cols, MXFormat Format);

/// x_hat = fp32(elem(q) * 2^(s_b - 127)), NaN where s_b = 0xFF; row-major.
Expected<std::vector<float>> dequantizeMX(const MXTensor &Tensor);

/// C[M,N] = alpha * A[M,K] * B[N,K]^T, both MX along K (the element formats
/// may differ), in the order of docs/Numerics.md section 11.4.
Expected<std::vector<float>> scaledMatmulMX(const MXTensor &A,
                                            const MXTensor &B,
                                            float Alpha = 1.0f);

} // namespace nvfp4::numerics

#endif // NVFP4_NUMERICS_MX_H
