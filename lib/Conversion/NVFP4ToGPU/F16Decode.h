//===- F16Decode.h - E2M1 codes x E4M3 scales to exact F16 -------*- C++
//-*-===//
//
// Part of the nvfp4 project.
//
//===----------------------------------------------------------------------===//
//
// The decode the sm_90a tensor-core paths share: an E2M1 code times its
// E4M3 block scale is exact in F16 (at most 2 x 4 significant bits, in
// [2^-10, 2688], inside F16's normal range), so a Hopper GEMM can multiply
// NVFP4 operands with F16 wgmma and FP32 accumulation without changing a
// product. Used by the decoder warpgroups of DecodeWgmmaMatmul.cpp and by
// the decode kernels of the route (MatmulKernels.cpp: operands decoded into
// F16 scratch, then the same wgmma pipeline fed by TMA).
//
// Every function emits integer/half code on i32 words (two F16 per word).
//
//===----------------------------------------------------------------------===//

#ifndef NVFP4_LIB_CONVERSION_NVFP4TOGPU_F16DECODE_H
#define NVFP4_LIB_CONVERSION_NVFP4TOGPU_F16DECODE_H

#include "mlir/IR/Builders.h"

#include <array>

namespace mlir {
namespace nvfp4 {
namespace kernels {

/// Eight E2M1 codes (code j in nibble j of the i32 `word`) -> four F16x2
/// words {e_i, e_{i+4}}, i = 0..3, signs included: K is permuted inside
/// each group of 8 (slots 0..7 <- codes 0, 4, 1, 5, 2, 6, 3, 7), the same
/// for every operand, so dot products are unchanged. 13 integer
/// instructions: two prmt table lookups of the magnitudes' F16 high bytes,
/// one prmt per word to place them (low bytes zero), and one shift and one
/// lop3 per word for the signs, which the pairing (i, i + 4) puts at the
/// halves' sign bits with a single shift, 12 - 4i.
std::array<Value, 4> decodeE2M1x8ToF16(OpBuilder &b, Location loc, Value word);

/// Eight E2M1 codes -> four F16x2 words in decodeE2M1x8ToF16's order
/// ({e_i, e_{i+4}}), each value times 2^-14: the code's bits placed as an
/// F16's high byte, s000 eem0 (the F16 with exponent field e and mantissa
/// m0... is 2^-14 times the E2M1 with exponent e and mantissa m, the
/// subnormal 0.5 included). 10 integer instructions and no table: the
/// signs (S = word & 0x88888888) and the magnitudes of the even and odd
/// nibbles meet in one lop3 each, (S << 4, word << 1) and (S, word >> 3)
/// under the mask 0x0E0E0E0E, giving the high bytes of codes 0, 2, 4, 6
/// and 1, 3, 5, 7; one prmt per word places two of them.
std::array<Value, 4> decodeE2M1x8ToF16Pow2(OpBuilder &b, Location loc,
                                           Value word);

/// Two E4M3 scale bytes (vector<2xi8>, element 0 first) -> their exact F16
/// values times 2^exponent as the words {s0, s0} and {s1, s1}
/// (cvt.rn.f16x2.e4m3x2, sm_89+; then mul.rn.f16x2 when exponent != 0,
/// exact for exponents from -5 to 7: E4M3 spans [2^-9, 448]).
std::array<Value, 2> decodeE4M3x2ToF16Pairs(OpBuilder &b, Location loc,
                                            Value twoBytes,
                                            int exponent = 0);

/// The F16x2 product of two i32 words (mul.rn.f16x2; exact for code x
/// scale).
Value mulF16x2(OpBuilder &b, Location loc, Value x, Value y);

} // namespace kernels
} // namespace nvfp4
} // namespace mlir

#endif // NVFP4_LIB_CONVERSION_NVFP4TOGPU_F16DECODE_H
