//===- Tcgen05Matmul.cpp - NVFP4 GEMM on Blackwell tensor cores
//------------===//
//
// Part of the nvfp4 project.
//
// sm_100a (B200) and sm_103a (GB300) multiply E2M1 codes with UE4M3 block
// scales in the tensor core: tcgen05.mma.cta_group::1.kind::mxf4nvf4
// .block_scale.block16, FP32 accumulation in Tensor Memory (TMEM). The
// kernel is a consumer of the shared pipeline (GemmPipeline.h); the plan
// asks it for
//
//   * codes as the TMA writes them with the 128-byte swizzle: a tile row's
//     128 code bytes of a K step are one 128-byte row, 16-byte chunks XORed
//     with the row's bits 0-2 -- the K-major SWIZZLE_128B canonical layout
//     (PTX ISA 9.7.16.3 "Shared memory layout and swizzling", 9.7.16.4.1
//     "Shared memory descriptor"): SBO = 1024 (next 8-row group), LBO
//     unused (one MMA's 32 bytes of K stay inside the 128-byte swizzle
//     row; encoded as 16). MMA step j starts 32 j bytes into the rows: the
//     swizzle is a function of the address bits, so advancing the start
//     address walks K (the pattern base stays 1024-aligned: base offset 0);
//   * scales as 128x4 atoms (GemmScaleStaging::Atoms128x4): atom j of a K
//     step holds K blocks 4j..4j+3 of the tile's 128 rows, which is what one
//     tcgen05.cp.cta_group::1.32x128b.warpx4 turns into the 4 TMEM columns
//     one MMA reads (PTX ISA 9.7.16.9.2, 9.7.16.10.7; docs/Blackwell.md
//     section 3);
//   * stages released by tcgen05.commit (GemmStageRelease::Tcgen05Commit).
//
// Warp roles (192 threads, Chip.cpp's gemmTile.threads):
//
//   warps 0-3  epilogue: warp w owns TMEM lanes 32w..32w+31 = tile rows
//              (tcgen05.ld lets warp w % 4 reach only that lane quarter);
//              warp 0 also allocates and frees the TMEM columns;
//   warp 4     MMA: its lane 0 -- always the same thread, so that
//              tcgen05.commit tracks all of its copies and MMAs -- issues
//              the tcgen05.cp, tcgen05.mma and tcgen05.commit;
//   warp 5     producer: the shared pipeline's TMA copies.
//
// Synchronization:
//
//   full[s]   producer -> MMA: expect_tx + TMA completion, plus
//             one arrival after the re-laid linear scales (st.shared +
//             fence.proxy.async);
//   empty[s]  MMA -> producer: tcgen05.commit.mbarrier::arrive::one after
//             the stage's 4 MMAs; it fires when they (and the tcgen05.cp
//             before them) have read the stage;
//   acc       MMA -> epilogue: a final tcgen05.commit after the last MMA;
//             the epilogue waits on phase 0, then tcgen05.fence::
//             after_thread_sync, tcgen05.ld.32x32b.x32, tcgen05.wait::ld
//             (PTX ISA 9.7.16.6 "Memory consistency model").
//
// Tensor Memory (one tcgen05.alloc of a power of two >= 32 columns, PTX ISA
// 9.7.16.7.1): columns [0, tileN) hold the 128 x tileN FP32 accumulator
// (data-path layout D: lane = row, column = n; 9.7.16.10.5); after them
// every pipeline stage owns 32 scale columns, SFA of MMA step j at +4j and
// SFB at +16 + 4j. A stage's scale columns are rewritten only after its
// "empty" phase fired, i.e. after the MMAs that read them completed, so no
// tcgen05.mma -> tcgen05.cp ordering is needed; tcgen05.cp -> tcgen05.mma
// from one thread is a pipelined pair (9.7.16.6.2).
//
// sm_103a's K = 96 form (GemmSchedule::mmaK = 96, schedule suffix _mk96;
// instruction descriptor bit 31, PTX ISA 9.7.16.4.2 Table 44) issues 8
// MMAs per 768 codes, i.e. per 3 K steps: each reads 48 bytes of every code
// row, so two of the eight cross from one stage's 128-byte swizzle row into
// the next stage's; their descriptors use the absolute leading-dimension
// mode, whose bits 16-29 address that second chunk (PTX ISA 9.7.16.3.1.2,
// sm_103a only). The 6 scales per row of an MMA start at byte 0 or 2 of a
// scale word (scale factor ID, 9.7.16.10.7.2) and run into the next atom's
// columns, so the 12 atoms of a 3-stage group sit in 48 contiguous columns
// per operand (emitMmaK96). All of it is what CUTLASS's sm_103 "ultra"
// kernel does (../shared/reference/cutlass-ptx/cutlass_89.sm_103a.ptx;
// unittests/Target/SmemDescTest.cpp K96MmaStep compares).
//
// MX operands (MXBlockScaledGemm.cpp; docs/Blackwell.md section 10) take
// the same kernel with .kind::mxf8f6f4.block32 (MXFP8, scale_vec::1X, K =
// 32) or .kind::mxf4.block32 (MXFP4, scale_vec::2X, K = 64): a K step is
// still 128 code bytes a row and 4 MMAs; its scales are 1 or 2 atoms, and
// MMA j reads byte / half word ID j (1X) or 2 (j % 2) (2X) of its atom's
// words, the ID in its descriptor and in bits 30-31 of its scale addresses
// (Tcgen05Constants::stepInstrDesc, ::nvfp4::target::getKStepMmaScales).
//
// 16-bit operands (GemmPlan::denseOperands: the BF16 GEMM of BF16Gemm.cpp,
// docs/Blackwell.md section 12) take the same kernel with
// tcgen05.mma.cta_group::1.kind::f16: a K step of 64 BF16 is again one
// 128-byte swizzle row, its 4 MMAs of K = 16 read the same 32 bytes of each
// row as the block-scaled ones, so the descriptors, ring, commits and
// epilogues are shared; there are no scales (no tcgen05.cp, no scale
// columns) and the instruction descriptor is Table 42's (encodeBF16InstrDesc,
// emitDenseMmas).
//
// Rows of A or B past the matrix edge are never copied (codes) or stored
// (re-laid scales); they feed only accumulator rows/columns that the
// bounds-checked epilogue does not store.
//
// The CTA pair (GemmSchedule::ctaGroup = 2, schedule _c2_cg2; docs/
// Blackwell.md section 9) is CUTLASS's 2-SM kernel structure
// (cutlass_72a.sm_100a.ptx): the two CTAs of a cluster compute one
// 256 x 256 tile with tcgen05.mma.cta_group::2 (M = 256: data-path layout
// A, each CTA's 128 rows in its own TMEM), issued by the leader (rank 0)
// alone. Each CTA holds its A rows, half of B's code rows (the MMA reads B
// from both CTAs' shared memory) and all 256 of B's scale rows (each CTA's
// half of the MMA reads every column's scales from its own TMEM). Every
// tcgen05 operation of the kernel is .cta_group::2 (ptxas rejects mixing):
// alloc/relinquish/dealloc by warp 0 of both CTAs, tcgen05.cp and the MMAs
// by the leader, commits multicast to the barriers of both CTAs (mask
// 0b11). The codes' tensor copies complete on the leader's "full" barrier
// (cp.async.bulk.tensor...cta_group::2); the scales land on each CTA's own
// "full", and the peer's idle MMA warp forwards that phase to the leader
// (GemmPipelineEmitter::emitPairForwarder). Consecutive tiles' 256-column
// accumulators overlap by half (columns 0 / 128, as CUTLASS's): the
// epilogue warps of both CTAs read the overlapped half, release it on the
// leader's barrier, and read the other half under the next tile's MMAs.
//
// The epilogue stores C directly (each lane one row, 16-byte st.global) or,
// with the TMA store (GemmSchedule::tmaStore, "_ts"; docs/Blackwell.md
// section 11), through per-warp staging buffers in shared memory: per 128
// bytes of the warp's 32 rows, tcgen05.ld, st.shared in the 128-byte
// swizzle of C's tensor map, fence.proxy.async and two 16-row
// cp.async.bulk.tensor stores from lane 0 (GemmPipelineEmitter::stageRow,
// storeStagedRows) -- CUTLASS's 72a epilogue, warp by warp. The buffers are
// the CTA's own, or for a one-tile kernel without room for them (6-stage
// K = 96) lie over the idle ring.
//
//===----------------------------------------------------------------------===//

#include "GemmPipeline.h"
#include "KernelBuilder.h"
#include "KernelUtils.h"
#include "nvfp4/Target/Tcgen05Encoding.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;
using namespace mlir::nvfp4;
using namespace mlir::nvfp4::kernels;

namespace tgt = ::nvfp4::target;

