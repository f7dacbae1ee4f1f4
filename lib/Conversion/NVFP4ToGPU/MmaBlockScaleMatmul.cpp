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
// (PTX ISA 9.7.14.5.14; NVVM nvvm.mma.block_scale). The kernel is the
// shared pipeline (GemmPipeline.h) with mma.sync consumers; its default
// schedule is CUTLASS's sm_120a one (example 79a, docs/Blackwell.md section
// 7): 128 x 128 tiles, K = 128 per stage in 4 stages, the codes in 64-byte
// rows with the 64-byte TMA swizzle.
//
//   * Codes go from shared memory into the MMA's registers with
//     ldmatrix.sync.aligned.m8n8.x4.shared.b16: one x4 is one m16 x k64 A
//     fragment or the B fragments of two n8 blocks, the lanes addressing
//     the rows of getMmaSyncLdmatrixAddress{A,B} (Tcgen05Encoding.h, checked
//     against the PTX ISA fragment tables and CUTLASS's PTX in
//     unittests/Target/MmaSyncLayoutTest.cpp) through the swizzle
//     (GemmPipelineEmitter::codesOffset).
//   * Scales ride along in one register per operand and MMA, selector
//     {byte-id 0, thread-id 0} (getMmaSyncScale{A,B}Location): the 4 UE4M3
//     bytes of A row m come from lane 4 (m % 8) + m / 8, those of B column
//     n from lane 4n. Each lane loads the 4 bytes of the row its lane number
//     names (lanes the MMA ignores load a harmless row): 32-bit loads, or
//     one load of a row's whole stage where the layout keeps it contiguous.
//   * Eight consumer warps (4 x 2) each own 32 x 64 of the tile: 2 x 8 MMA
//     tiles, 64 FP32 accumulators per lane, 16 MMAs and 6 ldmatrix.x4 per
//     K = 64. The warp's 64 columns are one 128-byte row of BF16 C, which
//     the TMA-store epilogue (_ts) stages per m16 block with stmatrix.
//
//
// BF16 operands (GemmPlan::denseOperands, the BF16 GEMM of BF16Gemm.cpp;
// docs/Blackwell.md section 12) take the same consumers with
// mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 and no scales: the
// ldmatrix.x4 fragments of 16 rows x 32 bytes are its A and B fragments.
//
// MX operands (docs/Blackwell.md section 10) take the same consumers with
// m16n8k32 .kind::mxf8f6f4.block_scale.scale_vec::1X (MXFP8) or m16n8k64
// .kind::mxf4.block_scale.scale_vec::2X (MXFP4), UE8M0 scales staged as
// 128x4 atoms, 128-byte code rows (MmaSyncForm).
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

constexpr int64_t kWarpsM = 4, kWarpsN = 2;
constexpr int64_t kWarpTileM = 32, kWarpTileN = 64;
constexpr int64_t kMTiles = kWarpTileM / 16, kNTiles = kWarpTileN / 8;
/// Codes per MMA: 64 = 32 bytes of a row = 4 scale blocks.
constexpr int64_t kMmaK = 64;

/// The emitted ldmatrix row address of `lane` (i32 arithmetic below) as a
/// function, checked against the encoding library for all 32 lanes.
constexpr uint32_t ldmatrixRowA(uint32_t lane) { return lane & 15; }
constexpr uint32_t ldmatrixHalfA(uint32_t lane) { return lane >> 4; }
constexpr uint32_t ldmatrixRowB(uint32_t lane) {
  return (lane & 7) | ((lane >> 1) & 8);
}
constexpr uint32_t ldmatrixHalfB(uint32_t lane) { return (lane >> 3) & 1; }

