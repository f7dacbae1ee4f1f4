//===- MXTest.cpp - MXFP8/MXFP4 against an independent formulation --------===//
//
// Part of the nvfp4 project.
//
//===----------------------------------------------------------------------===//
//
// The model here is written from docs/Numerics.md section 11, not from
// lib/Numerics/MX.cpp: element values come from their bit fields, rounding
// searches the whole value table with explicit ties-to-even, and the scale
// exponent is the smallest e with max_elem * 2^e >= bamax, compared exactly
// in double (no reciprocal, no frexp).
//
//===----------------------------------------------------------------------===//

#include "ReferenceModel.h"

#include "nvfp4/Numerics/Formats.h"
#include "nvfp4/Numerics/MX.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

using namespace nvfp4::numerics;

namespace {

const MXFormat kFormats[] = {MXFormat::MXFP8E4M3, MXFormat::MXFP8E5M2,
                             MXFormat::MXFP4};

/// E5M2 from its fields: (-1)^s * 2^(e-15) * 1.m, subnormal 2^-14 * 0.m.
double modelE5M2(unsigned Code) {
  unsigned E = (Code >> 2) & 0x1F, M = Code & 3;
  double Sign = (Code & 0x80) ? -1.0 : 1.0;
  if (E == 0x1F)
    return M ? std::nan("") : Sign * INFINITY;
  double V = E == 0 ? std::ldexp(M / 4.0, -14) : std::ldexp(1.0 + M / 4.0, int(E) - 15);
  return Sign * V;
}

/// Element value of `Code` in `Format`, from the bit fields.
double modelElement(MXFormat Format, unsigned Code) {
  switch (Format) {
  case MXFormat::MXFP8E4M3:
    return nvfp4::reference::e4m3Value(Code);
  case MXFormat::MXFP8E5M2:
    return modelE5M2(Code);
  case MXFormat::MXFP4:
    return nvfp4::reference::e2m1Value(Code);
  }
  return 0;
}

double modelMax(MXFormat Format) {
  return Format == MXFormat::MXFP8E4M3   ? 448.0
         : Format == MXFormat::MXFP8E5M2 ? 57344.0
                                         : 6.0;
}

/// Table search: the finite code nearest to `Value`, ties to the even code
/// (mantissa LSB 0), magnitudes beyond the largest finite one saturate.
/// NaN: FP8 NaN 0x7F with the sign, E2M1 code 7.
uint8_t modelEncode(MXFormat Format, double Value) {
  bool Negative = std::signbit(Value);
  if (std::isnan(Value))
    return Format == MXFormat::MXFP4 ? 0x7 : (Negative ? 0xFF : 0x7F);
  unsigned SignBit = Format == MXFormat::MXFP4 ? 0x8 : 0x80;
  unsigned Codes = Format == MXFormat::MXFP4 ? 8 : 128;
  double Magnitude = std::fabs(Value);
  // Beyond the largest finite magnitude (Inf included) everything saturates;
  // the distances below would not separate the top codes there.
  Magnitude = std::min(Magnitude, modelMax(Format));
  unsigned Best = 0;
  double BestError = INFINITY;
  for (unsigned C = 0; C < Codes; ++C) {
    double V = modelElement(Format, C);
    if (!std::isfinite(V))
      continue;
    double Error = std::fabs(V - Magnitude);
    if (Error < BestError || (Error == BestError && (C & 1) == 0)) {
      Best = C;
      BestError = Error;
    }
  }
  return static_cast<uint8_t>(Best | (Negative ? SignBit : 0));
}

/// The spec's v = fp32(bamax * fp32(1 / max)) -- the double product of two
/// floats is exact, so one conversion rounds it -- and the smallest e in
/// [-127, 127] with 2^e >= v, by comparison; 127 when none.
int modelExponent(MXFormat Format, double BlockAmax) {
  float Reciprocal = static_cast<float>(1.0 / modelMax(Format));
  double V = static_cast<float>(BlockAmax * double(Reciprocal));
  for (int E = -127; E <= 127; ++E)
    if (std::ldexp(1.0, E) >= V)
      return E;
  return 127;
}

/// The exact-quotient rule, 2^e >= bamax / max compared as max * 2^e >=
/// bamax, which docs/Numerics.md says the spec's rule equals wherever v is a
/// normal binary32 number.
int exactQuotientExponent(MXFormat Format, double BlockAmax) {
  for (int E = -127; E <= 127; ++E)
    if (std::ldexp(modelMax(Format), E) >= BlockAmax)
      return E;
  return 127;
}

struct ModelMX {
  std::vector<uint8_t> Codes, Scales;
};

ModelMX modelQuantize(MXFormat Format, const std::vector<float> &Data) {
  ModelMX Out;
  for (size_t B = 0; B < Data.size() / 32; ++B) {
    double Amax = 0;
    for (int I = 0; I < 32; ++I)
      if (!std::isnan(Data[B * 32 + I]))
        Amax = std::max(Amax, std::fabs(double(Data[B * 32 + I])));
    int E = modelExponent(Format, Amax);
    Out.Scales.push_back(static_cast<uint8_t>(E + 127));
    for (int I = 0; I < 32; ++I) {
      // x / 2^e rounded once to binary32 (the spec's fp32 multiply), then
      // to the element format.
      float Scaled = static_cast<float>(std::ldexp(double(Data[B * 32 + I]), -E));
      Out.Codes.push_back(modelEncode(Format, Scaled));
    }
  }
  return Out;
}

uint32_t bits(float V) {
  uint32_t B;
  std::memcpy(&B, &V, 4);
  return B;
}

} // namespace

