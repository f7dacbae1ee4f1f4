//===- GemmPipeline.h - the shared skeleton of tensor-core GEMMs -*- C++ -*-===//
//
// Part of the nvfp4 project.
//
//===----------------------------------------------------------------------===//
//
// What every tensor-core nvfp4.scaled_matmul kernel shares, whatever MMA
// instruction consumes the tiles:
//
//   * the tiling: one CTA computes a tileM x tileN block of C for one batch
//     element, walking K in steps of tileK (256 elements = 128 bytes of packed
//     E2M1 codes and 16 E4M3 scales per row; 128 on sm_120a);
//   * the shared-memory ring of `stages` stages, each holding the packed codes
//     and the scale tiles of A and B for one K step;
//   * a producer warp whose lane 0 fills the ring with TMA copies -- one
//     cp.async.bulk.tensor per operand for the codes (a 3-D tensor map
//     [batch, rows, K/2] with the 128-byte swizzle, out-of-range rows filled
//     with zeros), one per operand for linear scales, cp.async.bulk for
//     128x4 scale atoms -- completing on a per-stage "full" mbarrier with a
//     transaction count, and consumer warps that release a stage through
//     its "empty" mbarrier when they are done with it;
//   * the scale-tile addressing for the three scale layouts (linear 1x16,
//     linear 16x16, swizzled 128x4 atoms);
//   * the epilogue: TE's alpha = alpha * amaxA * amaxB / (6 * 448)^2 and a
//     bounds-checked store of FP32 or BF16.
//
// The consumer -- the math -- is per chip: dequantize to BF16 + wgmma on
// sm_90a (WgmmaMatmul.cpp), tcgen05 on sm_100a/sm_103a (Tcgen05Matmul.cpp),
// mma.sync block_scale on sm_120a (MmaBlockScaleMatmul.cpp). Rows of A or B
// past the matrix edge arrive as zeros (codes, TMA scales) or are left stale
// (re-laid scales); either way they only feed outputs that the epilogue does
// not store.
//
// The tensor maps are kernel parameters of type !nvgpu.tensormap.descriptor:
// the host function creates them with nvgpu.tma.create.descriptor, the
// kernel manifest describes them ("tensormap" parameters), and a runtime
// encodes them with cuTensorMapEncodeTiled into 128 bytes of device memory
// whose address the kernel receives (docs/Runtime.md).
//
//===----------------------------------------------------------------------===//

#ifndef NVFP4_LIB_CONVERSION_NVFP4TOGPU_GEMMPIPELINE_H
#define NVFP4_LIB_CONVERSION_NVFP4TOGPU_GEMMPIPELINE_H

#include "nvfp4/Conversion/Utils/ElementBuilders.h"
#include "nvfp4/Dialect/NVFP4/IR/NVFP4Dialect.h"
#include "nvfp4/Target/Chip.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"

#include <optional>
#include <string>

namespace mlir {
namespace nvfp4 {
namespace kernels {

/// K elements per pipeline stage by default (GemmSchedule::tileK), and the
/// multiple of K every tensor-core GEMM needs: 128 bytes of codes and 16
/// scale bytes per row, so every copy is a multiple of 16 bytes at a
/// 16-byte aligned address.
constexpr int64_t kGemmTileK = 256;
/// The other K step (sm_120a's mma.sync kernel, CUTLASS's 128x128x128
/// tile): 64-byte code rows in the 64-byte swizzle.
constexpr int64_t kGemmTileKHalf = 128;

/// Bytes of one row of codes in a stage of the default K step (256 codes;
/// GemmPlan::codesRowBytes in general).
///
/// Codes arrive by TMA tensor copies with the 128-byte swizzle: the 16-byte
/// chunk c of tile row r lies at r * 128 + ((c ^ (r % 8)) * 16) of the
/// operand's code tile (GemmPipelineEmitter::codesOffset). This is the
/// layout a tcgen05 shared-memory descriptor calls K-major SWIZZLE_128B
/// (8-row groups SBO = 1024 bytes apart, PTX ISA 9.7.16.4.1), and it keeps
/// the sm_90a / sm_120a fragment loads free of bank conflicts: 8 rows read at
/// the same K hit 8 different chunks.
constexpr int64_t kCodesRowBytes = kGemmTileK / 2;
/// Bytes per row of a stage's linear scale tile (the TMA box's 16 bytes).
constexpr int64_t kStageScaleRowBytes = 16;

/// The 128-byte swizzle pattern repeats every 8 rows; code tiles start on
/// multiples of it so that "r % 8" is the row's address bits 7-9.
constexpr int64_t kSwizzleRepeatBytes = 1024;

/// How a stage holds the scales of one K step.
enum class GemmScaleStaging {
  /// The bytes of the global layout: linear rows (16 bytes per row, or per
  /// 16 rows for 16x16 blocks) by a TMA tensor copy, 128x4 atoms by a bulk
  /// copy.
  AsStored,
  /// Always 128x4 atoms (docs/Blackwell.md section 4), the source of
  /// tcgen05.cp.32x128b.warpx4: swizzled inputs are copied as they are,
  /// linear ones are re-laid by the producer lanes (ld.global + st.shared,
  /// then fence.proxy.async and a second arrival on the "full" barrier).
  Atoms128x4,
};

/// Who releases a stage on its "empty" barrier.
enum class GemmStageRelease {
  ConsumerThreads, ///< every consumer thread arrives (releaseStage)
  Tcgen05Commit,   ///< one tcgen05.commit arrives once the MMAs are done
};

/// One operand (A or B) of the GEMM as the pipeline sees it.
struct GemmOperand {
  BlockScaledTensorType type;
  int64_t rows;      ///< M for A, N for B (per batch element)
  int64_t tileRows;  ///< rows of the operand per CTA tile
  /// Rows of codes a stage holds: tileRows, or half of B's with
  /// cta_group::2 (the CTA pair splits B).
  int64_t codeTileRows = 0;
  int64_t codesOffset, scalesOffset; ///< byte offsets inside a stage
  int64_t scaleTileBytes;            ///< scale bytes per stage

