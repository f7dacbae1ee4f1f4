//===- DecodeWgmmaMatmul.cpp - sm_90a GEMM with decoder warpgroups --------===//
//
// Part of the nvfp4 project.
//
// Hopper has no FP4 tensor-core instruction, so every E2M1 code x E4M3
// block scale becomes an exact F16 value before wgmma multiplies. This
// kernel gives the decoding its own warpgroups, so that the warpgroups that
// issue wgmma do nothing else (the schedule's decodedStages > 0; the older
// WgmmaMatmul.cpp decodes in the consumers):
//
//   warpgroups 0 .. d-1   decoders. Thread 0 also fills the FP4 ring
//                         (GemmPipeline.h: TMA tensor copies of codes and
//                         scales, `stages` stages of one K step of 256),
//                         kept stages - 1 steps ahead. Per K step the
//                         decoders turn each 64-wide K slice of the A and B
//                         tiles into F16 in one of `decodedStages` decoded
//                         stages: each thread takes whole 16-byte chunks (32
//                         codes of a row) -- one ld.shared.v4, two scales by
//                         one cvt.rn.f16x2.e4m3x2, 52 integer instructions
//                         (F16Decode.h), 16 mul.f16x2, four st.shared.v4 --
//                         into the
//                         K-major 128-byte-swizzle layout of a wgmma
//                         descriptor (chunk c of row r at c ^ (r % 8)).
//   warpgroups d, d + 1   consumers: 64 rows of the tile each, all tileN
//                         columns; per decoded stage 4 x wgmma.mma_async
//                         m64nNk16.f32.f16.f16 with both operands from
//                         shared memory, commit, wait_group 1 (so the MMAs
//                         of the next stage queue behind the running ones),
//                         then the stage before is released. The epilogue
//                         (GemmPipelineEmitter: C, its amax, or its 1x16
//                         quantization) stores from the accumulators --
//                         with the TMA-store schedule (_ts) C goes through
//                         two 2 KiB staging buffers per consumer warp after
//                         the decoded stages and bulk tensor stores.
//
// Persistent: the grid is one CTA per SM and each CTA walks the tiles of
// the grouped order (GemmPipelineEmitter::tileCoords). The decoders and
// the TMA run ahead into the next tile while the consumers store the last
// one, bounded by the decoded stages.
//
// Synchronization (all mbarriers, phases counted by the global step index
// of this CTA: g over FP4 steps, u = 4g + q over decoded stages):
//   FP4 full[g % stages]     1 arrival (expect_tx) + the copies' bytes
//   FP4 empty[g % stages]    every decoder warp, after its last read
//   decoded full[u % D]      every decoder warp, after its lanes' stores
//                            and fence.proxy.async (generic stores -> async
//                            proxy reads by wgmma)
//   decoded empty[u % D]     every consumer warp, once wait_group says the
//                            MMAs that read the stage are complete
// (one elected lane per warp arrives after __syncwarp).
//
// Exactness: an E2M1 value has at most 2 significant bits and an E4M3
// scale 4, so code x scale has at most 6 and lies in [2^-10, 2688], inside
// F16's normal range: mul.f16x2 computes it exactly, and F16 x F16
// products are exact in the FP32 accumulator. Only the summation order
// differs from docs/Numerics.md. The decode permutes K inside each group
// of 8 codes (slots 0..7 <- codes 0, 4, 1, 5, 2, 6, 3, 7: the pairs whose
// signs one shift places, F16Decode.h); A and B use the same decode, so
// every product pairs equal k.
//
// Registers: every thread gets what one CTA per SM leaves it (.maxnreg,
// registersPerThread), which must hold a consumer's 64 x tileN FP32 accumulator
// (128 registers for tileN = 256) and its working set. The role branch must be
// warp-uniform to ptxas -- the warpgroup index is broadcast from lane 0
// with a shuffle -- or it allocates both roles' code together (76 spill
// bytes at 384 threads; with the shuffle: 158 registers, no spills).
// setmaxnreg is not used: ptxas 13.0 compiles a region after
// setmaxnreg.inc under the entry cap all the same (C7602, "insufficient
// registers (128)", for a 512-thread kernel with setmaxnreg.inc 176), so
// it cannot give the consumers more than the entry cap.
//
//===----------------------------------------------------------------------===//

#include "F16Decode.h"
#include "GemmPipeline.h"
#include "KernelBuilder.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;
using namespace mlir::nvfp4;
using namespace mlir::nvfp4::kernels;