/// The block-scaled mma.sync of the operands' format (docs/Blackwell.md
/// sections 7 and 10). Every form reads 32 code bytes of a row per MMA --
/// 64 E2M1 or 32 FP8 codes, the same fragment bytes (PTX ISA 9.7.14.5.10 /
/// .11: m16n8k32 .e4m3/.e5m2 registers hold 4 codes where m16n8k64 .e2m1
/// ones hold 8) -- so the ldmatrix loads are the same; the scale of an MMA
/// is byte (1X) or half word (2X) `byteId[j]` of a row's word
/// `scaleWord[j]` (getKStepMmaScales: the word of atom a of the K step holds
/// its blocks 4a..4a+3, as the stage's 128x4 atoms or 16-byte linear rows
/// keep them). The lanes holding each row's word do not depend on the
/// scale vector size (9.7.14.3: thread-id-a picks the lane pair of a quad,
/// thread-id-b the lane).
struct MmaSyncForm {
  NVVM::MMABlockScaleKind kind = NVVM::MMABlockScaleKind::MXF4NVF4;
  NVVM::ScaleVecSize vecSize = NVVM::ScaleVecSize::X4;
  NVVM::BlockScaleFormat format = NVVM::BlockScaleFormat::UE4M3;
  NVVM::MMATypes aType = NVVM::MMATypes::e2m1, bType = NVVM::MMATypes::e2m1;
  int64_t mmaK = kMmaK;
  /// MMAs per K step (codesRowBytes / 32) and the scale words of a row per
  /// K step (scaleStepBytes / 4).
  int64_t steps = 0, words = 0;
  /// 16-bit operands (GemmPlan::denseOperands, the BF16 GEMM): mma.sync
  /// m16n8k16 .bf16 -- its A and B fragments are the same bytes of 16 rows
  /// x 32 bytes that ldmatrix.x4 loads for the block-scaled forms (PTX ISA
  /// 9.7.14.5.8: a0 = row g, elements 2t, 2t + 1, ...) -- and no scales.
  bool dense = false;
  SmallVector<int64_t, 4> scaleWord, byteId;
};

/// The form of `plan`'s operands, or an error message.
tgt::Expected<MmaSyncForm> planMmaSyncForm(const GemmPlan &plan) {
  using Result = tgt::Expected<MmaSyncForm>;
  MmaSyncForm form;
  form.steps = plan.codesRowBytes() / tgt::kMmaRowBytes;
  if (plan.denseOperands()) {
    if (!plan.operandElement.isBF16())
      return Result(
          tgt::Status::error("the 16-bit mma.sync GEMM takes BF16 operands"));
    if (plan.quantizeOutput || plan.outputAmax)
      return Result(tgt::Status::error("the BF16 mma.sync GEMM stores C only"));
    if (form.steps < 1 || plan.codesRowBytes() % tgt::kMmaRowBytes != 0)
      return Result(tgt::Status::error(
          "a K step of the BF16 mma.sync GEMM is a multiple of 16 elements"));
    form.dense = true;
    form.aType = form.bType = NVVM::MMATypes::bf16;
    form.mmaK = 16;
    return form;
  }
  form.words = plan.scaleStepBytes() / 4;
  tgt::ScaleVecSize vec = tgt::ScaleVecSize::X4;
  if (plan.scaleBlockK == kMXBlockSize) {
    auto typeOf = [](const GemmOperand &op) -> std::optional<NVVM::MMATypes> {
      Type t = op.type.getElementType();
      if (isa<Float8E4M3FNType>(t))
        return NVVM::MMATypes::e4m3;
      if (isa<Float8E5M2Type>(t))
        return NVVM::MMATypes::e5m2;
      if (isa<Float4E2M1FNType>(t))
        return NVVM::MMATypes::e2m1;
      return std::nullopt;
    };
    std::optional<NVVM::MMATypes> a = typeOf(plan.a), b = typeOf(plan.b);
    if (!a || !b)
      return Result(tgt::Status::error("unexpected MX element type"));
    bool fp4 = *a == NVVM::MMATypes::e2m1;
    if (fp4 != (*b == NVVM::MMATypes::e2m1))
      return Result(tgt::Status::error(
          "MXFP8 x MXFP4 has no mma.sync form here (.kind::mxf8f6f4 reads "
          "E2M1 from byte containers, not MXFP4's packed codes)"));
    if (plan.codesRowBytes() != tgt::kKStepRowBytes)
      return Result(tgt::Status::error(
          "an MX K step of the mma.sync kernel is 128 code bytes a row (K "
          "step 128 for MXFP8, 256 for MXFP4)"));
    form.kind = fp4 ? NVVM::MMABlockScaleKind::MXF4
                    : NVVM::MMABlockScaleKind::MXF8F6F4;
    form.vecSize = fp4 ? NVVM::ScaleVecSize::X2 : NVVM::ScaleVecSize::X1;
    form.format = NVVM::BlockScaleFormat::UE8M0;
    form.aType = *a;
    form.bType = *b;
    form.mmaK = fp4 ? 64 : 32;
    vec = fp4 ? tgt::ScaleVecSize::X2 : tgt::ScaleVecSize::X1;
  }
  for (int64_t j = 0; j < form.steps; ++j) {
    tgt::Expected<tgt::KStepMmaScales> scales =
        tgt::getKStepMmaScales(vec, j);
    if (!scales.ok())
      return Result(tgt::Status::error(scales.message()));
    tgt::Status selector = tgt::verifyMmaSyncScaleSelector(
        vec, /*IsOperandA=*/true,
        tgt::MmaSyncScaleSelector{uint16_t(scales->ScaleFactorId), 0});
    if (!selector.ok())
      return Result(tgt::Status::error(selector.message()));
    form.scaleWord.push_back(scales->ScaleAtom);
    form.byteId.push_back(scales->ScaleFactorId);
  }
  return form;
}

