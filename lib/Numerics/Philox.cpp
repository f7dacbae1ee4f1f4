//===- Philox.cpp - Philox4x32-10 and the stochastic-rounding bits --------===//
//
// Part of the nvfp4 project.
//
//===----------------------------------------------------------------------===//

#include "nvfp4/Numerics/Philox.h"

using namespace nvfp4::numerics;

namespace {
constexpr uint32_t kPhiloxMultiplier0 = 0xD2511F53u;
constexpr uint32_t kPhiloxMultiplier1 = 0xCD9E8D57u;
constexpr uint32_t kPhiloxWeyl0 = 0x9E3779B9u;
constexpr uint32_t kPhiloxWeyl1 = 0xBB67AE85u;
constexpr int kPhiloxRounds = 10;

/// One Philox S-box round: two 32x32->64 multiplies whose high halves are
/// mixed with the other words and the round key.
PhiloxBlock philoxRound(const PhiloxBlock &Counter, const PhiloxKey &Key) {
  uint64_t Product0 = static_cast<uint64_t>(kPhiloxMultiplier0) * Counter[0];
  uint64_t Product1 = static_cast<uint64_t>(kPhiloxMultiplier1) * Counter[2];
  uint32_t Hi0 = static_cast<uint32_t>(Product0 >> 32);
  uint32_t Lo0 = static_cast<uint32_t>(Product0);
  uint32_t Hi1 = static_cast<uint32_t>(Product1 >> 32);
  uint32_t Lo1 = static_cast<uint32_t>(Product1);
  return {Hi1 ^ Counter[1] ^ Key[0], Lo1, Hi0 ^ Counter[3] ^ Key[1], Lo0};
}
} // namespace

PhiloxBlock nvfp4::numerics::philox4x32x10(const PhiloxBlock &Counter,
                                           const PhiloxKey &Key) {
  PhiloxBlock State = Counter;
  PhiloxKey RoundKey = Key;
  for (int Round = 0; Round < kPhiloxRounds; ++Round) {
    // The key schedule bumps the key between rounds, not before the first.
    if (Round != 0) {
      RoundKey[0] += kPhiloxWeyl0;
      RoundKey[1] += kPhiloxWeyl1;
    }
    State = philoxRound(State, RoundKey);
  }
  return State;
}

PhiloxBlock nvfp4::numerics::stochasticRoundingBlock(uint64_t Seed,
                                                     uint64_t Group) {
  PhiloxKey Key = {static_cast<uint32_t>(Seed),
                   static_cast<uint32_t>(Seed >> 32)};
  PhiloxBlock Counter = {static_cast<uint32_t>(Group),
                         static_cast<uint32_t>(Group >> 32), 0u, 0u};
  return philox4x32x10(Counter, Key);
}

uint32_t nvfp4::numerics::stochasticRoundingWord(uint64_t Seed, uint64_t Quad) {
  return stochasticRoundingBlock(Seed, Quad / 4)[Quad % 4];
}

uint8_t nvfp4::numerics::stochasticRoundingByte(uint64_t Seed,
                                                uint64_t ElementIndex) {
  uint32_t Word = stochasticRoundingWord(Seed, ElementIndex / 4);
  return static_cast<uint8_t>(Word >> (8 * (ElementIndex % 4)));
}
