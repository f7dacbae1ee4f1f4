//===- QuantizeKernels.cpp - amax, quantize, hadamard, dequantize kernels -===//
//
// Part of the nvfp4 project.
//
// Elementwise NVFP4 kernels. A run is 16 consecutive elements of a row (one
// 1x16 block, one Philox group, one row of a 16x16 tile, one RHT chunk),
// loaded with 16-byte vector loads and computed in registers. The
// quantize kernels are persistent: a grid the size of the chip (at most)
// walks the tensor in groups of 256 work units, and every thread issues the
// loads of its next unit before it computes the current one, so that each
// multiprocessor keeps ~64 KB of loads in flight while it computes.
// The arithmetic is lib/Numerics's order of FP32 operations, so the bytes
// equal the reference lowering's; where an instruction computes a step of
// it exactly (cvt.rn.satfinite.e4m3x2 for the block scale, max.xorsign.abs
// on BF16 pairs for the block amax, a table of the 127 possible block
// encode factors per tensor) the kernels use it. Only the final E2M1
// rounding differs per chip: the hardware cvt where it exists, exact
// integer/float emulation elsewhere. On sm_90a the RHT, stochastic and dual
// kernels are bound by the ALU pipe (half the FMA pipes' rate; ncu on the
// H200, session 10), so the emulation puts what it can on the FMA pipe:
// BF16 extension by shl (IMAD), binades by mul.hi, nibbles packed by
// multiply-adds. A quantization or amax with a
// `hadamard` sign mask (nvfp4-fuse-quantization's fold-hadamard) computes
// the RHT in registers: no intermediate tensor in device memory. The dual
// quantization (nvfp4.dual_quantize) reads 16x16 tiles and transposes them
// across a half warp, so that one read gives the rowwise blocks and the
// columnwise (transposed, RHT) ones. Both tile kernels (16x16 and dual)
// write their codes through a shared-memory stage: whole sectors per warp
// instead of 8 bytes in each of 16 rows.
//
//===----------------------------------------------------------------------===//

#include "KernelBuilder.h"
#include "KernelUtils.h"
#include "nvfp4/Conversion/NVFP4ToGPU/NVFP4ToGPU.h"
#include "nvfp4/Conversion/Utils/ElementBuilders.h"
#include "nvfp4/Dialect/NVFP4/IR/NVFP4Ops.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "llvm/Support/MathExtras.h"

#include <optional>

using namespace mlir;
using namespace mlir::nvfp4;
using namespace mlir::nvfp4::kernels;
using ::nvfp4::target::ChipInfo;
using ::nvfp4::target::Instruction;

//===----------------------------------------------------------------------===//
// Loads, stores and element access
//===----------------------------------------------------------------------===//

namespace {

/// A vector load of `width` elements at `index` that tells the backend the
/// address is aligned to `alignBytes` (without it NVPTX splits the vector
/// into element loads). Kernel buffers are device allocations (256-byte
/// aligned) and every run starts at a multiple of its own size.
Value alignedLoad(OpBuilder &b, Location loc, Value memref, Value index,
                  int64_t width, uint64_t alignBytes) {
  Type elementType = cast<MemRefType>(memref.getType()).getElementType();
  return vector::LoadOp::create(b, loc, VectorType::get({width}, elementType),
                                memref, index, /*nontemporal=*/false,
                                llvm::Align(alignBytes));
}

void alignedStore(OpBuilder &b, Location loc, Value vector, Value memref,
                  Value index, uint64_t alignBytes) {
  vector::StoreOp::create(b, loc, vector, memref, index, /*nontemporal=*/false,
                          llvm::Align(alignBytes));
}

/// Byte size of a run of 16 elements of `type`, capped at a 16-byte access.
uint64_t runAlignment(Type elementType) {
  return std::min<uint64_t>(16, 16 * elementType.getIntOrFloatBitWidth() / 8);
}

/// Loads the 16 raw elements at `base` (16-byte vector loads).
Value loadSixteenRaw(OpBuilder &b, Location loc, Value memref, Value base) {
  Type elementType = cast<MemRefType>(memref.getType()).getElementType();
  return alignedLoad(b, loc, memref, base, 16, runAlignment(elementType));
}

/// The two elements of a 32-bit word of BF16 pairs (element 0 in the low
/// half) as f32: the BF16 bits are the high half of the f32's, so the
/// extension is exact as integer operations -- shl by 16 (IMAD.U32 on the
/// FMA pipe) and an and (LOP3). fpext of the BF16 halves makes ptxas split
/// the word into 16-bit registers and join them again for the pair
/// instructions that use the same word (max.xorsign.abs, min.bf16x2): three
/// PRMTs a pair on the ALU pipe, the pipe that bounds the RHT and dual
/// kernels (ncu, H200: 66-69 % of its peak, math-pipe throttle ~20 % of the
/// stalls, session 10).
std::array<Value, 2> extendBF16Word(OpBuilder &b, Location loc, Value word) {
  ScalarBuilder s(b, loc);
  Type f32 = b.getF32Type();
  return {arith::BitcastOp::create(
              b, loc, f32, arith::ShLIOp::create(b, loc, word, s.i32(16))),
          arith::BitcastOp::create(
              b, loc, f32,
              arith::AndIOp::create(b, loc, word,
                                    s.i32(static_cast<int32_t>(0xFFFF0000u))))};
}

/// The 32-bit words of a vector of BF16 pairs (vector<2nxbf16>).
SmallVector<Value> bf16Words(OpBuilder &b, Location loc, Value vector) {
  int64_t count = cast<VectorType>(vector.getType()).getNumElements();
  Value words = vector::BitCastOp::create(
      b, loc, VectorType::get({count / 2}, b.getI32Type()), vector);
  SmallVector<Value> result;
  for (int64_t j = 0; j < count / 2; ++j)
    result.push_back(
        vector::ExtractOp::create(b, loc, words, ArrayRef<int64_t>{j}));
  return result;
}

/// The elements of a loaded vector as f32 values (BF16 by extendBF16Word
/// with `integerBF16`, else fpext of each element).
SmallVector<Value> extendSixteen(OpBuilder &b, Location loc, Value vector,
                                 bool integerBF16 = true) {
  ScalarBuilder s(b, loc);
  auto type = cast<VectorType>(vector.getType());
  SmallVector<Value> values;
  if (integerBF16 && type.getElementType().isBF16() &&
      type.getNumElements() % 2 == 0) {
    for (Value word : bf16Words(b, loc, vector))
      llvm::append_range(values, extendBF16Word(b, loc, word));
    return values;
  }
  for (int64_t j = 0; j < type.getNumElements(); ++j)
    values.push_back(
        s.toF32(vector::ExtractOp::create(b, loc, vector, ArrayRef<int64_t>{j})));
  return values;
}

/// Loads 16 elements at `base` as f32 values.
SmallVector<Value> loadSixteen(OpBuilder &b, Location loc, Value memref,
                               Value base) {
  return extendSixteen(b, loc, loadSixteenRaw(b, loc, memref, base));
}

/// Whether values of `type` travel as pairs in one 32-bit register.
bool isPairedType(Type type) { return isa<BFloat16Type, Float16Type>(type); }

/// The two-element slices (vector<2xT>) of a loaded vector of a 16-bit
/// type: each is one 32-bit register of the load.
SmallVector<Value> pairsOf(OpBuilder &b, Location loc, Value vector) {
  int64_t count = cast<VectorType>(vector.getType()).getNumElements();
  SmallVector<Value> pairs;
  for (int64_t j = 0; j < count / 2; ++j)
    pairs.push_back(vector::ShuffleOp::create(b, loc, vector, vector,
                                              ArrayRef<int64_t>{2 * j, 2 * j + 1}));
  return pairs;
}

//===----------------------------------------------------------------------===//
// Instructions without an arith/math spelling
//===----------------------------------------------------------------------===//

/// max.xorsign.abs.{bf16x2,f16x2}: max(|x|, |y|) of each half (the sign
/// bit is the xor of the inputs' and is ignored by its users); a NaN half
/// loses to the other operand's, as in maxnum. One instruction per two
/// elements, where f32 code takes a conversion and a max for each.
Value maxMagnitudePair(OpBuilder &b, Location loc, Value x, Value y) {
  Type element = cast<VectorType>(x.getType()).getElementType();
  StringRef name = element.isBF16() ? "llvm.nvvm.fmax.xorsign.abs.bf16x2"
                                    : "llvm.nvvm.fmax.xorsign.abs.f16x2";
  return LLVM::CallIntrinsicOp::create(b, loc, x.getType(),
                                       b.getStringAttr(name), ValueRange{x, y})
      .getResult(0);
}

/// add.rz.f32: the FP32 sum rounded toward zero.
Value addTowardZero(OpBuilder &b, Location loc, Value x, Value y) {
  return LLVM::CallIntrinsicOp::create(b, loc, b.getF32Type(),
                                       b.getStringAttr("llvm.nvvm.add.rz.f"),
                                       ValueRange{x, y})
      .getResult(0);
}

/// prmt.b32 (default mode): byte i of the result is byte selector[4i+3:4i]
/// of the 8 bytes {hi, lo}.
Value permuteBytes(OpBuilder &b, Location loc, Value lo, Value hi,
                   Value selector) {
  return NVVM::PermuteOp::create(
      b, loc, b.getI32Type(), lo, hi, selector,
      NVVM::PermuteModeAttr::get(b.getContext(), NVVM::PermuteMode::DEFAULT));
}

//===----------------------------------------------------------------------===//
// Block amax and the RHT of a run
//===----------------------------------------------------------------------===//

/// max |x| over the 16 f32 values of a run, 0 when all are NaN
/// (lib/Numerics' block amax: NaN skipped).
Value amaxOfValues(OpBuilder &b, Location loc, ArrayRef<Value> values) {
  ScalarBuilder s(b, loc);
  Value max = s.f32(0.0f);
  for (Value v : values)
    max = arith::MaxNumFOp::create(b, loc, max, math::AbsFOp::create(b, loc, v));
  return max;
}

/// The same amax from the 8 pairs of a run of a 16-bit type: a
/// max.xorsign.abs tree (7 instructions for 16 elements; max of BF16 or
/// F16 values is exact), then the two halves as f32.
Value amaxOfPairs(OpBuilder &b, Location loc, ArrayRef<Value> pairs,
                  bool integerBF16 = true) {
  SmallVector<Value> level(pairs);
  while (level.size() > 1) {
    SmallVector<Value> next;
    for (size_t i = 0; i + 1 < level.size(); i += 2)
      next.push_back(maxMagnitudePair(b, loc, level[i], level[i + 1]));
    if (level.size() % 2)
      next.push_back(level.back());
    level = std::move(next);
  }
  return amaxOfValues(b, loc, extendSixteen(b, loc, level[0], integerBF16));
}

/// The 16-point RHT of one run (NUMERICS.md section 4) in registers: the
/// sign flips (negations, exact), the four butterfly stages of FP32 adds and
/// subtracts in the spec's order, the exact multiply by 0.25, the rounding
/// to `roundTo` (RNE). 64 additions and 16 multiplies per run: 5 FP32
/// operations per element. No fast-math flags: the backend keeps every
/// operation and rounding (a negation folds into the add that uses it,
/// x + (-y) being x - y exactly).
SmallVector<Value> hadamardSixteen(OpBuilder &b, Location loc,
                                   ArrayRef<Value> v, uint32_t signMask,
                                   Type roundTo) {
  ScalarBuilder s(b, loc);
  SmallVector<Value> u;
  for (unsigned i = 0; i < 16; ++i)
    u.push_back((signMask >> i) & 1u ? arith::NegFOp::create(b, loc, v[i])
                                     : v[i]);
  for (unsigned h = 1; h < 16; h *= 2)
    for (unsigned i = 0; i < 16; ++i) {
      if (i & h)
        continue;
      Value first = u[i], second = u[i + h];
      u[i] = arith::AddFOp::create(b, loc, first, second);
      u[i + h] = arith::SubFOp::create(b, loc, first, second);
    }
  Value quarter = s.f32(0.25f);
  SmallVector<Value> out;
  for (Value value : u)
    out.push_back(
        s.fromF32(arith::MulFOp::create(b, loc, value, quarter), roundTo));
  return out;
}

/// A run ready for its block scale: its 16 values as f32, its block amax
/// and, for BF16 and F16 runs, the 8 pairs (vector<2xT>) the values were
/// extended from (after the RHT: its rounded outputs), whose sign bits are
/// the codes' (signWords).
struct PreparedRun {
  SmallVector<Value> values;
  Value amax;
  SmallVector<Value> pairs;
};

/// Two f32 values rounded (RNE) to a vector<2xT> of a 16-bit type, `lo`
/// in element 0: one cvt.rn.{bf16x2,f16x2}.f32 (its first operand goes to
/// the high half). arith.truncf of a vector<2xf32> becomes two scalar
/// conversions (F2F, a quarter-rate pipe on sm_90) in the NVPTX backend.
Value roundPair(OpBuilder &b, Location loc, Value lo, Value hi,
                Type elementType) {
  StringRef name = elementType.isBF16() ? "llvm.nvvm.ff2bf16x2.rn"
                                        : "llvm.nvvm.ff2f16x2.rn";
  return LLVM::CallIntrinsicOp::create(b, loc,
                                       VectorType::get({2}, elementType),
                                       b.getStringAttr(name),
                                       ValueRange{hi, lo})
      .getResult(0);
}

/// The values and block amax of a loaded run (vector<16xT>), after the
/// RHT when `rhtMask` is set. The RHT's outputs are rounded to BF16 in
/// pairs (roundPair), which also gives the amax its pairs. `integerBF16`:
/// BF16 extended by extendBF16Word (ArithmeticForm::fmaForms).
PreparedRun prepareRun(OpBuilder &b, Location loc, Value loaded,
                       std::optional<uint32_t> rhtMask,
                       bool integerBF16 = true) {
  Type elementType = cast<VectorType>(loaded.getType()).getElementType();
  SmallVector<Value> values = extendSixteen(b, loc, loaded, integerBF16);
  if (!rhtMask) {
    if (!isPairedType(elementType))
      return {values, amaxOfValues(b, loc, values), {}};
    SmallVector<Value> pairs = pairsOf(b, loc, loaded);
    return {values, amaxOfPairs(b, loc, pairs, integerBF16), pairs};
  }
  SmallVector<Value> transformed = hadamardSixteen(
      b, loc, values, *rhtMask, b.getF32Type());
  auto f32Pair = VectorType::get({2}, b.getF32Type());
  SmallVector<Value> pairs, rounded;
  for (int64_t j = 0; j < 8; ++j) {
    pairs.push_back(roundPair(b, loc, transformed[2 * j],
                              transformed[2 * j + 1], elementType));
    if (integerBF16) {
      llvm::append_range(rounded, extendSixteen(b, loc, pairs.back()));
      continue;
    }
    Value wide = arith::ExtFOp::create(b, loc, f32Pair, pairs.back());
    for (int64_t k = 0; k < 2; ++k)
      rounded.push_back(
          vector::ExtractOp::create(b, loc, wide, ArrayRef<int64_t>{k}));
  }
  return {rounded, amaxOfPairs(b, loc, pairs, integerBF16), pairs};
}

//===----------------------------------------------------------------------===//
// E2M1 encoding without the Blackwell conversions
//===----------------------------------------------------------------------===//
//
// Both encoders work on ys = max(min(y, 6), -6): every |y| >= 6 has code 7
// in both roundings (SR: t = fma(u, 2, a) >= 6 truncates to 6), and NaN
// becomes +6 (min/max return the non-NaN operand), so NaN -> code 7 with
// no separate test. a = |ys| lies in [0, 6]; let E = max(biased exponent of
// a, 127), i.e. the E2M1 binade [0, 2), [2, 4) or [4, 8), whose spacing is
// step = 2^(E - 128). An FP32 add of a magic number M = 2^(E - 105) to a
// leaves a / step, rounded by the add's rounding mode, in the low bits of
// the sum (its spacing there is `step`); the code is that count plus
// 2 * (E - 127), which M carries in its own low bits (even, so ties still
// go to the even count), and for a negative ys the sign goes into M too:
// ys + (-M') = -(|ys| + M'), the rounding being symmetric, with 8 in M'.
//
// Nearest even: sum = ys + M' (RNE): 0.25 -> 0, 0.75 -> 1, 2.5 -> 2, 5 -> 4.
//
// Stochastic (NUMERICS.md section 5): t = fma(u, step, a) with u = byte /
// 256 (RNE, as the spec), then sum = RZ(t + M) truncates t to the grid of
// a's binade. That equals the spec's truncation to t's own binade: t < a +
// step, so a t that reaches the next binade [2^(e+1), 2^(e+1) + step)
// truncates to 2^(e+1) on either grid, and a <= 6 keeps t < 8. The sign is
// or'ed into the nibble. u * step comes from bits: the byte as an FP32
// subnormal times a power of two of the binade (stochasticThreshold).
//
// Codes of BF16 / F16 runs (the default; ArithmeticForm::signWords) skip
// the signed arithmetic: the magnitude a = min(|y|, 6) (NaN -> 6) gives the
// low three bits, and the sign bits of a whole word come from the run's
// pairs (signWords), since y = x * enc has x's sign.
//
// The sign is ys's sign bit, so -0.0 and negatives that round to zero give
// code 8, as encodeE2M1 does. Checked against lib/Numerics' encodeE2M1 and
// encodeE2M1Stochastic (every byte) on 1.4e9 inputs, all NaN kinds and
// every FP32 value near the decision boundaries, before the GPU suite.

/// ys = max(min(y, 6), -6) and its bits.
std::pair<Value, Value> clampForE2M1(OpBuilder &b, Location loc, Value y) {
  ScalarBuilder s(b, loc);
  Value ys = arith::MaxNumFOp::create(
      b, loc, arith::MinNumFOp::create(b, loc, y, s.f32(6.0f)), s.f32(-6.0f));
  return {ys, arith::BitcastOp::create(b, loc, b.getI32Type(), ys)};
}

/// The biased exponent of a positive f32 `value` (bits >> 23), as
/// mul.hi.u32 of its bits and 2^9: IMAD.HI on the FMA pipe, where the shift
/// is an ALU instruction (the pipe that bounds the RHT and dual kernels;
/// ptxas keeps the multiply, and LLVM does not see through the intrinsic).
Value exponentField(OpBuilder &b, Location loc, Value value) {
  ScalarBuilder s(b, loc);
  return LLVM::CallIntrinsicOp::create(
             b, loc, b.getI32Type(), b.getStringAttr("llvm.nvvm.mulhi.ui"),
             ValueRange{arith::BitcastOp::create(b, loc, b.getI32Type(), value),
                        s.i32(1 << 9)})
      .getResult(0);
}

/// E = biased exponent of max(|ys|, 1): the E2M1 binade of ys, by
/// exponentField with `mulHigh`, else a shift.
Value e2m1Binade(OpBuilder &b, Location loc, Value ys, bool mulHigh = true) {
  ScalarBuilder s(b, loc);
  Value atLeastOne = arith::MaxNumFOp::create(
      b, loc, math::AbsFOp::create(b, loc, ys), s.f32(1.0f));
  if (mulHigh)
    return exponentField(b, loc, atLeastOne);
  return arith::ShRUIOp::create(
      b, loc, arith::BitcastOp::create(b, loc, b.getI32Type(), atLeastOne),
      s.i32(23));
}

/// M = 2^(E - 105) with 2 * (E - 127) in its low bits, as i32 bits:
/// ((E + 22) << 23) + 2 * E - 254 = E * 0x800002 + (22 << 23) - 254.
Value e2m1Magic(OpBuilder &b, Location loc, Value binade) {
  ScalarBuilder s(b, loc);
  return arith::AddIOp::create(
      b, loc, arith::MulIOp::create(b, loc, binade, s.i32(0x800002)),
      s.i32((22 << 23) - 254));
}

/// encodeE2M1 (RNE, satfinite, NaN -> 7) of `y`: an i32 whose low nibble
/// is the code (the bits above are not zero).
Value encodeNearestFast(OpBuilder &b, Location loc, Value y,
                        bool mulHigh = true) {
  ScalarBuilder s(b, loc);
  auto [ys, bits] = clampForE2M1(b, loc, y);
  Value magic = e2m1Magic(b, loc, e2m1Binade(b, loc, ys, mulHigh));
  // For a negative ys: the sign bit and 8 (magic's bit 31 and bit 3 are 0).
  Value negative = arith::ShRSIOp::create(b, loc, bits, s.i32(31));
  Value signedMagic = arith::OrIOp::create(
      b, loc, magic,
      arith::AndIOp::create(b, loc, negative, s.i32(0x80000008)));
  Value sum = arith::AddFOp::create(
      b, loc, ys, arith::BitcastOp::create(b, loc, b.getF32Type(), signedMagic));
  return arith::BitcastOp::create(b, loc, b.getI32Type(), sum);
}

/// The arithmetic forms a quantize kernel emits where two exact ones exist
/// and each wins somewhere (quantize-schedule's mulwide / mulsplit and
/// signlegacy force one, so that both can be measured in one run):
/// Philox's 32 x 32 -> 64-bit products as one mul.wide.u32 or as
/// mul.hi.u32 + mul.lo.u32, and the codes of BF16 / F16 runs as magnitudes
/// or'ed with sign words or with each sign in its magic number (the form
/// of f32 runs, which have no pairs).
struct ArithmeticForm {
  bool wideMultiply = true;
  /// Codes of BF16 / F16 runs as magnitudes (min(|y|, 6): one FMNMX) or'ed
  /// with the sign words of their pairs (signWords), instead of each value
  /// clamped to [-6, 6] and its sign put into the magic number (two more
  /// instructions an element).
  bool signWords = true;
  /// The emulation's FMA-pipe forms (session 10): BF16 extended by integer
  /// operations (extendBF16Word), binades by mul.hi (exponentField), codes
  /// packed by multiply-adds (packNibbles), instead of fpext, shifts and a
  /// funnel shift per nibble on the ALU pipe. The default except in the
  /// 16x16 kernels, where they measured 1.6 % slower (0.0604 against
  /// 0.0594 ms with W^T, H200, 6/6 interleaved rounds; those kernels wait
  /// on their stage barrier and loads as much as on the ALU pipe).
  bool fmaForms = true;
};

/// The spec's t = fma(u, step, a) of stochastic rounding for the magnitude
/// `a` in binade `binade` (E) and the random byte at bits 8 * byteIndex + 7
/// .. 8 * byteIndex of `word`: u * step = byte * 2^(E - 136) = (byte *
/// 2^-133) * 2^(E - 3). The byte in bits 23..16 of a zero word (one prmt) is
/// the FP32 subnormal byte * 2^-133 (exact; fma.rn.f32 keeps subnormals),
/// 2^(E - 3) has the bits (E + 124) << 23, and the fma rounds u * step + a
/// once, as the spec's. (The session-3 form built 64 + byte / 512 and
/// subtracted 64: one instruction more an element, 2 % slower for dual dY
/// on the H200 and level for RHT + SR.)
Value stochasticThreshold(OpBuilder &b, Location loc, Value word,
                          int64_t byteIndex, Value binade, Value a) {
  ScalarBuilder s(b, loc);
  Value subnormal = arith::BitcastOp::create(
      b, loc, b.getF32Type(),
      permuteBytes(b, loc, word, s.i32(0), s.i32(0x4044 | (byteIndex << 8))));
  Value power = arith::BitcastOp::create(
      b, loc, b.getF32Type(),
      arith::AddIOp::create(
          b, loc, arith::MulIOp::create(b, loc, binade, s.i32(0x800000)),
          s.i32(124 << 23)));
  return math::FmaOp::create(b, loc, subnormal, power, a);
}

/// encodeE2M1Stochastic of `y` with the random byte at bits
/// 8 * byteIndex + 7 .. 8 * byteIndex of `word`: an i32 whose low nibble
/// is the code.
Value encodeStochasticFast(OpBuilder &b, Location loc, Value y, Value word,
                           int64_t byteIndex, bool mulHigh = true) {
  ScalarBuilder s(b, loc);
  auto [ys, bits] = clampForE2M1(b, loc, y);
  Value binade = e2m1Binade(b, loc, ys, mulHigh);
  Value threshold = stochasticThreshold(b, loc, word, byteIndex, binade,
                                        math::AbsFOp::create(b, loc, ys));
  Value magic = arith::BitcastOp::create(b, loc, b.getF32Type(),
                                         e2m1Magic(b, loc, binade));
  Value sum = arith::BitcastOp::create(
      b, loc, b.getI32Type(), addTowardZero(b, loc, threshold, magic));
  Value sign = arith::AndIOp::create(
      b, loc, arith::ShRUIOp::create(b, loc, bits, s.i32(28)), s.i32(8));
  return arith::OrIOp::create(b, loc, sum, sign);
}

/// The E2M1 magnitude code (bits 2..0 of an i32, bit 3 zero) of y:
/// encodeNearestFast of |y| with the clamp to 6 as one min (NaN -> 6),
/// since the sign comes from the sign words.
Value encodeNearestMagnitude(OpBuilder &b, Location loc, Value y,
                             bool mulHigh = true) {
  ScalarBuilder s(b, loc);
  Value a = arith::MinNumFOp::create(b, loc, math::AbsFOp::create(b, loc, y),
                                     s.f32(6.0f));
  Value magic = e2m1Magic(b, loc, e2m1Binade(b, loc, a, mulHigh));
  Value sum = arith::AddFOp::create(
      b, loc, a, arith::BitcastOp::create(b, loc, b.getF32Type(), magic));
  return arith::BitcastOp::create(b, loc, b.getI32Type(), sum);
}

/// The stochastic magnitude code of y (encodeStochasticFast of |y|, the
/// sign left to the sign words).
Value encodeStochasticMagnitude(OpBuilder &b, Location loc, Value y,
                                Value word, int64_t byteIndex,
                                bool mulHigh = true) {
  ScalarBuilder s(b, loc);
  Value a = arith::MinNumFOp::create(b, loc, math::AbsFOp::create(b, loc, y),
                                     s.f32(6.0f));
  // a >= 0: the binade needs no |.| (the session-9 form's shift took none).
  Value atLeastOne = arith::MaxNumFOp::create(b, loc, a, s.f32(1.0f));
  Value binade =
      mulHigh ? exponentField(b, loc, atLeastOne)
              : arith::ShRUIOp::create(
                    b, loc,
                    arith::BitcastOp::create(b, loc, b.getI32Type(), atLeastOne),
                    s.i32(23))
                    .getResult();
  Value threshold = stochasticThreshold(b, loc, word, byteIndex, binade, a);
  Value magic = arith::BitcastOp::create(b, loc, b.getF32Type(),
                                         e2m1Magic(b, loc, binade));
  return arith::BitcastOp::create(b, loc, b.getI32Type(),
                                  addTowardZero(b, loc, threshold, magic));
}

/// The sign bits of a run's 16 codes (bit 4 * (j % 8) + 3 of word j / 8
/// for element j) from its 8 pairs of a 16-bit type: the sign of y = x *
/// enc is x's (enc > 0), except that NaN must give code 7. min(+0, p) per
/// pair (min.bf16x2 / min.f16x2: a NaN half gives the +0, a negative half
/// keeps its sign, and -0 stays -0 whether the instruction orders -0 below
/// +0 or returns its second operand on a tie, as `(a < b) ? a : b` does --
/// hence +0 first), then for each word the sign-replicating prmt of
/// the halves' high bytes (bytes of elements 0, 2, 1, 3 and 4, 6, 5, 7),
/// two prmts that sort them into even and odd elements, and the bits 3 and
/// 7 of each byte: 7 instructions for 8 codes where the signed encoding
/// takes 16.
std::array<Value, 2> signWords(OpBuilder &b, Location loc,
                               ArrayRef<Value> pairs) {
  ScalarBuilder s(b, loc);
  auto pairType = cast<VectorType>(pairs[0].getType());
  StringRef name = pairType.getElementType().isBF16()
                       ? "llvm.nvvm.fmin.bf16x2"
                       : "llvm.nvvm.fmin.f16x2";
  Value zero = arith::ConstantOp::create(
      b, loc, DenseElementsAttr::get(cast<ShapedType>(pairType),
                                     b.getZeroAttr(pairType.getElementType())));
  SmallVector<Value> signs;
  for (Value pair : pairs)
    signs.push_back(LLVM::BitcastOp::create(
        b, loc, b.getI32Type(),
        LLVM::CallIntrinsicOp::create(b, loc, pairType, b.getStringAttr(name),
                                      ValueRange{zero, pair})
            .getResult(0)));
  std::array<Value, 2> words;
  for (int64_t w = 0; w < 2; ++w) {
    Value low = permuteBytes(b, loc, signs[4 * w], signs[4 * w + 1],
                             s.i32(0xFBD9));
    Value high = permuteBytes(b, loc, signs[4 * w + 2], signs[4 * w + 3],
                              s.i32(0xFBD9));
    Value even = permuteBytes(b, loc, low, high, s.i32(0x5410));
    Value odd = permuteBytes(b, loc, low, high, s.i32(0x7632));
    words[w] = arith::OrIOp::create(
        b, loc, arith::AndIOp::create(b, loc, even, s.i32(0x08080808)),
        arith::AndIOp::create(b, loc, odd, s.i32(static_cast<int32_t>(0x80808080u))));
  }
  return words;
}

/// Two i32 words holding the low nibbles of 16 values, element j at bits
/// 4 * (j % 8) of word j / 8 (the packed byte order: even element in the
/// low nibble). Every value is an encoder's magic sum: its code in bits
/// 3..0 and bits 22..4 zero (the mantissa holds the code and nothing else),
/// so a sum of values times powers of 16 has exact nibbles below bit 23.
/// Each half word (four nibbles) is therefore a Horner chain of three
/// multiply-adds, v0 + m (v1 + m (v2 + m v3)), whose bits 15..0 are
/// exact (the other values' exponents land at bit 23 and above), and one
/// prmt joins the two halves: 6 IMADs on the FMA pipe and one PRMT per
/// word, where a funnel shift per nibble took 8 ALU instructions (the pipe
/// that bounds the RHT and dual kernels). m = 16 + 2^16 is 16 modulo 2^16
/// (the extra term only reaches bits 16 and up); with m = 16 the backend
/// turns the products into shifts and ptxas the shift-adds into LEAs, ALU
/// instructions again.
std::array<Value, 2> packNibbles(OpBuilder &b, Location loc,
                                 ArrayRef<Value> nibbles,
                                 bool multiplyAdd = true) {
  ScalarBuilder s(b, loc);
  std::array<Value, 2> words;
  if (!multiplyAdd) {
    // The session-9 form: word = (word >> 4) | (value << 28) per nibble,
    // one funnel shift each.
    for (int64_t w = 0; w < 2; ++w) {
      Value word;
      for (int64_t j = 0; j < 8; ++j) {
        Value top =
            arith::ShLIOp::create(b, loc, nibbles[8 * w + j], s.i32(28));
        word = j == 0 ? top
                      : arith::OrIOp::create(
                            b, loc,
                            arith::ShRUIOp::create(b, loc, word, s.i32(4)), top)
                            .getResult();
      }
      words[w] = word;
    }
    return words;
  }
  auto half = [&](ArrayRef<Value> four) {
    Value value = four[3];
    for (int64_t j = 2; j >= 0; --j)
      value = arith::AddIOp::create(
          b, loc, arith::MulIOp::create(b, loc, value, s.i32(16 + (1 << 16))),
          four[j]);
    return value;
  };
  for (int64_t w = 0; w < 2; ++w)
    words[w] = permuteBytes(b, loc, half(nibbles.slice(8 * w, 4)),
                            half(nibbles.slice(8 * w + 4, 4)), s.i32(0x5410));
  return words;
}

/// Two i32 words from 8 packed bytes (byte i at bits 8 * (i % 4)).
std::array<Value, 2> wordsFromBytes(OpBuilder &b, Location loc,
                                    ArrayRef<Value> bytes) {
  ScalarBuilder s(b, loc);
  std::array<Value, 2> words;
  for (int64_t w = 0; w < 2; ++w) {
    Value word;
    for (int64_t j = 0; j < 4; ++j) {
      Value wide = arith::ExtUIOp::create(b, loc, b.getI32Type(), bytes[4 * w + j]);
      if (j != 0)
        wide = arith::ShLIOp::create(b, loc, wide, s.i32(8 * j));
      word = j == 0 ? wide : arith::OrIOp::create(b, loc, word, wide).getResult();
    }
    words[w] = word;
  }
  return words;
}

/// Maximum over the 16 lanes of a half warp (xor butterfly).
Value halfWarpMax(OpBuilder &b, Location loc, Value value) {
  for (int32_t offset : {1, 2, 4, 8}) {
    Value other = gpu::ShuffleOp::create(b, loc, value, offset, /*width=*/32,
                                         gpu::ShuffleMode::XOR)
                      .getShuffleResult();
    value = arith::MaxNumFOp::create(b, loc, value, other);
  }
  return value;
}

/// One block's E4M3 scale and its 16 values multiplied by the block's
/// encode factor, ready for E2M1 rounding (lib/Numerics' quantize). The
/// GEMM epilogue's form: it has no encode table.
struct ScaledRun {
  Value scaleCode;
  SmallVector<Value> scaled;
};

ScaledRun scaleRun(OpBuilder &b, Location loc, ArrayRef<Value> values,
                   const ScalarBuilder::TensorScale &scale) {
  ScalarBuilder s(b, loc);
  ScalarBuilder::BlockScale block =
      s.blockScale(amaxOfValues(b, loc, values), scale);
  ScaledRun run{block.code, {}};
  for (Value v : values)
    run.scaled.push_back(arith::MulFOp::create(b, loc, v, block.encode));
  return run;
}

/// The 8 packed bytes (even element in the low nibble) of 16 scaled values,
/// rounded to nearest even, as two i32 words.
std::array<Value, 2> packNearestEven(OpBuilder &b, Location loc,
                                     ArrayRef<Value> scaled,
                                     const ChipInfo &chip,
                                     bool fmaForms = true) {
  if (!chip.has(Instruction::CvtE2M1x2)) {
    SmallVector<Value> nibbles;
    for (Value v : scaled)
      nibbles.push_back(encodeNearestFast(b, loc, v, fmaForms));
    return packNibbles(b, loc, nibbles, fmaForms);
  }
  SmallVector<Value> bytes;
  for (int64_t j = 0; j < 8; ++j) {
    // cvt.rn.satfinite.e2m1x2.f32 puts its first operand in the high
    // nibble.
    bytes.push_back(NVVM::ConvertF32x2ToF4x2Op::create(
        b, loc, b.getI8Type(), scaled[2 * j + 1], scaled[2 * j],
        /*relu=*/false, b.getType<Float4E2M1FNType>()));
  }
  return wordsFromBytes(b, loc, bytes);
}

/// The 8 packed bytes of 16 scaled values, rounded stochastically with the
/// Philox words of their group, as two i32 words.
std::array<Value, 2> packStochastic(OpBuilder &b, Location loc,
                                    ArrayRef<Value> scaled,
                                    std::array<Value, 4> words,
                                    const ChipInfo &chip,
                                    bool fmaForms = true) {
  if (!chip.has(Instruction::CvtRsE2M1x4)) {
    // Element j takes byte j % 4 of word j / 4.
    SmallVector<Value> nibbles;
    for (int64_t j = 0; j < 16; ++j)
      nibbles.push_back(encodeStochasticFast(b, loc, scaled[j], words[j / 4],
                                             j % 4, fmaForms));
    return packNibbles(b, loc, nibbles, fmaForms);
  }
  // cvt.rs.satfinite.e2m1x4.f32 d, {a, b, e, f}, rbits packs a into bits
  // 15:12 ... f into 3:0, so elements go in reverse; word q holds the
  // random bits of elements 4q..4q+3.
  ScalarBuilder s(b, loc);
  SmallVector<Value> halves;
  for (int64_t q = 0; q < 4; ++q) {
    Value quad = vector::FromElementsOp::create(
        b, loc, VectorType::get({4}, b.getF32Type()),
        ValueRange{scaled[4 * q + 3], scaled[4 * q + 2], scaled[4 * q + 1],
                   scaled[4 * q]});
    Value packed = NVVM::ConvertF32x4ToF4x4Op::create(
        b, loc, b.getI16Type(), quad, words[q], /*relu=*/false,
        b.getType<Float4E2M1FNType>());
    halves.push_back(arith::ExtUIOp::create(b, loc, b.getI32Type(), packed));
  }
  return {arith::OrIOp::create(
              b, loc, halves[0],
              arith::ShLIOp::create(b, loc, halves[1], s.i32(16))),
          arith::OrIOp::create(
              b, loc, halves[2],
              arith::ShLIOp::create(b, loc, halves[3], s.i32(16)))};
}

//===----------------------------------------------------------------------===//
// Block scales through the encode table
//===----------------------------------------------------------------------===//
//
// A block's encode factor min(1 / (s_b * S_dec), FLT_MAX) depends only on
// its E4M3 scale code (127 finite non-negative values) and the tensor's
// S_dec: each block of threads computes the 128 factors once, into shared
// memory, and a block scale then costs one cvt (for two blocks) and one
// shared load instead of two correctly rounded divisions.

/// The shared-memory table type (memref<128xf32>, workgroup space).
MemRefType encodeTableType(MLIRContext *ctx) {
  return MemRefType::get(
      {128}, Float32Type::get(ctx), MemRefLayoutAttrInterface(),
      gpu::AddressSpaceAttr::get(ctx, gpu::AddressSpace::Workgroup));
}

/// Fills `table` (thread t < 128: the factor of scale code t) and waits
/// for the whole block. Every thread of the block must call it.
void fillEncodeTable(OpBuilder &b, Location loc, Value table,
                     const ScalarBuilder::TensorScale &scale) {
  IndexMath m{b, loc};
  Value tid = gpu::ThreadIdOp::create(b, loc, gpu::Dimension::x);
  auto ifFill = scf::IfOp::create(b, loc, m.lt(tid, 128), false);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(ifFill.thenBlock());
    ScalarBuilder s(b, loc);
    Value code = arith::IndexCastUIOp::create(b, loc, b.getI8Type(), tid);
    Value factor = s.blockEncode(s.decodeE4M3(code), scale);
    memref::StoreOp::create(b, loc, factor, table, ValueRange{tid});
  }
  gpu::BarrierOp::create(b, loc);
}

