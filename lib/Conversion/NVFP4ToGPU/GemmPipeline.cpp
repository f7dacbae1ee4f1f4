//===- GemmPipeline.cpp - the shared skeleton of tensor-core GEMMs --------===//
//
// Part of the nvfp4 project.
//
//===----------------------------------------------------------------------===//

#include "GemmPipeline.h"
#include "KernelBuilder.h"
#include "KernelUtils.h"
#include "nvfp4/Numerics/Gemm.h"
#include "nvfp4/Target/Tcgen05Encoding.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "llvm/Support/MathExtras.h"

using namespace mlir;
using namespace mlir::nvfp4;
using namespace mlir::nvfp4::kernels;

namespace {
constexpr unsigned kGeneric = 0, kGlobal = 1, kShared = 3, kSharedCluster = 7;
} // namespace

//===----------------------------------------------------------------------===//
// The plan
//===----------------------------------------------------------------------===//

std::string kernels::tensorCoreGemmUnsupportedReason(
    const ::nvfp4::target::ChipInfo &chip, BlockScaledTensorType lhs,
    BlockScaledTensorType rhs) {
  bool emulated =
      chip.has(::nvfp4::target::Instruction::MmaSyncBF16) &&
      chip.scaleSource == ::nvfp4::target::MmaScaleSource::Emulated;
  bool tcgen05 =
      chip.has(::nvfp4::target::Instruction::Tcgen05BlockScaleMma);
  bool mmaBlockScale =
      chip.has(::nvfp4::target::Instruction::MmaSyncBlockScale);
  if (!emulated && !tcgen05 && !mmaBlockScale)
    return "the tensor-core GEMM for " + std::string(chip.name) +
           " is not implemented yet";
  if (!chip.has(::nvfp4::target::Instruction::Tma))
    return std::string(chip.name) + " has no TMA (cp.async.bulk.tensor)";
  if (lhs.getCols() % kGemmTileK != 0)
    return "K = " + std::to_string(lhs.getCols()) +
           " is not a multiple of " + std::to_string(kGemmTileK) +
           " (one K step of the tensor-core pipeline)";
  // cuTensorMapEncodeTiled takes dimensions up to 2^32.
  for (BlockScaledTensorType t : {lhs, rhs})
    if (product(t.getBatchShape()) > (int64_t(1) << 32) ||
        t.getRows() > (int64_t(1) << 32))
      return "a dimension exceeds the 2^32 elements of a TMA tensor map";
  return "";
}

GemmSchedule kernels::chooseGemmSchedule(
    const ::nvfp4::target::ChipInfo &chip, BlockScaledTensorType lhs,
    BlockScaledTensorType rhs) {
  GemmSchedule schedule;
  schedule.tileM = chip.gemmTile.m;
  schedule.tileN = chip.gemmTile.n;
  schedule.tileK = chip.gemmTile.k;
  schedule.stages = chip.gemmTile.stages;
  if (chip.has(::nvfp4::target::Instruction::Tcgen05BlockScaleMma))
    return chooseTcgen05Schedule(chip, lhs, rhs, schedule);
  if (chip.has(::nvfp4::target::Instruction::MmaSyncBlockScale))
    return chooseMmaBlockScaleSchedule(chip, lhs, rhs, schedule);
  if (chip.scaleSource != ::nvfp4::target::MmaScaleSource::Emulated ||
      !chip.multiprocessors)
    return schedule;
  // sm_90a, measured on the H200 (bench/run_gemm_bench.py, bench/RESULTS.md,
  // 2026-12-01): where 128 x 256 tiles fill every SM at least once, the
  // route -- decode kernels into F16 scratch, then the persistent wgmma
  // pipeline fed by TMA (DecodeWgmmaMatmul.cpp, 128x256x256_s0_d4w0_p16) --
  // is the fastest schedule: 1.04-1.18x "our dequantize kernels + cuBLAS"
  // on the large shapes, against 0.74-0.86x for the decoder-warpgroup
  // kernel (128x256x256_s2_d2w1_p16) and 0.58-0.68x for the
  // consumers-decode kernel. With fewer tiles (decode-like M) the
  // consumers-decode kernel's 128 x 128 tiles spread over more SMs and it
  // writes no scratch: 0.052 vs 0.072 ms at 128 x 4096 x 4096 -- and split
  // over K (below) it fills them all. C leaves the route through the
  // TMA-store epilogue (_ts): interleaved with the direct stores in one run
  // (bench/alternate_gemm_programs.py, 8 rounds, 2026-12-01 session 8) it
  // was 1.053x / 1.089x / 1.040x faster at 8192^3, 16384x4096x4096 and
  // 16384x14336x4096, faster in 8/8, 8/8 and 6/8 rounds. Where C's rows
  // are not a multiple of 16 bytes planGemm drops it again.
  GemmSchedule route;
  route.tileM = 128;
  route.tileN = 256;
  route.stages = 0;
  route.decodedStages = 4;
  route.decoderWarpgroups = 0;
  route.persistent = true;
  route.rasterGroup = 16;
  route.tmaStore = true;
  int64_t batch = product(lhs.getBatchShape());
  int64_t tiles = batch * llvm::divideCeil(lhs.getRows(), route.tileM) *
                  llvm::divideCeil(rhs.getRows(), route.tileN);
  if (tiles >= chip.multiprocessors)
    return route;
  // Decode-like M with B tiles for every SM: the skinny kernel streams B
  // through mma.sync (SkinnyMatmul.cpp). Measured on the H200 at N = K =
  // 4096 (bench/run_decode_bench.py, 2026-12-01): M = 1 6.5 us with A
  // staged in shared memory (6.8 without), M = 16 8.5 us with 16 x 16
  // tiles, M = 32 12.4 us with 16 x 32 tiles (B read twice), against
  // 16.8-17.8 us for split-K; at M = 128 it loses (45 us: B read 8 times).
  int64_t m = lhs.getRows(), n = rhs.getRows(), k = lhs.getCols();
  GemmSchedule skinny;
  // M <= 32: one 32 x 16 tile of A x B per CTA (every B row read and
  // decoded once), not two 16 x 32 ones (each B row read and decoded by
  // two CTAs): interleaved on the H200 at 32 x 4096 x 4096,
  // skinny32x16_w8_e 11.10 us against skinny16x32_w8_pf_e 11.29 (faster
  // in 7 of 8 rounds; 10.67 vs 10.92 in session 9's run).
  skinny.tileM = m <= 8 ? 8 : m <= 16 ? 16 : 32;
  skinny.tileN = 16;
  skinny.skinnyWarps = skinnyGemmWarps(k, 8);
  // The byte decode and the prefetch (session 9): the same result bits
  // with fewer instructions per code, B's first loads before A's. H200,
  // same run: M = 1 5.84 us (skinny8x16_w8_pf_a_s_e) vs 6.56, M = 16 7.82
  // vs 8.49 (bench/RESULTS.md, session 9); at M = 32 the prefetch made no
  // difference (10.84 vs 10.86 us, session 10) and the rule leaves it out.
  skinny.skinnyByteDecode = true;
  skinny.skinnyPrefetch = m <= 16;
  // Staged A where its shared memory fits (M x K x 2 bytes per CTA), and
  // then with 16x16 blocks of B times B's block scales (_s).
  if (m <= 8 && k % 128 == 0) {
    auto fits = [&](const GemmSchedule &candidate) {
      return skinnyGemmUnsupportedReason(
                 makeGemmPlan(chip, candidate, lhs, rhs,
                              Float32Type::get(lhs.getContext())))
          .empty();
    };
    GemmSchedule staged = skinny;
    staged.skinnyStageA = true;
    GemmSchedule scaled = staged;
    scaled.skinnyScaledA = true;
    if (rhs.getBlockRows() == 16 && fits(scaled))
      skinny = scaled;
    else if (fits(staged))
      skinny = staged;
  }
  // M = 1 with A staged, where a warp's K range is 4 chunks: two groups of
  // 2 chunks in flight (_u2) instead of one of 4, so that the prefetch
  // overlaps the second group's loads with the first group's math.
  // Interleaved on the H200 (session 10) at 1 x 4096 x 4096: 5.57 us
  // against 5.93 for skinny8x16_w8_pf_a_s_e and 5.76 against 6.06 in an
  // earlier run (8 of 8 rounds each; 5.48 vs 5.86 in session 9), 6.47
  // against 6.59 with 1x16 blocks of B (_pf_a_e, 8 of 8), 12.34 vs 12.48
  // at 1 x 14336 x 4096 (6 of 8). Where it lost: M = 8 with A not staged
  // (7.27 us against 6.96 for skinny8x16_w8_pf_e, 16x16 B; 8.11 vs 7.83
  // with 1x16), M = 16 (8.86 vs 7.86 us); M = 2..5, where A is staged
  // too, was not measured and keeps the default. Other chunk counts keep
  // it too (the most, up to 4, that divide them: already two groups or
  // more from 8 chunks on).
  if (m == 1 && skinny.skinnyStageA && k / 128 / skinny.skinnyWarps == 4)
    skinny.skinnyChunks = 2;
  int64_t skinnyCTAs = batch * llvm::divideCeil(n, skinny.tileN) *
                       llvm::divideCeil(m, skinny.tileM);
  if (m <= 32 && k % 128 == 0 && skinnyCTAs >= chip.multiprocessors)
    return skinny;
  // Fewer tiles than SMs (decode-like M): split K over enough CTAs to fill
  // the SMs, by the largest divisor of the K steps that does not overshoot,
  // while the FP32 workspace stays small (256 MiB).
  int64_t smallTiles = batch *
                       llvm::divideCeil(lhs.getRows(), schedule.tileM) *
                       llvm::divideCeil(rhs.getRows(), schedule.tileN);
  int64_t kSteps = lhs.getCols() / kGemmTileK;
  int64_t wanted = llvm::divideCeil(chip.multiprocessors, smallTiles);
  int64_t workspacePerSplit = batch * lhs.getRows() * rhs.getRows() * 4;
  for (int64_t splits = std::min(wanted, kSteps); splits > 1; --splits)
    if (kSteps % splits == 0 &&
        splits * workspacePerSplit <= (int64_t(256) << 20)) {
      schedule.splitK = splits;
      break;
    }
  return schedule;
}

std::string GemmSchedule::name() const {
  if (skinny())
    return "skinny" + std::to_string(tileM) + "x" + std::to_string(tileN) +
           "_w" + std::to_string(skinnyWarps) +
           (skinnyChunks ? "_u" + std::to_string(skinnyChunks) : "") +
           (skinnyPrefetch ? "_pf" : "") + (skinnyStageA ? "_a" : "") + (skinnyScaledA ? "_s" : "") +
           (skinnyByteDecode ? "_e" : "");
  std::string text = std::to_string(tileM) + "x" + std::to_string(tileN) +
                     "x" + std::to_string(tileK) + "_s" +
                     std::to_string(stages);
  if (decodedStages)
    text += "_d" + std::to_string(decodedStages) + "w" +
            std::to_string(decoderWarpgroups);
  if (persistent)
    text += "_p" + std::to_string(rasterGroup);
  if (persistent && gridLimit)
    text += "_g" + std::to_string(gridLimit);
  if (clusterM > 1)
    text += "_c" + std::to_string(clusterM);
  if (ctaGroup > 1)
    text += "_cg" + std::to_string(ctaGroup);
  if (splitK > 1)
    text += "_k" + std::to_string(splitK);
  if (mmaK != 64)
    text += "_mk" + std::to_string(mmaK);
  if (tmaStore)
    text += "_ts";
  return text;
}

