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

  explicit SkinnyShape(const GemmPlan &plan)
      : batch(plan.batch), m(plan.m), n(plan.n), k(plan.k),
        warps(plan.skinnyWarps), mmaTilesB(plan.tileN / 16),
        mmaTilesA(plan.tileM / 8),
        chunksPerWarp(plan.k / kChunkK / plan.skinnyWarps) {
    if (plan.skinnyStageA)
      stagedRows = plan.m;
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
  int64_t stagedWords() const {
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
                 BlockScaledTensorType type, Value row, Value chunk,
                 Value t) {
    Value byte = im.add(im.add(im.mul(row, shape.k / 2),
                               im.mul(chunk, kChunkBytes)),
                        im.mul(t, 16));
    LoadedRow loaded;
    loaded.words = vector::LoadOp::create(
        b, loc, VectorType::get({4}, b.getI32Type()), codeWords,
        ValueRange{im.div(byte, 4)}, /*nontemporal=*/false,
        llvm::MaybeAlign(16));
    Value block = im.add(im.mul(chunk, kChunkK / 16), im.mul(t, 2));
    loaded.scale0 = memref::LoadOp::create(
        b, loc, scales, ValueRange{scaleOffset(im, type, row, block)});
    loaded.scale1 = memref::LoadOp::create(
        b, loc, scales,
        ValueRange{scaleOffset(im, type, row, im.add(block, im.c(1)))});
    return loaded;
  }

  /// The row's two block scales as F16x2 pairs {s, s}.
  std::array<Value, 2> scalePairs(const LoadedRow &row) {
    Value pair = vector::FromElementsOp::create(
        b, loc, VectorType::get({2}, b.getI8Type()),
        ValueRange{row.scale0, row.scale1});
    return decodeE4M3x2ToF16Pairs(b, loc, pair);
  }

  /// The 4 F16x2 words (code x scale, exact) of code word `w` (0..3) of a
  /// loaded row: the operands of mma steps 2w and 2w + 1. Words 0, 1 are
  /// block 2t, words 2, 3 block 2t + 1.
  std::array<Value, 4> decodeWord(const LoadedRow &row,
                                  const std::array<Value, 2> &scale,
                                  int64_t w) {
    Value word = vector::ExtractOp::create(b, loc, row.words,
                                           ArrayRef<int64_t>{w});
    std::array<Value, 4> out = decodeE2M1x8ToF16(b, loc, word);
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
    // Staged A: unit (chunk, row, quad lane) of this warp's K range is 32
    // codes; its 16 F16x2 words go to shared memory as 4 vectors of 4,
    // vector i at slot (i + t / 2 + 2 (row % 2)) % 4 of the unit's 64
    // bytes, so the 8 lanes of a quarter warp that read vector i of their
    // units (4 quad lanes x 2 rows) hit 8 different 16-byte bank groups.
    Value staged = shape.stagedRows ? args[args.size() - 1] : Value();
    auto stagedIndex = [&](Value chunk, Value row, Value quad, int64_t i) {
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
      return im.add(im.mul(unit, 16), im.mul(slot, 4));
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
        LoadedRow loaded =
            load(im, wordsA, args[1], lhs,
                 im.add(im.mul(batch, shape.m), row),
                 im.add(firstChunk, chunk), quad);
        std::array<Value, 2> scale = scalePairs(loaded);
        for (int64_t w = 0; w < 4; ++w) {
          std::array<Value, 4> words = decodeWord(loaded, scale, w);
          vector::StoreOp::create(
              b, loc,
              vector::FromElementsOp::create(
                  b, loc, VectorType::get({4}, b.getI32Type()), words),
              staged, ValueRange{stagedIndex(chunk, row, quad, w)});
        }
      }
      gpu::BarrierOp::create(b, loc);
    }
    // The staged A row this lane reads (rows past M: the last one).
    Value stagedRow =
        staged ? arith::MinUIOp::create(b, loc, g, im.c(shape.stagedRows - 1))
                     .getResult()
               : Value();

    SmallVector<Value> init(shape.accumulatorSets() * shape.accumulators(),
                            s.f32(0.0f));
    auto loop = scf::ForOp::create(
        b, loc, im.c(0), im.c(shape.chunksPerWarp), im.c(shape.chunksInFlight),
        init, [&](OpBuilder &nested, Location, Value it, ValueRange iterAcc) {
          // The helpers build with `b`: move it into the body.
          OpBuilder::InsertionGuard guard(b);
          b.setInsertionPoint(nested.getInsertionBlock(),
                              nested.getInsertionPoint());
          SmallVector<Value> acc(iterAcc);
          // Every load of the U chunks first.
          SmallVector<SmallVector<LoadedRow>> loadedB, loadedA;
          for (int64_t u = 0; u < shape.chunksInFlight; ++u) {
            Value chunk = im.add(im.add(firstChunk, it), im.c(u));
            loadedB.emplace_back();
            loadedA.emplace_back();
            for (Value row : rowsB)
              loadedB.back().push_back(
                  load(im, wordsB, args[4], rhs, row, chunk, t));
            if (!staged)
              for (Value row : rowsA)
                loadedA.back().push_back(
                    load(im, wordsA, args[1], lhs, row, chunk, t));
          }
          // Then per chunk and code word: decode the word of every row,
          // then its two mma steps (short live ranges: a word's 4 F16x2
          // values per row, not a chunk's 16).
          for (int64_t u = 0; u < shape.chunksInFlight; ++u) {
            SmallVector<std::array<Value, 2>> scalesB, scalesA;
            for (const LoadedRow &row : loadedB[u])
              scalesB.push_back(scalePairs(row));
            for (const LoadedRow &row : loadedA[u])
              scalesA.push_back(scalePairs(row));
            for (int64_t w = 0; w < 4; ++w) {
              SmallVector<std::array<Value, 4>> wordB, wordA;
              for (auto [row, scale] : llvm::zip(loadedB[u], scalesB))
                wordB.push_back(decodeWord(row, scale, w));
              for (auto [row, scale] : llvm::zip(loadedA[u], scalesA))
                wordA.push_back(decodeWord(row, scale, w));
              if (staged) {
                Value words = vector::LoadOp::create(
                    b, loc, VectorType::get({4}, b.getI32Type()), staged,
                    ValueRange{stagedIndex(im.add(it, im.c(u)), stagedRow, t,
                                           w)});
                std::array<Value, 4> four;
                for (int64_t i = 0; i < 4; ++i)
                  four[i] = vector::ExtractOp::create(b, loc, words,
                                                      ArrayRef<int64_t>{i});
                wordA.push_back(four);
              }
              for (int64_t half = 0; half < 2; ++half) {
                int64_t step = 2 * w + half;
                for (int64_t mt = 0; mt < shape.mmaTilesB; ++mt)
                  for (int64_t q = 0; q < shape.mmaTilesA; ++q) {
                    const auto &lo = wordB[2 * mt], &hi = wordB[2 * mt + 1];
                    const auto &a = wordA[q];
                    // a0a1 row g, a2a3 row g + 8 at slots (2t, 2t + 1);
                    // a4a5, a6a7 at (2t + 8, 2t + 9); b0b1, b2b3 the same
                    // slots of A's row.
                    mma({lo[2 * half], hi[2 * half], lo[2 * half + 1],
                         hi[2 * half + 1]},
                        {a[2 * half], a[2 * half + 1]},
                        MutableArrayRef<Value>(acc).slice(
                            4 * (mt * shape.mmaTilesA + q) +
                                (step % shape.accumulatorSets()) *
                                    shape.accumulators(),
                            4));
                  }
              }
            }
          }
          scf::YieldOp::create(b, loc, acc);
        });

    // The warps' partial sums meet in shared memory: [warp][fragment][lane]
    // x 4 FP32.
    // The first workgroup buffer, after the kernel arguments.
    Value partials = args[plan.outputAmax ? 9 : 8];
    for (int64_t f = 0; f < shape.mmaTilesB * shape.mmaTilesA; ++f) {
      SmallVector<Value> four;
      for (int64_t i = 0; i < 4; ++i) {
        Value sum = loop.getResult(4 * f + i);
        if (shape.accumulatorSets() == 2)
          sum = arith::AddFOp::create(
              b, loc, sum, loop.getResult(shape.accumulators() + 4 * f + i));
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
    alpha = arith::MulFOp::create(b, loc, alpha, s.f32(plan.alphaConstant));
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
  // at 64 for 16 warps, 128 for 8.
  options.minBlocksPerMultiprocessor = 2;
  MLIRContext *ctx = module.getContext();
  auto workgroup =
      gpu::AddressSpaceAttr::get(ctx, gpu::AddressSpace::Workgroup);
  options.workgroupBuffers.push_back(MemRefType::get(
      {shape.warps * shape.accumulators() * 32}, Float32Type::get(ctx),
      MemRefLayoutAttrInterface(), workgroup));
  if (shape.stagedRows)
    options.workgroupBuffers.push_back(
        MemRefType::get({shape.stagedWords()}, IntegerType::get(ctx, 32),
                        MemRefLayoutAttrInterface(), workgroup));
  return getOrCreateKernel(module, name, argTypes, options,
                           [&](OpBuilder &b, Location loc, ValueRange args) {
                             SkinnyKernel{b, loc, plan, shape, args}.emit();
                           });
}