  /// Rows of the scale matrix per tile: tileRows, or tileRows / 16 for
  /// 16x16 blocks (linear layouts).
  int64_t scaleTileRows() const { return tileRows / type.getBlockRows(); }
};

/// A GEMM schedule: the choices that shape a kernel but not its result
/// (within the GEMM tolerance). A rule picks one from the shape and the chip
/// (chooseGemmSchedule); the `gemm-schedule` option of convert-nvfp4-to-gpu
/// forces one (parseGemmSchedule) for benchmarks and tests. Its name() is
/// part of the kernel name, so a manifest says which schedule ran.
struct GemmSchedule {
  /// The CTA tile of C: rows of A and rows of B.
  int64_t tileM = 128, tileN = 128;
  /// Stages of the FP4 ring, each one K step (tileK) of codes and
  /// scales of both operands.
  int64_t stages = 4;
  /// K elements per stage: kGemmTileK (128-byte code rows, the 128-byte
  /// swizzle), or kGemmTileKHalf (64-byte rows, the 64-byte swizzle; only
  /// the sm_120a kernel takes it). K stays a multiple of kGemmTileK.
  int64_t tileK = kGemmTileK;
  /// sm_90a: stages of decoded F16 tiles (kDecodedK elements of K each),
  /// written by `decoderWarpgroups` dedicated warpgroups and read by two
  /// consumer warpgroups with wgmma from shared memory (DecodeWgmmaMatmul.cpp).
  /// 0: the consumers decode themselves (WgmmaMatmul.cpp, and every other
  /// chip, whose MMA reads FP4 directly).
  int64_t decodedStages = 0;
  /// With decodedStages: 0 is the route -- separate kernels decode both
  /// operands into F16 scratch buffers first and TMA copies fill the
  /// decoded stages (no FP4 ring: stages = 0).
  int64_t decoderWarpgroups = 0;
  /// Persistent CTAs: the grid is min(tiles, maxCTAs) and each CTA walks
  /// the tiles linear index blockIdx.x, + gridDim.x, ... in the grouped
  /// order of rasterGroup; otherwise one tile per CTA, grid (N tiles, M
  /// tiles, batch).
  bool persistent = false;
  /// M tiles per group of the persistent order: consecutive tiles walk down
  /// a group of rasterGroup M tiles before moving to the next N tile, so
  /// the CTAs running at once share rows of A and of B in L2.
  int64_t rasterGroup = 8;
  /// At most this many persistent CTAs (0: one per SM of the chip); tests
  /// use it to give every CTA several tiles of a small GEMM.
  int64_t gridLimit = 0;
  /// Split-K: the K steps of a tile are shared by this many CTAs, each
  /// writing its FP32 partial sums to a workspace [batch, splitK, M, N] that
  /// a finalize kernel sums in split order, scales by alpha and converts
  /// (deterministic). For GEMMs with fewer tiles than SMs (small M, decode).
  int64_t splitK = 1;
  /// Persistent CTAs per thread-block cluster along M ("_c2"): the CTAs of
  /// a cluster compute vertically adjacent tiles with the same B tile, and
  /// each loads 1 / clusterM of B's rows and multicasts them to all (the
  /// route on sm_90a: DecodeWgmmaMatmul.cpp).
  int64_t clusterM = 1;
  /// > 0: the small-M kernel (SkinnyMatmul.cpp) with this many warps per
  /// CTA splitting K: no ring, B streamed from global memory into
  /// mma.sync. tileM is rows of A (8..32), tileN rows of B (16 or 32) per
  /// CTA; the other fields are unused. Its name is
  /// "skinny{tileM}x{tileN}_w{warps}" (then "_u{chunks}" when
  /// skinnyChunks is given, "_pf" with skinnyPrefetch, "_a" with
  /// skinnyStageA, "_s" with skinnyScaledA, "_e" with skinnyByteDecode).
  int64_t skinnyWarps = 0;
  /// The skinny kernel: K chunks (128 elements) each warp loads before it
  /// decodes them; 0 = the most (up to 4) that divide its chunks.
  int64_t skinnyChunks = 0;
  /// The skinny kernel with M <= tileM: each warp decodes the M real rows
  /// of its K range of A once into shared memory ("_a") instead of every
  /// lane decoding its (clamped) A row per chunk -- 8 / M times less A
  /// decode.
  bool skinnyStageA = false;
  /// The skinny kernel decodes codes by bit placement ("_e",
  /// decodeE2M1x8ToF16Pow2: 10 instead of 16 integer instructions per 8
  /// codes): each F16 is 2^-14 times its code, the block scales enter as
  /// 2^7 s (exact: the products 2^-7 code s are multiples of 2^-17 below
  /// 21) and alpha carries 2^14 (2^7 per operand), so every product and
  /// partial sum is the plain decode's times a power of two: the same
  /// result bits.
  bool skinnyByteDecode = false;
  /// With "_a" and "_e" and 16x16 blocks of B ("_s"): the staged A is
  /// multiplied by B's block scale, A'' = 2^-5 codeA sA sB (exact in F16:
  /// a multiple of 2^-24 with at most 10 significant bits, at most 37632),
  /// once per m16 tile of B (whose 16 rows share a scale per 16 K), so the
  /// lanes skip B's scales altogether: no scale loads and no multiplies in
  /// the loop, the codes go from their bytes into mma.sync. alpha carries
  /// 2^19.
  bool skinnyScaledA = false;
  /// The skinny kernel without the ring loads the next group of U chunks
  /// before the math of the current one ("_pf": two groups of registers),
  /// and the first group before A is staged: B's first bytes are in flight
  /// from the kernel's first cycles, also when a warp has one group.
  bool skinnyPrefetch = false;

  bool skinny() const { return skinnyWarps > 0; }

  /// K of one tcgen05 MMA: 64, or 96 for sm_103a's K = 96 block16 form
  /// (Tcgen05Matmul.cpp): 8 MMAs per 768 codes, walking 3 stages, with the
  /// shared-memory descriptor's absolute leading-dimension address for the
  /// two that straddle a stage boundary. Needs K % 768 == 0 and stages % 3
  /// == 0 (docs/Blackwell.md section 8).
  int64_t mmaK = 64;

  /// The epilogue stores C through shared memory with TMA tensor copies
  /// ("_ts"; the sm_90a decoded-stage kernels, DecodeWgmmaMatmul.cpp, the
  /// sm_120a kernel, and the tcgen05 kernels with 32-row buffers, stageRow):
  /// each consumer warp writes its accumulators, scaled and rounded, into
  /// one of two 16-row x 128-byte staging buffers (the 128-byte swizzle)
  /// and one lane stores the box with cp.async.bulk.tensor shared::cta ->
  /// global;
  /// the tensor map of C clips the rows and columns past the matrix. C's
  /// rows must be multiples of 16 bytes (the map's stride). The quantizing
  /// epilogue (codes and scales, not C) keeps its direct stores: planGemm
  /// drops the flag for scaled_matmul_quantize, whose kernel name then has
  /// no "_ts".
  bool tmaStore = false;
  /// tcgen05's cta_group ("_cg2" = 2; needs clusterM == 2 and persistent):
  /// the two CTAs of a cluster compute one (2 tileM) x tileN MMA tile with
  /// tcgen05.mma.cta_group::2, issued by the even CTA (the leader). Each
  /// CTA holds its tileM rows of A and half of B's tileN rows; the MMA
  /// reads B from both CTAs' shared memory and writes each CTA's rows to
  /// its own Tensor Memory (Tcgen05Matmul.cpp, docs/Blackwell.md section
  /// 9).
  int64_t ctaGroup = 1;