FailureOr<GemmSchedule> kernels::parseGemmSchedule(StringRef text,
                                                   std::string &message) {
  GemmSchedule schedule;
  StringRef rest = text;
  // A decimal number >= minimum.
  auto number = [&](StringRef &in, int64_t &value, int64_t minimum = 1) {
    size_t digits = in.find_first_not_of("0123456789");
    StringRef head = in.take_front(digits);
    in = in.drop_front(head.size());
    return !head.empty() && !head.getAsInteger(10, value) && value >= minimum;
  };
  auto fail = [&](const Twine &why) -> FailureOr<GemmSchedule> {
    message = ("gemm-schedule '" + text + "': " + why +
               " (expected e.g. 128x256x256_s2_d2w1_p8, 128x128_s4 or skinny16x16_w8)")
                  .str();
    return failure();
  };
  if (rest.consume_front("skinny")) {
    if (!number(rest, schedule.tileM) || !rest.consume_front("x") ||
        !number(rest, schedule.tileN))
      return fail("no tile MxN after skinny");
    if (!rest.consume_front("_w") || !number(rest, schedule.skinnyWarps))
      return fail("the skinny kernel needs its warps _wN");
    if (rest.consume_front("_u") && !number(rest, schedule.skinnyChunks))
      return fail("chunks in flight are _uN with N > 0");
    schedule.skinnyPrefetch = rest.consume_front("_pf");
    schedule.skinnyStageA = rest.consume_front("_a");
    schedule.skinnyScaledA = rest.consume_front("_s");
    schedule.skinnyByteDecode = rest.consume_front("_e");
    if (!rest.empty())
      return fail("unexpected '" + rest + "'");
    return schedule;
  }
  if (!number(rest, schedule.tileM) || !rest.consume_front("x") ||
      !number(rest, schedule.tileN))
    return fail("no tile MxN");
  if (rest.consume_front("x") &&
      (!number(rest, schedule.tileK) ||
       (schedule.tileK != kGemmTileK && schedule.tileK != kGemmTileKHalf)))
    return fail("the K step is " + Twine(kGemmTileK) + " or " +
                Twine(kGemmTileKHalf));
  // _s0: no FP4 ring (the route, _dNw0).
  if (!rest.consume_front("_s") || !number(rest, schedule.stages, 0))
    return fail("no stage count _sN");
  if (rest.consume_front("_d")) {
    if (!number(rest, schedule.decodedStages) || !rest.consume_front("w") ||
        !number(rest, schedule.decoderWarpgroups, 0))
      return fail("decoded stages need _dNwM (stages, decoder warpgroups)");
  }
  if ((schedule.stages == 0) != schedule.decodesSeparately())
    return fail("_s0 (no FP4 ring) goes with _dNw0 (the route), and only "
                "with it");
  if (rest.consume_front("_p")) {
    schedule.persistent = true;
    if (!number(rest, schedule.rasterGroup))
      return fail("persistent needs its raster group _pG");
    if (rest.consume_front("_g") && !number(rest, schedule.gridLimit))
      return fail("a grid limit is _gN with N > 0");
    if (!rest.starts_with("_cg") && rest.consume_front("_c") &&
        !number(rest, schedule.clusterM))
      return fail("a cluster is _cN with N > 0 CTAs");
    if (rest.consume_front("_cg") &&
        (!number(rest, schedule.ctaGroup) || schedule.ctaGroup != 2))
      return fail("tcgen05's CTA pair is _cg2");
  }
  if (rest.consume_front("_k") && !number(rest, schedule.splitK))
    return fail("split-K is _kS with S > 0");
  if (rest.consume_front("_mk") &&
      (!number(rest, schedule.mmaK) || schedule.mmaK != 96))
    return fail("the K = 96 MMA is _mk96");
  schedule.tmaStore = rest.consume_front("_ts");
  if (!rest.empty())
    return fail("unexpected '" + rest + "'");
  return schedule;
}

GemmPlan kernels::makeGemmPlan(const ::nvfp4::target::ChipInfo &chip,
                               const GemmSchedule &schedule,
                               BlockScaledTensorType lhs,
                               BlockScaledTensorType rhs, Type resultElement,
                               Type operandElement) {
  GemmPlan plan;
  static_cast<GemmSchedule &>(plan) = schedule;
  plan.batch = product(lhs.getBatchShape());
  plan.m = lhs.getRows();
  plan.n = rhs.getRows();
  plan.k = lhs.getCols();
  // The decoder kernel has two consumer warpgroups; the others keep the
  // chip's thread count (a producer warp and the consumers).
  plan.consumerWarps =
      schedule.decodedStages ? 8 : chip.gemmTile.threads / 32 - 1;
  plan.maxCTAs = chip.multiprocessors ? chip.multiprocessors : 1;
  if (schedule.gridLimit)
    plan.maxCTAs = std::min<int64_t>(plan.maxCTAs, schedule.gridLimit);
  plan.resultElement = resultElement;
  plan.alphaConstant = ::nvfp4::numerics::gemmAlphaConstant(
      lhs.hasDecodeScale(), rhs.hasDecodeScale());
  plan.chip = &chip;
  // MX operands (both MX: scaled_matmul_c5): one-byte MXFP8 codes, blocks
  // of 32 (docs/Numerics.md section 11).
  if (lhs.isMX()) {
    plan.codeBits = isa<Float4E2M1FNType>(lhs.getElementType()) ? 4 : 8;
    plan.scaleBlockK = lhs.getBlockCols();
  }
  // 16-bit operands: rows of tileK elements and no scales to stage.
  if (operandElement) {
    plan.operandElement = operandElement;
    plan.codeBits = operandElement.getIntOrFloatBitWidth();
  }
  bool dense = plan.denseOperands();
  if (chip.has(::nvfp4::target::Instruction::Tcgen05BlockScaleMma)) {
    // What tcgen05.cp reads, and who releases a stage (Tcgen05Matmul.cpp).
    if (!dense)
      plan.scaleStaging = GemmScaleStaging::Atoms128x4;
    plan.stageRelease = GemmStageRelease::Tcgen05Commit;
  } else if (lhs.isMX()) {
    // sm_120a's MX GEMM (MmaBlockScaleMatmul.cpp): a K step's 4 or 8
    // linear scale bytes a row are no TMA box (16 bytes at least), so the
    // producer lanes re-lay them as 128x4 atoms, as for tcgen05.
    plan.scaleStaging = GemmScaleStaging::Atoms128x4;
  }
  // Code tiles first: each a whole number of swizzle patterns (tile rows
  // are multiples of 8), at offsets that keep the pattern aligned.
  int64_t offset = 0;
  auto place = [&](GemmOperand &op, BlockScaledTensorType type, int64_t rows,
                   int64_t tileRows) {
    op.type = type;
    op.rows = rows;
    op.tileRows = tileRows;
    op.codeTileRows = tileRows;
    if (&op == &plan.b && schedule.ctaGroup > 1)
      op.codeTileRows = tileRows / schedule.ctaGroup;
    op.codesOffset = offset;
    offset = llvm::alignTo(offset + op.codeTileRows * plan.codesRowBytes(),
                           kSwizzleRepeatBytes);
  };
  place(plan.a, lhs, plan.m, plan.tileM);
  place(plan.b, rhs, plan.n, plan.tileN);
  for (GemmOperand *op : {&plan.a, &plan.b}) {
    op->scalesOffset = offset;
    if (dense)
      op->scaleTileBytes = 0;
    else if (op->type.getLayout() == ScaleLayout::Swizzled128x4 ||
             plan.scaleStaging == GemmScaleStaging::Atoms128x4)
      // tileRows / 128 row atoms x 4 (or 2) column atoms of 512 bytes.
      op->scaleTileBytes = op->tileRows / 128 * plan.scaleAtomsPerStep() * 512;
    else
      op->scaleTileBytes = op->scaleTileRows() * kStageScaleRowBytes;
    offset += llvm::alignTo(op->scaleTileBytes, 128);
  }
  // Every stage starts on a swizzle-pattern boundary; the barrier area
  // follows the last stage.
  plan.stageBytes = llvm::alignTo(offset, kSwizzleRepeatBytes);
  plan.barrierBytes = 128;
  // The persistent tcgen05 kernel adds two "accumulator full" and two
  // "accumulator empty" barriers and the TMEM slot after the ring's.
  if (schedule.persistent &&
      chip.has(::nvfp4::target::Instruction::Tcgen05BlockScaleMma))
    plan.barrierBytes = 256;
  return plan;
}

Type kernels::gemmTensorMapType(const GemmPlan &plan, const GemmOperand &op,
                                bool scales) {
  MLIRContext *ctx = op.type.getContext();
  // The box one stage receives, outermost first: [1 batch element, tile
  // rows, one K step's bytes] (the route: one decoded stage's F16 values);
  // its memref type is what lands in shared memory (address space 3).
  bool decoded = plan.decodesSeparately() && !scales;
  // 16-bit operands: a stage's tileK elements of each row.
  bool dense = plan.denseOperands() && !scales;
  // With clusters each CTA loads 1 / clusterM of B's rows (multicast).
  int64_t rows = &op == &plan.b ? op.tileRows / plan.clusterM : op.tileRows;
  SmallVector<int64_t> box = {1, scales ? op.scaleTileRows() : rows,
                              decoded  ? kDecodedK
                              : scales ? kStageScaleRowBytes
                              : dense  ? plan.tileK
                                       : plan.codesRowBytes()};
  Type element = decoded || dense
                     ? (plan.operandElement ? plan.operandElement
                                            : Type(Float16Type::get(ctx)))
                     : Type(IntegerType::get(ctx, 8));
  auto tile = MemRefType::get(box, element, MemRefLayoutAttrInterface(),
                              IntegerAttr::get(IntegerType::get(ctx, 64), 3));
  // Code rows of 64 bytes (tileK = 128) take the 64-byte swizzle, whose
  // span is the row (GemmPipelineEmitter::codesOffset).
  return nvgpu::TensorMapDescriptorType::get(
      ctx, tile,
      scales ? nvgpu::TensorMapSwizzleKind::SWIZZLE_NONE
      : plan.codesRowBytes() == 64 && !decoded
          ? nvgpu::TensorMapSwizzleKind::SWIZZLE_64B
          : nvgpu::TensorMapSwizzleKind::SWIZZLE_128B,
      nvgpu::TensorMapL2PromoKind::L2PROMO_256B,
      nvgpu::TensorMapOOBKind::OOB_ZERO,
      nvgpu::TensorMapInterleaveKind::INTERLEAVE_NONE);
}

SmallVector<Type> kernels::gemmKernelArgTypes(const GemmPlan &plan,
                                              TypeRange bufferTypes) {
  SmallVector<Type> types(bufferTypes);
  types[0] = gemmTensorMapType(plan, plan.a, /*scales=*/false);
  types[3] = gemmTensorMapType(plan, plan.b, /*scales=*/false);
  if (plan.scalesByTensorMap(plan.a))
    types[1] = gemmTensorMapType(plan, plan.a, /*scales=*/true);
  if (plan.scalesByTensorMap(plan.b))
    types[4] = gemmTensorMapType(plan, plan.b, /*scales=*/true);
  if (plan.tmaStore && !plan.quantizeOutput)
    types[7] = gemmOutputTensorMapType(plan);
  return types;
}

