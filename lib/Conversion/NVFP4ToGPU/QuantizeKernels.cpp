//===- QuantizeKernels.cpp - amax, quantize, hadamard, dequantize kernels -===//
//
// Part of the nvfp4 project.
//
// Elementwise NVFP4 kernels. A run is 16 consecutive elements of a row (one
// 1x16 block, one Philox group, one row of a 16x16 tile, one RHT chunk),
// loaded with 16-byte vector loads and computed in registers; the 1x16
// kernels give each thread several runs with all their loads issued first.
// The arithmetic is the ScalarBuilder's, i.e. lib/Numerics's order of FP32
// operations, so the bytes equal the reference lowering's. Only the final
// E2M1 rounding differs per chip: the hardware cvt where it exists, exact
// integer/float emulation elsewhere. A quantization or amax with a
// `hadamard` sign mask (nvfp4-fuse-quantization's fold-hadamard) computes
// the RHT in registers: no intermediate tensor in device memory.
//
//===----------------------------------------------------------------------===//

#include "KernelBuilder.h"
#include "KernelUtils.h"
#include "nvfp4/Conversion/NVFP4ToGPU/NVFP4ToGPU.h"
#include "nvfp4/Conversion/Utils/ElementBuilders.h"
#include "nvfp4/Dialect/NVFP4/IR/NVFP4Ops.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
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
// Index arithmetic helpers
//===----------------------------------------------------------------------===//