namespace {

constexpr int64_t kConsumerWarpgroups = 2;
constexpr int64_t kWarpgroupThreads = 128;
constexpr int64_t kWarpgroupRows = 64; ///< wgmma M
constexpr int64_t kMmaK = 16;          ///< wgmma K for F16
constexpr int64_t kSubSteps = kGemmTileK / kDecodedK;
/// A decoded tile row: kDecodedK F16 values, one 128-byte swizzle row.
constexpr int64_t kDecodedRowBytes = kDecodedK * 2;
/// One unit of decoder work: a 16-byte chunk of a row's codes (32 codes,
/// two 16-blocks), which becomes four 16-byte chunks of F16.
constexpr int64_t kUnitCodes = 32;
constexpr int64_t kUnitsPerRow = kDecodedK / kUnitCodes;
/// Registers a consumer needs beyond its accumulators (descriptors,
/// counters, addresses, the epilogue's pointers).
constexpr int64_t kConsumerWorkingRegisters = 40;

static_assert(kDecodedRowBytes == 128, "one row is one 128-byte swizzle row");

int64_t decodedStageBytes(const GemmPlan &plan) {
  return (plan.tileM + plan.tileN) * kDecodedRowBytes;
}

/// The registers of every thread, in ptxas's units of 8: each of the SM's
/// four schedulers has a quarter of the register file (16384) for the warps
/// it is given round-robin, so the scheduler with the most warps decides
/// (288 threads = 9 warps: 3 on one scheduler, 168 registers; with more a
/// launch fails with CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES).
int64_t registersPerThread(const GemmPlan &plan) {
  int64_t warps = plan.threads() / 32;
  int64_t warpsPerScheduler = (warps + 3) / 4;
  return std::min<int64_t>(16384 / (warpsPerScheduler * 32) / 8 * 8, 248);
}

/// One decoder unit: 32 codes of row `row` of operand `op`'s tile, in half
/// `half` of the decoded slice.
struct DecodeUnit {
  const GemmOperand *op;
  int64_t decodedOffset; ///< of the operand's tile in a decoded stage
  int64_t rowBlock;      ///< rows rowBlock * 128 + thread-in-warpgroup
  int64_t half;
};

struct DecodeWgmmaKernel {
  GemmPipelineEmitter &e;
  OpBuilder &b;
  Location loc;

  const GemmPlan &plan() const { return e.plan; }

  // --- barriers of the decoded stages (after the ring's full/empty) -------
  Value decodedFull(Value stage) {
    return e.offsetPtr(e.sharedPtr(plan().freeBarrierByte()),
                       e.mul(stage, e.c32(8)));
  }
  Value decodedEmpty(Value stage) {
    return e.offsetPtr(
        e.sharedPtr(plan().freeBarrierByte() + 8 * plan().decodedStages),
        e.mul(stage, e.c32(8)));
  }
  Value decodedStage(Value stage) {
    return e.offsetPtr(e.sharedPtr(plan().consumerSharedOffset() -
                                   plan().stages * plan().stageBytes),
                       e.mul(stage, e.c32(decodedStageBytes(plan()))));
  }

  /// With the TMA-store epilogue: the two staging buffers of consumer warp
  /// `consumerWarp` (0 .. 7), after the decoded stages.
  Value stagingBuffers(Value consumerWarp) {
    return e.offsetPtr(
        decodedStage(e.c32(plan().decodedStages)),
        e.mul(consumerWarp, e.c32(kTmaStoreBuffers * kTmaStoreBufferBytes)));
  }

