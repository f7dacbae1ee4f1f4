//===- Philox.h - Philox4x32-10 and the stochastic-rounding bits -*- C++
//-*-===//
//
// Part of the nvfp4 project.
//
//===----------------------------------------------------------------------===//
//
// Stochastic rounding needs 8 random bits per element that every target (CPU
// reference, each GPU kernel, any tiling) can reproduce from the seed alone.
// A counter-based generator gives exactly that: the bits of an element are a
// pure function of (seed, element index).
//
// Keying (the contract every target implements):
//   key     = (uint32 low half of Seed, uint32 high half of Seed)
//   g       = ElementIndex / 16            (linear, row-major element index)
//   counter = (uint32 low half of g, uint32 high half of g, 0, 0)
//   (w0, w1, w2, w3) = Philox4x32-10(counter, key)
//   element i uses word w[(i % 16) / 4] and, in it, byte k = i % 4, i.e. bits
//   8k+7..8k.
// So one Philox call serves 16 consecutive elements, and one 32-bit word
// serves 4 consecutive elements exactly as PTX `cvt.rs.satfinite.e2m1x4.f32`
// consumes its `rbits` operand (element k of the 4-group reads bits 8k+7..8k).
//
//===----------------------------------------------------------------------===//

#ifndef NVFP4_NUMERICS_PHILOX_H
#define NVFP4_NUMERICS_PHILOX_H

#include <array>
#include <cstdint>

namespace nvfp4::numerics {

/// The 128-bit counter and the 4 output words of Philox4x32.
using PhiloxBlock = std::array<uint32_t, 4>;
/// The 64-bit Philox4x32 key.
using PhiloxKey = std::array<uint32_t, 2>;

/// Philox4x32 with 10 rounds (Salmon et al., SC 2011): multipliers 0xD2511F53
/// and 0xCD9E8D57, Weyl key increments 0x9E3779B9 and 0xBB67AE85.
PhiloxBlock philox4x32x10(const PhiloxBlock &Counter, const PhiloxKey &Key);

/// The four Philox output words that serve elements 16*Group .. 16*Group+15.
PhiloxBlock stochasticRoundingBlock(uint64_t Seed, uint64_t Group);

/// The 32-bit random word for the 4 elements 4*Quad .. 4*Quad+3 (the `rbits`
/// operand of `cvt.rs.satfinite.e2m1x4.f32` for those elements).
uint32_t stochasticRoundingWord(uint64_t Seed, uint64_t Quad);

/// The 8 random bits used by element `ElementIndex` under `Seed`.
uint8_t stochasticRoundingByte(uint64_t Seed, uint64_t ElementIndex);

} // namespace nvfp4::numerics

#endif // NVFP4_NUMERICS_PHILOX_H
