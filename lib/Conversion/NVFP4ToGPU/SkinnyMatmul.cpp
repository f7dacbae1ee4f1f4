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
// With GemmSchedule::skinnyBulkStages ("_b{S}") B's rows (and A's unless
// "_a") do not go through the lanes' registers: one thread streams them
// into a ring of S shared-memory stages with 1-D cp.async.bulk copies on
// per-slot mbarriers, S stages in flight from the kernel's first cycles,
// and the warps read their fragments from shared memory (the ring's
// section below). Its warps take the K chunks interleaved (stage j: chunk
// j W + w of warp w), so one stage is W x 64 contiguous bytes per row.
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
  /// With GemmSchedule::skinnyBulkStages: the ring's slots (at most the
  /// stages, chunksPerWarp); 0: no ring.
  int64_t ringSlots = 0;

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
    if (plan.skinnyBulkStages)
      ringSlots = std::min(plan.skinnyBulkStages, chunksPerWarp);
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
  /// Ring rows of A: the tile's rows, unless A is staged.
  int64_t ringRowsA() const { return stagedRows ? 0 : tileM(); }
  int64_t tileM() const { return mmaTilesA * 8; }
  /// Ring rows per slot: the B tile's, then A's.
  int64_t ringRows() const { return mmaTilesB * 16 + ringRowsA(); }
  /// Bytes of one ring row per stage: one chunk per warp.
  int64_t stageRowBytes() const { return warps * kChunkBytes; }
  /// A ring row's stride: 16 mod 32 words, so that rows g and g + 1 of a
  /// quarter warp fall on different halves of the banks.
  int64_t rowStride() const {
    return stageRowBytes() + (warps % 2 == 0 ? 64 : 0);
  }
  int64_t slotBytes() const { return ringRows() * rowStride(); }
  int64_t ringBytes() const { return ringSlots * slotBytes(); }
  /// The ring rows' staged scales: K / 16 bytes each.
  int64_t stagedScaleBytes() const {
    return ringSlots && !scaledA ? ringRows() * (k / 16) : 0;
  }
  /// Dynamic shared memory: the ring and 16 bytes of alignment slack.
  int64_t dynamicSharedBytes() const {
    return ringSlots ? ringBytes() + 16 : 0;
  }
  /// Static shared memory: the partial sums, the staged A, and with the
  /// ring its barriers and staged scales.
  int64_t sharedBytes() const {
    return 4 * (warps * accumulators() * 32 + stagedWords()) +
           8 * ringSlots + stagedScaleBytes();
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
  /// warp (w C .. w C + C - 1), or with the ring interleaved (stage j of
  /// warp w: chunk j W + w).
  Value globalChunk(IndexMath &im, Value warp, Value chunk) {
    if (shape.ringSlots)
      return im.add(im.mul(chunk, shape.warps), warp);
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

  //===--- The bulk-copy ring (GemmSchedule::skinnyBulkStages) ----------===//
  //
  // Slot s of the ring (dynamic shared memory) holds one stage: ring row r
  // (B rows 0 .. tileN - 1 of the CTA's tile, then, unless A is staged,
  // A rows 0 .. tileM - 1) at s * slotBytes + r * rowStride, its W * 64
  // bytes the chunks jW .. jW + W - 1 of that row (row stride padded so
  // that the 8 lanes of a quarter warp, 2 rows x 4 quad lanes, read 8
  // different 16-byte bank groups). Thread 0 issues a stage as one
  // mbarrier expect_tx of its bytes and one 1-D cp.async.bulk per ring
  // row; every thread waits on the slot's phase before it reads, and a
  // CTA barrier after the stage's math frees the slot for stage j + S.
  // The block scales of the ring rows are staged once, before the loop,
  // as bytes [ring row][K / 16] in static shared memory.

  Value ringBase, ringView, barriers, stagedScales;
  /// emit()'s group loads and math (the plain and the prefetching loop).
  std::function<LoadedGroup(Value)> loadGroup;
  std::function<void(Value, const LoadedGroup &, MutableArrayRef<Value>)>
      multiplyGroup;

  Value c32(int64_t v) { return i32(v); }

  /// The first workgroup buffer (the partial sums), after the kernel
  /// arguments; then the staged A, then the ring's barriers and scales.
  size_t partialsIndex() const { return plan.outputAmax ? 9 : 8; }

  Value barrierOf(Value slot) {
    Value bytes = arith::IndexCastOp::create(
        b, loc, b.getI64Type(),
        arith::MulIOp::create(b, loc, slot,
                              indexConstant(b, loc, 8)).getResult());
    return LLVM::GEPOp::create(b, loc, barriers.getType(), b.getI8Type(),
                               barriers, ValueRange{bytes});
  }

  /// Thread 0: stage `stage` (an index) into its slot.
  void issueStage(IndexMath &im, Value stage, Value tileB, Value tileA,
                  Value batch) {
    Value slot = im.rem(stage, shape.ringSlots);
    Value barrier = barrierOf(slot);
    NVVM::MBarrierArriveExpectTxOp::create(
        b, loc, Type(), barrier, c32(shape.ringRows() * shape.stageRowBytes()),
        NVVM::MemScopeKind::CTA, false, Value());
    auto global = LLVM::LLVMPointerType::get(b.getContext(), 1);
    auto cluster = LLVM::LLVMPointerType::get(b.getContext(), 7);
    Value stageByte = im.mul(stage, shape.stageRowBytes());
    Value slotByte = im.mul(slot, shape.slotBytes());
    Value codesB = memrefPointer(args[3], 1), codesA = memrefPointer(args[0], 1);
    // A loop over the rows, not one copy per row in the IR: with those,
    // ptxas kept every row's source address live across the ring loop
    // (spills at 16 x 32 tiles).
    auto rows = scf::ForOp::create(b, loc, im.c(0), im.c(shape.ringRows()),
                                   im.c(1));
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(rows.getBody());
    Value r = rows.getInductionVar();
    Value isB = im.lt(r, plan.tileN);
    Value rowB = arith::MinUIOp::create(
        b, loc, im.add(im.mul(tileB, plan.tileN), r), im.c(shape.n - 1));
    rowB = im.add(im.mul(batch, shape.n), rowB);
    Value src = LLVM::GEPOp::create(
        b, loc, global, b.getI8Type(), codesB,
        ValueRange{arith::IndexCastOp::create(
                       b, loc, b.getI64Type(),
                       im.add(im.mul(rowB, shape.k / 2), stageByte))
                       .getResult()});
    if (shape.ringRowsA()) {
      // Ring rows past the B tile: A rows r - tileN.
      Value local = arith::SelectOp::create(
          b, loc, isB, im.c(0), arith::SubIOp::create(b, loc, r, im.c(plan.tileN)));
      Value rowA = arith::MinUIOp::create(
          b, loc, im.add(im.mul(tileA, plan.tileM), local), im.c(shape.m - 1));
      rowA = im.add(im.mul(batch, shape.m), rowA);
      Value srcA = LLVM::GEPOp::create(
          b, loc, global, b.getI8Type(), codesA,
          ValueRange{arith::IndexCastOp::create(
                         b, loc, b.getI64Type(),
                         im.add(im.mul(rowA, shape.k / 2), stageByte))
                         .getResult()});
      src = arith::SelectOp::create(b, loc, isB, src, srcA);
    }
    Value dstByte = im.add(slotByte, im.mul(r, shape.rowStride()));
    Value dst = LLVM::GEPOp::create(
        b, loc, ringBase.getType(), b.getI8Type(), ringBase,
        ValueRange{arith::IndexCastOp::create(b, loc, b.getI64Type(), dstByte)
                       .getResult()});
    NVVM::CpAsyncBulkGlobalToSharedClusterOp::create(
        b, loc, LLVM::AddrSpaceCastOp::create(b, loc, cluster, dst), src,
        barrier, c32(shape.stageRowBytes()), Value(), Value());
  }

  Value memrefPointer(Value memref, unsigned addressSpace) {
    Value index =
        memref::ExtractAlignedPointerAsIndexOp::create(b, loc, memref);
    Value bits = arith::IndexCastOp::create(b, loc, b.getI64Type(), index);
    return LLVM::IntToPtrOp::create(
        b, loc, LLVM::LLVMPointerType::get(b.getContext(), addressSpace),
        bits);
  }

  /// The ring's views, its barriers and first stages, and the staged
  /// scales (ends with a CTA barrier).
  void startRing(IndexMath &im, Value tid, Value tileB, Value tileA,
                 Value batch) {
    MLIRContext *ctx = b.getContext();
    auto workgroup =
        gpu::AddressSpaceAttr::get(ctx, gpu::AddressSpace::Workgroup);
    auto bytesType = MemRefType::get({ShapedType::kDynamic}, b.getI8Type(),
                                     MemRefLayoutAttrInterface(), workgroup);
    Value dynamic = gpu::DynamicSharedMemoryOp::create(b, loc, bytesType);
    // The bulk copies need 16-byte aligned destinations: round the base
    // up (the launch requested 16 bytes of slack).
    Value raw = memrefPointer(dynamic, 3);
    Value address = LLVM::PtrToIntOp::create(b, loc, b.getI32Type(), raw);
    Value pad = arith::AndIOp::create(
        b, loc, arith::SubIOp::create(b, loc, c32(0), address), c32(15));
    Value padIndex = arith::IndexCastUIOp::create(b, loc, b.getIndexType(),
                                                  pad);
    ringBase = LLVM::GEPOp::create(
        b, loc, raw.getType(), b.getI8Type(), raw,
        ValueRange{arith::ExtUIOp::create(b, loc, b.getI64Type(), pad)
                       .getResult()});
    ringView = memref::ViewOp::create(
        b, loc,
        MemRefType::get({shape.ringBytes() / 4}, b.getI32Type(),
                        MemRefLayoutAttrInterface(), workgroup),
        dynamic, padIndex, ValueRange());
    int64_t ringBuffers = partialsIndex() + (shape.stagedRows ? 2 : 1);
    barriers = memrefPointer(args[ringBuffers], 3);
    stagedScales = args[ringBuffers + 1];

    auto ifFirst = scf::IfOp::create(b, loc, im.eq(tid, 0), false);
    {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(ifFirst.thenBlock());
      for (int64_t slot = 0; slot < shape.ringSlots; ++slot)
        NVVM::MBarrierInitOp::create(b, loc, barrierOf(im.c(slot)), c32(1),
                                     Value());
      // The initialized barriers must be visible to the async proxy the
      // copies complete through.
      NVVM::FenceProxyOp::create(
          b, loc, NVVM::ProxyKind::async_shared,
          NVVM::SharedSpaceAttr::get(ctx, NVVM::SharedSpace::shared_cta));
      auto first = scf::ForOp::create(b, loc, im.c(0), im.c(shape.ringSlots),
                                      im.c(1));
      b.setInsertionPointToStart(first.getBody());
      issueStage(im, first.getInductionVar(), tileB, tileA, batch);
    }
    // The ring rows' scales, [ring row][K / 16] bytes: B's rows, then A's.
    // Unrolled, every load (clamped in bounds) before the guarded stores,
    // so that a thread's loads are in flight together.
    int64_t blocks = shape.k / 16;
    int64_t threads = shape.warps * 32;
    // (index, byte, the end of its part)
    SmallVector<std::tuple<Value, Value, int64_t>> staged;
    auto stageRows = [&](bool forB, int64_t tileRows, int64_t at) {
      int64_t count = tileRows * blocks;
      int64_t rows = forB ? shape.n : shape.m;
      Value tile = forB ? tileB : tileA;
      for (int64_t base = 0; base < count; base += threads) {
        Value i = im.add(tid, im.c(base));
        Value clamped = arith::MinUIOp::create(b, loc, i, im.c(count - 1));
        Value row = arith::MinUIOp::create(
            b, loc, im.add(im.mul(tile, tileRows), im.div(clamped, blocks)),
            im.c(rows - 1));
        row = im.add(im.mul(batch, rows), row);
        Value byte = memref::LoadOp::create(
            b, loc, args[forB ? 4 : 1],
            ValueRange{scaleOffset(im, forB ? plan.b.type : plan.a.type, row,
                                   im.rem(clamped, blocks))});
        staged.push_back({im.add(i, im.c(at)), byte, at + count});
      }
    };
    if (!shape.scaledA)
      stageRows(true, plan.tileN, 0);
    if (shape.ringRowsA())
      stageRows(false, plan.tileM, plan.tileN * blocks);
    for (auto [index, byte, end] : staged) {
      auto inside = scf::IfOp::create(b, loc, im.lt(index, end), false);
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(inside.thenBlock());
      memref::StoreOp::create(b, loc, byte, stagedScales, ValueRange{index});
    }
    gpu::BarrierOp::create(b, loc);
  }

  /// Ring row `r` (static offset plus the lane's g) of slot `slot` as a
  /// LoadedRow of local chunk `stage`.
  LoadedRow ringRow(IndexMath &im, Value slot, Value stage, int64_t r0,
                    Value g, Value warp, Value t, bool withScales = true) {
    Value r = im.add(im.c(r0), g);
    Value byte = im.add(im.add(im.mul(slot, shape.slotBytes()),
                               im.mul(r, shape.rowStride())),
                        im.add(im.mul(warp, kChunkBytes), im.mul(t, 16)));
    LoadedRow row;
    row.words = vector::LoadOp::create(
        b, loc, VectorType::get({4}, b.getI32Type()), ringView,
        ValueRange{im.div(byte, 4)}, /*nontemporal=*/false,
        llvm::MaybeAlign(16));
    if (!withScales)
      return row;
    Value block = im.add(im.mul(globalChunk(im, warp, stage), kChunkK / 16),
                         im.mul(t, 2));
    Value at = im.add(im.mul(r, shape.k / 16), block);
    row.scale0 = memref::LoadOp::create(b, loc, stagedScales, ValueRange{at});
    row.scale1 = memref::LoadOp::create(b, loc, stagedScales,
                                        ValueRange{im.add(at, im.c(1))});
    return row;
  }

  scf::ForOp emitRingLoop(
      IndexMath &im, ValueRange init, Value g, Value t, Value tileB,
      Value tileA, Value batch,
      llvm::function_ref<StagedWords(Value)> stagedWordsOf) {
    Value tid = gpu::ThreadIdOp::create(b, loc, gpu::Dimension::x);
    Value warp = im.div(tid, 32);
    return scf::ForOp::create(
        b, loc, im.c(0), im.c(shape.chunksPerWarp), im.c(1), init,
        [&](OpBuilder &nested, Location, Value stage, ValueRange iterAcc) {
          OpBuilder::InsertionGuard guard(b);
          b.setInsertionPoint(nested.getInsertionBlock(),
                              nested.getInsertionPoint());
          SmallVector<Value> acc(iterAcc);
          Value slot = im.rem(stage, shape.ringSlots);
          Value parity = arith::IndexCastUIOp::create(
              b, loc, b.getI32Type(),
              im.rem(im.div(stage, shape.ringSlots), 2));
          NVVM::MBarrierTryWaitParityOp::create(b, loc, barrierOf(slot),
                                                parity, c32(0));
          SmallVector<LoadedRow> loadedB, loadedA;
          for (int64_t mt = 0; mt < shape.mmaTilesB; ++mt)
            for (int64_t half = 0; half < 2; ++half)
              loadedB.push_back(ringRow(im, slot, stage, 16 * mt + 8 * half,
                                        g, warp, t,
                                        loadsScalesB(2 * mt + half)));
          if (shape.ringRowsA())
            for (int64_t q = 0; q < shape.mmaTilesA; ++q)
              loadedA.push_back(ringRow(im, slot, stage, plan.tileN + 8 * q,
                                        g, warp, t));
          multiplyChunk(loadedB, loadedA,
                        shape.ringRowsA() ? nullptr : stagedWordsOf(stage),
                        acc);
          // Refill: once every warp is done with the slot, thread 0 copies
          // stage + S into it (a condition uniform over the CTA).
          Value next = im.add(stage, im.c(shape.ringSlots));
          auto ifMore = scf::IfOp::create(b, loc, im.lt(next, shape.chunksPerWarp),
                                          false);
          {
            OpBuilder::InsertionGuard g2(b);
            b.setInsertionPointToStart(ifMore.thenBlock());
            gpu::BarrierOp::create(b, loc);
            auto ifFirst = scf::IfOp::create(b, loc, im.eq(tid, 0), false);
            b.setInsertionPointToStart(ifFirst.thenBlock());
            issueStage(im, next, tileB, tileA, batch);
          }
          scf::YieldOp::create(b, loc, acc);
        });
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
    // One group of U chunks: every load first (the bytes in flight hide the
    // latency), then the math of each chunk.
    Value staged = shape.stagedRows ? args[partialsIndex() + 1] : Value();
    loadGroup = [&](Value it) {
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
    // With the ring, the barriers, the first stages' copies and the staged
    // scales come first: the copies are in flight while A is staged.
    if (shape.ringSlots)
      startRing(im, tid, tileB, tileA, batch);
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
    std::function<StagedWords(Value)> stagedWordsOf =
        [&](Value chunk) -> StagedWords {
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
    multiplyGroup = [&](Value it, const LoadedGroup &group,
                        MutableArrayRef<Value> acc) {
      for (int64_t u = 0; u < shape.chunksInFlight; ++u)
        multiplyChunk(group.b[u], group.a[u],
                      staged ? stagedWordsOf(im.add(it, im.c(u)))
                             : StagedWords(),
                      acc);
    };
    SmallVector<Value> sums;
    if (shape.ringSlots) {
      scf::ForOp loop =
          emitRingLoop(im, init, g, t, tileB, tileA, batch, stagedWordsOf);
      sums.assign(loop.getResults().begin(), loop.getResults().end());
    } else if (!plan.skinnyPrefetch) {
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
  // The ring ran on the H200 in session 9: within tolerance with 16x16
  // blocks of B, non-finite C with 1x16 blocks (matmul_skinny_bulk_5x1000x
  // 768_bf16, ..._staged_batched_2x1x336x1024), never measured faster.
  // Until that is understood it cannot be forced.
  if (plan.skinnyBulkStages)
    return "the skinny kernel's bulk-copy ring (_b) is disabled: it gave "
           "non-finite results with 1x16-blocked B on the H200";
  if (plan.skinnyBulkStages && plan.skinnyChunks)
    return "the skinny kernel's bulk-copy ring (_b) takes one chunk per "
           "warp and stage: no chunks in flight (_u)";
  if (plan.skinnyBulkStages && plan.chip &&
      SkinnyShape(plan).sharedBytes() +
              SkinnyShape(plan).dynamicSharedBytes() >
          plan.chip->maxSharedMemoryPerBlock)
    return "the skinny kernel's ring needs " +
           std::to_string(SkinnyShape(plan).sharedBytes() +
                          SkinnyShape(plan).dynamicSharedBytes()) +
           " bytes of shared memory (" + std::string(plan.chip->name) + " allows " +
           std::to_string(plan.chip->maxSharedMemoryPerBlock) + ")";
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

int64_t kernels::skinnyGemmDynamicSharedBytes(const GemmPlan &plan) {
  return SkinnyShape(plan).dynamicSharedBytes();
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
  // 4 bytes, and ptxas placed the partials 4 bytes past a 16-byte boundary
  // behind the ring's staged scales: a misaligned-address fault on the
  // H200, session 9). The ring's barriers need 8.
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
  if (shape.ringSlots) {
    options.workgroupBuffers.push_back(
        MemRefType::get({shape.ringSlots}, IntegerType::get(ctx, 64),
                        MemRefLayoutAttrInterface(), workgroup));
    options.workgroupAlignments.push_back(8);
    options.workgroupBuffers.push_back(
        MemRefType::get({std::max<int64_t>(shape.stagedScaleBytes(), 1)},
                        IntegerType::get(ctx, 8),
                        MemRefLayoutAttrInterface(), workgroup));
  }
  return getOrCreateKernel(module, name, argTypes, options,
                           [&](OpBuilder &b, Location loc, ValueRange args) {
                             SkinnyKernel{b, loc, plan, shape, args}.emit();
                           });
}