/// The encode factor of the E4M3 scale code in the low byte of `code`
/// (an integer).
Value lookupEncode(OpBuilder &b, Location loc, Value table, Value code) {
  ScalarBuilder s(b, loc);
  Value wide = code.getType().isInteger(32)
                   ? code
                   : arith::ExtUIOp::create(b, loc, b.getI32Type(), code)
                         .getResult();
  Value index = arith::IndexCastUIOp::create(
      b, loc, b.getIndexType(),
      arith::AndIOp::create(b, loc, wide, s.i32(0xFF)));
  return memref::LoadOp::create(b, loc, table, ValueRange{index});
}

/// The E4M3 codes of two block scales (computeBlockScale) from the block
/// amaxes, as an i16 with `amax0`'s code in the low byte. One
/// cvt.rn.satfinite.e4m3x2.f32: its saturation is the spec's min(., 448)
/// (the product is never NaN: amax skips NaN and the multiplier is finite
/// and positive).
Value blockScaleCodePair(OpBuilder &b, Location loc, Value amax0, Value amax1,
                         const ScalarBuilder::TensorScale &scale,
                         const ChipInfo &chip) {
  ScalarBuilder s(b, loc);
  Value scaled0 = arith::MulFOp::create(b, loc, amax0, scale.blockMultiplier);
  Value scaled1 = arith::MulFOp::create(b, loc, amax1, scale.blockMultiplier);
  if (chip.has(Instruction::CvtE4M3x2)) {
    MLIRContext *ctx = b.getContext();
    // The first operand goes to the high byte.
    return NVVM::ConvertF32x2ToF8x2Op::create(
        b, loc, b.getI16Type(), scaled1, scaled0,
        NVVM::FPRoundingModeAttr::get(ctx, NVVM::FPRoundingMode::RN),
        NVVM::SaturationModeAttr::get(ctx, NVVM::SaturationMode::SATFINITE),
        b.getBoolAttr(false), TypeAttr::get(b.getType<Float8E4M3FNType>()));
  }
  auto code = [&](Value scaled) {
    return arith::ExtUIOp::create(
        b, loc, b.getI16Type(),
        s.roundToE4M3(s.stdMin(scaled, s.f32(448.0f))).first);
  };
  return arith::OrIOp::create(
      b, loc, code(scaled0),
      arith::ShLIOp::create(
          b, loc, code(scaled1),
          arith::ConstantOp::create(b, loc, b.getI16IntegerAttr(8))));
}

/// The two code words of a prepared run quantized with encode factor
/// `encode`: nearest even, or stochastic with the Philox words of its
/// group.
std::array<Value, 2> quantizeValues(OpBuilder &b, Location loc,
                                    ArrayRef<Value> values, Value encode,
                                    std::optional<std::array<Value, 4>> random,
                                    const ChipInfo &chip,
                                    const ArithmeticForm &form,
                                    ArrayRef<Value> pairs) {
  SmallVector<Value> scaled;
  for (Value v : values)
    scaled.push_back(arith::MulFOp::create(b, loc, v, encode));
  bool software = random ? !chip.has(Instruction::CvtRsE2M1x4)
                         : !chip.has(Instruction::CvtE2M1x2);
  if (software && form.signWords && !pairs.empty()) {
    // The sign words first: the pairs die here instead of staying live
    // through the 16 encodings.
    std::array<Value, 2> signs = signWords(b, loc, pairs);
    SmallVector<Value> nibbles;
    for (int64_t j = 0; j < 16; ++j)
      nibbles.push_back(random ? encodeStochasticMagnitude(
                                     b, loc, scaled[j], (*random)[j / 4],
                                     j % 4, form.fmaForms)
                               : encodeNearestMagnitude(b, loc, scaled[j],
                                                        form.fmaForms));
    std::array<Value, 2> magnitudes =
        packNibbles(b, loc, nibbles, form.fmaForms);
    return {arith::OrIOp::create(b, loc, magnitudes[0], signs[0]),
            arith::OrIOp::create(b, loc, magnitudes[1], signs[1])};
  }
  return random ? packStochastic(b, loc, scaled, *random, chip, form.fmaForms)
                : packNearestEven(b, loc, scaled, chip, form.fmaForms);
}

//===----------------------------------------------------------------------===//
// Persistent schedule
//===----------------------------------------------------------------------===//

/// Blocks of 256 threads one multiprocessor runs at once in the quantize
/// kernels (nvvm.minctasm): 4 (at most 64 registers a thread, 32 warps,
/// each with its next loads in flight); 3 (80 registers) for stochastic
/// rounding, whose Philox key schedule (20 words, hoisted out of the loop)
/// would spill at 64, and for the RHT (its 16 sums and their BF16 pairs).
int64_t blocksPerMultiprocessor(bool heavy) { return heavy ? 3 : 4; }

/// Multiprocessors of the chip's largest part, to size persistent grids:
/// H100 SXM / H200 132, B200 148, RTX 5090 170. The kernels are correct
/// for any count; the grid only balances best on this one.
int64_t multiprocessors(const ChipInfo &chip) {
  switch (chip.smVersion) {
  case 90:
    return 132;
  case 120:
    return 170;
  default:
    return 148;
  }
}

