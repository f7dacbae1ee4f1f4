//===- MatmulKernels.cpp - the block-scaled GEMM on GPUs -------------------===//
//
// Part of the nvfp4 project.
//
// nvfp4.scaled_matmul: the tensor-core kernel of the chip where one exists
// (GemmPipeline.h; sm_90a: WgmmaMatmul.cpp;
// sm_100a/sm_103a: Tcgen05Matmul.cpp; sm_120a: MmaBlockScaleMatmul.cpp), otherwise -- and for shapes
// the tensor-core pipeline does not take -- a portable SIMT kernel: one
// thread per output element, K walked block by block. Each 16-block's dot product of E2M1
// values is exact, then `acc += partial * (sA * sB)` in K order and
// `C = acc * alpha` -- the accumulation order of docs/Numerics.md, so the
// result equals the reference lowering bit for bit on every chip. It is the
// correctness baseline; it does not use tensor cores.
//
//===----------------------------------------------------------------------===//

#include "F16Decode.h"
#include "GemmPipeline.h"
#include "KernelBuilder.h"
#include "KernelUtils.h"
#include "nvfp4/Conversion/NVFP4ToGPU/NVFP4ToGPU.h"
#include "nvfp4/Conversion/Utils/ElementBuilders.h"
#include "nvfp4/Dialect/NVFP4/IR/NVFP4Ops.h"
#include "nvfp4/Numerics/Gemm.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "llvm/ADT/bit.h"

using namespace mlir;
using namespace mlir::nvfp4;
using namespace mlir::nvfp4::kernels;