namespace {

constexpr int64_t kEpilogueWarps = 4;
constexpr int64_t kMmaWarp = 4;
/// K of one dense .kind::mxf4nvf4 MMA (PTX ISA 9.7.16.2.1, Table 39): 64
/// codes = 32 bytes = two core matrices along K.
constexpr int64_t kMmaK = 64;
constexpr int64_t kMmaSteps = kGemmTileK / kMmaK;
/// TMEM columns one MMA step reads per operand with scale_vec::4X and 128
/// rows: ceil(128 / 32) (docs/Blackwell.md section 3).
constexpr int64_t kScaleColumnsPerStep = 4;
constexpr int64_t kScaleColumnsPerStage = 2 * kMmaSteps * kScaleColumnsPerStep;
/// cta_group::2: stages of the pair's ring. A stage is 16 KiB of A codes,
/// 16 KiB of half of B's codes and 2 + 4 KiB of scale atoms; 5 of them
/// (190 KiB) fit in shared memory (6 do not). Tensor Memory holds the
/// overlapping accumulators (384 columns) and 2 scale slots of 48, not one
/// per stage (480 of 512).
constexpr int64_t kPairStages = 5;
/// The pair's second accumulator position (overlapAcc): 128 columns in.
constexpr int64_t kOverlapShift = 128;
/// cta_group::2: the CTA pair's multicast mask (ranks 0 and 1), for the
/// commits that release both CTAs' barriers.
constexpr int64_t kPairMask = 0b11;
/// Accumulator columns per tcgen05.ld.32x32b.x32.
constexpr int64_t kLoadColumns = 32;

/// The constants of one kernel, all from the Tcgen05Encoding encoders.
struct Tcgen05Constants {
  uint32_t instrDesc = 0;
  /// The MMA of the operands' format (docs/Blackwell.md section 10):
  /// NVFP4 .kind::mxf4nvf4.block16 (scale_vec::4X), MXFP8
  /// .kind::mxf8f6f4.block32 (scale_vec::1X), MXFP4 .kind::mxf4.block32
  /// (scale_vec::2X).
  NVVM::MMABlockScaleKind kind = NVVM::MMABlockScaleKind::MXF4NVF4;
  NVVM::Tcgen05MMABlockScale blockScale = NVVM::Tcgen05MMABlockScale::BLOCK16;
  /// The 128x4 scale atoms of a K step per 128 rows (4 NVFP4, 2 MXFP4, 1
  /// MXFP8), and for each of the step's MMAs its instruction descriptor,
  /// scale atom and scale factor ID (getKStepMmaScales; NVFP4: instrDesc,
  /// atom j, ID 0).
  int64_t scaleAtomsPerStep = kMmaSteps;
  uint32_t stepInstrDesc[kMmaSteps] = {};
  uint32_t stepScaleAtom[kMmaSteps] = {};
  uint32_t stepScaleId[kMmaSteps] = {};
  /// K = 96 (plan.mmaK == 96): the descriptors with scale factor IDs 0 and
  /// 2, and the codes' descriptor in the absolute leading-dimension mode.
  uint32_t instrDescK96[2] = {0, 0};
  uint64_t codesDescK96 = 0;
  /// Descriptors with start address 0: OR in encode(address).
  uint64_t codesDesc = 0, scalesDesc = 0;
  /// tcgen05.cp source offsets of the 4 atoms of a K step, and between
  /// B's 128-row atoms (cta_group::2: B's scales cover the pair's 256
  /// rows, 2 atoms and 8 TMEM columns per MMA step).
  int64_t atomStrideK = 0, atomStrideMB = 0;
  int64_t atomsMB = 1;
  /// TMEM columns per MMA step for B's scales and per stage for both.
  int64_t sfbColumnsPerStep = kScaleColumnsPerStep;
  int64_t scaleColumnsPerStage = kScaleColumnsPerStage;
  /// cta_group::2 (GemmSchedule::ctaGroup): the leader (rank 0) issues the
  /// MMAs for both CTAs of the pair.
  bool pair = false;
  /// 16-bit operands (GemmPlan::denseOperands): tcgen05.mma .kind::f16 with
  /// instrDesc, no scales, no tcgen05.cp.
  bool dense = false;
  /// The pair's overlapping accumulators: tile i accumulates at column
  /// kOverlapShift * (i % 2), so tile i + 1 overlaps only half of tile i's
  /// 256 columns, the half its epilogue drains (and releases) first.
  bool overlapAcc = false;
  /// TMEM scale-column slots: one per ring stage, or (overlapping
  /// accumulators) 2, slot = ring step % 2, rewritten once the MMAs of the
  /// step two before completed (its stage's "empty" phase).
  int64_t scaleSlots = 0;
  uint32_t allocColumns = 0;
  /// Accumulator stages in TMEM: 2 for persistent plans (the epilogue of
  /// tile i reads one while the MMAs of tile i + 1 fill the other), else 1.
  /// The scale columns follow them, from scaleColumnBase.
  int64_t accStages = 1, scaleColumnBase = 0;
  /// "Accumulator full" barrier a at accBarrierOffset + 8 a (the MMA
  /// warp's commit), "accumulator empty" a at accEmptyOffset + 8 a (the
  /// epilogue threads' arrivals; persistent plans only).
  int64_t accBarrierOffset = 0, accEmptyOffset = 0, tmemSlotOffset = 0;
};

/// The block-scaled MMA of `plan` (NVFP4 .kind::mxf4nvf4, MX .kind::mxf8f6f4 /
/// .kind::mxf4): its descriptors and the scales each MMA step reads; "" or
/// why not.
std::string planBlockScaledMma(const GemmPlan &plan, tgt::CtaGroup group,
                               Tcgen05Constants &c) {
  auto idesc =
      tgt::encodeNvfp4InstrDesc(group, plan.tileM * plan.ctaGroup, plan.tileN);
  if (!idesc.ok())
    return idesc.message();
  c.instrDesc = idesc->Value;
  // The MX kinds: both operands' codes are one 128-byte row per K step
  // (MXFP8 128 codes, MXFP4 256), 4 MMAs of 32 bytes, like NVFP4's; only
  // the descriptor and the scales each MMA reads differ.
  tgt::ScaleVecSize vecSize = tgt::ScaleVecSize::X4;
  bool mx = plan.scaleBlockK == kMXBlockSize;
  if (mx) {
    auto elementOf = [](const GemmOperand &op) -> std::optional<
                                                   tgt::ElementType> {
      Type t = op.type.getElementType();
      if (isa<Float8E4M3FNType>(t))
        return tgt::ElementType::E4M3;
      if (isa<Float8E5M2Type>(t))
        return tgt::ElementType::E5M2;
      if (isa<Float4E2M1FNType>(t))
        return tgt::ElementType::E2M1;
      return std::nullopt;
    };
    std::optional<tgt::ElementType> aType = elementOf(plan.a),
                                    bType = elementOf(plan.b);
    if (!aType || !bType)
      return "unexpected MX element type";
    bool fp4 = *aType == tgt::ElementType::E2M1;
    if (fp4 != (*bType == tgt::ElementType::E2M1))
      return "MXFP8 x MXFP4 has no tcgen05 form here (.kind::mxf8f6f4 "
             "reads E2M1 from byte containers, not MXFP4's packed "
             "codes)";
    if (c.pair)
      return "the CTA pair (_cg2) is built for NVFP4 only";
    if (plan.mmaK != kMmaK)
      return "the K = 96 MMA (_mk96) is an NVFP4 form (.kind::mxf4nvf4)";
    if (plan.codesRowBytes() != tgt::kKStepRowBytes)
      return "an MX K step of the tcgen05 kernel is 128 code bytes a row "
             "(K step 128 for MXFP8, 256 for MXFP4)";
    c.kind = fp4 ? NVVM::MMABlockScaleKind::MXF4
                 : NVVM::MMABlockScaleKind::MXF8F6F4;
    c.blockScale = NVVM::Tcgen05MMABlockScale::BLOCK32;
    vecSize = fp4 ? tgt::ScaleVecSize::X2 : tgt::ScaleVecSize::X1;
    for (int64_t j = 0; j < kMmaSteps; ++j) {
      auto scales = tgt::getKStepMmaScales(vecSize, j);
      if (!scales.ok())
        return scales.message();
      auto mxDesc = tgt::encodeMXInstrDesc(
          fp4 ? tgt::MmaKind::MXF4 : tgt::MmaKind::MXF8F6F4, *aType, *bType,
          group, plan.tileM, plan.tileN, scales->ScaleFactorId);
      if (!mxDesc.ok())
        return mxDesc.message();
      c.stepInstrDesc[j] = mxDesc->Value;
      c.stepScaleAtom[j] = scales->ScaleAtom;
      c.stepScaleId[j] = scales->ScaleFactorId;
    }
  } else {
    for (int64_t j = 0; j < kMmaSteps; ++j) {
      c.stepInstrDesc[j] = c.instrDesc;
      c.stepScaleAtom[j] = j;
    }
  }
  c.scaleAtomsPerStep = tgt::getKStepScaleAtoms(vecSize);
  if (plan.scaleAtomsPerStep() != c.scaleAtomsPerStep)
    return "the K step's scale atoms do not match the MMA's scale "
           "vector";
  return "";
}

/// The tcgen05.cp of the scale atoms and their Tensor Memory columns.
std::string planScaleCopies(const GemmPlan &plan, Tcgen05Constants &c) {
  auto copies = tgt::planScaleFactorCopy(plan.tileM, plan.scaleStepBytes(), 0);
  if (!copies.ok())
    return copies.message();
  if (copies->AtomsM != 1 || copies->AtomsK != c.scaleAtomsPerStep ||
      copies->ColumnsPerMmaStep != kScaleColumnsPerStep)
    return "unexpected tcgen05.cp plan for the scale tile";
  auto scalesDesc = tgt::encodeTcgen05SmemDescriptor(copies->FirstAtom);
  if (!scalesDesc.ok())
    return scalesDesc.message();
  c.scalesDesc = scalesDesc->Value;
  c.atomStrideK = copies->AtomStrideK;
  // B's scale rows: the 128 x 128 tile's, or the pair's 256 (two atoms per
  // MMA step, copied to columns +0 and +4 of its 8).
  auto copiesB = tgt::planScaleFactorCopy(plan.tileN, plan.scaleStepBytes(), 0);
  if (!copiesB.ok())
    return copiesB.message();
  if (copiesB->AtomStrideK != copies->AtomStrideK ||
      copiesB->FirstAtom.StrideDimByteOffset !=
          copies->FirstAtom.StrideDimByteOffset)
    return "unexpected tcgen05.cp plan for B's scale tile";
  c.atomsMB = copiesB->AtomsM;
  c.atomStrideMB = copiesB->AtomStrideM;
  c.sfbColumnsPerStep = copiesB->ColumnsPerMmaStep;
  c.scaleColumnsPerStage =
      c.scaleAtomsPerStep * (kScaleColumnsPerStep + c.sfbColumnsPerStep);
  return "";
}

/// The .kind::f16 MMA of 16-bit operands (GemmPlan::denseOperands; the
/// BF16 GEMM, BF16Gemm.cpp): 4 MMAs of K = 16 per 64-element K step, the
/// same 32 bytes of every 128-byte swizzle row as a block-scaled step's
/// MMAs read, and no scales (docs/Blackwell.md section 12).
std::string planDenseMma(const GemmPlan &plan, tgt::CtaGroup group,
                         Tcgen05Constants &c) {
  if (c.pair)
    return "the CTA pair (_cg2) is built for block-scaled operands only";
  if (plan.mmaK != kMmaK)
    return "the K = 96 MMA (_mk96) is a block-scaled form (.kind::mxf4nvf4)";
  if (!plan.operandElement.isBF16())
    return "the 16-bit tcgen05 GEMM takes BF16 operands";
  if (plan.codesRowBytes() != tgt::kKStepRowBytes ||
      plan.codesRowBytes() / tgt::kMmaRowBytes != kMmaSteps)
    return "a K step of the BF16 tcgen05 GEMM is 64 elements (128 bytes) a "
           "row";
  if (plan.quantizeOutput || plan.outputAmax)
    return "the BF16 tcgen05 GEMM stores C only";
  auto idesc = tgt::encodeBF16InstrDesc(group, plan.tileM, plan.tileN);
  if (!idesc.ok())
    return idesc.message();
  c.dense = true;
  c.instrDesc = idesc->Value;
  for (int64_t j = 0; j < kMmaSteps; ++j)
    c.stepInstrDesc[j] = c.instrDesc;
  c.scaleAtomsPerStep = 0;
  c.scaleColumnsPerStage = 0;
  return "";
}

tgt::Expected<Tcgen05Constants> planConstants(const GemmPlan &plan) {
  using Result = tgt::Expected<Tcgen05Constants>;
  auto fail = [](const std::string &why) {
    return Result(tgt::Status::error(why));
  };
  if ((!plan.denseOperands() &&
       plan.scaleStaging != GemmScaleStaging::Atoms128x4) ||
      plan.stageRelease != GemmStageRelease::Tcgen05Commit)
    return fail("the pipeline plan is not laid out for tcgen05");
  if (plan.splitK > 1)
    return fail("split-K is not implemented for the tcgen05 kernel yet");
  if (plan.persistent && plan.kSteps() == 0)
    return fail("the persistent tcgen05 kernel needs at least one K step");
  Tcgen05Constants c;
  c.pair = plan.ctaGroup == 2;
  if (plan.consumerWarps != kEpilogueWarps + 1)
    return fail("the tcgen05 kernel needs 6 warps");
  if (c.pair) {
    // The pair's MMA is M = 256 (each CTA's 128 rows) x N = 256; each CTA
    // holds half of B's rows and all of B's scale rows.
    if (plan.clusterM != 2 || !plan.persistent)
      return fail("cta_group::2 (_cg2) needs a persistent cluster of 2 CTAs "
                  "(_pG_c2_cg2)");
    if (plan.tileM != 128 || plan.tileN != 256)
      return fail("the CTA pair computes 256 x 256 tiles (128x256 per CTA)");
    if (plan.mmaK != kMmaK)
      return fail("the K = 96 MMA is not built for the CTA pair (_cg2)");
    if (plan.gridLimit == 1)
      return fail("a CTA pair needs a grid limit of at least 2");
  } else {
    if (plan.clusterM != 1)
      return fail("clusters on sm_100a/sm_103a are the CTA pair (_c2_cg2)");
    // One 128x4 atom of B scales per MMA step (4 TMEM columns): B tiles of
    // 128 rows.
    if (plan.tileM != 128 || plan.tileN != 128)
      return fail("the tcgen05 kernel needs a 128 x 128 tile (or the CTA "
                  "pair's 128 x 256 per CTA, _c2_cg2)");
  }
  tgt::CtaGroup group = c.pair ? tgt::CtaGroup::Two : tgt::CtaGroup::One;
  if (std::string why = plan.denseOperands()
                            ? planDenseMma(plan, group, c)
                            : planBlockScaledMma(plan, group, c);
      !why.empty())
    return fail(why);
  if (plan.mmaK != kMmaK) {
    if (plan.mmaK != 96)
      return fail("the tcgen05 MMA has K = 64 or 96");
    if (!plan.chip ||
        !plan.chip->has(::nvfp4::target::Instruction::Tcgen05BlockScaleMmaK96))
      return fail("the K = 96 MMA needs sm_103a");
    if (plan.k % tgt::kK96GroupK != 0)
      return fail("the K = 96 MMA needs K to be a multiple of 768");
    if (plan.stages % 3 != 0)
      return fail("the K = 96 MMA needs a multiple of 3 stages");
    for (uint32_t id : {0u, 2u}) {
      auto k96 =
          tgt::encodeNvfp4K96InstrDesc(group, plan.tileM, plan.tileN, id);
      if (!k96.ok())
        return fail(k96.message());
      c.instrDescK96[id / 2] = k96->Value;
    }
  }
  bool tmaStore = plan.tmaStore && !plan.quantizeOutput;
  if (tmaStore) {
    if (std::string why = gemmTmaStoreUnsupportedReason(plan); !why.empty())
      return fail(why);
  }
  if (plan.consumerSharedBytes != tcgen05GemmSharedBytes(plan))
    return fail("the plan lacks the TMA store's staging buffers "
                "(tcgen05GemmSharedBytes)");
  if (plan.chip && plan.sharedMemoryBytes() > plan.chip->maxSharedMemoryPerBlock)
    return fail(std::string(tmaStore ? "the stages and the TMA store's staging "
                                       "buffers"
                                     : "the stages") +
                " need " + std::to_string(plan.sharedMemoryBytes()) +
                " bytes of shared memory, more than the chip's " +
                std::to_string(plan.chip->maxSharedMemoryPerBlock));

  tgt::SmemDescriptorConfig codes;
  codes.LeadingDimByteOffset = 16;
  codes.StrideDimByteOffset = 8 * kCodesRowBytes;
  codes.Swizzle = tgt::SmemSwizzle::Bytes128;
  static_assert(8 * kCodesRowBytes == kSwizzleRepeatBytes,
                "an 8-row group is one swizzle pattern");
  auto codesDesc = tgt::encodeTcgen05SmemDescriptor(codes);
  if (!codesDesc.ok())
    return fail(codesDesc.message());
  c.codesDesc = codesDesc->Value;
  if (plan.mmaK == 96) {
    // Bits 16-29 carry an address (ORed in at run time, with the start).
    codes.LeadingDimByteOffset = 0;
    codes.LeadingMode = tgt::LeadingDimMode::AbsoluteAddress;
    auto absolute = tgt::encodeTcgen05SmemDescriptor(codes);
    if (!absolute.ok())
      return fail(absolute.message());
    c.codesDescK96 = absolute->Value;
  }

  if (!c.dense)
    if (std::string why = planScaleCopies(plan, c); !why.empty())
      return fail(why);

  // Two accumulator stages where they leave room for the scales. The
  // pair's 256 columns per stage do not: like CUTLASS's 2-SM kernel
  // (cutlass_72a.sm_100a.ptx, the MMA's accumulator at column 0 or 128 by
  // the tile's parity), its tiles alternate between columns 0 and 128 and
  // the epilogue drains the overlapped half first; two scale slots follow
  // at 384 (CUTLASS keeps one set there).
  c.accStages = plan.persistent && !c.pair ? 2 : 1;
  c.overlapAcc = c.pair;
  c.scaleColumnBase =
      c.accStages * plan.tileN + (c.overlapAcc ? kOverlapShift : 0);
  c.scaleSlots = c.dense ? 0 : c.overlapAcc ? 2 : plan.stages;
  if (c.scaleSlots > plan.stages)
    return fail("the CTA pair needs at least 2 stages");
  auto columns = tgt::getTmemAllocColumns(
      c.scaleColumnBase + c.scaleSlots * c.scaleColumnsPerStage);
  if (!columns.ok())
    return fail(columns.message());
  c.allocColumns = *columns;

  c.accBarrierOffset = plan.freeBarrierByte();
  c.accEmptyOffset = c.accBarrierOffset + 8 * c.accStages;
  c.tmemSlotOffset =
      plan.persistent ? c.accEmptyOffset + 8 * c.accStages
                      : c.accBarrierOffset + 8;
  if (c.tmemSlotOffset + 4 > plan.barrierBytes)
    return fail("no room for the accumulator barrier");
  return c;
}

/// Emits the kernel body around the shared pipeline.
struct Tcgen05Kernel {
  GemmPipelineEmitter &e;
  OpBuilder &b;
  Location loc;
  const Tcgen05Constants &c;
  Value tmemBase; ///< i32 TMEM address of column 0, lane 0
  /// The MMA role is being emitted inside `if (lane == 0)` (emitMma).
  bool mmaOnLane0 = false;