Type kernels::gemmOutputTensorMapType(const GemmPlan &plan) {
  MLIRContext *ctx = plan.resultElement.getContext();
  int64_t columns =
      kTmaStoreRowBytes / (plan.resultElement.getIntOrFloatBitWidth() / 8);
  auto box = MemRefType::get({1, kTmaStoreRows, columns}, plan.resultElement,
                             MemRefLayoutAttrInterface(),
                             IntegerAttr::get(IntegerType::get(ctx, 64), 3));
  // The 128-byte swizzle makes the staging writes of a fragment
  // conflict-free (GemmPipelineEmitter::storeMmaFragmentByTensorCopy); a
  // store has no fill, the OOB kind only completes the type.
  return nvgpu::TensorMapDescriptorType::get(
      ctx, box, nvgpu::TensorMapSwizzleKind::SWIZZLE_128B,
      nvgpu::TensorMapL2PromoKind::L2PROMO_NONE,
      nvgpu::TensorMapOOBKind::OOB_ZERO,
      nvgpu::TensorMapInterleaveKind::INTERLEAVE_NONE);
}

Value kernels::createTensorMap(OpBuilder &b, Location loc, Value buffer,
                               int64_t batch, int64_t rowElements,
                               Type mapType) {
  auto flat = cast<MemRefType>(buffer.getType());
  auto map = cast<nvgpu::TensorMapDescriptorType>(mapType);
  int64_t rows = flat.getNumElements() / batch / rowElements;
  Value view = memref::ExpandShapeOp::create(
      b, loc,
      MemRefType::get({batch, rows, rowElements}, flat.getElementType()),
      flatten(b, loc, buffer), ArrayRef<ReassociationIndices>{{0, 1, 2}});
  Value unranked = memref::CastOp::create(
      b, loc, UnrankedMemRefType::get(flat.getElementType(), 0), view);
  SmallVector<Value> box;
  for (int64_t extent : map.getTensor().getShape())
    box.push_back(indexConstant(b, loc, extent));
  return nvgpu::TmaCreateDescriptorOp::create(b, loc, mapType, unranked, box);
}

std::string kernels::gemmTmaStoreUnsupportedReason(const GemmPlan &plan) {
  if (!plan.tmaStore || plan.quantizeOutput)
    return "";
  int64_t elementBytes = plan.resultElement.getIntOrFloatBitWidth() / 8;
  // cuTensorMapEncodeTiled: every global stride is a multiple of 16 bytes.
  if (plan.n * elementBytes % 16 != 0)
    return "the TMA store (_ts) needs rows of C of a multiple of 16 bytes "
           "(N = " +
           std::to_string(plan.n) + " x " + std::to_string(elementBytes) +
           " bytes)";
  if (plan.tileN * elementBytes % kTmaStoreRowBytes != 0 ||
      plan.tileN * elementBytes / kTmaStoreRowBytes % kTmaStoreBuffers != 0)
    return "the TMA store (_ts) needs an even number of 128-byte column "
           "chunks per tile";
  return "";
}

gpu::GPUFuncOp kernels::buildProducerConsumerKernel(
    ModuleOp module, const GemmPlan &plan, TypeRange argTypes, StringRef name,
    function_ref<void(GemmPipelineEmitter &)> consumer) {
  return getOrCreateKernel(
      module, name, argTypes, plan.threads(),
      [&](OpBuilder &b, Location loc, ValueRange args) {
        GemmPipelineEmitter e(b, loc, plan, args);
        e.initBarriers();
        // Warp specialization: the last warp produces, the others consume.
        auto roles = scf::IfOp::create(
            b, loc, e.eq(e.warpId(), plan.producerWarp()), true);
        OpBuilder::InsertionGuard guard(b);
        b.setInsertionPointToStart(roles.thenBlock());
        e.emitProducer();
        b.setInsertionPointToStart(roles.elseBlock());
        consumer(e);
      });
}

std::array<int64_t, 3> GemmPlan::grid() const {
  if (skinny())
    return {(n + tileN - 1) / tileN, (m + tileM - 1) / tileM, batch};
  if (persistent) // whole clusters
    return {std::min(clusterTiles(), maxCTAs / clusterM) * clusterM, 1, 1};
  return {(n + tileN - 1) / tileN, (m + tileM - 1) / tileM, batch * splitK};
}

//===----------------------------------------------------------------------===//
// Emitter helpers
//===----------------------------------------------------------------------===//

static Value toPointer(OpBuilder &b, Location loc, Value memref,
                       unsigned addressSpace) {
  Value index = memref::ExtractAlignedPointerAsIndexOp::create(b, loc, memref);
  Value bits = arith::IndexCastOp::create(b, loc, b.getI64Type(), index);
  return LLVM::IntToPtrOp::create(
      b, loc, LLVM::LLVMPointerType::get(b.getContext(), addressSpace), bits);
}

/// A kernel argument as a pointer: a buffer's global address, or the
/// generic address of a tensor map (its descriptor type becomes !llvm.ptr
/// when the kernel is lowered to NVVM).
static Value argumentPointer(OpBuilder &b, Location loc, Value arg) {
  if (isa<nvgpu::TensorMapDescriptorType>(arg.getType()))
    return UnrealizedConversionCastOp::create(
               b, loc, LLVM::LLVMPointerType::get(b.getContext(), kGeneric),
               arg)
        .getResult(0);
  return toPointer(b, loc, arg, kGlobal);
}

static Value toI32(OpBuilder &b, Location loc, Value index) {
  return arith::IndexCastUIOp::create(b, loc, b.getI32Type(), index);
}

GemmPipelineEmitter::GemmPipelineEmitter(OpBuilder &b, Location loc,
                                         const GemmPlan &plan,
                                         ValueRange args)
    : b(b), loc(loc), plan(plan), args(args) {
  tid = toI32(b, loc, gpu::ThreadIdOp::create(b, loc, gpu::Dimension::x));
  warp = lshr(tid, 5);
  lane = andi(tid, 31);
  Value tileN = toI32(b, loc, gpu::BlockIdOp::create(b, loc, gpu::Dimension::x));
  Value tileM = toI32(b, loc, gpu::BlockIdOp::create(b, loc, gpu::Dimension::y));
  // blockIdx.z = batch * splitK + split.
  Value z = toI32(b, loc, gpu::BlockIdOp::create(b, loc, gpu::Dimension::z));
  outputBatch = batchIdx = z;
  kBegin = c32(0);
  if (plan.splitK > 1) {
    batchIdx = arith::DivUIOp::create(b, loc, z, c32(plan.splitK));
    kBegin = mul(arith::RemUIOp::create(b, loc, z, c32(plan.splitK)),
                 c32(plan.kStepsPerCTA()));
  }
  rowA0 = mul(tileM, c32(plan.tileM));
  rowB0 = mul(tileN, c32(plan.tileN));
  auto smemType = MemRefType::get(
      {ShapedType::kDynamic}, b.getI8Type(), MemRefLayoutAttrInterface(),
      gpu::AddressSpaceAttr::get(b.getContext(),
                                 gpu::AddressSpace::Workgroup));
  Value raw = toPointer(
      b, loc, gpu::DynamicSharedMemoryOp::create(b, loc, smemType), kShared);
  // Round the base up to a swizzle pattern: the TMA swizzles by address
  // bits, the consumers by tile row (the plan requested the slack).
  Value address = LLVM::PtrToIntOp::create(b, loc, b.getI32Type(), raw);
  Value pad = andi(arith::SubIOp::create(b, loc, c32(0), address),
                   kSwizzleRepeatBytes - 1);
  smem = offsetPtr(raw, pad);
  codesA = argumentPointer(b, loc, args[0]);
  scalesA = argumentPointer(b, loc, args[1]);
  codesB = argumentPointer(b, loc, args[3]);
  scalesB = argumentPointer(b, loc, args[4]);
  if (plan.outputAmax) {
    // At the kernel's entry, so that it is a static alloca SROA promotes.
    storedAmax =
        memref::AllocaOp::create(b, loc, MemRefType::get({1}, b.getF32Type()));
    memref::StoreOp::create(
        b, loc, arith::ConstantOp::create(b, loc, b.getF32FloatAttr(0.0f)),
        storedAmax, ValueRange{indexConstant(b, loc, 0)});
  }
}

Value GemmPipelineEmitter::c32(int64_t v) {
  return arith::ConstantIntOp::create(b, loc, b.getI32Type(), v);
}
Value GemmPipelineEmitter::add(Value x, Value y) {
  return arith::AddIOp::create(b, loc, x, y);
}
Value GemmPipelineEmitter::mul(Value x, Value y) {
  return arith::MulIOp::create(b, loc, x, y);
}
Value GemmPipelineEmitter::shl(Value x, int64_t bits) {
  return arith::ShLIOp::create(b, loc, x, c32(bits));
}
Value GemmPipelineEmitter::lshr(Value x, int64_t bits) {
  return arith::ShRUIOp::create(b, loc, x, c32(bits));
}
Value GemmPipelineEmitter::andi(Value x, int64_t mask) {
  return arith::AndIOp::create(b, loc, x, c32(mask));
}
Value GemmPipelineEmitter::ult(Value x, Value y) {
  return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, x, y);
}
Value GemmPipelineEmitter::eq(Value x, int64_t y) {
  return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, x, c32(y));
}
Value GemmPipelineEmitter::offsetPtr(Value base, Value offset) {
  return LLVM::GEPOp::create(b, loc, base.getType(), b.getI8Type(), base,
                             ValueRange{offset});
}

/// 64-bit byte offset into a global buffer: sizes reach 2^47 elements.
static Value offset64(OpBuilder &b, Location loc, Value rowIndex,
                      int64_t rowBytes, Value extra) {
  Value row = arith::ExtUIOp::create(b, loc, b.getI64Type(), rowIndex);
  Value bytes = arith::MulIOp::create(
      b, loc, row, arith::ConstantIntOp::create(b, loc, b.getI64Type(), rowBytes));
  return arith::AddIOp::create(
      b, loc, bytes, arith::ExtUIOp::create(b, loc, b.getI64Type(), extra));
}

//===----------------------------------------------------------------------===//
// Barriers
//===----------------------------------------------------------------------===//

Value GemmPipelineEmitter::stagePtr(Value stage) {
  return offsetPtr(smem, mul(stage, c32(plan.stageBytes)));
}
Value GemmPipelineEmitter::fullBarrier(Value stage) {
  return offsetPtr(sharedPtr(0), mul(stage, c32(8)));
}
Value GemmPipelineEmitter::emptyBarrier(Value stage) {
  return offsetPtr(sharedPtr(8 * plan.stages), mul(stage, c32(8)));
}

void GemmPipelineEmitter::initBarriers() {
  auto ifFirst = scf::IfOp::create(b, loc, eq(tid, 0), false);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(ifFirst.thenBlock());
    // With cta_group::2 the leader's "full" also counts the peer's
    // forwarded arrival (emitPairForwarder).
    Value fullCount = c32(plan.fullArrivals());
    if (plan.ctaGroup > 1)
      fullCount =
          arith::SelectOp::create(b, loc, eq(clusterRank(), 0),
                                  c32(plan.fullArrivals() + 1), fullCount);
    for (int64_t s = 0; s < plan.stages; ++s) {
      // One arrival per phase on "full" (the producer's expect_tx); every
      // consumer thread arrives on "empty".
      NVVM::MBarrierInitOp::create(b, loc, fullBarrier(c32(s)), fullCount,
                                   Value());
      NVVM::MBarrierInitOp::create(b, loc, emptyBarrier(c32(s)),
                                   c32(plan.emptyArrivals()), Value());
    }
    // Make the initialized barriers visible to the async proxy (the bulk
    // copies complete on them).
    NVVM::FenceProxyOp::create(
        b, loc, NVVM::ProxyKind::async_shared,
        NVVM::SharedSpaceAttr::get(b.getContext(), NVVM::SharedSpace::shared_cta));
  }
  NVVM::Barrier0Op::create(b, loc);
}

