//===- GemmPipeline.cpp - the shared skeleton of tensor-core GEMMs --------===//
//
// Part of the nvfp4 project.
//
//===----------------------------------------------------------------------===//

#include "GemmPipeline.h"
#include "KernelUtils.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "llvm/Support/MathExtras.h"

using namespace mlir;
using namespace mlir::nvfp4;
using namespace mlir::nvfp4::kernels;

namespace {
constexpr unsigned kGlobal = 1, kShared = 3, kSharedCluster = 7;
/// Copy engines need 16-byte granularity; a row of a K step is 128 bytes of
/// codes and 16 bytes of linear scales.
constexpr int64_t kCodeBytesPerRow = kGemmTileK / 2;
constexpr int64_t kScaleBytesPerRow = kGemmTileK / 16;
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
  if (lhs.getCols() % kGemmTileK != 0)
    return "K = " + std::to_string(lhs.getCols()) +
           " is not a multiple of " + std::to_string(kGemmTileK) +
           " (the pipeline's 16-byte bulk copies need it)";
  return "";
}

GemmPlan kernels::makeGemmPlan(const ::nvfp4::target::ChipInfo &chip,
                               BlockScaledTensorType lhs,
                               BlockScaledTensorType rhs,
                               Type resultElement) {
  GemmPlan plan;
  plan.batch = product(lhs.getBatchShape());
  plan.m = lhs.getRows();
  plan.n = rhs.getRows();
  plan.k = lhs.getCols();
  plan.tileM = chip.gemmTile.m;
  plan.tileN = chip.gemmTile.n;
  plan.stages = chip.gemmTile.stages;
  plan.consumerWarps = chip.gemmTile.threads / 32 - 1;
  plan.resultElement = resultElement;
  if (chip.has(::nvfp4::target::Instruction::Tcgen05BlockScaleMma)) {
    // What tcgen05.mma and tcgen05.cp read (Tcgen05Matmul.cpp).
    plan.codesLayout = GemmCodesLayout::CoreMatrices;
    plan.scaleStaging = GemmScaleStaging::Atoms128x4;
    plan.stageRelease = GemmStageRelease::Tcgen05Commit;
  }
  if (chip.scaleSource == ::nvfp4::target::MmaScaleSource::Emulated)
    plan.copyEngine = GemmCopyEngine::Thread16B;
  int64_t offset = 0;
  auto place = [&](GemmOperand &op, BlockScaledTensorType type, int64_t rows,
                   int64_t tileRows) {
    op.type = type;
    op.rows = rows;
    op.tileRows = tileRows;
    op.codesOffset = offset;
    offset += tileRows * plan.codesRowBytes();
  };
  place(plan.a, lhs, plan.m, plan.tileM);
  place(plan.b, rhs, plan.n, plan.tileN);
  for (GemmOperand *op : {&plan.a, &plan.b}) {
    op->scalesOffset = offset;
    if (op->type.getLayout() == ScaleLayout::Swizzled128x4 ||
        plan.scaleStaging == GemmScaleStaging::Atoms128x4)
      // tileRows / 128 row atoms x 4 column atoms of 512 bytes.
      op->scaleTileBytes = op->tileRows / 128 * 4 * 512;
    else
      op->scaleTileBytes =
          op->tileRows / op->type.getBlockRows() * kScaleBytesPerRow;
    offset += llvm::alignTo(op->scaleTileBytes, 128);
  }
  plan.stageBytes = llvm::alignTo(offset, 128);
  plan.barrierBytes = 128;
  return plan;
}

std::array<int64_t, 3> GemmPlan::grid() const {
  return {(n + tileN - 1) / tileN, (m + tileM - 1) / tileM, batch};
}

