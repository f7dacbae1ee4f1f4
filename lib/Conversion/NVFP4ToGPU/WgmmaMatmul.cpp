//===- WgmmaMatmul.cpp - NVFP4 GEMM on Hopper with wgmma
//-------------------===//
//
// Part of the nvfp4 project.
//
// sm_90a has no FP4 tensor-core instruction: the consumers of the shared
// pipeline (GemmPipeline.h) turn each E2M1 code and its E4M3 block scale into
// the exact BF16 value code * scale and multiply with wgmma BF16 -> FP32.
// Unlike the mma.sync kernel, every element is decoded once per CTA:
//
//   * two consumer warpgroups (warps 0-3 and 4-7) own 64 rows of the
//     128-row tile each; the producer warp (8) is the shared pipeline's;
//   * a K step (256) is 4 sub-steps of 64. Per sub-step the 256 consumer
//     threads decode the whole B tile (128 N rows x 64 K) into one of three
//     shared-memory buffers laid out as wgmma's K-major operand with the
//     128-byte swizzle (128 bytes of BF16 per row, 8-row groups 1024 bytes
//     apart); each thread decodes its own A rows straight into the wgmma
//     register fragment of A (PTX ISA "register fragment A": warp w of the
//     warpgroup holds rows 16w.., lane (g, t) rows g and g + 8, k = 2t.. and
//     2t + 8..);
//   * fence.proxy.async + a named barrier of the 256 consumer threads make
//     the B buffer visible to the tensor cores; wgmma.fence, four
//     wgmma.mma_async m64n128k16 (A from registers, B by descriptor),
//     commit_group, then wait_group 1: the next sub-step's decode overlaps
//     the running MMAs. Three buffers: when a thread passes sub-step s's
//     barrier, every consumer thread has waited for sub-step s - 2's MMAs,
//     so buffer (s + 1) % 3 is free;
//   * exactness: an E2M1 value has 2 significant bits and an E4M3 scale 4,
//     so code * scale has at most 6 and lies in [2^-10, 2688]: BF16 holds it
//     exactly, and BF16 x BF16 products are exact in the FP32 accumulator.
//     Only the FP32 summation order differs from docs/Numerics.md (the
//     integration tests bound the difference);
//   * the E2M1 -> BF16 decode is a byte table lookup with `prmt` (two tables
//     for the low and the high byte of the 8 magnitudes, signs spread with
//     prmt's sign-replicate mode), then one mul.bf16x2 by the scale (decoded
//     exactly through FP32);
//   * K is permuted identically for A and B: lane (g, t) decodes block
//     4q + t (16 codes, one 8-byte load) of sub-step q and puts codes
//     4i..4i+3 into the slots k = 2t, 2t + 1, 2t + 8, 2t + 9 of the k16
//     step i; the B decode writes the same codes of B rows to the same
//     slots. A dot product is the same sum whatever the order of k.
//
// MLIR's nvvm.wgmma.mma_async takes A by descriptor only, so the MMA is
// inline PTX (64 FP32 accumulators in and out, 4 A registers, B's
// descriptor).
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

constexpr int64_t kWarpgroups = 2;
constexpr int64_t kWarpgroupRows = 64; ///< wgmma M
constexpr int64_t kSubK = 64;          ///< K elements per sub-step
constexpr int64_t kSubSteps = kGemmTileK / kSubK;
constexpr int64_t kMmaK = 16;             ///< wgmma K for BF16
constexpr int64_t kBRowBytes = kSubK * 2; ///< one B row of BF16 per sub-step
constexpr int64_t kBBuffers = 3;
constexpr int64_t kAccumulators = 64; ///< 64 x 128 FP32 over 128 threads
/// The named barrier of the consumer threads (0 is __syncthreads).
constexpr int64_t kConsumerBarrier = 1;

static_assert(kBRowBytes == 128, "one B row is one 128-byte swizzle row");

// BF16 of the E2M1 magnitudes 0, 0.5, 1, 1.5, 2, 3, 4, 6 (codes 0..7):
// 0x0000 0x3F00 0x3F80 0x3FC0 0x4000 0x4040 0x4080 0x40C0, split into the
// low bytes (table bytes 0..7) and the high bytes.
constexpr int64_t kLowBytes0 = 0xC0800000, kLowBytes1 = 0xC0804000;
constexpr int64_t kHighBytes0 = 0x3F3F3F00, kHighBytes1 = 0x40404040;

int64_t bBufferBytes(const GemmPlan &plan) { return plan.tileN * kBRowBytes; }