  /// The route: the operands are decoded into F16 scratch by their own
  /// kernels before the GEMM (decodedStages > 0, decoderWarpgroups == 0).
  bool decodesSeparately() const {
    return decodedStages > 0 && decoderWarpgroups == 0;
  }

  /// "128x256x256_s2_d2w1_p8": tile and K step, FP4 stages, decoded stages
  /// and decoder warpgroups (when decodedStages > 0), persistent with its
  /// raster group (when persistent) and "_gN" with a grid limit, "_kS" with
  /// split-K,
  /// "_mk96" with the K = 96 MMA (CUTLASS calls it "ultra"), "_cg2" with
  /// tcgen05 cta_group::2 (after "_c2"), "_ts" with the TMA-store epilogue.
  /// parseGemmSchedule reads it back.
  std::string name() const;
};

/// Reads GemmSchedule::name()'s syntax; the message says what is wrong.
FailureOr<GemmSchedule> parseGemmSchedule(StringRef text,
                                          std::string &message);

/// The static plan of one GEMM kernel: the schedule (the base), the shape
/// and what follows from both.
struct GemmPlan : GemmSchedule {
  int64_t batch, m, n, k;
  int64_t consumerWarps;
  /// The most CTAs a persistent grid launches (the chip's multiprocessors:
  /// one CTA per SM).
  int64_t maxCTAs = 1;
  GemmOperand a, b;
  int64_t stageBytes;
  int64_t barrierBytes; ///< full[stages], empty[stages] (8 bytes each), ...
  /// Shared memory a consumer needs beyond the ring and the barriers (the
  /// sm_90a wgmma kernel's decoded B tiles); it starts at
  /// consumerSharedOffset(), a multiple of kSwizzleRepeatBytes.
  int64_t consumerSharedBytes = 0;
  Type resultElement;
  /// What alpha multiplies the operands' tensor scales by:
  /// numerics::gemmAlphaConstant (1 / 2688 per operand holding an amax,
  /// none for a checkpoint's decode scale).
  float alphaConstant = 1.0f / (36.0f * 448.0f * 448.0f);
  /// The chip the plan is for (its E2M1 conversions, for a quantizing
  /// epilogue).
  const ::nvfp4::target::ChipInfo *chip = nullptr;
  /// The kernel also computes the amax of C (argument 8, FP32 bits,
  /// zero-initialized): scaled_matmul's second result.
  bool outputAmax = false;
  /// The epilogue quantizes C (rounded to resultElement) in 1x16 blocks
  /// with the tensor amax of argument 9 and writes codes (argument 7) and
  /// linear scales (argument 8) instead of C: scaled_matmul_quantize.
  bool quantizeOutput = false;
  /// Set (to bf16) for a GEMM of 16-bit operands instead of block-scaled
  /// ones: the route's kernel (decodesSeparately) reads them through its
  /// tensor maps as they are -- no decode kernels, no amax; alpha alone
  /// scales C (LinalgKernels.cpp). The ring of the other kernels then holds
  /// 16-bit rows of tileK elements (codeBits = 16) and no scales
  /// (makeGemmPlan's `operandElement`; the tcgen05 .kind::f16 and sm_120a
  /// mma.sync BF16 GEMMs). Null: the block-scaled operands of `a` and `b`.
  Type operandElement;
  /// A ring of 16-bit operands without scales: operandElement outside the
  /// route.
  bool denseOperands() const { return operandElement && !decodesSeparately(); }
  GemmScaleStaging scaleStaging = GemmScaleStaging::AsStored;
  GemmStageRelease stageRelease = GemmStageRelease::ConsumerThreads;

  /// Whether `op`'s scales arrive by a TMA tensor copy (linear layouts
  /// staged as stored); otherwise a bulk copy (128x4 atoms) or the
  /// producer lanes (linear layouts re-laid as atoms) move them.
  bool scalesByTensorMap(const GemmOperand &op) const {
    // The route's GEMM reads no scales (they are in the F16 values), nor
    // does a GEMM of 16-bit operands.
    return !decodesSeparately() && !denseOperands() &&
           op.type.getLayout() == ScaleLayout::Linear &&
           scaleStaging == GemmScaleStaging::AsStored;
  }
  /// Arrivals that complete a phase of a "full" barrier: the producer's
  /// expect_tx, plus one after re-laid scales were stored.
  int64_t fullArrivals() const {
    return scaleStaging == GemmScaleStaging::Atoms128x4 ? 2 : 1;
  }
  /// Arrivals that complete a phase of an "empty" barrier.
  int64_t emptyArrivals() const {
    if (stageRelease == GemmStageRelease::Tcgen05Commit)
      return 1;
    // With decoder warpgroups only the decoders read the FP4 stages; one
    // lane of each of their warps arrives.
    return decodedStages ? decoderWarpgroups * 4 : consumerWarps * 32;
  }
  /// First byte of the barrier area that the pipeline's barriers leave
  /// free (for a consumer's own barriers and slots).
  int64_t freeBarrierByte() const { return 16 * stages; }