TEST(E5M2, DecodesAll256Codes) {
  for (unsigned C = 0; C < 256; ++C) {
    double Expected = modelE5M2(C);
    float Got = decodeE5M2(static_cast<uint8_t>(C));
    if (std::isnan(Expected)) {
      EXPECT_TRUE(std::isnan(Got)) << C;
    } else {
      EXPECT_EQ(double(Got), Expected) << C;
    }
  }
}

TEST(E5M2, ExhaustiveOverBF16) {
  for (uint32_t B = 0; B < 65536; ++B) {
    float V = bf16ToFloat(static_cast<uint16_t>(B));
    ASSERT_EQ(encodeE5M2(V), modelEncode(MXFormat::MXFP8E5M2, V)) << std::hex << B;
  }
}

TEST(E5M2, EveryMidpointRoundsToEven) {
  for (unsigned C = 0; C < 0x7B; ++C) {
    double Mid = (modelE5M2(C) + modelE5M2(C + 1)) / 2;
    uint8_t Even = (C & 1) ? C + 1 : C;
    EXPECT_EQ(encodeE5M2(float(Mid)), Even) << C;
    EXPECT_EQ(encodeE5M2(float(-Mid)), Even | 0x80) << C;
  }
  // Above the largest finite value, Inf included: satfinite.
  EXPECT_EQ(encodeE5M2(61440.0f), 0x7B);
  EXPECT_EQ(encodeE5M2(INFINITY), 0x7B);
  EXPECT_EQ(encodeE5M2(-INFINITY), 0xFB);
  EXPECT_EQ(encodeE5M2(-0.0f), 0x80);
  EXPECT_EQ(encodeE5M2(std::nanf("")), 0x7F);
}

TEST(E8M0, DecodesAll256Codes) {
  for (unsigned C = 0; C < 255; ++C)
    EXPECT_EQ(double(decodeE8M0(C)), std::ldexp(1.0, int(C) - 127)) << C;
  EXPECT_TRUE(std::isnan(decodeE8M0(0xFF)));
}