struct WgmmaConsumer {
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
  /// nibble) -> two BF16x2 registers {e0, e1}, {e2, e3}: byte tables with
  /// prmt, signs spread by prmt's sign-replicate selectors.
  std::pair<Value, Value> decodeE2M1x4(Value codes) {
    Value magnitude = e.andi(codes, 0x7777);
    Value low = prmt(e.c32(kLowBytes0), e.c32(kLowBytes1), magnitude);
    Value high = prmt(e.c32(kHighBytes0), e.c32(kHighBytes1), magnitude);
    // 0xFF / 0x00 bytes from the sign bits 3, 7, 11, 15.
    Value signs = prmt(e.shl(codes, 4), codes, 0xD9C8);
    high = arith::OrIOp::create(b, loc, high, e.andi(signs, 0x80808080));
    return {prmt(low, high, 0x5140), prmt(low, high, 0x7362)};
  }

  /// An E4M3 scale byte (i32, 0..255) -> BF16x2 {scale, scale}, exact.
  Value decodeScale(Value bits) {
    Value magnitude = e.andi(bits, 0x7F);
    Value f32Bits = arith::OrIOp::create(b, loc, e.shl(magnitude, 20),
                                         e.shl(e.andi(bits, 0x80), 24));
    Value value = arith::MulFOp::create(
        b, loc, arith::BitcastOp::create(b, loc, b.getF32Type(), f32Bits),
        arith::ConstantOp::create(b, loc, b.getF32FloatAttr(0x1p120f)));
    Value valueBits = arith::BitcastOp::create(b, loc, b.getI32Type(), value);
    valueBits = arith::SelectOp::create(b, loc, e.eq(magnitude, 0x7F),
                                        e.c32(0x7FC00000), valueBits);
    Value half = e.lshr(valueBits, 16);
    return arith::OrIOp::create(b, loc, half, e.shl(half, 16));
  }

  Value mulBF16x2(Value x, Value y) {
    auto type = VectorType::get({2}, b.getBF16Type());
    Value product =
        arith::MulFOp::create(b, loc, LLVM::BitcastOp::create(b, loc, type, x),
                              LLVM::BitcastOp::create(b, loc, type, y));
    return LLVM::BitcastOp::create(b, loc, b.getI32Type(), product);
  }

  /// Block 4q + t of a row: its 16 codes (two i32) and its scale (BF16x2).
  struct RowData {
    Value words[2];
    Value scale;
  };
  RowData loadRow(Value stage, const GemmOperand &op, Value tileRow, int64_t q,
                  Value t) {
    RowData row;
    Value block = e.add(t, e.c32(4 * q));
    Value scalePtr = e.offsetPtr(stage, e.scaleOffset(op, tileRow, block));
    Value byte = LLVM::LoadOp::create(b, loc, b.getI8Type(), scalePtr, 1);
    row.scale =
        decodeScale(arith::ExtUIOp::create(b, loc, b.getI32Type(), byte));
    Value offset =
        e.codesOffset(op, tileRow, e.add(e.c32(32 * q), e.mul(t, e.c32(8))));
    auto type = VectorType::get({2}, b.getI32Type());
    Value words =
        LLVM::LoadOp::create(b, loc, type, e.offsetPtr(stage, offset), 8);
    for (int64_t i = 0; i < 2; ++i)
      row.words[i] = LLVM::ExtractElementOp::create(
          b, loc, words,
          arith::ConstantIntOp::create(b, loc, b.getI32Type(), i));
    return row;
  }

  /// The BF16x2 registers of k16 step i (0..3): {slots 2t, 2t + 1; slots
  /// 2t + 8, 2t + 9} = codes 4i..4i+3 of the block, scaled.
  std::pair<Value, Value> fragment(const RowData &row, int64_t i) {
    Value word = row.words[i / 2];
    auto [lo, hi] = decodeE2M1x4(i % 2 ? e.lshr(word, 16) : word);
    return {mulBF16x2(lo, row.scale), mulBF16x2(hi, row.scale)};
  }