/// `groups` groups of 256 work units, walked by `blocks` persistent blocks:
/// block b takes groups b, b + blocks, ... (counted from the last group
/// when `reverse`, so that a pass that follows an amax pass over the same
/// tensor starts on what the amax pass left in L2).
struct PersistentSchedule {
  int64_t groups;
  int64_t blocks;
  bool reverse;
};

PersistentSchedule persistentSchedule(int64_t units, bool reverse,
                                      int64_t blocksPerMultiprocessor,
                                      const ChipInfo &chip) {
  int64_t groups = std::max<int64_t>(1, llvm::divideCeil(units, kThreadsPerBlock));
  return {groups,
          std::min(groups, multiprocessors(chip) * blocksPerMultiprocessor),
          reverse};
}

/// `measured` blocks a multiprocessor, or the forced count.
int64_t chosenBlocks(const QuantizeSchedule &forced, int64_t measured) {
  return forced.blocksPerMultiprocessor ? forced.blocksPerMultiprocessor
                                        : measured;
}

/// The arithmetic of a kernel: the forced forms, else the measured
/// defaults -- the subnormal uniform everywhere, wide Philox products in
/// the 1x16 kernels (`wideByDefault`), split ones in the tile and dual
/// kernels, where the wide products' register pairs spill (dual dY: 136
/// bytes at 80 registers, ptxas sm_90a); the FMA-pipe forms everywhere but
/// in the 16x16 kernels (`fmaByDefault`).
ArithmeticForm chosenArithmetic(const QuantizeSchedule &forced,
                                bool wideByDefault, bool fmaByDefault = true) {
  ArithmeticForm form;
  form.fmaForms = fmaByDefault;
  form.wideMultiply = forced.philoxWide == QuantizeSchedule::kDefault
                          ? wideByDefault
                          : forced.philoxWide == 1;
  form.signWords = !forced.legacySigns;
  if (forced.fmaForms != QuantizeSchedule::kDefault)
    form.fmaForms = forced.fmaForms == 1;
  return form;
}

/// The kernel name suffix of the forced parts that change a kernel with
/// (`stochastic`) or without stochastic rounding.
std::string forcedSuffix(const QuantizeSchedule &forced, bool stochastic) {
  std::string suffix;
  if (stochastic && forced.philoxWide != QuantizeSchedule::kDefault)
    suffix += forced.philoxWide ? "_mulwide" : "_mulsplit";
  if (forced.legacySigns)
    suffix += "_signlegacy";
  if (forced.fmaForms != QuantizeSchedule::kDefault)
    suffix += forced.fmaForms ? "_fmaforms" : "_aluforms";
  if (forced.blocksPerMultiprocessor)
    suffix += "_b" + std::to_string(forced.blocksPerMultiprocessor);
  return suffix;
}

/// Loads what the group `group` needs into registers.
using GroupLoader =
    function_ref<SmallVector<Value>(OpBuilder &, Location, Value group)>;
/// Computes group `group` from its `loaded` values; returns the new values
/// of the `carried` ones.
using GroupBody = function_ref<SmallVector<Value>(
    OpBuilder &, Location, Value group, ValueRange loaded, ValueRange carried)>;

/// The loop of a persistent kernel: each iteration first issues the loads
/// of the block's next group (when there is one), then computes the
/// current group, so that the loads are in flight during the computation.
/// Returns the final `carried` values.
SmallVector<Value> emitPrefetchingLoop(OpBuilder &b, Location loc,
                                       const PersistentSchedule &schedule,
                                       ValueRange carried, GroupLoader load,
                                       GroupBody body) {
  IndexMath m{b, loc};
  auto walked = [&](OpBuilder &nb, Location nl, Value group) -> Value {
    if (!schedule.reverse)
      return group;
    return arith::SubIOp::create(nb, nl, IndexMath{nb, nl}.c(schedule.groups - 1),
                                 group);
  };
  Value block = gpu::BlockIdOp::create(b, loc, gpu::Dimension::x);
  SmallVector<Value> init = load(b, loc, walked(b, loc, block));
  size_t loadedCount = init.size();
  llvm::append_range(init, carried);
  auto loop = scf::ForOp::create(
      b, loc, block, m.c(schedule.groups), m.c(schedule.blocks), init,
      [&](OpBuilder &nb, Location nl, Value group, ValueRange iterArgs) {
        IndexMath nm{nb, nl};
        ValueRange loaded = iterArgs.take_front(loadedCount);
        Value next = nm.add(group, nm.c(schedule.blocks));
        auto prefetch = scf::IfOp::create(
            nb, nl, nm.lt(next, schedule.groups),
            [&](OpBuilder &tb, Location tl) {
              scf::YieldOp::create(tb, tl, load(tb, tl, walked(tb, tl, next)));
            },
            [&](OpBuilder &eb, Location el) {
              scf::YieldOp::create(eb, el, loaded);
            });
        SmallVector<Value> results(prefetch.getResults());
        llvm::append_range(results, body(nb, nl, walked(nb, nl, group), loaded,
                                          iterArgs.drop_front(loadedCount)));
        scf::YieldOp::create(nb, nl, results);
      });
  return SmallVector<Value>(loop.getResults().drop_front(loadedCount));
}

/// A run index clamped to a valid run (0) when `valid` is false: threads
/// past the end compute on real data and skip their stores.
Value clampRun(OpBuilder &b, Location loc, Value valid, Value run,
               Value fallback) {
  return arith::SelectOp::create(b, loc, valid, run, fallback);
}

/// The two runs of work unit `unit` of a 1x16 kernel: 2 * unit and
/// 2 * unit + 1, each with its validity, clamped to valid runs.
struct RunPair {
  Value first, second;           ///< clamped run indices
  Value firstValid, secondValid; ///< i1
};

RunPair locateRunPair(OpBuilder &b, Location loc, Value group,
                      int64_t runs) {
  IndexMath m{b, loc};
  Value unit = m.add(m.mul(group, kThreadsPerBlock),
                     gpu::ThreadIdOp::create(b, loc, gpu::Dimension::x));
  Value first = m.mul(unit, 2);
  Value second = m.add(first, m.c(1));
  Value firstValid = m.lt(first, runs), secondValid = m.lt(second, runs);
  Value firstClamped = clampRun(b, loc, firstValid, first, m.c(0));
  return {firstClamped,
          clampRun(b, loc, secondValid, second, firstClamped), firstValid,
          secondValid};
}

/// The run of work unit `unit` of a 1x16 kernel with one run a unit
/// (quantize-schedule runs1): run `unit`, clamped; `second` repeats it and
/// `secondValid` is false.
RunPair locateSingleRun(OpBuilder &b, Location loc, Value group,
                        int64_t runs) {
  IndexMath m{b, loc};
  Value run = m.add(m.mul(group, kThreadsPerBlock),
                    gpu::ThreadIdOp::create(b, loc, gpu::Dimension::x));
  Value valid = m.lt(run, runs);
  Value clamped = clampRun(b, loc, valid, run, m.c(0));
  return {clamped, clamped, valid,
          arith::ConstantOp::create(b, loc, b.getBoolAttr(false))};
}

//===----------------------------------------------------------------------===//
// Kernels
//===----------------------------------------------------------------------===//

/// Elements of a 16-byte load of `type` (1 for element types that do not
/// divide 16 bytes).
int64_t vectorWidth(Type type) {
  return 16 / (type.getIntOrFloatBitWidth() / 8);
}

/// Grid-stride max |x| over `x`, finished by warp shuffles and one atomic
/// max per warp. Each thread keeps kAmaxLoadsPerThread 16-byte loads in
/// flight per iteration; the grid is kAmaxBlocksPerMultiprocessor blocks a
/// multiprocessor (48 warps), one wave where the kernel needs at most 40
/// registers; 16-bit types are reduced in pairs (max.xorsign.abs, half an
/// instruction per element).
constexpr int64_t kAmaxLoadsPerThread = 4;
constexpr int64_t kAmaxBlocksPerMultiprocessor = 6;

gpu::GPUFuncOp buildAmaxKernel(ModuleOp module, MemRefType input,
                               const ChipInfo &chip, int64_t &threads) {
  int64_t count = input.getNumElements();
  // 16-byte vector loads when the size allows (every quantizable tensor:
  // its last dimension is a multiple of 16), elements one by one otherwise.
  Type elementType = input.getElementType();
  int64_t width = vectorWidth(elementType);
  if (count % width != 0)
    width = 1;
  bool paired = width > 1 && isPairedType(elementType);
  int64_t chunks = count / width;
  const int64_t unroll = kAmaxLoadsPerThread;
  // About `unroll` chunks per thread, at most one full wave of the chip
  // (every thread then runs the same number of groups).
  threads = std::min<int64_t>(
      llvm::alignTo(llvm::divideCeil(chunks, unroll), kThreadsPerBlock),
      multiprocessors(chip) * kAmaxBlocksPerMultiprocessor * kThreadsPerBlock);
  std::string name = "nvfp4_amax_" + std::to_string(count) + "x" +
                     typeName(elementType);
  Type amaxType = MemRefType::get({1}, IntegerType::get(module.getContext(), 32));
  return getOrCreateKernel(
      module, name, {input, amaxType}, kThreadsPerBlock,
      [&](OpBuilder &b, Location loc, ValueRange args) {
        ScalarBuilder s(b, loc);
        IndexMath m{b, loc};
        Value tid = globalThreadIndex(b, loc);
        // The grid size as the kernel sees it: loop bounds that LLVM cannot
        // fold keep it from unrolling the (few) groups and hoisting all
        // their loads, which spills at this register budget.
        Value totalThreads = arith::MulIOp::create(
            b, loc, gpu::GridDimOp::create(b, loc, gpu::Dimension::x),
            m.c(kThreadsPerBlock));
        Value groupChunks = arith::MulIOp::create(b, loc, totalThreads,
                                                  m.c(unroll));
        Value fullGroups =
            arith::DivUIOp::create(b, loc, m.c(chunks), groupChunks);
        auto loadChunk = [&](OpBuilder &nb, Location nl, Value chunk) -> Value {
          if (width == 1)
            return memref::LoadOp::create(nb, nl, args[0], ValueRange{chunk});
          IndexMath nm{nb, nl};
          return alignedLoad(nb, nl, args[0], nm.mul(chunk, width), width, 16);
        };
        // The running maximum: a pair of |x| maxima for 16-bit types, an
        // f32 otherwise. Both start at 0 and never become NaN.
        Type pairType = VectorType::get({2}, elementType);
        Value zero =
            paired ? arith::ConstantOp::create(
                         b, loc, DenseElementsAttr::get(
                                     cast<ShapedType>(pairType),
                                     b.getZeroAttr(elementType)))
                         .getResult()
                   : s.f32(0.0f);
        auto accumulate = [&](OpBuilder &nb, Location nl, Value acc,
                              Value loaded) -> Value {
          if (paired) {
            for (Value pair : pairsOf(nb, nl, loaded))
              acc = maxMagnitudePair(nb, nl, acc, pair);
            return acc;
          }
          ScalarBuilder ns(nb, nl);
          SmallVector<Value> values;
          if (width == 1) {
            values.push_back(loaded);
          } else {
            for (int64_t j = 0; j < width; ++j)
              values.push_back(vector::ExtractOp::create(
                  nb, nl, loaded, ArrayRef<int64_t>{j}));
          }
          for (Value x : values)
            acc = arith::MaxNumFOp::create(
                nb, nl, acc, math::AbsFOp::create(nb, nl, ns.toF32(x)));
          return acc;
        };
        // Full groups: `unroll` loads issued, then reduced.
        auto groups = scf::ForOp::create(
            b, loc, m.c(0), fullGroups, m.c(1), ValueRange{zero},
            [&](OpBuilder &nb, Location nl, Value group, ValueRange acc) {
              IndexMath nm{nb, nl};
              Value first = nm.add(
                  arith::MulIOp::create(nb, nl, group, groupChunks), tid);
              SmallVector<Value> loaded;
              for (int64_t k = 0; k < unroll; ++k)
                loaded.push_back(loadChunk(
                    nb, nl,
                    nm.add(first, arith::MulIOp::create(nb, nl, totalThreads,
                                                        nm.c(k)))));
              Value max = acc[0];
              for (Value v : loaded)
                max = accumulate(nb, nl, max, v);
              scf::YieldOp::create(nb, nl, max);
            });
        // The rest, one chunk at a time.
        auto tail = scf::ForOp::create(
            b, loc,
            m.add(tid, arith::MulIOp::create(b, loc, fullGroups, groupChunks)),
            m.c(chunks), totalThreads, ValueRange{groups.getResult(0)},
            [&](OpBuilder &nb, Location nl, Value chunk, ValueRange acc) {
              scf::YieldOp::create(
                  nb, nl, accumulate(nb, nl, acc[0], loadChunk(nb, nl, chunk)));
            });
        Value max = tail.getResult(0);
        if (paired)
          max = amaxOfPairs(b, loc, {max});
        warpMaxToAmax(b, loc, max, args[1]);
      });
}

/// Post-RHT amax (NUMERICS.md section 4: the amax of the BF16 RHT output),
/// without writing the RHT output: each run's 16 outputs are computed in
/// registers exactly as the hadamard kernel computes them. Persistent, two
/// runs per work unit, forward (the quantization that follows walks back).
gpu::GPUFuncOp buildHadamardAmaxKernel(ModuleOp module, MemRefType input,
                                       uint32_t signMask, const ChipInfo &chip,
                                       PersistentSchedule &schedule) {
  int64_t count = input.getNumElements();
  int64_t runs = count / 16;
  schedule = persistentSchedule(llvm::divideCeil(runs, 2), /*reverse=*/false,
                                blocksPerMultiprocessor(false), chip);
  PersistentSchedule local = schedule;
  Type elementType = input.getElementType();
  std::string name = "nvfp4_rht_amax_" + std::to_string(count) + "x" +
                     typeName(elementType) + "_mask" + std::to_string(signMask);
  Type amaxType = MemRefType::get({1}, IntegerType::get(module.getContext(), 32));
  KernelOptions options;
  options.minBlocksPerMultiprocessor = blocksPerMultiprocessor(false);
  return getOrCreateKernel(
      module, name, {input, amaxType}, options,
      [&](OpBuilder &b, Location loc, ValueRange args) {
        ScalarBuilder s(b, loc);
        SmallVector<Value> result = emitPrefetchingLoop(
            b, loc, local, ValueRange{s.f32(0.0f)},
            [&](OpBuilder &nb, Location nl, Value group) {
              IndexMath nm{nb, nl};
              RunPair pair = locateRunPair(nb, nl, group, runs);
              return SmallVector<Value>{
                  loadSixteenRaw(nb, nl, args[0], nm.mul(pair.first, 16)),
                  loadSixteenRaw(nb, nl, args[0], nm.mul(pair.second, 16))};
            },
            [&](OpBuilder &nb, Location nl, Value, ValueRange loaded,
                ValueRange carried) {
              // Clamped runs repeat a valid run: harmless for a max.
              Value max = carried[0];
              for (Value vector : loaded)
                max = arith::MaxNumFOp::create(
                    nb, nl, max, prepareRun(nb, nl, vector, signMask).amax);
              return SmallVector<Value>{max};
            });
        warpMaxToAmax(b, loc, result[0], args[1]);
      });
}

/// The argument layout of a quantize kernel: input, amax (device buffer of
/// FP32 bits, or an f32 argument that the kernel copies to `amaxOut`),
/// packed codes, scales, the transposed copy's codes, scales and amax
/// buffer (16x16 only; the kernel copies the amax there: each result of a
/// host function has a buffer of its own), and the seed of stochastic
/// rounding. -1: absent.
struct QuantizeSignature {
  SmallVector<Type> types;
  int64_t input = 0, amax = 1, codes = 2, scales = 3;
  int64_t transposedCodes = -1, transposedScales = -1, transposedAmax = -1,
          amaxOut = -1, seed = -1;
};

QuantizeSignature quantizeSignature(BlockScaledTensorType type,
                                    Type elementType, bool stochastic,
                                    bool amaxArgument, bool transposedCopy) {
  MLIRContext *ctx = type.getContext();
  int64_t count = product(type.getShape());
  auto i8 = IntegerType::get(ctx, 8);
  auto amaxBuffer = MemRefType::get({1}, IntegerType::get(ctx, 32));
  QuantizeSignature sig;
  sig.types = {MemRefType::get({count}, elementType),
               amaxArgument ? Type(Float32Type::get(ctx)) : Type(amaxBuffer),
               MemRefType::get({count / 2}, i8),
               MemRefType::get({product(type.getScalesType().getShape())}, i8)};
  auto add = [&](Type t) {
    sig.types.push_back(t);
    return static_cast<int64_t>(sig.types.size()) - 1;
  };
  if (transposedCopy) {
    sig.transposedCodes = add(MemRefType::get({count / 2}, i8));
    sig.transposedScales = add(MemRefType::get({count / 256}, i8));
    sig.transposedAmax = add(amaxBuffer);
  }
  if (amaxArgument)
    sig.amaxOut = add(amaxBuffer);
  if (stochastic)
    sig.seed = add(IntegerType::get(ctx, 64));
  return sig;
}

/// The kernel name suffix of the amax source and rounding.
std::string quantizeNameSuffix(bool stochastic, BlockScaledTensorType type,
                               bool amaxArgument) {
  return std::string(stochastic ? "_sr" : "_rn") +
         (type.getLayout() == ScaleLayout::Linear ? "" : "_swizzled") +
         (amaxArgument ? "_amaxarg" : "");
}

/// The prologue every quantize kernel shares: the tensor amax `amax` (an
/// f32 argument, or FP32 bits in a device buffer), copied by one thread to
/// each of `amaxOuts` (the result amax buffers the kernel fills), its
/// tensor scale, and the encode table in shared memory.
ScalarBuilder::TensorScale quantizePrologue(OpBuilder &b, Location loc,
                                            Value amax,
                                            ArrayRef<Value> amaxOuts,
                                            Value table) {
  ScalarBuilder s(b, loc);
  IndexMath m{b, loc};
  if (isa<MemRefType>(amax.getType()))
    amax = loadAmax(b, loc, amax);
  if (!amaxOuts.empty()) {
    Value first = arith::AndIOp::create(
        b, loc, m.eq(gpu::BlockIdOp::create(b, loc, gpu::Dimension::x), 0),
        m.eq(gpu::ThreadIdOp::create(b, loc, gpu::Dimension::x), 0));
    auto ifFirst = scf::IfOp::create(b, loc, first, false);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(ifFirst.thenBlock());
    Value bits = arith::BitcastOp::create(b, loc, b.getI32Type(), amax);
    for (Value out : amaxOuts)
      memref::StoreOp::create(b, loc, bits, out, ValueRange{m.c(0)});
  }
  ScalarBuilder::TensorScale scale = s.tensorScale(amax);
  fillEncodeTable(b, loc, table, scale);
  return scale;
}

/// quantizePrologue for the single quantization of `sig`.
ScalarBuilder::TensorScale quantizePrologue(OpBuilder &b, Location loc,
                                            ValueRange args,
                                            const QuantizeSignature &sig,
                                            Value table) {
  SmallVector<Value> outs;
  for (int64_t index : {sig.amaxOut, sig.transposedAmax})
    if (index >= 0)
      outs.push_back(args[index]);
  return quantizePrologue(b, loc, args[sig.amax], outs, table);
}

/// The Philox words of the run starting at element 16 * `run` (an index)
/// with the i64 `seed`; none without a seed (round to nearest).
std::optional<std::array<Value, 4>> runRandomBits(OpBuilder &b, Location loc,
                                                  Value seed, Value run,
                                                  const ArithmeticForm &form) {
  if (!seed)
    return std::nullopt;
  ScalarBuilder s(b, loc);
  // mul.lo.u32 and mul.hi.u32 of the same operands (two instructions: the
  // backend puts the constant in a register for one and an immediate for
  // the other, so ptxas does not join them).
  auto split = [&](Value lhs, Value rhs) -> std::pair<Value, Value> {
    Value high = LLVM::CallIntrinsicOp::create(
                     b, loc, b.getI32Type(),
                     b.getStringAttr("llvm.nvvm.mulhi.ui"),
                     ValueRange{lhs, rhs})
                     .getResult(0);
    return {high, arith::MulIOp::create(b, loc, lhs, rhs)};
  };
  // One mul.wide.u32 (IMAD.WIDE.U32: both halves in one instruction):
  // the 64-bit product of the zero-extended words, split by truncations
  // that are register-pair selections.
  auto wide = [&](Value lhs, Value rhs) -> std::pair<Value, Value> {
    Type i64 = b.getI64Type(), i32 = b.getI32Type();
    Value product = arith::MulIOp::create(
        b, loc, arith::ExtUIOp::create(b, loc, i64, lhs),
        arith::ExtUIOp::create(b, loc, i64, rhs));
    Value high = arith::TruncIOp::create(
        b, loc, i32,
        arith::ShRUIOp::create(b, loc, product,
                               arith::ConstantOp::create(
                                   b, loc, b.getI64IntegerAttr(32))));
    return {high, arith::TruncIOp::create(b, loc, i32, product)};
  };
  Value group = arith::IndexCastUIOp::create(b, loc, b.getI64Type(), run);
  if (form.wideMultiply)
    return s.philoxGroup(seed, group, wide);
  return s.philoxGroup(seed, group, split);
}

/// runRandomBits with the seed argument of `sig`, if any.
std::optional<std::array<Value, 4>> runRandomBits(OpBuilder &b, Location loc,
                                                  ValueRange args,
                                                  const QuantizeSignature &sig,
                                                  Value run,
                                                  const ArithmeticForm &form) {
  return runRandomBits(b, loc, sig.seed >= 0 ? args[sig.seed] : Value(), run,
                       form);
}