TEST(MXScale, EveryPowerOfTwoBoundary) {
  for (MXFormat F : kFormats) {
    for (int E = -140; E <= 128; ++E) {
      float Edge = static_cast<float>(std::ldexp(modelMax(F), E));
      if (Edge == 0 || std::isinf(Edge))
        continue;
      for (float V : {Edge, std::nextafter(Edge, 0.0f),
                      std::nextafter(Edge, INFINITY)}) {
        if (!std::isfinite(V))
          continue;
        ASSERT_EQ(computeMXScaleExponent(F, V), modelExponent(F, V))
            << mxFormatName(F) << " amax " << V;
        // The rounded reciprocal never moves v across a power of two while
        // v is normal; below (bamax < max * 2^-126) v is rounded to the
        // subnormal grid first and may land on 2^-127.
        if (V >= std::ldexp(modelMax(F), -126)) {
          ASSERT_EQ(computeMXScaleExponent(F, V), exactQuotientExponent(F, V))
              << mxFormatName(F) << " amax " << V;
        }
      }
    }
    EXPECT_EQ(computeMXScaleExponent(F, 0.0f), -127);
    EXPECT_EQ(computeMXScaleExponent(F, INFINITY), 127);
    EXPECT_EQ(computeMXScaleExponent(F, std::numeric_limits<float>::max()),
              modelExponent(F, std::numeric_limits<float>::max()));
    EXPECT_EQ(computeMXScaleExponent(F, std::numeric_limits<float>::denorm_min()),
              -127);
  }
}

TEST(MXScale, RandomBitPatterns) {
  std::mt19937 Rng(20);
  for (MXFormat F : kFormats)
    for (int I = 0; I < 200000; ++I) {
      uint32_t B = Rng() & 0x7FFFFFFFu;
      float V;
      std::memcpy(&V, &B, 4);
      if (std::isnan(V))
        continue;
      ASSERT_EQ(computeMXScaleExponent(F, V), modelExponent(F, V))
          << mxFormatName(F) << " bits " << std::hex << B;
      if (V >= std::ldexp(modelMax(F), -126)) {
        ASSERT_EQ(computeMXScaleExponent(F, V), exactQuotientExponent(F, V))
            << mxFormatName(F) << " bits " << std::hex << B;
      }
    }
}

// Every E8M0 exponent x every element code: a block holding max_elem * 2^e
// (which fixes the scale at e) and code * 2^e quantizes back to exactly
// (e + 127, code) and dequantizes to code * 2^e, wherever that product is a
// binary32 value.
TEST(MX, AllExponentsTimesAllCodes) {
  for (MXFormat F : kFormats) {
    unsigned Codes = F == MXFormat::MXFP4 ? 16 : 256;
    uint8_t MaxCode = F == MXFormat::MXFP8E4M3   ? 0x7E
                      : F == MXFormat::MXFP8E5M2 ? 0x7B
                                                 : 0x7;
    for (int E = -127; E <= 127; ++E) {
      for (unsigned C = 0; C < Codes; ++C) {
        double Element = modelElement(F, C);
        if (!std::isfinite(Element))
          continue;
        double Product = std::ldexp(Element, E);
        double Top = std::ldexp(modelMax(F), E);
        if (float(Product) != Product || float(Top) != Top)
          continue; // not a binary32 value (overflow or subnormal rounding)
        std::vector<float> Block(32, 0.0f);
        Block[0] = float(Top);
        Block[5] = float(Product);
        Expected<MXTensor> Q = quantizeMX(Block.data(), 32, 1, 32, F);
        ASSERT_TRUE(Q.ok()) << Q.message();
        ASSERT_EQ(Q->Scales[0], E + 127) << mxFormatName(F) << " e " << E;
        ASSERT_EQ(Q->Codes[0], MaxCode);
        // -0 stays -0: compare magnitudes' codes via the model.
        ASSERT_EQ(Q->Codes[5], modelEncode(F, Element))
            << mxFormatName(F) << " e " << E << " code " << C;
        // Dequantize of the stored (scale, code) pair itself.
        MXTensor T = *Q;
        T.Codes[5] = static_cast<uint8_t>(C);
        Expected<std::vector<float>> X = dequantizeMX(T);
        ASSERT_TRUE(X.ok());
        ASSERT_EQ(bits((*X)[5]), bits(float(Product)))
            << mxFormatName(F) << " e " << E << " code " << C;
      }
    }
  }
}