static Value parityOf(GemmPipelineEmitter &e, Value kStep) {
  return e.andi(arith::DivUIOp::create(e.b, e.loc, kStep,
                                       e.c32(e.plan.stages)),
                1);
}

static Value stageOf(GemmPipelineEmitter &e, Value kStep) {
  return arith::RemUIOp::create(e.b, e.loc, kStep, e.c32(e.plan.stages));
}

void GemmPipelineEmitter::waitFull(Value kStep) {
  NVVM::MBarrierTryWaitParityOp::create(b, loc, fullBarrier(stageOf(*this, kStep)),
                                        parityOf(*this, kStep), c32(0));
}

void GemmPipelineEmitter::releaseStage(Value kStep) {
  NVVM::MBarrierArriveOp::create(b, loc, Type(),
                                 emptyBarrier(stageOf(*this, kStep)), Value());
}

//===----------------------------------------------------------------------===//
// The tile scheduler
//===----------------------------------------------------------------------===//

/// The scheduler's index of this CTA and their count: CTAs, or clusters
/// (blockIdx.x / clusterM: a cluster's CTAs are consecutive in x).
static std::pair<Value, Value> schedulerIndex(GemmPipelineEmitter &e) {
  OpBuilder &b = e.b;
  Location loc = e.loc;
  Value cta = toI32(b, loc, gpu::BlockIdOp::create(b, loc, gpu::Dimension::x));
  Value ctas = toI32(b, loc, gpu::GridDimOp::create(b, loc, gpu::Dimension::x));
  if (e.plan.clusterM == 1)
    return {cta, ctas};
  return {arith::DivUIOp::create(b, loc, cta, e.c32(e.plan.clusterM)),
          arith::DivUIOp::create(b, loc, ctas, e.c32(e.plan.clusterM))};
}

Value GemmPipelineEmitter::tilesOfThisCTA() {
  auto [cta, ctas] = schedulerIndex(*this);
  // ceil((tiles - cta) / ctas); the grid never exceeds the tiles.
  Value left = arith::SubIOp::create(b, loc, c32(plan.clusterTiles()), cta);
  return arith::DivUIOp::create(
      b, loc, add(left, arith::SubIOp::create(b, loc, ctas, c32(1))), ctas);
}

Value GemmPipelineEmitter::linearTileOf(Value i) {
  auto [cta, ctas] = schedulerIndex(*this);
  return add(cta, mul(i, ctas));
}

Value GemmPipelineEmitter::clusterRank() {
  return NVVM::ClusterId::create(b, loc, b.getI32Type());
}

Value GemmPipelineEmitter::peerBarrier(Value barrier, Value rank) {
  return NVVM::MapaOp::create(
      b, loc, LLVM::LLVMPointerType::get(b.getContext(), kSharedCluster),
      barrier, rank);
}

void GemmPipelineEmitter::clusterSync() {
  NVVM::ClusterArriveOp::create(b, loc, b.getUnitAttr());
  NVVM::ClusterWaitOp::create(b, loc, b.getUnitAttr());
}

GemmPipelineEmitter::TileCoords
GemmPipelineEmitter::tileCoords(Value linearTile) {
  // Within a batch element, tiles come in groups of `group` M tiles x all
  // N tiles; inside a group they walk down M first:
  //   group = t / (group * nTiles), first = group * G,
  //   rows = min(mTiles - first, G),
  //   mTile = first + (t % (G * nTiles)) % rows,
  //   nTile = (t % (G * nTiles)) / rows.
  // With clusters the walk is over groups of clusterM M tiles; the CTA of
  // rank r takes tile r of its group.
  int64_t mTiles = (plan.m + plan.tileM - 1) / plan.tileM;
  mTiles = (mTiles + plan.clusterM - 1) / plan.clusterM;
  int64_t nTiles = (plan.n + plan.tileN - 1) / plan.tileN;
  int64_t group = std::min(plan.rasterGroup, mTiles);
  auto udiv = [&](Value x, Value y) {
    return arith::DivUIOp::create(b, loc, x, y).getResult();
  };
  auto urem = [&](Value x, Value y) {
    return arith::RemUIOp::create(b, loc, x, y).getResult();
  };
  TileCoords coords;
  Value perBatch = c32(mTiles * nTiles);
  coords.batch = udiv(linearTile, perBatch);
  Value t = urem(linearTile, perBatch);
  Value groupTiles = c32(group * nTiles);
  Value first = mul(udiv(t, groupTiles), c32(group));
  Value rows = arith::MinUIOp::create(
      b, loc, arith::SubIOp::create(b, loc, c32(mTiles), first), c32(group));
  Value inGroup = urem(t, groupTiles);
  Value mTile = add(first, urem(inGroup, rows));
  if (plan.clusterM > 1)
    mTile = add(mul(mTile, c32(plan.clusterM)), clusterRank());
  coords.rowA = mul(mTile, c32(plan.tileM));
  coords.rowB = mul(udiv(inGroup, rows), c32(plan.tileN));
  return coords;
}

//===----------------------------------------------------------------------===//
// The producer
//===----------------------------------------------------------------------===//

Value GemmPipelineEmitter::validRows(const GemmOperand &op, Value tileRow0) {
  // min(tileRows, max(rows - tileRow0, 0)): the second CTA of a last
  // cluster may start past the edge.
  Value left = arith::MaxSIOp::create(
      b, loc, arith::SubIOp::create(b, loc, c32(op.rows), tileRow0), c32(0));
  return arith::MinUIOp::create(b, loc, left, c32(op.tileRows));
}

int64_t GemmPipelineEmitter::txBytes(const GemmOperand &op, bool oddStep) {
  // A tensor copy delivers its whole box, rows past the edge as zeros, so
  // the count does not depend on the tile's position.
  int64_t codes = op.codeTileRows * plan.codesRowBytes();
  if (op.type.getLayout() == ScaleLayout::Swizzled128x4)
    return codes + op.scaleTileBytes;
  if (plan.scalesByTensorMap(op))
    return codes + (plan.pairsScaleSteps() && oddStep
                        ? 0
                        : op.scaleTileRows() * kStageScaleRowBytes);
  return codes; // re-laid by the producer lanes, not copied
}

/// The shared::cluster forms of the copies exist since PTX 8.0 (sm_90); a
/// CTA's own shared memory is part of its cluster's window.
static Value clusterPtr(OpBuilder &b, Location loc, Value sharedPtr) {
  return LLVM::AddrSpaceCastOp::create(
      b, loc, LLVM::LLVMPointerType::get(b.getContext(), kSharedCluster),
      sharedPtr);
}

void GemmPipelineEmitter::tensorCopy(Value map, Value destination,
                                     ValueRange coordinates, Value barrier) {
  NVVM::CpAsyncBulkTensorGlobalToSharedClusterOp::create(
      b, loc, clusterPtr(b, loc, destination), map, coordinates, barrier,
      ValueRange(), Value(), Value(), NVVM::TMALoadMode::TILE, false,
      NVVM::CTAGroupKindAttr(), Value());
}

void GemmPipelineEmitter::tensorCopyMulticast(Value map, Value destination,
                                              ValueRange coordinates,
                                              Value barrier) {
  Value mask = arith::ConstantIntOp::create(b, loc, b.getI16Type(),
                                            (1 << plan.clusterM) - 1);
  NVVM::CpAsyncBulkTensorGlobalToSharedClusterOp::create(
      b, loc, clusterPtr(b, loc, destination), map, coordinates, barrier,
      ValueRange(), mask, Value(), NVVM::TMALoadMode::TILE, false,
      NVVM::CTAGroupKindAttr(), Value());
}

void GemmPipelineEmitter::copyOperand(const GemmOperand &op, Value codes,
                                      Value scales, Value batch,
                                      Value tileRow0, Value kStep,
                                      Value stageBase, Value barrier) {
  auto copy = [&](Value map, int64_t offset, ValueRange coordinates) {
    tensorCopy(map, offsetPtr(stageBase, offset), coordinates, barrier);
  };
  // Codes: the box [1, tileRows, 128 (or 64) bytes] at (batch, tile row,
  // K step); coordinates innermost first.
  copy(codes, op.codesOffset,
       {mul(kStep, c32(plan.codesMapStep())), tileRow0, batch});
  if (plan.scalesByTensorMap(op)) {
    // Linear scales: the box [1, scale rows of the tile, 16 bytes] from
    // the step's first scale byte; with paired steps only on even steps,
    // its second 8 bytes being the odd step's.
    Value scaleRow0 =
        op.type.getBlockRows() == 16 ? lshr(tileRow0, 4) : tileRow0;
    auto copyScales = [&] {
      copy(scales, op.scalesOffset,
           {mul(kStep, c32(plan.scaleStepBytes())), scaleRow0, batch});
    };
    if (plan.pairsScaleSteps()) {
      auto ifEven = scf::IfOp::create(b, loc, eq(andi(kStep, 1), 0), false);
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(ifEven.thenBlock());
      copyScales();
    } else {
      copyScales();
    }
  }
  if (op.type.getLayout() == ScaleLayout::Swizzled128x4)
    copyScaleAtoms(op, scales, batch, tileRow0, kStep, stageBase, barrier);
}

void GemmPipelineEmitter::copyScaleAtoms(const GemmOperand &op, Value scales,
                                         Value batch, Value tileRow0,
                                         Value kStep, Value stageBase,
                                         Value barrier) {
  {
    // The tile's rows are whole 128-row atoms and a K step is 4 (or 2)
    // atoms of 4 column blocks: tileRows / 128 contiguous runs of 2 (or 1)
    // KiB (the layout pads rows to 128). An atom row past the matrix (the second
    // CTA of a last cluster, the second half of a 256-row tile) reads the
    // last one instead, so no copy reads past the buffer; its scales feed
    // only outputs the epilogue does not store.
    int64_t paddedRows = llvm::alignTo(op.rows, 128);
    int64_t atomsPerRow = llvm::alignTo(plan.k / plan.scaleBlockK, 4) / 4;
    int64_t runBytes = plan.scaleAtomsPerStep() * 512;
    for (int64_t a = 0; a < op.tileRows / 128; ++a) {
      Value atomRow = arith::MinUIOp::create(
          b, loc, add(lshr(tileRow0, 7), c32(a)), c32(paddedRows / 128 - 1));
      Value rowInBatch = add(mul(batch, c32(paddedRows / 128)), atomRow);
      Value src = LLVM::GEPOp::create(
          b, loc, scales.getType(), b.getI8Type(), scales,
          ValueRange{offset64(b, loc, rowInBatch, atomsPerRow * 512,
                              mul(kStep, c32(runBytes)))});
      NVVM::CpAsyncBulkGlobalToSharedClusterOp::create(
          b, loc,
          clusterPtr(b, loc,
                     offsetPtr(stageBase, op.scalesOffset + a * runBytes)),
          src, barrier, c32(runBytes), Value(), Value());
    }
  }
}

void GemmPipelineEmitter::acquireTensorMaps() {
  // The tensor maps live in global memory, written by the runtime before
  // the launch through the generic proxy; the TMA reads them through the
  // tensormap proxy (PTX ISA 9.7.13.4, fence.proxy.tensormap::generic).
  for (Value map : {codesA, scalesA, codesB, scalesB})
    if (map.getType() == LLVM::LLVMPointerType::get(b.getContext(), kGeneric))
      NVVM::FenceProxyAcquireOp::create(b, loc, NVVM::MemScopeKind::SYS, map,
                                        c32(128));
}