/// 1x16 quantization (optionally of the RHT of the input), persistent: a
/// work unit is two adjacent runs (32 elements: four 16-byte loads, one
/// 16-byte store of codes, one 2-byte store of linear scales); blocks walk
/// the tensor from its end.
gpu::GPUFuncOp buildRowQuantizeKernel(ModuleOp module,
                                      BlockScaledTensorType type,
                                      Type elementType, bool stochastic,
                                      std::optional<uint32_t> rhtMask,
                                      bool amaxArgument,
                                      const QuantizeSchedule &forced,
                                      const ChipInfo &chip,
                                      PersistentSchedule &schedule) {
  MLIRContext *ctx = module.getContext();
  int64_t count = product(type.getShape());
  int64_t colBlocks = type.getCols() / 16;
  int64_t runs = count / 16;
  bool heavy = stochastic || rhtMask.has_value();
  int64_t blocks = chosenBlocks(forced, blocksPerMultiprocessor(heavy));
  ArithmeticForm form = chosenArithmetic(forced, /*wideByDefault=*/true);
  int64_t runsPerUnit = forced.runsPerUnit ? forced.runsPerUnit : 2;
  auto locate = [&](OpBuilder &lb, Location ll, Value group) {
    return runsPerUnit == 1 ? locateSingleRun(lb, ll, group, runs)
                            : locateRunPair(lb, ll, group, runs);
  };
  schedule = persistentSchedule(llvm::divideCeil(runs, runsPerUnit),
                                /*reverse=*/true, blocks, chip);
  PersistentSchedule local = schedule;
  QuantizeSignature sig = quantizeSignature(type, elementType, stochastic,
                                            amaxArgument,
                                            /*transposedCopy=*/false);
  bool linear = type.getLayout() == ScaleLayout::Linear;
  std::string name =
      std::string(rhtMask ? "nvfp4_rht_quantize_" : "nvfp4_quantize_") +
      shapeName(type.getShape()) + "x" + typeName(elementType) + "_1x16" +
      quantizeNameSuffix(stochastic, type, amaxArgument) +
      (rhtMask ? "_mask" + std::to_string(*rhtMask) : "") +
      forcedSuffix(forced, stochastic) +
      (forced.runsPerUnit ? "_runs" + std::to_string(forced.runsPerUnit) : "");
  KernelOptions options;
  options.workgroupBuffers = {encodeTableType(ctx)};
  options.minBlocksPerMultiprocessor = blocks;
  return getOrCreateKernel(
      module, name, sig.types, options,
      [&](OpBuilder &b, Location loc, ValueRange args) {
        Value table = args.back();
        ScalarBuilder::TensorScale scale =
            quantizePrologue(b, loc, args, sig, table);
        Value codeWords = codesAsWords(b, loc, args[sig.codes]);
        // Linear scales of a pair are adjacent: one 2-byte store.
        int64_t scaleCount =
            cast<MemRefType>(args[sig.scales].getType()).getNumElements();
        Value scalePairs =
            linear ? memref::ViewOp::create(
                         b, loc,
                         MemRefType::get({scaleCount / 2}, b.getI16Type()),
                         args[sig.scales], indexConstant(b, loc, 0),
                         ValueRange())
                         .getResult()
                   : Value();
        emitPrefetchingLoop(
            b, loc, local, ValueRange(),
            [&](OpBuilder &nb, Location nl, Value group) {
              IndexMath nm{nb, nl};
              RunPair pair = locate(nb, nl, group);
              SmallVector<Value> loads = {loadSixteenRaw(
                  nb, nl, args[sig.input], nm.mul(pair.first, 16))};
              if (runsPerUnit == 2)
                loads.push_back(loadSixteenRaw(nb, nl, args[sig.input],
                                               nm.mul(pair.second, 16)));
              return loads;
            },
            [&](OpBuilder &nb, Location nl, Value group, ValueRange loaded,
                ValueRange) {
              RunPair pair = locate(nb, nl, group);
              std::array<Value, 2> run = {pair.first, pair.second};
              // One run after the other (each its own cvt for the scale):
              // only one run's 16 values are live at a time.
              std::array<std::array<Value, 2>, 2> words;
              std::array<Value, 2> scaleCodes;
              for (int64_t k = 0; k < runsPerUnit; ++k) {
                PreparedRun prepared =
                    prepareRun(nb, nl, loaded[k], rhtMask, form.fmaForms);
                scaleCodes[k] = arith::ExtUIOp::create(
                    nb, nl, nb.getI32Type(),
                    blockScaleCodePair(nb, nl, prepared.amax, prepared.amax,
                                       scale, chip));
                words[k] = quantizeValues(
                    nb, nl, prepared.values,
                    lookupEncode(nb, nl, table, scaleCodes[k]),
                    runRandomBits(nb, nl, args, sig, run[k], form), chip,
                    form, prepared.pairs);
              }
              auto storeScale = [&](OpBuilder &sb, Location sl, int64_t k,
                                    Value byte) {
                IndexMath sm{sb, sl};
                Value offset = scaleOffset(sm, type, sm.div(run[k], colBlocks),
                                           sm.rem(run[k], colBlocks));
                memref::StoreOp::create(sb, sl, byte, args[sig.scales],
                                        ValueRange{offset});
              };
              if (runsPerUnit == 1) {
                // One 8-byte code store and one scale byte.
                auto ifValid =
                    scf::IfOp::create(nb, nl, pair.firstValid, false);
                OpBuilder::InsertionGuard guard(nb);
                nb.setInsertionPointToStart(ifValid.thenBlock());
                IndexMath vm{nb, nl};
                Value half = vector::FromElementsOp::create(
                    nb, nl, VectorType::get({2}, nb.getI32Type()),
                    ValueRange{words[0][0], words[0][1]});
                alignedStore(nb, nl, half, codeWords, vm.mul(run[0], 2), 8);
                storeScale(nb, nl, 0,
                           arith::TruncIOp::create(nb, nl, nb.getI8Type(),
                                                   scaleCodes[0]));
                return SmallVector<Value>();
              }
              // The two scale bytes, first run in the low byte.
              Value codes = arith::TruncIOp::create(
                  nb, nl, nb.getI16Type(),
                  arith::OrIOp::create(
                      nb, nl,
                      arith::AndIOp::create(nb, nl, scaleCodes[0],
                                            ScalarBuilder(nb, nl).i32(0xFF)),
                      arith::ShLIOp::create(nb, nl, scaleCodes[1],
                                            ScalarBuilder(nb, nl).i32(8))));
              auto scaleByte = [&](OpBuilder &sb, Location sl, int64_t k) -> Value {
                Value byte = arith::TruncIOp::create(sb, sl, sb.getI8Type(),
                                                     codes);
                if (k == 0)
                  return byte;
                return arith::TruncIOp::create(
                    sb, sl, sb.getI8Type(),
                    arith::ShRUIOp::create(
                        sb, sl, codes,
                        arith::ConstantOp::create(sb, sl,
                                                  sb.getI16IntegerAttr(8))));
              };
              // Both runs valid (all but possibly the last unit): one
              // 16-byte code store; else only the first run, if valid.
              scf::IfOp::create(
                  nb, nl, pair.secondValid,
                  [&](OpBuilder &tb, Location tl) {
                    IndexMath tm{tb, tl};
                    Value all = vector::FromElementsOp::create(
                        tb, tl, VectorType::get({4}, tb.getI32Type()),
                        ValueRange{words[0][0], words[0][1], words[1][0],
                                   words[1][1]});
                    alignedStore(tb, tl, all, codeWords, tm.mul(run[0], 2), 16);
                    if (linear) {
                      memref::StoreOp::create(tb, tl, codes, scalePairs,
                                              ValueRange{tm.div(run[0], 2)});
                    } else {
                      storeScale(tb, tl, 0, scaleByte(tb, tl, 0));
                      storeScale(tb, tl, 1, scaleByte(tb, tl, 1));
                    }
                    scf::YieldOp::create(tb, tl);
                  },
                  [&](OpBuilder &eb, Location el) {
                    auto ifFirst =
                        scf::IfOp::create(eb, el, pair.firstValid, false);
                    {
                      OpBuilder::InsertionGuard guard(eb);
                      eb.setInsertionPointToStart(ifFirst.thenBlock());
                      IndexMath em{eb, el};
                      Value half = vector::FromElementsOp::create(
                          eb, el, VectorType::get({2}, eb.getI32Type()),
                          ValueRange{words[0][0], words[0][1]});
                      alignedStore(eb, el, half, codeWords, em.mul(run[0], 2),
                                   8);
                      storeScale(eb, el, 0, scaleByte(eb, el, 0));
                    }
                    scf::YieldOp::create(eb, el);
                  });
              return SmallVector<Value>();
            });
      });
}

//===----------------------------------------------------------------------===//
// Coalesced code stores through shared memory
//===----------------------------------------------------------------------===//
//
// The 16x16 and dual kernels compute where lane i of a half warp holds row
// i of a tile and, transposed, its column i: a direct store of the codes
// writes 8 bytes into each of 16 rows 4 KB apart per instruction (a quarter
// of a sector each, four store instructions per sector), which on the H200
// kept those kernels at 0.23-0.28x the copy bandwidth while their
// instruction count alone allowed about 0.9x. A group of either kernel is a
// 64 x 128-element region (4 x 8 tiles), so the lanes put their 8-byte code
// pieces into a shared stage instead -- rows [64][8 pieces], columns [128
// columns][4 pieces] (a piece: 16 codes of one tile row or column) -- and,
// after a barrier, every thread copies pieces out with consecutive threads
// on consecutive addresses: a warp writes 4 rows of 64 bytes or 8 columns of
// 32 bytes, whole sectors. The dual kernel's 1x16 scales ([64][8] and
// [128][4] bytes) take the same way. Pieces are XOR-swizzled so that the 16
// lanes of a half warp, which write one piece of 16 consecutive rows or
// columns, hit 32 distinct banks (rows: piece ^ (row / 2 % 8), row parity
// picking the half of the banks; columns: piece ^ (column / 4 % 4)); the
// scales need none (consecutive rows are 8 or 4 bytes apart).

constexpr int64_t kStageRows = 64, kStageRowPieces = 8;
constexpr int64_t kStageColumns = 128, kStageColumnPieces = 4;
/// Byte offsets of the four parts of the stage.
constexpr int64_t kStageRowCodes = 0;
constexpr int64_t kStageColumnCodes = kStageRowCodes + kStageRows * kStageRowPieces * 8;
constexpr int64_t kStageRowScales =
    kStageColumnCodes + kStageColumns * kStageColumnPieces * 8;
constexpr int64_t kStageColumnScales =
    kStageRowScales + kStageRows * kStageRowPieces;
constexpr int64_t kStageBytes =
    kStageColumnScales + kStageColumns * kStageColumnPieces;

/// The stage (memref<kStageBytes x i8>, workgroup space).
MemRefType regionStageType(MLIRContext *ctx) {
  return MemRefType::get(
      {kStageBytes}, IntegerType::get(ctx, 8), MemRefLayoutAttrInterface(),
      gpu::AddressSpaceAttr::get(ctx, gpu::AddressSpace::Workgroup));
}

/// The stage of a kernel, as bytes and as i32 words.
struct RegionStage {
  Value bytes, words;
};

RegionStage regionStage(OpBuilder &b, Location loc, Value bytes) {
  MLIRContext *ctx = b.getContext();
  auto wordsType = MemRefType::get(
      {kStageBytes / 4}, b.getI32Type(), MemRefLayoutAttrInterface(),
      gpu::AddressSpaceAttr::get(ctx, gpu::AddressSpace::Workgroup));
  Value words = memref::ViewOp::create(b, loc, wordsType, bytes,
                                       indexConstant(b, loc, 0), ValueRange());
  return {bytes, words};
}

/// Word offset in the stage of code piece `piece` of staged row (or column,
/// with `columns`) `line`.
Value stagedPieceWord(IndexMath &m, bool columns, Value line, Value piece) {
  OpBuilder &b = m.b;
  auto xorI = [&](Value x, Value y) -> Value {
    return arith::XOrIOp::create(b, m.loc, x, y);
  };
  if (!columns) {
    Value physical = xorI(piece, m.rem(m.div(line, 2), 8));
    return m.add(m.mul(line, 2 * kStageRowPieces), m.mul(physical, 2));
  }
  Value physical = xorI(piece, m.rem(m.div(line, 4), 4));
  return m.add(m.c(kStageColumnCodes / 4),
               m.add(m.mul(line, 2 * kStageColumnPieces), m.mul(physical, 2)));
}

/// Byte offset in the stage of the scale of piece `piece` of `line`.
Value stagedScaleByte(IndexMath &m, bool columns, Value line, Value piece) {
  return columns ? m.add(m.c(kStageColumnScales),
                         m.add(m.mul(line, kStageColumnPieces), piece))
                 : m.add(m.c(kStageRowScales),
                         m.add(m.mul(line, kStageRowPieces), piece));
}

/// Puts the code piece `words` (8 bytes) of `line` into the stage.
void stageCodes(OpBuilder &b, Location loc, const RegionStage &stage,
                bool columns, Value line, Value piece,
                std::array<Value, 2> words) {
  IndexMath m{b, loc};
  Value pair = vector::FromElementsOp::create(
      b, loc, VectorType::get({2}, b.getI32Type()),
      ValueRange{words[0], words[1]});
  alignedStore(b, loc, pair, stage.words,
               stagedPieceWord(m, columns, line, piece), 8);
}

/// Puts the scale byte (the low byte of the integer `code`) of a piece into
/// the stage.
void stageScale(OpBuilder &b, Location loc, const RegionStage &stage,
                bool columns, Value line, Value piece, Value code) {
  IndexMath m{b, loc};
  Value byte = code.getType().isInteger(8)
                   ? code
                   : arith::TruncIOp::create(b, loc, b.getI8Type(), code)
                         .getResult();
  memref::StoreOp::create(b, loc, byte, stage.bytes,
                          ValueRange{stagedScaleByte(m, columns, line, piece)});
}

/// Where a staged piece goes: its offset in the destination (i32 words for
/// codes, bytes for scales) and whether it exists (i1).
struct PiecePlace {
  Value offset, valid;
};
using PiecePlacer =
    function_ref<PiecePlace(OpBuilder &, Location, Value line, Value piece)>;

/// One part of the stage to copy out: rows or columns, codes or scales, and
/// its destination (codes as i32 words, scales as bytes).
struct StagedPart {
  bool columns, scales;
  Value destination;
  PiecePlacer place;
};

/// Waits for the block's pieces, copies `parts` out (thread t takes the
/// pieces t and t + 256 of each: consecutive threads, consecutive pieces of
/// a line) and waits again, so that the stage can be refilled. Every
/// thread of the block must call it.
void flushRegionStage(OpBuilder &b, Location loc, const RegionStage &stage,
                      ArrayRef<StagedPart> parts) {
  static_assert(kStageRows * kStageRowPieces == 2 * kThreadsPerBlock &&
                    kStageColumns * kStageColumnPieces == 2 * kThreadsPerBlock,
                "two pieces of each part per thread");
  gpu::BarrierOp::create(b, loc);
  IndexMath m{b, loc};
  Value tid = gpu::ThreadIdOp::create(b, loc, gpu::Dimension::x);
  for (const StagedPart &part : parts) {
    int64_t pieces = part.columns ? kStageColumnPieces : kStageRowPieces;
    for (int64_t k = 0; k < 2; ++k) {
      Value unit = m.add(tid, m.c(k * kThreadsPerBlock));
      Value line = m.div(unit, pieces), piece = m.rem(unit, pieces);
      Value value =
          part.scales
              ? memref::LoadOp::create(
                    b, loc, stage.bytes,
                    ValueRange{stagedScaleByte(m, part.columns, line, piece)})
                    .getResult()
              : alignedLoad(b, loc, stage.words,
                            stagedPieceWord(m, part.columns, line, piece), 2,
                            8);
      PiecePlace place = part.place(b, loc, line, piece);
      auto ifValid = scf::IfOp::create(b, loc, place.valid, false);
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(ifValid.thenBlock());
      if (part.scales)
        memref::StoreOp::create(b, loc, value, part.destination,
                                ValueRange{place.offset});
      else
        alignedStore(b, loc, value, part.destination, place.offset, 8);
    }
  }
  gpu::BarrierOp::create(b, loc);
}

/// Tiles a half warp of the 16x16 quantize kernel takes per group: two
/// horizontally adjacent ones, so that a lane has two 32-byte loads in
/// flight.
constexpr int64_t kTilesPerHalfWarp = 2;
/// A group of the 16x16 kernel: 4 x 8 tiles (64 x 128 elements). A row of
/// the region is 64 bytes of codes, a column 32 bytes of transposed codes.
constexpr int64_t kRegionTileRows = 4;
constexpr int64_t kRegionTileCols = 4 * kTilesPerHalfWarp;

/// Where a lane of a 16x16 kernel works on one of its tiles: half warp h
/// takes tiles (h / 4, 2 * (h % 4) + k), k < 2, of the group's region and
/// lane i of the half warp the tile's row i. Lanes of tiles past the edge
/// use tile (0, 0) (`valid` false): they must take part in the tile
/// shuffles and skip their stores.
struct TileLane {
  Value tileRow, tileCol; ///< tile coordinates (clamped)
  Value row;              ///< flattened element row: tileRow * 16 + i
  Value rowInTile;        ///< i
  Value valid;            ///< i1
};

TileLane locateTileLane(OpBuilder &b, Location loc, Value region, int64_t k,
                        int64_t tileRows, int64_t tileCols) {
  IndexMath m{b, loc};
  int64_t regionCols = llvm::divideCeil(tileCols, kRegionTileCols);
  Value tid = gpu::ThreadIdOp::create(b, loc, gpu::Dimension::x);
  Value halfWarp = m.div(tid, 16), rowInTile = m.rem(tid, 16);
  Value tileRow = m.add(m.mul(m.div(region, regionCols), kRegionTileRows),
                        m.div(halfWarp, 4));
  Value tileCol =
      m.add(m.mul(m.rem(region, regionCols), kRegionTileCols),
            m.add(m.mul(m.rem(halfWarp, 4), kTilesPerHalfWarp), m.c(k)));
  Value valid = arith::AndIOp::create(b, loc, m.lt(tileRow, tileRows),
                                      m.lt(tileCol, tileCols));
  tileRow = arith::SelectOp::create(b, loc, valid, tileRow, m.c(0));
  tileCol = arith::SelectOp::create(b, loc, valid, tileCol, m.c(0));
  return {tileRow, tileCol, m.add(m.mul(tileRow, 16), rowInTile), rowInTile,
          valid};
}

/// The 16x16 kernels' blocks per multiprocessor: always the heavy
/// kernels' 3 (80 registers). The staged code stores keep their
/// loop-invariant addressing live, and at 64 registers ptxas spilled 32
/// bytes of it (the 4096 x 4096 and 14336 x 4096 weights of the Llama
/// block, and 8192 x 8192 with the transposed copy).
constexpr int64_t kTileBlocksPerMultiprocessor = 3;

/// Blocks of a kernel with `sharedBytes` of dynamic shared memory that one
/// multiprocessor holds, at most `wanted` (every block also reserves 1 KB).
int64_t blocksFittingShared(int64_t wanted, int64_t sharedBytes,
                            const ChipInfo &chip) {
  int64_t perMultiprocessor = chip.maxSharedMemoryPerBlock + 1024;
  return std::max<int64_t>(
      1, std::min(wanted, perMultiprocessor / (sharedBytes + 1024)));
}

/// Persistent schedule of the 16x16 kernels: one 4 x 8-tile region per
/// group; with a ring (`sharedBytes` of dynamic shared memory), as many
/// blocks a multiprocessor as fit.
PersistentSchedule tileSchedule(int64_t tileRows, int64_t tileCols,
                                const QuantizeSchedule &forced,
                                int64_t sharedBytes, const ChipInfo &chip) {
  int64_t regions = llvm::divideCeil(tileRows, kRegionTileRows) *
                    llvm::divideCeil(tileCols, kRegionTileCols);
  PersistentSchedule schedule = persistentSchedule(
      regions * kThreadsPerBlock, /*reverse=*/true,
      blocksFittingShared(chosenBlocks(forced, kTileBlocksPerMultiprocessor),
                          sharedBytes, chip),
      chip);
  if (forced.gridBlocks > 0)
    schedule.blocks = std::min(schedule.groups, forced.gridBlocks);
  return schedule;
}

//===----------------------------------------------------------------------===//
// The tile kernels' input ring (quantize-schedule ring<S>)
//===----------------------------------------------------------------------===//
//
// The 16x16 and the dual kernels read 64 x 128-element regions. In the
// registers path lane i of a half warp loads row i of its tiles: a
// warp's 16-byte load touches 32 rows (16 KB apart at 8192 BF16 columns;
// 32 sectors, half of each used, 32 L1 wavefronts), and a block has one
// region of loads in flight. The ring instead copies each region (64 rows of
// 128 elements) into shared memory with cp.async.cg, thread t taking the
// 16-byte chunks t, t + 256, ... in row-major order (a warp: two whole rows of
// 256 bytes), S - 1 regions ahead of the one being computed. Chunk c of row r
// sits at chunk c ^ (r % 8) of the row in the stage, so that the 8 lanes
// of a quarter warp, which read one chunk of 8 consecutive rows, hit 8
// distinct 16-byte bank groups. The lanes then read their tile rows from
// the stage and compute exactly as in the registers path. Ragged regions
// copy tile (0, 0)'s rows in place of the missing tiles, like the
// registers path.
//
// Dynamic shared memory, 16x16: [encode table][code stage][S region slots];
// dual: [two encode tables][code stage][transpose buffer][S region slots].

constexpr int64_t kRingTableOffset = 0;
constexpr int64_t kRingStageOffset = 128 * 4;
constexpr int64_t kRingSlotsOffset = kRingStageOffset + kStageBytes;
static_assert(kRingStageOffset % 16 == 0 && kRingSlotsOffset % 16 == 0,
              "16-byte aligned parts");