  int64_t kSteps() const { return k / tileK; }
  /// Bits of one code (4: E2M1, NVFP4 and MXFP4; 8: MXFP8) and elements
  /// per scale block along K (16: NVFP4; 32: MX) of the operands: the
  /// format of the block-scaled family the plan multiplies (makeGemmPlan).
  int64_t codeBits = 4;
  int64_t scaleBlockK = 16;
  /// Bytes of one row of codes in a stage (tileK / 2 for E2M1, tileK for
  /// MXFP8), and the TMA swizzle span of the code tiles: the same number
  /// (128 or 64).
  int64_t codesRowBytes() const { return tileK * codeBits / 8; }
  /// The innermost coordinate of K step 1 in the codes' tensor map: bytes
  /// (the codes' maps are over bytes), or with denseOperands elements.
  int64_t codesMapStep() const {
    return denseOperands() ? tileK : codesRowBytes();
  }
  /// Scale bytes of one row per K step (tileK / 16 for NVFP4). A stage
  /// holds linear scales in rows of kStageScaleRowBytes all the same (a TMA
  /// box's inner extent is a multiple of 16 bytes, 8 bytes cannot be
  /// copied alone).
  int64_t scaleStepBytes() const { return tileK / scaleBlockK; }
  /// With tileK = 128, linear scales copied by TMA arrive once per pair of
  /// K steps: the even step's stage receives the 16 bytes of both (the box
  /// at the even step's first byte), the odd step's stage none. The
  /// consumers then read the odd step's scales from the even step's stage
  /// and release both stages after the odd step (needs an even number of
  /// stages and K steps). So a stage moves no scale byte twice.
  bool pairsScaleSteps() const {
    return tileK == kGemmTileKHalf &&
           (scalesByTensorMap(a) || scalesByTensorMap(b));
  }
  /// 128x4 scale atoms (512 bytes, 4 blocks) per 128 rows and K step: 4
  /// or 2 for NVFP4, 2 for MXFP4, 1 for MXFP8 (128-byte code rows).
  int64_t scaleAtomsPerStep() const { return scaleStepBytes() / 4; }
  /// The K steps one CTA walks (all of them unless split-K).
  int64_t kStepsPerCTA() const { return kSteps() / splitK; }
  /// Tiles of C over all batch elements.
  int64_t tiles() const {
    return batch * ((m + tileM - 1) / tileM) * ((n + tileN - 1) / tileN);
  }
  /// What the persistent scheduler walks: tiles, or with clusters groups
  /// of clusterM vertically adjacent tiles (the last may reach past M).
  int64_t clusterTiles() const {
    int64_t mTiles = (m + tileM - 1) / tileM;
    return batch * ((mTiles + clusterM - 1) / clusterM) *
           ((n + tileN - 1) / tileN);
  }
  int64_t threads() const {
    if (skinny())
      return skinnyWarps * 32;
    if (decodesSeparately()) // the consumers and one TMA warp
      return (consumerWarps + 1) * 32;
    if (decodedStages)
      return 128 * (decoderWarpgroups + consumerWarps / 4);
    return (consumerWarps + 1) * 32;
  }
  /// The dynamic shared memory to request: the kernel rounds the base up
  /// to kSwizzleRepeatBytes, which may skip up to that many bytes.
  int64_t sharedMemoryBytes() const {
    if (skinny()) // static shared memory only
      return 0;
    if (consumerSharedBytes)
      return kSwizzleRepeatBytes + consumerSharedOffset() +
             consumerSharedBytes;
    return kSwizzleRepeatBytes + barrierBytes + stages * stageBytes;
  }
  /// Byte offset of the consumer's shared memory from the aligned base:
  /// after the stages and the barrier area, rounded up to a swizzle
  /// pattern.
  int64_t consumerSharedOffset() const {
    return stages * stageBytes +
           (barrierBytes + kSwizzleRepeatBytes - 1) / kSwizzleRepeatBytes *
               kSwizzleRepeatBytes;
  }
  int64_t producerWarp() const { return consumerWarps; }
  /// The grid: (N tiles, M tiles, batch x splitK), or (min(tiles, maxCTAs),
  /// 1, 1) when persistent.
  std::array<int64_t, 3> grid() const;
};

/// Why the tensor-core GEMM cannot take this matmul, or "" when it can.
std::string tensorCoreGemmUnsupportedReason(
    const ::nvfp4::target::ChipInfo &chip, BlockScaledTensorType lhs,
    BlockScaledTensorType rhs);

/// The schedule the lowering takes for this GEMM on `chip` when none is
/// forced: the chip's default tile, stages and threads (Chip.cpp).
GemmSchedule chooseGemmSchedule(const ::nvfp4::target::ChipInfo &chip,
                                BlockScaledTensorType lhs,
                                BlockScaledTensorType rhs);

/// The plan for `chip` and `schedule`; call only when
/// tensorCoreGemmUnsupportedReason is empty. With `operandElement` (bf16)
/// the operands are 16-bit matrices of lhs's and rhs's shapes (the types
/// only carry them): stages of tileK-element rows and no scales
/// (GemmPlan::denseOperands).
GemmPlan makeGemmPlan(const ::nvfp4::target::ChipInfo &chip,
                      const GemmSchedule &schedule, BlockScaledTensorType lhs,
                      BlockScaledTensorType rhs, Type resultElement,
                      Type operandElement = Type());

/// Emits the parts of a pipelined GEMM kernel body that do not depend on
/// the MMA instruction. Integer values are i32 unless said otherwise;
/// pointers are LLVM pointers (global: address space 1, shared: 3).
class GemmPipelineEmitter {
public:
  /// `args` are the kernel arguments: codesA, scalesA, amaxA, codesB,
  /// scalesB, amaxB, alpha, C (and amaxC with GemmPlan::outputAmax; codesC,
  /// scalesC, amaxC with GemmPlan::quantizeOutput) --
  /// codes as tensor maps, scales as tensor maps where
  /// GemmPlan::scalesByTensorMap, otherwise as buffers. Construct it at the
  /// start of the kernel: it creates the thread's amax register there.
  GemmPipelineEmitter(OpBuilder &b, Location loc, const GemmPlan &plan,
                      ValueRange args);

  // --- small i32 helpers, shared with the consumers -----------------------
  Value c32(int64_t v);
  Value add(Value x, Value y);
  Value mul(Value x, Value y);
  Value shl(Value x, int64_t bits);
  Value lshr(Value x, int64_t bits);
  Value andi(Value x, int64_t mask);
  Value ult(Value x, Value y);
  Value eq(Value x, int64_t y);
  /// Byte address `base + offset` (offset i32) in `base`'s address space.
  Value offsetPtr(Value base, Value offset);
  Value offsetPtr(Value base, int64_t offset) {
    return offsetPtr(base, c32(offset));
  }

  // --- the skeleton --------------------------------------------------------
  Value threadId() const { return tid; }
  Value warpId() const { return warp; }
  Value laneId() const { return lane; }
  /// Row of the first A row / B row of this CTA's tile (i32), and the batch
  /// element.
  Value tileRowA() const { return rowA0; }
  Value tileRowB() const { return rowB0; }
  Value batchIndex() const { return batchIdx; }

  /// Shared-memory address of stage `stage` (i32 value).
  Value stagePtr(Value stage);
  Value fullBarrier(Value stage);
  Value emptyBarrier(Value stage);
  /// Shared memory at byte `offset` of the barrier area, which follows the
  /// stages: full[stages], empty[stages], then what a consumer adds from
  /// GemmPlan::freeBarrierByte() on.
  Value sharedPtr(int64_t offset) {
    return offsetPtr(smem, plan.stages * plan.stageBytes + offset);
  }