void GemmPipelineEmitter::issueStepCopies(Value stage, Value kStep,
                                          Value batch, Value tileRowA,
                                          Value tileRowB) {
  // Announce the bytes this phase will receive and arrive; the phase
  // completes when they have all landed.
  Value barrier = fullBarrier(stage);
  Value tx = c32(txBytes(plan.a) + txBytes(plan.b));
  if (plan.pairsScaleSteps())
    tx = arith::SelectOp::create(
        b, loc, eq(andi(kStep, 1), 0), tx,
        c32(txBytes(plan.a, /*oddStep=*/true) +
            txBytes(plan.b, /*oddStep=*/true)));
  NVVM::MBarrierArriveExpectTxOp::create(
      b, loc, Type(), barrier, tx, NVVM::MemScopeKind::CTA, false, Value());
  Value stageBase = stagePtr(stage);
  copyOperand(plan.a, codesA, scalesA, batch, tileRowA, kStep, stageBase,
              barrier);
  copyOperand(plan.b, codesB, scalesB, batch, tileRowB, kStep, stageBase,
              barrier);
}

void GemmPipelineEmitter::emitProducer() {
  auto ifLane0 = scf::IfOp::create(b, loc, eq(lane, 0), false);
  {
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPointToStart(ifLane0.thenBlock());
    acquireTensorMaps();
  }

  auto loop =
      scf::ForOp::create(b, loc, c32(0), c32(plan.kStepsPerCTA()), c32(1));
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(loop.getBody());
  // The ring counts this CTA's steps; the copies take the global K step.
  Value step = loop.getInductionVar();
  Value kStep = add(kBegin, step);
  Value stage = stageOf(*this, step);
  // Wait until the consumers released the stage's previous contents; in the
  // first round the "previous phase" (parity 1) counts as complete.
  NVVM::MBarrierTryWaitParityOp::create(
      b, loc, emptyBarrier(stage),
      arith::XOrIOp::create(b, loc, parityOf(*this, step), c32(1)), c32(0));
  auto ifLane0Copies = scf::IfOp::create(b, loc, eq(lane, 0), false);
  {
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPointToStart(ifLane0Copies.thenBlock());
    issueStepCopies(stage, kStep, batchIdx, rowA0, rowB0);
  }
  if (plan.fullArrivals() == 2)
    relayScales(stage, kStep, batchIdx, rowA0, rowB0);
}

void GemmPipelineEmitter::relayScales(Value stage, Value kStep, Value batch,
                                      Value tileRowA, Value tileRowB) {
  // Linear scales re-laid as 128x4 atoms by the producer lanes with
  // st.shared (generic proxy) are read by tcgen05.cp (async proxy): each
  // lane fences its own stores, the warp syncs, and lane 0 arrives for
  // all of them (PTX ISA 9.7.16.6, 9.7.13.15.18).
  Value stageBase = stagePtr(stage);
  for (auto [op, scales, row0] : {std::tuple(&plan.a, scalesA, tileRowA),
                                  std::tuple(&plan.b, scalesB, tileRowB)})
    if (op->type.getLayout() == ScaleLayout::Linear)
      stageScalesAsAtoms(*op, scales, batch, row0, kStep, stageBase);
  NVVM::FenceProxyOp::create(
      b, loc, NVVM::ProxyKind::async_shared,
      NVVM::SharedSpaceAttr::get(b.getContext(),
                                 NVVM::SharedSpace::shared_cta));
  NVVM::SyncWarpOp::create(b, loc, c32(-1));
  auto ifLane0Done = scf::IfOp::create(b, loc, eq(lane, 0), false);
  OpBuilder::InsertionGuard g(b);
  b.setInsertionPointToStart(ifLane0Done.thenBlock());
  NVVM::MBarrierArriveOp::create(b, loc, Type(), fullBarrier(stage), Value());
}

void GemmPipelineEmitter::emitPersistentProducer() {
  auto ifLane0 = scf::IfOp::create(b, loc, eq(lane, 0), false);
  {
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPointToStart(ifLane0.thenBlock());
    acquireTensorMaps();
  }
  Value steps = mul(tilesOfThisCTA(), c32(plan.kSteps()));
  auto loop = scf::ForOp::create(b, loc, c32(0), steps, c32(1));
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(loop.getBody());
  Value step = loop.getInductionVar();
  Value kStep = arith::RemUIOp::create(b, loc, step, c32(plan.kSteps()));
  TileCoords tile = tileCoords(linearTileOf(
      arith::DivUIOp::create(b, loc, step, c32(plan.kSteps()))));
  Value stage = stageOf(*this, step);
  NVVM::MBarrierTryWaitParityOp::create(
      b, loc, emptyBarrier(stage),
      arith::XOrIOp::create(b, loc, parityOf(*this, step), c32(1)), c32(0));
  auto ifLane0Copies = scf::IfOp::create(b, loc, eq(lane, 0), false);
  {
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPointToStart(ifLane0Copies.thenBlock());
    issueStepCopies(stage, kStep, tile.batch, tile.rowA, tile.rowB);
  }
  if (plan.fullArrivals() == 2)
    relayScales(stage, kStep, tile.batch, tile.rowA, tile.rowB);
}

//===----------------------------------------------------------------------===//
// tcgen05 cta_group::2: the producer of a CTA pair
//===----------------------------------------------------------------------===//

Value GemmPipelineEmitter::leaderBarrier(Value barrier) {
  // mapa gives the leader's copy in the cluster's shared window; the
  // cta_group::2 copy reads its mbarrier operand as such an address.
  // (CUTLASS clears the peer bit, bit 24, of the CTA's own address instead:
  // `and.b32 ..., -16777224` in cutlass_72a.sm_100a.ptx, the same value for
  // a pair at ranks 0 and 1.)
  Value cluster = peerBarrier(barrier, c32(0));
  Value bits = LLVM::PtrToIntOp::create(b, loc, b.getI32Type(), cluster);
  return LLVM::IntToPtrOp::create(
      b, loc, LLVM::LLVMPointerType::get(b.getContext(), kShared), bits);
}

void GemmPipelineEmitter::tensorCopyToLeader(Value map, Value destination,
                                             ValueRange coordinates,
                                             Value leaderFull) {
  NVVM::CpAsyncBulkTensorGlobalToSharedClusterOp::create(
      b, loc, clusterPtr(b, loc, destination), map, coordinates, leaderFull,
      ValueRange(), Value(), Value(), NVVM::TMALoadMode::TILE, false,
      NVVM::CTAGroupKindAttr::get(b.getContext(), NVVM::CTAGroupKind::CTA_2),
      Value());
}

void GemmPipelineEmitter::issuePairStepCopies(Value stage, Value kStep,
                                              Value batch, Value tileRowA,
                                              Value tileRowB) {
  Value rank = clusterRank();
  Value isLeader = eq(rank, 0);
  Value full = fullBarrier(stage);
  Value stageBase = stagePtr(stage);
  // The leader's "full" expects the code bytes of both CTAs (their
  // cta_group::2 copies complete there); each CTA's own "full" expects its
  // scale atoms copied by TMA. The peer's copies may land on the leader's
  // barrier before the leader announces them: the transaction count may go
  // negative, and the phase cannot complete while the leader's arrival is
  // pending.
  int64_t pairCodes =
      2 * (plan.a.codeTileRows + plan.b.codeTileRows) * kCodesRowBytes;
  int64_t ownScales = 0;
  for (const GemmOperand *op : {&plan.a, &plan.b})
    if (op->type.getLayout() == ScaleLayout::Swizzled128x4)
      ownScales += op->scaleTileBytes;
  Value tx = arith::SelectOp::create(
      b, loc, isLeader, c32(pairCodes + ownScales), c32(ownScales));
  NVVM::MBarrierArriveExpectTxOp::create(
      b, loc, Type(), full, tx, NVVM::MemScopeKind::CTA, false, Value());
  Value leaderFull = leaderBarrier(full);
  Value kBytes = mul(kStep, c32(kCodesRowBytes));
  // Codes: A's tile rows of this CTA, and its half of B's rows.
  tensorCopyToLeader(codesA, offsetPtr(stageBase, plan.a.codesOffset),
                     {kBytes, tileRowA, batch}, leaderFull);
  tensorCopyToLeader(
      codesB, offsetPtr(stageBase, plan.b.codesOffset),
      {kBytes, add(tileRowB, mul(rank, c32(plan.b.codeTileRows))), batch},
      leaderFull);
  // Scales by TMA: A's own atoms; B's atom row `rank` (rows rowB + 128
  // rank ..) multicast to both CTAs, so each holds all of B's scale rows
  // (CUTLASS multicasts its B scales within the pair the same way, mask
  // 3 << (rank & 6) in cutlass_72a.sm_100a.ptx).
  if (plan.a.type.getLayout() == ScaleLayout::Swizzled128x4)
    copyScaleAtoms(plan.a, scalesA, batch, tileRowA, kStep, stageBase, full);
  if (plan.b.type.getLayout() == ScaleLayout::Swizzled128x4) {
    int64_t paddedRows = llvm::alignTo(plan.b.rows, 128);
    int64_t atomsPerRow = llvm::alignTo(plan.k / 16, 4) / 4;
    // An atom row past the matrix reads the last one (its scales feed only
    // columns the epilogue does not store).
    Value atomRow = arith::MinUIOp::create(b, loc, add(lshr(tileRowB, 7), rank),
                                           c32(paddedRows / 128 - 1));
    Value rowInBatch = add(mul(batch, c32(paddedRows / 128)), atomRow);
    Value src = LLVM::GEPOp::create(
        b, loc, scalesB.getType(), b.getI8Type(), scalesB,
        ValueRange{offset64(b, loc, rowInBatch, atomsPerRow * 512,
                            mul(kStep, c32(4 * 512)))});
    Value mask = arith::ConstantIntOp::create(b, loc, b.getI16Type(), 3);
    NVVM::CpAsyncBulkGlobalToSharedClusterOp::create(
        b, loc,
        clusterPtr(b, loc,
                   offsetPtr(stageBase, add(c32(plan.b.scalesOffset),
                                            mul(rank, c32(4 * 512))))),
        src, full, c32(4 * 512), mask, Value());
  }
}

void GemmPipelineEmitter::emitPairProducer() {
  auto ifLane0 = scf::IfOp::create(b, loc, eq(lane, 0), false);
  {
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPointToStart(ifLane0.thenBlock());
    acquireTensorMaps();
  }
  Value steps = mul(tilesOfThisCTA(), c32(plan.kSteps()));
  auto loop = scf::ForOp::create(b, loc, c32(0), steps, c32(1));
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(loop.getBody());
  Value step = loop.getInductionVar();
  Value kStep = arith::RemUIOp::create(b, loc, step, c32(plan.kSteps()));
  TileCoords tile = tileCoords(
      linearTileOf(arith::DivUIOp::create(b, loc, step, c32(plan.kSteps()))));
  Value stage = stageOf(*this, step);
  NVVM::MBarrierTryWaitParityOp::create(
      b, loc, emptyBarrier(stage),
      arith::XOrIOp::create(b, loc, parityOf(*this, step), c32(1)), c32(0));
  auto ifLane0Copies = scf::IfOp::create(b, loc, eq(lane, 0), false);
  {
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPointToStart(ifLane0Copies.thenBlock());
    issuePairStepCopies(stage, kStep, tile.batch, tile.rowA, tile.rowB);
  }
  // Linear scales: A's rows of this CTA, all of B's (tileRows = the pair's
  // B tile); the arrival goes to this CTA's "full".
  relayScales(stage, kStep, tile.batch, tile.rowA, tile.rowB);
}