  Value urem(Value x, int64_t y) {
    return arith::RemUIOp::create(b, loc, x, e.c32(y));
  }
  Value udiv(Value x, int64_t y) {
    return arith::DivUIOp::create(b, loc, x, e.c32(y));
  }
  /// Waits for the phase of step `step` of a ring of `size` barriers
  /// (`released`: for the release of the step `size` before, which in the
  /// first round counts as done).
  void waitPhase(Value barrier, Value step, int64_t size, bool released) {
    Value parity = e.andi(udiv(step, size), 1);
    if (released)
      parity = arith::XOrIOp::create(b, loc, parity, e.c32(1));
    NVVM::MBarrierTryWaitParityOp::create(b, loc, barrier, parity, e.c32(0));
  }
  void arrive(Value barrier) {
    NVVM::MBarrierArriveOp::create(b, loc, Type(), barrier, Value());
  }
  /// One arrival for the whole warp, after every lane got here: the
  /// barriers count warps, not threads (an arrival is an atomic on shared
  /// memory; 256 of them per stage cost more than the MMAs' issue).
  void arriveForWarp(Value barrier) {
    NVVM::SyncWarpOp::create(b, loc, e.c32(-1));
    ifThen(e.eq(e.laneId(), 0), [&] { arrive(barrier); });
  }
  /// A consumer warp's release of a decoded stage: with clusters the
  /// stage's next fill writes B into every CTA of the cluster, so the warp
  /// arrives on the "empty" barrier of each. The default .release.cta
  /// semantics, as for a local arrival: what must precede the peer's
  /// overwrite is the completion of this warp's wgmma reads, which
  /// wgmma.wait_group established (a .release.cluster arrival measured
  /// 1.6x slower at 8192^3).
  ///
  /// The peer's barrier of `slot` is the peer's first "empty" barrier plus
  /// 8 x slot (a CTA's shared memory is one contiguous window of the
  /// cluster's): one mapa per rank, not per slot and rank, whose results
  /// LLVM hoists out of the tile loop.
  void releaseDecoded(Value slot) {
    if (plan().clusterM == 1)
      return arriveForWarp(decodedEmpty(slot));
    NVVM::SyncWarpOp::create(b, loc, e.c32(-1));
    ifThen(e.eq(e.laneId(), 0), [&] {
      for (int64_t r = 0; r < plan().clusterM; ++r)
        NVVM::MBarrierArriveOp::create(
            b, loc, Type(),
            e.offsetPtr(e.peerBarrier(decodedEmpty(e.c32(0)), e.c32(r)),
                        e.mul(slot, e.c32(8))),
            Value());
    });
  }
  void ifThen(Value condition, function_ref<void()> body) {
    auto ifOp = scf::IfOp::create(b, loc, condition, false);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(ifOp.thenBlock());
    body();
  }

  /// Initializes the decoded stages' barriers (thread 0, before the
  /// pipeline's own initBarriers, whose fence and CTA barrier cover them).
  void initDecodedBarriers() {
    ifThen(e.eq(e.threadId(), 0), [&] {
      // Full: one arrival per decoder warp, or the route's expect_tx.
      int64_t fullArrivals =
          plan().decodesSeparately() ? 1 : plan().decoderWarpgroups * 4;
      for (int64_t s = 0; s < plan().decodedStages; ++s) {
        NVVM::MBarrierInitOp::create(b, loc, decodedFull(e.c32(s)),
                                     e.c32(fullArrivals), Value());
        // Every consumer warp of every CTA of the cluster.
        NVVM::MBarrierInitOp::create(
            b, loc, decodedEmpty(e.c32(s)),
            e.c32(kConsumerWarpgroups * kWarpgroupThreads / 32 *
                  plan().clusterM),
            Value());
      }
    });
  }

  // --- decoders ------------------------------------------------------------

  /// The FP4 step `step` of this CTA (tile step / kSteps, K step step %
  /// kSteps): its copies, if it exists.
  void issueStep(Value step, Value totalSteps) {
    ifThen(e.ult(step, totalSteps), [&] {
      Value stage = urem(step, plan().stages);
      // Wait until every decoder released the stage's previous step.
      waitPhase(e.emptyBarrier(stage), step, plan().stages, true);
      GemmPipelineEmitter::TileCoords tile =
          e.tileCoords(e.linearTileOf(udiv(step, plan().kSteps())));
      e.issueStepCopies(stage, urem(step, plan().kSteps()), tile.batch,
                        tile.rowA, tile.rowB);
    });
  }

  /// What a unit reads from the FP4 stage: its 32 codes (4 words) and its
  /// two block scales as F16x2 pairs {s, s}.
  struct UnitData {
    Value codes;
    Value scalePairs[2];
  };