  MLIRContext *ctx() { return b.getContext(); }
  NVVM::CTAGroupKindAttr group() {
    return NVVM::CTAGroupKindAttr::get(
        ctx(), c.pair ? NVVM::CTAGroupKind::CTA_2 : NVVM::CTAGroupKind::CTA_1);
  }
  /// tcgen05.commit of this thread's prior tcgen05 operations to `barrier`;
  /// with cta_group::2 to the barrier at the same offset in both CTAs of
  /// the pair (.multicast::cluster, mask 0b11), as CUTLASS's 2-SM kernel.
  void commit(Value barrier) {
    Value mask =
        c.pair ? arith::ConstantIntOp::create(b, loc, b.getI16Type(), kPairMask)
                     .getResult()
               : Value();
    NVVM::Tcgen05CommitOp::create(b, loc, barrier, mask, group());
  }
  /// The CTA pair's leader: the CTA of rank 0, which issues the MMAs.
  Value isLeader() { return e.eq(e.clusterRank(), 0); }
  void fence(NVVM::Tcgen05FenceKind kind) {
    NVVM::Tcgen05FenceOp::create(b, loc,
                                 NVVM::Tcgen05FenceKindAttr::get(ctx(), kind));
  }
  void ifThen(Value cond, function_ref<void()> body) {
    auto ifOp = scf::IfOp::create(b, loc, cond, false);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(ifOp.thenBlock());
    body();
  }
  /// A TMEM address (i32) as the !llvm.ptr<6> the NVVM ops take.
  Value tmemPtr(Value address) {
    return LLVM::IntToPtrOp::create(
        b, loc, LLVM::LLVMPointerType::get(ctx(), 6), address);
  }
  Value tmemColumn(Value column) { return e.add(tmemBase, column); }
  /// The 32-bit shared-window address of a shared pointer.
  Value sharedAddress(Value ptr) {
    return LLVM::PtrToIntOp::create(b, loc, b.getI32Type(), ptr);
  }
  /// `desc` with its start-address field set to encode(address) (PTX ISA
  /// 9.7.16.4.1: (address & 0x3FFFF) >> 4 in bits 0-13).
  Value descriptor(uint64_t desc, Value address) {
    Value field = e.lshr(e.andi(address, 0x3FFFF), 4);
    Value wide = arith::ExtUIOp::create(b, loc, b.getI64Type(), field);
    return arith::OrIOp::create(
        b, loc, wide,
        arith::ConstantIntOp::create(b, loc, b.getI64Type(),
                                     static_cast<int64_t>(desc)));
  }