void GemmPipelineEmitter::emitPairForwarder() {
  Value steps = mul(tilesOfThisCTA(), c32(plan.kSteps()));
  auto loop = scf::ForOp::create(b, loc, c32(0), steps, c32(1));
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(loop.getBody());
  Value step = loop.getInductionVar();
  waitFull(step);
  auto ifLane0 = scf::IfOp::create(b, loc, eq(lane, 0), false);
  OpBuilder::InsertionGuard g(b);
  b.setInsertionPointToStart(ifLane0.thenBlock());
  // .release.cluster: the leader's tcgen05.cp reads what this CTA's
  // producer lanes stored (re-laid scales) and what its TMA wrote.
  NVVM::MBarrierArriveOp::create(
      b, loc, Type(), peerBarrier(fullBarrier(stageOf(*this, step)), c32(0)),
      Value(), NVVM::MemScopeKind::CLUSTER);
}

void GemmPipelineEmitter::stageScalesAsAtoms(const GemmOperand &op,
                                             Value scales, Value batch,
                                             Value tileRow0, Value kStep,
                                             Value stageBase) {
  // A K step's linear scale bytes of a row (NVFP4 16, MXFP4 8, MXFP8 4)
  // are 4 bytes for each of the A atoms of the step: lane l takes rows l,
  // l + 32, ... and moves them with one 16- (8-, 4-) byte load and A
  // 4-byte stores to
  //   atom (r / 128, j) at (A (r / 128) + j) * 512, byte
  //   (r % 32) * 16 + ((r % 128) / 32) * 4  (getSm100ScaleAtomOffset).
  // Rows past the matrix edge are not written: their stale scales only
  // feed outputs that the epilogue does not store.
  Value valid = validRows(op, tileRow0);
  int64_t scaleRowBytes = plan.k / plan.scaleBlockK;
  int64_t stepBytes = plan.scaleStepBytes();
  int64_t atoms = plan.scaleAtomsPerStep();
  Value batchRow0 = add(mul(batch, c32(op.rows)), tileRow0);
  auto vec4 = VectorType::get({atoms}, b.getI32Type());
  for (int64_t r0 = 0; r0 < op.tileRows; r0 += 32) {
    Value r = add(lane, c32(r0));
    auto ifValid = scf::IfOp::create(b, loc, ult(r, valid), false);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(ifValid.thenBlock());
    Value row = add(batchRow0, r);
    if (op.type.getBlockRows() == 16)
      row = lshr(row, 4);
    Value src = LLVM::GEPOp::create(
        b, loc, scales.getType(), b.getI8Type(), scales,
        ValueRange{offset64(b, loc, row, scaleRowBytes,
                            mul(kStep, c32(stepBytes)))});
    Value words = LLVM::LoadOp::create(b, loc, vec4, src, stepBytes);
    Value inAtom = add(mul(andi(r, 31), c32(16)),
                       mul(lshr(andi(r, 127), 5), c32(4)));
    Value atomRow = mul(lshr(r, 7), c32(atoms * 512));
    for (int64_t j = 0; j < atoms; ++j) {
      Value word = LLVM::ExtractElementOp::create(
          b, loc, words,
          arith::ConstantIntOp::create(b, loc, b.getI32Type(), j));
      Value offset = add(c32(op.scalesOffset + j * 512), add(atomRow, inAtom));
      LLVM::StoreOp::create(b, loc, word, offsetPtr(stageBase, offset), 4);
    }
  }
}

//===----------------------------------------------------------------------===//
// Scales and the epilogue
//===----------------------------------------------------------------------===//

Value GemmPipelineEmitter::codesOffset(const GemmOperand &op, Value tileRow,
                                       Value byteInRow) {
  // The TMA swizzle XORs address bits 7-9 (128-byte swizzle) or 7-8
  // (64-byte) into the 16-byte chunk bits 4-6 / 4-5
  // (::nvfp4::target::getSwizzledTileOffset): with 128-byte rows chunk c of
  // row r is stored as chunk c ^ (r % 8), with 64-byte rows as c ^ ((r / 2)
  // % 4).
  int64_t rowBytes = plan.codesRowBytes();
  Value pattern = rowBytes == 128 ? andi(tileRow, 7) : andi(lshr(tileRow, 1), 3);
  Value swizzled = arith::XOrIOp::create(b, loc, byteInRow, shl(pattern, 4));
  return add(c32(op.codesOffset),
             add(mul(tileRow, c32(rowBytes)), swizzled));
}

Value GemmPipelineEmitter::scaleOffset(const GemmOperand &op, Value tileRow,
                                       Value block) {
  Value offset;
  if (op.type.getLayout() == ScaleLayout::Swizzled128x4 ||
      plan.scaleStaging == GemmScaleStaging::Atoms128x4) {
    // Atom (tileRow / 128, block / 4), then docs/Numerics.md section 8.
    Value atom = add(mul(lshr(tileRow, 7), c32(plan.scaleAtomsPerStep())),
                     lshr(block, 2));
    Value inAtom = add(add(mul(andi(tileRow, 31), c32(16)),
                           mul(lshr(andi(tileRow, 127), 5), c32(4))),
                       andi(block, 3));
    offset = add(mul(atom, c32(512)), inAtom);
  } else {
    Value row = op.type.getBlockRows() == 16 ? lshr(tileRow, 4) : tileRow;
    offset = add(mul(row, c32(kStageScaleRowBytes)), block);
  }
  return add(c32(op.scalesOffset), offset);
}

Value GemmPipelineEmitter::swizzle128Descriptor(Value address) {
  // LBO is not used by the swizzled K-major mode; the start address (in 16
  // bytes) is the only variable field.
  ::nvfp4::target::SmemDescriptorConfig config;
  config.LeadingDimByteOffset = 16;
  config.StrideDimByteOffset = 8 * 128;
  config.Swizzle = ::nvfp4::target::SmemSwizzle::Bytes128;
  auto constant = ::nvfp4::target::encodeWgmmaSmemDescriptor(config);
  Value start = andi(lshr(address, 4), 0x3FFF);
  Value wide = arith::ExtUIOp::create(b, loc, b.getI64Type(), start);
  return arith::OrIOp::create(
      b, loc, wide,
      arith::ConstantIntOp::create(
          b, loc, b.getI64Type(),
          static_cast<int64_t>(constant.ok() ? constant->Value : 0)));
}

Value GemmPipelineEmitter::epilogueScale() {
  // Split-K partial sums are scaled once, after their sum (the finalize
  // kernel).
  if (plan.splitK > 1)
    return arith::ConstantOp::create(b, loc, b.getF32FloatAttr(1.0f));
  // 16-bit operands and MX operands (docs/Numerics.md section 11) carry no
  // tensor scale.
  if (plan.operandElement || plan.scaleBlockK == kMXBlockSize)
    return args[6];
  auto amax = [&](Value buffer) {
    return loadAmax(b, loc, buffer);
  };
  // Same expression and order as the SIMT kernel and the reference.
  Value alpha = arith::MulFOp::create(b, loc, args[6], amax(args[2]));
  alpha = arith::MulFOp::create(b, loc, alpha, amax(args[5]));
  return arith::MulFOp::create(
      b, loc, alpha,
      arith::ConstantOp::create(b, loc,
                                b.getF32FloatAttr(plan.alphaConstant)));
}

/// The flat index (index type) of C[batch, row, col] of this CTA.
static Value outputIndex(GemmPipelineEmitter &e, Value batch, Value row,
                         Value col) {
  OpBuilder &b = e.b;
  Location loc = e.loc;
  auto index = [&](Value v) {
    return arith::IndexCastUIOp::create(b, loc, b.getIndexType(), v);
  };
  Value flatRow = arith::AddIOp::create(
      b, loc, arith::MulIOp::create(b, loc, index(batch),
                                    indexConstant(b, loc, e.plan.m)),
      index(row));
  return arith::AddIOp::create(
      b, loc,
      arith::MulIOp::create(b, loc, flatRow, indexConstant(b, loc, e.plan.n)),
      index(col));
}

void GemmPipelineEmitter::storeOutput(Value tileRow, Value tileCol,
                                      Value value, Value scale) {
  Value row = add(rowA0, tileRow), col = add(rowB0, tileCol);
  Value inside = arith::AndIOp::create(b, loc, ult(row, c32(plan.m)),
                                       ult(col, c32(plan.n)));
  auto ifInside = scf::IfOp::create(b, loc, inside, false);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(ifInside.thenBlock());
  Value scaled = arith::MulFOp::create(b, loc, value, scale);
  if (plan.resultElement != b.getF32Type())
    scaled = arith::TruncFOp::create(b, loc, plan.resultElement, scaled);
  // C is [batch, M, N] flattened; the index type is 64-bit.
  memref::StoreOp::create(b, loc, scaled, args[7],
                          ValueRange{outputIndex(*this, outputBatch, row, col)});
  noteStored(scaled);
}

void GemmPipelineEmitter::storeOutputRow(Value tileRow, Value tileCol0,
                                         Value bits, Value scale) {
  auto bitsType = cast<VectorType>(bits.getType());
  auto f32Type = VectorType::get(bitsType.getShape(), b.getF32Type());
  Value values = arith::BitcastOp::create(b, loc, f32Type, bits);
  Value scaled = arith::MulFOp::create(
      b, loc, values, vector::BroadcastOp::create(b, loc, f32Type, scale));
  if (plan.resultElement != b.getF32Type())
    scaled = arith::TruncFOp::create(
        b, loc, VectorType::get(bitsType.getShape(), plan.resultElement),
        scaled);
  // Rows start 16-byte aligned when a row of C is a multiple of 16 bytes
  // (and tileCol0 is a multiple of the vector length): then the backend
  // emits 16-byte stores.
  int64_t elementBytes = plan.resultElement.getIntOrFloatBitWidth() / 8;
  int64_t vectorBytes = bitsType.getNumElements() * elementBytes;
  uint64_t alignment = (plan.n * elementBytes) % 16 == 0 && vectorBytes % 16 == 0
                           ? 16
                           : elementBytes;
  Value flat = outputIndex(*this, outputBatch, add(rowA0, tileRow),
                           add(rowB0, tileCol0));
  vector::StoreOp::create(b, loc, scaled, args[7], ValueRange{flat},
                          /*nontemporal=*/false, llvm::MaybeAlign(alignment));
  noteStored(scaled);
}

void GemmPipelineEmitter::noteStored(Value stored) {
  if (!plan.outputAmax)
    return;
  // |x| of the rounded values (exact in f32); maxnumf skips NaN, as
  // nvfp4.amax does.
  Type f32 = b.getF32Type();
  Value magnitude;
  if (auto vectorType = dyn_cast<VectorType>(stored.getType())) {
    auto f32Vector = VectorType::get(vectorType.getShape(), f32);
    if (vectorType.getElementType() != f32)
      stored = arith::ExtFOp::create(b, loc, f32Vector, stored);
    magnitude = vector::ReductionOp::create(
        b, loc, vector::CombiningKind::MAXNUMF,
        math::AbsFOp::create(b, loc, stored));
  } else {
    if (stored.getType() != f32)
      stored = arith::ExtFOp::create(b, loc, f32, stored);
    magnitude = math::AbsFOp::create(b, loc, stored);
  }
  Value zero = indexConstant(b, loc, 0);
  Value max = arith::MaxNumFOp::create(
      b, loc, memref::LoadOp::create(b, loc, storedAmax, ValueRange{zero}),
      magnitude);
  memref::StoreOp::create(b, loc, max, storedAmax, ValueRange{zero});
}