  /// Loads `unit` of sub-step `q` for this thread's row from the FP4 stage
  /// at `raw`. All units are loaded before any is stored: the compiler
  /// cannot move a load above a store to shared memory it may alias.
  UnitData loadUnit(const DecodeUnit &unit, Value threadInGroup, int64_t q,
                    Value raw) {
    const GemmOperand &op = *unit.op;
    Value row = e.add(threadInGroup, e.c32(unit.rowBlock * kWarpgroupThreads));
    UnitData data;
    // 32 codes: chunk 2q + half of the row's 128 bytes of this K step.
    data.codes = LLVM::LoadOp::create(
        b, loc, VectorType::get({4}, b.getI32Type()),
        e.offsetPtr(raw,
                    e.codesOffset(op, row, e.c32(32 * q + 16 * unit.half))),
        16);
    // Their two block scales (blocks 4q + 2 half, + 1: adjacent bytes in
    // every scale layout) -> F16x2, exact; then each replicated.
    Value scaleBytes = LLVM::LoadOp::create(
        b, loc, VectorType::get({2}, b.getI8Type()),
        e.offsetPtr(raw, e.scaleOffset(op, row, e.c32(4 * q + 2 * unit.half))),
        2);
    std::array<Value, 2> pairs = decodeE4M3x2ToF16Pairs(b, loc, scaleBytes);
    data.scalePairs[0] = pairs[0];
    data.scalePairs[1] = pairs[1];
    return data;
  }

  /// Decodes a loaded unit into the decoded stage at `decoded`.
  void storeUnit(const DecodeUnit &unit, const UnitData &data,
                 Value threadInGroup, Value decoded) {
    Value row = e.add(threadInGroup, e.c32(unit.rowBlock * kWarpgroupThreads));
    auto v4 = VectorType::get({4}, b.getI32Type());
    Value rowBase = e.mul(row, e.c32(kDecodedRowBytes));
    Value swizzle = e.andi(row, 7);
    for (int64_t word = 0; word < 4; ++word) {
      Value w = LLVM::ExtractElementOp::create(
          b, loc, data.codes,
          arith::ConstantIntOp::create(b, loc, b.getI32Type(), word));
      Value scale = data.scalePairs[word / 2];
      SmallVector<Value> scaled;
      for (Value x : decodeE2M1x8ToF16(b, loc, w))
        scaled.push_back(mulF16x2(b, loc, x, scale));
      Value chunk = vector::FromElementsOp::create(b, loc, v4, scaled);
      // Chunk 4 half + word of the decoded row, swizzled.
      Value c =
          arith::XOrIOp::create(b, loc, swizzle, e.c32(4 * unit.half + word));
      Value offset =
          e.add(e.c32(unit.decodedOffset), e.add(rowBase, e.mul(c, e.c32(16))));
      LLVM::StoreOp::create(b, loc, chunk, e.offsetPtr(decoded, offset), 16);
    }
  }

  void emitDecoders(Value warpgroup, Value totalSteps) {
    const GemmPlan &p = plan();
    Value tid = e.threadId();
    Value threadInGroup = e.andi(tid, kWarpgroupThreads - 1);
    Value producer = e.eq(tid, 0);
    // Fill the ring's first stages - 1 steps.
    ifThen(producer, [&] {
      e.acquireTensorMaps();
      for (int64_t s = 0; s + 1 < p.stages; ++s)
        issueStep(e.c32(s), totalSteps);
    });
    // The units of decoder warpgroup w: every d-th of (operand, 128-row
    // block, half), so each warp decodes 32 consecutive rows at once.
    SmallVector<DecodeUnit> units;
    for (int64_t half = 0; half < kUnitsPerRow; ++half) {
      for (int64_t r = 0; r < p.tileM / kWarpgroupThreads; ++r)
        units.push_back({&p.a, 0, r, half});
      for (int64_t r = 0; r < p.tileN / kWarpgroupThreads; ++r)
        units.push_back({&p.b, p.tileM * kDecodedRowBytes, r, half});
    }

    auto loop = scf::ForOp::create(b, loc, e.c32(0), totalSteps, e.c32(1));
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(loop.getBody());
    Value step = loop.getInductionVar();
    // Keep the ring stages - 1 steps ahead: the stage of step + stages - 1
    // is the one every decoder released after step - 1.
    ifThen(producer,
           [&] { issueStep(e.add(step, e.c32(p.stages - 1)), totalSteps); });
    Value stage = urem(step, p.stages);
    waitPhase(e.fullBarrier(stage), step, p.stages, false);
    Value raw = e.stagePtr(stage);
    for (int64_t q = 0; q < kSubSteps; ++q) {
      Value u = e.add(e.mul(step, e.c32(kSubSteps)), e.c32(q));
      Value slot = urem(u, p.decodedStages);
      // Load this warpgroup's units, then wait for the decoded stage to be
      // free and decode into it (the loads overlap the wait).
      auto decodeUnits = [&](int64_t w) {
        SmallVector<std::pair<const DecodeUnit *, UnitData>> loaded;
        for (size_t i = w; i < units.size(); i += p.decoderWarpgroups)
          loaded.push_back(
              {&units[i], loadUnit(units[i], threadInGroup, q, raw)});
        waitPhase(decodedEmpty(slot), u, p.decodedStages, true);
        Value decoded = decodedStage(slot);
        for (auto &[unit, data] : loaded)
          storeUnit(*unit, data, threadInGroup, decoded);
      };
      for (int64_t w = 0; w < p.decoderWarpgroups; ++w) {
        if (p.decoderWarpgroups == 1)
          decodeUnits(w);
        else
          ifThen(e.eq(warpgroup, w), [&] { decodeUnits(w); });
      }
      // This thread's generic stores become visible to wgmma (async proxy)
      // before the arrival releases them.
      NVVM::FenceProxyOp::create(
          b, loc, NVVM::ProxyKind::async_shared,
          NVVM::SharedSpaceAttr::get(b.getContext(),
                                     NVVM::SharedSpace::shared_cta));
      arriveForWarp(decodedFull(slot));
    }
    arriveForWarp(e.emptyBarrier(stage));
  }