/// Bytes of one region slot of elements of `elementBytes` bytes.
int64_t ringSlotBytes(int64_t elementBytes) {
  return kStageRows * kStageColumns * elementBytes;
}

/// The dynamic shared memory of a ring kernel with `stages` slots.
int64_t ringSharedBytes(int64_t stages, int64_t elementBytes) {
  return kRingSlotsOffset + stages * ringSlotBytes(elementBytes);
}

// The default input paths (quantize-schedule ""): the fastest measured on
// the H200 (bench/RESULTS.md, issue 15 rounds 4 and 5; BF16, in
// parentheses the fraction of a plain copy's bandwidth):
// - 16x16 with the transposed copy, 8192^2, amax given, with the sign-word
//   codes (round 5, one run): registers 0.0699 ms (0.72x), ring2 0.0596
//   (0.84x), ring3 0.0644-0.0652 (0.77-0.78x, three interleaved runs), ring4
//   0.0666. (Round 4, signed codes: ring2 and ring3 level at 0.74x.) Every
//   16x16 kernel takes ring2.
// - dual, round-to-nearest on both sides (X: rows + RHT columns), 8192^2:
//   round 5 ring2 0.1071-0.1098 ms (0.47-0.49x), ring3 0.1121, registers
//   0.1182 (round 4: registers 0.1202, ring2 0.1163, ring3 0.1205). These
//   take ring2.
// - dual with stochastic rounding (dY: SR rows + RHT SR columns): round 5
//   registers 0.1488-0.1517 ms, ring2 0.1507, within noise (round 4 the
//   same). Duals with stochastic rounding on either side keep the
//   registers path.
// A default ring that does not fit in the chip's shared memory per block
// falls back to the registers path; a forced one is an error instead.
constexpr int64_t kTileDefaultRingStages = 2;

/// The input path of a 16x16 or dual kernel: the forced one, else
/// `measured` (the default above) when its ring, `ringBytes(measured)` of
/// dynamic shared memory, fits in `chip`, else the registers path.
int64_t chosenRingStages(const QuantizeSchedule &forced, int64_t measured,
                         function_ref<int64_t(int64_t)> ringBytes,
                         const ChipInfo &chip) {
  if (forced.ringStages != QuantizeSchedule::kDefault)
    return forced.ringStages;
  if (measured && ringBytes(measured) > chip.maxSharedMemoryPerBlock)
    return 0;
  return measured;
}

/// A memref<{size} x type> view (workgroup space) of the dynamic shared
/// memory `raw` at byte `offset`.
Value sharedView(OpBuilder &b, Location loc, Value raw, int64_t offset,
                 int64_t size, Type type) {
  auto viewType = MemRefType::get(
      {size}, type, MemRefLayoutAttrInterface(),
      gpu::AddressSpaceAttr::get(b.getContext(), gpu::AddressSpace::Workgroup));
  return memref::ViewOp::create(b, loc, viewType, raw,
                                indexConstant(b, loc, offset), ValueRange());
}

/// The address of a memref's first element as an LLVM pointer of
/// `addressSpace` (1: global, 3: shared), for cp.async.
Value memrefPointer(OpBuilder &b, Location loc, Value memref,
                    unsigned addressSpace) {
  Value index = memref::ExtractAlignedPointerAsIndexOp::create(b, loc, memref);
  Value bits = arith::IndexCastOp::create(b, loc, b.getI64Type(), index);
  return LLVM::IntToPtrOp::create(
      b, loc, LLVM::LLVMPointerType::get(b.getContext(), addressSpace), bits);
}

/// `pointer` + `bytes` (an index).
Value offsetPointer(OpBuilder &b, Location loc, Value pointer, Value bytes) {
  return LLVM::GEPOp::create(
      b, loc, pointer.getType(), b.getI8Type(), pointer,
      ValueRange{arith::IndexCastOp::create(b, loc, b.getI64Type(), bytes)});
}

/// Chunk (16 bytes) position in a region slot of chunk `chunk` of staged
/// row `line`: row-major, the chunk XOR-swizzled by the row (see above).
Value ringChunk(IndexMath &m, Value line, Value chunk, int64_t rowChunks) {
  Value physical = arith::XOrIOp::create(m.b, m.loc, chunk, m.rem(line, 8));
  return m.add(m.mul(line, rowChunks), physical);
}

/// Where staged line `line` of a region comes from: its flattened input
/// row and whether that row's tile row exists.
using RingLineRow =
    function_ref<std::pair<Value, Value>(IndexMath &, Value line)>;

/// Issues this thread's cp.async copies of one region into ring slot
/// `slot` of the slots at byte `slotsOffset` of the dynamic shared memory
/// at `shared`: chunks t + 256 j, row by row, of the kStageColumns
/// elements from tile column `firstTileCol` on. A chunk of a missing tile
/// (its tile row or column past the tensor) copies the same place of tile
/// (0, 0) instead.
void issueRegionCopies(OpBuilder &b, Location loc, Value input, Value shared,
                       int64_t slotsOffset, Value slot, Value firstTileCol,
                       int64_t tileCols, int64_t cols, int64_t elementBytes,
                       RingLineRow rowOf) {
  IndexMath m{b, loc};
  int64_t rowChunks = kStageColumns * elementBytes / 16;
  int64_t tileRowChunks = elementBytes, chunkElements = 16 / elementBytes;
  Value tid = gpu::ThreadIdOp::create(b, loc, gpu::Dimension::x);
  Value slotBase =
      m.add(m.c(slotsOffset), m.mul(slot, ringSlotBytes(elementBytes)));
  for (int64_t j = 0; j < kStageRows * rowChunks / kThreadsPerBlock; ++j) {
    Value unit = m.add(tid, m.c(j * kThreadsPerBlock));
    Value line = m.div(unit, rowChunks), chunk = m.rem(unit, rowChunks);
    auto [row, rowValid] = rowOf(m, line);
    Value tileCol = m.add(firstTileCol, m.div(chunk, tileRowChunks));
    Value valid =
        arith::AndIOp::create(b, loc, rowValid, m.lt(tileCol, tileCols));
    Value element = m.add(m.mul(row, cols), m.add(m.mul(firstTileCol, 16),
                                                  m.mul(chunk, chunkElements)));
    Value fallback = m.add(m.mul(m.rem(line, 16), cols),
                           m.mul(m.rem(chunk, tileRowChunks), chunkElements));
    element = arith::SelectOp::create(b, loc, valid, element, fallback);
    Value destination =
        m.add(slotBase, m.mul(ringChunk(m, line, chunk, rowChunks), 16));
    NVVM::CpAsyncOp::create(
        b, loc, offsetPointer(b, loc, shared, destination),
        offsetPointer(b, loc, input, m.mul(element, elementBytes)),
        b.getI32IntegerAttr(16),
        NVVM::LoadCacheModifierKindAttr::get(b.getContext(),
                                             NVVM::LoadCacheModifierKind::CG),
        /*cpSize=*/Value());
  }
}

/// The 16 elements (vector<16xT>) of staged line `line`, region tile
/// column `tileCol`, of ring slot `slot`; `slots` is the slots' view in
/// elements of T. 16-byte shared loads, concatenated.
Value readRingRun(OpBuilder &b, Location loc, Value slots, Value slot,
                  Value line, Value tileCol) {
  IndexMath m{b, loc};
  Type elementType = cast<MemRefType>(slots.getType()).getElementType();
  int64_t elementBytes = elementType.getIntOrFloatBitWidth() / 8;
  int64_t rowChunks = kStageColumns * elementBytes / 16;
  int64_t chunkElements = 16 / elementBytes;
  auto chunkType = VectorType::get({chunkElements}, elementType);
  Value slotBase = m.mul(slot, ringSlotBytes(elementBytes) / elementBytes);
  Value run;
  for (int64_t q = 0; q < elementBytes; ++q) {
    Value chunk = m.add(m.mul(tileCol, elementBytes), m.c(q));
    Value piece = vector::LoadOp::create(
        b, loc, chunkType, slots,
        ValueRange{m.add(slotBase, m.mul(ringChunk(m, line, chunk, rowChunks),
                                         chunkElements))},
        /*nontemporal=*/false, llvm::Align(16));
    if (!run) {
      run = piece;
      continue;
    }
    // Concatenation: the shuffle's indices count through both operands.
    int64_t have = cast<VectorType>(run.getType()).getNumElements();
    run = vector::ShuffleOp::create(
        b, loc, run, piece,
        llvm::to_vector(llvm::seq<int64_t>(0, have + chunkElements)));
  }
  return run;
}

/// The loop of a ring kernel: the copies of the block's first S - 1
/// groups, then per group: wait for its copies (this thread's, then the
/// block's at a barrier, after which nobody reads the slot the previous
/// group used), issue the copies of the group S - 1 ahead into that slot,
/// compute the group from its slot. Each iteration commits one cp.async
/// group (empty past the end), so that wait_group S - 2 always means "the
/// current group has landed".
using RingIssue =
    function_ref<void(OpBuilder &, Location, Value group, Value slot)>;
using RingBody =
    function_ref<void(OpBuilder &, Location, Value group, Value slot)>;

void emitRingLoop(OpBuilder &b, Location loc,
                  const PersistentSchedule &schedule, int64_t stages,
                  RingIssue issue, RingBody body) {
  IndexMath m{b, loc};
  auto walked = [&](OpBuilder &nb, Location nl, Value group) -> Value {
    if (!schedule.reverse)
      return group;
    return arith::SubIOp::create(
        nb, nl, IndexMath{nb, nl}.c(schedule.groups - 1), group);
  };
  auto issueIfExists = [&](OpBuilder &nb, Location nl, Value group,
                           Value slot) {
    auto ifExists =
        scf::IfOp::create(nb, nl, IndexMath{nb, nl}.lt(group, schedule.groups),
                          /*withElseRegion=*/false);
    {
      OpBuilder::InsertionGuard guard(nb);
      nb.setInsertionPointToStart(ifExists.thenBlock());
      issue(nb, nl, walked(nb, nl, group), slot);
    }
    NVVM::CpAsyncCommitGroupOp::create(nb, nl);
  };
  Value block = gpu::BlockIdOp::create(b, loc, gpu::Dimension::x);
  for (int64_t s = 0; s + 1 < stages; ++s)
    issueIfExists(b, loc, m.add(block, m.c(s * schedule.blocks)), m.c(s));
  scf::ForOp::create(
      b, loc, block, m.c(schedule.groups), m.c(schedule.blocks),
      ValueRange{m.c(0)},
      [&](OpBuilder &nb, Location nl, Value group, ValueRange iterArgs) {
        IndexMath nm{nb, nl};
        Value slot = iterArgs[0];
        NVVM::CpAsyncWaitGroupOp::create(nb, nl, stages - 2);
        gpu::BarrierOp::create(nb, nl);
        // The slot of the previous group: (slot + S - 1) % S.
        Value previous = arith::SelectOp::create(
            nb, nl, nm.eq(slot, 0), nm.c(stages - 1),
            arith::SubIOp::create(nb, nl, slot, nm.c(1)));
        issueIfExists(nb, nl,
                      nm.add(group, nm.c((stages - 1) * schedule.blocks)),
                      previous);
        body(nb, nl, walked(nb, nl, group), slot);
        Value next = nm.add(slot, nm.c(1));
        scf::YieldOp::create(
            nb, nl,
            ValueRange{arith::SelectOp::create(nb, nl, nm.eq(next, stages),
                                               nm.c(0), next)
                           .getResult()});
      });
  NVVM::CpAsyncWaitGroupOp::create(b, loc, 0);
}

/// Quantization with 16x16 blocks, persistent over 4 x 8-tile regions; a
/// lane quantizes one row of each of two tiles (a tile amax reduced across
/// its 16 lanes) and, with `transposedCopy`, also computes the transposed
/// codes and scales (nvfp4.transpose of the result) from the same
/// registers: the codes of a tile transposed across its 16 lanes
/// (transposeNibbles16). One tile after the other: one tile's values live
/// at a time. The codes of the region leave through the shared stage
/// (flushRegionStage): row pieces for the codes, column pieces for the
/// transposed copy.
gpu::GPUFuncOp
buildTileQuantizeKernel(ModuleOp module, BlockScaledTensorType type,
                        Type elementType, bool stochastic, bool amaxArgument,
                        bool transposedCopy, const QuantizeSchedule &forced,
                        const ChipInfo &chip, PersistentSchedule &schedule,
                        int64_t &sharedBytes) {
  static_assert(kRegionTileRows * 16 == kStageRows &&
                    kRegionTileCols == kStageRowPieces &&
                    kRegionTileCols * 16 == kStageColumns &&
                    kRegionTileRows == kStageColumnPieces,
                "a region is one stage");
  MLIRContext *ctx = module.getContext();
  int64_t count = product(type.getShape());
  int64_t rows = type.getRows(), cols = type.getCols();
  int64_t tileRows = count / cols / 16, tileCols = cols / 16;
  int64_t regionCols = llvm::divideCeil(tileCols, kRegionTileCols);
  int64_t elementBytes = elementType.getIntOrFloatBitWidth() / 8;
  int64_t stages = chosenRingStages(
      forced, kTileDefaultRingStages,
      [&](int64_t s) { return ringSharedBytes(s, elementBytes); }, chip);
  sharedBytes = stages ? ringSharedBytes(stages, elementBytes) : 0;
  schedule = tileSchedule(tileRows, tileCols, forced, sharedBytes, chip);
  PersistentSchedule local = schedule;
  QuantizeSignature sig = quantizeSignature(type, elementType, stochastic,
                                            amaxArgument, transposedCopy);
  bool linear = type.getLayout() == ScaleLayout::Linear;
  std::string name =
      "nvfp4_quantize_" + shapeName(type.getShape()) + "x" +
      typeName(elementType) + "_16x16" +
      quantizeNameSuffix(stochastic, type, amaxArgument) +
      (transposedCopy ? "_and_transpose" : "") +
      (stages ? "_ring" + std::to_string(stages) : "") +
      (forced.gridBlocks ? "_grid" + std::to_string(schedule.blocks) : "") +
      forcedSuffix(forced, stochastic);
  ArithmeticForm form = chosenArithmetic(forced, /*wideByDefault=*/false,
                                         /*fmaByDefault=*/false);
  KernelOptions options;
  if (!stages) {
    options.workgroupBuffers = {encodeTableType(ctx), regionStageType(ctx)};
    options.workgroupAlignments = {0, 16};
  }
  options.minBlocksPerMultiprocessor =
      chosenBlocks(forced, kTileBlocksPerMultiprocessor);
  return getOrCreateKernel(
      module, name, sig.types, options,
      [&](OpBuilder &b, Location loc, ValueRange args) {
        Value table, stageBytes, raw, slots, rawPointer;
        if (stages) {
          raw = gpu::DynamicSharedMemoryOp::create(
              b, loc,
              MemRefType::get({ShapedType::kDynamic}, b.getI8Type(),
                              MemRefLayoutAttrInterface(),
                              gpu::AddressSpaceAttr::get(
                                  ctx, gpu::AddressSpace::Workgroup)));
          table =
              sharedView(b, loc, raw, kRingTableOffset, 128, b.getF32Type());
          stageBytes = sharedView(b, loc, raw, kRingStageOffset, kStageBytes,
                                  b.getI8Type());
          slots = sharedView(
              b, loc, raw, kRingSlotsOffset,
              stages * ringSlotBytes(elementBytes) / elementBytes, elementType);
          rawPointer = memrefPointer(b, loc, raw, /*addressSpace=*/3);
        } else {
          table = args[args.size() - 2];
          stageBytes = args.back();
        }
        RegionStage stage = regionStage(b, loc, stageBytes);
        ScalarBuilder::TensorScale scale =
            quantizePrologue(b, loc, args, sig, table);
        Value codeWords = codesAsWords(b, loc, args[sig.codes]);
        Value transposedWords =
            transposedCopy ? codesAsWords(b, loc, args[sig.transposedCodes])
                           : Value();
        Value lane = arith::IndexCastUIOp::create(
            b, loc, b.getI32Type(),
            gpu::LaneIdOp::create(b, loc, /*upperBound=*/nullptr));
        auto loadRegisters = [&](OpBuilder &nb, Location nl, Value region) {
          IndexMath nm{nb, nl};
          SmallVector<Value> loaded;
          for (int64_t k = 0; k < kTilesPerHalfWarp; ++k) {
            TileLane t = locateTileLane(nb, nl, region, k, tileRows, tileCols);
            Value base = nm.add(nm.mul(t.row, cols), nm.mul(t.tileCol, 16));
            loaded.push_back(loadSixteenRaw(nb, nl, args[sig.input], base));
          }
          return loaded;
        };
        auto compute =
            [&](OpBuilder &nb, Location nl, Value region, ValueRange loaded) {
              IndexMath rm{nb, nl};
              Value tid = gpu::ThreadIdOp::create(nb, nl, gpu::Dimension::x);
              Value halfWarp = rm.div(tid, 16);
              // The region's tile coordinates of this lane's tiles.
              Value regionTileRow = rm.div(halfWarp, 4);
              for (int64_t k = 0; k < kTilesPerHalfWarp; ++k) {
                IndexMath nm{nb, nl};
                TileLane t =
                    locateTileLane(nb, nl, region, k, tileRows, tileCols);
                Value run = nm.add(nm.mul(t.row, tileCols), t.tileCol);
                PreparedRun prepared = prepareRun(nb, nl, loaded[k],
                                                  std::nullopt, form.fmaForms);
                Value tileAmax = halfWarpMax(nb, nl, prepared.amax);
                Value codes = blockScaleCodePair(nb, nl, tileAmax, tileAmax,
                                                 scale, chip);
                Value encode = lookupEncode(
                    nb, nl, table,
                    arith::ExtUIOp::create(nb, nl, nb.getI32Type(), codes));
                std::array<Value, 2> words = quantizeValues(
                    nb, nl, prepared.values, encode,
                    runRandomBits(nb, nl, args, sig, run, form), chip, form,
                    prepared.pairs);
                Value regionTileCol = nm.add(
                    nm.mul(nm.rem(halfWarp, 4), kTilesPerHalfWarp), nm.c(k));
                stageCodes(nb, nl, stage, /*columns=*/false,
                           nm.add(nm.mul(regionTileRow, 16), t.rowInTile),
                           regionTileCol, words);
                if (transposedCopy)
                  // This lane holds column rowInTile of the tile.
                  stageCodes(nb, nl, stage, /*columns=*/true,
                             nm.add(nm.mul(regionTileCol, 16), t.rowInTile),
                             regionTileRow,
                             transposeNibbles16(nb, nl, words, lane));
                Value code =
                    arith::TruncIOp::create(nb, nl, nb.getI8Type(), codes);

                auto ifValid = scf::IfOp::create(nb, nl, t.valid, false);
                OpBuilder::InsertionGuard guard(nb);
                nb.setInsertionPointToStart(ifValid.thenBlock());
                // Linear scales: one per tile (its first lane); swizzled:
                // every row of the tile holds a copy.
                Value offset = scaleOffset(nm, type, t.row, t.tileCol);
                if (!linear)
                  memref::StoreOp::create(nb, nl, code, args[sig.scales],
                                          ValueRange{offset});
                if (linear) {
                  auto ifFirst =
                      scf::IfOp::create(nb, nl, nm.eq(t.rowInTile, 0), false);
                  nb.setInsertionPointToStart(ifFirst.thenBlock());
                  memref::StoreOp::create(nb, nl, code, args[sig.scales],
                                          ValueRange{offset});
                  if (transposedCopy)
                    memref::StoreOp::create(
                        nb, nl, code, args[sig.transposedScales],
                        ValueRange{transposedTilePlace(nm, t.tileRow,
                                                       t.tileCol, t.rowInTile,
                                                       rows, cols)
                                       .second});
                }
              }
              // The region's first tile and where its pieces go.
              Value firstTileRow =
                  rm.mul(rm.div(region, regionCols), kRegionTileRows);
              Value firstTileCol =
                  rm.mul(rm.rem(region, regionCols), kRegionTileCols);
              auto tileExists = [&](IndexMath &pm, Value tileRow,
                                    Value tileCol) -> Value {
                return arith::AndIOp::create(pm.b, pm.loc,
                                             pm.lt(tileRow, tileRows),
                                             pm.lt(tileCol, tileCols));
              };
              auto placeRow = [&](OpBuilder &pb, Location pl, Value line,
                                  Value piece) -> PiecePlace {
                IndexMath pm{pb, pl};
                Value tileRow = pm.add(firstTileRow, pm.div(line, 16));
                Value tileCol = pm.add(firstTileCol, piece);
                Value row = pm.add(pm.mul(tileRow, 16), pm.rem(line, 16));
                return {pm.add(pm.mul(row, cols / 8), pm.mul(tileCol, 2)),
                        tileExists(pm, tileRow, tileCol)};
              };
              auto placeColumn = [&](OpBuilder &pb, Location pl, Value line,
                                     Value piece) -> PiecePlace {
                IndexMath pm{pb, pl};
                Value tileRow = pm.add(firstTileRow, piece);
                Value tileCol = pm.add(firstTileCol, pm.div(line, 16));
                return {transposedTilePlace(pm, tileRow, tileCol,
                                            pm.rem(line, 16), rows, cols)
                            .first,
                        tileExists(pm, tileRow, tileCol)};
              };
              SmallVector<StagedPart> parts = {
                  {/*columns=*/false, /*scales=*/false, codeWords, placeRow}};
              if (transposedCopy)
                parts.push_back({/*columns=*/true, /*scales=*/false,
                                 transposedWords, placeColumn});
              flushRegionStage(nb, nl, stage, parts);
            };
        if (!stages) {
          emitPrefetchingLoop(b, loc, local, ValueRange(), loadRegisters,
                              [&](OpBuilder &nb, Location nl, Value region,
                                  ValueRange loaded, ValueRange) {
                                compute(nb, nl, region, loaded);
                                return SmallVector<Value>();
                              });
          return;
        }
        // The ring: the region's rows, then this lane's tile rows from its
        // slot.
        Value input =
            memrefPointer(b, loc, args[sig.input], /*addressSpace=*/1);
        auto issue = [&](OpBuilder &nb, Location nl, Value region, Value slot) {
          IndexMath nm{nb, nl};
          Value firstTileRow =
              nm.mul(nm.div(region, regionCols), kRegionTileRows);
          Value firstTileCol =
              nm.mul(nm.rem(region, regionCols), kRegionTileCols);
          issueRegionCopies(
              nb, nl, input, rawPointer, kRingSlotsOffset, slot, firstTileCol,
              tileCols, cols, elementBytes, [&](IndexMath &lm, Value line) {
                Value tileRow = lm.add(firstTileRow, lm.div(line, 16));
                return std::pair<Value, Value>{
                    lm.add(lm.mul(tileRow, 16), lm.rem(line, 16)),
                    lm.lt(tileRow, tileRows)};
              });
        };
        emitRingLoop(
            b, loc, local, stages, issue,
            [&](OpBuilder &nb, Location nl, Value region, Value slot) {
              IndexMath nm{nb, nl};
              Value tid = gpu::ThreadIdOp::create(nb, nl, gpu::Dimension::x);
              Value halfWarp = nm.div(tid, 16);
              Value line =
                  nm.add(nm.mul(nm.div(halfWarp, 4), 16), nm.rem(tid, 16));
              SmallVector<Value> loaded;
              for (int64_t k = 0; k < kTilesPerHalfWarp; ++k)
                loaded.push_back(readRingRun(
                    nb, nl, slots, slot, line,
                    nm.add(nm.mul(nm.rem(halfWarp, 4), kTilesPerHalfWarp),
                           nm.c(k))));
              compute(nb, nl, region, loaded);
            });
      });
}

