//===- MmaSyncMatmul.cpp - NVFP4 GEMM on Hopper tensor cores ---------------===//
//
// Part of the nvfp4 project.
//
// sm_90a has no FP4 tensor-core instruction, so the consumers of the shared
// pipeline (GemmPipeline.h) turn each E2M1 code and its E4M3 block scale into
// the exact BF16 value code * scale in registers and multiply with
// mma.sync.m16n8k16 BF16 -> FP32:
//
//   * exactness: an E2M1 value has 2 significant bits and an E4M3 scale 4,
//     so code * scale has at most 6 and lies in [2^-10, 2688]: BF16 holds it
//     exactly, and BF16 x BF16 products are exact in the FP32 accumulator.
//     Only the FP32 summation order differs from docs/Numerics.md (the
//     integration tests bound the difference);
//   * the E2M1 -> BF16 decode is a byte table lookup with `prmt` (two tables
//     for the low and the high byte of the 8 magnitudes, signs spread with
//     prmt's sign-replicate mode), then one mul.bf16x2 by the scale;
//   * K is permuted, identically for A and B, so that each lane reads its 16
//     consecutive codes of one 16-block with one 8-byte shared load: lane
//     (group g, t) at K step (q, i) feeds block 4q + t, byte pairs 2i and
//     2i + 1, into the fragment slots mma.sync assigns to k = 2t.. and
//     k = 2t + 8... A dot product is the same sum whatever the order of k.
//
// Eight consumer warps (2 x 4) each own a 64 x 32 part of the 128 x 128
// tile: 4 x 4 mma.sync tiles, 64 FP32 accumulators per lane.
//
//===----------------------------------------------------------------------===//

#include "GemmPipeline.h"
#include "KernelBuilder.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

using namespace mlir;
using namespace mlir::nvfp4;
using namespace mlir::nvfp4::kernels;

namespace {

constexpr int64_t kWarpsM = 2, kWarpsN = 4;
constexpr int64_t kWarpTileM = 64, kWarpTileN = 32;
constexpr int64_t kMTiles = kWarpTileM / 16, kNTiles = kWarpTileN / 8;

// BF16 of the E2M1 magnitudes 0, 0.5, 1, 1.5, 2, 3, 4, 6 (codes 0..7):
// 0x0000 0x3F00 0x3F80 0x3FC0 0x4000 0x4040 0x4080 0x40C0, split into the
// low bytes (table bytes 0..7) and the high bytes.
constexpr int64_t kLowBytes0 = 0xC0800000, kLowBytes1 = 0xC0804000;
constexpr int64_t kHighBytes0 = 0x3F3F3F00, kHighBytes1 = 0x40404040;

/// The consumer warps' arithmetic.
struct MmaSyncConsumer {
  GemmPipelineEmitter &e;
  OpBuilder &b;
  Location loc;

  Value prmt(Value lo, Value hi, Value selector) {
    return NVVM::PermuteOp::create(b, loc, b.getI32Type(), lo, hi, selector,
                                   NVVM::PermuteMode::DEFAULT);
  }
  Value prmt(Value lo, Value hi, int64_t selector) {
    return prmt(lo, hi, e.c32(selector));
  }

  /// Four E2M1 codes (the low 16 bits of `codes`, element 0 in the lowest
  /// nibble) -> two BF16x2 registers {e0, e1}, {e2, e3}.
  std::pair<Value, Value> decodeE2M1x4(Value codes) {
    Value magnitude = e.andi(codes, 0x7777);
    Value low = prmt(e.c32(kLowBytes0), e.c32(kLowBytes1), magnitude);
    Value high = prmt(e.c32(kHighBytes0), e.c32(kHighBytes1), magnitude);
    // Bytes 0xFF / 0x00 from the sign bits 3, 7, 11, 15 (the most
    // significant bit of bytes 0 and 1 of codes << 4 and of codes).
    Value signs = prmt(e.shl(codes, 4), codes, 0xD9C8);
    high = arith::OrIOp::create(b, loc, high,
                                e.andi(signs, 0x80808080));
    return {prmt(low, high, 0x5140), prmt(low, high, 0x7362)};
  }

  /// An E4M3 scale byte (i32, 0..255) -> BF16x2 {scale, scale}, exact.
  Value decodeScale(Value bits) {
    Value magnitude = e.andi(bits, 0x7F);
    // E4M3 bits in the FP32 exponent/mantissa position give the value
    // times 2^-120 (subnormals become FP32 subnormals); rescale exactly.
    Value f32Bits = arith::OrIOp::create(b, loc, e.shl(magnitude, 20),
                                         e.shl(e.andi(bits, 0x80), 24));
    Value value = arith::MulFOp::create(
        b, loc, arith::BitcastOp::create(b, loc, b.getF32Type(), f32Bits),
        arith::ConstantOp::create(b, loc, b.getF32FloatAttr(0x1p120f)));
    Value valueBits = arith::BitcastOp::create(b, loc, b.getI32Type(), value);
    valueBits = arith::SelectOp::create(b, loc, e.eq(magnitude, 0x7F),
                                        e.c32(0x7FC00000), valueBits);
    // The value has at most 4 significant bits: its BF16 is the top half.
    Value half = e.lshr(valueBits, 16);
    return arith::OrIOp::create(b, loc, half, e.shl(half, 16));
  }