  /// `desc` (absolute leading-dimension mode) with encode(address) in the
  /// start field and encode(second) in bits 16-29 (PTX ISA 9.7.16.3.1.2).
  Value descriptor(uint64_t desc, Value address, Value second) {
    Value field = e.lshr(e.andi(second, 0x3FFFF), 4);
    Value wide = arith::ExtUIOp::create(b, loc, b.getI64Type(), field);
    Value shifted = arith::ShLIOp::create(
        b, loc, wide, arith::ConstantIntOp::create(b, loc, b.getI64Type(), 16));
    return arith::OrIOp::create(b, loc, descriptor(desc, address), shifted);
  }

  /// Warp 0 allocates the columns; the address lands in shared memory.
  void allocate() {
    ifThen(e.eq(e.warpId(), 0), [&] {
      NVVM::Tcgen05AllocOp::create(b, loc, e.sharedPtr(c.tmemSlotOffset),
                                   e.c32(c.allocColumns), group());
      NVVM::Tcgen05RelinquishAllocPermitOp::create(b, loc, group());
      fence(NVVM::Tcgen05FenceKind::BEFORE_THREAD_SYNC);
    });
    ifThen(e.eq(e.threadId(), 0), [&] {
      for (int64_t a = 0; a < c.accStages; ++a) {
        // One arrival: the tile's last tcgen05.commit.
        NVVM::MBarrierInitOp::create(
            b, loc, e.sharedPtr(c.accBarrierOffset + 8 * a), e.c32(1),
            Value());
        // Every epilogue thread, once its tcgen05.ld of the stage are done;
        // with cta_group::2 one lane per epilogue warp of both CTAs (the
        // leader's barrier; the peer's is unused).
        if (e.plan.persistent)
          NVVM::MBarrierInitOp::create(
              b, loc, e.sharedPtr(c.accEmptyOffset + 8 * a),
              e.c32(c.pair ? 2 * kEpilogueWarps : kEpilogueWarps * 32),
              Value());
      }
    });
    // initBarriers ends with the CTA barrier that publishes both.
    e.initBarriers();
    if (c.pair) {
      // Both CTAs' barriers and Tensor Memory exist before the peer's
      // copies, commits or the leader's MMAs reach them.
      NVVM::FenceMbarrierInitOp::create(b, loc);
      e.clusterSync();
    }
    fence(NVVM::Tcgen05FenceKind::AFTER_THREAD_SYNC);
    tmemBase = LLVM::LoadOp::create(b, loc, b.getI32Type(),
                                    e.sharedPtr(c.tmemSlotOffset), 4);
  }

  void copyScales(Value sfaColumn, Value sfbColumn, Value base,
                  int64_t step) {
    const GemmPlan &plan = e.plan;
    // A: one 128-row atom; B: one, or the pair's two (columns +0, +4).
    SmallVector<std::tuple<Value, int64_t, int64_t>> copies = {
        {sfaColumn, plan.a.scalesOffset, 0}};
    for (int64_t m = 0; m < c.atomsMB; ++m)
      copies.push_back({sfbColumn, plan.b.scalesOffset + m * c.atomStrideMB,
                        m * kScaleColumnsPerStep});
    for (auto [column0, offset, columnOffset] : copies) {
      Value column =
          columnOffset ? e.add(column0, e.c32(columnOffset)) : column0;
      Value src = e.add(base, e.c32(offset + step * c.atomStrideK));
      NVVM::Tcgen05CpOp::create(
          b, loc,
          NVVM::Tcgen05CpShapeAttr::get(ctx(),
                                        NVVM::Tcgen05CpShape::SHAPE_32x128b),
          group(),
          NVVM::Tcgen05CpMulticastAttr::get(ctx(),
                                            NVVM::Tcgen05CpMulticast::WARPX4),
          NVVM::Tcgen05CpSrcFormatAttr(), tmemPtr(column),
          descriptor(c.scalesDesc, src));
    }
  }

  void mma(Value aDesc, Value bDesc, Value idesc, Value accumulate, Value sfa,
           Value sfb, Value acc) {
    NVVM::Tcgen05MMABlockScaleOp::create(
        b, loc, NVVM::MMABlockScaleKindAttr::get(ctx(), c.kind), group(),
        NVVM::Tcgen05MMABlockScaleAttr::get(ctx(), c.blockScale),
        NVVM::Tcgen05MMACollectorOpAttr::get(
            ctx(), NVVM::Tcgen05MMACollectorOp::DISCARD),
        tmemPtr(acc), aDesc, bDesc, idesc, accumulate, tmemPtr(sfa),
        tmemPtr(sfb));
  }