//===----------------------------------------------------------------------===//
// Rowwise + columnwise quantization from one read (nvfp4.dual_quantize)
//===----------------------------------------------------------------------===//
//
// The input [batch..., M, K] is a stack of matrices of 16x16 tiles. A half
// warp takes two vertically adjacent tiles (a "pair" of tile rows, 32 x 16
// elements) and lane i of the half warp loads row i of each: two runs of 16
// along K, which are rowwise blocks. Their columnwise blocks are the tiles'
// columns, runs of 16 tokens along M: a transpose of each tile across the
// 16 lanes (transposeTile16, through shared memory) gives lane i column i
// of both tiles, i.e. 32 consecutive elements of row tileCol * 16 + i of
// the transposed tensor, and the RHT of each run of 16 is the registers' butterfly. The
// transposed tensor and the RHT's output never reach memory.
//
// The codes and scales of both parts leave through the shared stage (see
// flushRegionStage): a lane's pieces are 8 bytes of 16 different rows, and
// the stage turns them into whole-sector stores.

/// A group of the dual kernels: 2 pair rows x 8 tile columns (64 x 128
/// elements), one pair of tiles per half warp.
constexpr int64_t kDualRegionPairRows = 2;
constexpr int64_t kDualRegionTileCols = 8;

/// The tiling of a dual quantization's input [batch..., M, K].
struct DualGeometry {
  int64_t batch, rows, cols; ///< batch (product of the leading dims), M, K
  int64_t tileRows, tileCols; ///< M / 16, K / 16
  int64_t pairsPerMatrix;     ///< ceil(tileRows / 2)
  int64_t regionCols;         ///< groups across a matrix row of tiles

  explicit DualGeometry(ArrayRef<int64_t> shape)
      : batch(product(shape.drop_back(2))), rows(shape[shape.size() - 2]),
        cols(shape.back()), tileRows(rows / 16), tileCols(cols / 16),
        pairsPerMatrix(llvm::divideCeil(tileRows, 2)),
        regionCols(llvm::divideCeil(tileCols, kDualRegionTileCols)) {}

  int64_t pairRows() const { return batch * pairsPerMatrix; }
  int64_t regions() const {
    return llvm::divideCeil(pairRows(), kDualRegionPairRows) * regionCols;
  }
  /// Every pair has its second tile row.
  bool evenTileRows() const { return tileRows % 2 == 0; }
};

/// Where a lane of a dual kernel works in group `region`: half warp h takes
/// tile column (region % regionCols) * 8 + h % 8 of pair row (region /
/// regionCols) * 2 + h / 8, and lane i of the half warp row i (and,
/// transposed, column i) of both tiles. Lanes outside the tensor compute on
/// pair 0, column 0 (the clamped coordinates, used to load and compute):
/// they must take part in the shuffles; the stage skips their pieces.
struct DualLane {
  Value pair;         ///< pair within its matrix (clamped)
  Value tileCol;      ///< tile column (clamped)
  Value secondExists; ///< i1: the (clamped) pair has its second tile row
  /// Flattened input rows of the lane's two runs (clamped; the second
  /// repeats the first where the pair has one tile row).
  std::array<Value, 2> rows;
  /// The row of the transposed tensor that the lane's column is:
  /// batch * K + tileCol * 16 + i.
  Value columnRow;
};

DualLane locateDualLane(OpBuilder &b, Location loc, Value region,
                        const DualGeometry &g) {
  IndexMath m{b, loc};
  auto select = [&](Value c, Value x, Value y) -> Value {
    return arith::SelectOp::create(b, loc, c, x, y);
  };
  Value tid = gpu::ThreadIdOp::create(b, loc, gpu::Dimension::x);
  Value halfWarp = m.div(tid, 16), i = m.rem(tid, 16);
  Value column = m.rem(halfWarp, kDualRegionTileCols);
  Value regionCol = m.mul(m.rem(region, g.regionCols), kDualRegionTileCols);
  DualLane l;
  Value pairRow = m.add(m.mul(m.div(region, g.regionCols), kDualRegionPairRows),
                        m.div(halfWarp, kDualRegionTileCols));
  Value tileCol = m.add(regionCol, column);
  Value pairRowC = select(m.lt(pairRow, g.pairRows()), pairRow, m.c(0));
  l.tileCol = select(m.lt(tileCol, g.tileCols), tileCol, m.c(0));
  Value batchIndex = m.div(pairRowC, g.pairsPerMatrix);
  l.pair = m.rem(pairRowC, g.pairsPerMatrix);
  l.secondExists = g.evenTileRows()
                       ? arith::ConstantOp::create(b, loc, b.getBoolAttr(true))
                             .getResult()
                       : m.lt(m.add(m.mul(l.pair, 2), m.c(1)), g.tileRows);
  Value firstRow = m.add(
      m.mul(m.add(m.mul(batchIndex, g.tileRows), m.mul(l.pair, 2)), 16), i);
  l.rows = {firstRow,
            select(l.secondExists, m.add(firstRow, m.c(16)), firstRow)};
  l.columnRow = m.add(m.mul(batchIndex, g.cols), m.add(m.mul(l.tileCol, 16), i));
  return l;
}

/// The loads of a dual kernel's group: the lane's two runs.
SmallVector<Value> loadDualRuns(OpBuilder &b, Location loc, Value input,
                                Value region, const DualGeometry &g) {
  IndexMath m{b, loc};
  DualLane l = locateDualLane(b, loc, region, g);
  SmallVector<Value> loaded;
  for (Value row : l.rows)
    loaded.push_back(loadSixteenRaw(
        b, loc, input, m.add(m.mul(row, g.cols), m.mul(l.tileCol, 16))));
  return loaded;
}

// The transpose of a tile goes through shared memory: each half warp owns a
// 16 x 16 tile of the element type, rows padded by 16 bytes (so that the 8
// lanes of a 16-byte store phase, rows i..i+7 of one chunk, hit distinct
// banks), and the second tile of a warp starts 32 (16-bit types) or 64
// bytes (f32) further in the bank cycle than the first, so that the two
// half warps' column reads -- 16 consecutive elements of one row each --
// fall on disjoint banks. A lane stores its row (16-byte stores) and, after
// a warp barrier, loads its column element by element: 2 + 16 shared
// accesses a tile where the shuffle transpose took 16 shuffles and about 50
// selects and prmts.

/// Elements of a padded tile row and of one half warp's tile.
int64_t transposeRowStride(Type elementType) {
  return 16 + 16 * 8 / elementType.getIntOrFloatBitWidth();
}
int64_t transposeTileStride(Type elementType) {
  return 16 * transposeRowStride(elementType) + 16;
}

/// The transpose buffer of a block (memref<16 tiles x T>, workgroup space).
MemRefType transposeBufferType(Type elementType) {
  MLIRContext *ctx = elementType.getContext();
  return MemRefType::get(
      {(kThreadsPerBlock / 16) * transposeTileStride(elementType)},
      elementType, MemRefLayoutAttrInterface(),
      gpu::AddressSpaceAttr::get(ctx, gpu::AddressSpace::Workgroup));
}

/// Transposes the 16 x 16 tile whose row i lane i of each half warp holds
/// (`run`, vector<16xT>) through the half warp's tile of `buffer`: each
/// lane gets column i in the same form. Every lane of the warp must call
/// it (warp barriers before the stores, so that the previous transpose's
/// loads are done, and before the loads).
Value transposeTile16(OpBuilder &b, Location loc, Value run, Value buffer) {
  IndexMath m{b, loc};
  ScalarBuilder s(b, loc);
  auto runType = cast<VectorType>(run.getType());
  Type elementType = runType.getElementType();
  int64_t rowStride = transposeRowStride(elementType);
  int64_t chunk = 16 * 8 / elementType.getIntOrFloatBitWidth();
  Value tid = gpu::ThreadIdOp::create(b, loc, gpu::Dimension::x);
  Value tile = m.mul(m.div(tid, 16), transposeTileStride(elementType));
  Value i = m.rem(tid, 16);
  NVVM::SyncWarpOp::create(b, loc, s.i32(-1));
  Value rowBase = m.add(tile, m.mul(i, rowStride));
  for (int64_t c = 0; c < 16; c += chunk) {
    SmallVector<int64_t> indices;
    for (int64_t j = 0; j < chunk; ++j)
      indices.push_back(c + j);
    Value part = vector::ShuffleOp::create(b, loc, run, run, indices);
    alignedStore(b, loc, part, buffer, m.add(rowBase, m.c(c)), 16);
  }
  NVVM::SyncWarpOp::create(b, loc, s.i32(-1));
  Value columnBase = m.add(tile, i);
  SmallVector<Value> column;
  for (int64_t r = 0; r < 16; ++r)
    column.push_back(memref::LoadOp::create(
        b, loc, buffer, ValueRange{m.add(columnBase, m.c(r * rowStride))}));
  return vector::FromElementsOp::create(b, loc, runType, column);
}

/// What a dual kernel is specialized for.
struct DualQuantizeSpec {
  SmallVector<int64_t> shape;
  Type elementType;
  BlockScaledTensorType rowType, columnType;
  bool rowStochastic = false, columnStochastic = false;
  /// Each part's amax is an f32 argument (else a device buffer); the
  /// kernel copies it to the part's own amax buffer when it is an argument,
  /// and the columnwise one with `columnAmaxCopy` (both parts given the
  /// amax one kernel computed: the results need buffers of their own).
  bool rowAmaxArgument = false, columnAmaxArgument = false;
  bool columnAmaxCopy = false;
  std::optional<uint32_t> rhtMask;
};

/// The arguments of the dual quantize kernel: input, the two amaxes (device
/// buffers of FP32 bits, or f32 arguments), rowwise codes and scales,
/// columnwise codes and scales, the result amax buffers the kernel fills
/// (`*AmaxOut`: for an argument, or a copy), the two seeds of stochastic
/// rounding. -1: absent.
struct DualQuantizeSignature {
  SmallVector<Type> types;
  int64_t input = 0, rowAmax = 1, columnAmax = 2, rowCodes = 3,
          rowScales = 4, columnCodes = 5, columnScales = 6;
  int64_t rowAmaxOut = -1, columnAmaxOut = -1, rowSeed = -1,
          columnSeed = -1;
};

DualQuantizeSignature dualQuantizeSignature(const DualQuantizeSpec &spec) {
  MLIRContext *ctx = spec.elementType.getContext();
  int64_t count = product(spec.shape);
  auto i8 = IntegerType::get(ctx, 8);
  auto amaxBuffer = MemRefType::get({1}, IntegerType::get(ctx, 32));
  auto amax = [&](bool argument) -> Type {
    return argument ? Type(Float32Type::get(ctx)) : Type(amaxBuffer);
  };
  auto scales = [&](BlockScaledTensorType type) -> Type {
    return MemRefType::get({product(type.getScalesType().getShape())}, i8);
  };
  DualQuantizeSignature sig;
  sig.types = {MemRefType::get({count}, spec.elementType),
               amax(spec.rowAmaxArgument),
               amax(spec.columnAmaxArgument),
               MemRefType::get({count / 2}, i8),
               scales(spec.rowType),
               MemRefType::get({count / 2}, i8),
               scales(spec.columnType)};
  auto add = [&](Type t) {
    sig.types.push_back(t);
    return static_cast<int64_t>(sig.types.size()) - 1;
  };
  if (spec.rowAmaxArgument)
    sig.rowAmaxOut = add(amaxBuffer);
  if (spec.columnAmaxArgument || spec.columnAmaxCopy)
    sig.columnAmaxOut = add(amaxBuffer);
  if (spec.rowStochastic)
    sig.rowSeed = add(IntegerType::get(ctx, 64));
  if (spec.columnStochastic)
    sig.columnSeed = add(IntegerType::get(ctx, 64));
  return sig;
}

/// Blocks of 256 threads a multiprocessor runs at once in the dual
/// kernels (nvvm.minctasm): 4 (64 registers) for the amax kernel and the
/// round-to-nearest quantize kernel; 3 (80 registers) with stochastic
/// rounding on one side, whose Philox rounds spill at 64 (ptxas, sm_90a);
/// 2 (118 registers) with it on both (dY's dual: 0.1439 against 0.1470 ms
/// at 3 blocks, 8192^2 on the H200, 6/6 interleaved rounds, session 10).
int64_t dualQuantizeBlocksPerMultiprocessor(const DualQuantizeSpec &spec) {
  if (spec.rowStochastic && spec.columnStochastic)
    return 2;
  return spec.rowStochastic || spec.columnStochastic ? 3 : 4;
}
constexpr int64_t kDualAmaxBlocksPerMultiprocessor = 4;

/// The default ring of a dual quantize kernel (the measured rule at
/// chosenRingStages): ring2 with round-to-nearest on both sides, the
/// registers path with stochastic rounding on either.
int64_t dualDefaultRingStages(const DualQuantizeSpec &spec) {
  return spec.rowStochastic || spec.columnStochastic ? 0 : 2;
}

/// One quantized block of a dual kernel: its E4M3 scale code (i32, in the
/// low byte) and its code words.
struct DualBlock {
  Value scaleCode;
  std::array<Value, 2> words;
};

DualBlock quantizeDualBlock(OpBuilder &b, Location loc, Value run,
                            std::optional<uint32_t> rhtMask,
                            const ScalarBuilder::TensorScale &scale,
                            Value table, Value seed, Value runIndex,
                            const ChipInfo &chip,
                            const ArithmeticForm &form) {
  PreparedRun prepared = prepareRun(b, loc, run, rhtMask, form.fmaForms);
  Value code = arith::ExtUIOp::create(
      b, loc, b.getI32Type(),
      blockScaleCodePair(b, loc, prepared.amax, prepared.amax, scale, chip));
  return {code, quantizeValues(b, loc, prepared.values,
                               lookupEncode(b, loc, table, code),
                               runRandomBits(b, loc, seed, runIndex, form),
                               chip, form, prepared.pairs)};
}

