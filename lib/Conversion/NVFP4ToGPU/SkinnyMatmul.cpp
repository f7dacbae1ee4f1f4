//===- SkinnyMatmul.cpp - small-M GEMM: B streamed through mma.sync -------===//
//
// Part of the nvfp4 project.
//
// A decode-like GEMM (M <= 16 rows of A, thousands of rows of B) is a read
// of B: 4096 x 4096 NVFP4 weights are 9.4 MB, 2.3 us at the H200's copy
// bandwidth, while its 0.5 GFLOP (M = 16) take a fraction of that on the
// tensor cores. The tiled pipelines waste it: one 128-row tile of A holds
// at most 16 useful rows, and their TMA/mbarrier ring walks K one step at a
// time per tile. This kernel (GemmSchedule::skinnyWarps > 0, the name
// "skinny{tileM}x{tileN}_w{W}") has no ring and no shared-memory operands:
//
//   * C^T = B A^T: the rows of B are mma.sync's M (16 per m16 tile, tileN
//     per CTA), the rows of A its N (8 per n8 tile, tileM per CTA), so one
//     m16n8k16 wastes nothing of B whatever M is.
//   * The CTA's W warps split K: warp w takes K chunks (128 elements each)
//     w * C, ..., w * C + C - 1 and keeps its own FP32 accumulators; at the
//     end the warps' partial sums meet in shared memory and are added in
//     warp order (deterministic), scaled by alpha and stored.
//   * Lane (g, t) of a warp (g = lane / 4, t = lane % 4) loads, per chunk,
//     16 bytes (32 codes: blocks 2t and 2t + 1 of the chunk) of each of
//     its B rows g and g + 8 of every m16 tile and of each of its A rows g
//     of every n8 tile, plus their scale bytes -- every load of a chunk
//     issued before any of its math, U chunks at a time -- and decodes
//     them in registers to exact F16 (F16Decode.h: code x scale is exact).
//     The 32 codes' 16 F16x2 words feed 8 mma.sync steps, two words per
//     operand row per step. mma.sync's k slots of a lane are (2t, 2t + 1,
//     2t + 8, 2t + 9); which k a slot holds does not matter as long as A
//     and B agree, and they do: both are decoded the same way from the
//     same K range.
//
// With skinnyByteDecode ("_e") the codes are placed as F16 high bytes
// (2^-14 times their values, decodeE2M1x8ToF16Pow2) and the scales enter as
// 2^7 s; with skinnyScaledA ("_s") the staged A also carries B's 16x16
// block scale and B's codes go into mma.sync as placed; alpha takes the
// powers of two back (the products are the plain decode's, scaled). With
// skinnyPrefetch ("_pf") the loads run one group of chunks ahead of the
// math, the first group's before A is staged.
//
// Rows of A past M and rows of B past N load the last row instead (in
// bounds); they only feed outputs the kernel does not store. Exactness as
// the route's: F16 products are exact and the sums are FP32 in mma.sync's
// order, then across chunks and warps in a fixed order.
//
//===----------------------------------------------------------------------===//

#include "F16Decode.h"
#include "GemmPipeline.h"
#include "KernelBuilder.h"
#include "KernelUtils.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

#include <functional>
#include <optional>

using namespace mlir;
using namespace mlir::nvfp4;
using namespace mlir::nvfp4::kernels;

namespace {

/// K elements of one chunk: 32 codes (16 bytes) per lane of a quad.
constexpr int64_t kChunkK = 128;
constexpr int64_t kChunkBytes = kChunkK / 2;
/// mma.sync.m16n8k16 steps per chunk: 16 F16x2 words per row, two a step.
constexpr int64_t kStepsPerChunk = kChunkK / 16;
/// Chunks a warp loads before it decodes (all loads first: the bytes in
/// flight hide the DRAM latency).
constexpr int64_t kMaxChunksInFlight = 4;
/// Static shared memory a kernel may declare (more needs the dynamic kind).
constexpr int64_t kMaxStaticSharedBytes = 48 * 1024;

/// The static shape of one skinny kernel.
struct SkinnyShape {
  int64_t batch, m, n, k;
  int64_t warps;        ///< W: warps per CTA, splitting K
  int64_t mmaTilesB;    ///< m16 tiles of B rows per warp (tileN / 16)
  int64_t mmaTilesA;    ///< n8 tiles of A rows per warp (tileM / 8)
  int64_t chunksPerWarp;
  int64_t chunksInFlight; ///< U, divides chunksPerWarp
  /// With GemmSchedule::skinnyStageA: the rows of A staged (M).
  int64_t stagedRows = 0;
  /// With GemmSchedule::skinnyScaledA: the staged A once per m16 tile of B
  /// (times that tile's block scales), else once.
  int64_t stagedCopies = 1;
  /// B's codes go into mma.sync unscaled (skinnyScaledA).
  bool scaledA = false;
  /// A lane's B rows g and g + 8 share their scales (16x16 blocks; rows
  /// past N clamp into the same last block): the byte decode loads and
  /// converts them once per m16 tile.
  bool pairedScalesB = false;

