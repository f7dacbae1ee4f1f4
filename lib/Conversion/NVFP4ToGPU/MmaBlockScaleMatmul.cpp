//===- MmaBlockScaleMatmul.cpp - NVFP4 GEMM on sm_120a tensor cores --------===//
//
// Part of the nvfp4 project.
//
// sm_120a (RTX 50 / RTX PRO Blackwell) has no tcgen05 but a warp-level
// block-scaled MMA:
//
//   mma.sync.aligned.m16n8k64.row.col.kind::mxf4nvf4.block_scale
//       .scale_vec::4X.f32.e2m1.e2m1.f32.ue4m3
//
// (PTX ISA 9.7.14.5.14; NVVM nvvm.mma.block_scale). The consumers of the
// shared pipeline (GemmPipeline.h) are the sm_90a kernel's, minus the
// dequantization: the codes go from shared memory (pitched rows) into the
// MMA's registers as they are, and the scales ride along in one register
// per operand and MMA:
//
//   * fragments (PTX ISA 9.7.14.5, "Matrix fragments for mma.m16n8k64",
//     .e2m1 as .u4): lane (g = lane / 4, t = lane % 4) holds A rows g and
//     g + 8 as codes 8t..8t+7 and 32 + 8t..32 + 8t + 7 of the MMA's 64
//     (4 bytes each, the even code in the low nibble as our packing), and
//     B column g as codes 8t.. and 32 + 8t..;
//   * scales (docs/Blackwell.md section 4, getMmaSyncScaleALocation /
//     getMmaSyncScaleBLocation with selector {byte-id 0, thread-id 0}): the
//     4 UE4M3 bytes of the MMA's four 16-blocks of A row m come from lane
//     4 (m % 8) + m / 8, those of B column n from lane 4n. Each lane loads
//     the 4 bytes of the row its lane number names; lanes the MMA ignores
//     load a harmless row. The 4 bytes are contiguous in all three stage
//     layouts (linear 1x16, linear 16x16, 128x4 atoms), so one 32-bit load.
//
// Eight consumer warps (2 x 4) each own 64 x 32 of the 128 x 128 tile:
// 4 x 4 MMA tiles, 64 FP32 accumulators per lane; a K step is 4 MMAs of
// K = 64 per tile. sm_120a has 99 KiB of shared memory per block, so the
// ring has 2 stages of 44 KiB (Chip.cpp).
//
//===----------------------------------------------------------------------===//

#include "GemmPipeline.h"
#include "KernelBuilder.h"
#include "nvfp4/Target/Tcgen05Encoding.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

using namespace mlir;
using namespace mlir::nvfp4;
using namespace mlir::nvfp4::kernels;

namespace tgt = ::nvfp4::target;

namespace {

constexpr int64_t kWarpsM = 2, kWarpsN = 4;
constexpr int64_t kWarpTileM = 64, kWarpTileN = 32;
constexpr int64_t kMTiles = kWarpTileM / 16, kNTiles = kWarpTileN / 8;
/// Codes per MMA: 64 = 32 bytes of a row = 4 scale blocks.
constexpr int64_t kMmaK = 64;
constexpr int64_t kMmaSteps = kGemmTileK / kMmaK;

struct MmaBlockScaleConsumer {
  GemmPipelineEmitter &e;
  OpBuilder &b;
  Location loc;

  Value loadWord(Value stage, Value offset) {
    return LLVM::LoadOp::create(b, loc, b.getI32Type(),
                                e.offsetPtr(stage, offset), 4);
  }
  Value i16(int64_t v) {
    return arith::ConstantIntOp::create(b, loc, b.getI16Type(), v);
  }

  /// Code word `half` (0: codes 8t.., 1: codes 32 + 8t..) of MMA step
  /// `step` of tile row `row`.
  Value codeWord(Value stage, const GemmOperand &op, Value row, Value step,
                 int64_t half, Value t) {
    Value offset = e.codesOffset(
        op, row,
        e.add(e.add(e.mul(step, e.c32(kMmaK / 2)), e.c32(half * 16)),
              e.mul(t, e.c32(4))));
    return loadWord(stage, offset);
  }

  /// The 4 scale bytes of MMA step `step` (blocks 4 step..) of tile row
  /// `row`.
  Value scaleWord(Value stage, const GemmOperand &op, Value row, Value step) {
    return loadWord(stage, e.scaleOffset(op, row, e.mul(step, e.c32(4))));
  }

  SmallVector<Value> mma(ArrayRef<Value> a, ArrayRef<Value> bRegs,
                         ArrayRef<Value> c, Value scaleA, Value scaleB) {
    Type f32 = b.getF32Type();
    auto resultType = LLVM::LLVMStructType::getLiteral(
        b.getContext(), {f32, f32, f32, f32});
    Value d = NVVM::MmaBlockScaleOp::create(
        b, loc, resultType, a, bRegs, c, scaleA, i16(0), i16(0), scaleB,
        i16(0), i16(0), ArrayRef<int64_t>{16, 8, kMmaK},
        std::array<NVVM::MMATypes, 2>{NVVM::MMATypes::e2m1,
                                      NVVM::MMATypes::e2m1},
        NVVM::ScaleVecSize::X4, NVVM::BlockScaleFormat::UE4M3,
        NVVM::MMABlockScaleKind::MXF4NVF4);
    SmallVector<Value> out;
    for (int64_t i = 0; i < 4; ++i)
      out.push_back(LLVM::ExtractValueOp::create(b, loc, d, i));
    return out;
  }

