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
// Order of operations (part of the spec, so that every target reproduces the
// bits): the fast Walsh-Hadamard butterfly in binary32,
//   u_i = sign_i * v_i                                           (exact)
//   for h = 1, 2, 4, 8, for each i with (i & h) == 0:
//     (u_i, u_{i+h}) = (u_i + u_{i+h}, u_i - u_{i+h})            (RNE)
//   w_i = bf16_RNE(u_i * 0.25)                  (the multiply is exact unless
//                                                it underflows binary32)
// It equals v * R exactly whenever the 64 sums are exact, e.g. when the
// non-zero inputs of the run span at most 12 binades (docs/Numerics.md).
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