  explicit SkinnyShape(const GemmPlan &plan)
      : batch(plan.batch), m(plan.m), n(plan.n), k(plan.k),
        warps(plan.skinnyWarps), mmaTilesB(plan.tileN / 16),
        mmaTilesA(plan.tileM / 8),
        chunksPerWarp(plan.k / kChunkK / plan.skinnyWarps) {
    if (plan.skinnyStageA)
      stagedRows = plan.m;
    if (plan.skinnyScaledA) {
      scaledA = true;
      stagedCopies = mmaTilesB;
    }
    pairedScalesB =
        plan.skinnyByteDecode && plan.b.type.getBlockRows() == 16;
    chunksInFlight = plan.skinnyChunks;
    if (!chunksInFlight) {
      chunksInFlight = 1;
      for (int64_t u = kMaxChunksInFlight; u > 1; --u)
        if (chunksPerWarp % u == 0) {
          chunksInFlight = u;
          break;
        }
    }
  }
  /// FP32 registers of one warp's partial sums: 4 per mma tile.
  int64_t accumulators() const { return mmaTilesB * mmaTilesA * 4; }
  /// Accumulator sets: with one or two mma tiles, one for even and one for
  /// odd mma steps -- two chains of dependent mma.sync per tile instead of
  /// one, added at the end; with more tiles their chains already
  /// interleave (and a second set would not fit in 128 registers).
  int64_t accumulatorSets() const { return mmaTilesB * mmaTilesA <= 2 ? 2 : 1; }
  /// i32 words of the staged A: per warp, chunk, row and quad lane the 16
  /// F16x2 words of 32 codes.
  int64_t stagedWords() const { return stagedCopies * stagedCopyWords(); }
  /// i32 words of one copy of the staged A.
  int64_t stagedCopyWords() const {
    return warps * chunksPerWarp * stagedRows * 4 * 16;
  }
  /// Static shared memory: the partial sums and the staged A.
  int64_t sharedBytes() const {
    return 4 * (warps * accumulators() * 32 + stagedWords());
  }
};

/// One operand row a lane reads per chunk: 4 code words and 2 scale bytes.
struct LoadedRow {
  Value words;          ///< vector<4xi32>
  Value scale0, scale1; ///< i8
};

/// The rows a lane loads for one group of U chunks: [chunk][row] of B and
/// (unless staged) of A.
struct LoadedGroup {
  SmallVector<SmallVector<LoadedRow>> b, a;

  /// Its values in order (a loop's iteration arguments).
  SmallVector<Value> flatten() const {
    SmallVector<Value> values;
    for (const auto *part : {&b, &a})
      for (const SmallVector<LoadedRow> &rows : *part)
        for (const LoadedRow &row : rows) {
          values.push_back(row.words);
          if (row.scale0)
            values.append({row.scale0, row.scale1});
        }
    return values;
  }
  /// The same shape over `values` (flatten()'s order).
  LoadedGroup rebuilt(ValueRange values) const {
    LoadedGroup group = *this;
    size_t i = 0;
    for (auto *part : {&group.b, &group.a})
      for (SmallVector<LoadedRow> &rows : *part)
        for (LoadedRow &row : rows) {
          row.words = values[i++];
          if (row.scale0) {
            row.scale0 = values[i++];
            row.scale1 = values[i++];
          }
        }
    return group;
  }
};

struct SkinnyKernel {
  OpBuilder &b;
  Location loc;
  const GemmPlan &plan;
  const SkinnyShape &shape;
  ValueRange args;

  Value i32(int64_t v) {
    return arith::ConstantIntOp::create(b, loc, b.getI32Type(), v);
  }

