//===- Gemm.h - Block-scaled NVFP4 GEMM reference ---------------*- C++ -*-===//
//
// Part of the nvfp4 project.
//
//===----------------------------------------------------------------------===//
//
// The reference for nvfp4.scaled_matmul (NUMERICS.md section 3): C = A * B^T
// with A an NVFP4 [M, K] tensor and B an NVFP4 [N, K] tensor, both blocked
// along K (1x16 or 16x16, independently).
//
// Accumulation order (the spec the CPU lowering reproduces bit for bit):
//   for each (i, j):
//     acc = +0.0f
//     for kb = 0, 1, ..., K/16 - 1 in order:
//       partial = sum over the 16 k of kb of e2m1(qA[i,k]) * e2m1(qB[j,k])
//       acc     = fp32(acc + fp32(partial * fp32(sA[i,kb] * sB[j,kb])))
//     C[i,j] = fp32(acc * alpha)
//   alpha = fp32(fp32(fp32(alpha_in * amaxA) * amaxB) * fp32(1 / 7225344))
// with 7225344 = 2688^2 = 36 * 448 * 448. The partial sum is exact in binary32
// (products are multiples of 1/4 up to 36, 16 of them), so its internal order
// is free; sA * sB (4 significant bits each) and partial * (sA * sB) (at most
// 12 + 8 significant bits) are exact too, so the only roundings are the
// additions into acc and the final multiply by alpha. An fma there gives the
// same bits as a separate multiply and add.
//
//===----------------------------------------------------------------------===//

#ifndef NVFP4_NUMERICS_GEMM_H
#define NVFP4_NUMERICS_GEMM_H

#include "nvfp4/Numerics/Quantize.h"
#include "nvfp4/Numerics/Status.h"

#include <vector>

namespace nvfp4::numerics {

/// 2688^2: the product of both operands' amax-to-scale denominators.
inline constexpr float kGemmAlphaDenominator = 7225344.0f;

/// TE's GEMM alpha: fp32(fp32(fp32(AlphaIn * AmaxA) * AmaxB) *
/// fp32(1 / 7225344)). Not bitwise equal to the product of the dequant factors.
float computeGemmAlpha(float AlphaIn, float AmaxA, float AmaxB);

/// The constant the tensor scales' product is multiplied by: fp32(1 /
/// 7225344) for two amaxes (TE), fp32(1 / 2688) for an amax and a decode
/// scale, 1 for two decode scales (a checkpoint's: alpha = alpha_in * d_A *
/// d_B, as vLLM computes it from input_scale and weight_scale_2).
float gemmAlphaConstant(bool DecodeA, bool DecodeB);

/// The alpha of scaledMatmul(): fp32(fp32(fp32(AlphaIn * tA) * tB) * c) with
/// tX the amax or, where set, the decode scale of X and c =
/// gemmAlphaConstant(). Equals computeGemmAlpha() for two amaxes.
float computeGemmAlpha(float AlphaIn, const QuantizedTensor &A,
                       const QuantizedTensor &B);

/// Computes the row-major [M, N] FP32 result of alpha * A * B^T from the
/// quantized [M, K] A and [N, K] B, in the order documented above.
Expected<std::vector<float>> scaledMatmul(const QuantizedTensor &A,
                                          const QuantizedTensor &B,
                                          float AlphaIn = 1.0f);

} // namespace nvfp4::numerics

#endif // NVFP4_NUMERICS_GEMM_H