  // --- the route's loader ------------------------------------------------

  /// Lane 0 of the last warp fills the decoded stages with TMA copies of
  /// the F16 operands the decode kernels wrote (the route): per decoded
  /// stage, the tileM and tileN rows of one kDecodedK slice of K.
  void emitLoader(Value totalSubSteps) {
    const GemmPlan &p = plan();
    ifThen(e.eq(e.laneId(), 0), [&] {
      e.acquireTensorMaps();
      int64_t subStepsPerTile = p.kSteps() * kSubSteps;
      int64_t bytes = decodedStageBytes(p);
      auto loop = scf::ForOp::create(b, loc, e.c32(0), totalSubSteps, e.c32(1));
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(loop.getBody());
      Value u = loop.getInductionVar();
      Value slot = urem(u, p.decodedStages);
      waitPhase(decodedEmpty(slot), u, p.decodedStages, true);
      Value full = decodedFull(slot);
      NVVM::MBarrierArriveExpectTxOp::create(b, loc, Type(), full, e.c32(bytes),
                                             NVVM::MemScopeKind::CTA, false,
                                             Value());
      GemmPipelineEmitter::TileCoords tile =
          e.tileCoords(e.linearTileOf(udiv(u, subStepsPerTile)));
      Value k = e.mul(urem(u, subStepsPerTile), e.c32(kDecodedK));
      Value stage = decodedStage(slot);
      e.tensorCopy(e.codesMapA(), stage, {k, tile.rowA, tile.batch}, full);
      if (p.clusterM == 1) {
        e.tensorCopy(e.codesMapB(),
                     e.offsetPtr(stage, p.tileM * kDecodedRowBytes),
                     {k, tile.rowB, tile.batch}, full);
      } else {
        // This CTA's share of B's rows, to every CTA of the cluster (whose
        // "full" barriers expect the whole stage).
        int64_t share = p.tileN / p.clusterM;
        Value rank = e.clusterRank();
        e.tensorCopyMulticast(
            e.codesMapB(),
            e.offsetPtr(stage, e.add(e.c32(p.tileM * kDecodedRowBytes),
                                     e.mul(rank, e.c32(share *
                                                       kDecodedRowBytes)))),
            {k, e.add(tile.rowB, e.mul(rank, e.c32(share))), tile.batch},
            full);
      }
    });
  }

  // --- consumers -------------------------------------------------------------