  /// Loads the 16 code bytes of chunk `chunk` of row `row` (over all batch
  /// elements) for quad lane `t`, and the scales of its two blocks.
  LoadedRow load(IndexMath &im, Value codeWords, Value scales,
                 BlockScaledTensorType type, Value row, Value chunk, Value t,
                 bool withScales = true) {
    Value byte = im.add(im.add(im.mul(row, shape.k / 2),
                               im.mul(chunk, kChunkBytes)),
                        im.mul(t, 16));
    LoadedRow loaded;
    loaded.words = vector::LoadOp::create(
        b, loc, VectorType::get({4}, b.getI32Type()), codeWords,
        ValueRange{im.div(byte, 4)}, /*nontemporal=*/false,
        llvm::MaybeAlign(16));
    if (!withScales)
      return loaded;
    Value block = im.add(im.mul(chunk, kChunkK / 16), im.mul(t, 2));
    loaded.scale0 = memref::LoadOp::create(
        b, loc, scales, ValueRange{scaleOffset(im, type, row, block)});
    loaded.scale1 = memref::LoadOp::create(
        b, loc, scales,
        ValueRange{scaleOffset(im, type, row, im.add(block, im.c(1)))});
    return loaded;
  }

  /// Whether a lane loads the scales of its B row `i` (rows g, g + 8 of
  /// each m16 tile in turn): not with scaledA, and only the first of a pair
  /// that shares them.
  bool loadsScalesB(size_t i) const {
    return !shape.scaledA && !(shape.pairedScalesB && i % 2 == 1);
  }

  /// The power of two the decoded codes carry (2^-14 with the byte
  /// decode) and the one their scales carry to make up for it (2^7: the
  /// products code x scale then carry 2^-7, see GemmSchedule).
  int scaleExponent() const { return plan.skinnyByteDecode ? 7 : 0; }

  /// The row's two block scales as F16x2 pairs {s, s} (times
  /// 2^scaleExponent()).
  std::array<Value, 2> scalePairs(const LoadedRow &row) {
    Value pair = vector::FromElementsOp::create(
        b, loc, VectorType::get({2}, b.getI8Type()),
        ValueRange{row.scale0, row.scale1});
    return decodeE4M3x2ToF16Pairs(b, loc, pair, scaleExponent());
  }

  /// The 4 F16x2 words of code word `w` of a loaded row, unscaled: the
  /// codes themselves (times 2^-14 with the byte decode).
  std::array<Value, 4> decodeCodes(const LoadedRow &row, int64_t w) {
    Value word = vector::ExtractOp::create(b, loc, row.words,
                                           ArrayRef<int64_t>{w});
    return plan.skinnyByteDecode ? decodeE2M1x8ToF16Pow2(b, loc, word)
                                 : decodeE2M1x8ToF16(b, loc, word);
  }

  /// The 4 F16x2 words (code x scale, exact) of code word `w` (0..3) of a
  /// loaded row: the operands of mma steps 2w and 2w + 1. Words 0, 1 are
  /// block 2t, words 2, 3 block 2t + 1.
  std::array<Value, 4> decodeWord(const LoadedRow &row,
                                  const std::array<Value, 2> &scale,
                                  int64_t w) {
    std::array<Value, 4> out = decodeCodes(row, w);
    for (Value &x : out)
      x = mulF16x2(b, loc, x, scale[w / 2]);
    return out;
  }

  Value asHalves(Value word) {
    return LLVM::BitcastOp::create(
        b, loc, VectorType::get({2}, b.getF16Type()), word);
  }

  /// acc (4 f32) += the m16n8k16 product of the B fragment `bRows` (rows g
  /// and g + 8: two words each) and the A fragment `aRow` (two words).
  void mma(std::array<Value, 4> bWords, std::array<Value, 2> aWords,
           MutableArrayRef<Value> acc) {
    Type f32 = b.getF32Type();
    auto resultType =
        LLVM::LLVMStructType::getLiteral(b.getContext(), {f32, f32, f32, f32});
    SmallVector<Value> opA, opB;
    for (Value w : bWords)
      opA.push_back(asHalves(w));
    for (Value w : aWords)
      opB.push_back(asHalves(w));
    Value d = NVVM::MmaOp::create(
        b, loc, resultType, opA, opB, ValueRange(ArrayRef<Value>(acc)), ArrayRef<int64_t>{16, 8, 16},
        std::nullopt, std::nullopt, std::nullopt,
        std::array<NVVM::MMALayout, 2>{NVVM::MMALayout::row,
                                       NVVM::MMALayout::col});
    for (int64_t i = 0; i < 4; ++i)
      acc[i] = LLVM::ExtractValueOp::create(b, loc, d, i);
  }


  /// The warp's local chunk `chunk` as a chunk of K: contiguous ranges per
  /// warp (w C .. w C + C - 1).
  Value globalChunk(IndexMath &im, Value warp, Value chunk) {
    return im.add(im.mul(warp, shape.chunksPerWarp), chunk);
  }