TEST(MX, DequantizeNaNScaleAndOverflow) {
  MXTensor T;
  T.Rows = 1;
  T.Cols = 32;
  T.Format = MXFormat::MXFP8E5M2;
  T.Codes.assign(32, 0x7B); // 57344
  T.Scales = {0xFF};
  EXPECT_TRUE(std::isnan((*dequantizeMX(T))[0]));
  T.Scales = {254}; // 57344 * 2^127 overflows binary32
  EXPECT_TRUE(std::isinf((*dequantizeMX(T))[0]));
}

TEST(MX, RandomTensorsMatchTheModel) {
  std::mt19937 Rng(2026);
  for (MXFormat F : kFormats) {
    for (int Trial = 0; Trial < 40; ++Trial) {
      int64_t Rows = 1 + Rng() % 8, Cols = 32 * (1 + Rng() % 6);
      std::vector<float> Data(Rows * Cols);
      int Lo = -140 + int(Rng() % 200), Hi = Lo + 1 + int(Rng() % 40);
      for (float &V : Data) {
        V = nvfp4::reference::randomBF16LogUniform(Rng, Lo, std::min(Hi, 127));
        if (Rng() % 2)
          V = -V;
      }
      // Specials in some blocks: zeros, -0, NaN, Inf, an all-zero block.
      if (Trial % 4 == 0) {
        Data[3] = -0.0f;
        Data[7] = std::nanf("");
        Data[Data.size() - 1] = (Trial % 8 == 0) ? INFINITY : -INFINITY;
        for (int I = 0; I < 32 && Cols >= 64; ++I)
          Data[32 + I] = 0.0f;
      }
      Expected<MXTensor> Q = quantizeMX(Data.data(), Data.size(), Rows, Cols, F);
      ASSERT_TRUE(Q.ok()) << Q.message();
      ModelMX M = modelQuantize(F, Data);
      ASSERT_EQ(Q->Scales, M.Scales) << mxFormatName(F) << " trial " << Trial;
      ASSERT_EQ(Q->Codes, M.Codes) << mxFormatName(F) << " trial " << Trial;
    }
  }
}

TEST(MX, EdgeCases) {
  std::vector<float> Zero(32, 0.0f);
  Zero[1] = -0.0f;
  for (MXFormat F : kFormats) {
    Expected<MXTensor> Q = quantizeMX(Zero.data(), 32, 1, 32, F);
    ASSERT_TRUE(Q.ok());
    EXPECT_EQ(Q->Scales[0], 0); // 2^-127: E8M0 has no zero
    EXPECT_EQ(Q->Codes[0], 0);
    EXPECT_EQ(Q->Codes[1], F == MXFormat::MXFP4 ? 0x8 : 0x80);
  }
  std::vector<float> Special(32, 1.0f);
  Special[0] = INFINITY;
  Special[1] = std::nanf("");
  Expected<MXTensor> Q = quantizeMX(Special.data(), 32, 1, 32, MXFormat::MXFP4);
  EXPECT_EQ(Q->Scales[0], 254);  // Inf amax -> 2^127, never NaN
  EXPECT_EQ(Q->Codes[0], 0x7);   // Inf saturates to 6
  EXPECT_EQ(Q->Codes[1], 0x7);   // E2M1 has no NaN
  Q = quantizeMX(Special.data(), 32, 1, 32, MXFormat::MXFP8E4M3);
  EXPECT_EQ(Q->Codes[0], 0x7E);
  EXPECT_EQ(Q->Codes[1], 0x7F);
  // The scale rule: 7.9 in MXFP4 gets 2^1 (7.9 / 2 = 3.95 -> 4), where the
  // OCP floor rule would give 2^0 and clip 7.9 to 6.
  std::vector<float> Clip(32, 0.0f);
  Clip[0] = 7.9f;
  Q = quantizeMX(Clip.data(), 32, 1, 32, MXFormat::MXFP4);
  EXPECT_EQ(Q->Scales[0], 128);
  EXPECT_EQ(Q->Codes[0], 0x6);
}