namespace {

/// What a GEMM kernel writes.
enum class GemmOutput {
  Values,         ///< C
  ValuesAndAmax,  ///< C and the amax of C (scaled_matmul's second result)
  Quantized,      ///< C's codes and scales (scaled_matmul_quantize)
};

/// Decodes the 16 E2M1 codes packed in 8 bytes loaded at `byteOffset`.
SmallVector<Value> loadCodes(OpBuilder &b, Location loc, Value packed,
                             Value byteOffset) {
  ScalarBuilder s(b, loc);
  Value bytes = vector::LoadOp::create(
      b, loc, VectorType::get({8}, b.getI8Type()), packed, byteOffset);
  SmallVector<Value> values;
  for (int64_t j = 0; j < 16; ++j) {
    Value byte = vector::ExtractOp::create(b, loc, bytes,
                                           ArrayRef<int64_t>{j / 2});
    Value code = j % 2 ? arith::ShRUIOp::create(b, loc, byte, s.i8(4)) : byte;
    values.push_back(s.decodeE2M1(code));
  }
  return values;
}

/// The kernel arguments, the same for every GEMM kernel: codesA, scalesA,
/// amaxA, codesB, scalesB, amaxB, alpha, C (flat buffers); with an output
/// amax then amaxC (FP32 bits, zero-initialized); quantized, C's codes,
/// linear scales and given amax instead of C.
SmallVector<Type> matmulArgTypes(BlockScaledTensorType lhs,
                                 BlockScaledTensorType rhs,
                                 RankedTensorType result, GemmOutput output) {
  MLIRContext *ctx = lhs.getContext();
  int64_t batch = product(lhs.getBatchShape());
  int64_t m = lhs.getRows(), n = rhs.getRows(), k = lhs.getCols();
  auto i8 = IntegerType::get(ctx, 8), i32 = IntegerType::get(ctx, 32);
  auto buffer = [&](int64_t count, Type type) -> Type {
    return MemRefType::get({count}, type);
  };
  SmallVector<Type> types = {buffer(batch * m * k / 2, i8),
                             buffer(product(lhs.getScalesType().getShape()), i8),
                             buffer(1, i32),
                             buffer(batch * n * k / 2, i8),
                             buffer(product(rhs.getScalesType().getShape()), i8),
                             buffer(1, i32),
                             Float32Type::get(ctx)};
  switch (output) {
  case GemmOutput::Values:
    types.push_back(buffer(batch * m * n, result.getElementType()));
    break;
  case GemmOutput::ValuesAndAmax:
    types.push_back(buffer(batch * m * n, result.getElementType()));
    types.push_back(buffer(1, i32));
    break;
  case GemmOutput::Quantized:
    types.push_back(buffer(batch * m * n / 2, i8));
    types.push_back(buffer(batch * m * n / 16, i8));
    types.push_back(buffer(1, i32));
    break;
  }
  return types;
}

/// "nvfp4_scaled_matmul_256x512x1024_1x16_16x16_to_f32_" (then "amax_"
/// with an output amax, "q_" quantized): the kernel name up to the
/// implementation suffix.
std::string matmulName(BlockScaledTensorType lhs, BlockScaledTensorType rhs,
                       RankedTensorType result, GemmOutput output) {
  int64_t batch = product(lhs.getBatchShape());
  return "nvfp4_scaled_matmul_" +
         (batch > 1 ? std::to_string(batch) + "x" : "") +
         std::to_string(lhs.getRows()) + "x" + std::to_string(rhs.getRows()) +
         "x" + std::to_string(lhs.getCols()) + "_" + blockName(lhs) + "_" +
         blockName(rhs) + "_to_" + typeName(result.getElementType()) + "_" +
         (output == GemmOutput::ValuesAndAmax ? "amax_"
          : output == GemmOutput::Quantized   ? "q_"
                                              : "") +
         // Decode scales change alpha's constant: another kernel.
         (lhs.hasDecodeScale() ? "dsa_" : "") +
         (rhs.hasDecodeScale() ? "dsb_" : "");
}

gpu::GPUFuncOp buildScaledMatmulKernel(ModuleOp module,
                                       BlockScaledTensorType lhs,
                                       BlockScaledTensorType rhs,
                                       RankedTensorType result,
                                       GemmOutput output,
                                       const ::nvfp4::target::ChipInfo &chip) {
  int64_t batch = product(lhs.getBatchShape());
  int64_t m = lhs.getRows(), n = rhs.getRows(), k = lhs.getCols();
  int64_t colBlocks = k / 16;
  SmallVector<Type> argTypes = matmulArgTypes(lhs, rhs, result, output);
  std::string name = matmulName(lhs, rhs, result, output) + "simt";
  // Both need the whole warp after the bounds check: the branch yields the
  // rounded value (0 outside C).
  bool warpEpilogue = output != GemmOutput::Values;
  return getOrCreateKernel(
      module, name, argTypes, kThreadsPerBlock,
      [&](OpBuilder &b, Location loc, ValueRange args) {
        ScalarBuilder s(b, loc);
        IndexMath im{b, loc};
        int64_t outputs = batch * m * n;
        Value tid = globalThreadIndex(b, loc);
        TypeRange yielded =
            warpEpilogue ? TypeRange(b.getF32Type()) : TypeRange();
        auto ifValid = scf::IfOp::create(b, loc, yielded, im.lt(tid, outputs),
                                         /*withElseRegion=*/warpEpilogue);
        if (warpEpilogue) {
          b.setInsertionPointToStart(ifValid.elseBlock());
          scf::YieldOp::create(b, loc, ValueRange{s.f32(0.0f)});
        }
        b.setInsertionPointToStart(ifValid.thenBlock());
        // Thread -> (batch, i, j); adjacent threads share the A row.
        Value j = im.rem(tid, n);
        Value bi = im.div(tid, n);
        Value i = im.rem(bi, m), bt = im.div(bi, m);
        Value rowA = im.add(im.mul(bt, m), i);
        Value rowB = im.add(im.mul(bt, n), j);

        auto loop = scf::ForOp::create(
            b, loc, im.c(0), im.c(colBlocks), im.c(1),
            ValueRange{s.f32(0.0f)},
            [&](OpBuilder &nb, Location nl, Value kb, ValueRange acc) {
              ScalarBuilder ns(nb, nl);
              IndexMath nm{nb, nl};
              Value offsetA = nm.add(nm.mul(rowA, k / 2), nm.mul(kb, 8));
              Value offsetB = nm.add(nm.mul(rowB, k / 2), nm.mul(kb, 8));
              SmallVector<Value> a = loadCodes(nb, nl, args[0], offsetA);
              SmallVector<Value> bv = loadCodes(nb, nl, args[3], offsetB);
              // Exact: products of E2M1 values and their sums of 16.
              Value partial = ns.f32(0.0f);
              for (int64_t e = 0; e < 16; ++e)
                partial = arith::AddFOp::create(
                    nb, nl, partial, arith::MulFOp::create(nb, nl, a[e], bv[e]));
              Value scaleA = ns.decodeE4M3(memref::LoadOp::create(
                  nb, nl, args[1],
                  ValueRange{scaleOffset(nm, lhs, rowA, kb)}));
              Value scaleB = ns.decodeE4M3(memref::LoadOp::create(
                  nb, nl, args[4],
                  ValueRange{scaleOffset(nm, rhs, rowB, kb)}));
              Value term = arith::MulFOp::create(
                  nb, nl, partial,
                  arith::MulFOp::create(nb, nl, scaleA, scaleB));
              scf::YieldOp::create(
                  nb, nl,
                  ValueRange{arith::AddFOp::create(nb, nl, acc[0], term)});
            });
        // alpha = ((alpha_in * amaxA) * amaxB) * fp32(1 / (36 * 448^2))
        // (a decode scale in place of an amax drops its 1 / 2688).
        Value alpha = arith::MulFOp::create(b, loc, args[6],
                                            loadAmax(b, loc, args[2]));
        alpha = arith::MulFOp::create(b, loc, alpha, loadAmax(b, loc, args[5]));
        alpha = arith::MulFOp::create(
            b, loc, alpha,
            s.f32(::nvfp4::numerics::gemmAlphaConstant(
                lhs.hasDecodeScale(), rhs.hasDecodeScale())));
        Value value = s.fromF32(
            arith::MulFOp::create(b, loc, loop.getResult(0), alpha),
            result.getElementType());
        switch (output) {
        case GemmOutput::Values:
          memref::StoreOp::create(b, loc, value, args[7], ValueRange{tid});
          b.setInsertionPointAfter(ifValid);
          return;
        case GemmOutput::ValuesAndAmax:
          memref::StoreOp::create(b, loc, value, args[7], ValueRange{tid});
          scf::YieldOp::create(b, loc,
                               math::AbsFOp::create(b, loc, s.toF32(value)).getResult());
          b.setInsertionPointAfter(ifValid);
          warpMaxToAmax(b, loc, ifValid.getResult(0), args[8]);
          return;
        case GemmOutput::Quantized:
          break;
        }
        // Quantized: a block is 16 consecutive threads of a row (N % 16 ==
        // 0, so blocks never straddle rows or the end of C).
        scf::YieldOp::create(b, loc, s.toF32(value));
        b.setInsertionPointAfter(ifValid);
        Value v = ifValid.getResult(0);
        Value blockAmax =
            halfWarpMaxOf(b, loc, math::AbsFOp::create(b, loc, v));
        ScalarBuilder::BlockScale block = s.blockScale(
            blockAmax, s.tensorScale(loadAmax(b, loc, args[9])));
        Value scaled = arith::MulFOp::create(b, loc, v, block.encode);
        // The even thread of each pair writes the byte of both codes.
        Value odd = gpu::ShuffleOp::create(b, loc, scaled, 1, 32,
                                           gpu::ShuffleMode::XOR)
                        .getShuffleResult();
        Value byte = encodePairNearestEven(b, loc, scaled, odd, chip);
        Value lane = im.rem(tid, 16);
        auto ifEven = scf::IfOp::create(
            b, loc,
            arith::AndIOp::create(b, loc, im.lt(tid, outputs),
                                  im.eq(im.rem(tid, 2), 0)),
            false);
        {
          OpBuilder::InsertionGuard guard(b);
          b.setInsertionPointToStart(ifEven.thenBlock());
          memref::StoreOp::create(b, loc, byte, args[7],
                                  ValueRange{im.div(tid, 2)});
          auto ifFirst = scf::IfOp::create(b, loc, im.eq(lane, 0), false);
          b.setInsertionPointToStart(ifFirst.thenBlock());
          memref::StoreOp::create(b, loc, block.code, args[8],
                                  ValueRange{im.div(tid, 16)});
        }
      });
}

/// The route's decode kernel: the codes x block scales of `type` as exact
/// F16 values, row-major [batch * rows, K], with K permuted inside each
/// group of 8 as the decoder warpgroups do (F16Decode.h) so that both
/// operands pair equal k. One thread per 16-element block: an 8-byte load
/// of codes, its scale, 16 products, 32 bytes stored.
gpu::GPUFuncOp buildDecodeToF16Kernel(ModuleOp module,
                                      BlockScaledTensorType type) {
  MLIRContext *ctx = module.getContext();
  int64_t rows = product(type.getBatchShape()) * type.getRows();
  int64_t cols = type.getCols(), colBlocks = cols / 16;
  int64_t blocks = rows * colBlocks;
  auto i8 = IntegerType::get(ctx, 8);
  SmallVector<Type> argTypes = {
      MemRefType::get({rows * cols / 2}, i8),
      MemRefType::get({product(type.getScalesType().getShape())}, i8),
      MemRefType::get({rows * cols}, Float16Type::get(ctx))};
  std::string name = "nvfp4_decode_" + shapeName(type.getShape()) + "_" +
                     blockName(type) + "_to_f16";
  return getOrCreateKernel(
      module, name, argTypes, kThreadsPerBlock,
      [&](OpBuilder &b, Location loc, ValueRange args) {
        IndexMath m{b, loc};
        Value tid = globalThreadIndex(b, loc);
        auto ifValid = scf::IfOp::create(b, loc, m.lt(tid, blocks), false);
        OpBuilder::InsertionGuard guard(b);
        b.setInsertionPointToStart(ifValid.thenBlock());
        Value row = m.div(tid, colBlocks), colBlock = m.rem(tid, colBlocks);
        Value words = vector::LoadOp::create(
            b, loc, VectorType::get({2}, b.getI32Type()),
            codesAsWords(b, loc, args[0]), ValueRange{m.mul(tid, 2)},
            /*nontemporal=*/false, llvm::MaybeAlign(8));
        Value scaleByte = memref::LoadOp::create(
            b, loc, args[1],
            ValueRange{scaleOffset(m, type, row, colBlock)});
        Value pair = vector::FromElementsOp::create(
            b, loc, VectorType::get({2}, i8), ValueRange{scaleByte, scaleByte});
        Value scale = decodeE4M3x2ToF16Pairs(b, loc, pair)[0];
        SmallVector<Value> out;
        for (int64_t w = 0; w < 2; ++w) {
          Value word = vector::ExtractOp::create(b, loc, words,
                                                 ArrayRef<int64_t>{w});
          for (Value x : decodeE2M1x8ToF16(b, loc, word))
            out.push_back(mulF16x2(b, loc, x, scale));
        }
        Value halves = vector::BitCastOp::create(
            b, loc, VectorType::get({16}, b.getF16Type()),
            vector::FromElementsOp::create(
                b, loc, VectorType::get({8}, b.getI32Type()), out));
        vector::StoreOp::create(b, loc, halves, args[2],
                                ValueRange{m.mul(tid, 16)},
                                /*nontemporal=*/false, llvm::MaybeAlign(32));
      });
}

/// Split-K's finalize kernel: C = alpha' * (sum over the splits, in split
/// order, of the FP32 partial sums in `workspace` [batch, splits, M, N]),
/// rounded to C's element type; with an output amax, also max |C| (as the
/// SIMT GEMM: one atomic max per warp). alpha' is the tensor-core
/// epilogue's, in the same order. One thread per element of C.
gpu::GPUFuncOp buildSplitKFinalizeKernel(ModuleOp module, int64_t batch,
                                         int64_t m, int64_t n, int64_t splits,
                                         RankedTensorType result,
                                         bool outputAmax,
                                         float alphaConstant) {
  MLIRContext *ctx = module.getContext();
  auto f32 = Float32Type::get(ctx);
  auto i32 = IntegerType::get(ctx, 32);
  Type element = result.getElementType();
  SmallVector<Type> argTypes = {MemRefType::get({batch * splits * m * n}, f32),
                                MemRefType::get({1}, i32),
                                MemRefType::get({1}, i32), f32,
                                MemRefType::get({batch * m * n}, element)};
  if (outputAmax)
    argTypes.push_back(MemRefType::get({1}, i32));
  std::string name = "nvfp4_splitk_finalize_" +
                     (batch > 1 ? std::to_string(batch) + "x" : "") +
                     std::to_string(m) + "x" + std::to_string(n) + "_k" +
                     std::to_string(splits) + "_to_" + typeName(element) +
                     (outputAmax ? "_amax" : "") +
                     (alphaConstant != 1.0f / (36.0f * 448.0f * 448.0f)
                          ? "_c" + std::to_string(llvm::bit_cast<uint32_t>(
                                       alphaConstant))
                          : "");
  int64_t outputs = batch * m * n;
  return getOrCreateKernel(
      module, name, argTypes, kThreadsPerBlock,
      [&](OpBuilder &b, Location loc, ValueRange args) {
        ScalarBuilder s(b, loc);
        IndexMath im{b, loc};
        Value tid = globalThreadIndex(b, loc);
        TypeRange yielded = outputAmax ? TypeRange(f32) : TypeRange();
        auto ifValid = scf::IfOp::create(b, loc, yielded, im.lt(tid, outputs),
                                         /*withElseRegion=*/outputAmax);
        if (outputAmax) {
          b.setInsertionPointToStart(ifValid.elseBlock());
          scf::YieldOp::create(b, loc, ValueRange{s.f32(0.0f)});
        }
        b.setInsertionPointToStart(ifValid.thenBlock());
        Value bt = im.div(tid, m * n), inside = im.rem(tid, m * n);
        Value sum;
        for (int64_t split = 0; split < splits; ++split) {
          Value index = im.add(im.mul(im.add(im.mul(bt, splits), im.c(split)),
                                      m * n),
                               inside);
          Value partial =
              memref::LoadOp::create(b, loc, args[0], ValueRange{index});
          sum = split ? arith::AddFOp::create(b, loc, sum, partial).getResult()
                      : partial;
        }
        // alpha' = ((alpha * amaxA) * amaxB) * fp32(1 / (36 * 448^2)).
        Value alpha = arith::MulFOp::create(b, loc, args[3],
                                            loadAmax(b, loc, args[1]));
        alpha = arith::MulFOp::create(b, loc, alpha, loadAmax(b, loc, args[2]));
        alpha = arith::MulFOp::create(b, loc, alpha, s.f32(alphaConstant));
        Value value =
            s.fromF32(arith::MulFOp::create(b, loc, sum, alpha), element);
        memref::StoreOp::create(b, loc, value, args[4], ValueRange{tid});
        if (!outputAmax) {
          b.setInsertionPointAfter(ifValid);
          return;
        }
        scf::YieldOp::create(
            b, loc, math::AbsFOp::create(b, loc, s.toF32(value)).getResult());
        b.setInsertionPointAfter(ifValid);
        warpMaxToAmax(b, loc, ifValid.getResult(0), args[5]);
      });
}

/// The tensor-core plan for this GEMM -- the forced schedule, or the
/// chip's choice -- or nothing when the shape or the chip needs the SIMT
/// kernel. With a forced schedule the kernel cannot take, `whyNot` says why.
std::optional<GemmPlan> planGemm(const ::nvfp4::target::ChipInfo &chip,
                                 const std::optional<GemmSchedule> &forced,
                                 BlockScaledTensorType lhsType,
                                 BlockScaledTensorType rhsType,
                                 RankedTensorType resultType,
                                 GemmOutput output, std::string &whyNot) {
  if (!tensorCoreGemmUnsupportedReason(chip, lhsType, rhsType).empty())
    return std::nullopt;
  bool tcgen05 = chip.has(::nvfp4::target::Instruction::Tcgen05BlockScaleMma);
  bool mmaBlockScale =
      !tcgen05 && chip.has(::nvfp4::target::Instruction::MmaSyncBlockScale);
  // Why the kernel for this chip cannot take `plan`, or "".
  auto unsupported = [&](GemmPlan &plan) -> std::string {
    if (plan.tmaStore &&
        (plan.skinny() || (!tcgen05 && !mmaBlockScale && !plan.decodedStages)))
      return "the TMA-store epilogue (_ts) is implemented for the sm_90a "
             "decoded-stage kernels (_dDwW), the tcgen05 kernels and the "
             "sm_120a kernel only";
    if (plan.tileK != kGemmTileK && (plan.skinny() || !mmaBlockScale))
      return "a K step of " + std::to_string(plan.tileK) +
             " is implemented for the sm_120a mma.sync kernel only";
    // The skinny kernel is plain mma.sync F16 (sm_80+) and
    // cvt.f16x2.e4m3x2 (sm_89+): every chip with a tensor-core GEMM.
    if (plan.skinny())
      return skinnyGemmUnsupportedReason(plan);
    if (plan.ctaGroup > 1 && !tcgen05)
      return "cta_group::2 (_cg2) is a tcgen05 schedule (sm_100a, sm_103a)";
    if (plan.clusterM > 1 && mmaBlockScale)
      return "clusters (_cN) are implemented for the sm_90a route only";
    if (tcgen05) {
      plan.consumerSharedBytes = tcgen05GemmSharedBytes(plan);
      return tcgen05GemmUnsupportedReason(plan);
    }
    if (mmaBlockScale)
      return mmaBlockScaleGemmUnsupportedReason(plan,
                                                chip.maxSharedMemoryPerBlock);
    // sm_90a: the decoder-warpgroup kernel (DecodeWgmmaMatmul.cpp) or the
    // consumers-decode kernel (WgmmaMatmul.cpp), each with its shared
    // memory beyond the ring.
    std::string reason =
        plan.decodedStages
            ? decodeWgmmaGemmUnsupportedReason(plan,
                                               chip.maxSharedMemoryPerBlock)
            : wgmmaGemmUnsupportedReason(plan, chip.maxSharedMemoryPerBlock);
    if (reason.empty())
      plan.consumerSharedBytes = plan.decodedStages
                                     ? decodeWgmmaGemmSharedBytes(plan)
                                     : wgmmaGemmSharedBytes(plan);
    return reason;
  };
  auto make = [&](GemmSchedule schedule) {
    // The quantizing epilogue needs whole sums: no split-K (unless forced,
    // which the kernel then reports).
    if (output == GemmOutput::Quantized && !forced)
      schedule.splitK = 1;
    // The quantizing epilogue writes codes and scales, not C: it keeps its
    // direct stores under a TMA-store schedule (the kernel name says so).
    if (output == GemmOutput::Quantized)
      schedule.tmaStore = false;
    GemmPlan plan = makeGemmPlan(chip, schedule, lhsType, rhsType,
                                 resultType.getElementType());
    plan.outputAmax = output == GemmOutput::ValuesAndAmax;
    plan.quantizeOutput = output == GemmOutput::Quantized;
    return plan;
  };
  if (forced) {
    GemmPlan plan = make(*forced);
    whyNot = forced->splitK > 1 && output == GemmOutput::Quantized
                 ? "the quantizing epilogue needs whole sums (no split-K)"
                 : unsupported(plan);
    if (!whyNot.empty())
      return std::nullopt;
    return plan;
  }
  GemmSchedule chosen = chooseGemmSchedule(chip, lhsType, rhsType);
  GemmPlan plan = make(chosen);
  if (unsupported(plan).empty())
    return plan;
  // The chosen schedule without its TMA store (C's rows not a multiple of
  // 16 bytes, or tile columns the staging buffers do not divide).
  if (chosen.tmaStore) {
    chosen.tmaStore = false;
    plan = make(chosen);
    if (unsupported(plan).empty())
      return plan;
  }
  // The chip's plain schedule (one tile per CTA, the consumers decode).
  GemmSchedule fallback;
  fallback.tileM = chip.gemmTile.m;
  fallback.tileN = chip.gemmTile.n;
  fallback.tileK = chip.gemmTile.k;
  fallback.stages = chip.gemmTile.stages;
  plan = make(fallback);
  if (unsupported(plan).empty())
    return plan;
  return std::nullopt;
}

/// Launches the GEMM of `lhs` x `rhs`^T (converted operands: codes, scales,
/// amax) with the kernel the chip and shape allow -- after the decode
/// kernels, for the route -- writing `outputs` (the flat buffers after
/// alpha: C; C and its amax; or codes, scales and the given amax of the
/// quantized C).
LogicalResult launchGemm(ConversionPatternRewriter &rewriter, Operation *op,
                         ModuleOp module,
                         const ::nvfp4::target::ChipInfo &chip,
                         const std::optional<GemmSchedule> &forced,
                         BlockScaledTensorType lhsType,
                         BlockScaledTensorType rhsType,
                         RankedTensorType resultType, ValueRange lhs,
                         ValueRange rhs, Value alpha, GemmOutput output,
                         ValueRange outputs) {
  Location loc = op->getLoc();
  if (!alpha)
    alpha = arith::ConstantOp::create(rewriter, loc,
                                      rewriter.getF32FloatAttr(1.0f));
  SmallVector<Value> args = {
      flatten(rewriter, loc, lhs[0]), flatten(rewriter, loc, lhs[1]),
      lhs[2], flatten(rewriter, loc, rhs[0]),
      flatten(rewriter, loc, rhs[1]), rhs[2], alpha};
  for (Value buffer : outputs)
    args.push_back(flatten(rewriter, loc, buffer));
  std::string whyNot;
  std::optional<GemmPlan> plan = planGemm(chip, forced, lhsType, rhsType,
                                          resultType, output, whyNot);
  if (!whyNot.empty())
    return op->emitOpError("cannot use gemm-schedule=")
           << forced->name() << ": " << whyNot;
  if (!plan) {
    gpu::GPUFuncOp kernel = buildScaledMatmulKernel(module, lhsType, rhsType,
                                                    resultType, output, chip);
    launchKernel(rewriter, loc, kernel, resultType.getNumElements(),
                 kThreadsPerBlock, args);
    return success();
  }
  SmallVector<Type> bufferTypes =
      matmulArgTypes(lhsType, rhsType, resultType, output);
  if (plan->skinny()) {
    gpu::GPUFuncOp kernel = buildSkinnyGemmKernel(
        module, *plan, bufferTypes,
        matmulName(lhsType, rhsType, resultType, output) + plan->name());
    launchKernel(rewriter, loc, kernel, plan->grid(), plan->threads(),
                 /*sharedMemoryBytes=*/0, args);
    return success();
  }
  bool tcgen05 = chip.has(::nvfp4::target::Instruction::Tcgen05BlockScaleMma);
  bool mmaBlockScale =
      !tcgen05 && chip.has(::nvfp4::target::Instruction::MmaSyncBlockScale);
  // Split-K: the GEMM writes FP32 partial sums [batch, splits, M, N]
  // (unscaled); the finalize kernel after it writes C (and its amax).
  Value workspace;
  if (plan->splitK > 1) {
    auto workspaceType = MemRefType::get(
        {plan->batch * plan->splitK * plan->m * plan->n},
        rewriter.getF32Type());
    workspace = allocDevice(rewriter, loc, workspaceType, /*zeroFill=*/false);
    plan->resultElement = rewriter.getF32Type();
    plan->outputAmax = false;
    bufferTypes.resize(8);
    bufferTypes[7] = workspaceType;
    args.resize(8);
    args[7] = workspace;
  }
  SmallVector<Type> argTypes = gemmKernelArgTypes(*plan, bufferTypes);
  if (plan->decodesSeparately()) {
    // The route: both operands decoded into F16 scratch, whose tensor maps
    // (F16 elements, plan->k per row) replace the codes'.
    for (auto [i, type] : {std::pair(0, lhsType), std::pair(3, rhsType)}) {
      Value scratch = allocDevice(
          rewriter, loc,
          MemRefType::get({product(type.getBatchShape()) * type.getRows() *
                           plan->k},
                          rewriter.getF16Type()),
          /*zeroFill=*/false);
      gpu::GPUFuncOp decode = buildDecodeToF16Kernel(module, type);
      launchKernel(rewriter, loc, decode,
                   product(type.getShape()) / 16, kThreadsPerBlock,
                   ValueRange{args[i], args[i + 1], scratch});
      args[i] = scratch;
    }
  }
  // Codes (and linear scales the plan stages as stored) go to the kernel
  // as tensor maps of their buffers (with the route: of the F16 scratch).
  for (int64_t i : {0, 1, 3, 4})
    if (isa<nvgpu::TensorMapDescriptorType>(argTypes[i]))
      args[i] = createTensorMap(
          rewriter, loc, args[i], plan->batch,
          i % 3 == 0 ? (plan->decodesSeparately() ? plan->k : plan->k / 2)
                     : plan->k / 16,
          argTypes[i]);
  // The TMA-store epilogue writes C through its tensor map ([batch, M, N]).
  if (isa<nvgpu::TensorMapDescriptorType>(argTypes[7]))
    args[7] = createTensorMap(rewriter, loc, args[7], plan->batch, plan->n,
                              argTypes[7]);
  // A split-K GEMM writes FP32 partial sums: named for what it writes.
  std::string name =
      plan->splitK > 1
          ? matmulName(lhsType, rhsType,
                       RankedTensorType::get(resultType.getShape(),
                                             rewriter.getF32Type()),
                       GemmOutput::Values)
          : matmulName(lhsType, rhsType, resultType, output);
  gpu::GPUFuncOp kernel =
      tcgen05 ? buildTcgen05GemmKernel(module, *plan, argTypes,
                                       name + "tcgen05_" + plan->name())
      : mmaBlockScale
          ? buildMmaBlockScaleGemmKernel(module, *plan, argTypes,
                                         name + "mxf4_" + plan->name())
      : plan->decodedStages
          ? buildDecodeWgmmaGemmKernel(module, *plan, argTypes,
                                       name + "wgmma_" + plan->name())
          : buildWgmmaGemmKernel(module, *plan, argTypes,
                                 name + "wgmma_" + plan->name());
  launchKernel(rewriter, loc, kernel, plan->grid(), plan->threads(),
               plan->sharedMemoryBytes(), args);
  if (plan->splitK > 1) {
    bool withAmax = output == GemmOutput::ValuesAndAmax;
    gpu::GPUFuncOp finalize = buildSplitKFinalizeKernel(
        module, plan->batch, plan->m, plan->n, plan->splitK, resultType,
        withAmax, plan->alphaConstant);
    SmallVector<Value> finalizeArgs = {workspace, lhs[2], rhs[2], alpha,
                                       flatten(rewriter, loc, outputs[0])};
    if (withAmax)
      finalizeArgs.push_back(flatten(rewriter, loc, outputs[1]));
    launchKernel(rewriter, loc, finalize, plan->batch * plan->m * plan->n,
                 kThreadsPerBlock, finalizeArgs);
  }
  return success();
}

/// A conversion pattern that lowers for one chip.
template <typename OpT>
struct ChipConversionPattern : OpConversionPattern<OpT> {
  ChipConversionPattern(const TypeConverter &converter, MLIRContext *ctx,
                        const ::nvfp4::target::ChipInfo &chip,
                        std::optional<GemmSchedule> forced)
      : OpConversionPattern<OpT>(converter, ctx), chip(chip),
        forced(std::move(forced)) {}