std::string GemmPlan::name() const {
  return std::to_string(tileM) + "x" + std::to_string(tileN) + "x" +
         std::to_string(kGemmTileK) + "_s" + std::to_string(stages);
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
  batchIdx = toI32(b, loc, gpu::BlockIdOp::create(b, loc, gpu::Dimension::z));
  rowA0 = mul(tileM, c32(plan.tileM));
  rowB0 = mul(tileN, c32(plan.tileN));
  auto smemType = MemRefType::get(
      {ShapedType::kDynamic}, b.getI8Type(), MemRefLayoutAttrInterface(),
      gpu::AddressSpaceAttr::get(b.getContext(),
                                 gpu::AddressSpace::Workgroup));
  smem = toPointer(b, loc, gpu::DynamicSharedMemoryOp::create(b, loc, smemType),
                   kShared);
  codesA = toPointer(b, loc, args[0], kGlobal);
  scalesA = toPointer(b, loc, args[1], kGlobal);
  codesB = toPointer(b, loc, args[3], kGlobal);
  scalesB = toPointer(b, loc, args[4], kGlobal);
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
  return offsetPtr(smem, add(c32(plan.barrierBytes),
                             mul(stage, c32(plan.stageBytes))));
}
Value GemmPipelineEmitter::fullBarrier(Value stage) {
  return offsetPtr(smem, mul(stage, c32(8)));
}
Value GemmPipelineEmitter::emptyBarrier(Value stage) {
  return offsetPtr(smem, add(c32(8 * plan.stages), mul(stage, c32(8))));
}