  /// The K = 96 mainloop (sm_103a). The K steps go in groups of 3 (768
  /// codes = 8 MMAs); stages % 3 == 0, so a group's stages are 3s, 3s+1,
  /// 3s+2 and its scale columns can be contiguous: group slot g = stage / 3
  /// owns 96 columns from tileN + 96 g, SFA atom a (blocks 4a..4a+3 of the
  /// group) at + 4a and SFB atom a at + 48 + 4a, so that the 6 scales of an
  /// MMA can run from one atom's words into the next one's. Step p of a
  /// group copies its 8 atoms and issues the MMAs that end in its stage
  /// (getK96MmaStep); a stage is released (tcgen05.commit to its "empty"
  /// barrier) after the last MMA that reads it -- stage p - 1 after the
  /// straddling MMA, the group's last stage after MMA 7. Its scale columns
  /// are therefore rewritten only after every MMA reading them completed,
  /// as in the K = 64 loop.
  void emitMmaK96(Value stepBase, Value acc) {
    const GemmPlan &plan = e.plan;
    constexpr int64_t groupSteps = tgt::kK96GroupK / kGemmTileK;
    constexpr int64_t groupColumns = groupSteps * kScaleColumnsPerStage;
    auto loop = scf::ForOp::create(b, loc, e.c32(0),
                                   e.c32(plan.kSteps() / groupSteps), e.c32(1));
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(loop.getBody());
    Value groupIndex = loop.getInductionVar();
    for (int64_t p = 0; p < groupSteps; ++p) {
      // The ring step (stage and phase); the tile's K step is kStep -
      // stepBase. stepBase is a multiple of kSteps, hence of 3.
      Value kStep = e.add(
          stepBase, e.add(e.mul(groupIndex, e.c32(groupSteps)), e.c32(p)));
      e.waitFull(kStep);
      fence(NVVM::Tcgen05FenceKind::AFTER_THREAD_SYNC);
      onLane0([&] {
        Value stage =
            arith::RemUIOp::create(b, loc, kStep, e.c32(plan.stages));
        // Stage of row r of this group: stage - p + r (no wrap: stage % 3
        // == p), stageBytes apart, so its codes are (r - p) * stageBytes
        // from this stage's.
        Value base = sharedAddress(e.stagePtr(stage));
        Value slot = arith::DivUIOp::create(b, loc, stage, e.c32(groupSteps));
        Value columns = e.add(e.c32(c.scaleColumnBase),
                              e.mul(slot, e.c32(groupColumns)));
        auto sfa = [&](int64_t atom) {
          return tmemColumn(e.add(columns, e.c32(atom * kScaleColumnsPerStep)));
        };
        auto sfb = [&](int64_t atom) {
          return tmemColumn(e.add(
              columns, e.c32(groupColumns / 2 + atom * kScaleColumnsPerStep)));
        };
        for (int64_t step = 0; step < kMmaSteps; ++step)
          copyScales(sfa(p * kMmaSteps + step), sfb(p * kMmaSteps + step),
                     base, step);
        Value always = arith::ConstantIntOp::create(b, loc, b.getI1Type(), 1);
        // Every descriptor of this step is one 64-bit value plus a
        // constant: the absolute-mode constant with encode(base) in both
        // the start and the second-chunk field, then the MMA's byte
        // offsets from `base` (which may be negative: rows of the stages
        // before) / 16 in each field (exact: the shared addresses stay
        // inside the 14-bit fields, PTX ISA 9.7.16.4.1). One value live
        // across the step instead of one address computation per MMA.
        Value stepDesc = descriptor(c.codesDescK96, base, base);
        auto descriptorAt = [&](int64_t first, int64_t second) {
          return arith::AddIOp::create(
              b, loc, stepDesc,
              arith::ConstantIntOp::create(b, loc, b.getI64Type(),
                                           first / 16 + (second / 16) * 65536));
        };
        for (uint32_t i = 0; i < tgt::kK96MmasPerGroup; ++i) {
          tgt::Expected<tgt::K96MmaStep> step = tgt::getK96MmaStep(i);
          if (step->LastRow != uint32_t(p))
            continue;
          auto operand = [&](const GemmOperand &op) {
            return descriptorAt(
                (int64_t(step->FirstRow) - p) * plan.stageBytes +
                    op.codesOffset + step->ByteOffset,
                op.codesOffset);
          };
          // TMEM is not zeroed: the first MMA of the tile overwrites.
          Value accumulate =
              i == 0 ? arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne,
                                             groupIndex, e.c32(0))
                           .getResult()
                     : always;
          // CUTLASS also carries the scale factor ID in bits 30-31 of the
          // scale addresses (cutlass_89_sm103a_ultra_mma.ptx: r450 =
          // base + 0x80000000 + 452 with ID 2); the PTX ISA names only the
          // idesc fields. Both are set, as there.
          Value idBits = e.c32(static_cast<int32_t>(
              static_cast<uint32_t>(step->ScaleFactorId) << 30));
          mma(operand(plan.a), operand(plan.b),
              e.c32(static_cast<int32_t>(
                  c.instrDescK96[step->ScaleFactorId / 2])),
              accumulate, e.add(sfa(step->ScaleAtom), idBits),
              e.add(sfb(step->ScaleAtom), idBits), acc);
          if (step->Straddles) // the previous stage is read for the last time
            commit(e.emptyBarrier(e.add(stage, e.c32(-1))));
        }
        if (p == groupSteps - 1)
          commit(e.emptyBarrier(stage));
      });
    }
  }