TEST(MX, RejectsBadShapesAndParts) {
  std::vector<float> Data(48, 1.0f);
  EXPECT_FALSE(quantizeMX(Data.data(), 48, 1, 48, MXFormat::MXFP4).ok());
  EXPECT_FALSE(quantizeMX(Data.data(), 32, 1, 48, MXFormat::MXFP4).ok());
  MXTensor T;
  T.Rows = 1;
  T.Cols = 32;
  T.Format = MXFormat::MXFP4;
  T.Codes.assign(32, 0x10);
  T.Scales = {127};
  EXPECT_FALSE(dequantizeMX(T).ok());
  T.Codes.assign(31, 0);
  EXPECT_FALSE(dequantizeMX(T).ok());
  EXPECT_EQ(parseMXFormat("mxfp8_e5m2"), MXFormat::MXFP8E5M2);
  EXPECT_FALSE(parseMXFormat("mxfp6").has_value());
}

TEST(MX, GemmMatchesTheBlockOrder) {
  std::mt19937 Rng(7);
  for (auto [FA, FB] : {std::pair{MXFormat::MXFP4, MXFormat::MXFP4},
                        std::pair{MXFormat::MXFP8E4M3, MXFormat::MXFP8E4M3},
                        std::pair{MXFormat::MXFP8E4M3, MXFormat::MXFP8E5M2}}) {
    int64_t M = 5, N = 3, K = 96;
    std::vector<float> A(M * K), B(N * K);
    for (float &V : A)
      V = nvfp4::reference::randomBF16Normal(Rng, 1.0) * float(1 << (Rng() % 8));
    for (float &V : B)
      V = nvfp4::reference::randomBF16Normal(Rng, 1.0);
    Expected<MXTensor> QA = quantizeMX(A.data(), A.size(), M, K, FA);
    Expected<MXTensor> QB = quantizeMX(B.data(), B.size(), N, K, FB);
    Expected<std::vector<float>> C = scaledMatmulMX(*QA, *QB, 0.5f);
    ASSERT_TRUE(C.ok()) << C.message();
    for (int64_t I = 0; I < M; ++I)
      for (int64_t J = 0; J < N; ++J) {
        // Model: the dot product of the dequantized values in double; the
        // block partials of MXFP4 are exact, so only the K/32 additions
        // round and the result is within a few ulps.
        double Exact = 0, Magnitude = 0;
        float Ordered = 0;
        for (int64_t KB = 0; KB < K / 32; ++KB) {
          double Partial = 0;
          for (int L = 0; L < 32; ++L) {
            int64_t Kk = KB * 32 + L;
            double Product = modelElement(FA, QA->Codes[I * K + Kk]) *
                             modelElement(FB, QB->Codes[J * K + Kk]);
            Partial += Product;
            Magnitude += std::ldexp(std::fabs(Product),
                                    QA->Scales[I * 3 + KB] - 127 +
                                        QB->Scales[J * 3 + KB] - 127);
          }
          double Term = std::ldexp(Partial, QA->Scales[I * 3 + KB] - 127 +
                                                QB->Scales[J * 3 + KB] - 127);
          Exact += Term;
          Ordered = Ordered + float(Term);
        }
        float Got = (*C)[I * N + J];
        if (FA == MXFormat::MXFP4) {
          EXPECT_EQ(bits(Got), bits(Ordered * 0.5f)) << I << "," << J;
        }
        EXPECT_NEAR(Got, 0.5 * Exact, 1e-5 * Magnitude);
      }
  }
  MXTensor Short = *quantizeMX(std::vector<float>(32, 1).data(), 32, 1, 32,
                               MXFormat::MXFP4);
  MXTensor Long = *quantizeMX(std::vector<float>(64, 1).data(), 64, 1, 64,
                              MXFormat::MXFP4);
  EXPECT_FALSE(scaledMatmulMX(Short, Long).ok());
}