  /// Thread 0 initializes the barriers; then the whole CTA synchronizes.
  void initBarriers();
  /// One TMA tensor copy of the box of `map` at `coordinates` (innermost
  /// first) to shared memory `destination`, completing on `barrier`.
  void tensorCopy(Value map, Value destination, ValueRange coordinates,
                  Value barrier);
  /// The codes' tensor maps (with the route: of the F16 scratch).
  Value codesMapA() const { return codesA; }
  Value codesMapB() const { return codesB; }
  /// The producer warp's loop over K steps (emit inside `if warp ==
  /// producerWarp`).
  void emitProducer();
  /// With clusters: this CTA's rank in its cluster (i32), the address of
  /// `barrier` (shared) in the CTA of rank `rank`, a barrier.cluster
  /// arrive + wait of every thread, and a tensor copy multicast to every CTA
  /// of the cluster (data and complete_tx at the same offsets there).
  Value clusterRank();
  Value peerBarrier(Value barrier, Value rank);
  void clusterSync();
  void tensorCopyMulticast(Value map, Value destination, ValueRange coordinates,
                           Value barrier);
  /// The producer warp's loop for persistent plans: the K steps of every
  /// tile this CTA walks (tilesOfThisCTA, in the grouped order of
  /// tileCoords), one ring of stages across tiles, so the copies of tile
  /// i + 1 start while tile i's MMAs run. The ring step is tile * kSteps +
  /// kStep; a consumer counts the same way.
  void emitPersistentProducer();
  // --- tcgen05 cta_group::2 (GemmSchedule::ctaGroup == 2) -------------------
  /// The pair's leader (rank 0 of the cluster of 2): its copy of the shared
  /// barrier `barrier` (mapa), as the shared::cluster address the
  /// cta_group::2 tensor copy takes in its mbarrier operand.
  Value leaderBarrier(Value barrier);
  /// A tensor copy into this CTA's `destination` that completes on the
  /// leader's barrier (`cp.async.bulk.tensor...cta_group::2`): the leader's
  /// "full" barrier then tracks the code bytes of both CTAs, and its MMA
  /// thread waits on it alone.
  void tensorCopyToLeader(Value map, Value destination, ValueRange coordinates,
                          Value leaderFull);
  /// The producer warp of each CTA of a pair (persistent): per ring step it
  /// waits on its own "empty" (the leader's multicast tcgen05.commit
  /// releases both), copies its A rows and its half of B's code rows with
  /// cta_group::2 tensor copies completing on the leader's "full", and its
  /// scales (all of B's rows: each CTA's MMA half reads every column's
  /// scales from its own Tensor Memory) onto its own "full".
  void emitPairProducer();
  /// The peer CTA's (rank 1) otherwise idle MMA warp: per ring step it
  /// waits until its own "full" saw its scales, then arrives on the
  /// leader's "full" (.release.cluster): the leader's third arrival.
  void emitPairForwarder();

  /// Makes the tensor maps written by the runtime visible to the TMA; once,
  /// by the thread that issues the copies, before the first one.
  void acquireTensorMaps();
  /// From one thread: announces the bytes of K step `kStep` of the tile at
  /// (`batch`, `tileRowA`, `tileRowB`) on the "full" barrier of `stage` and
  /// issues its copies into that stage (with GemmScaleStaging::AsStored: no
  /// producer-lane work).
  void issueStepCopies(Value stage, Value kStep, Value batch, Value tileRowA,
                       Value tileRowB);

  // --- the tile scheduler (persistent plans) -------------------------------
  /// The coordinates of tile `linearTile` (i32, < plan.tiles()) in the
  /// grouped order: its batch element and first rows of A and B.
  struct TileCoords {
    Value batch, rowA, rowB;
  };
  TileCoords tileCoords(Value linearTile);
  /// How many tiles this CTA walks (i32): ceil((tiles - blockIdx.x) /
  /// gridDim.x); with clusters, of the cluster tiles by cluster index.
  Value tilesOfThisCTA();
  /// The linear index of this CTA's `i`-th tile.
  Value linearTileOf(Value i);
  /// Makes the epilogue helpers (storeOutput, ...) address tile `tile`.
  void setTile(const TileCoords &tile) {
    batchIdx = outputBatch = tile.batch;
    rowA0 = tile.rowA;
    rowB0 = tile.rowB;
  }
  /// The first K step this CTA walks (split-K: its split's; else 0).
  Value firstKStep() const { return kBegin; }
  /// Blocks until stage `kStep % stages` holds K step `kStep`.
  void waitFull(Value kStep);
  /// This thread is done reading stage `kStep % stages`.
  void releaseStage(Value kStep);
  /// Shared-memory byte offset (i32, relative to the stage base) of byte
  /// `byteInRow` (0..127) of the codes of `tileRow`: the 128-byte swizzle.
  Value codesOffset(const GemmOperand &op, Value tileRow, Value byteInRow);
  /// Shared-memory byte offset (i32) of the scale of `tileRow` (a row of
  /// the operand's tile) and block `block` (0..15) of the current K step,
  /// relative to the stage base.
  Value scaleOffset(const GemmOperand &op, Value tileRow, Value block);
  /// The wgmma shared-memory matrix descriptor of a K-major tile with the
  /// 128-byte swizzle (128-byte rows, 8-row groups 1024 bytes apart, as the
  /// TMA and the sm_90a decoders write them) at shared address `address`
  /// (i32, 1024-byte aligned pattern); a k16 step of 2-byte elements is +2.
  Value swizzle128Descriptor(Value address);
  /// alpha * amaxA * amaxB / (36 * 448^2), the factor the epilogue applies.
  Value epilogueScale();
  /// Stores `value` (f32, before scaling by `scale`) at C[row, col] of this
  /// CTA's tile if (row, col) is inside the matrix.
  void storeOutput(Value tileRow, Value tileCol, Value value, Value scale);
  /// Stores the FP32 values whose bits are the i32 vector `bits` (before
  /// scaling by `scale`) at C[row, col0 ..] of this CTA's tile with one
  /// vector store; the caller knows they are all inside the matrix.
  void storeOutputRow(Value tileRow, Value tileCol0, Value bits, Value scale);
  /// Stores the FP32 values `c` of mma.sync m16n8 accumulator fragments,
  /// four per fragment, of consecutive n8 blocks whose first starts at
  /// (tileRow0, tileCol0): lane (g, t) holds rows g and g + 8, columns 2t
  /// and 2t + 1 of each (PTX ISA 9.7.14.5; wgmma's m64nN accumulator is
  /// the same per warp).
  void storeMmaFragment(Value tileRow0, Value tileCol0, ValueRange c,
                        Value scale);
  /// With GemmPlan::quantizeOutput: the tensor scale of argument 9's amax.
  ScalarBuilder::TensorScale outputTensorScale();
  /// With GemmPlan::quantizeOutput: quantizes the 16 FP32 accumulators
  /// `values` (before `scale`) of C[row, col0 .. col0 + 15] of this CTA's
  /// tile, all held by this thread, and stores their codes (8 bytes) and
  /// scale; the caller knows the block is inside the matrix.
  void storeQuantizedRun(Value tileRow, Value tileCol0, ArrayRef<Value> values,
                         Value scale,
                         const ScalarBuilder::TensorScale &tensorScale);
  /// With GemmPlan::quantizeOutput: quantizes the two adjacent mma.sync
  /// m16n8 accumulator fragments `c` (8 values: columns tileCol0 .. + 7,
  /// then + 8 .. + 15) whose tile starts at (tileRow0, tileCol0): each
  /// 16-column block of a row is spread over the 4 lanes of a quad, which
  /// reduce its amax with two shuffles. Every lane of the warp must call it;
  /// it checks the bounds itself.
  void storeQuantizedFragments(Value tileRow0, Value tileCol0, ValueRange c,
                               Value scale,
                               const ScalarBuilder::TensorScale &tensorScale);
  /// The TMA-store epilogue (GemmPlan::tmaStore): stores the FP32 values
  /// `c` (before `scale`) of a warp's m16 accumulator fragments -- four
  /// registers per n8 block, consecutive blocks from column tileCol0 of the
  /// tile, rows tileRow0 .. + 15 -- through this warp's two staging buffers at
  /// `staging` (shared, kTmaStoreBuffers x kTmaStoreBufferBytes, 1024-byte
  /// aligned) in chunks of 128 bytes of columns: lane 0 waits until the
  /// bulk store that read a buffer before is done reading it
  /// (cp.async.bulk.wait_group.read 1), the lanes write the chunk
  /// (swizzled, conflict-free: stmatrix.x4 for 16-bit C, 8-byte st.shared
  /// for FP32), fence.proxy.async.shared::cta, and lane 0
  /// issues cp.async.bulk.tensor.3d.global.shared::cta and commits it. The
  /// map clips what lies past M and N; the output amax counts only what is
  /// inside. Every lane of the warp calls it; chunk i goes to buffer
  /// (firstChunk + i) % 2, so a warp that stores several row blocks passes
  /// the chunks it stored before; the chunks of a tile are an even number,
  /// so the buffers alternate across tiles too.
  void storeMmaFragmentByTensorCopy(Value tileRow0, Value tileCol0,
                                    ValueRange c, Value scale, Value staging,
                                    int64_t firstChunk = 0);
  /// The TMA-store epilogue of a kernel whose lanes each hold one row of C
  /// (tcgen05.ld.32x32b: lane l of a warp holds row tileRow0 + l of the
  /// tile): a warp's 32 rows x 128 bytes of C are staged in one buffer of
  /// kRowStagingBufferBytes (shared, 1024-byte aligned, the 128-byte
  /// swizzle of C's tensor map) and stored as two kTmaStoreRows boxes.
  /// stageRow writes this lane's values `bits` (an i32 vector of FP32
  /// bits, before `scale`: C's columns tileCol0 .., 16-byte multiples of
  /// C) at byte `rowByte` of its row: one st.shared.v4 per 16 bytes, at
  /// chunk position q ^ (lane % 8), so each 8-lane phase hits 8 different
  /// 16-byte bank groups. The output amax counts only what lies inside C.
  void stageRow(Value buffer, Value tileRow0, Value tileCol0, int64_t rowByte,
                Value bits, Value scale);
  /// Lane 0 waits until the bulk store that read a warp's buffer before
  /// (kTmaStoreBuffers chunks ago) is done reading it; then the warp syncs.
  /// Call it before stageRow into that buffer.
  void waitStagingBuffer();
  /// After the warp's stageRow calls of a chunk: fence.proxy.async, the
  /// warp syncs, and lane 0 stores the buffer's 32 rows to C at (tileRow0,
  /// tileCol0) of the tile with two cp.async.bulk.tensor.3d (rows 0-15 and
  /// 16-31, clipped at M and N by the map) and commits them as one group.
  void storeStagedRows(Value buffer, Value tileRow0, Value tileCol0);
  /// The TMA-store epilogue: makes C's tensor map visible to the TMA; once,
  /// by lane 0 of each storing warp, before its first store.
  void acquireOutputTensorMap();
  /// The TMA-store epilogue: lane 0 of a storing warp waits until its bulk
  /// stores are complete (before the CTA exits and its shared memory goes).
  void finishTensorStores();
  /// With GemmPlan::outputAmax, reduces the amax of what this thread
  /// stored over its warp and adds it to C's amax with one atomic max;
  /// otherwise nothing. Every lane of a warp that stores calls it once,
  /// after its last store (converged).
  void finishOutputAmax();