  /// Decodes one chunk (the loaded rows of B, of A or A's staged words)
  /// and adds its 8 mma steps to `acc`, per code word: decode the word of
  /// every row, then its two mma steps (short live ranges: a word's 4
  /// F16x2 values per row, not a chunk's 16).
  /// The staged A words of code word w, n8 tile q and (with scaledA) m16
  /// tile mt of B.
  using StagedWords = std::function<std::array<Value, 4>(int64_t, int64_t,
                                                         int64_t)>;

  void multiplyChunk(ArrayRef<LoadedRow> loadedB, ArrayRef<LoadedRow> loadedA,
                     StagedWords stagedA, MutableArrayRef<Value> acc) {
    SmallVector<std::array<Value, 2>> scalesB, scalesA;
    if (!shape.scaledA)
      for (const LoadedRow &row : loadedB)
        scalesB.push_back(row.scale0 ? scalePairs(row) : scalesB.back());
    for (const LoadedRow &row : loadedA)
      scalesA.push_back(scalePairs(row));
    for (int64_t w = 0; w < 4; ++w) {
      SmallVector<std::array<Value, 4>> wordB, wordA;
      for (auto [i, row] : llvm::enumerate(loadedB))
        wordB.push_back(shape.scaledA ? decodeCodes(row, w)
                                      : decodeWord(row, scalesB[i], w));
      for (auto [row, scale] : llvm::zip(loadedA, scalesA))
        wordA.push_back(decodeWord(row, scale, w));
      // wordA[c * mmaTilesA + q]: copy c of the staged A (one per m16 tile
      // of B with scaledA).
      if (stagedA)
        for (int64_t c = 0; c < shape.stagedCopies; ++c)
          for (int64_t q = 0; q < shape.mmaTilesA; ++q)
            wordA.push_back(stagedA(w, q, c));
      for (int64_t half = 0; half < 2; ++half) {
        int64_t step = 2 * w + half;
        for (int64_t mt = 0; mt < shape.mmaTilesB; ++mt)
          for (int64_t q = 0; q < shape.mmaTilesA; ++q) {
            const auto &lo = wordB[2 * mt], &hi = wordB[2 * mt + 1];
            const auto &a =
                wordA[(shape.stagedCopies > 1 ? mt : 0) * shape.mmaTilesA + q];
            // a0a1 row g, a2a3 row g + 8 at slots (2t, 2t + 1); a4a5, a6a7
            // at (2t + 8, 2t + 9); b0b1, b2b3 the same slots of A's row.
            mma({lo[2 * half], hi[2 * half], lo[2 * half + 1],
                 hi[2 * half + 1]},
                {a[2 * half], a[2 * half + 1]},
                acc.slice(4 * (mt * shape.mmaTilesA + q) +
                              (step % shape.accumulatorSets()) *
                                  shape.accumulators(),
                          4));
          }
      }
    }
  }

  /// The first workgroup buffer (the partial sums), after the kernel
  /// arguments; then the staged A.
  size_t partialsIndex() const { return plan.outputAmax ? 9 : 8; }