Value GemmPipelineEmitter::roundedOutput(Value acc, Value scale) {
  ScalarBuilder s(b, loc);
  Value scaled = arith::MulFOp::create(b, loc, acc, scale);
  return s.toF32(s.fromF32(scaled, plan.resultElement));
}

ScalarBuilder::TensorScale GemmPipelineEmitter::outputTensorScale() {
  return ScalarBuilder(b, loc).tensorScale(loadAmax(b, loc, args[9]));
}

/// Index (index type) of byte `col / 2` of row `row` of the codes of C and
/// of the scale of its block: C is [batch * M, N] with 1x16 blocks.
static std::pair<Value, Value> quantizedOffsets(GemmPipelineEmitter &e,
                                                Value row, Value col) {
  OpBuilder &b = e.b;
  Location loc = e.loc;
  // Rows are whole blocks (N % 16 == 0) and col is even: the byte is
  // row * N / 2 + col / 2 and the scale row * N / 16 + col / 16, with no
  // division of the flat index.
  auto index = [&](Value v) {
    return arith::IndexCastUIOp::create(b, loc, b.getIndexType(), v)
        .getResult();
  };
  Value flatRow = arith::AddIOp::create(
      b, loc,
      arith::MulIOp::create(b, loc, index(e.batchIndex()),
                            indexConstant(b, loc, e.plan.m)),
      index(row));
  auto at = [&](int64_t perRow, int64_t colShift) {
    return arith::AddIOp::create(
        b, loc,
        arith::MulIOp::create(b, loc, flatRow,
                              indexConstant(b, loc, e.plan.n / perRow)),
        index(e.lshr(col, colShift)));
  };
  return {at(2, 1), at(16, 4)};
}

void GemmPipelineEmitter::storeQuantizedRun(
    Value tileRow, Value tileCol0, ArrayRef<Value> values, Value scale,
    const ScalarBuilder::TensorScale &tensorScale) {
  SmallVector<Value> rounded;
  for (Value v : values)
    rounded.push_back(roundedOutput(v, scale));
  QuantizedRun run =
      quantizeRunNearestEven(b, loc, rounded, tensorScale, *plan.chip);
  auto [codeByte, scaleIndex] =
      quantizedOffsets(*this, add(rowA0, tileRow), add(rowB0, tileCol0));
  // 8 bytes of codes, 8-byte aligned (a block starts at a multiple of 16
  // elements, rows are whole blocks).
  Value words = vector::FromElementsOp::create(
      b, loc, VectorType::get({2}, b.getI32Type()),
      ValueRange{run.words[0], run.words[1]});
  vector::StoreOp::create(
      b, loc, words, codesAsWords(b, loc, args[7]),
      ValueRange{arith::DivUIOp::create(b, loc, codeByte,
                                        indexConstant(b, loc, 4))},
      /*nontemporal=*/false, llvm::MaybeAlign(8));
  memref::StoreOp::create(b, loc, run.scaleCode, args[8],
                          ValueRange{scaleIndex});
}

void GemmPipelineEmitter::storeCodes(Value row, Value col, Value codes,
                                     Value inside) {
  auto ifInside = scf::IfOp::create(b, loc, inside, false);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(ifInside.thenBlock());
  memref::StoreOp::create(b, loc, codes, args[7],
                          ValueRange{quantizedOffsets(*this, row, col).first});
}

void GemmPipelineEmitter::storeQuantizedFragments(
    Value tileRow0, Value tileCol0, ValueRange c, Value scale,
    const ScalarBuilder::TensorScale &tensorScale) {
  ScalarBuilder s(b, loc);
  Value t = andi(lane, 3);
  Value col = add(rowB0, add(tileCol0, mul(t, c32(2))));
  // C's columns come in whole blocks (N % 16 == 0): the block is inside
  // the matrix or not as a whole.
  // As 16 j < N - rowB0 (signed: a tile past N has none inside): one
  // register for the tile's 16 block tests instead of rowB0 + 16 j each,
  // which in the route's quantizing consumers spilled (4 bytes at
  // 16384 x 4112, session 10).
  Value colsLeft = arith::SubIOp::create(b, loc, c32(plan.n), rowB0);
  Value blockInside = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt,
                                            tileCol0, colsLeft);
  for (int64_t half = 0; half < 2; ++half) {
    // Row g (registers 0, 1 of each n8 fragment) or g + 8 (2, 3); columns
    // 2t, 2t + 1 of the first fragment and 8 + 2t, 9 + 2t of the second.
    Value row = add(rowA0, add(tileRow0, add(lshr(lane, 2), c32(8 * half))));
    std::array<Value, 4> v = {
        roundedOutput(c[2 * half], scale), roundedOutput(c[2 * half + 1], scale),
        roundedOutput(c[4 + 2 * half], scale),
        roundedOutput(c[5 + 2 * half], scale)};
    Value amax = s.f32(0.0f);
    for (Value x : v)
      amax = arith::MaxNumFOp::create(b, loc, amax,
                                      math::AbsFOp::create(b, loc, x));
    // The block's 16 values sit in the 4 lanes t = 0..3 of this quad.
    for (int32_t offset : {1, 2}) {
      Value other = gpu::ShuffleOp::create(b, loc, amax, offset, 32,
                                           gpu::ShuffleMode::XOR)
                        .getShuffleResult();
      amax = arith::MaxNumFOp::create(b, loc, amax, other);
    }
    ScalarBuilder::BlockScale block = s.blockScale(amax, tensorScale);
    auto encode = [&](Value lo, Value hi) {
      return encodePairNearestEven(
          b, loc, arith::MulFOp::create(b, loc, lo, block.encode),
          arith::MulFOp::create(b, loc, hi, block.encode), *plan.chip);
    };
    Value inside = arith::AndIOp::create(b, loc, blockInside,
                                         ult(row, c32(plan.m)));
    // Byte t of the block's 8, and byte 4 + t; lane t = 0 adds the scale.
    storeCodes(row, col, encode(v[0], v[1]), inside);
    storeCodes(row, add(col, c32(8)), encode(v[2], v[3]), inside);
    Value scaleInside = arith::AndIOp::create(b, loc, inside, eq(t, 0));
    auto ifFirst = scf::IfOp::create(b, loc, scaleInside, false);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(ifFirst.thenBlock());
    memref::StoreOp::create(
        b, loc, block.code, args[8],
        ValueRange{quantizedOffsets(*this, row, col).second});
  }
}

void GemmPipelineEmitter::finishOutputAmax() {
  if (!plan.outputAmax)
    return;
  Value max = memref::LoadOp::create(b, loc, storedAmax,
                                     ValueRange{indexConstant(b, loc, 0)});
  warpMaxToAmax(b, loc, max, args[8]);
}

void GemmPipelineEmitter::acquireOutputTensorMap() {
  NVVM::FenceProxyAcquireOp::create(b, loc, NVVM::MemScopeKind::SYS,
                                    argumentPointer(b, loc, args[7]), c32(128));
}

void GemmPipelineEmitter::finishTensorStores() {
  auto ifLane0 = scf::IfOp::create(b, loc, eq(lane, 0), false);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(ifLane0.thenBlock());
  // The staging buffers must outlive the stores' reads (".read" would
  // do); waiting for the writes too costs one wait per warp at its exit.
  NVVM::CpAsyncBulkWaitGroupOp::create(b, loc, uint32_t(0), UnitAttr());
}

void GemmPipelineEmitter::storeMmaFragmentByTensorCopy(Value tileRow0,
                                                       Value tileCol0,
                                                       ValueRange c,
                                                       Value scale,
                                                       Value staging,
                                                       int64_t firstChunk) {
  Type element = plan.resultElement;
  int64_t elementBytes = element.getIntOrFloatBitWidth() / 8;
  // A chunk is 128 bytes of each of the warp's 16 rows: 64 BF16 or 32 FP32
  // columns, 8 or 4 n8 blocks.
  int64_t chunkColumns = kTmaStoreRowBytes / elementBytes;
  int64_t blocksPerChunk = chunkColumns / 8;
  int64_t chunks = static_cast<int64_t>(c.size()) / 4 / blocksPerChunk;
  Value map = argumentPointer(b, loc, args[7]);
  Value g = lshr(lane, 2), t = andi(lane, 3);
  Value row = add(rowA0, add(tileRow0, g));
  Value rowInside[2] = {ult(row, c32(plan.m)),
                        ult(add(row, c32(8)), c32(plan.m))};
  Value col0 = add(rowB0, tileCol0);
  Value col = add(col0, mul(t, c32(2)));
  auto pairType = VectorType::get({2}, element);
  Value zeroPair = arith::ConstantOp::create(
      b, loc, pairType,
      DenseElementsAttr::get(pairType, b.getZeroAttr(element)));
  auto ifLane0 = [&](function_ref<void()> body) {
    auto ifOp = scf::IfOp::create(b, loc, eq(lane, 0), false);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(ifOp.thenBlock());
    body();
  };
  for (int64_t chunk = 0; chunk < chunks; ++chunk) {
    Value buffer = offsetPtr(
        staging, ((firstChunk + chunk) % kTmaStoreBuffers) * kTmaStoreBufferBytes);
    // The store that read this buffer two chunks ago (of this tile or the
    // last) is done reading; the one of the last chunk may still run.
    ifLane0([&] {
      NVVM::CpAsyncBulkWaitGroupOp::create(
          b, loc, uint32_t(kTmaStoreBuffers - 1), b.getUnitAttr());
    });
    NVVM::SyncWarpOp::create(b, loc, c32(-1));
    // The pair of C[row g + 8h][cols 8j + 2t, + 1], scaled and rounded;
    // the output amax folds it only where it lies inside C.
    auto pairOf = [&](int64_t j, int64_t h) {
      Value v[2];
      for (int64_t i = 0; i < 2; ++i) {
        v[i] = arith::MulFOp::create(b, loc, c[4 * j + 2 * h + i], scale);
        if (element != b.getF32Type())
          v[i] = arith::TruncFOp::create(b, loc, element, v[i]);
      }
      Value pair = vector::FromElementsOp::create(b, loc, pairType,
                                                  ValueRange{v[0], v[1]});
      if (plan.outputAmax)
        noteStored(arith::SelectOp::create(
            b, loc,
            arith::AndIOp::create(b, loc, rowInside[h],
                                  ult(add(col, c32(8 * j)), c32(plan.n))),
            pair, zeroPair));
      return pair;
    };
    // Row r, 16-byte chunk q of a buffer is at r * 128 + (q ^ (r % 8)) * 16
    // (the 128-byte swizzle).
    auto swizzledOffset = [&](Value row, Value chunk) {
      return add(mul(row, c32(kTmaStoreRowBytes)),
                 shl(arith::XOrIOp::create(b, loc, chunk, andi(row, 7)), 4));
    };
    if (elementBytes == 2) {
      // stmatrix.x4 per two n8 blocks: its four 8 x 8 matrices are (block
      // j, rows 0-7), (j, 8-15), (j + 1, 0-7), (j + 1, 8-15), each lane
      // holding the pair the accumulator fragment gives it, and lane l
      // addresses row l % 8 of matrix l / 8. A matrix's 8 rows of 16
      // bytes land in 8 different chunks: no bank conflict. 4 x fewer
      // stores than pairs, and 4 addresses per lane instead of 8.
      Value matrix = lshr(lane, 3);
      Value bufferRow = add(andi(lane, 7), shl(andi(matrix, 1), 3));
      for (int64_t jj = 0; jj < blocksPerChunk; jj += 2) {
        int64_t j = chunk * blocksPerChunk + jj;
        SmallVector<Value> sources;
        for (int64_t i = 0; i < 4; ++i)
          sources.push_back(LLVM::BitcastOp::create(
              b, loc, b.getI32Type(), pairOf(j + i / 2, i % 2)));
        Value offset =
            swizzledOffset(bufferRow, add(c32(jj), lshr(matrix, 1)));
        NVVM::StMatrixOp::create(
            b, loc, offsetPtr(buffer, offset), sources, NVVM::MMALayout::row,
            NVVM::LdStMatrixShapeAttr::get(b.getContext(), 8, 8),
            NVVM::LdStMatrixEltType::B16);
      }
    } else {
      // FP32: one 8-byte store per pair, columns 8 jj + 2t, + 1 at byte
      // 32 jj + 8t of the row, chunk 2 jj + t / 2. The 32 lanes write two
      // rows' 256 bytes, each bank twice: the minimum of 2 wavefronts.
      for (int64_t jj = 0; jj < blocksPerChunk; ++jj) {
        int64_t j = chunk * blocksPerChunk + jj;
        for (int64_t h = 0; h < 2; ++h) {
          Value pair = pairOf(j, h);
          Value offset = add(
              swizzledOffset(add(g, c32(8 * h)),
                             add(c32(2 * jj), lshr(t, 1))),
              mul(andi(t, 1), c32(8)));
          LLVM::StoreOp::create(b, loc, pair, offsetPtr(buffer, offset),
                                2 * elementBytes);
        }
      }
    }
    // Each lane's generic-proxy writes become visible to the TMA (async
    // proxy) before lane 0 issues the store that reads them.
    NVVM::FenceProxyOp::create(
        b, loc, NVVM::ProxyKind::async_shared,
        NVVM::SharedSpaceAttr::get(b.getContext(),
                                   NVVM::SharedSpace::shared_cta));
    NVVM::SyncWarpOp::create(b, loc, c32(-1));
    ifLane0([&] {
      // Coordinates innermost first: column, row, batch element.
      NVVM::CpAsyncBulkTensorSharedCTAToGlobalOp::create(
          b, loc, map, buffer,
          ValueRange{add(col0, c32(chunk * chunkColumns)),
                     add(rowA0, tileRow0), outputBatch},
          Value(), NVVM::TMAStoreMode::TILE, Value());
      NVVM::CpAsyncBulkCommitGroupOp::create(b, loc);
    });
  }
}