  Value mulBF16x2(Value x, Value y) {
    auto type = VectorType::get({2}, b.getBF16Type());
    // arith.bitcast wants equal shapes; LLVM's bitcast reinterprets the
    // register.
    Value product = arith::MulFOp::create(
        b, loc, LLVM::BitcastOp::create(b, loc, type, x),
        LLVM::BitcastOp::create(b, loc, type, y));
    return LLVM::BitcastOp::create(b, loc, b.getI32Type(), product);
  }

  Value loadScale(Value stage, const GemmOperand &op, Value tileRow,
                  Value block) {
    Value ptr = e.offsetPtr(stage, e.scaleOffset(op, tileRow, block));
    Value byte = LLVM::LoadOp::create(b, loc, b.getI8Type(), ptr, 1);
    return decodeScale(arith::ExtUIOp::create(b, loc, b.getI32Type(), byte));
  }

  /// The 8 bytes (16 codes of block 4q + t) of `tileRow` as two i32.
  std::pair<Value, Value> loadCodes(Value stage, const GemmOperand &op,
                                    Value tileRow, Value q, Value t) {
    Value offset = e.codesOffset(
        op, tileRow, e.add(e.mul(q, e.c32(32)), e.mul(t, e.c32(8))));
    auto type = VectorType::get({2}, b.getI32Type());
    Value words = LLVM::LoadOp::create(b, loc, type, e.offsetPtr(stage, offset),
                                       8);
    auto word = [&](int64_t i) {
      return LLVM::ExtractElementOp::create(
          b, loc, words,
          arith::ConstantIntOp::create(b, loc, b.getI32Type(), i));
    };
    return {word(0), word(1)};
  }

  /// What one row (A) or column (B) needs for quarter q: its 16 codes of
  /// block 4q + t (two i32) and the block's scale (BF16x2).
  struct RowData {
    Value words[2];
    Value scale;
  };
  RowData loadRow(Value stage, const GemmOperand &op, Value tileRow, Value q,
                  Value t) {
    RowData row;
    row.scale = loadScale(stage, op, tileRow, e.add(e.mul(q, e.c32(4)), t));
    std::tie(row.words[0], row.words[1]) = loadCodes(stage, op, tileRow, q, t);
    return row;
  }

  /// The operand registers of K step i (0..3) of a quarter: {slot k = 2t..,
  /// slot k = 2t + 8..} = codes 4i..4i+3 of the lane's block, scaled.
  /// Decoded step by step, so that only one step's registers are live.
  std::pair<Value, Value> fragment(const RowData &row, int64_t i) {
    Value word = row.words[i / 2];
    auto [lo, hi] = decodeE2M1x4(i % 2 ? e.lshr(word, 16) : word);
    return {mulBF16x2(lo, row.scale), mulBF16x2(hi, row.scale)};
  }

  /// D = A * B + C for one m16n8k16 tile; C and D are 4 FP32 values.
  SmallVector<Value> mma(ArrayRef<Value> a, ArrayRef<Value> bRegs,
                         ArrayRef<Value> c) {
    Type f32 = b.getF32Type();
    auto resultType = LLVM::LLVMStructType::getLiteral(
        b.getContext(), {f32, f32, f32, f32});
    Value d = NVVM::MmaOp::create(
        b, loc, resultType, a, bRegs, c, ArrayRef<int64_t>{16, 8, 16},
        std::nullopt, std::nullopt,
        std::array<NVVM::MMATypes, 2>{NVVM::MMATypes::bf16,
                                      NVVM::MMATypes::bf16},
        std::array<NVVM::MMALayout, 2>{NVVM::MMALayout::row,
                                       NVVM::MMALayout::col});
    SmallVector<Value> out;
    for (int64_t i = 0; i < 4; ++i)
      out.push_back(LLVM::ExtractValueOp::create(b, loc, d, i));
    return out;
  }