  void emit() {
    ScalarBuilder s(b, loc);
    IndexMath im{b, loc};
    auto lhs = plan.a.type, rhs = plan.b.type;
    Value tid = gpu::ThreadIdOp::create(b, loc, gpu::Dimension::x);
    Value warp = im.div(tid, 32), lane = im.rem(tid, 32);
    Value g = im.div(lane, 4), t = im.rem(lane, 4);
    Value tileB = gpu::BlockIdOp::create(b, loc, gpu::Dimension::x);
    Value tileA = gpu::BlockIdOp::create(b, loc, gpu::Dimension::y);
    Value batch = gpu::BlockIdOp::create(b, loc, gpu::Dimension::z);
    auto clampedRow = [&](Value tile, int64_t tileRows, int64_t offset,
                          int64_t rows) {
      Value row = im.add(im.add(im.mul(tile, tileRows), im.c(offset)), g);
      row = arith::MinUIOp::create(b, loc, row, im.c(rows - 1));
      return im.add(im.mul(batch, rows), row);
    };
    // The B rows of this lane (g and g + 8 of every m16 tile) and its A
    // rows (g of every n8 tile), over all batch elements.
    SmallVector<Value> rowsB, rowsA;
    for (int64_t mt = 0; mt < shape.mmaTilesB; ++mt)
      for (int64_t half = 0; half < 2; ++half)
        rowsB.push_back(clampedRow(tileB, plan.tileN, 16 * mt + 8 * half,
                                   shape.n));
    for (int64_t q = 0; q < shape.mmaTilesA; ++q)
      rowsA.push_back(clampedRow(tileA, plan.tileM, 8 * q, shape.m));
    Value wordsA = codesAsWords(b, loc, args[0]);
    Value wordsB = codesAsWords(b, loc, args[3]);

    Value firstChunk = im.mul(warp, shape.chunksPerWarp);
    // One group of U chunks: every load first (the bytes in flight hide the
    // latency), then the math of each chunk.
    Value staged = shape.stagedRows ? args[partialsIndex() + 1] : Value();
    auto loadGroup = [&](Value it) {
      LoadedGroup group;
      for (int64_t u = 0; u < shape.chunksInFlight; ++u) {
        Value chunk = im.add(im.add(firstChunk, it), im.c(u));
        group.b.emplace_back();
        group.a.emplace_back();
        for (auto [i, row] : llvm::enumerate(rowsB))
          group.b.back().push_back(load(im, wordsB, args[4], rhs, row, chunk,
                                        t, loadsScalesB(i)));
        if (!staged)
          for (Value row : rowsA)
            group.a.back().push_back(
                load(im, wordsA, args[1], lhs, row, chunk, t));
      }
      return group;
    };
    std::optional<LoadedGroup> prefetched;
    if (plan.skinnyPrefetch)
      prefetched = loadGroup(im.c(0));
    // Staged A: unit (chunk, row, quad lane) of this warp's K range is 32
    // codes; its 16 F16x2 words go to shared memory as 4 vectors of 4,
    // vector i at slot (i + t / 2 + 2 (row % 2)) % 4 of the unit's 64
    // bytes, so the 8 lanes of a quarter warp that read vector i of their
    // units (4 quad lanes x 2 rows) hit 8 different 16-byte bank groups.
    // With scaledA, copy c (B's m16 tile c) follows copy c - 1.
    auto stagedIndex = [&](Value chunk, Value row, Value quad, int64_t i,
                           int64_t copy) {
      Value unit = im.add(
          im.mul(im.add(im.mul(im.add(im.mul(warp, shape.chunksPerWarp),
                                      chunk),
                               shape.stagedRows),
                        row),
                 4),
          quad);
      Value slot = im.rem(
          im.add(im.add(im.c(i), im.div(quad, 2)), im.mul(im.rem(row, 2), 2)),
          4);
      return im.add(im.add(im.mul(unit, 16), im.mul(slot, 4)),
                    im.c(copy * shape.stagedCopyWords()));
    };
    if (staged) {
      int64_t units = shape.chunksPerWarp * shape.stagedRows * 4;
      for (int64_t base = 0; base < units; base += 32) {
        Value unit = im.add(lane, im.c(base));
        auto ifUnit = scf::IfOp::create(b, loc, im.lt(unit, units), false);
        OpBuilder::InsertionGuard guard(b);
        b.setInsertionPointToStart(ifUnit.thenBlock());
        Value quad = im.rem(unit, 4);
        Value row = im.rem(im.div(unit, 4), shape.stagedRows);
        Value chunk = im.div(unit, 4 * shape.stagedRows);
        Value global = globalChunk(im, warp, chunk);
        LoadedRow loaded = load(im, wordsA, args[1], lhs,
                                im.add(im.mul(batch, shape.m), row), global,
                                quad);
        std::array<Value, 2> scale = scalePairs(loaded);
        // With scaledA: the scales of the unit's two blocks in B's m16
        // tile c (its first row, clamped: rows past N feed no output),
        // times 2^2 -- A'' = (2^-7 codeA sA) (2^2 sB).
        SmallVector<std::array<Value, 2>> scalesB;
        if (shape.scaledA) {
          Value block = im.add(im.mul(global, kChunkK / 16), im.mul(quad, 2));
          for (int64_t c = 0; c < shape.stagedCopies; ++c) {
            Value rowB = arith::MinUIOp::create(
                b, loc, im.add(im.mul(tileB, plan.tileN), im.c(16 * c)),
                im.c(shape.n - 1));
            rowB = im.add(im.mul(batch, shape.n), rowB);
            Value pair = vector::FromElementsOp::create(
                b, loc, VectorType::get({2}, b.getI8Type()),
                ValueRange{
                    memref::LoadOp::create(
                        b, loc, args[4],
                        ValueRange{scaleOffset(im, rhs, rowB, block)}),
                    memref::LoadOp::create(
                        b, loc, args[4],
                        ValueRange{scaleOffset(im, rhs, rowB,
                                               im.add(block, im.c(1)))})});
            scalesB.push_back(decodeE4M3x2ToF16Pairs(b, loc, pair, 2));
          }
        }
        for (int64_t w = 0; w < 4; ++w) {
          std::array<Value, 4> words = decodeWord(loaded, scale, w);
          for (int64_t c = 0; c < shape.stagedCopies; ++c) {
            std::array<Value, 4> stored = words;
            if (shape.scaledA)
              for (Value &x : stored)
                x = mulF16x2(b, loc, x, scalesB[c][w / 2]);
            vector::StoreOp::create(
                b, loc,
                vector::FromElementsOp::create(
                    b, loc, VectorType::get({4}, b.getI32Type()), stored),
                staged, ValueRange{stagedIndex(chunk, row, quad, w, c)});
          }
        }
      }
      gpu::BarrierOp::create(b, loc);
    }
    // The staged A rows this lane reads, g + 8 q of n8 tile q (rows past
    // M: the last one).
    SmallVector<Value> stagedRow;
    if (staged)
      for (int64_t q = 0; q < shape.mmaTilesA; ++q)
        stagedRow.push_back(arith::MinUIOp::create(
            b, loc, im.add(g, im.c(8 * q)), im.c(shape.stagedRows - 1)));

    SmallVector<Value> init(shape.accumulatorSets() * shape.accumulators(),
                            s.f32(0.0f));
    // The staged A words of code word w, n8 tile q, of local chunk `chunk`.
    auto stagedWordsOf = [&](Value chunk) -> StagedWords {
      return [&, chunk](int64_t w, int64_t q, int64_t copy) {
        Value words = vector::LoadOp::create(
            b, loc, VectorType::get({4}, b.getI32Type()), staged,
            ValueRange{stagedIndex(chunk, stagedRow[q], t, w, copy)});
        std::array<Value, 4> four;
        for (int64_t i = 0; i < 4; ++i)
          four[i] = vector::ExtractOp::create(b, loc, words,
                                              ArrayRef<int64_t>{i});
        return four;
      };
    };
    auto multiplyGroup = [&](Value it, const LoadedGroup &group,
                             MutableArrayRef<Value> acc) {
      for (int64_t u = 0; u < shape.chunksInFlight; ++u)
        multiplyChunk(group.b[u], group.a[u],
                      staged ? stagedWordsOf(im.add(it, im.c(u)))
                             : StagedWords(),
                      acc);
    };
    SmallVector<Value> sums;
    if (!plan.skinnyPrefetch) {
      scf::ForOp loop = scf::ForOp::create(
          b, loc, im.c(0), im.c(shape.chunksPerWarp),
          im.c(shape.chunksInFlight), init,
          [&](OpBuilder &nested, Location, Value it, ValueRange iterAcc) {
            // The helpers build with `b`: move it into the body.
            OpBuilder::InsertionGuard guard(b);
            b.setInsertionPoint(nested.getInsertionBlock(),
                                nested.getInsertionPoint());
            SmallVector<Value> acc(iterAcc);
            // Every load of the U chunks first.
            LoadedGroup group = loadGroup(it);
            multiplyGroup(it, group, acc);
            scf::YieldOp::create(b, loc, acc);
          });
      sums.assign(loop.getResults().begin(), loop.getResults().end());
    } else {
      // Prefetch ("_pf"): the loads of group i + 1 are issued before the
      // math of group i, the registers of both live at once; group 0's
      // were issued before A was staged.
      int64_t step = shape.chunksInFlight;
      int64_t last = shape.chunksPerWarp - step;
      SmallVector<Value> acc(init);
      LoadedGroup current = *prefetched;
      if (last > 0) {
        SmallVector<Value> carried(acc);
        llvm::append_range(carried, current.flatten());
        auto loop = scf::ForOp::create(
            b, loc, im.c(0), im.c(last), im.c(step), carried,
            [&](OpBuilder &nested, Location, Value it, ValueRange iterArgs) {
              OpBuilder::InsertionGuard guard(b);
              b.setInsertionPoint(nested.getInsertionBlock(),
                                  nested.getInsertionPoint());
              SmallVector<Value> acc(iterArgs.take_front(init.size()));
              LoadedGroup group = current.rebuilt(
                  iterArgs.drop_front(init.size()));
              LoadedGroup next = loadGroup(im.add(it, im.c(step)));
              multiplyGroup(it, group, acc);
              SmallVector<Value> yielded(acc);
              llvm::append_range(yielded, next.flatten());
              scf::YieldOp::create(b, loc, yielded);
            });
        acc.assign(loop.getResults().begin(),
                   loop.getResults().begin() + init.size());
        current =
            current.rebuilt(loop.getResults().drop_front(init.size()));
      }
      multiplyGroup(im.c(last), current, acc);
      sums = acc;
    }

    // The warps' partial sums meet in shared memory: [warp][fragment][lane]
    // x 4 FP32.
    // The first workgroup buffer, after the kernel arguments.
    Value partials = args[partialsIndex()];
    for (int64_t f = 0; f < shape.mmaTilesB * shape.mmaTilesA; ++f) {
      SmallVector<Value> four;
      for (int64_t i = 0; i < 4; ++i) {
        Value sum = sums[4 * f + i];
        if (shape.accumulatorSets() == 2)
          sum = arith::AddFOp::create(b, loc, sum,
                                      sums[shape.accumulators() + 4 * f + i]);
        four.push_back(sum);
      }
      Value slot = im.mul(
          im.add(im.mul(im.add(im.mul(warp, shape.mmaTilesB * shape.mmaTilesA),
                               im.c(f)),
                        32),
                 lane),
          4);
      vector::StoreOp::create(
          b, loc,
          vector::FromElementsOp::create(
              b, loc, VectorType::get({4}, b.getF32Type()), four),
          partials, ValueRange{slot});
    }
    gpu::BarrierOp::create(b, loc);

    // Output element o of the CTA's tile: column (B row) o % tileN, row (A
    // row) o / tileN, so neighbouring threads store neighbouring columns.
    Value alpha = arith::MulFOp::create(b, loc, args[6],
                                        loadAmax(b, loc, args[2]));
    alpha = arith::MulFOp::create(b, loc, alpha, loadAmax(b, loc, args[5]));
    // The powers of two the decode left in the products (GemmSchedule's
    // skinnyByteDecode and skinnyScaledA): exact, so the result bits are
    // the plain decode's.
    float carried = shape.scaledA            ? float(1 << 19)
                    : plan.skinnyByteDecode ? float(1 << 14)
                                            : 1.0f;
    alpha = arith::MulFOp::create(b, loc, alpha,
                                  s.f32(plan.alphaConstant * carried));
    Type element = plan.resultElement;
    int64_t outputs = plan.tileN * plan.tileM;
    int64_t threads = shape.warps * 32;
    Value amax = s.f32(0.0f);
    for (int64_t base = 0; base < outputs; base += threads) {
      Value o = im.add(tid, im.c(base));
      Value col = im.rem(o, plan.tileN), row = im.div(o, plan.tileN);
      Value mt = im.div(col, 16), r = im.rem(col, 16);
      Value q = im.div(row, 8), c = im.rem(row, 8);
      Value fragmentLane = im.add(im.mul(im.rem(r, 8), 4), im.div(c, 2));
      Value reg = im.add(im.mul(im.div(r, 8), 2), im.rem(c, 2));
      Value fragment = im.add(im.mul(mt, shape.mmaTilesA), q);
      Value n = im.add(im.mul(tileB, plan.tileN), col);
      Value m = im.add(im.mul(tileA, plan.tileM), row);
      Value inside = arith::AndIOp::create(
          b, loc, im.lt(o, outputs),
          arith::AndIOp::create(b, loc, im.lt(n, shape.n), im.lt(m, shape.m)));
      auto ifInside = scf::IfOp::create(b, loc, TypeRange(b.getF32Type()),
                                        inside, /*withElseRegion=*/true);
      {
        OpBuilder::InsertionGuard guard(b);
        b.setInsertionPointToStart(ifInside.elseBlock());
        scf::YieldOp::create(b, loc, ValueRange{s.f32(0.0f)});
        b.setInsertionPointToStart(ifInside.thenBlock());
        Value sum;
        for (int64_t w = 0; w < shape.warps; ++w) {
          Value slot = im.add(
              im.mul(im.add(im.mul(im.add(im.c(w * shape.mmaTilesB *
                                              shape.mmaTilesA),
                                         fragment),
                                   32),
                            fragmentLane),
                     4),
              reg);
          Value partial =
              memref::LoadOp::create(b, loc, partials, ValueRange{slot});
          sum = w ? arith::AddFOp::create(b, loc, sum, partial).getResult()
                  : partial;
        }
        Value value =
            s.fromF32(arith::MulFOp::create(b, loc, sum, alpha), element);
        Value index = im.add(
            im.mul(im.add(im.mul(batch, shape.m), m), shape.n), n);
        memref::StoreOp::create(b, loc, value, args[7], ValueRange{index});
        scf::YieldOp::create(
            b, loc, math::AbsFOp::create(b, loc, s.toF32(value)).getResult());
      }
      amax = arith::MaximumFOp::create(b, loc, amax, ifInside.getResult(0));
    }
    if (plan.outputAmax)
      warpMaxToAmax(b, loc, amax, args[8]);
  }
};

} // namespace