  OpBuilder &b;
  Location loc;
  const GemmPlan &plan;

private:
  void copyOperand(const GemmOperand &op, Value codes, Value scales,
                   Value batch, Value tileRow0, Value kStep, Value stage,
                   Value barrier);
  Value validRows(const GemmOperand &op, Value tileRow0);
  /// The bytes the copies of `op` deliver to one stage; with
  /// GemmPlan::pairsScaleSteps an odd K step's stage receives no linear
  /// scales.
  int64_t txBytes(const GemmOperand &op, bool oddStep = false);
  /// Folds |stored| (a scalar or vector of C's element type) into the
  /// thread's amax register.
  void noteStored(Value stored);
  /// `acc * scale` rounded to C's element type and widened back to f32:
  /// the value the quantization of C sees.
  Value roundedOutput(Value acc, Value scale);
  /// Stores one byte of codes of C[row, col] (absolute; col even) if
  /// `inside`.
  void storeCodes(Value row, Value col, Value codes, Value inside);
  /// The producer lanes' part of a step with GemmScaleStaging::Atoms128x4:
  /// re-lay the linear scales of the tile at (`batch`, `tileRowA`,
  /// `tileRowB`) into stage `stage`, fence, and the second arrival on its
  /// "full" barrier. Every producer lane calls it.
  void relayScales(Value stage, Value kStep, Value batch, Value tileRowA,
                   Value tileRowB);
  /// The bulk copies of a swizzled operand's 128x4 scale atoms of K step
  /// `kStep` into the stage at `stageBase`, completing on `barrier`.
  void copyScaleAtoms(const GemmOperand &op, Value scales, Value batch,
                      Value tileRow0, Value kStep, Value stageBase,
                      Value barrier);
  /// cta_group::2: announces and issues this CTA's copies of K step
  /// `kStep` (emitPairProducer).
  void issuePairStepCopies(Value stage, Value kStep, Value batch,
                           Value tileRowA, Value tileRowB);
  void stageScalesAsAtoms(const GemmOperand &op, Value scales, Value batch,
                          Value tileRow0, Value kStep, Value stageBase);