// The sm_90a tensor-core MX GEMM decodes every operand element into BF16 as
// bf16_rne(fp32(elem * 2^(s - 127))) (docs/Numerics.md 11.7). The claim:
// that is the exact value for every finite code exactly when the E8M0 byte
// s lies in the format's range -- E4M3 [3, 246], E5M2 [10, 239], E2M1
// [0, 252] -- because every E4M3 value is a multiple of 2^-9 (E5M2 2^-16,
// E2M1 2^-1) with at most 4 (3, 2) significant bits, BF16's grid ends at
// 2^-133 and its largest value is (2 - 2^-7) 2^127. Checked for every code
// and every scale against the exact value from the bit fields (double).
TEST(MX, BF16DecodeIsExactOverTheDocumentedScaleRange) {
  struct Range {
    MXFormat Format;
    unsigned Codes, First, Last;
  };
  for (Range R : {Range{MXFormat::MXFP8E4M3, 256, 3, 246},
                  Range{MXFormat::MXFP8E5M2, 256, 10, 239},
                  Range{MXFormat::MXFP4, 16, 0, 252}}) {
    for (unsigned S = 0; S < 255; ++S) {
      bool AllExact = true;
      for (unsigned C = 0; C < R.Codes; ++C) {
        double Exact = modelElement(R.Format, C);
        if (!std::isfinite(Exact))
          continue;
        Exact = std::ldexp(Exact, int(S) - 127);
        float Decoded = roundToBF16(decodeMXElement(R.Format, uint8_t(C)) *
                                    decodeE8M0(uint8_t(S)));
        if (double(Decoded) != Exact)
          AllExact = false;
      }
      EXPECT_EQ(AllExact, S >= R.First && S <= R.Last)
          << mxFormatName(R.Format) << " scale byte " << S;
    }
    // A NaN scale (0xFF) makes every element NaN, zero included; Inf and
    // NaN codes stay Inf and NaN under every finite scale.
    for (unsigned C = 0; C < R.Codes; ++C)
      EXPECT_TRUE(std::isnan(roundToBF16(
          decodeMXElement(R.Format, uint8_t(C)) * decodeE8M0(0xFF))));
  }
  // Outside the range: tiny values round on BF16's subnormal grid of 2^-133
  // (E4M3 scale byte 0: 2^-9 x 2^-127 -> 0; 4 x 2^-136, a tie, -> 0 (even);
  // 6 x 2^-136 -> 2^-133), large ones overflow (448 x 2^127, 6 x 2^126).
  auto decode = [](MXFormat F, unsigned C, unsigned S) {
    return roundToBF16(decodeMXElement(F, uint8_t(C)) * decodeE8M0(uint8_t(S)));
  };
  EXPECT_EQ(decode(MXFormat::MXFP8E4M3, 0x01, 0), 0.0f);
  EXPECT_EQ(decode(MXFormat::MXFP8E4M3, 0x04, 0), 0.0f);
  EXPECT_EQ(decode(MXFormat::MXFP8E4M3, 0x06, 0), std::ldexp(1.0f, -133));
  EXPECT_TRUE(std::isinf(decode(MXFormat::MXFP8E4M3, 0x7E, 254)));
  EXPECT_TRUE(std::isinf(decode(MXFormat::MXFP4, 0x7, 253)));
  EXPECT_TRUE(std::isinf(decode(MXFormat::MXFP8E5M2, 0x7C, 3)));
  EXPECT_TRUE(std::isnan(decode(MXFormat::MXFP8E4M3, 0x7F, 200)));
}