  /// wgmma.mma_async m64n128k16 BF16 -> FP32: acc += A (4 registers) x B
  /// (descriptor).
  SmallVector<Value> wgmma(ArrayRef<Value> acc, ArrayRef<Value> a,
                           Value descriptor) {
    std::string text = "{\n.reg .pred p;\nsetp.ne.b32 p, $69, 0;\n"
                       "wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 "
                       "{";
    std::string constraints;
    for (int64_t i = 0; i < kAccumulators; ++i) {
      text += (i ? ", $" : "$") + std::to_string(i);
      constraints += "=f,";
    }
    text += "}, {$64, $65, $66, $67}, $68, p, 1, 1, 0;\n}";
    constraints += "r,r,r,r,l,r";
    for (int64_t i = 0; i < kAccumulators; ++i)
      constraints += "," + std::to_string(i);
    SmallVector<Value> operands(a);
    operands.push_back(descriptor);
    operands.push_back(e.c32(1)); // scale-d: D = A x B + D
    operands.append(acc.begin(), acc.end());
    SmallVector<Type> fields(kAccumulators, b.getF32Type());
    auto resultType = LLVM::LLVMStructType::getLiteral(b.getContext(), fields);
    auto asmOp = LLVM::InlineAsmOp::create(
        b, loc, resultType, operands, text, constraints,
        /*has_side_effects=*/true, /*is_align_stack=*/false,
        LLVM::tailcallkind::TailCallKind::None,
        LLVM::AsmDialectAttr::get(b.getContext(), LLVM::AsmDialect::AD_ATT),
        ArrayAttr());
    SmallVector<Value> out;
    for (int64_t i = 0; i < kAccumulators; ++i)
      out.push_back(
          LLVM::ExtractValueOp::create(b, loc, asmOp.getResult(0), i));
    return out;
  }

  void emit() {
    const GemmPlan &plan = e.plan;
    Value warp = e.warpId(), lane = e.laneId();
    Value group = e.lshr(lane, 2), t = e.andi(lane, 3);
    Value warpgroup = e.lshr(warp, 2), warpInGroup = e.andi(warp, 3);
    // A rows of this lane: g and g + 8 of the warp's 16.
    Value rowA = e.add(e.mul(warpgroup, e.c32(kWarpgroupRows)),
                       e.add(e.mul(warpInGroup, e.c32(16)), group));
    Value rowsA[2] = {rowA, e.add(rowA, e.c32(8))};
    // B rows this thread decodes: 8-row group warp + 8p, row g of it.
    int64_t bPasses = plan.tileN / (plan.consumerWarps * 8);
    SmallVector<Value> rowsB;
    for (int64_t p = 0; p < bPasses; ++p)
      rowsB.push_back(e.add(
          e.mul(e.add(warp, e.c32(p * plan.consumerWarps)), e.c32(8)), group));

    Value buffers = e.sharedPtr(plan.consumerSharedOffset() -
                                plan.stages * plan.stageBytes);
    Value buffersAddress =
        LLVM::PtrToIntOp::create(b, loc, b.getI32Type(), buffers);
    Value barrierId = e.c32(kConsumerBarrier);
    Value barrierThreads = e.c32(plan.consumerWarps * 32);

    SmallVector<Value> zeros(
        kAccumulators,
        arith::ConstantOp::create(b, loc, b.getF32FloatAttr(0.0f)));
    auto kLoop = scf::ForOp::create(
        b, loc, e.c32(0), e.c32(plan.kStepsPerCTA()), e.c32(1), zeros);
    {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(kLoop.getBody());
      Value kStep = kLoop.getInductionVar();
      SmallVector<Value> acc(kLoop.getRegionIterArgs());
      e.waitFull(kStep);
      Value stage =
          e.stagePtr(arith::RemUIOp::create(b, loc, kStep, e.c32(plan.stages)));
      for (int64_t q = 0; q < kSubSteps; ++q) {
        // Sub-step s = 4 kStep + q decodes B into buffer s % 3.
        Value s = e.add(e.mul(kStep, e.c32(kSubSteps)), e.c32(q));
        Value bufferOffset =
            e.mul(arith::RemUIOp::create(b, loc, s, e.c32(kBBuffers)),
                  e.c32(bBufferBytes(plan)));
        Value buffer = e.offsetPtr(buffers, bufferOffset);
        for (Value row : rowsB) {
          RowData data = loadRow(stage, plan.b, row, q, t);
          // Row r's 128 bytes, chunk c stored as chunk c ^ (r % 8); the
          // two registers of k16 step i go to bytes 32i + 4t and
          // 32i + 16 + 4t (chunks 2i and 2i + 1).
          Value rowBase = e.offsetPtr(
              buffer, e.add(e.mul(row, e.c32(kBRowBytes)), e.mul(t, e.c32(4))));
          for (int64_t i = 0; i < kSubK / kMmaK; ++i) {
            auto [lo, hi] = fragment(data, i);
            for (int64_t h = 0; h < 2; ++h) {
              Value chunk =
                  arith::XOrIOp::create(b, loc, group, e.c32(2 * i + h));
              LLVM::StoreOp::create(
                  b, loc, h ? hi : lo,
                  e.offsetPtr(rowBase, e.mul(chunk, e.c32(16))), 4);
            }
          }
        }
        RowData dataA[2] = {loadRow(stage, plan.a, rowsA[0], q, t),
                            loadRow(stage, plan.a, rowsA[1], q, t)};
        if (q == kSubSteps - 1)
          e.releaseStage(kStep); // all reads of the stage are done
        SmallVector<std::array<Value, 4>> fragmentsA;
        for (int64_t i = 0; i < kSubK / kMmaK; ++i) {
          auto r0 = fragment(dataA[0], i), r8 = fragment(dataA[1], i);
          fragmentsA.push_back({r0.first, r8.first, r0.second, r8.second});
        }
        // The generic-proxy stores of B become visible to the tensor cores
        // (async proxy) of both warpgroups.
        NVVM::FenceProxyOp::create(
            b, loc, NVVM::ProxyKind::async_shared,
            NVVM::SharedSpaceAttr::get(b.getContext(),
                                       NVVM::SharedSpace::shared_cta));
        NVVM::BarrierOp::create(b, loc, Type(), barrierId, barrierThreads,
                                NVVM::BarrierReductionAttr(), Value());
        NVVM::WgmmaFenceAlignedOp::create(b, loc);
        Value bufferAddress = e.add(buffersAddress, bufferOffset);
        for (int64_t i = 0; i < kSubK / kMmaK; ++i)
          acc = wgmma(acc, fragmentsA[i],
                      e.swizzle128Descriptor(
                          e.add(bufferAddress, e.c32(i * kMmaK * 2))));
        NVVM::WgmmaGroupSyncAlignedOp::create(b, loc);
        NVVM::WgmmaWaitGroupSyncOp::create(b, loc, 1);
      }
      scf::YieldOp::create(b, loc, acc);
    }
    NVVM::WgmmaWaitGroupSyncOp::create(b, loc, 0);

    // Accumulator fragment of m64nN: warp w of the warpgroup holds rows
    // 16w + g and 16w + g + 8; registers 4j..4j+3 are the n8 block j in
    // mma.sync's m16n8 order.
    Value scale = e.epilogueScale();
    Value row0 = e.add(e.mul(warpgroup, e.c32(kWarpgroupRows)),
                       e.mul(warpInGroup, e.c32(16)));
    if (plan.quantizeOutput) {
      // Pairs of n8 fragments: one 16-column block per row.
      ScalarBuilder::TensorScale tensorScale = e.outputTensorScale();
      for (int64_t j = 0; j < plan.tileN / 16; ++j)
        e.storeQuantizedFragments(row0, e.c32(16 * j),
                                  kLoop.getResults().slice(8 * j, 8), scale,
                                  tensorScale);
      return;
    }
    for (int64_t j = 0; j < plan.tileN / 8; ++j)
      e.storeMmaFragment(row0, e.c32(8 * j), kLoop.getResults().slice(4 * j, 4),
                         scale);
    e.finishOutputAmax();
  }
};

} // namespace