  void emit() {
    const GemmPlan &plan = e.plan;
    Value warp = e.warpId(), lane = e.laneId();
    Value warpM = e.lshr(warp, 2), warpN = e.andi(warp, kWarpsN - 1);
    Value g = e.lshr(lane, 2), t = e.andi(lane, 3);
    // The A row / B column whose scales this lane supplies (selector {0,0}).
    Value scaleRowA = e.add(g, e.mul(e.andi(lane, 1), e.c32(8)));
    SmallVector<Value> rowsA, rowsB;
    for (int64_t mi = 0; mi < kMTiles; ++mi)
      rowsA.push_back(
          e.add(e.mul(warpM, e.c32(kWarpTileM)), e.c32(mi * 16)));
    for (int64_t ni = 0; ni < kNTiles; ++ni)
      rowsB.push_back(e.add(e.mul(warpN, e.c32(kWarpTileN)), e.c32(ni * 8)));

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
      auto stepLoop = scf::ForOp::create(b, loc, e.c32(0), e.c32(kMmaSteps),
                                         e.c32(1), kLoop.getRegionIterArgs());
      {
        OpBuilder::InsertionGuard g2(b);
        b.setInsertionPointToStart(stepLoop.getBody());
        Value step = stepLoop.getInductionVar();
        SmallVector<Value> acc(stepLoop.getRegionIterArgs());
        SmallVector<SmallVector<Value>> fa, fb;
        SmallVector<Value> sa, sb;
        for (Value row0 : rowsA) {
          Value r0 = e.add(row0, g), r8 = e.add(r0, e.c32(8));
          fa.push_back({codeWord(stage, plan.a, r0, step, 0, t),
                        codeWord(stage, plan.a, r8, step, 0, t),
                        codeWord(stage, plan.a, r0, step, 1, t),
                        codeWord(stage, plan.a, r8, step, 1, t)});
          sa.push_back(scaleWord(stage, plan.a, e.add(row0, scaleRowA), step));
        }
        for (Value col0 : rowsB) {
          Value n = e.add(col0, g);
          fb.push_back({codeWord(stage, plan.b, n, step, 0, t),
                        codeWord(stage, plan.b, n, step, 1, t)});
          sb.push_back(scaleWord(stage, plan.b, n, step));
        }
        for (int64_t mi = 0; mi < kMTiles; ++mi)
          for (int64_t ni = 0; ni < kNTiles; ++ni) {
            int64_t base = (mi * kNTiles + ni) * 4;
            SmallVector<Value> d =
                mma(fa[mi], fb[ni], ArrayRef<Value>(acc).slice(base, 4),
                    sa[mi], sb[ni]);
            for (int64_t j = 0; j < 4; ++j)
              acc[base + j] = d[j];
          }
        scf::YieldOp::create(b, loc, acc);
      }
      e.releaseStage(kStep);
      scf::YieldOp::create(b, loc, stepLoop.getResults());
    }

    Value scale = e.epilogueScale();
    if (e.plan.quantizeOutput) {
      // n8 tiles ni and ni + 1 are adjacent columns and adjacent
      // accumulators: one 16-column block per row.
      ScalarBuilder::TensorScale tensorScale = e.outputTensorScale();
      for (int64_t mi = 0; mi < kMTiles; ++mi)
        for (int64_t ni = 0; ni < kNTiles; ni += 2)
          e.storeQuantizedFragments(
              rowsA[mi], rowsB[ni],
              kLoop.getResults().slice((mi * kNTiles + ni) * 4, 8), scale,
              tensorScale);
      return;
    }
    for (int64_t mi = 0; mi < kMTiles; ++mi)
      for (int64_t ni = 0; ni < kNTiles; ++ni)
        e.storeMmaFragment(
            rowsA[mi], rowsB[ni],
            kLoop.getResults().slice((mi * kNTiles + ni) * 4, 4), scale);
    e.finishOutputAmax();
  }
};

} // namespace

std::string
kernels::mmaBlockScaleGemmUnsupportedReason(const GemmPlan &plan,
                                            int64_t maxSharedMemoryBytes) {
  if (plan.splitK > 1)
    return "split-K is not implemented for the mma.sync block_scale kernel yet";
  if (plan.tileM != kWarpsM * kWarpTileM || plan.tileN != kWarpsN * kWarpTileN ||
      plan.consumerWarps != kWarpsM * kWarpsN)
    return "the mma.sync block_scale kernel needs a 128 x 128 tile and 9 "
           "warps";
  if (plan.scaleStaging != GemmScaleStaging::AsStored ||
      plan.stageRelease != GemmStageRelease::ConsumerThreads)
    return "the pipeline plan is not laid out for mma.sync";
  if (plan.sharedMemoryBytes() > maxSharedMemoryBytes)
    return std::to_string(plan.sharedMemoryBytes()) +
           " bytes of shared memory exceed the chip's " +
           std::to_string(maxSharedMemoryBytes);
  // The lane -> scale row/column rule the consumer computes must be the
  // one the encoding library derives from CUTLASS (docs/Blackwell.md).
  for (uint32_t lane = 0; lane < 32; ++lane) {
    std::optional<uint32_t> row =
        tgt::getMmaSyncScaleARowForLane(lane, tgt::MmaSyncScaleSelector{});
    std::optional<uint32_t> col =
        tgt::getMmaSyncScaleBColForLane(lane, tgt::MmaSyncScaleSelector{});
    if ((row && *row != lane / 4 + 8 * (lane & 1)) || (col && *col != lane / 4))
      return "the mma.sync scale lane layout disagrees with the encodings";
  }
  return "";
}

gpu::GPUFuncOp kernels::buildMmaBlockScaleGemmKernel(ModuleOp module,
                                                     const GemmPlan &plan,
                                                     TypeRange argTypes,
                                                     StringRef name) {
  return buildProducerConsumerKernel(
      module, plan, argTypes, name, [](GemmPipelineEmitter &e) {
        MmaBlockScaleConsumer{e, e.b, e.loc}.emit();
      });
}