  const ::nvfp4::target::ChipInfo &chip;
  /// The gemm-schedule option, when given.
  std::optional<GemmSchedule> forced;
};

struct ScaledMatmulToGPU : ChipConversionPattern<ScaledMatmulOp> {
  using ChipConversionPattern::ChipConversionPattern;

  LogicalResult
  matchAndRewrite(ScaledMatmulOp op, OneToNOpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    if (op.getLhs().getType().isMX())
      return rewriter.notifyMatchFailure(op, "MX: MXKernels.cpp");
    Location loc = op.getLoc();
    auto resultType = cast<RankedTensorType>(op.getResult().getType());
    bool outputAmax = static_cast<bool>(op.getResultAmax());
    Value result = allocDevice(
        rewriter, loc,
        MemRefType::get(resultType.getShape(), resultType.getElementType()),
        false);
    SmallVector<Value> outputs = {result};
    if (outputAmax)
      outputs.push_back(allocDevice(rewriter, loc,
                                    MemRefType::get({1}, rewriter.getI32Type()),
                                    /*zeroFill=*/true));
    if (failed(launchGemm(
            rewriter, op, op->getParentOfType<ModuleOp>(), chip, forced,
            op.getLhs().getType(), op.getRhs().getType(), resultType,
            adaptor.getLhs(), adaptor.getRhs(),
            op.getAlpha() ? adaptor.getAlpha().front() : Value(),
            outputAmax ? GemmOutput::ValuesAndAmax : GemmOutput::Values,
            outputs)))
      return failure();
    SmallVector<Value> results = {bufferization::ToTensorOp::create(
        rewriter, loc, resultType, result, /*restrict=*/true,
        /*writable=*/true)};
    if (outputAmax)
      results.push_back(loadAmax(rewriter, loc, outputs[1]));
    rewriter.replaceOp(op, results);
    return success();
  }
};

/// The GEMM whose epilogue quantizes C: its results are the codes, scales
/// and (given) amax buffers of the block-scaled value.
struct ScaledMatmulQuantizeToGPU
    : ChipConversionPattern<ScaledMatmulQuantizeOp> {
  using ChipConversionPattern::ChipConversionPattern;

  LogicalResult
  matchAndRewrite(ScaledMatmulQuantizeOp op, OneToNOpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    BlockScaledTensorType type = op.getResult().getType();
    SmallVector<Type> partTypes;
    if (failed(getTypeConverter()->convertType(type, partTypes)))
      return rewriter.notifyMatchFailure(op, "unconvertible result type");
    Value codes = allocDevice(rewriter, loc, cast<MemRefType>(partTypes[0]),
                              false);
    Value scales = allocDevice(rewriter, loc, cast<MemRefType>(partTypes[1]),
                               false);
    // The given amax (also the result's amax part).
    Value amax = givenAmaxBuffer(rewriter, loc, adaptor.getAmax().front());
    auto product =
        RankedTensorType::get(type.getShape(), op.getProductElementType());
    if (failed(launchGemm(
            rewriter, op, op->getParentOfType<ModuleOp>(), chip, forced,
            op.getLhs().getType(), op.getRhs().getType(), product,
            adaptor.getLhs(), adaptor.getRhs(),
            op.getAlpha() ? adaptor.getAlpha().front() : Value(),
            GemmOutput::Quantized, {codes, scales, amax})))
      return failure();
    rewriter.replaceOpWithMultiple(op, {{codes, scales, amax}});
    return success();
  }
};
} // namespace

LogicalResult mlir::nvfp4::populateMatmulToGPUPatterns(
    const TypeConverter &converter, RewritePatternSet &patterns,
    const ::nvfp4::target::ChipInfo &chip, StringRef gemmSchedule,
    std::string &message) {
  std::optional<GemmSchedule> forced;
  if (!gemmSchedule.empty()) {
    FailureOr<GemmSchedule> parsed = parseGemmSchedule(gemmSchedule, message);
    if (failed(parsed))
      return failure();
    forced = *parsed;
  }
  patterns.add<ScaledMatmulToGPU, ScaledMatmulQuantizeToGPU>(
      converter, patterns.getContext(), chip, forced);
  return success();
}