  void emit() {
    const GemmPlan &plan = e.plan;
    Value warp = e.warpId(), lane = e.laneId();
    Value warpM = e.lshr(warp, 2), warpN = e.andi(warp, kWarpsN - 1);
    Value group = e.lshr(lane, 2), t = e.andi(lane, 3);
    // Tile rows of A (per m tile: g, g + 8) and of B (per n tile: g).
    SmallVector<Value> rowsA, rowsB;
    for (int64_t mi = 0; mi < kMTiles; ++mi)
      for (int64_t h = 0; h < 2; ++h)
        rowsA.push_back(e.add(e.mul(warpM, e.c32(kWarpTileM)),
                              e.add(e.c32(mi * 16 + h * 8), group)));
    for (int64_t ni = 0; ni < kNTiles; ++ni)
      rowsB.push_back(e.add(e.mul(warpN, e.c32(kWarpTileN)),
                            e.add(e.c32(ni * 8), group)));

    int64_t accCount = kMTiles * kNTiles * 4;
    SmallVector<Value> zeros(
        accCount, arith::ConstantOp::create(b, loc, b.getF32FloatAttr(0.0f)));
    auto kLoop = scf::ForOp::create(b, loc, e.c32(0), e.c32(plan.kSteps()),
                                    e.c32(1), zeros);
    {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(kLoop.getBody());
      Value kStep = kLoop.getInductionVar();
      e.waitFull(kStep);
      Value stage = e.stagePtr(
          arith::RemUIOp::create(b, loc, kStep, e.c32(plan.stages)));
      auto qLoop = scf::ForOp::create(b, loc, e.c32(0), e.c32(4), e.c32(1),
                                      kLoop.getRegionIterArgs());
      {
        OpBuilder::InsertionGuard g2(b);
        b.setInsertionPointToStart(qLoop.getBody());
        Value q = qLoop.getInductionVar();
        SmallVector<Value> acc(qLoop.getRegionIterArgs());
        SmallVector<RowData> dataA, dataB;
        for (Value row : rowsA)
          dataA.push_back(loadRow(stage, plan.a, row, q, t));
        for (Value row : rowsB)
          dataB.push_back(loadRow(stage, plan.b, row, q, t));
        for (int64_t i = 0; i < 4; ++i) {
          SmallVector<std::pair<Value, Value>> fa, fb;
          for (const RowData &row : dataA)
            fa.push_back(fragment(row, i));
          for (const RowData &row : dataB)
            fb.push_back(fragment(row, i));
          for (int64_t mi = 0; mi < kMTiles; ++mi)
            for (int64_t ni = 0; ni < kNTiles; ++ni) {
              auto &r0 = fa[2 * mi], &r8 = fa[2 * mi + 1];
              auto &col = fb[ni];
              int64_t base = (mi * kNTiles + ni) * 4;
              SmallVector<Value> d =
                  mma({r0.first, r8.first, r0.second, r8.second},
                      {col.first, col.second},
                      ArrayRef<Value>(acc).slice(base, 4));
              for (int64_t j = 0; j < 4; ++j)
                acc[base + j] = d[j];
            }
        }
        scf::YieldOp::create(b, loc, acc);
      }
      e.releaseStage(kStep);
      scf::YieldOp::create(b, loc, qLoop.getResults());
    }

    Value scale = e.epilogueScale();
    for (int64_t mi = 0; mi < kMTiles; ++mi)
      for (int64_t ni = 0; ni < kNTiles; ++ni)
        e.storeMmaFragment(
            e.add(e.mul(warpM, e.c32(kWarpTileM)), e.c32(mi * 16)),
            e.add(e.mul(warpN, e.c32(kWarpTileN)), e.c32(ni * 8)),
            kLoop.getResults().slice((mi * kNTiles + ni) * 4, 4), scale);
  }
};

} // namespace

gpu::GPUFuncOp kernels::buildMmaSyncGemmKernel(ModuleOp module,
                                               const GemmPlan &plan,
                                               TypeRange argTypes,
                                               StringRef name) {
  assert(plan.consumerWarps == kWarpsM * kWarpsN &&
         plan.tileM == kWarpsM * kWarpTileM &&
         plan.tileN == kWarpsN * kWarpTileN && "tile does not match warps");
  // Register budget: 9 warps put 3 warps on one of the SM's four 16 K
  // register files, so a lane gets at most 168 registers (ptxas' default
  // for this block size); the main loop keeps 64 accumulators, 24 code words,
  // 12 scales and one K step's 24 decoded registers live.
  gpu::GPUFuncOp kernel = getOrCreateKernel(
      module, name, argTypes, plan.threads(),
      [&](OpBuilder &b, Location loc, ValueRange args) {
        GemmPipelineEmitter e(b, loc, plan, args);
        e.initBarriers();
        // Warp specialization: the last warp produces, the others consume.
        auto roles = scf::IfOp::create(
            b, loc, e.eq(e.warpId(), plan.producerWarp()), true);
        {
          OpBuilder::InsertionGuard guard(b);
          b.setInsertionPointToStart(roles.thenBlock());
          e.emitProducer();
          b.setInsertionPointToStart(roles.elseBlock());
          MmaSyncConsumer{e, b, loc}.emit();
        }
      });
  return kernel;
}