std::string kernels::skinnyGemmUnsupportedReason(const GemmPlan &plan) {
  if (plan.splitK > 1 || plan.persistent || plan.decodedStages)
    return "the skinny kernel has no split-K, persistence or decoded stages";
  if (plan.quantizeOutput)
    return "the skinny kernel has no quantizing epilogue";
  if (plan.tileM % 8 != 0 || plan.tileM < 8 || plan.tileM > 32)
    return "the skinny kernel's tile M is 8, 16, 24 or 32 rows of A";
  if (plan.tileN != 16 && plan.tileN != 32)
    return "the skinny kernel's tile N is 16 or 32 rows of B";
  if (plan.k % kChunkK != 0)
    return "the skinny kernel needs K to be a multiple of " +
           std::to_string(kChunkK);
  if ((plan.k / kChunkK) % plan.skinnyWarps != 0)
    return "the skinny kernel's " + std::to_string(plan.skinnyWarps) +
           " warps do not divide the " + std::to_string(plan.k / kChunkK) +
           " chunks of 128 K";
  if (plan.skinnyChunks &&
      (plan.k / kChunkK / plan.skinnyWarps) % plan.skinnyChunks != 0)
    return "the skinny kernel's chunks in flight do not divide a warp's " +
           std::to_string(plan.k / kChunkK / plan.skinnyWarps) + " chunks";
  if (plan.skinnyStageA && plan.m > plan.tileM)
    return "the skinny kernel stages A (_a) only when M <= tile M";
  if (plan.skinnyScaledA &&
      (!plan.skinnyStageA || !plan.skinnyByteDecode ||
       plan.b.type.getBlockRows() != 16))
    return "the skinny kernel scales the staged A by B's block scales (_s) "
           "only with A staged (_a), the byte decode (_e) and 16x16 blocks "
           "of B";
  if (SkinnyShape(plan).sharedBytes() > kMaxStaticSharedBytes)
    return "the skinny kernel needs " +
           std::to_string(SkinnyShape(plan).sharedBytes()) +
           " bytes of static shared memory (at most " +
           std::to_string(kMaxStaticSharedBytes) + ")";
  if (plan.skinnyWarps > 32)
    return "the skinny kernel has at most 32 warps";
  if (plan.tileN / 16 * plan.tileM / 8 > 4)
    return "the skinny kernel keeps at most 4 mma tiles per warp";
  return "";
}