struct MmaBlockScaleConsumer {
  GemmPipelineEmitter &e;
  OpBuilder &b;
  Location loc;
  const MmaSyncForm &form;

  Value i16(int64_t v) {
    return arith::ConstantIntOp::create(b, loc, b.getI16Type(), v);
  }

  /// ldmatrix.x4 of the rows `row` (this lane's, of the operand tile) at
  /// byte `byteInRow` (this lane's half of MMA step k): 4 i32 registers.
  SmallVector<Value> ldmatrix(Value stage, const GemmOperand &op, Value row,
                              Value byteInRow) {
    auto type = LLVM::LLVMStructType::getLiteral(
        b.getContext(), SmallVector<Type>(4, b.getI32Type()));
    Value regs = NVVM::LdMatrixOp::create(
        b, loc, type, e.offsetPtr(stage, e.codesOffset(op, row, byteInRow)),
        4, NVVM::MMALayout::row,
        NVVM::LdStMatrixShapeAttr::get(b.getContext(), 8, 8),
        NVVM::LdStMatrixEltType::B16);
    SmallVector<Value> out;
    for (int64_t i = 0; i < 4; ++i)
      out.push_back(LLVM::ExtractValueOp::create(b, loc, regs, i));
    return out;
  }

  /// The scale words of tile row `row` for `steps` MMA steps (one per
  /// step: blocks 4j..4j+3) from `stage`: one vector load where a stage
  /// keeps a row's scales contiguous (linear layouts; with paired K steps
  /// the even step's stage holds both steps' 16 bytes), one 32-bit load
  /// per step otherwise (128x4 atoms: the next 4 blocks are the next atom).
  SmallVector<Value> scaleWords(Value stage, const GemmOperand &op, Value row,
                                int64_t steps) {
    SmallVector<Value> words;
    if (op.type.getLayout() == ScaleLayout::Linear &&
        e.plan.scaleStaging == GemmScaleStaging::AsStored) {
      auto type = VectorType::get({steps}, b.getI32Type());
      Value vec = LLVM::LoadOp::create(
          b, loc, type, e.offsetPtr(stage, e.scaleOffset(op, row, e.c32(0))),
          4 * steps);
      for (int64_t j = 0; j < steps; ++j)
        words.push_back(LLVM::ExtractElementOp::create(
            b, loc, vec,
            arith::ConstantIntOp::create(b, loc, b.getI32Type(), j)));
      return words;
    }
    for (int64_t j = 0; j < steps; ++j)
      words.push_back(LLVM::LoadOp::create(
          b, loc, b.getI32Type(),
          e.offsetPtr(stage, e.scaleOffset(op, row, e.c32(4 * j))), 4));
    return words;
  }