  ValueRange args;
  Value tid, warp, lane, batchIdx, rowA0, rowB0;
  /// The batch index of C the epilogue addresses: batchIdx, or with
  /// split-K batchIdx * splitK + split (the workspace's [batch, splitK]).
  Value outputBatch;
  Value kBegin;
  Value smem; ///< shared-memory base pointer, kSwizzleRepeatBytes aligned
  /// The f32 max |C| this thread stored (a one-element private buffer
  /// that LLVM promotes to a register), with GemmPlan::outputAmax.
  Value storedAmax;
  /// Tensor maps (generic pointers) or global buffers, per GemmPlan.
  Value codesA, scalesA, codesB, scalesB;
};

/// Builds a kernel of `plan.threads()` threads in which the last warp runs
/// the pipeline's producer and the others `consumer` (after the barriers
/// are initialized): the skeleton of the sm_90a and sm_120a kernels.
gpu::GPUFuncOp
buildProducerConsumerKernel(ModuleOp module, const GemmPlan &plan,
                            TypeRange argTypes, StringRef name,
                            function_ref<void(GemmPipelineEmitter &)> consumer);

/// The kernel argument types of a tensor-core GEMM for `plan`, given the
/// buffer types of the SIMT kernel's arguments (codesA, scalesA, amaxA,
/// codesB, scalesB, amaxB, alpha, C): codes, and scales that
/// GemmPlan::scalesByTensorMap, become tensor-map descriptors.
SmallVector<Type> gemmKernelArgTypes(const GemmPlan &plan,
                                     TypeRange bufferTypes);

/// The tensor-map descriptor type of the codes (`scales` false) or the
/// linear scales of `op`: the box one stage receives. With the route, the
/// codes' map is over the F16 scratch: a box of [1, tile rows, kDecodedK]
/// F16 values.
Type gemmTensorMapType(const GemmPlan &plan, const GemmOperand &op,
                       bool scales);

/// The TMA-store epilogue (GemmSchedule::tmaStore): each consumer warp
/// stages 16 rows of C (its rows of an m16 accumulator fragment) x 128
/// bytes in each of two buffers, so the st.shared of one column chunk
/// overlaps the bulk store of the one before.
constexpr int64_t kTmaStoreRows = 16;
constexpr int64_t kTmaStoreRowBytes = 128;
constexpr int64_t kTmaStoreBuffers = 2;
constexpr int64_t kTmaStoreBufferBytes = kTmaStoreRows * kTmaStoreRowBytes;

/// The row-per-lane TMA-store epilogue (GemmPipelineEmitter::stageRow):
/// per warp kTmaStoreBuffers buffers of 32 rows (a warp's lanes) x 128
/// bytes, each stored as two boxes of C's tensor map.
constexpr int64_t kRowStagingRows = 32;
constexpr int64_t kRowStagingBufferBytes = kRowStagingRows * kTmaStoreRowBytes;

/// The tensor map of C ([batch, M, N] elements of plan.resultElement) for
/// the TMA-store epilogue: a box of kTmaStoreRows x 128 bytes with the
/// 128-byte swizzle.
Type gemmOutputTensorMapType(const GemmPlan &plan);

/// Why `plan`'s C cannot be stored by tensor copies, or "" when it can (or
/// the plan does not ask for it).
std::string gemmTmaStoreUnsupportedReason(const GemmPlan &plan);

/// The tensor map (`mapType`, a !nvgpu.tensormap.descriptor) of the flat
/// device `buffer` viewed as [batch, rows, rowElements], created by the
/// host before the launch: the GEMM operands' and C's maps.
Value createTensorMap(OpBuilder &b, Location loc, Value buffer, int64_t batch,
                      int64_t rowElements, Type mapType);

/// The shared memory buildWgmmaGemmKernel adds to `plan`
/// (GemmPlan::consumerSharedBytes).
int64_t wgmmaGemmSharedBytes(const GemmPlan &plan);

/// Builds the sm_90a kernel with wgmma: two consumer warpgroups decode each
/// K step once per CTA -- B to BF16 in shared memory (the K-major 128-byte
/// swizzle layout of a wgmma descriptor), A to BF16 registers in the wgmma
/// A fragment layout -- and multiply with wgmma.mma_async m64n128k16 (FP32
/// accumulation). Needs plan.consumerSharedBytes = wgmmaGemmSharedBytes.
/// Defined in WgmmaMatmul.cpp.
gpu::GPUFuncOp buildWgmmaGemmKernel(ModuleOp module, const GemmPlan &plan,
                                    TypeRange argTypes, StringRef name);

/// Why buildWgmmaGemmKernel cannot take `plan`, or "" when it can.
std::string wgmmaGemmUnsupportedReason(const GemmPlan &plan,
                                       int64_t maxSharedMemoryBytes);

/// K elements of one decoded stage of the sm_90a decoder-warpgroup kernel:
/// 64 F16 values = one 128-byte swizzle row per tile row.
constexpr int64_t kDecodedK = 64;

/// The shared memory buildDecodeWgmmaGemmKernel adds to `plan`
/// (GemmPlan::consumerSharedBytes): its decoded stages.
int64_t decodeWgmmaGemmSharedBytes(const GemmPlan &plan);

/// Why buildDecodeWgmmaGemmKernel cannot take `plan`, or "" when it can.
std::string decodeWgmmaGemmUnsupportedReason(const GemmPlan &plan,
                                             int64_t maxSharedMemoryBytes);

/// Builds the sm_90a kernel with decoder warpgroups (plan.decodedStages >
/// 0): the decoder warpgroups fill the FP4 ring with TMA copies and decode
/// each K step into F16 tiles of A and B in shared memory (the exact values
/// code x block scale); two consumer warpgroups multiply them with
/// wgmma.mma_async m64nNk16 (both operands from shared memory, FP32
/// accumulation) and run the epilogue. Needs plan.consumerSharedBytes =
/// decodeWgmmaGemmSharedBytes. Defined in DecodeWgmmaMatmul.cpp.
gpu::GPUFuncOp buildDecodeWgmmaGemmKernel(ModuleOp module,
                                          const GemmPlan &plan,
                                          TypeRange argTypes, StringRef name);

/// The plan of the BF16 GEMM C[batch, m, n] = alpha * A B^T (A [batch, m,
/// k], B [batch, n, k], BF16, row-major) fed by TMA from the operands (K
/// zero-padded to the K step by the tensor maps): on sm_90a the route's
/// kernel (GemmPlan::operandElement = BF16; 128 x 128 or 128 x 256 tiles, 4
/// decoded stages, persistent), on sm_100a/sm_103a the tcgen05 kernel
/// (.kind::f16, 128 x 128 x 64, 6 stages), on sm_120a the mma.sync kernel
/// (m16n8k16 .bf16, 128 x 128 x 32, 6 stages) -- or nothing with `whyNot`
/// set (the shape, or no kernel for the chip: hasBF16GemmKernel). Defined
/// in BF16Gemm.cpp.
std::optional<GemmPlan> planBF16Gemm(const ::nvfp4::target::ChipInfo &chip,
                                     int64_t batch, int64_t m, int64_t n,
                                     int64_t k, Type resultElement,
                                     std::string &whyNot);

/// Launches the BF16 GEMM of `plan` (planBF16Gemm) on the flat BF16 device
/// buffers `lhs` and `rhs` (K = `k` elements a row) into the flat buffer
/// `result`, scaled by the f32 `alpha`; the kernel is named
/// `name`_wgmma_<schedule> (sm_90a), `name`_tcgen05_<schedule> (sm_100a,
/// sm_103a) or `name`_mma_<schedule> (sm_120a). With `outputAmax` (a
/// zero-filled memref<1xi32>) the epilogue also writes max |C| there
/// (GemmPlan::outputAmax; `name` must then differ from the kernel's without
/// it). Defined in BF16Gemm.cpp.
void launchBF16Gemm(OpBuilder &b, Location loc, ModuleOp module,
                    const GemmPlan &plan, int64_t k, Value lhs, Value rhs,
                    Value alpha, Value result, StringRef name,
                    Value outputAmax = {});

/// Whether `chip` has a block-scaled tensor-core GEMM for MX operands
/// (MXBlockScaledGemm.cpp): tcgen05 .kind::mxf8f6f4 / .kind::mxf4 on
/// sm_100a and sm_103a.
bool hasMXBlockScaledGemm(const ::nvfp4::target::ChipInfo &chip);

/// The plan of the MX GEMM C = alpha * A B^T of MX operands `lhs` and
/// `rhs` on `chip`'s block-scaled MMA: 128 x 128 tiles, a K step of 128
/// code bytes a row (128 MXFP8 or 256 MXFP4 elements), persistent where
/// the tiles exceed the SMs; or nothing, with `whyNot` saying why (mixed
/// MXFP8 x MXFP4, K, the chip). Defined in MXBlockScaledGemm.cpp.
std::optional<GemmPlan>
planMXBlockScaledGemm(const ::nvfp4::target::ChipInfo &chip,
                      BlockScaledTensorType lhs, BlockScaledTensorType rhs,
                      Type resultElement, std::string &whyNot);

/// Launches the MX GEMM of `plan` (planMXBlockScaledGemm) on the converted
/// operands `lhs` and `rhs` (codes, scales, amax) into the device buffer
/// `result`, scaled by the f32 `alpha`; the kernel is named
/// `name`_tcgen05_<schedule> (sm_120a: `name`_mma_sync_<schedule>). With
/// `outputAmax` (a zero-filled memref<1xi32>) the epilogue also writes
/// max |C| there, as for NVFP4 (`name` must then differ from the kernel's
/// without it). Defined in MXBlockScaledGemm.cpp.
void launchMXBlockScaledGemm(OpBuilder &b, Location loc, ModuleOp module,
                             const GemmPlan &plan, ValueRange lhs,
                             ValueRange rhs, Value alpha, Value result,
                             StringRef name, Value outputAmax = {});

/// Builds the sm_100a/sm_103a kernel: the shared pipeline (codes in the
/// 128-byte swizzle, scales as 128x4 atoms) feeding one MMA warp that
/// moves the scales to Tensor Memory with tcgen05.cp and issues
/// tcgen05.mma.cta_group::1.kind::mxf4nvf4.block_scale.block16 (or, for
/// the CTA pair, .cta_group::2 from the leader CTA; with denseOperands
/// .kind::f16 and no scales), and four epilogue warps that read the
/// accumulator with tcgen05.ld. Defined in Tcgen05Matmul.cpp.
gpu::GPUFuncOp buildTcgen05GemmKernel(ModuleOp module, const GemmPlan &plan,
                                      TypeRange argTypes, StringRef name);

/// Why buildTcgen05GemmKernel cannot take `plan` (its encodings, Tensor
/// Memory columns or barrier slots do not fit), or "" when it can.
std::string tcgen05GemmUnsupportedReason(const GemmPlan &plan);

/// The shared memory buildTcgen05GemmKernel adds to `plan`
/// (GemmPlan::consumerSharedBytes): with the TMA-store epilogue, the four
/// epilogue warps' staging buffers (kTmaStoreBuffers x
/// kRowStagingBufferBytes each, 32 KiB), else nothing.
int64_t tcgen05GemmSharedBytes(const GemmPlan &plan);

/// Builds the small-M kernel (GemmSchedule::skinnyWarps > 0): the CTA's
/// warps split K, decode their chunks of A and B from global memory into
/// F16 registers and multiply with mma.sync.m16n8k16 (C^T = B A^T), then
/// add their partial sums in shared memory. Takes the SIMT kernel's buffer
/// arguments (no tensor maps). Defined in SkinnyMatmul.cpp.
gpu::GPUFuncOp buildSkinnyGemmKernel(ModuleOp module, const GemmPlan &plan,
                                     TypeRange argTypes, StringRef name);

/// Why buildSkinnyGemmKernel cannot take `plan`, or "" when it can.
std::string skinnyGemmUnsupportedReason(const GemmPlan &plan);

/// The most warps, at most `preferred`, that divide K's 128-element chunks
/// evenly (the skinny kernel's split of K inside a CTA).
int64_t skinnyGemmWarps(int64_t k, int64_t preferred);
/// The sm_100a/sm_103a rule (docs/Blackwell.md sections 8 and 9): the CTA
/// pair (cta_group::2) where it needs fewer waves than `base` (the chip's
/// 128 x 128 tile) by more than its exposed epilogue; else `base`,
/// persistent when its tiles exceed the SMs, with the K = 96 MMA and 6
/// stages where the chip has it and K is a multiple of 768.
/// Defined in Tcgen05Matmul.cpp.
GemmSchedule chooseTcgen05Schedule(const ::nvfp4::target::ChipInfo &chip,
                                   BlockScaledTensorType lhs,
                                   BlockScaledTensorType rhs,
                                   GemmSchedule base);

/// Builds the sm_120a kernel: the shared pipeline with consumers that feed
/// the codes and the scales (in registers) to mma.sync.m16n8k64
/// .kind::mxf4nvf4.block_scale.scale_vec::4X (with denseOperands: BF16
/// fragments to mma.sync.m16n8k16 .bf16, no scales). Defined in
/// MmaBlockScaleMatmul.cpp.
gpu::GPUFuncOp buildMmaBlockScaleGemmKernel(ModuleOp module,
                                            const GemmPlan &plan,
                                            TypeRange argTypes,
                                            StringRef name);

/// The sm_120a rule (docs/Blackwell.md section 7): `base` (the chip's
/// 128x128x128_s4), with the TMA-store epilogue where C's rows are
/// multiples of 16 bytes. Defined in MmaBlockScaleMatmul.cpp.
GemmSchedule chooseMmaBlockScaleSchedule(const ::nvfp4::target::ChipInfo &chip,
                                         BlockScaledTensorType lhs,
                                         BlockScaledTensorType rhs,
                                         GemmSchedule base);

/// Why buildMmaBlockScaleGemmKernel cannot take `plan`, or "" when it can.
std::string mmaBlockScaleGemmUnsupportedReason(const GemmPlan &plan,
                                               int64_t maxSharedMemoryBytes);

} // namespace kernels
} // namespace nvfp4
} // namespace mlir

#endif // NVFP4_LIB_CONVERSION_NVFP4TOGPU_GEMMPIPELINE_H