  void emitConsumers(Value consumer) {
    const GemmPlan &p = plan();
    MLIRContext *ctx = b.getContext();
    int64_t accumulators = p.tileN / 2; // 64 x tileN over 128 threads
    SmallVector<Type> fields(accumulators, b.getF32Type());
    auto accType = LLVM::LLVMStructType::getLiteral(ctx, fields);
    Value zero = arith::ConstantOp::create(b, loc, b.getF32FloatAttr(0.0f));
    Value zeros = LLVM::UndefOp::create(b, loc, accType);
    for (int64_t i = 0; i < accumulators; ++i)
      zeros = LLVM::InsertValueOp::create(b, loc, zeros, zero, i);

    Value decodedBase = LLVM::PtrToIntOp::create(b, loc, b.getI32Type(),
                                                 decodedStage(e.c32(0)));
    // This warpgroup's 64 rows of A: 8 swizzle patterns of 1024 bytes.
    Value aOffset = e.mul(consumer, e.c32(kWarpgroupRows * kDecodedRowBytes));
    int64_t bOffset = p.tileM * kDecodedRowBytes;
    auto shape = NVVM::MMAShapeAttr::get(ctx, kWarpgroupRows, p.tileN, kMmaK);
    // The decoded values are F16; BF16 operands are multiplied as they are.
    auto f16 = NVVM::WGMMATypesAttr::get(
        ctx, p.operandElement && p.operandElement.isBF16()
                 ? NVVM::WGMMATypes::bf16
                 : NVVM::WGMMATypes::f16);
    auto f32 = NVVM::WGMMATypesAttr::get(ctx, NVVM::WGMMATypes::f32);
    auto one = NVVM::WGMMAScaleInAttr::get(ctx, NVVM::WGMMAScaleIn::one);
    auto accumulate =
        NVVM::WGMMAScaleOutAttr::get(ctx, NVVM::WGMMAScaleOut::one);
    auto kMajorA = NVVM::MMALayoutAttr::get(ctx, NVVM::MMALayout::row);
    auto kMajorB = NVVM::MMALayoutAttr::get(ctx, NVVM::MMALayout::col);

    bool tmaStore = p.tmaStore && !p.quantizeOutput;
    if (tmaStore) {
      auto ifLane0 = scf::IfOp::create(b, loc, e.eq(e.laneId(), 0), false);
      OpBuilder::InsertionGuard g(b);
      b.setInsertionPointToStart(ifLane0.thenBlock());
      e.acquireOutputTensorMap();
    }

    auto tiles =
        scf::ForOp::create(b, loc, e.c32(0), e.tilesOfThisCTA(), e.c32(1));
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(tiles.getBody());
    Value tileIndex = tiles.getInductionVar();
    Value firstStep = e.mul(tileIndex, e.c32(p.kSteps()));
    auto kLoop = scf::ForOp::create(b, loc, e.c32(0), e.c32(p.kSteps()),
                                    e.c32(1), ValueRange{zeros});
    {
      OpBuilder::InsertionGuard g(b);
      b.setInsertionPointToStart(kLoop.getBody());
      Value kStep = kLoop.getInductionVar();
      Value acc = kLoop.getRegionIterArgs()[0];
      Value step = e.add(firstStep, kStep);
      for (int64_t q = 0; q < kSubSteps; ++q) {
        Value u = e.add(e.mul(step, e.c32(kSubSteps)), e.c32(q));
        Value slot = urem(u, p.decodedStages);
        waitPhase(decodedFull(slot), u, p.decodedStages, false);
        NVVM::WgmmaFenceAlignedOp::create(b, loc);
        Value stage =
            e.add(decodedBase, e.mul(slot, e.c32(decodedStageBytes(p))));
        // The k16 steps start 32 bytes apart: 2 in the descriptor's start
        // address field (address / 16), which never carries out of it.
        Value aDesc = e.swizzle128Descriptor(e.add(stage, aOffset));
        Value bDesc = e.swizzle128Descriptor(e.add(stage, e.c32(bOffset)));
        auto step16 = [&](Value desc, int64_t i) -> Value {
          if (i == 0)
            return desc;
          return arith::AddIOp::create(
              b, loc, desc,
              arith::ConstantIntOp::create(b, loc, b.getI64Type(),
                                           i * kMmaK * 2 / 16));
        };
        for (int64_t i = 0; i < kDecodedK / kMmaK; ++i)
          acc = NVVM::WgmmaMmaAsyncOp::create(
              b, loc, accType, acc, step16(aDesc, i), step16(bDesc, i), shape,
              f16, f16, f32, accumulate, one, one, kMajorA, kMajorB,
              NVVM::MMAIntOverflowAttr());
        NVVM::WgmmaGroupSyncAlignedOp::create(b, loc);
        NVVM::WgmmaWaitGroupSyncOp::create(b, loc, 1);
        // The MMAs of the stage before are complete: release it (unless
        // it belongs to the previous tile, released after its last wait).
        Value previous = arith::SubIOp::create(b, loc, u, e.c32(1));
        auto release = [&] {
          releaseDecoded(urem(previous, p.decodedStages));
        };
        if (q > 0)
          release();
        else
          ifThen(arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne, kStep,
                                       e.c32(0)),
                 release);
      }
      scf::YieldOp::create(b, loc, acc);
    }
    NVVM::WgmmaWaitGroupSyncOp::create(b, loc, 0);
    Value last = arith::SubIOp::create(
        b, loc, e.mul(e.add(firstStep, e.c32(p.kSteps())), e.c32(kSubSteps)),
        e.c32(1));
    releaseDecoded(urem(last, p.decodedStages));