int64_t kernels::wgmmaGemmSharedBytes(const GemmPlan &plan) {
  return kBBuffers * bBufferBytes(plan);
}

std::string kernels::wgmmaGemmUnsupportedReason(const GemmPlan &plan,
                                                int64_t maxSharedMemoryBytes) {
  if (plan.tileM != kWarpgroups * kWarpgroupRows || plan.tileN != 128 ||
      plan.consumerWarps != 4 * kWarpgroups)
    return "the wgmma kernel needs a 128 x 128 tile and 8 consumer warps";
  if (plan.persistent)
    return "the one-tile-per-CTA wgmma kernel is not persistent";
  if (plan.splitK > 1 && plan.kSteps() % plan.splitK != 0)
    return "split-K " + std::to_string(plan.splitK) + " does not divide the " +
           std::to_string(plan.kSteps()) + " K steps";
  GemmPlan withBuffers = plan;
  withBuffers.consumerSharedBytes = wgmmaGemmSharedBytes(plan);
  if (withBuffers.sharedMemoryBytes() > maxSharedMemoryBytes)
    return "the wgmma kernel needs " +
           std::to_string(withBuffers.sharedMemoryBytes()) +
           " bytes of shared memory";
  return "";
}

gpu::GPUFuncOp kernels::buildWgmmaGemmKernel(ModuleOp module,
                                             const GemmPlan &plan,
                                             TypeRange argTypes,
                                             StringRef name) {
  assert(wgmmaGemmUnsupportedReason(plan, INT64_MAX).empty() &&
         plan.consumerSharedBytes == wgmmaGemmSharedBytes(plan));
  // B's descriptors: GemmPipelineEmitter::swizzle128Descriptor, the start
  // address added per buffer and k16 step. Registers: 9 warps leave 168 per
  // lane; the loop keeps 64 accumulators, one sub-step's 16 A registers and the
  // decode temporaries live.
  return buildProducerConsumerKernel(module, plan, argTypes, name,
                                     [&](GemmPipelineEmitter &e) {
                                       WgmmaConsumer{e, e.b, e.loc}.emit();
                                     });
}