  SmallVector<Value> mma(ArrayRef<Value> a, ArrayRef<Value> bRegs,
                         ArrayRef<Value> c, Value scaleA, Value scaleB,
                         int64_t byteId) {
    Type f32 = b.getF32Type();
    auto resultType = LLVM::LLVMStructType::getLiteral(
        b.getContext(), {f32, f32, f32, f32});
    if (form.dense) {
      // mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32: the fragment
      // words as they came from ldmatrix (two BF16 each).
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
    // Selectors {byte-id, thread-id 0}: the lanes of scaleWords.
    Value d = NVVM::MmaBlockScaleOp::create(
        b, loc, resultType, a, bRegs, c, scaleA, i16(byteId), i16(0), scaleB,
        i16(byteId), i16(0), ArrayRef<int64_t>{16, 8, form.mmaK},
        std::array<NVVM::MMATypes, 2>{form.aType, form.bType}, form.vecSize,
        form.format, form.kind);
    SmallVector<Value> out;
    for (int64_t i = 0; i < 4; ++i)
      out.push_back(LLVM::ExtractValueOp::create(b, loc, d, i));
    return out;
  }

  void emit() {
    const GemmPlan &plan = e.plan;
    int64_t steps = form.steps;
    Value warp = e.warpId(), lane = e.laneId();
    Value warpM = e.lshr(warp, 1), warpN = e.andi(warp, kWarpsN - 1);
    Value g = e.lshr(lane, 2);
    // This lane's ldmatrix rows and halves (ldmatrixRowA, ...), and the A
    // row / B column whose scales it supplies (selector {0, 0}).
    Value rowA = e.andi(lane, 15), halfA = e.shl(e.lshr(lane, 4), 4);
    Value rowB = arith::OrIOp::create(b, loc, e.andi(lane, 7),
                                      e.andi(e.lshr(lane, 1), 8));
    Value halfB = e.shl(e.andi(e.lshr(lane, 3), 1), 4);
    Value scaleRowA = e.add(g, e.shl(e.andi(lane, 1), 3));
    SmallVector<Value> rowsA, colsB;
    for (int64_t mi = 0; mi < kMTiles; ++mi)
      rowsA.push_back(
          e.add(e.mul(warpM, e.c32(kWarpTileM)), e.c32(mi * 16)));
    for (int64_t ni = 0; ni < kNTiles; ++ni)
      colsB.push_back(e.add(e.mul(warpN, e.c32(kWarpTileN)), e.c32(ni * 8)));

    int64_t accCount = kMTiles * kNTiles * 4;
    SmallVector<Value> zeros(
        accCount, arith::ConstantOp::create(b, loc, b.getF32FloatAttr(0.0f)));
    // With paired K steps (GemmPlan::pairsScaleSteps) one iteration walks
    // an even and an odd step: the linear scales of both come from the
    // even step's stage, which is released with the odd one's.
    int64_t group = plan.pairsScaleSteps() ? 2 : 1;
    auto kLoop = scf::ForOp::create(b, loc, e.c32(0),
                                    e.c32(plan.kSteps() / group), e.c32(1),
                                    zeros);
    {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(kLoop.getBody());
      Value firstStep = e.mul(kLoop.getInductionVar(), e.c32(group));
      SmallVector<Value> acc(kLoop.getRegionIterArgs());
      // Scale words per operand row: [row][step of the group].
      SmallVector<SmallVector<Value>> sa(kMTiles), sb(kNTiles);
      for (int64_t member = 0; member < group; ++member) {
        Value kStep = e.add(firstStep, e.c32(member));
        e.waitFull(kStep);
        Value stage = e.stagePtr(
            arith::RemUIOp::create(b, loc, kStep, e.c32(plan.stages)));
        auto loadScales = [&](const GemmOperand &op, Value row,
                              SmallVector<Value> &words) {
          // Paired linear scales: all the group's words with its first
          // step; everything else per stage.
          bool paired = group == 2 && plan.scalesByTensorMap(op);
          if (form.dense || (paired && member != 0))
            return;
          words = scaleWords(stage, op, row,
                             paired ? 2 * form.words : form.words);
        };
        for (int64_t mi = 0; mi < kMTiles; ++mi)
          loadScales(plan.a, e.add(rowsA[mi], scaleRowA), sa[mi]);
        for (int64_t ni = 0; ni < kNTiles; ++ni)
          loadScales(plan.b, e.add(colsB[ni], g), sb[ni]);
        auto word = [&](const GemmOperand &op, ArrayRef<Value> words,
                        int64_t step) -> Value {
          if (form.dense)
            return Value();
          bool paired = group == 2 && plan.scalesByTensorMap(op);
          int64_t w = form.scaleWord[step];
          return words[paired ? member * form.words + w : w];
        };
        for (int64_t step = 0; step < steps; ++step) {
          SmallVector<SmallVector<Value>> fa, fb;
          for (int64_t mi = 0; mi < kMTiles; ++mi)
            fa.push_back(
                ldmatrix(stage, plan.a, e.add(rowsA[mi], rowA),
                         e.add(halfA, e.c32(step * tgt::kMmaRowBytes))));
          for (int64_t ni = 0; ni < kNTiles; ni += 2) {
            SmallVector<Value> pair =
                ldmatrix(stage, plan.b, e.add(colsB[ni], rowB),
                         e.add(halfB, e.c32(step * tgt::kMmaRowBytes)));
            fb.push_back({pair[0], pair[1]});
            fb.push_back({pair[2], pair[3]});
          }
          for (int64_t mi = 0; mi < kMTiles; ++mi)
            for (int64_t ni = 0; ni < kNTiles; ++ni) {
              int64_t base = (mi * kNTiles + ni) * 4;
              SmallVector<Value> d =
                  mma(fa[mi], fb[ni], ArrayRef<Value>(acc).slice(base, 4),
                      word(plan.a, sa[mi], step), word(plan.b, sb[ni], step),
                      form.dense ? 0 : form.byteId[step]);
              for (int64_t j = 0; j < 4; ++j)
                acc[base + j] = d[j];
            }
        }
      }
      // Every stage of the group is done (the even one also held the odd
      // step's scales).
      for (int64_t member = 0; member < group; ++member)
        e.releaseStage(e.add(firstStep, e.c32(member)));
      scf::YieldOp::create(b, loc, acc);
    }
    ValueRange results = kLoop.getResults();

    Value scale = e.epilogueScale();
    if (plan.quantizeOutput) {
      // n8 tiles ni and ni + 1 are adjacent columns and adjacent
      // accumulators: one 16-column block per row.
      ScalarBuilder::TensorScale tensorScale = e.outputTensorScale();
      for (int64_t mi = 0; mi < kMTiles; ++mi)
        for (int64_t ni = 0; ni < kNTiles; ni += 2)
          e.storeQuantizedFragments(
              rowsA[mi], colsB[ni],
              results.slice((mi * kNTiles + ni) * 4, 8), scale, tensorScale);
      return;
    }
    if (plan.tmaStore) {
      // The staging buffers overlay the ring: once every consumer warp is
      // past its last MMA, every copy into the ring has landed (each was
      // waited for) and nothing reads it any more. Warp w stages at w x 4
      // KiB, 1024-byte aligned (the 128-byte swizzle of C's map).
      NVVM::BarrierOp::create(b, loc, Type(), e.c32(1),
                              e.c32(plan.consumerWarps * 32),
                              NVVM::BarrierReductionAttr(), Value());
      Value staging = e.offsetPtr(
          e.stagePtr(e.c32(0)),
          e.mul(warp, e.c32(kTmaStoreBuffers * kTmaStoreBufferBytes)));
      {
        auto ifLane0 = scf::IfOp::create(b, loc, e.eq(lane, 0), false);
        OpBuilder::InsertionGuard g0(b);
        b.setInsertionPointToStart(ifLane0.thenBlock());
        e.acquireOutputTensorMap();
      }
      int64_t chunksPerBlock = kWarpTileN *
                               (plan.resultElement.getIntOrFloatBitWidth() / 8) /
                               kTmaStoreRowBytes;
      for (int64_t mi = 0; mi < kMTiles; ++mi)
        e.storeMmaFragmentByTensorCopy(
            rowsA[mi], colsB[0], results.slice(mi * kNTiles * 4, kNTiles * 4),
            scale, staging, mi * chunksPerBlock);
      e.finishOutputAmax();
      e.finishTensorStores();
      return;
    }
    for (int64_t mi = 0; mi < kMTiles; ++mi)
      for (int64_t ni = 0; ni < kNTiles; ++ni)
        e.storeMmaFragment(rowsA[mi], colsB[ni],
                           results.slice((mi * kNTiles + ni) * 4, 4), scale);
    e.finishOutputAmax();
  }
};

} // namespace