    // Epilogue: accumulator registers 4j..4j+3 are the n8 block j of the
    // warp's 16 rows in mma.sync's m16n8 order.
    e.setTile(e.tileCoords(e.linearTileOf(tileIndex)));
    SmallVector<Value> values;
    for (int64_t i = 0; i < accumulators; ++i)
      values.push_back(
          LLVM::ExtractValueOp::create(b, loc, kLoop.getResult(0), i));
    Value scale = e.epilogueScale();
    Value warpInGroup = e.andi(e.warpId(), 3);
    Value row0 = e.add(e.mul(consumer, e.c32(kWarpgroupRows)),
                       e.mul(warpInGroup, e.c32(16)));
    if (p.quantizeOutput) {
      ScalarBuilder::TensorScale tensorScale = e.outputTensorScale();
      for (int64_t j = 0; j < p.tileN / 16; ++j)
        e.storeQuantizedFragments(row0, e.c32(16 * j),
                                  ArrayRef<Value>(values).slice(8 * j, 8),
                                  scale, tensorScale);
    } else if (tmaStore) {
      // Through this warp's staging buffers and TMA stores: the loads and
      // decodes of the next tile run meanwhile, bounded by the stages.
      e.storeMmaFragmentByTensorCopy(
          row0, e.c32(0), values, scale,
          stagingBuffers(e.add(e.mul(consumer, e.c32(4)), warpInGroup)));
    } else {
      e.storeMmaFragment(row0, e.c32(0), values, scale);
    }
  }

  void emit() {
    const GemmPlan &p = plan();
    initDecodedBarriers();
    e.initBarriers();
    if (p.decodesSeparately()) {
      if (p.clusterM > 1) {
        // Every CTA's barriers are initialized before any peer multicasts
        // into it or arrives on them.
        NVVM::FenceMbarrierInitOp::create(b, loc);
        e.clusterSync();
      }
      // The route: warpgroups 0 and 1 multiply, warp 8 loads.
      Value warp = gpu::ShuffleOp::create(b, loc, e.warpId(), 0, 32,
                                          gpu::ShuffleMode::IDX)
                       .getShuffleResult();
      Value subSteps = e.mul(e.tilesOfThisCTA(), e.c32(p.kSteps() * kSubSteps));
      auto roles =
          scf::IfOp::create(b, loc, e.eq(warp, p.producerWarp()), true);
      {
        OpBuilder::InsertionGuard guard(b);
        b.setInsertionPointToStart(roles.thenBlock());
        emitLoader(subSteps);
        b.setInsertionPointToStart(roles.elseBlock());
        emitConsumers(e.lshr(warp, 2));
        e.finishOutputAmax();
        if (p.tmaStore && !p.quantizeOutput)
          e.finishTensorStores();
      }
      // No CTA leaves while a peer may still arrive on its barriers.
      if (p.clusterM > 1)
        e.clusterSync();
      return;
    }
    // The warpgroup index, broadcast from lane 0 so that ptxas sees a
    // warp-uniform value (the role branch is then warp-uniform).
    Value warpgroup = gpu::ShuffleOp::create(b, loc, e.lshr(e.threadId(), 7), 0,
                                             32, gpu::ShuffleMode::IDX)
                          .getShuffleResult();
    Value totalSteps = e.mul(e.tilesOfThisCTA(), e.c32(p.kSteps()));
    auto roles = scf::IfOp::create(
        b, loc, e.ult(warpgroup, e.c32(p.decoderWarpgroups)), true);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(roles.thenBlock());
    emitDecoders(warpgroup, totalSteps);
    b.setInsertionPointToStart(roles.elseBlock());
    emitConsumers(
        arith::SubIOp::create(b, loc, warpgroup, e.c32(p.decoderWarpgroups)));
    // The amax of every tile's C this thread stored, once per warp.
    e.finishOutputAmax();
    if (p.tmaStore && !p.quantizeOutput)
      e.finishTensorStores();
  }
};

} // namespace