int64_t kernels::skinnyGemmWarps(int64_t k, int64_t preferred) {
  int64_t chunks = k / kChunkK;
  for (int64_t w = preferred; w > 1; --w)
    if (chunks % w == 0)
      return w;
  return 1;
}

gpu::GPUFuncOp kernels::buildSkinnyGemmKernel(ModuleOp module,
                                              const GemmPlan &plan,
                                              TypeRange argTypes,
                                              StringRef name) {
  SkinnyShape shape(plan);
  KernelOptions options;
  options.blockSize = shape.warps * 32;
  // Two CTAs per SM (a 16-row tile of B each: the grid has few CTAs, so
  // the warps per SM come from the CTAs' size): ptxas caps the registers
  // at 64 for 16 warps, 128 for 8. CTAs of more than 8 warps in a grid
  // that fits the SMs once take one each and keep 128 registers.
  std::array<int64_t, 3> grid = plan.grid();
  bool oneWave = plan.chip &&
                 grid[0] * grid[1] * grid[2] <= plan.chip->multiprocessors;
  options.minBlocksPerMultiprocessor = shape.warps > 8 && oneWave ? 1 : 2;
  MLIRContext *ctx = module.getContext();
  auto workgroup =
      gpu::AddressSpaceAttr::get(ctx, gpu::AddressSpace::Workgroup);
  // The partial sums and the staged A are read and written as 16-byte
  // vectors: their buffers are 16-byte aligned (by default the element's
  // 4 bytes, and ptxas once placed the partials 4 bytes past a 16-byte
  // boundary: a misaligned-address fault on the H200, session 9).
  options.workgroupBuffers.push_back(MemRefType::get(
      {shape.warps * shape.accumulators() * 32}, Float32Type::get(ctx),
      MemRefLayoutAttrInterface(), workgroup));
  options.workgroupAlignments.push_back(16);
  if (shape.stagedRows) {
    options.workgroupBuffers.push_back(
        MemRefType::get({shape.stagedWords()}, IntegerType::get(ctx, 32),
                        MemRefLayoutAttrInterface(), workgroup));
    options.workgroupAlignments.push_back(16);
  }
  return getOrCreateKernel(module, name, argTypes, options,
                           [&](OpBuilder &b, Location loc, ValueRange args) {
                             SkinnyKernel{b, loc, plan, shape, args}.emit();
                           });
}