void GemmPipelineEmitter::initBarriers() {
  auto ifFirst = scf::IfOp::create(b, loc, eq(tid, 0), false);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(ifFirst.thenBlock());
    for (int64_t s = 0; s < plan.stages; ++s) {
      // One arrival per phase on "full" (the producer's expect_tx); every
      // consumer thread arrives on "empty".
      NVVM::MBarrierInitOp::create(b, loc, fullBarrier(c32(s)),
                                   c32(plan.fullArrivals()), Value());
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
// The producer
//===----------------------------------------------------------------------===//

Value GemmPipelineEmitter::validRows(const GemmOperand &op, Value tileRow0) {
  // min(tileRows, rows - tileRow0), with tileRow0 < rows.
  Value left = arith::SubIOp::create(b, loc, c32(op.rows), tileRow0);
  return arith::MinUIOp::create(b, loc, left, c32(op.tileRows));
}

Value GemmPipelineEmitter::txBytes(const GemmOperand &op, Value valid) {
  Value codes = mul(valid, c32(kCodeBytesPerRow));
  Value scales;
  if (op.type.getLayout() == ScaleLayout::Swizzled128x4)
    scales = c32(op.scaleTileBytes);
  else if (plan.scaleStaging == GemmScaleStaging::Atoms128x4)
    scales = c32(0); // stored by the producer lanes, not copied
  else if (op.type.getBlockRows() == 16)
    scales = mul(lshr(add(valid, c32(15)), 4), c32(kScaleBytesPerRow));
  else
    scales = mul(valid, c32(kScaleBytesPerRow));
  return add(codes, scales);
}

void GemmPipelineEmitter::copyOperand(const GemmOperand &op, Value codes,
                                      Value scales, Value tileRow0,
                                      Value kStep, Value stage,
                                      Value barrier) {
  Value stageBase = stagePtr(stage);
  Value valid = validRows(op, tileRow0);
  int64_t codesRowBytes = plan.k / 2;
  int64_t scaleRowBytes = plan.k / 16;
  Value batchRow0 = add(mul(batchIdx, c32(op.rows)), tileRow0);
  auto copy = [&](Value dst, Value src, int64_t bytes) {
    if (plan.copyEngine == GemmCopyEngine::Thread16B) {
      for (int64_t at = 0; at < bytes; at += 16)
        NVVM::CpAsyncOp::create(b, loc, offsetPtr(dst, at),
                                offsetPtr(src, at), 16,
                                NVVM::LoadCacheModifierKind::CG, Value());
      return;
    }
    // The shared::cluster form of the copy exists since PTX 8.0 (sm_90);
    // the shared::cta form needs PTX 8.6. A CTA's own shared memory is part
    // of its cluster's window.
    Value clusterDst = LLVM::AddrSpaceCastOp::create(
        b, loc, LLVM::LLVMPointerType::get(b.getContext(), kSharedCluster),
        dst);
    NVVM::CpAsyncBulkGlobalToSharedClusterOp::create(
        b, loc, clusterDst, src, barrier, c32(bytes), Value(), Value());
  };
  auto ifThen = [&](Value cond, function_ref<void()> body) {
    auto ifOp = scf::IfOp::create(b, loc, cond, false);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(ifOp.thenBlock());
    body();
  };

  // Codes: one 128-byte copy per row; each lane takes every 32nd row.
  for (int64_t r0 = 0; r0 < op.tileRows; r0 += 32) {
    Value r = add(lane, c32(r0));
    ifThen(ult(r, valid), [&] {
      Value src = LLVM::GEPOp::create(
          b, loc, codes.getType(), b.getI8Type(), codes,
          ValueRange{offset64(b, loc, add(batchRow0, r), codesRowBytes,
                              mul(kStep, c32(kCodeBytesPerRow)))});
      if (plan.codesLayout == GemmCodesLayout::CoreMatrices) {
        // Row r % 8 of the 8 core matrices (one per 16-byte chunk along
        // K) of 8-row group r / 8: 16-byte copies, the only ones that fit.
        Value rowBase = add(c32(op.codesOffset),
                            add(mul(lshr(r, 3), c32(kCoreGroupBytes)),
                                mul(andi(r, 7), c32(16))));
        for (int64_t c = 0; c < kCodeBytesPerRow / 16; ++c)
          copy(offsetPtr(stageBase, add(rowBase, c32(c * 128))),
               offsetPtr(src, c * 16), 16);
      } else {
        Value dst = offsetPtr(stageBase, add(c32(op.codesOffset),
                                             mul(r, c32(GemmOperand::kCodesPitch))));
        copy(dst, src, kCodeBytesPerRow);
      }
      if (op.type.getLayout() == ScaleLayout::Linear &&
          op.type.getBlockRows() == 1 &&
          plan.scaleStaging == GemmScaleStaging::AsStored) {
        Value srcScale = LLVM::GEPOp::create(
            b, loc, scales.getType(), b.getI8Type(), scales,
            ValueRange{offset64(b, loc, add(batchRow0, r), scaleRowBytes,
                                mul(kStep, c32(kScaleBytesPerRow)))});
        copy(offsetPtr(stageBase,
                       add(c32(op.scalesOffset), mul(r, c32(kScaleBytesPerRow)))),
             srcScale, kScaleBytesPerRow);
      }
    });
  }
  if (op.type.getLayout() == ScaleLayout::Linear &&
      plan.scaleStaging == GemmScaleStaging::Atoms128x4)
    stageScalesAsAtoms(op, scales, tileRow0, kStep, stageBase);
  if (op.type.getLayout() == ScaleLayout::Linear &&
      op.type.getBlockRows() == 16 &&
      plan.scaleStaging == GemmScaleStaging::AsStored) {
    // One 16-byte scale row per 16 rows of the operand.
    Value groups = lshr(add(valid, c32(15)), 4);
    ifThen(ult(lane, groups), [&] {
      Value group = add(lshr(batchRow0, 4), lane);
      Value src = LLVM::GEPOp::create(
          b, loc, scales.getType(), b.getI8Type(), scales,
          ValueRange{offset64(b, loc, group, scaleRowBytes,
                              mul(kStep, c32(kScaleBytesPerRow)))});
      copy(offsetPtr(stageBase,
                     add(c32(op.scalesOffset), mul(lane, c32(kScaleBytesPerRow)))),
           src, kScaleBytesPerRow);
    });
  }
  if (op.type.getLayout() == ScaleLayout::Swizzled128x4) {
    // The tile's rows are whole 128-row atoms and a K step is 4 atoms of
    // 4 column blocks: tileRows / 128 contiguous runs of 2 KiB (the layout
    // pads rows to 128, so no copy reads past the buffer).
    int64_t paddedRows = llvm::alignTo(op.rows, 128);
    int64_t atomsPerRow = llvm::alignTo(plan.k / 16, 4) / 4;
    for (int64_t a = 0; a < op.tileRows / 128; ++a) {
      ifThen(eq(lane, a), [&] {
        Value atomRow = add(lshr(tileRow0, 7), c32(a));
        Value rowInBatch = add(mul(batchIdx, c32(paddedRows / 128)), atomRow);
        Value src = LLVM::GEPOp::create(
            b, loc, scales.getType(), b.getI8Type(), scales,
            ValueRange{offset64(b, loc, rowInBatch, atomsPerRow * 512,
                                mul(kStep, c32(4 * 512)))});
        copy(offsetPtr(stageBase, c32(op.scalesOffset + a * 4 * 512)), src,
             4 * 512);
      });
    }
  }
}

void GemmPipelineEmitter::emitProducer() {
  auto loop = scf::ForOp::create(b, loc, c32(0), c32(plan.kSteps()), c32(1));
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(loop.getBody());
  Value kStep = loop.getInductionVar();
  Value stage = stageOf(*this, kStep);
  // Wait until the consumers released the stage's previous contents; in the
  // first round the "previous phase" (parity 1) counts as complete.
  NVVM::MBarrierTryWaitParityOp::create(
      b, loc, emptyBarrier(stage),
      arith::XOrIOp::create(b, loc, parityOf(*this, kStep), c32(1)), c32(0));
  Value barrier = fullBarrier(stage);
  if (plan.copyEngine == GemmCopyEngine::Thread16B) {
    copyOperand(plan.a, codesA, scalesA, rowA0, kStep, stage, barrier);
    copyOperand(plan.b, codesB, scalesB, rowB0, kStep, stage, barrier);
    // Each lane's arrival fires once its own copies have landed.
    NVVM::CpAsyncMBarrierArriveOp::create(b, loc, barrier, /*noinc=*/true);
    return;
  }
  // Lane 0 announces the bytes this phase will receive and arrives; the
  // phase completes when they have all landed.
  auto ifLane0 = scf::IfOp::create(b, loc, eq(lane, 0), false);
  {
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPointToStart(ifLane0.thenBlock());
    Value bytes = add(txBytes(plan.a, validRows(plan.a, rowA0)),
                      txBytes(plan.b, validRows(plan.b, rowB0)));
    NVVM::MBarrierArriveExpectTxOp::create(b, loc, Type(), barrier, bytes,
                                           NVVM::MemScopeKind::CTA, false,
                                           Value());
  }
  copyOperand(plan.a, codesA, scalesA, rowA0, kStep, stage, barrier);
  copyOperand(plan.b, codesB, scalesB, rowB0, kStep, stage, barrier);
  if (plan.fullArrivals() == 2) {
    // Scales re-laid with st.shared (generic proxy) are read by tcgen05.cp
    // (async proxy): each lane fences its own stores, the warp syncs, and
    // lane 0 arrives for all of them (PTX ISA 9.7.16.6, 9.7.13.15.18).
    NVVM::FenceProxyOp::create(
        b, loc, NVVM::ProxyKind::async_shared,
        NVVM::SharedSpaceAttr::get(b.getContext(),
                                   NVVM::SharedSpace::shared_cta));
    NVVM::SyncWarpOp::create(b, loc, c32(-1));
    auto ifLane0Done = scf::IfOp::create(b, loc, eq(lane, 0), false);
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPointToStart(ifLane0Done.thenBlock());
    NVVM::MBarrierArriveOp::create(b, loc, Type(), barrier, Value());
  }
}

void GemmPipelineEmitter::stageScalesAsAtoms(const GemmOperand &op,
                                             Value scales, Value tileRow0,
                                             Value kStep, Value stageBase) {
  // A K step's 16 linear scale bytes of a row are 4 bytes for each of the
  // 4 atoms of the step: lane l takes rows l, l + 32, ... and moves them
  // with one 16-byte load and four 4-byte stores to
  //   atom (r / 128, j) at (4 (r / 128) + j) * 512, byte
  //   (r % 32) * 16 + ((r % 128) / 32) * 4  (getSm100ScaleAtomOffset).
  // Rows past the matrix edge are not written: their stale scales only
  // feed outputs that the epilogue does not store.
  Value valid = validRows(op, tileRow0);
  int64_t scaleRowBytes = plan.k / 16;
  Value batchRow0 = add(mul(batchIdx, c32(op.rows)), tileRow0);
  auto vec4 = VectorType::get({4}, b.getI32Type());
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
                            mul(kStep, c32(kScaleBytesPerRow)))});
    Value words = LLVM::LoadOp::create(b, loc, vec4, src, 16);
    Value inAtom = add(mul(andi(r, 31), c32(16)),
                       mul(lshr(andi(r, 127), 5), c32(4)));
    Value atomRow = mul(lshr(r, 7), c32(4 * 512));
    for (int64_t j = 0; j < 4; ++j) {
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

Value GemmPipelineEmitter::scaleOffset(const GemmOperand &op, Value tileRow,
                                       Value block) {
  Value offset;
  if (op.type.getLayout() == ScaleLayout::Swizzled128x4) {
    // Atom (tileRow / 128, block / 4), then docs/Numerics.md section 8.
    Value atom = add(mul(lshr(tileRow, 7), c32(4)), lshr(block, 2));
    Value inAtom = add(add(mul(andi(tileRow, 31), c32(16)),
                           mul(lshr(andi(tileRow, 127), 5), c32(4))),
                       andi(block, 3));
    offset = add(mul(atom, c32(512)), inAtom);
  } else {
    Value row = op.type.getBlockRows() == 16 ? lshr(tileRow, 4) : tileRow;
    offset = add(mul(row, c32(kScaleBytesPerRow)), block);
  }
  return add(c32(op.scalesOffset), offset);
}

Value GemmPipelineEmitter::epilogueScale() {
  auto amax = [&](Value buffer) {
    return loadAmax(b, loc, buffer);
  };
  // Same expression and order as the SIMT kernel and the reference.
  Value alpha = arith::MulFOp::create(b, loc, args[6], amax(args[2]));
  alpha = arith::MulFOp::create(b, loc, alpha, amax(args[5]));
  return arith::MulFOp::create(
      b, loc, alpha,
      arith::ConstantOp::create(
          b, loc, b.getF32FloatAttr(1.0f / (36.0f * 448.0f * 448.0f))));
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
  auto index = [&](Value v) {
    return arith::IndexCastUIOp::create(b, loc, b.getIndexType(), v);
  };
  Value flatRow = arith::AddIOp::create(
      b, loc, arith::MulIOp::create(b, loc, index(batchIdx),
                                    indexConstant(b, loc, plan.m)),
      index(row));
  Value flat = arith::AddIOp::create(
      b, loc, arith::MulIOp::create(b, loc, flatRow, indexConstant(b, loc, plan.n)),
      index(col));
  memref::StoreOp::create(b, loc, scaled, args[7], ValueRange{flat});
}

void GemmPipelineEmitter::storeMmaFragment(Value tileRow0, Value tileCol0,
                                           ValueRange c, Value scale) {
  Value row = add(tileRow0, lshr(lane, 2));
  Value col = add(tileCol0, mul(andi(lane, 3), c32(2)));
  for (int64_t j = 0; j < 4; ++j)
    storeOutput(add(row, c32(j / 2 * 8)), add(col, c32(j % 2)), c[j], scale);
}