namespace {

/// Where thread `segment` (one 16-element row run) sits in a
/// [rows, cols] matrix (batch folded into rows) quantized with
/// `blockRows` x 16 blocks. For 16x16 blocks the 16 rows of a tile go to 16
/// consecutive threads so that they can reduce the tile amax by shuffles.
struct SegmentPosition {
  Value row;       ///< flattened row
  Value colBlock;  ///< column block (cols / 16 of them)
  Value rowInTile; ///< 0..15 (16x16 blocks only)
  Value tileRow;   ///< row / 16 (16x16 blocks only)
};

SegmentPosition locateSegment(IndexMath &m, Value segment, int64_t colBlocks,
                              int64_t blockRows) {
  if (blockRows == 1)
    return {m.div(segment, colBlocks), m.rem(segment, colBlocks), Value(),
            Value()};
  Value tile = m.div(segment, 16), rowInTile = m.rem(segment, 16);
  Value tileRow = m.div(tile, colBlocks);
  return {m.add(m.mul(tileRow, 16), rowInTile), m.rem(tile, colBlocks),
          rowInTile, tileRow};
}

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

/// The 16 elements of a loaded run as f32 values.
SmallVector<Value> extendSixteen(OpBuilder &b, Location loc, Value vector) {
  ScalarBuilder s(b, loc);
  SmallVector<Value> values;
  for (int64_t j = 0; j < 16; ++j)
    values.push_back(
        s.toF32(vector::ExtractOp::create(b, loc, vector, ArrayRef<int64_t>{j})));
  return values;
}

/// Loads 16 elements at `base` as f32 values.
SmallVector<Value> loadSixteen(OpBuilder &b, Location loc, Value memref,
                               Value base) {
  return extendSixteen(b, loc, loadSixteenRaw(b, loc, memref, base));
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

//===----------------------------------------------------------------------===//
// E2M1 encoding without the Blackwell conversions
//===----------------------------------------------------------------------===//
//
// Both encoders work on ys = max(min(y, 6), -6): every |y| >= 6 has code 7
// in both roundings (SR: t = fma(u, 2, a) >= 6 truncates to 6), and NaN
// becomes +6 (min/max return the non-NaN operand), so NaN -> code 7 with
// no separate test. a = |ys| lies in [0, 6]; let E = max(biased exponent of
// a, 127), i.e. the E2M1 binade [0, 2), [2, 4) or [4, 8).
//
// Nearest even: t = a + 2^(E - 105) (an FP32 add, RNE) leaves
// round(a / step) in the low bits of t, step = 2^(E - 128) being the E2M1
// spacing of the binade; the magnitude code is that count plus
// 2 * (E - 127). The ties go to the even count, which is the even E2M1
// mantissa: 0.25 -> 0, 0.75 -> 1, 2.5 -> 2, 5 -> 4.
//
// Stochastic (NUMERICS.md section 5): u = byte / 256 (built exactly from
// bits), t = fma(u, step(a), a) < 8, then t truncated to the E2M1 grid of
// its own binade: for t >= 1 that is the FP32 exponent and first mantissa
// bit, code = (bits(t) >> 22) - 252; [0.5, 1) is code 1 and [0, 0.5) code 0.
//
// The sign is ys's sign bit, so -0.0 and negatives that round to zero give
// code 8, as encodeE2M1 does. Integer/float operations only: ~10
// instructions per element instead of the 7 comparisons + selects + NaN test
// of the generic encoder (and no division in SR).

struct ClampedValue {
  Value bits;      ///< i32 bits of ys
  Value magnitude; ///< f32 |ys|
  Value binade;    ///< i32 E = max(biased exponent of |ys|, 127)
};

ClampedValue clampForE2M1(OpBuilder &b, Location loc, Value y) {
  ScalarBuilder s(b, loc);
  Value ys = arith::MaxNumFOp::create(
      b, loc, arith::MinNumFOp::create(b, loc, y, s.f32(6.0f)), s.f32(-6.0f));
  Value bits = arith::BitcastOp::create(b, loc, b.getI32Type(), ys);
  Value magnitudeBits = arith::AndIOp::create(b, loc, bits, s.i32(0x7FFFFFFF));
  Value exponent = arith::ShRUIOp::create(b, loc, magnitudeBits, s.i32(23));
  Value binade = arith::MaxUIOp::create(b, loc, exponent, s.i32(127));
  Value magnitude =
      arith::BitcastOp::create(b, loc, b.getF32Type(), magnitudeBits);
  return {bits, magnitude, binade};
}

/// The sign nibble bit (8 for a negative ys) or'ed into a magnitude code.
Value withSign(OpBuilder &b, Location loc, Value code, Value bits) {
  ScalarBuilder s(b, loc);
  Value sign = arith::AndIOp::create(
      b, loc, arith::ShRUIOp::create(b, loc, bits, s.i32(28)), s.i32(8));
  return arith::OrIOp::create(b, loc, code, sign);
}

/// encodeE2M1 (RNE, satfinite, NaN -> 7) of `y`: an i32 whose low nibble
/// is the code (the bits above are not zero). The magic constant carries
/// the code offset 2 * (E - 127) and, for a negative ys, the sign (its own
/// sign bit and 8) in its low bits: ys + magic = +-(|ys| + |magic|) (RNE is
/// symmetric) leaves count + offset + 8 * sign in the low nibble of the
/// sum; the offsets are even, so ties still go to the even count.
Value encodeNearestFast(OpBuilder &b, Location loc, Value y) {
  ScalarBuilder s(b, loc);
  Value ys = arith::MaxNumFOp::create(
      b, loc, arith::MinNumFOp::create(b, loc, y, s.f32(6.0f)), s.f32(-6.0f));
  Value bits = arith::BitcastOp::create(b, loc, b.getI32Type(), ys);
  // E = max(biased exponent of |ys|, 127) = biased exponent of max(|ys|, 1).
  Value atLeastOne = arith::MaxNumFOp::create(
      b, loc, math::AbsFOp::create(b, loc, ys), s.f32(1.0f));
  Value binade = arith::ShRUIOp::create(
      b, loc, arith::BitcastOp::create(b, loc, b.getI32Type(), atLeastOne),
      s.i32(23));
  // ((E + 22) << 23) + 2 * E - 254 = E * 0x800002 + (22 << 23) - 254.
  Value magic = arith::AddIOp::create(
      b, loc, arith::MulIOp::create(b, loc, binade, s.i32(0x800002)),
      s.i32((22 << 23) - 254));
  Value negative = arith::ShRSIOp::create(b, loc, bits, s.i32(31));
  Value signedMagic = arith::OrIOp::create(
      b, loc, magic,
      arith::AndIOp::create(b, loc, negative, s.i32(0x80000008)));
  Value sum = arith::AddFOp::create(
      b, loc, ys, arith::BitcastOp::create(b, loc, b.getF32Type(), signedMagic));
  return arith::BitcastOp::create(b, loc, b.getI32Type(), sum);
}

/// encodeE2M1Stochastic of `y` with the random byte at bits
/// 8 * byteIndex + 7 .. 8 * byteIndex of `word`, as an i32 nibble.
Value encodeStochasticFast(OpBuilder &b, Location loc, Value y, Value word,
                           int64_t byteIndex) {
  ScalarBuilder s(b, loc);
  ClampedValue c = clampForE2M1(b, loc, y);
  // u = fp32(1 + byte / 256) - 1: the byte placed in mantissa bits 22..15.
  int64_t shift = 8 * byteIndex - 15;
  Value placed =
      shift < 0 ? arith::ShLIOp::create(b, loc, word, s.i32(-shift)).getResult()
                : arith::ShRUIOp::create(b, loc, word, s.i32(shift)).getResult();
  Value oneAndByte = arith::OrIOp::create(
      b, loc, arith::AndIOp::create(b, loc, placed, s.i32(0x7F8000)),
      s.i32(0x3F800000));
  Value uniform = arith::SubFOp::create(
      b, loc, arith::BitcastOp::create(b, loc, b.getF32Type(), oneAndByte),
      s.f32(1.0f));
  // step(a) = 2^(E - 128): bits (E - 1) << 23.
  Value step = arith::BitcastOp::create(
      b, loc, b.getF32Type(),
      arith::ShLIOp::create(
          b, loc, arith::SubIOp::create(b, loc, c.binade, s.i32(1)),
          s.i32(23)));
  Value threshold = math::FmaOp::create(b, loc, uniform, step, c.magnitude);
  Value tBits = arith::BitcastOp::create(b, loc, b.getI32Type(), threshold);
  Value normal = arith::SubIOp::create(
      b, loc, arith::ShRUIOp::create(b, loc, tBits, s.i32(22)), s.i32(252));
  Value atLeastHalf = arith::ExtUIOp::create(
      b, loc, b.getI32Type(),
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::uge, tBits,
                            s.i32(0x3F000000)));
  Value code = arith::MaxSIOp::create(b, loc, normal, atLeastHalf);
  return withSign(b, loc, code, c.bits);
}

/// Two i32 words holding the low nibbles of 16 values, element j at bits
/// 4 * (j % 8) of word j / 8 (the packed byte order: even element in the
/// low nibble). Each nibble enters with one funnel shift,
/// word = (word >> 4) | (value << 28), which also drops the bits above it.
std::array<Value, 2> packNibbles(OpBuilder &b, Location loc,
                                 ArrayRef<Value> nibbles) {
  ScalarBuilder s(b, loc);
  std::array<Value, 2> words;
  for (int64_t w = 0; w < 2; ++w) {
    Value word;
    for (int64_t j = 0; j < 8; ++j) {
      Value top = arith::ShLIOp::create(b, loc, nibbles[8 * w + j], s.i32(28));
      word = j == 0 ? top
                    : arith::OrIOp::create(
                          b, loc, arith::ShRUIOp::create(b, loc, word, s.i32(4)),
                          top)
                          .getResult();
    }
    words[w] = word;
  }
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
/// encode factor, ready for E2M1 rounding (lib/Numerics' quantize).
struct ScaledRun {
  Value scaleCode;
  SmallVector<Value> scaled;
};

ScaledRun scaleRun(OpBuilder &b, Location loc, ArrayRef<Value> values,
                   const ScalarBuilder::TensorScale &scale) {
  ScalarBuilder s(b, loc);
  Value blockAmax = s.f32(0.0f);
  for (Value v : values)
    blockAmax = arith::MaxNumFOp::create(b, loc, blockAmax,
                                         math::AbsFOp::create(b, loc, v));
  ScalarBuilder::BlockScale block = s.blockScale(blockAmax, scale);
  ScaledRun run{block.code, {}};
  for (Value v : values)
    run.scaled.push_back(arith::MulFOp::create(b, loc, v, block.encode));
  return run;
}

/// The 8 packed bytes (even element in the low nibble) of 16 scaled values,
/// rounded to nearest even, as two i32 words.
std::array<Value, 2> packNearestEven(OpBuilder &b, Location loc,
                                     ArrayRef<Value> scaled,
                                     const ChipInfo &chip) {
  if (!chip.has(Instruction::CvtE2M1x2)) {
    SmallVector<Value> nibbles;
    for (Value v : scaled)
      nibbles.push_back(encodeNearestFast(b, loc, v));
    return packNibbles(b, loc, nibbles);
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
                                    const ChipInfo &chip) {
  if (!chip.has(Instruction::CvtRsE2M1x4)) {
    // Element j takes byte j % 4 of word j / 4.
    SmallVector<Value> nibbles;
    for (int64_t j = 0; j < 16; ++j)
      nibbles.push_back(
          encodeStochasticFast(b, loc, scaled[j], words[j / 4], j % 4));
    return packNibbles(b, loc, nibbles);
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


/// Stores the two code words of run `run` (8 bytes at byte 8 * run).
void storeRunCodes(OpBuilder &b, Location loc, Value codeWords, Value run,
                   std::array<Value, 2> words) {
  IndexMath m{b, loc};
  Value vector = vector::FromElementsOp::create(
      b, loc, VectorType::get({2}, b.getI32Type()), ValueRange{words[0], words[1]});
  alignedStore(b, loc, vector, codeWords, m.mul(run, 2), 8);
}

//===----------------------------------------------------------------------===//
// Kernels
//===----------------------------------------------------------------------===//

/// Runs of 16 elements each thread of the 1x16 quantize and RHT-amax
/// kernels owns: their 16-byte loads are all issued before the first use
/// (memory-level parallelism), at a stride of one block so that each load
/// instruction of a warp covers consecutive runs.
constexpr int64_t kRunsPerThread = 4;

/// Grid-stride max |x| over `x`, finished by warp shuffles and one atomic
/// max per warp. Each thread keeps kRunsPerThread 16-byte loads in flight
/// per iteration.
gpu::GPUFuncOp buildAmaxKernel(ModuleOp module, MemRefType input,
                               int64_t &threads) {
  int64_t count = input.getNumElements();
  // 16-byte vector loads when the size allows (every quantizable tensor:
  // its last dimension is a multiple of 16), elements one by one otherwise.
  Type elementType = input.getElementType();
  int64_t width = 16 / (elementType.getIntOrFloatBitWidth() / 8);
  if (count % width != 0)
    width = 1;
  int64_t chunks = count / width;
  const int64_t unroll = kRunsPerThread;
  // About `unroll` chunks per thread, at most 1024 blocks (a full H200).
  threads = std::min<int64_t>(
      llvm::alignTo(llvm::divideCeil(chunks, unroll), kThreadsPerBlock),
      1024 * kThreadsPerBlock);
  int64_t totalThreads = threads;
  int64_t groupChunks = unroll * totalThreads;
  int64_t fullGroups = chunks / groupChunks;
  std::string name = "nvfp4_amax_" + std::to_string(count) + "x" +
                     typeName(elementType);
  Type amaxType = MemRefType::get({1}, IntegerType::get(module.getContext(), 32));
  return getOrCreateKernel(
      module, name, {input, amaxType}, kThreadsPerBlock,
      [&](OpBuilder &b, Location loc, ValueRange args) {
        ScalarBuilder s(b, loc);
        IndexMath m{b, loc};
        Value tid = globalThreadIndex(b, loc);
        auto maxOfChunk = [&](OpBuilder &nb, Location nl, SmallVector<Value> &out,
                              Value chunk) {
          if (width == 1) {
            out.push_back(
                memref::LoadOp::create(nb, nl, args[0], ValueRange{chunk}));
            return;
          }
          IndexMath nm{nb, nl};
          out.push_back(alignedLoad(nb, nl, args[0], nm.mul(chunk, width),
                                    width, 16));
        };
        auto absMax = [&](OpBuilder &nb, Location nl, Value acc, Value loaded) {
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
            b, loc, m.c(0), m.c(fullGroups), m.c(1), ValueRange{s.f32(0.0f)},
            [&](OpBuilder &nb, Location nl, Value group, ValueRange acc) {
              IndexMath nm{nb, nl};
              Value first = nm.add(nm.mul(group, groupChunks), tid);
              SmallVector<Value> loaded;
              for (int64_t k = 0; k < unroll; ++k)
                maxOfChunk(nb, nl, loaded,
                           nm.add(first, nm.c(k * totalThreads)));
              Value max = acc[0];
              for (Value v : loaded)
                max = absMax(nb, nl, max, v);
              scf::YieldOp::create(nb, nl, max);
            });
        // The rest, one chunk at a time.
        auto tail = scf::ForOp::create(
            b, loc, m.add(tid, m.c(fullGroups * groupChunks)), m.c(chunks),
            m.c(totalThreads), ValueRange{groups.getResult(0)},
            [&](OpBuilder &nb, Location nl, Value chunk, ValueRange acc) {
              SmallVector<Value> loaded;
              maxOfChunk(nb, nl, loaded, chunk);
              scf::YieldOp::create(nb, nl, absMax(nb, nl, acc[0], loaded[0]));
            });
        warpMaxToAmax(b, loc, tail.getResult(0), args[1]);
      });
}

/// Where the runs of a thread of the run kernels are: run k of thread t of
/// block b is b' * (256 * kRunsPerThread) + k * 256 + t, where the blocks
/// walk the tensor from its end (b' = blocks - 1 - b): the amax pass that
/// precedes a quantization reads the tensor from its start, so its last
/// reads are still in L2 when the first blocks of the quantization run.
/// Runs past the end are clamped to run 0 (`valid` false): they compute on
/// real data and skip their stores.
struct ThreadRuns {
  SmallVector<Value> run, valid;
};

ThreadRuns locateThreadRuns(OpBuilder &b, Location loc, int64_t segments,
                            int64_t blocks) {
  IndexMath m{b, loc};
  Value block = gpu::BlockIdOp::create(b, loc, gpu::Dimension::x);
  Value reversed = arith::SubIOp::create(b, loc, m.c(blocks - 1), block);
  Value first = m.add(m.mul(reversed, kThreadsPerBlock * kRunsPerThread),
                      gpu::ThreadIdOp::create(b, loc, gpu::Dimension::x));
  ThreadRuns runs;
  for (int64_t k = 0; k < kRunsPerThread; ++k) {
    Value run = m.add(first, m.c(k * kThreadsPerBlock));
    Value valid = m.lt(run, segments);
    runs.valid.push_back(valid);
    runs.run.push_back(arith::SelectOp::create(b, loc, valid, run, m.c(0)));
  }
  return runs;
}

/// Blocks of the run kernels for `segments` runs of 16.
int64_t runKernelBlocks(int64_t segments) {
  return llvm::divideCeil(segments, kThreadsPerBlock * kRunsPerThread);
}

/// Post-RHT amax (NUMERICS.md section 4: the amax of the BF16 RHT output),
/// without writing the RHT output: each run's 16 outputs are computed in
/// registers exactly as the hadamard kernel computes them.
gpu::GPUFuncOp buildHadamardAmaxKernel(ModuleOp module, MemRefType input,
                                       uint32_t signMask) {
  int64_t count = input.getNumElements();
  int64_t segments = count / 16;
  int64_t blocks = runKernelBlocks(segments);
  Type elementType = input.getElementType();
  std::string name = "nvfp4_rht_amax_" + std::to_string(count) + "x" +
                     typeName(elementType) + "_mask" + std::to_string(signMask);
  Type amaxType = MemRefType::get({1}, IntegerType::get(module.getContext(), 32));
  return getOrCreateKernel(
      module, name, {input, amaxType}, kThreadsPerBlock,
      [&](OpBuilder &b, Location loc, ValueRange args) {
        ScalarBuilder s(b, loc);
        IndexMath m{b, loc};
        ThreadRuns runs = locateThreadRuns(b, loc, segments, blocks);
        SmallVector<Value> loaded;
        for (Value run : runs.run)
          loaded.push_back(loadSixteenRaw(b, loc, args[0], m.mul(run, 16)));
        Value max = s.f32(0.0f);
        for (Value vector : loaded) {
          SmallVector<Value> w = hadamardSixteen(
              b, loc, extendSixteen(b, loc, vector), signMask, elementType);
          for (Value v : w)
            max = arith::MaxNumFOp::create(
                b, loc, max, math::AbsFOp::create(b, loc, s.toF32(v)));
        }
        warpMaxToAmax(b, loc, max, args[1]);
      });
}

/// The arguments of a quantize kernel: input, amax (i32 bits), packed
/// codes, scales, and the seed for stochastic rounding.
static SmallVector<Type> quantizeArgTypes(BlockScaledTensorType type,
                                         Type elementType, bool stochastic) {
  MLIRContext *ctx = type.getContext();
  int64_t count = product(type.getShape());
  auto i8 = IntegerType::get(ctx, 8);
  SmallVector<Type> types = {
      MemRefType::get({count}, elementType),
      MemRefType::get({1}, IntegerType::get(ctx, 32)),
      MemRefType::get({count / 2}, i8),
      MemRefType::get({product(type.getScalesType().getShape())}, i8)};
  if (stochastic)
    types.push_back(IntegerType::get(ctx, 64));
  return types;
}

/// 1x16 quantization, kRunsPerThread runs per thread: all 16-byte loads
/// first, then per run the block scale, the codes (two i32 words, one
/// 8-byte store) and the scale byte. With `rhtMask`, each run is first
/// replaced by its 16-point RHT rounded to the input type (the fused
/// wgrad-operand kernel: the RHT output never reaches device memory).
gpu::GPUFuncOp buildRunQuantizeKernel(ModuleOp module,
                                      BlockScaledTensorType type,
                                      Type elementType, bool stochastic,
                                      std::optional<uint32_t> rhtMask,
                                      const ChipInfo &chip, int64_t &blocks) {
  int64_t count = product(type.getShape());
  int64_t cols = type.getCols(), colBlocks = cols / 16;
  int64_t segments = count / 16;
  blocks = runKernelBlocks(segments);
  SmallVector<Type> argTypes =
      quantizeArgTypes(type, elementType, stochastic);
  std::string name =
      std::string(rhtMask ? "nvfp4_rht_quantize_" : "nvfp4_quantize_") +
      shapeName(type.getShape()) + "x" + typeName(elementType) + "_1x16" +
      (stochastic ? "_sr" : "_rn") +
      (type.getLayout() == ScaleLayout::Linear ? "" : "_swizzled") +
      (rhtMask ? "_mask" + std::to_string(*rhtMask) : "");
  int64_t blockCount = blocks;
  return getOrCreateKernel(
      module, name, argTypes, kThreadsPerBlock,
      [&](OpBuilder &b, Location loc, ValueRange args) {
        ScalarBuilder s(b, loc);
        IndexMath m{b, loc};
        ThreadRuns runs = locateThreadRuns(b, loc, segments, blockCount);
        SmallVector<Value> loaded;
        for (Value run : runs.run)
          loaded.push_back(loadSixteenRaw(b, loc, args[0], m.mul(run, 16)));
        ScalarBuilder::TensorScale scale =
            s.tensorScale(loadAmax(b, loc, args[1]));
        Value codeWords = codesAsWords(b, loc, args[2]);
        for (int64_t k = 0; k < kRunsPerThread; ++k) {
          Value run = runs.run[k];
          SmallVector<Value> values = extendSixteen(b, loc, loaded[k]);
          if (rhtMask) {
            values = hadamardSixteen(b, loc, values, *rhtMask, elementType);
            for (Value &v : values)
              v = s.toF32(v);
          }
          ScaledRun scaledRun = scaleRun(b, loc, values, scale);
          QuantizedRun quantized{scaledRun.scaleCode, {}};
          if (stochastic) {
            // Philox group = linear index of the first element / 16.
            Value group =
                arith::IndexCastUIOp::create(b, loc, b.getI64Type(), run);
            quantized.words = packStochastic(
                b, loc, scaledRun.scaled, s.philoxGroup(args[4], group), chip);
          } else {
            quantized.words = packNearestEven(b, loc, scaledRun.scaled, chip);
          }
          auto ifValid = scf::IfOp::create(b, loc, runs.valid[k], false);
          OpBuilder::InsertionGuard guard(b);
          b.setInsertionPointToStart(ifValid.thenBlock());
          storeRunCodes(b, loc, codeWords, run, quantized.words);
          Value offset = scaleOffset(m, type, m.div(run, colBlocks),
                                     m.rem(run, colBlocks));
          memref::StoreOp::create(b, loc, quantized.scaleCode, args[3],
                                  ValueRange{offset});
        }
      });
}

/// Quantization with 16x16 blocks (one thread per row run of a tile, the
/// tile amax reduced across 16 lanes) of a flattened tensor of `type`'s
/// shape.
gpu::GPUFuncOp buildQuantizeKernel(ModuleOp module, BlockScaledTensorType type,
                                   Type elementType, bool stochastic,
                                   const ChipInfo &chip) {
  int64_t count = product(type.getShape());
  int64_t cols = type.getCols(), colBlocks = cols / 16;
  int64_t blockRows = type.getBlockRows();
  int64_t segments = count / 16;
  SmallVector<Type> argTypes =
      quantizeArgTypes(type, elementType, stochastic);
  std::string name =
      "nvfp4_quantize_" + shapeName(type.getShape()) + "x" +
      typeName(elementType) + "_" + std::to_string(blockRows) + "x16" +
      (stochastic ? "_sr" : "_rn") +
      (type.getLayout() == ScaleLayout::Linear ? "" : "_swizzled");
  return getOrCreateKernel(
      module, name, argTypes, kThreadsPerBlock,
      [&](OpBuilder &b, Location loc, ValueRange args) {
        ScalarBuilder s(b, loc);
        IndexMath m{b, loc};
        // Threads past the end compute on segment 0 and skip the stores: all
        // lanes must take part in the tile shuffles.
        Value tid = globalThreadIndex(b, loc);
        Value valid = m.lt(tid, segments);
        Value segment = arith::SelectOp::create(b, loc, valid, tid, m.c(0));
        SegmentPosition pos = locateSegment(m, segment, colBlocks, blockRows);
        Value base = m.add(m.mul(pos.row, cols), m.mul(pos.colBlock, 16));

        SmallVector<Value> values = loadSixteen(b, loc, args[0], base);
        ScalarBuilder::TensorScale scale =
            s.tensorScale(loadAmax(b, loc, args[1]));
        Value blockAmax = s.f32(0.0f);
        for (Value v : values)
          blockAmax = arith::MaxNumFOp::create(
              b, loc, blockAmax, math::AbsFOp::create(b, loc, v));
        if (blockRows != 1)
          blockAmax = halfWarpMax(b, loc, blockAmax);
        ScalarBuilder::BlockScale block = s.blockScale(blockAmax, scale);

        SmallVector<Value> scaled;
        for (Value v : values)
          scaled.push_back(arith::MulFOp::create(b, loc, v, block.encode));
        std::array<Value, 2> words;
        if (stochastic) {
          // Philox group = linear index of the first element / 16.
          Value group = arith::IndexCastUIOp::create(b, loc, b.getI64Type(),
                                                     m.div(base, 16));
          words = packStochastic(b, loc, scaled,
                                 s.philoxGroup(args[4], group), chip);
        } else {
          words = packNearestEven(b, loc, scaled, chip);
        }
        Value codeWords = codesAsWords(b, loc, args[2]);

        auto ifValid = scf::IfOp::create(b, loc, valid, false);
        OpBuilder::InsertionGuard guard(b);
        b.setInsertionPointToStart(ifValid.thenBlock());
        storeRunCodes(b, loc, codeWords, m.div(base, 16), words);
        Value offset = scaleOffset(m, type, pos.row, pos.colBlock);
        bool onePerTile = blockRows != 1 && type.getLayout() == ScaleLayout::Linear;
        if (onePerTile) {
          auto ifFirst = scf::IfOp::create(b, loc, m.eq(pos.rowInTile, 0), false);
          b.setInsertionPointToStart(ifFirst.thenBlock());
        }
        memref::StoreOp::create(b, loc, block.code, args[3], ValueRange{offset});
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
        Value factor = arith::DivFOp::create(b, loc, loadAmax(b, loc, args[2]),
                                             s.f32(2688.0f));
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
Value launchAmax(OpBuilder &b, Location loc, ModuleOp module, Value input) {
  Value amax = allocDevice(
      b, loc, MemRefType::get({1}, b.getI32Type()), /*zeroFill=*/true);
  int64_t threads = 0;
  gpu::GPUFuncOp kernel =
      buildAmaxKernel(module, cast<MemRefType>(input.getType()), threads);
  launchKernel(b, loc, kernel, threads, kThreadsPerBlock, {input, amax});
  return amax;
}

/// The amax (FP32 bits, device buffer) of the RHT of the flat BF16 buffer
/// `input` with `signMask`, without writing the transformed tensor.
Value launchHadamardAmax(OpBuilder &b, Location loc, ModuleOp module,
                         Value input, uint32_t signMask) {
  auto inputType = cast<MemRefType>(input.getType());
  Value amax = allocDevice(b, loc, MemRefType::get({1}, b.getI32Type()),
                           /*zeroFill=*/true);
  gpu::GPUFuncOp kernel = buildHadamardAmaxKernel(module, inputType, signMask);
  launchKernel(b, loc, kernel,
               runKernelBlocks(inputType.getNumElements() / 16) *
                   kThreadsPerBlock,
               kThreadsPerBlock, {input, amax});
  return amax;
}

struct AmaxToGPU : OpConversionPattern<AmaxOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(AmaxOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    ModuleOp module = op->getParentOfType<ModuleOp>();
    Value input = tensorToFlatBuffer(rewriter, loc, adaptor.getInput());
    Value amax = op.getHadamard()
                     ? launchHadamardAmax(rewriter, loc, module, input,
                                          *op.getHadamard())
                     : launchAmax(rewriter, loc, module, input);
    Value bits = memref::LoadOp::create(rewriter, loc, amax,
                                        ValueRange{indexConstant(rewriter, loc, 0)});
    rewriter.replaceOpWithNewOp<arith::BitcastOp>(op, rewriter.getF32Type(), bits);
    return success();
  }
};

/// The device buffers (codes, scales, amax bits) of the quantization of the
/// flat buffer `input` to `type`: `amax` (f32) when the op gives one, else
/// an amax pass; with `rhtMask`, of the RHT of `input` (1x16 blocks only),
/// computed in the quantize kernel and, for the amax, in a fused RHT-amax
/// pass.
FailureOr<SmallVector<Value>>
quantizeToBuffers(ConversionPatternRewriter &rewriter, Location loc,
                  const TypeConverter &converter, ModuleOp module,
                  BlockScaledTensorType type, Value input, Value givenAmax,
                  Value seed, bool stochastic, std::optional<uint32_t> rhtMask,
                  const ChipInfo &chip) {
  auto inputType = cast<MemRefType>(input.getType());
  Value amax;
  if (!givenAmax) {
    amax = rhtMask ? launchHadamardAmax(rewriter, loc, module, input, *rhtMask)
                   : launchAmax(rewriter, loc, module, input);
  } else {
    amax = givenAmaxBuffer(rewriter, loc, givenAmax);
  }

  SmallVector<Type> partTypes;
  if (failed(converter.convertType(type, partTypes)))
    return failure();
  Value codes = allocDevice(rewriter, loc, cast<MemRefType>(partTypes[0]),
                            false);
  // The swizzled layout's padding must read as zero scales.
  Value scales =
      allocDevice(rewriter, loc, cast<MemRefType>(partTypes[1]),
                  /*zeroFill=*/type.getLayout() != ScaleLayout::Linear);

  SmallVector<Value> args = {input, amax, flatten(rewriter, loc, codes),
                             flatten(rewriter, loc, scales)};
  if (stochastic)
    args.push_back(seed);
  Type elementType = inputType.getElementType();
  if (type.getBlockRows() == 1) {
    int64_t blocks = 0;
    gpu::GPUFuncOp kernel = buildRunQuantizeKernel(
        module, type, elementType, stochastic, rhtMask, chip, blocks);
    launchKernel(rewriter, loc, kernel, blocks * kThreadsPerBlock,
                 kThreadsPerBlock, args);
  } else {
    assert(!rhtMask && "the RHT is fused into 1x16 quantization only");
    gpu::GPUFuncOp kernel =
        buildQuantizeKernel(module, type, elementType, stochastic, chip);
    launchKernel(rewriter, loc, kernel, product(type.getShape()) / 16,
                 kThreadsPerBlock, args);
  }
  return SmallVector<Value>{codes, scales, amax};
}

struct QuantizeToGPU : OpConversionPattern<QuantizeOp> {
  QuantizeToGPU(const TypeConverter &converter, MLIRContext *ctx,
                const ChipInfo &chip)
      : OpConversionPattern(converter, ctx), chip(chip) {}

  LogicalResult
  matchAndRewrite(QuantizeOp op, OneToNOpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    ModuleOp module = op->getParentOfType<ModuleOp>();
    Value input = tensorToFlatBuffer(rewriter, loc, adaptor.getInput().front());
    bool stochastic = op.getRounding() == RoundingMode::Stochastic;
    FailureOr<SmallVector<Value>> parts = quantizeToBuffers(
        rewriter, loc, *getTypeConverter(), module, op.getResult().getType(),
        input,
        adaptor.getAmax().empty() ? Value() : adaptor.getAmax().front(),
        stochastic ? adaptor.getSeed().front() : Value(), stochastic,
        op.getHadamard(), chip);
    if (failed(parts))
      return rewriter.notifyMatchFailure(op, "unconvertible result type");
    rewriter.replaceOpWithMultiple(op, {*parts});
    return success();
  }

  const ChipInfo &chip;
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
  ScalarBuilder s(b, loc);
  Value low = arith::AndIOp::create(b, loc, encodeNearestFast(b, loc, lo),
                                    s.i32(0xF));
  Value high = arith::ShLIOp::create(b, loc, encodeNearestFast(b, loc, hi),
                                     s.i32(4));
  return arith::TruncIOp::create(b, loc, b.getI8Type(),
                                 arith::OrIOp::create(b, loc, low, high));
}

kernels::QuantizedRun
kernels::quantizeRunNearestEven(OpBuilder &b, Location loc,
                                ArrayRef<Value> values,
                                const ScalarBuilder::TensorScale &scale,
                                const ChipInfo &chip) {
  ScaledRun run = scaleRun(b, loc, values, scale);
  return {run.scaleCode, packNearestEven(b, loc, run.scaled, chip)};
}

void mlir::nvfp4::populateQuantizeToGPUPatterns(const TypeConverter &converter,
                                                RewritePatternSet &patterns,
                                                const ChipInfo &chip) {
  MLIRContext *ctx = patterns.getContext();
  patterns.add<AmaxToGPU, DequantizeToGPU, HadamardToGPU>(converter, ctx);
  patterns.add<QuantizeToGPU>(converter, ctx, chip);
}
