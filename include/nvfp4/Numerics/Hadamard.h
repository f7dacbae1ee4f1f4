//===- Hadamard.h - 16-point Random Hadamard Transform ----------*- C++ -*-===//
//
// Part of the nvfp4 project.
//
//===----------------------------------------------------------------------===//
//
// The RHT of NUMERICS.md section 4, applied to the wgrad operands before
// quantization:
//   H16[r][c] = (-1)^popcount(r & c)                  (Sylvester order)
//   sign_r    = -1 where bit r of the mask is set, else +1
//   R         = diag(sign) * H16 * 0.25               (entries +-0.25)
//   w         = v * R for every run v of 16 elements along the last dimension
//
// Summation order (part of the spec, so that every target reproduces the bits):
//   w_c = (((+0.0f + t_0) + t_1) + ... ) + t_15,  t_r = v_r * R[r][c],
// evaluated left to right in binary32, then rounded once to BF16 (RNE). Each
// t_r is exact because v is BF16 and R[r][c] is a power of two, so the only
// roundings are the 16 additions and the final BF16 rounding. A butterfly
// (fast Walsh-Hadamard) evaluation may round differently and is not allowed.
//
//===----------------------------------------------------------------------===//

#ifndef NVFP4_NUMERICS_HADAMARD_H
#define NVFP4_NUMERICS_HADAMARD_H

#include "nvfp4/Numerics/Status.h"

#include <cstddef>
#include <cstdint>
#include <vector>

namespace nvfp4::numerics {

/// The sign vector used by TransformerEngine's NVFP4 recipe.
inline constexpr uint16_t kDefaultHadamardSignMask = 0xD7E8;

/// Entry (Row, Col) of R = diag(sign) * H16 * 0.25 for `SignMask`, +-0.25.
/// Row and Col are taken modulo 16.
float hadamardMatrixEntry(unsigned Row, unsigned Col, uint16_t SignMask);

/// Applies the RHT to every run of 16 consecutive values of `Data` and returns
/// BF16-rounded results (as floats). `Count` must be a positive multiple of 16
/// and every input must be BF16-representable.
Expected<std::vector<float>>
hadamardTransform(const float *Data, size_t Count,
                  uint16_t SignMask = kDefaultHadamardSignMask);

} // namespace nvfp4::numerics

#endif // NVFP4_NUMERICS_HADAMARD_H