  /// The K = 64 mainloop of one tile: ring steps stepBase .. stepBase +
  /// kSteps - 1, accumulating at TMEM address `acc`.
  void emitMmaK64(Value stepBase, Value acc) {
    const GemmPlan &plan = e.plan;
    auto loop = scf::ForOp::create(b, loc, e.c32(0), e.c32(plan.kSteps()),
                                   e.c32(1));
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(loop.getBody());
    Value tileStep = loop.getInductionVar();
    Value kStep = e.add(stepBase, tileStep);
    e.waitFull(kStep);
    fence(NVVM::Tcgen05FenceKind::AFTER_THREAD_SYNC);
    ifThen(e.eq(e.laneId(), 0), [&] {
      Value stage = arith::RemUIOp::create(b, loc, kStep, e.c32(plan.stages));
      Value base = sharedAddress(e.stagePtr(stage));
      if (c.dense)
        return emitDenseMmas(base, tileStep, acc, stage);
      Value slot = stage;
      if (c.scaleSlots < plan.stages) {
        // The slot's previous contents (ring step kStep - scaleSlots) are
        // read by MMAs that completed once that step's stage commit fired:
        // its "empty" phase (kStep - scaleSlots) / stages.
        slot = arith::RemUIOp::create(b, loc, kStep, e.c32(c.scaleSlots));
        Value reused = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::uge,
                                             kStep, e.c32(c.scaleSlots));
        ifThen(reused, [&] {
          Value before =
              arith::SubIOp::create(b, loc, kStep, e.c32(c.scaleSlots));
          NVVM::MBarrierTryWaitParityOp::create(
              b, loc,
              e.emptyBarrier(
                  arith::RemUIOp::create(b, loc, before, e.c32(plan.stages))),
              e.andi(arith::DivUIOp::create(b, loc, before, e.c32(plan.stages)),
                     1),
              e.c32(0));
          fence(NVVM::Tcgen05FenceKind::AFTER_THREAD_SYNC);
        });
      }
      Value scaleColumns = e.add(e.c32(c.scaleColumnBase),
                                 e.mul(slot, e.c32(c.scaleColumnsPerStage)));
      // Atom a of the step's scales (blocks 4a..4a+3) at column + 4a.
      auto sfa = [&](int64_t atom) {
        return tmemColumn(
            e.add(scaleColumns, e.c32(atom * kScaleColumnsPerStep)));
      };
      auto sfb = [&](int64_t atom) {
        return tmemColumn(e.add(
            scaleColumns, e.c32(c.scaleAtomsPerStep * kScaleColumnsPerStep +
                                atom * c.sfbColumnsPerStep)));
      };
      // Scales: shared 128x4 atoms -> TMEM, replicated into the four
      // 32-lane sub-partitions by .warpx4.
      for (int64_t atom = 0; atom < c.scaleAtomsPerStep; ++atom)
        copyScales(sfa(atom), sfb(atom), base, atom);
      // MMA step j reads code bytes 32j..32j+31 of each row; TMEM is not
      // zeroed, so the tile's first MMA overwrites.
      Value accumulate = arith::CmpIOp::create(
          b, loc, arith::CmpIPredicate::ne, tileStep, e.c32(0));
      Value always = arith::ConstantIntOp::create(b, loc, b.getI1Type(), 1);
      for (int64_t step = 0; step < kMmaSteps; ++step) {
        int64_t kOffset = step * tgt::kMmaRowBytes;
        Value aDesc = descriptor(
            c.codesDesc, e.add(base, e.c32(plan.a.codesOffset + kOffset)));
        Value bDesc = descriptor(
            c.codesDesc, e.add(base, e.c32(plan.b.codesOffset + kOffset)));
        // MX (1X, 2X): the MMA's scales are byte / half word ID of its
        // atom's words. CUTLASS carries the ID in bits 30-31 of the scale
        // addresses as well as in the descriptor
        // (make_runtime_instr_desc_block_scaled); so does this kernel.
        Value sfaAddress = sfa(c.stepScaleAtom[step]);
        Value sfbAddress = sfb(c.stepScaleAtom[step]);
        if (uint32_t id = c.stepScaleId[step]) {
          Value idBits = e.c32(static_cast<int32_t>(id << 30));
          sfaAddress = e.add(sfaAddress, idBits);
          sfbAddress = e.add(sfbAddress, idBits);
        }
        mma(aDesc, bDesc, e.c32(static_cast<int32_t>(c.stepInstrDesc[step])),
            step == 0 ? accumulate : always, sfaAddress, sfbAddress, acc);
      }
      // The stage is free once these MMAs (and the copies) completed.
      commit(e.emptyBarrier(stage));
    });
  }

  /// The 4 MMAs of one K step of 16-bit operands (c.dense) from the stage
  /// at shared address `base`: MMA j reads bytes 32j..32j+31 (K = 16j ..
  /// 16j + 15) of every row, as a block-scaled step's MMA j does, so the
  /// descriptors are the same; no scales. Then the stage's commit.
  void emitDenseMmas(Value base, Value tileStep, Value acc, Value stage) {
    const GemmPlan &plan = e.plan;
    Value accumulate = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne,
                                             tileStep, e.c32(0));
    Value always = arith::ConstantIntOp::create(b, loc, b.getI1Type(), 1);
    for (int64_t step = 0; step < kMmaSteps; ++step) {
      int64_t kOffset = step * tgt::kMmaRowBytes;
      Value aDesc = descriptor(
          c.codesDesc, e.add(base, e.c32(plan.a.codesOffset + kOffset)));
      Value bDesc = descriptor(
          c.codesDesc, e.add(base, e.c32(plan.b.codesOffset + kOffset)));
      NVVM::Tcgen05MMAOp::create(
          b, loc,
          NVVM::Tcgen05MMAKindAttr::get(ctx(), NVVM::Tcgen05MMAKind::F16),
          group(),
          NVVM::Tcgen05MMACollectorOpAttr::get(
              ctx(), NVVM::Tcgen05MMACollectorOp::DISCARD),
          /*aShift=*/UnitAttr(), tmemPtr(acc), aDesc, bDesc,
          e.c32(static_cast<int32_t>(c.stepInstrDesc[step])),
          step == 0 ? accumulate : always, /*scaleInputD=*/Value(),
          /*disableOutputLane=*/Value());
    }
    commit(e.emptyBarrier(stage));
  }

  void emitMainloop(Value stepBase, Value acc) {
    if (e.plan.mmaK == 96)
      emitMmaK96(stepBase, acc);
    else
      emitMmaK64(stepBase, acc);
  }

  /// Accumulator stage `a`'s barriers and TMEM address (column a * tileN).
  Value accFull(Value a) {
    return e.offsetPtr(e.sharedPtr(c.accBarrierOffset), e.mul(a, e.c32(8)));
  }
  Value accEmpty(Value a) {
    return e.offsetPtr(e.sharedPtr(c.accEmptyOffset), e.mul(a, e.c32(8)));
  }
  Value accAddress(Value a) {
    return tmemColumn(e.mul(a, e.c32(e.plan.tileN)));
  }
  /// The accumulator of this CTA's tile `tile`: its stage's, or with
  /// overlapping accumulators column kOverlapShift * (tile % 2).
  Value accOfTile(Value tile) {
    if (c.overlapAcc)
      return tmemColumn(e.mul(e.andi(tile, 1), e.c32(kOverlapShift)));
    return accAddress(accStageOf(tile));
  }
  /// The accumulator stage of this CTA's tile `tile` and the parity of its
  /// use: stage tile % accStages, round tile / accStages.
  Value accStageOf(Value tile) {
    return c.accStages == 2 ? e.andi(tile, 1) : e.c32(0);
  }
  Value accParityOf(Value tile) {
    return c.accStages == 2 ? e.andi(e.lshr(tile, 1), 1) : e.andi(tile, 1);
  }

  /// `body` on lane 0 of the MMA warp: inside an `if` of its own, or as it
  /// is when the whole role already runs on lane 0 (mmaOnLane0).
  void onLane0(function_ref<void()> body) {
    if (mmaOnLane0)
      body();
    else
      ifThen(e.eq(e.laneId(), 0), body);
  }

  void emitMma() {
    const GemmPlan &plan = e.plan;
    // The persistent K = 96 role runs on lane 0 alone, waits included: one
    // divergent region around the tile and group loops instead of one per
    // K step (fewer instructions per K step). Before the kernels declared
    // their CTAs per SM (buildTcgen05GemmKernel), ptxas 13.0 held them at
    // 56 registers, its target for 6 CTAs of 192 threads, and this layout
    // was what kept the 6-stage kernel under it (4-20 spilled bytes in 21
    // of 120 shapes with a region per step); the one-tile K = 96 kernel
    // kept a region per step for the same reason (one around its loop
    // spilled 4 bytes in 2 of those 120).
    if (plan.mmaK == 96 && plan.persistent && !mmaOnLane0) {
      ifThen(e.eq(e.laneId(), 0), [&] {
        mmaOnLane0 = true;
        emitMma();
      });
      return;
    }
    if (!plan.persistent) {
      emitMainloop(e.c32(0), tmemBase);
      onLane0([&] { commit(e.sharedPtr(c.accBarrierOffset)); });
      return;
    }
    // Persistent: tile i accumulates in stage i % 2, once the epilogue has
    // drained what tile i - 2 left there ("empty", phase (i / 2) & 1; the
    // first round passes on the preceding phase, as the producer's does).
    auto loop =
        scf::ForOp::create(b, loc, e.c32(0), e.tilesOfThisCTA(), e.c32(1));
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(loop.getBody());
    Value tile = loop.getInductionVar();
    Value a = accStageOf(tile);
    Value parity = accParityOf(tile);
    NVVM::MBarrierTryWaitParityOp::create(
        b, loc, accEmpty(a),
        arith::XOrIOp::create(b, loc, parity, e.c32(1)), e.c32(0));
    fence(NVVM::Tcgen05FenceKind::AFTER_THREAD_SYNC);
    emitMainloop(e.mul(tile, e.c32(plan.kSteps())), accOfTile(tile));
    onLane0([&] { commit(accFull(a)); });
  }

  /// Reads `columns` accumulator columns of this lane's row from TMEM
  /// (tcgen05.ld is warp-collective: call it under warp-uniform control).
  Value loadColumns(Value laneBase, Value column, int64_t columns) {
    Type type = columns == 1 ? Type(b.getI32Type())
                             : VectorType::get({columns}, b.getI32Type());
    Value words = NVVM::Tcgen05LdOp::create(
        b, loc, type, UnitAttr(),
        NVVM::Tcgen05LdStShapeAttr::get(ctx(),
                                        NVVM::Tcgen05LdStShape::SHAPE_32X32B),
        tmemPtr(e.add(laneBase, column)), Value());
    NVVM::Tcgen05WaitOp::create(
        b, loc,
        NVVM::Tcgen05WaitKindAttr::get(ctx(), NVVM::Tcgen05WaitKind::LOAD));
    return words;
  }

  /// Stores the tile the epilogue helpers address (GemmPipelineEmitter::
  /// setTile) from the accumulator at TMEM address `acc`.
  void emitEpilogueTile(Value acc, Value scale) {
    emitEpilogueColumns(acc, scale, e.c32(0), e.plan.tileN);
  }

  /// Stores columns colBase .. colBase + columns - 1 (a multiple of 32) of
  /// the tile from the accumulator at TMEM address `acc`.
  /// The TMA-store epilogue (GemmSchedule::tmaStore, "_ts"): C goes from
  /// TMEM through registers into this warp's staging buffers and out by
  /// cp.async.bulk.tensor, 128 bytes of each of the warp's 32 rows per
  /// chunk (64 BF16 / 32 FP32 columns: two / one tcgen05.ld.32x32b.x32).
  bool tmaStore() const { return e.plan.tmaStore && !e.plan.quantizeOutput; }

  /// The staging buffers lie over the ring (tcgen05GemmSharedBytes == 0):
  /// one tile per CTA whose own buffers do not fit beside its stages.
  bool stagingOverRing() const {
    return tmaStore() && e.plan.consumerSharedBytes == 0;
  }

  /// This warp's kTmaStoreBuffers staging buffers: after the barrier area
  /// (GemmPlan::consumerSharedOffset, tcgen05GemmSharedBytes), or over the
  /// ring's first stages (stagingOverRing).
  Value stagingBuffers() {
    const GemmPlan &plan = e.plan;
    Value base = stagingOverRing()
                     ? e.stagePtr(e.c32(0))
                     : e.sharedPtr(plan.consumerSharedOffset() -
                                   plan.stages * plan.stageBytes);
    return e.offsetPtr(
        base,
        e.mul(e.warpId(), e.c32(kTmaStoreBuffers * kRowStagingBufferBytes)));
  }

  /// Columns colBase .. colBase + columns - 1 of the tile through the
  /// staging buffers. Chunk i of a call uses buffer i % 2; every call
  /// stores an even number of chunks (gemmTmaStoreUnsupportedReason), so
  /// the buffers alternate across calls and tiles as well. Chunks past N
  /// are stored too: the tensor map clips them (as on sm_90a), which keeps
  /// the alternation uniform.
  void emitEpilogueColumnsByTensorCopy(Value acc, Value scale, Value colBase,
                                       int64_t columns) {
    const GemmPlan &plan = e.plan;
    int64_t elementBytes = plan.resultElement.getIntOrFloatBitWidth() / 8;
    int64_t chunkColumns = kTmaStoreRowBytes / elementBytes;
    Value warpRow = e.mul(e.warpId(), e.c32(32));
    Value laneBase = e.add(acc, e.shl(warpRow, 16));
    Value staging = stagingBuffers();
    for (int64_t chunk = 0; chunk * chunkColumns < columns; ++chunk) {
      Value buffer = e.offsetPtr(staging, (chunk % kTmaStoreBuffers) *
                                              kRowStagingBufferBytes);
      Value col0 = e.add(colBase, e.c32(chunk * chunkColumns));
      SmallVector<Value> words;
      for (int64_t part = 0; part < chunkColumns / kLoadColumns; ++part)
        words.push_back(loadColumns(
            laneBase, e.add(col0, e.c32(part * kLoadColumns)), kLoadColumns));
      e.waitStagingBuffer();
      for (auto [part, bits] : llvm::enumerate(words))
        e.stageRow(buffer, warpRow, e.add(col0, e.c32(part * kLoadColumns)),
                   part * kLoadColumns * elementBytes, bits, scale);
      e.storeStagedRows(buffer, warpRow, col0);
    }
  }

  void emitEpilogueColumns(Value acc, Value scale, Value colBase,
                           int64_t columns) {
    const GemmPlan &plan = e.plan;
    if (tmaStore())
      return emitEpilogueColumnsByTensorCopy(acc, scale, colBase, columns);
    // Lane l of warp w reads TMEM lane 32w + l: accumulator row 32w + l.
    Value row = e.add(e.mul(e.warpId(), e.c32(32)), e.laneId());
    Value laneBase = e.add(acc, e.shl(e.mul(e.warpId(), e.c32(32)), 16));
    Value rowInside = e.ult(e.add(e.tileRowA(), row), e.c32(plan.m));
    std::optional<ScalarBuilder::TensorScale> tensorScale;
    if (plan.quantizeOutput)
      tensorScale = e.outputTensorScale();
    auto ifThen = [&](Value cond, function_ref<void()> then,
                      function_ref<void()> otherwise) {
      auto ifOp = scf::IfOp::create(b, loc, cond, true);
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(ifOp.thenBlock());
      then();
      b.setInsertionPointToStart(ifOp.elseBlock());
      otherwise();
    };
    // N a multiple of the tile: every chunk of every tile is inside C, and
    // the right-edge code below would be dead (and costs ptxas registers).
    bool allWhole = plan.n % plan.tileN == 0;
    for (int64_t chunk = 0; chunk < columns; chunk += kLoadColumns) {
      Value col0 = e.add(colBase, e.c32(chunk));
      if (allWhole && !plan.quantizeOutput) {
        Value words = loadColumns(laneBase, col0, kLoadColumns);
        ifThen(
            rowInside, [&] { e.storeOutputRow(row, col0, words, scale); },
            [] {});
        continue;
      }
      // Columns of this chunk inside the matrix (the same for the whole
      // CTA): a whole chunk is one vector store per row; at the right edge
      // a loop reads and stores column by column.
      Value left = arith::SubIOp::create(b, loc, e.c32(plan.n),
                                         e.add(e.tileRowB(), col0));
      Value whole = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sge,
                                          left, e.c32(kLoadColumns));
      if (plan.quantizeOutput) {
        // N is a multiple of 16: the chunk is whole, half inside (one
        // block, read with an x16 load), or outside.
        Value half = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sge,
                                           left, e.c32(kLoadColumns / 2));
        // One x16 load per block keeps fewer accumulators live.
        auto quantizeBlocks = [&](int64_t columns) {
          for (int64_t run = 0; run < columns / 16; ++run) {
            Value col = e.add(col0, e.c32(16 * run));
            Value words = loadColumns(laneBase, col, 16);
            ifThen(
                rowInside,
                [&] {
                  SmallVector<Value> values;
                  for (int64_t j = 0; j < 16; ++j)
                    values.push_back(arith::BitcastOp::create(
                        b, loc, b.getF32Type(),
                        vector::ExtractOp::create(b, loc, words, j)));
                  e.storeQuantizedRun(row, col, values, scale, *tensorScale);
                },
                [] {});
          }
        };
        ifThen(
            whole, [&] { quantizeBlocks(kLoadColumns); },
            [&] {
              ifThen(half, [&] { quantizeBlocks(kLoadColumns / 2); }, [] {});
            });
        continue;
      }
      ifThen(
          whole,
          [&] {
            Value words = loadColumns(laneBase, col0, kLoadColumns);
            ifThen(
                rowInside, [&] { e.storeOutputRow(row, col0, words, scale); },
                [] {});
          },
          [&] {
            Value count = arith::MaxSIOp::create(
                b, loc, arith::MinSIOp::create(b, loc, left,
                                               e.c32(kLoadColumns)),
                e.c32(0));
            auto loop = scf::ForOp::create(b, loc, e.c32(0), count, e.c32(1));
            OpBuilder::InsertionGuard guard(b);
            b.setInsertionPointToStart(loop.getBody());
            Value col = e.add(col0, loop.getInductionVar());
            Value word = loadColumns(laneBase, col, 1);
            e.storeOutput(row, col,
                          arith::BitcastOp::create(b, loc, b.getF32Type(), word),
                          scale);
          });
    }
  }

  void emitEpilogue() {
    const GemmPlan &plan = e.plan;
    Value scale = e.epilogueScale();
    if (tmaStore())
      ifThen(e.eq(e.laneId(), 0), [&] { e.acquireOutputTensorMap(); });
    if (!plan.persistent) {
      NVVM::MBarrierTryWaitParityOp::create(
          b, loc, e.sharedPtr(c.accBarrierOffset), e.c32(0), e.c32(0));
      fence(NVVM::Tcgen05FenceKind::AFTER_THREAD_SYNC);
      // Staging over the ring: the tile's last MMA has completed, so every
      // copy into the ring has landed and every tensor-core read of it is
      // done (the producer issues no more); the proxy fence orders those
      // async-proxy accesses before this thread's generic writes.
      if (stagingOverRing())
        NVVM::FenceProxyOp::create(
            b, loc, NVVM::ProxyKind::async_shared,
            NVVM::SharedSpaceAttr::get(ctx(), NVVM::SharedSpace::shared_cta));
      emitEpilogueTile(tmemBase, scale);
      finishEpilogue();
      return;
    }
    // Persistent: tile i waits for stage i % 2 to be full (phase (i / 2) &
    // 1), stores it, and releases it: each thread once its tcgen05.ld
    // completed (tcgen05.wait::ld in loadColumns), ordered before the
    // arrival by tcgen05.fence::before_thread_sync (PTX ISA 9.7.16.6).
    auto loop =
        scf::ForOp::create(b, loc, e.c32(0), e.tilesOfThisCTA(), e.c32(1));
    {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(loop.getBody());
      Value tile = loop.getInductionVar();
      Value a = accStageOf(tile);
      e.setTile(e.tileCoords(e.linearTileOf(tile)));
      NVVM::MBarrierTryWaitParityOp::create(b, loc, accFull(a),
                                            accParityOf(tile), e.c32(0));
      fence(NVVM::Tcgen05FenceKind::AFTER_THREAD_SYNC);
      Value acc = accOfTile(tile);
      Value laterHalf;
      if (c.overlapAcc) {
        // The half the next tile overlaps first: columns 128.. of a tile
        // at column 0, columns 0.. of a tile at column 128.
        Value odd = e.andi(tile, 1);
        laterHalf = e.mul(odd, e.c32(kOverlapShift));
        Value firstHalf =
            arith::XOrIOp::create(b, loc, laterHalf, e.c32(kOverlapShift));
        emitEpilogueColumns(acc, scale, firstHalf, kOverlapShift);
      } else {
        emitEpilogueTile(acc, scale);
      }
      fence(NVVM::Tcgen05FenceKind::BEFORE_THREAD_SYNC);
      if (c.pair) {
        // The leader's MMAs write both CTAs' accumulators: one lane per
        // warp (after the warp's loads, __syncwarp) arrives on the
        // leader's "empty" -- a remote arrive from the peer, default
        // .release.cta as CUTLASS's (cutlass_72a.sm_100a.ptx, the
        // epilogue's mbarrier.arrive.shared::cluster).
        NVVM::SyncWarpOp::create(b, loc, e.c32(-1));
        ifThen(e.eq(e.laneId(), 0), [&] {
          NVVM::MBarrierArriveOp::create(
              b, loc, Type(), e.peerBarrier(accEmpty(a), e.c32(0)), Value());
        });
        // The other half while the next tile's MMAs run.
        if (c.overlapAcc)
          emitEpilogueColumns(acc, scale, laterHalf,
                              plan.tileN - kOverlapShift);
      } else {
        NVVM::MBarrierArriveOp::create(b, loc, Type(), accEmpty(a), Value());
      }
    }
    finishEpilogue();
  }

  /// After a warp's last tile: its output amax, and (TMA store) the wait
  /// for its bulk stores, whose staging buffers must outlive their reads.
  void finishEpilogue() {
    e.finishOutputAmax();
    if (tmaStore())
      e.finishTensorStores();
  }

  /// Warp 0 frees the columns once every warp is done with them.
  void deallocate() {
    fence(NVVM::Tcgen05FenceKind::BEFORE_THREAD_SYNC);
    // A pair: neither CTA leaves (or frees its half of the columns) while
    // the other may still arrive on its barriers or the leader's MMAs
    // write its Tensor Memory.
    if (c.pair)
      e.clusterSync();
    else
      NVVM::Barrier0Op::create(b, loc);
    ifThen(e.eq(e.warpId(), 0), [&] {
      fence(NVVM::Tcgen05FenceKind::AFTER_THREAD_SYNC);
      NVVM::Tcgen05DeallocOp::create(b, loc, tmemPtr(tmemBase),
                                     e.c32(c.allocColumns), group());
    });
  }

  void emit() {
    const GemmPlan &plan = e.plan;
    allocate();
    auto producer = scf::IfOp::create(
        b, loc, e.eq(e.warpId(), plan.producerWarp()), true);
    {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(producer.thenBlock());
      if (c.pair)
        e.emitPairProducer();
      else if (plan.persistent)
        e.emitPersistentProducer();
      else
        e.emitProducer();
      b.setInsertionPointToStart(producer.elseBlock());
      auto mma = scf::IfOp::create(b, loc, e.eq(e.warpId(), kMmaWarp), true);
      b.setInsertionPointToStart(mma.thenBlock());
      if (c.pair) {
        // The leader issues the pair's MMAs; the peer's MMA warp forwards
        // its stages' completion to the leader.
        auto leader = scf::IfOp::create(b, loc, isLeader(), true);
        OpBuilder::InsertionGuard inner(b);
        b.setInsertionPointToStart(leader.thenBlock());
        emitMma();
        b.setInsertionPointToStart(leader.elseBlock());
        e.emitPairForwarder();
      } else {
        emitMma();
      }
      b.setInsertionPointToStart(mma.elseBlock());
      emitEpilogue();
    }
    deallocate();
  }
};

} // namespace