/// nvfp4.dual_quantize: rowwise and columnwise (optionally after the RHT)
/// quantization of one read of the input, persistent over 2 x 8-pair
/// regions, walking the tensor from its end (after an amax pass). The codes
/// and scales of both parts leave through the shared stage
/// (flushRegionStage): a region's 64 rows of rowwise pieces, its 128
/// columns of columnwise ones.
gpu::GPUFuncOp
buildDualQuantizeKernel(ModuleOp module, const DualQuantizeSpec &spec,
                        const QuantizeSchedule &forced, const ChipInfo &chip,
                        PersistentSchedule &schedule, int64_t &sharedBytes) {
  static_assert(kDualRegionPairRows * 32 == kStageRows &&
                    kDualRegionTileCols == kStageRowPieces &&
                    kDualRegionTileCols * 16 == kStageColumns &&
                    kDualRegionPairRows * 2 == kStageColumnPieces,
                "a region is one stage");
  MLIRContext *ctx = module.getContext();
  DualGeometry g(spec.shape);
  // With a ring (quantize-schedule ring<S>), dynamic shared memory: the
  // two encode tables, the code stage, the transpose buffer, the slots.
  int64_t elementBytes = spec.elementType.getIntOrFloatBitWidth() / 8;
  int64_t transposeBytes =
      transposeBufferType(spec.elementType).getNumElements() * elementBytes;
  constexpr int64_t kTableBytes = 128 * 4;
  int64_t stageOffset = 2 * kTableBytes;
  int64_t transposeOffset = stageOffset + kStageBytes;
  int64_t slotsOffset = llvm::alignTo(transposeOffset + transposeBytes, 16);
  auto ringBytes = [&](int64_t s) {
    return slotsOffset + s * ringSlotBytes(elementBytes);
  };
  int64_t stages =
      chosenRingStages(forced, dualDefaultRingStages(spec), ringBytes, chip);
  sharedBytes = stages ? ringBytes(stages) : 0;
  schedule = persistentSchedule(
      g.regions() * kThreadsPerBlock, /*reverse=*/true,
      blocksFittingShared(
          chosenBlocks(forced, dualQuantizeBlocksPerMultiprocessor(spec)),
                          sharedBytes, chip),
      chip);
  if (forced.gridBlocks > 0)
    schedule.blocks = std::min(schedule.groups, forced.gridBlocks);
  PersistentSchedule local = schedule;
  DualQuantizeSignature sig = dualQuantizeSignature(spec);
  std::string name =
      "nvfp4_dual_quantize_" + shapeName(spec.shape) + "x" +
      typeName(spec.elementType) + "_row" +
      quantizeNameSuffix(spec.rowStochastic, spec.rowType,
                         spec.rowAmaxArgument) +
      "_col" + (spec.rhtMask ? "_rht" : "") +
      quantizeNameSuffix(spec.columnStochastic, spec.columnType,
                         spec.columnAmaxArgument) +
      (spec.columnAmaxCopy ? "_amaxcopy" : "") +
      (spec.rhtMask ? "_mask" + std::to_string(*spec.rhtMask) : "") +
      (stages ? "_ring" + std::to_string(stages) : "") +
      (forced.gridBlocks ? "_grid" + std::to_string(schedule.blocks) : "") +
      forcedSuffix(forced, spec.rowStochastic || spec.columnStochastic) +
      (forced.rolledDual ? "_rolled" : "");
  ArithmeticForm form = chosenArithmetic(forced, /*wideByDefault=*/false);
  KernelOptions options;
  if (!stages) {
    options.workgroupBuffers = {encodeTableType(ctx), encodeTableType(ctx),
                                regionStageType(ctx),
                                transposeBufferType(spec.elementType)};
    options.workgroupAlignments = {0, 0, 16, 16};
  }
  options.minBlocksPerMultiprocessor =
      chosenBlocks(forced, dualQuantizeBlocksPerMultiprocessor(spec));
  return getOrCreateKernel(
      module, name, sig.types, options,
      [&](OpBuilder &b, Location loc, ValueRange args) {
        Value rowTable, columnTable, stageBytes, transposeBuffer, slots,
            rawPointer;
        if (stages) {
          Value raw = gpu::DynamicSharedMemoryOp::create(
              b, loc,
              MemRefType::get({ShapedType::kDynamic}, b.getI8Type(),
                              MemRefLayoutAttrInterface(),
                              gpu::AddressSpaceAttr::get(
                                  ctx, gpu::AddressSpace::Workgroup)));
          rowTable = sharedView(b, loc, raw, 0, 128, b.getF32Type());
          columnTable =
              sharedView(b, loc, raw, kTableBytes, 128, b.getF32Type());
          stageBytes =
              sharedView(b, loc, raw, stageOffset, kStageBytes, b.getI8Type());
          transposeBuffer =
              sharedView(b, loc, raw, transposeOffset,
                         transposeBufferType(spec.elementType).getNumElements(),
                         spec.elementType);
          slots =
              sharedView(b, loc, raw, slotsOffset,
                         stages * ringSlotBytes(elementBytes) / elementBytes,
                         spec.elementType);
          rawPointer = memrefPointer(b, loc, raw, /*addressSpace=*/3);
        } else {
          rowTable = args[args.size() - 4];
          columnTable = args[args.size() - 3];
          stageBytes = args[args.size() - 2];
          transposeBuffer = args.back();
        }
        RegionStage stage = regionStage(b, loc, stageBytes);
        auto optionalArg = [&](int64_t index) {
          return index >= 0 ? args[index] : Value();
        };
        auto outs = [&](int64_t index) {
          return index >= 0 ? SmallVector<Value>{args[index]}
                            : SmallVector<Value>();
        };
        ScalarBuilder::TensorScale rowScale = quantizePrologue(
            b, loc, args[sig.rowAmax], outs(sig.rowAmaxOut), rowTable);
        ScalarBuilder::TensorScale columnScale = quantizePrologue(
            b, loc, args[sig.columnAmax], outs(sig.columnAmaxOut),
            columnTable);
        Value rowSeed = optionalArg(sig.rowSeed);
        Value columnSeed = optionalArg(sig.columnSeed);
        Value rowWords = codesAsWords(b, loc, args[sig.rowCodes]);
        Value columnWords = codesAsWords(b, loc, args[sig.columnCodes]);
        auto compute =
            [&](OpBuilder &nb, Location nl, Value region, ValueRange loaded) {
              IndexMath nm{nb, nl};
              DualLane l = locateDualLane(nb, nl, region, g);
              Value tid = gpu::ThreadIdOp::create(nb, nl, gpu::Dimension::x);
              Value halfWarp = nm.div(tid, 16), i = nm.rem(tid, 16);
              // This half warp's pair row and tile column in the region.
              Value regionPair = nm.div(halfWarp, kDualRegionTileCols);
              Value regionCol = nm.rem(halfWarp, kDualRegionTileCols);
              // Tile row t (an index) of the lane's pair: its run `run`
              // (vector<16xT>) is input row `inputRow`.
              auto tileRow = [&](OpBuilder &tb, Location tl, Value t,
                                 Value run, Value inputRow) {
                IndexMath tm{tb, tl};
                Value rowRun = tm.add(tm.mul(inputRow, g.tileCols), l.tileCol);
                DualBlock row =
                    quantizeDualBlock(tb, tl, run, std::nullopt, rowScale,
                                      rowTable, rowSeed, rowRun, chip, form);
                Value rowLine = tm.add(tm.mul(regionPair, 32),
                                       tm.add(tm.mul(t, 16), i));
                stageCodes(tb, tl, stage, /*columns=*/false, rowLine,
                           regionCol, row.words);
                stageScale(tb, tl, stage, /*columns=*/false, rowLine,
                           regionCol, row.scaleCode);
                Value columnRun = tm.add(tm.mul(l.columnRow, g.tileRows),
                                         tm.add(tm.mul(l.pair, 2), t));
                DualBlock column = quantizeDualBlock(
                    tb, tl, transposeTile16(tb, tl, run, transposeBuffer),
                    spec.rhtMask, columnScale, columnTable, columnSeed,
                    columnRun, chip, form);
                Value columnLine = tm.add(tm.mul(regionCol, 16), i);
                Value columnPiece = tm.add(tm.mul(regionPair, 2), t);
                stageCodes(tb, tl, stage, /*columns=*/true, columnLine,
                           columnPiece, column.words);
                stageScale(tb, tl, stage, /*columns=*/true, columnLine,
                           columnPiece, column.scaleCode);
              };
              if (!forced.rolledDual) {
                for (int64_t t = 0; t < 2; ++t)
                  tileRow(nb, nl, nm.c(t), loaded[t], l.rows[t]);
              } else {
                // quantize-schedule rolled: a loop of two iterations whose
                // bound (gridDim.y + 1, the grid being one-dimensional)
                // neither LLVM nor ptxas can fold, so that it is not
                // unrolled: the two tile rows share one copy of the code.
                Value bound = nm.add(
                    gpu::GridDimOp::create(nb, nl, gpu::Dimension::y), nm.c(1));
                scf::ForOp::create(
                    nb, nl, nm.c(0), bound, nm.c(1), ValueRange(),
                    [&](OpBuilder &fb, Location fl, Value t, ValueRange) {
                      IndexMath fm{fb, fl};
                      Value first = fm.eq(t, 0);
                      auto pick = [&](Value x, Value y) -> Value {
                        return arith::SelectOp::create(fb, fl, first, x, y);
                      };
                      tileRow(fb, fl, t, pick(loaded[0], loaded[1]),
                              pick(l.rows[0], l.rows[1]));
                      scf::YieldOp::create(fb, fl);
                    });
              }

              // Where the pieces of tile row t of region pair `pair` and
              // region tile column `col` go, and whether that tile exists.
              Value firstPairRow =
                  nm.mul(nm.div(region, g.regionCols), kDualRegionPairRows);
              Value firstTileCol =
                  nm.mul(nm.rem(region, g.regionCols), kDualRegionTileCols);
              struct Tile {
                Value batch, pair, t, tileCol, valid;
              };
              auto tileOf = [&](IndexMath &pm, Value pair, Value t,
                                Value col) -> Tile {
                OpBuilder &pb = pm.b;
                Value pairRow = pm.add(firstPairRow, pair);
                Value tileCol = pm.add(firstTileCol, col);
                Value batch = pm.div(pairRow, g.pairsPerMatrix);
                Value inMatrix = pm.rem(pairRow, g.pairsPerMatrix);
                Value valid = arith::AndIOp::create(
                    pb, pm.loc, pm.lt(pairRow, g.pairRows()),
                    pm.lt(tileCol, g.tileCols));
                if (!g.evenTileRows())
                  valid = arith::AndIOp::create(
                      pb, pm.loc, valid,
                      pm.lt(pm.add(pm.mul(inMatrix, 2), t), g.tileRows));
                return {batch, inMatrix, t, tileCol, valid};
              };
              // Rowwise: line = pair * 32 + t * 16 + i, piece = column.
              auto rowPlace = [&](IndexMath &pm, Value line, Value piece) {
                Tile tile = tileOf(pm, pm.div(line, 32),
                                   pm.rem(pm.div(line, 16), 2), piece);
                Value row = pm.add(
                    pm.mul(pm.add(pm.mul(tile.batch, g.tileRows),
                                  pm.add(pm.mul(tile.pair, 2), tile.t)),
                           16),
                    pm.rem(line, 16));
                return std::pair<Tile, Value>{tile, row};
              };
              // Columnwise: line = column * 16 + i, piece = pair * 2 + t.
              auto columnPlace = [&](IndexMath &pm, Value line, Value piece) {
                Tile tile = tileOf(pm, pm.div(piece, 2), pm.rem(piece, 2),
                                   pm.div(line, 16));
                Value columnRow =
                    pm.add(pm.mul(tile.batch, g.cols),
                           pm.add(pm.mul(tile.tileCol, 16), pm.rem(line, 16)));
                return std::pair<Tile, Value>{tile, columnRow};
              };
              auto rowCodes = [&](OpBuilder &pb, Location pl, Value line,
                                  Value piece) -> PiecePlace {
                IndexMath pm{pb, pl};
                auto [tile, row] = rowPlace(pm, line, piece);
                return {pm.add(pm.mul(row, g.cols / 8), pm.mul(tile.tileCol, 2)),
                        tile.valid};
              };
              auto rowScales = [&](OpBuilder &pb, Location pl, Value line,
                                   Value piece) -> PiecePlace {
                IndexMath pm{pb, pl};
                auto [tile, row] = rowPlace(pm, line, piece);
                return {scaleOffset(pm, spec.rowType, row, tile.tileCol),
                        tile.valid};
              };
              auto columnCodes = [&](OpBuilder &pb, Location pl, Value line,
                                     Value piece) -> PiecePlace {
                IndexMath pm{pb, pl};
                auto [tile, columnRow] = columnPlace(pm, line, piece);
                Value run = pm.add(pm.mul(tile.pair, 2), tile.t);
                return {pm.add(pm.mul(columnRow, g.rows / 8), pm.mul(run, 2)),
                        tile.valid};
              };
              auto columnScales = [&](OpBuilder &pb, Location pl, Value line,
                                      Value piece) -> PiecePlace {
                IndexMath pm{pb, pl};
                auto [tile, columnRow] = columnPlace(pm, line, piece);
                Value run = pm.add(pm.mul(tile.pair, 2), tile.t);
                return {scaleOffset(pm, spec.columnType, columnRow, run),
                        tile.valid};
              };
              flushRegionStage(
                  nb, nl, stage,
                  {{/*columns=*/false, /*scales=*/false, rowWords, rowCodes},
                   {/*columns=*/false, /*scales=*/true, args[sig.rowScales],
                    rowScales},
                   {/*columns=*/true, /*scales=*/false, columnWords,
                    columnCodes},
                   {/*columns=*/true, /*scales=*/true, args[sig.columnScales],
                    columnScales}});
            };
        if (!stages) {
          emitPrefetchingLoop(
              b, loc, local, ValueRange(),
              [&](OpBuilder &nb, Location nl, Value region) {
                return loadDualRuns(nb, nl, args[sig.input], region, g);
              },
              [&](OpBuilder &nb, Location nl, Value region, ValueRange loaded,
                  ValueRange) {
                compute(nb, nl, region, loaded);
                return SmallVector<Value>();
              });
          return;
        }
        // The ring: staged line L of a region is row L % 16 of tile row
        // L / 16 % 2 of pair row L / 32 (a pair with one tile row repeats
        // it, like the lanes' loads); a lane reads its two runs, lines
        // pair * 32 + 16 t + i, from the slot.
        Value input =
            memrefPointer(b, loc, args[sig.input], /*addressSpace=*/1);
        auto issue = [&](OpBuilder &nb, Location nl, Value region, Value slot) {
          IndexMath nm{nb, nl};
          Value firstPairRow =
              nm.mul(nm.div(region, g.regionCols), kDualRegionPairRows);
          Value firstTileCol =
              nm.mul(nm.rem(region, g.regionCols), kDualRegionTileCols);
          issueRegionCopies(
              nb, nl, input, rawPointer, slotsOffset, slot, firstTileCol,
              g.tileCols, g.cols, elementBytes, [&](IndexMath &lm, Value line) {
                OpBuilder &lb = lm.b;
                Value pairRow = lm.add(firstPairRow, lm.div(line, 32));
                Value valid = lm.lt(pairRow, g.pairRows());
                Value pairRowC = arith::SelectOp::create(lb, lm.loc, valid,
                                                         pairRow, lm.c(0));
                Value batchIndex = lm.div(pairRowC, g.pairsPerMatrix);
                Value pair = lm.rem(pairRowC, g.pairsPerMatrix);
                Value tileRow =
                    lm.add(lm.mul(pair, 2), lm.rem(lm.div(line, 16), 2));
                if (!g.evenTileRows())
                  tileRow = arith::SelectOp::create(lb, lm.loc,
                                                    lm.lt(tileRow, g.tileRows),
                                                    tileRow, lm.mul(pair, 2));
                Value row = lm.add(
                    lm.mul(lm.add(lm.mul(batchIndex, g.tileRows), tileRow), 16),
                    lm.rem(line, 16));
                return std::pair<Value, Value>{row, valid};
              });
        };
        emitRingLoop(
            b, loc, local, stages, issue,
            [&](OpBuilder &nb, Location nl, Value region, Value slot) {
              IndexMath nm{nb, nl};
              Value tid = gpu::ThreadIdOp::create(nb, nl, gpu::Dimension::x);
              Value halfWarp = nm.div(tid, 16), i = nm.rem(tid, 16);
              Value pairLine =
                  nm.mul(nm.div(halfWarp, kDualRegionTileCols), 32);
              Value tileCol = nm.rem(halfWarp, kDualRegionTileCols);
              SmallVector<Value> loaded;
              for (int64_t t = 0; t < 2; ++t)
                loaded.push_back(readRingRun(
                    nb, nl, slots, slot,
                    nm.add(pairLine, nm.add(nm.c(16 * t), i)), tileCol));
              compute(nb, nl, region, loaded);
            });
      });
}

/// The amaxes a dual quantization computes for itself, from one read:
/// with `rowAmax`, max |x| (into the first amax buffer); into the last, the
/// columnwise amax -- the post-RHT amax of the transpose with `rhtMask`,
/// else max |x| again. Persistent over the dual quantize kernel's groups,
/// forward (the quantize kernel walks back).
gpu::GPUFuncOp buildDualAmaxKernel(ModuleOp module, ArrayRef<int64_t> shape,
                                   Type elementType, bool rowAmax,
                                   std::optional<uint32_t> rhtMask,
                                   const ChipInfo &chip,
                                   PersistentSchedule &schedule) {
  DualGeometry g(shape);
  schedule = persistentSchedule(g.regions() * kThreadsPerBlock,
                                /*reverse=*/false,
                                kDualAmaxBlocksPerMultiprocessor, chip);
  PersistentSchedule local = schedule;
  std::string name = "nvfp4_dual_quantize_amax_" + shapeName(shape) + "x" +
                     typeName(elementType) + (rowAmax ? "_row" : "") +
                     (rhtMask ? "_rht_mask" + std::to_string(*rhtMask)
                              : "_col");
  Type amaxType =
      MemRefType::get({1}, IntegerType::get(module.getContext(), 32));
  SmallVector<Type> types = {MemRefType::get({product(shape)}, elementType)};
  if (rowAmax)
    types.push_back(amaxType);
  types.push_back(amaxType);
  KernelOptions options;
  options.minBlocksPerMultiprocessor = kDualAmaxBlocksPerMultiprocessor;
  if (rhtMask) {
    options.workgroupBuffers = {transposeBufferType(elementType)};
    options.workgroupAlignments = {16};
  }
  return getOrCreateKernel(
      module, name, types, options,
      [&](OpBuilder &b, Location loc, ValueRange args) {
        ScalarBuilder s(b, loc);
        Value transposeBuffer = rhtMask ? args[types.size()] : Value();
        SmallVector<Value> result = emitPrefetchingLoop(
            b, loc, local, ValueRange{s.f32(0.0f), s.f32(0.0f)},
            [&](OpBuilder &nb, Location nl, Value region) {
              return loadDualRuns(nb, nl, args[0], region, g);
            },
            [&](OpBuilder &nb, Location nl, Value, ValueRange loaded,
                ValueRange carried) {
              // Clamped lanes repeat valid runs: harmless for a max.
              Value rowMax = carried[0], columnMax = carried[1];
              for (Value run : loaded) {
                if (rowAmax || !rhtMask)
                  rowMax = arith::MaxNumFOp::create(
                      nb, nl, rowMax,
                      prepareRun(nb, nl, run, std::nullopt).amax);
                if (rhtMask)
                  columnMax = arith::MaxNumFOp::create(
                      nb, nl, columnMax,
                      prepareRun(nb, nl, transposeTile16(nb, nl, run, transposeBuffer),
                                 rhtMask)
                          .amax);
              }
              return SmallVector<Value>{rowMax, columnMax};
            });
        if (rowAmax)
          warpMaxToAmax(b, loc, result[0], args[1]);
        warpMaxToAmax(b, loc, rhtMask ? result[1] : result[0],
                      args[types.size() - 1]);
      });
}

/// 16-point RHT of each 16-element run (the butterfly of hadamardSixteen).
gpu::GPUFuncOp buildHadamardKernel(ModuleOp module, RankedTensorType type,
                                   uint32_t signMask) {
  int64_t count = type.getNumElements();
  MemRefType flat = MemRefType::get({count}, type.getElementType());
  std::string name = "nvfp4_hadamard_" + std::to_string(count) + "x" +
                     typeName(type.getElementType()) + "_mask" +
                     std::to_string(signMask);
  return getOrCreateKernel(
      module, name, {flat, flat}, kThreadsPerBlock,
      [&](OpBuilder &b, Location loc, ValueRange args) {
        IndexMath m{b, loc};
        Value tid = globalThreadIndex(b, loc);
        Value valid = m.lt(tid, count / 16);
        Value chunk = arith::SelectOp::create(b, loc, valid, tid, m.c(0));
        Value base = m.mul(chunk, 16);
        SmallVector<Value> out =
            hadamardSixteen(b, loc, loadSixteen(b, loc, args[0], base),
                            signMask, type.getElementType());
        auto ifValid = scf::IfOp::create(b, loc, valid, false);
        OpBuilder::InsertionGuard guard(b);
        b.setInsertionPointToStart(ifValid.thenBlock());
        Value vector = vector::FromElementsOp::create(
            b, loc, VectorType::get({16}, type.getElementType()), out);
        alignedStore(b, loc, vector, args[1], base,
                     runAlignment(type.getElementType()));
      });
}

/// (e2m1 * s_b) * amax / 2688 for each element, rounded to the result type.
gpu::GPUFuncOp buildDequantizeKernel(ModuleOp module,
                                     BlockScaledTensorType type,
                                     Type resultElementType) {
  MLIRContext *ctx = module.getContext();
  int64_t count = product(type.getShape());
  int64_t cols = type.getCols(), colBlocks = cols / 16;
  auto i8 = IntegerType::get(ctx, 8);
  SmallVector<Type> argTypes = {
      MemRefType::get({count / 2}, i8),
      MemRefType::get({product(type.getScalesType().getShape())}, i8),
      MemRefType::get({1}, IntegerType::get(ctx, 32)),
      MemRefType::get({count}, resultElementType)};
  std::string name = "nvfp4_dequantize_" + shapeName(type.getShape()) + "_" +
                     std::to_string(type.getBlockRows()) + "x16" +
                     (type.getLayout() == ScaleLayout::Linear ? "" : "_swizzled") +
                     (type.hasDecodeScale() ? "_decode_scale" : "") +
                     "_to_" + typeName(resultElementType);
  return getOrCreateKernel(
      module, name, argTypes, kThreadsPerBlock,
      [&](OpBuilder &b, Location loc, ValueRange args) {
        ScalarBuilder s(b, loc);
        IndexMath m{b, loc};
        Value tid = globalThreadIndex(b, loc);
        Value valid = m.lt(tid, count / 16);
        Value segment = arith::SelectOp::create(b, loc, valid, tid, m.c(0));
        Value row = m.div(segment, colBlocks), colBlock = m.rem(segment, colBlocks);
        Value base = m.add(m.mul(row, cols), m.mul(colBlock, 16));
        // A checkpoint's decode scale is the factor itself, bit for bit.
        Value factor = loadAmax(b, loc, args[2]);
        if (!type.hasDecodeScale())
          factor = arith::DivFOp::create(b, loc, factor, s.f32(2688.0f));
        Value scale = s.decodeE4M3(memref::LoadOp::create(
            b, loc, args[1], ValueRange{scaleOffset(m, type, row, colBlock)}));
        Value packed = alignedLoad(b, loc, args[0], m.div(base, 2), 8, 8);
        SmallVector<Value> out;
        for (int64_t j = 0; j < 16; ++j) {
          Value byte = vector::ExtractOp::create(b, loc, packed,
                                                 ArrayRef<int64_t>{j / 2});
          Value code = j % 2 ? arith::ShRUIOp::create(b, loc, byte, s.i8(4))
                             : byte;
          Value value = arith::MulFOp::create(
              b, loc,
              arith::MulFOp::create(b, loc, s.decodeE2M1(code), scale), factor);
          out.push_back(s.fromF32(value, resultElementType));
        }
        auto ifValid = scf::IfOp::create(b, loc, valid, false);
        OpBuilder::InsertionGuard guard(b);
        b.setInsertionPointToStart(ifValid.thenBlock());
        Value vector = vector::FromElementsOp::create(
            b, loc, VectorType::get({16}, resultElementType), out);
        alignedStore(b, loc, vector, args[3], base,
                     runAlignment(resultElementType));
      });
}

//===----------------------------------------------------------------------===//
// Host-side patterns
//===----------------------------------------------------------------------===//

/// A tensor operand as a flat device buffer.
Value tensorToFlatBuffer(OpBuilder &b, Location loc, Value tensor) {
  auto type = cast<RankedTensorType>(tensor.getType());
  Value buffer = bufferization::ToBufferOp::create(
      b, loc, MemRefType::get(type.getShape(), type.getElementType()), tensor,
      /*readOnly=*/true);
  return flatten(b, loc, buffer);
}

/// Computes the amax of the flat buffer `input` into a new device buffer.
Value launchAmax(OpBuilder &b, Location loc, ModuleOp module, Value input,
                 const ChipInfo &chip) {
  Value amax = allocDevice(
      b, loc, MemRefType::get({1}, b.getI32Type()), /*zeroFill=*/true);
  int64_t threads = 0;
  gpu::GPUFuncOp kernel = buildAmaxKernel(
      module, cast<MemRefType>(input.getType()), chip, threads);
  launchKernel(b, loc, kernel, threads, kThreadsPerBlock, {input, amax});
  return amax;
}

/// The amax (FP32 bits, device buffer) of the RHT of the flat BF16 buffer
/// `input` with `signMask`, without writing the transformed tensor.
Value launchHadamardAmax(OpBuilder &b, Location loc, ModuleOp module,
                         Value input, uint32_t signMask, const ChipInfo &chip) {
  auto inputType = cast<MemRefType>(input.getType());
  Value amax = allocDevice(b, loc, MemRefType::get({1}, b.getI32Type()),
                           /*zeroFill=*/true);
  PersistentSchedule schedule{};
  gpu::GPUFuncOp kernel =
      buildHadamardAmaxKernel(module, inputType, signMask, chip, schedule);
  launchKernel(b, loc, kernel, schedule.blocks * kThreadsPerBlock,
               kThreadsPerBlock, {input, amax});
  return amax;
}

struct AmaxToGPU : OpConversionPattern<AmaxOp> {
  AmaxToGPU(const TypeConverter &converter, MLIRContext *ctx,
            const ChipInfo &chip)
      : OpConversionPattern(converter, ctx), chip(chip) {}

  LogicalResult
  matchAndRewrite(AmaxOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    ModuleOp module = op->getParentOfType<ModuleOp>();
    Value input = tensorToFlatBuffer(rewriter, loc, adaptor.getInput());
    Value amax = op.getHadamard()
                     ? launchHadamardAmax(rewriter, loc, module, input,
                                          *op.getHadamard(), chip)
                     : launchAmax(rewriter, loc, module, input, chip);
    Value bits = memref::LoadOp::create(rewriter, loc, amax,
                                        ValueRange{indexConstant(rewriter, loc, 0)});
    rewriter.replaceOpWithNewOp<arith::BitcastOp>(op, rewriter.getF32Type(), bits);
    return success();
  }

  const ChipInfo &chip;
};

/// The device buffers of a quantization: codes, scales and amax bits, and
/// the codes and scales of its transposed copy when one was asked for.
struct QuantizedBuffers {
  Value codes, scales, amax;
  Value transposedCodes, transposedScales, transposedAmax;
};