void GemmPipelineEmitter::waitStagingBuffer() {
  auto ifLane0 = scf::IfOp::create(b, loc, eq(lane, 0), false);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(ifLane0.thenBlock());
    // All but the last committed group have read their buffers: the one
    // kTmaStoreBuffers chunks ago is this buffer's.
    NVVM::CpAsyncBulkWaitGroupOp::create(
        b, loc, uint32_t(kTmaStoreBuffers - 1), b.getUnitAttr());
  }
  NVVM::SyncWarpOp::create(b, loc, c32(-1));
}

void GemmPipelineEmitter::stageRow(Value buffer, Value tileRow0,
                                   Value tileCol0, int64_t rowByte,
                                   Value bits, Value scale) {
  Type element = plan.resultElement;
  int64_t elementBytes = element.getIntOrFloatBitWidth() / 8;
  int64_t count = cast<VectorType>(bits.getType()).getNumElements();
  auto f32Type = VectorType::get({count}, b.getF32Type());
  auto elementType = VectorType::get({count}, element);
  Value scaled = arith::MulFOp::create(
      b, loc, arith::BitcastOp::create(b, loc, f32Type, bits),
      vector::BroadcastOp::create(b, loc, f32Type, scale));
  if (element != b.getF32Type())
    scaled = arith::TruncFOp::create(b, loc, elementType, scaled);
  if (plan.outputAmax) {
    // Only C's elements count: this lane's row inside M, and the columns
    // j < N - (first column) of the run (the count may be <= 0).
    Value rowInside = ult(add(rowA0, add(tileRow0, lane)), c32(plan.m));
    Value left =
        arith::SubIOp::create(b, loc, c32(plan.n), add(rowB0, tileCol0));
    auto i32Type = VectorType::get({count}, b.getI32Type());
    SmallVector<int32_t> columns;
    for (int64_t j = 0; j < count; ++j)
      columns.push_back(static_cast<int32_t>(j));
    Value inside = arith::CmpIOp::create(
        b, loc, arith::CmpIPredicate::slt,
        arith::ConstantOp::create(
            b, loc, i32Type, DenseElementsAttr::get(i32Type, ArrayRef(columns))),
        vector::BroadcastOp::create(b, loc, i32Type, left));
    auto maskType = VectorType::get({count}, b.getI1Type());
    inside = arith::AndIOp::create(
        b, loc, inside,
        vector::BroadcastOp::create(b, loc, maskType, rowInside));
    noteStored(arith::SelectOp::create(
        b, loc, inside, scaled,
        arith::ConstantOp::create(
            b, loc, elementType,
            DenseElementsAttr::get(elementType, b.getZeroAttr(element)))));
  }
  // Row `lane` of the buffer, 16-byte chunk q at lane * 128 + (q ^ (lane %
  // 8)) * 16 (the 128-byte swizzle, what the TMA undoes).
  int64_t words = count * elementBytes / 4;
  Value packed = vector::BitCastOp::create(
      b, loc, VectorType::get({words}, b.getI32Type()), scaled);
  Value rowBase = mul(lane, c32(kTmaStoreRowBytes));
  Value phase = andi(lane, 7);
  for (int64_t q = 0; q < words / 4; ++q) {
    Value piece = vector::ShuffleOp::create(
        b, loc, packed, packed,
        ArrayRef<int64_t>{4 * q, 4 * q + 1, 4 * q + 2, 4 * q + 3});
    Value chunk = arith::XOrIOp::create(b, loc, c32(rowByte / 16 + q), phase);
    LLVM::StoreOp::create(b, loc, piece,
                          offsetPtr(buffer, add(rowBase, shl(chunk, 4))), 16);
  }
}

void GemmPipelineEmitter::storeStagedRows(Value buffer, Value tileRow0,
                                          Value tileCol0) {
  // Each lane's generic-proxy writes become visible to the TMA (async
  // proxy) before lane 0 issues the stores that read them.
  NVVM::FenceProxyOp::create(
      b, loc, NVVM::ProxyKind::async_shared,
      NVVM::SharedSpaceAttr::get(b.getContext(),
                                 NVVM::SharedSpace::shared_cta));
  NVVM::SyncWarpOp::create(b, loc, c32(-1));
  auto ifLane0 = scf::IfOp::create(b, loc, eq(lane, 0), false);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(ifLane0.thenBlock());
  Value map = argumentPointer(b, loc, args[7]);
  static_assert(kRowStagingRows % kTmaStoreRows == 0,
                "a warp's rows are whole boxes");
  for (int64_t box = 0; box < kRowStagingRows / kTmaStoreRows; ++box)
    // Coordinates innermost first: column, row, batch element.
    NVVM::CpAsyncBulkTensorSharedCTAToGlobalOp::create(
        b, loc, map, offsetPtr(buffer, box * kTmaStoreBufferBytes),
        ValueRange{add(rowB0, tileCol0),
                   add(rowA0, add(tileRow0, c32(box * kTmaStoreRows))),
                   outputBatch},
        Value(), NVVM::TMAStoreMode::TILE, Value());
  NVVM::CpAsyncBulkCommitGroupOp::create(b, loc);
}

void GemmPipelineEmitter::storeMmaFragment(Value tileRow0, Value tileCol0,
                                           ValueRange c, Value scale) {
  // Lane (g, t) holds rows g and g + 8 of each n8 block, columns 2t and
  // 2t + 1: two rows of pairs, 8 columns apart from block to block. The
  // rows' addresses are computed once; each pair is one store (a vector
  // of two when N is even: both columns are inside C or neither is).
  Type element = plan.resultElement;
  int64_t elementBytes = element.getIntOrFloatBitWidth() / 8;
  Value row = add(rowA0, add(tileRow0, lshr(lane, 2)));
  Value col = add(rowB0, add(tileCol0, mul(andi(lane, 3), c32(2))));
  Value base = toPointer(b, loc, args[7], kGlobal);
  auto i64 = [&](Value v) {
    return arith::ExtUIOp::create(b, loc, b.getI64Type(), v).getResult();
  };
  auto c64 = [&](int64_t v) {
    return arith::ConstantIntOp::create(b, loc, b.getI64Type(), v).getResult();
  };
  // Element (batch * M + row) * N + col of C.
  Value flatRow = arith::AddIOp::create(
      b, loc, arith::MulIOp::create(b, loc, i64(outputBatch), c64(plan.m)),
      i64(row));
  Value first = arith::AddIOp::create(
      b, loc, arith::MulIOp::create(b, loc, flatRow, c64(plan.n)), i64(col));
  Value rowPtr[2];
  Value rowInside[2];
  for (int64_t h = 0; h < 2; ++h) {
    rowPtr[h] = LLVM::GEPOp::create(
        b, loc, base.getType(), element, base,
        ValueRange{arith::AddIOp::create(b, loc, first, c64(8 * h * plan.n))});
    rowInside[h] = ult(add(row, c32(8 * h)), c32(plan.m));
  }
  bool pairs = plan.n % 2 == 0;
  auto pairType = VectorType::get({2}, element);
  for (size_t j = 0; j < c.size() / 4; ++j) {
    Value colJ = add(col, c32(8 * j));
    for (int64_t h = 0; h < 2; ++h) {
      Value v[2];
      for (int64_t i = 0; i < 2; ++i) {
        v[i] = arith::MulFOp::create(b, loc, c[4 * j + 2 * h + i], scale);
        if (element != b.getF32Type())
          v[i] = arith::TruncFOp::create(b, loc, element, v[i]);
      }
      Value ptr = LLVM::GEPOp::create(b, loc, base.getType(), element,
                                      rowPtr[h], ValueRange{c32(8 * j)});
      if (pairs) {
        Value inside = arith::AndIOp::create(b, loc, rowInside[h],
                                             ult(colJ, c32(plan.n)));
        auto ifInside = scf::IfOp::create(b, loc, inside, false);
        OpBuilder::InsertionGuard guard(b);
        b.setInsertionPointToStart(ifInside.thenBlock());
        Value pair = vector::FromElementsOp::create(b, loc, pairType,
                                                    ValueRange{v[0], v[1]});
        LLVM::StoreOp::create(b, loc, pair, ptr, 2 * elementBytes);
        noteStored(pair);
        continue;
      }
      for (int64_t i = 0; i < 2; ++i) {
        Value inside = arith::AndIOp::create(
            b, loc, rowInside[h], ult(add(colJ, c32(i)), c32(plan.n)));
        auto ifInside = scf::IfOp::create(b, loc, inside, false);
        OpBuilder::InsertionGuard guard(b);
        b.setInsertionPointToStart(ifInside.thenBlock());
        LLVM::StoreOp::create(
            b, loc, v[i],
            LLVM::GEPOp::create(b, loc, base.getType(), element, ptr,
                                ValueRange{c32(i)}),
            elementBytes);
        noteStored(v[i]);
      }
    }
  }
}