GemmSchedule
kernels::chooseTcgen05Schedule(const ::nvfp4::target::ChipInfo &chip,
                               BlockScaledTensorType lhs,
                               BlockScaledTensorType rhs, GemmSchedule base) {
  // Persistent with two TMEM accumulator stages where the tiles do not fit
  // in one wave: from the second tile on, a CTA's epilogue runs under its
  // next mainloop (bench/gemm_model.py: +6 to +25% on every multi-wave
  // shape; in one wave there is nothing to overlap).
  int64_t batch = product(lhs.getBatchShape());
  int64_t tiles = batch * llvm::divideCeil(lhs.getRows(), base.tileM) *
                  llvm::divideCeil(rhs.getRows(), base.tileN);
  // The TMA-store epilogue where C's rows are multiples of 16 bytes (N % 8
  // == 0 for BF16 and FP32), as on sm_90a and sm_120a: coalesced 128-byte
  // rows instead of one 16-byte store per row and lane (bench/gemm_model.py:
  // the direct stores are bound by one L1 wavefront per row and
  // instruction). The quantizing epilogue keeps its direct stores
  // (planGemm drops the flag).
  base.tmaStore = rhs.getRows() % 8 == 0;
  // The CTA pair (cta_group::2, 256 x 256 per pair, B read once per pair)
  // where it needs fewer waves than the 128 x 128 tiles by more than its
  // exposed epilogue: bench/gemm_model.py puts every K step of both at the
  // same feed-bound time (the pair's SM moves the same bytes for twice the
  // FLOPs) and the pair's epilogue (128 x 256 accumulators per CTA, half
  // of it under the next tile's MMAs with the overlapping accumulators) at
  // about 2 K steps per wave. So the pair wins when
  //   waves(pair CTAs) * (K steps + 2) < waves(128 x 128 tiles) * K steps,
  // which is the model's choice on all 1536 shapes of its grid (both
  // chips, M 128..16384, N 256..14336, K 256..8192; `gemm_model.py
  // --check-rule`).
  if (chip.multiprocessors) {
    int64_t sms = chip.multiprocessors;
    int64_t pairCTAs = 2 * batch * llvm::divideCeil(lhs.getRows(), 256) *
                       llvm::divideCeil(rhs.getRows(), 256);
    int64_t kSteps = lhs.getCols() / kGemmTileK;
    if (llvm::divideCeil(pairCTAs, sms) * (kSteps + 2) <
        llvm::divideCeil(tiles, sms) * kSteps) {
      GemmSchedule pair = base;
      pair.tileM = 128;
      pair.tileN = 256;
      pair.stages = kPairStages;
      pair.persistent = true;
      pair.clusterM = 2;
      pair.ctaGroup = 2;
      return pair;
    }
  }
  if (chip.multiprocessors && tiles > chip.multiprocessors) {
    base.persistent = true;
    return base;
  }
  // sm_103a in one wave: the K = 96 MMA, 8 instructions per 768 codes
  // instead of 12; it needs K % 768 == 0 (the MMAs line up with the
  // 128-byte swizzle rows again every 768 codes) and a multiple of 3
  // stages: 6, which fit in shared memory (6 x 36 KiB) and Tensor Memory
  // (128 + 6 x 32 columns). The model finds the 128 x 128 tile feed-bound,
  // so K = 96 is neutral there and persistence is the gain that counts:
  // with more tiles than SMs the rule keeps K = 64 with the TMA store
  // (persistent K = 96, `_p8_mk96`, can be forced; its 6 stages leave no
  // room for the staging, and bench/gemm_model.py puts it below `_s4_p8_ts`
  // by its exposed direct-store epilogue).
  // The TMA store's 32 KiB of staging do not fit beside 6 stages (221,184
  // + 32,768 bytes > 232,448): this one-tile kernel stages over its ring.
  if (chip.has(::nvfp4::target::Instruction::Tcgen05BlockScaleMmaK96) &&
      lhs.getCols() % tgt::kK96GroupK == 0) {
    base.mmaK = 96;
    base.stages = 6;
  }
  return base;
}