/// How a quantization gets its tensor amax.
struct AmaxInput {
  Value value;          ///< the given f32 amax; null: an amax pass
  bool argument = false; ///< `value` is an argument of the host function
};

/// Whether `value` is an argument of the function that holds it: the
/// kernel manifest can pass it to a kernel as a scalar parameter.
bool isFunctionArgument(Value value) {
  auto argument = dyn_cast<BlockArgument>(value);
  if (!argument)
    return false;
  // During the conversion a function's original entry block may already
  // be detached (its signature converted): no region, not an argument the
  // manifest can name.
  Block *block = argument.getOwner();
  Region *region = block ? block->getParent() : nullptr;
  return region && &region->front() == block &&
         isa_and_present<FunctionOpInterface>(region->getParentOp());
}

/// A quantization's amax as its kernel takes it: `param` is the kernel's
/// amax argument -- the device buffer of FP32 bits, or with `argument` the
/// f32 itself, which the kernel then writes to `buffer` -- and `buffer` the
/// result's amax buffer.
struct KernelAmax {
  Value buffer, param;
  bool argument = false;
};

/// The KernelAmax of `given`, or of the buffer an amax pass computed
/// (`computed`) when none is given. A given amax that a kernel computed
/// stays in its device buffer; one that is an argument of the host function
/// is a kernel parameter (the manifest passes it; no memset launch); any
/// other goes through a memset.
KernelAmax kernelAmaxOf(OpBuilder &b, Location loc, AmaxInput given,
                        Value computed) {
  if (!given.value)
    return {computed, computed, false};
  if (given.argument)
    return {allocDevice(b, loc, MemRefType::get({1}, b.getI32Type()), false),
            given.value, true};
  Value buffer = givenAmaxBuffer(b, loc, given.value);
  return {buffer, buffer, false};
}

/// The device buffers of the quantization of the flat buffer `input` to
/// `type`. The amax: an amax pass when none is given (with `rhtMask`, the
/// fused post-RHT amax pass), else kernelAmaxOf's rules. With `rhtMask`
/// the RHT of `input` (1x16 blocks only) is computed in the quantize
/// kernel; with `transposedCopy` (16x16, linear scales) the kernel also
/// writes the nvfp4.transpose of the result (of type `transposedType`).
FailureOr<QuantizedBuffers>
quantizeToBuffers(ConversionPatternRewriter &rewriter, Location loc,
                  const TypeConverter &converter, ModuleOp module,
                  BlockScaledTensorType type, Value input, AmaxInput given,
                  Value seed, bool stochastic, std::optional<uint32_t> rhtMask,
                  BlockScaledTensorType transposedType,
                  const QuantizeSchedule &tileForced, const ChipInfo &chip) {
  bool transposedCopy = static_cast<bool>(transposedType);
  auto inputType = cast<MemRefType>(input.getType());
  int64_t count = inputType.getNumElements();
  Value computed;
  if (!given.value)
    computed = rhtMask ? launchHadamardAmax(rewriter, loc, module, input,
                                            *rhtMask, chip)
                       : launchAmax(rewriter, loc, module, input, chip);
  if (count == 0)
    given.argument = false;
  KernelAmax amax = kernelAmaxOf(rewriter, loc, given, computed);

  FailureOr<std::pair<Value, Value>> parts =
      allocateQuantizedParts(rewriter, loc, converter, type);
  if (failed(parts))
    return failure();
  QuantizedBuffers result;
  result.amax = amax.buffer;
  result.codes = parts->first;
  result.scales = parts->second;
  if (count == 0)
    return result;

  SmallVector<Value> args = {input, amax.param,
                             flatten(rewriter, loc, result.codes),
                             flatten(rewriter, loc, result.scales)};
  if (transposedCopy) {
    SmallVector<Type> transposedParts;
    if (failed(converter.convertType(transposedType, transposedParts)))
      return failure();
    result.transposedCodes = allocDevice(
        rewriter, loc, cast<MemRefType>(transposedParts[0]), false);
    result.transposedScales = allocDevice(
        rewriter, loc, cast<MemRefType>(transposedParts[1]), false);
    result.transposedAmax = allocDevice(
        rewriter, loc, cast<MemRefType>(transposedParts[2]), false);
    args.push_back(flatten(rewriter, loc, result.transposedCodes));
    args.push_back(flatten(rewriter, loc, result.transposedScales));
    args.push_back(result.transposedAmax);
  }
  if (amax.argument)
    args.push_back(amax.buffer);
  if (stochastic)
    args.push_back(seed);
  Type elementType = inputType.getElementType();
  PersistentSchedule schedule{};
  int64_t sharedBytes = 0;
  gpu::GPUFuncOp kernel =
      type.getBlockRows() == 1
          ? buildRowQuantizeKernel(module, type, elementType, stochastic,
                                   rhtMask, amax.argument, tileForced, chip,
                                   schedule)
          : buildTileQuantizeKernel(module, type, elementType, stochastic,
                                    amax.argument, transposedCopy, tileForced,
                                    chip, schedule, sharedBytes);
  if (sharedBytes > chip.maxSharedMemoryPerBlock) {
    emitError(loc) << "cannot use quantize-schedule ring"
                   << tileForced.ringStages << ": the kernel needs "
                   << sharedBytes << " bytes of shared memory, " << chip.name
                   << " has " << chip.maxSharedMemoryPerBlock;
    return failure();
  }
  if (sharedBytes)
    launchKernel(rewriter, loc, kernel, {schedule.blocks, 1, 1},
                 kThreadsPerBlock, sharedBytes, args);
  else
    launchKernel(rewriter, loc, kernel, schedule.blocks * kThreadsPerBlock,
                 kThreadsPerBlock, args);
  return result;
}

struct QuantizeToGPU : OpConversionPattern<QuantizeOp> {
  QuantizeToGPU(const TypeConverter &converter, MLIRContext *ctx,
                const ChipInfo &chip, const QuantizeSchedule &tileForced)
      : OpConversionPattern(converter, ctx), chip(chip),
        tileForced(tileForced) {}

  LogicalResult
  matchAndRewrite(QuantizeOp op, OneToNOpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    ModuleOp module = op->getParentOfType<ModuleOp>();
    BlockScaledTensorType type = op.getResult().getType();
    if (type.isMX())
      return rewriter.notifyMatchFailure(op, "MX: MXKernels.cpp");
    Value input = tensorToFlatBuffer(rewriter, loc, adaptor.getInput().front());
    bool stochastic = op.getRounding() == RoundingMode::Stochastic;
    AmaxInput amax;
    if (!adaptor.getAmax().empty())
      amax = {adaptor.getAmax().front(), isFunctionArgument(op.getAmax())};
    // A weight's dgrad copy (nvfp4.transpose of a 16x16 quantization,
    // nvfp4-fuse-quantization's share-weight-quantization) comes out of the
    // quantize kernel itself: the codes are in its registers already.
    SmallVector<TransposeOp> transposes;
    if (type.isTwoDimensionalBlock() && type.getLayout() == ScaleLayout::Linear)
      for (Operation *user : op->getUsers())
        if (auto transpose = dyn_cast<TransposeOp>(user))
          transposes.push_back(transpose);
    FailureOr<QuantizedBuffers> parts = quantizeToBuffers(
        rewriter, loc, *getTypeConverter(), module, type, input, amax,
        stochastic ? adaptor.getSeed().front() : Value(), stochastic,
        op.getHadamard(),
        transposes.empty() ? BlockScaledTensorType()
                           : transposes.front().getResult().getType(),
        tileForced, chip);
    if (failed(parts))
      return rewriter.notifyMatchFailure(op, "unconvertible result type");
    for (TransposeOp transpose : transposes)
      rewriter.replaceOpWithMultiple(
          transpose,
          {{parts->transposedCodes, parts->transposedScales,
            parts->transposedAmax}});
    rewriter.replaceOpWithMultiple(
        op, {{parts->codes, parts->scales, parts->amax}});
    return success();
  }

  const ChipInfo &chip;
  QuantizeSchedule tileForced;
};

/// nvfp4.dual_quantize: the amax pass its default amaxes need (one read of
/// the input for both; none when both are given), then one kernel that
/// reads the input once and writes both quantizations.
struct DualQuantizeToGPU : OpConversionPattern<DualQuantizeOp> {
  DualQuantizeToGPU(const TypeConverter &converter, MLIRContext *ctx,
                    const ChipInfo &chip, const QuantizeSchedule &tileForced)
      : OpConversionPattern(converter, ctx), chip(chip),
        tileForced(tileForced) {}

  LogicalResult
  matchAndRewrite(DualQuantizeOp op, OneToNOpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    ModuleOp module = op->getParentOfType<ModuleOp>();
    Value input = tensorToFlatBuffer(rewriter, loc, adaptor.getInput().front());
    auto inputType = cast<RankedTensorType>(op.getInput().getType());
    DualQuantizeSpec spec;
    spec.shape.assign(inputType.getShape().begin(), inputType.getShape().end());
    spec.elementType = inputType.getElementType();
    spec.rowType = op.getRowwise().getType();
    spec.columnType = op.getColumnwise().getType();
    spec.rowStochastic = op.getRounding() == RoundingMode::Stochastic;
    spec.columnStochastic =
        op.getColumnwiseRounding() == RoundingMode::Stochastic;
    spec.rhtMask = op.getHadamard();

    AmaxInput rowGiven, columnGiven;
    if (!adaptor.getAmax().empty())
      rowGiven = {adaptor.getAmax().front(), isFunctionArgument(op.getAmax())};
    if (!adaptor.getColumnwiseAmax().empty())
      columnGiven = {adaptor.getColumnwiseAmax().front(),
                     isFunctionArgument(op.getColumnwiseAmax())};
    // The amaxes to compute: both from one pass (the columnwise one after
    // the RHT of the transpose, or equal to the rowwise one), or one.
    Value rowComputed, columnComputed;
    auto newAmaxBuffer = [&] {
      return allocDevice(rewriter, loc,
                         MemRefType::get({1}, rewriter.getI32Type()),
                         /*zeroFill=*/true);
    };
    auto launchDualAmax = [&](bool rowAmax) {
      SmallVector<Value> args = {input};
      if (rowAmax)
        args.push_back(rowComputed = newAmaxBuffer());
      args.push_back(columnComputed = newAmaxBuffer());
      PersistentSchedule schedule{};
      gpu::GPUFuncOp kernel =
          buildDualAmaxKernel(module, spec.shape, spec.elementType, rowAmax,
                              spec.rhtMask, chip, schedule);
      launchKernel(rewriter, loc, kernel, schedule.blocks * kThreadsPerBlock,
                   kThreadsPerBlock, args);
    };
    if (!rowGiven.value && !columnGiven.value)
      launchDualAmax(/*rowAmax=*/true);
    else if (!columnGiven.value && spec.rhtMask)
      launchDualAmax(/*rowAmax=*/false);
    else if (!columnGiven.value)
      columnComputed = launchAmax(rewriter, loc, module, input, chip);
    else if (!rowGiven.value)
      rowComputed = launchAmax(rewriter, loc, module, input, chip);
    KernelAmax row = kernelAmaxOf(rewriter, loc, rowGiven, rowComputed);
    KernelAmax column =
        kernelAmaxOf(rewriter, loc, columnGiven, columnComputed);
    // One amax buffer for both parts (an amax a kernel computed, given to
    // both): the kernel copies it, so that each result has its own buffer.
    bool columnCopy = !row.argument && !column.argument &&
                      row.buffer == column.buffer;
    if (columnCopy)
      column.buffer = allocDevice(
          rewriter, loc, MemRefType::get({1}, rewriter.getI32Type()), false);
    spec.rowAmaxArgument = row.argument;
    spec.columnAmaxArgument = column.argument;
    spec.columnAmaxCopy = columnCopy;

    FailureOr<std::pair<Value, Value>> rowParts =
        allocateQuantizedParts(rewriter, loc, *getTypeConverter(), spec.rowType);
    FailureOr<std::pair<Value, Value>> columnParts = allocateQuantizedParts(
        rewriter, loc, *getTypeConverter(), spec.columnType);
    if (failed(rowParts) || failed(columnParts))
      return rewriter.notifyMatchFailure(op, "unconvertible result type");
    SmallVector<Value> args = {
        input,
        row.param,
        column.param,
        flatten(rewriter, loc, rowParts->first),
        flatten(rewriter, loc, rowParts->second),
        flatten(rewriter, loc, columnParts->first),
        flatten(rewriter, loc, columnParts->second)};
    if (row.argument)
      args.push_back(row.buffer);
    if (column.argument || columnCopy)
      args.push_back(column.buffer);
    if (spec.rowStochastic)
      args.push_back(adaptor.getSeed().front());
    if (spec.columnStochastic)
      args.push_back(adaptor.getColumnwiseSeed().front());
    PersistentSchedule schedule{};
    int64_t sharedBytes = 0;
    gpu::GPUFuncOp kernel = buildDualQuantizeKernel(
        module, spec, tileForced, chip, schedule, sharedBytes);
    if (sharedBytes > chip.maxSharedMemoryPerBlock)
      return op.emitOpError("cannot use quantize-schedule ring")
             << tileForced.ringStages << ": the kernel needs " << sharedBytes
             << " bytes of shared memory, " << chip.name << " has "
             << chip.maxSharedMemoryPerBlock;
    if (sharedBytes)
      launchKernel(rewriter, loc, kernel, {schedule.blocks, 1, 1},
                   kThreadsPerBlock, sharedBytes, args);
    else
      launchKernel(rewriter, loc, kernel, schedule.blocks * kThreadsPerBlock,
                   kThreadsPerBlock, args);
    rewriter.replaceOpWithMultiple(
        op, {{rowParts->first, rowParts->second, row.buffer},
             {columnParts->first, columnParts->second, column.buffer}});
    return success();
  }

  const ChipInfo &chip;
  QuantizeSchedule tileForced;
};

/// An RHT on its own (nvfp4-fuse-quantization folds the ones that feed
/// quantizations into them): one kernel writing the transformed tensor.
struct HadamardToGPU : OpConversionPattern<HadamardOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(HadamardOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto type = cast<RankedTensorType>(op.getType());
    if (!type.hasStaticShape())
      return op.emitOpError("needs a static shape on the GPU path");
    ModuleOp module = op->getParentOfType<ModuleOp>();
    Value input = tensorToFlatBuffer(rewriter, loc, adaptor.getInput());
    Value result = allocDevice(
        rewriter, loc, MemRefType::get(type.getShape(), type.getElementType()),
        false);
    gpu::GPUFuncOp kernel = buildHadamardKernel(module, type, op.getSignMask());
    launchKernel(rewriter, loc, kernel, type.getNumElements() / 16,
                 kThreadsPerBlock, {input, flatten(rewriter, loc, result)});
    rewriter.replaceOpWithNewOp<bufferization::ToTensorOp>(
        op, type, result, /*restrict=*/true, /*writable=*/true);
    return success();
  }
};

struct DequantizeToGPU : OpConversionPattern<DequantizeOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(DequantizeOp op, OneToNOpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    ModuleOp module = op->getParentOfType<ModuleOp>();
    auto resultType = cast<RankedTensorType>(op.getType());
    if (op.getInput().getType().isMX())
      return rewriter.notifyMatchFailure(op, "MX: MXKernels.cpp");
    ValueRange parts = adaptor.getInput();
    Value result = allocDevice(
        rewriter, loc,
        MemRefType::get(resultType.getShape(), resultType.getElementType()),
        false);
    gpu::GPUFuncOp kernel = buildDequantizeKernel(
        module, op.getInput().getType(), resultType.getElementType());
    launchKernel(rewriter, loc, kernel, resultType.getNumElements() / 16,
                 kThreadsPerBlock,
                 {flatten(rewriter, loc, parts[0]),
                  flatten(rewriter, loc, parts[1]), parts[2],
                  flatten(rewriter, loc, result)});
    rewriter.replaceOpWithNewOp<bufferization::ToTensorOp>(
        op, resultType, result, /*restrict=*/true, /*writable=*/true);
    return success();
  }
};
} // namespace

//===----------------------------------------------------------------------===//
// Shared with the GEMM epilogues (KernelUtils.h)
//===----------------------------------------------------------------------===//

FailureOr<std::pair<Value, Value>>
kernels::allocateQuantizedParts(OpBuilder &b, Location loc,
                                const TypeConverter &converter,
                                BlockScaledTensorType type) {
  SmallVector<Type> partTypes;
  if (failed(converter.convertType(type, partTypes)))
    return failure();
  bool padded = type.getLayout() != ScaleLayout::Linear &&
                (type.getRows() % 128 != 0 || (type.getCols() / 16) % 4 != 0);
  return std::pair<Value, Value>{
      allocDevice(b, loc, cast<MemRefType>(partTypes[0]), false),
      allocDevice(b, loc, cast<MemRefType>(partTypes[1]),
                  /*zeroFill=*/padded)};
}

Value kernels::halfWarpMaxOf(OpBuilder &b, Location loc, Value value) {
  return halfWarpMax(b, loc, value);
}

Value kernels::encodePairNearestEven(OpBuilder &b, Location loc, Value lo,
                                     Value hi, const ChipInfo &chip) {
  if (chip.has(Instruction::CvtE2M1x2))
    // cvt.rn.satfinite.e2m1x2.f32 puts its first operand in the high nibble.
    return NVVM::ConvertF32x2ToF4x2Op::create(
        b, loc, b.getI8Type(), hi, lo, /*relu=*/false,
        b.getType<Float4E2M1FNType>());
  // The GEMM epilogues' emulation keeps the session-9 forms (the FMA-pipe
  // ones were measured only in the quantize kernels).
  ScalarBuilder s(b, loc);
  Value low = arith::AndIOp::create(
      b, loc, encodeNearestFast(b, loc, lo, /*mulHigh=*/false), s.i32(0xF));
  Value high = arith::ShLIOp::create(
      b, loc, encodeNearestFast(b, loc, hi, /*mulHigh=*/false), s.i32(4));
  return arith::TruncIOp::create(b, loc, b.getI8Type(),
                                 arith::OrIOp::create(b, loc, low, high));
}

kernels::QuantizedRun
kernels::quantizeRunNearestEven(OpBuilder &b, Location loc,
                                ArrayRef<Value> values,
                                const ScalarBuilder::TensorScale &scale,
                                const ChipInfo &chip) {
  // As encodePairNearestEven: the session-9 forms for the GEMM epilogue and
  // the producer quantization, where the FMA-pipe ones were not measured.
  ScaledRun run = scaleRun(b, loc, values, scale);
  return {run.scaleCode, packNearestEven(b, loc, run.scaled, chip,
                                         /*fmaForms=*/false)};
}

FailureOr<QuantizeSchedule>
mlir::nvfp4::parseQuantizeSchedule(StringRef text, std::string &message) {
  QuantizeSchedule schedule;
  if (text.empty())
    return schedule;
  auto fail = [&](const Twine &why) -> FailureOr<QuantizeSchedule> {
    message = ("quantize-schedule '" + text + "': " + why).str();
    return failure();
  };
  // A part "<prefix><digits>" with nothing after the digits.
  auto number = [](StringRef part, StringRef prefix, int64_t &value) {
    if (!part.consume_front(prefix) || part.empty() ||
        part.find_first_not_of("0123456789") != StringRef::npos)
      return false;
    return !part.getAsInteger(10, value);
  };
  SmallVector<StringRef> parts;
  text.split(parts, '_');
  for (auto [index, part] : llvm::enumerate(parts)) {
    int64_t value = 0;
    bool path = part == "registers" || part.starts_with("ring");
    if (path && index != 0)
      return fail("the input path '" + part + "' must come first");
    if (part == "registers") {
      schedule.ringStages = 0;
    } else if (part.starts_with("ring")) {
      if (!number(part, "ring", value) || value < 2 || value > 4)
        return fail("a ring has 2 to 4 stages");
      schedule.ringStages = value;
    } else if (part.starts_with("grid")) {
      if (!number(part, "grid", value) || value < 1)
        return fail("'" + part + "': a grid has at least 1 block");
      schedule.gridBlocks = value;
    } else if (part.starts_with("blocks")) {
      if (!number(part, "blocks", value) || value < 1 || value > 8)
        return fail("'" + part + "': 1 to 8 blocks a multiprocessor");
      schedule.blocksPerMultiprocessor = value;
    } else if (part == "mulwide" || part == "mulsplit") {
      schedule.philoxWide = part == "mulwide";
    } else if (part == "signlegacy") {
      schedule.legacySigns = true;
    } else if (part.starts_with("runs")) {
      if (!number(part, "runs", value) || value < 1 || value > 2)
        return fail("'" + part + "': 1 or 2 runs a work unit");
      schedule.runsPerUnit = value;
    } else if (part == "rolled") {
      schedule.rolledDual = true;
    } else if (part == "fmaforms" || part == "aluforms") {
      schedule.fmaForms = part == "fmaforms";
    } else {
      return fail("unknown part '" + part +
                  "' (expected registers, ring<stages>, grid<blocks>, "
                  "blocks<n>, mulwide, mulsplit, signlegacy, runs<n>, "
                  "rolled, fmaforms or aluforms)");
    }
  }
  return schedule;
}

void mlir::nvfp4::populateQuantizeToGPUPatterns(
    const TypeConverter &converter, RewritePatternSet &patterns,
    const ChipInfo &chip, const QuantizeSchedule &schedule) {
  MLIRContext *ctx = patterns.getContext();
  patterns.add<DequantizeToGPU, HadamardToGPU>(converter, ctx);
  patterns.add<AmaxToGPU>(converter, ctx, chip);
  patterns.add<QuantizeToGPU, DualQuantizeToGPU>(converter, ctx, chip,
                                                 schedule);
}