std::string
kernels::mmaBlockScaleGemmUnsupportedReason(const GemmPlan &plan,
                                            int64_t maxSharedMemoryBytes) {
  if (plan.splitK > 1)
    return "split-K is not implemented for the mma.sync block_scale kernel yet";
  if (plan.persistent)
    return "persistent schedules (_pG) are not implemented for the mma.sync "
           "block_scale kernel yet";
  if (plan.tileM != kWarpsM * kWarpTileM || plan.tileN != kWarpsN * kWarpTileN ||
      plan.consumerWarps != kWarpsM * kWarpsN)
    return "the mma.sync block_scale kernel needs a 128 x 128 tile and 9 "
           "warps";
  // MX plans stage their scales as 128x4 atoms (makeGemmPlan).
  bool mx = plan.scaleBlockK == kMXBlockSize;
  if (plan.scaleStaging != (mx ? GemmScaleStaging::Atoms128x4
                               : GemmScaleStaging::AsStored) ||
      plan.stageRelease != GemmStageRelease::ConsumerThreads)
    return "the pipeline plan is not laid out for mma.sync";
  tgt::Expected<MmaSyncForm> form = planMmaSyncForm(plan);
  if (!form.ok())
    return form.message();
  if (plan.sharedMemoryBytes() > maxSharedMemoryBytes)
    return std::to_string(plan.sharedMemoryBytes()) +
           " bytes of shared memory exceed the chip's " +
           std::to_string(maxSharedMemoryBytes);
  // Paired K steps release two stages at a time: the ring must hold whole
  // pairs, and a second pair to overlap with.
  if (plan.pairsScaleSteps() && (plan.stages % 2 != 0 || plan.stages < 4))
    return "a K step of 128 with linear scales needs an even number of "
           "stages, at least 4 (they arrive once per two steps)";
  if (plan.tmaStore && !plan.quantizeOutput) {
    if (std::string why = gemmTmaStoreUnsupportedReason(plan); !why.empty())
      return why;
    // The staging buffers overlay the ring (the epilogue follows the last
    // MMA of the only tile).
    if (plan.consumerWarps * kTmaStoreBuffers * kTmaStoreBufferBytes >
        plan.stages * plan.stageBytes)
      return "the TMA store's staging buffers do not fit in the ring";
  }
  // The lane -> ldmatrix row and lane -> scale row/column rules the
  // consumer computes must be the ones the encoding library derives from
  // the PTX ISA and CUTLASS (unittests/Target/MmaSyncLayoutTest.cpp).
  for (uint32_t lane = 0; lane < 32; ++lane) {
    tgt::Expected<tgt::LdmatrixRowAddress> a =
        tgt::getMmaSyncLdmatrixAddressA(lane);
    tgt::Expected<tgt::LdmatrixRowAddress> bAddr =
        tgt::getMmaSyncLdmatrixAddressB(lane);
    if (!a.ok() || !bAddr.ok() || a->Row != ldmatrixRowA(lane) ||
        a->Half != ldmatrixHalfA(lane) || bAddr->Row != ldmatrixRowB(lane) ||
        bAddr->Half != ldmatrixHalfB(lane))
      return "the ldmatrix lane layout disagrees with the encodings";
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
  tgt::Expected<MmaSyncForm> form = planMmaSyncForm(plan);
  assert(form.ok() && "call mmaBlockScaleGemmUnsupportedReason first");
  return buildProducerConsumerKernel(
      module, plan, argTypes, name, [&](GemmPipelineEmitter &e) {
        MmaBlockScaleConsumer{e, e.b, e.loc, *form}.emit();
      });
}

GemmSchedule kernels::chooseMmaBlockScaleSchedule(
    const ::nvfp4::target::ChipInfo &chip, BlockScaledTensorType lhs,
    BlockScaledTensorType rhs, GemmSchedule base) {
  // bench/gemm_model.py --sm120 (docs/Blackwell.md section 7.4): the 128 x
  // 128 tile moves the same bytes per FLOP at K = 128 as at 256, so where
  // the L2 feed bounds both they tie; where the tensor pipe nearly bounds
  // them, 4 stages of K = 128 hide 1.5x the copy latency of 2 stages of
  // 256 (3 stages of compute ahead instead of 1). The TMA store writes C in
  // whole 128-byte rows instead of the fragments' 16-byte BF16 pieces: 3-13
  // % in the model on the RTX 5090. It needs rows of C of a multiple of 16
  // bytes: N % 8 == 0 covers BF16 and FP32 (planGemm falls back to the
  // direct stores where the map cannot be built). The quantizing epilogue
  // keeps its direct stores (planGemm).
  (void)chip;
  (void)lhs;
  base.tmaStore = rhs.getRows() % 8 == 0;
  return base;
}