int64_t kernels::decodeWgmmaGemmSharedBytes(const GemmPlan &plan) {
  int64_t bytes = plan.decodedStages * decodedStageBytes(plan);
  // The TMA-store epilogue's staging buffers, two per consumer warp, on a
  // 1024-byte boundary (decoded stages are multiples of it) for the
  // 128-byte swizzle.
  if (plan.tmaStore && !plan.quantizeOutput)
    bytes += kConsumerWarpgroups * 4 * kTmaStoreBuffers * kTmaStoreBufferBytes;
  return bytes;
}

std::string
kernels::decodeWgmmaGemmUnsupportedReason(const GemmPlan &plan,
                                          int64_t maxSharedMemoryBytes) {
  if (plan.decodedStages < 1)
    return "the decoder-warpgroup kernel needs decoded stages";
  if (!plan.persistent)
    return "the decoder-warpgroup kernel is persistent (_pG)";
  if (plan.splitK > 1)
    return "split-K is not implemented for the persistent kernels yet";
  if (plan.clusterM > 1 && !plan.decodesSeparately())
    return "clusters (_cN) are implemented for the route (_s0_dDw0) only";
  if (plan.clusterM != 1 && plan.clusterM != 2)
    return "the route's clusters have 2 CTAs (_c2)";
  if (plan.clusterM > 1 && plan.gridLimit == 1)
    return "a cluster of 2 CTAs needs a grid limit of at least 2";
  if (plan.tileM != kConsumerWarpgroups * kWarpgroupRows)
    return "the decoder-warpgroup kernel's tile has " +
           std::to_string(kConsumerWarpgroups * kWarpgroupRows) + " rows";
  // wgmma N is a multiple of 8 up to 256; the decoders take 128-row blocks.
  if (plan.tileN % kWarpgroupThreads != 0 || plan.tileN > 256)
    return "the decoder-warpgroup kernel needs tile N = 128 or 256";
  int64_t blocks = (plan.tileM + plan.tileN) / kWarpgroupThreads;
  if (!plan.decodesSeparately() &&
      (blocks * kUnitsPerRow) % plan.decoderWarpgroups != 0)
    return "the decoder warpgroups do not divide the tile's rows evenly";
  if (std::string why = gemmTmaStoreUnsupportedReason(plan); !why.empty())
    return why;
  if (16 * (plan.stages + plan.decodedStages) > plan.barrierBytes)
    return "too many stages for the barrier area";
  if (plan.tiles() >
      (int64_t(1) << 31) / std::max<int64_t>(plan.kSteps(), 1) / kSubSteps)
    return "too many tiles x K steps for the kernel's 32-bit step counters";
  GemmPlan withStages = plan;
  withStages.consumerSharedBytes = decodeWgmmaGemmSharedBytes(plan);
  if (withStages.sharedMemoryBytes() > maxSharedMemoryBytes)
    return "the decoder-warpgroup kernel needs " +
           std::to_string(withStages.sharedMemoryBytes()) +
           " bytes of shared memory";
  if (registersPerThread(plan) < plan.tileN / 2 + kConsumerWorkingRegisters)
    return "the consumers' accumulators do not fit in the " +
           std::to_string(registersPerThread(plan)) +
           " registers per thread of " + std::to_string(plan.threads()) +
           " threads";
  return "";
}

gpu::GPUFuncOp kernels::buildDecodeWgmmaGemmKernel(ModuleOp module,
                                                   const GemmPlan &plan,
                                                   TypeRange argTypes,
                                                   StringRef name) {
  gpu::GPUFuncOp kernel =
      getOrCreateKernel(module, name, argTypes, plan.threads(),
                        [&](OpBuilder &b, Location loc, ValueRange args) {
                          GemmPipelineEmitter e(b, loc, plan, args);
                          DecodeWgmmaKernel{e, b, loc}.emit();
                        });
  // One CTA per SM: let ptxas use every register of it.
  kernel->setAttr(NVVM::NVVMDialect::getMaxnregAttrName(),
                  IntegerAttr::get(IntegerType::get(module.getContext(), 32),
                                   registersPerThread(plan)));
  // A compile-time cluster shape (.reqnctapercluster): a plain launch of a
  // grid of whole clusters runs it, no cuLaunchKernelEx attribute needed.
  if (plan.clusterM > 1)
    kernel->setAttr(NVVM::NVVMDialect::getClusterDimAttrName(),
                    DenseI32ArrayAttr::get(module.getContext(),
                                           {int32_t(plan.clusterM), 1, 1}));
  return kernel;
}