int64_t kernels::tcgen05GemmSharedBytes(const GemmPlan &plan) {
  if (!plan.tmaStore || plan.quantizeOutput)
    return 0;
  int64_t staging = kEpilogueWarps * kTmaStoreBuffers * kRowStagingBufferBytes;
  // One tile per CTA: once its last MMA completed the ring is idle, so
  // buffers that do not fit beside the stages (the 6-stage K = 96 kernel)
  // lie over them (Tcgen05Kernel::stagingOverRing). A persistent CTA
  // fills the ring for its next tile while it stores this one: its own.
  GemmPlan withStaging = plan;
  withStaging.consumerSharedBytes = staging;
  if (!plan.persistent && plan.chip &&
      withStaging.sharedMemoryBytes() > plan.chip->maxSharedMemoryPerBlock &&
      plan.stages * plan.stageBytes >= staging)
    return 0;
  return staging;
}

std::string kernels::tcgen05GemmUnsupportedReason(const GemmPlan &plan) {
  tgt::Expected<Tcgen05Constants> constants = planConstants(plan);
  return constants.ok() ? "" : constants.message();
}

/// The CTAs of a kernel one SM can hold at once: one for the persistent
/// schedules (one CTA per SM by construction), otherwise as many as both
/// the Tensor Memory columns (512 per SM) and the shared memory leave room
/// for. An SM's shared memory is the per-block maximum plus the 1 KiB the
/// CUDA driver reserves per resident CTA (sm_100: 228 KiB, 227 KiB per
/// block), so a CTA takes its own bytes plus that KiB.
static int64_t residentCTAsPerMultiprocessor(const GemmPlan &plan,
                                             const Tcgen05Constants &c) {
  constexpr int64_t kReservedSharedBytesPerCTA = 1024;
  if (plan.persistent || !plan.chip)
    return 1;
  int64_t byTmem = tgt::kTmemColumns / c.allocColumns;
  int64_t byShared =
      (plan.chip->maxSharedMemoryPerBlock + kReservedSharedBytesPerCTA) /
      (plan.sharedMemoryBytes() + kReservedSharedBytesPerCTA);
  return std::max<int64_t>(1, std::min(byTmem, byShared));
}

gpu::GPUFuncOp kernels::buildTcgen05GemmKernel(ModuleOp module,
                                               const GemmPlan &plan,
                                               TypeRange argTypes,
                                               StringRef name) {
  tgt::Expected<Tcgen05Constants> constants = planConstants(plan);
  assert(constants.ok() && "call tcgen05GemmUnsupportedReason first");
  // ptxas is told how many CTAs share an SM (.minnctapersm). Without it,
  // ptxas 13.0 keeps a register count that would let 6 CTAs of 192 threads
  // run per SM (56 registers) and spills 4-8 bytes to stay there, although
  // Tensor Memory and shared memory admit one CTA (at most two) per SM:
  // the forced direct-store CTA pair on 8 and the 3-stage persistent K = 96
  // kernel with the TMA store on 20 of 160 swept shapes
  // (scripts/ptxas-sweep.py; docs/Blackwell.md section 8).
  KernelOptions options;
  options.blockSize = plan.threads();
  options.minBlocksPerMultiprocessor =
      residentCTAsPerMultiprocessor(plan, *constants);
  gpu::GPUFuncOp kernel =
      getOrCreateKernel(module, name, argTypes, options,
                        [&](OpBuilder &b, Location loc, ValueRange args) {
                          GemmPipelineEmitter e(b, loc, plan, args);
                          Tcgen05Kernel{e, b, loc, *constants, Value()}.emit();
                        });
  // The pair is a compile-time cluster (.reqnctapercluster 2, 1, 1): a
  // plain launch of a grid of whole clusters runs it.
  if (plan.clusterM > 1)
    kernel->setAttr(NVVM::NVVMDialect::getClusterDimAttrName(),
                    DenseI32ArrayAttr::get(module.getContext(),
                                           {int32_t(plan.clusterM), 1, 1}));
  return kernel;
}
