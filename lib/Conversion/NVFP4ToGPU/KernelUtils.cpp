//===- KernelUtils.cpp - helpers for writing kernel bodies ----------------===//
//
// Part of the nvfp4 project.
//
//===----------------------------------------------------------------------===//

#include "KernelUtils.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "llvm/Support/MathExtras.h"

using namespace mlir;
using namespace mlir::nvfp4;
using namespace mlir::nvfp4::kernels;

Value kernels::scaleOffset(IndexMath &m, BlockScaledTensorType type,
                           Value row, Value colBlock) {
  int64_t colBlocks = type.getCols() / type.getBlockCols();
  if (type.getLayout() == ScaleLayout::Linear)
    return m.add(m.mul(m.div(row, type.getBlockRows()), colBlocks), colBlock);
  int64_t rows = type.getRows();
  int64_t paddedRows = llvm::alignTo(rows, 128);
  int64_t paddedCols = llvm::alignTo(colBlocks, 4);
  Value batch = m.div(row, rows), r = m.rem(row, rows);
  Value atom = m.add(m.mul(m.div(r, 128), paddedCols / 4), m.div(colBlock, 4));
  Value inAtom = m.add(m.add(m.mul(m.rem(r, 32), 16),
                             m.mul(m.div(m.rem(r, 128), 32), 4)),
                       m.rem(colBlock, 4));
  return m.add(m.mul(batch, paddedRows * paddedCols),
               m.add(m.mul(atom, 512), inAtom));
}

Value kernels::loadAmax(OpBuilder &b, Location loc, Value amaxBits) {
  Value bits = memref::LoadOp::create(b, loc, amaxBits,
                                      ValueRange{indexConstant(b, loc, 0)});
  return arith::BitcastOp::create(b, loc, b.getF32Type(), bits);
}

Value kernels::codesAsWords(OpBuilder &b, Location loc, Value codes) {
  int64_t bytes = cast<MemRefType>(codes.getType()).getNumElements();
  return memref::ViewOp::create(
      b, loc, MemRefType::get({bytes / 4}, b.getI32Type()), codes,
      indexConstant(b, loc, 0), ValueRange());
}

Value kernels::givenAmaxBuffer(OpBuilder &b, Location loc, Value amax) {
  auto bufferType = MemRefType::get({1}, b.getI32Type());
  if (auto bitcast = amax.getDefiningOp<arith::BitcastOp>())
    if (auto load = bitcast.getIn().getDefiningOp<memref::LoadOp>();
        load && load.getMemRefType() == bufferType)
      return load.getMemRef();
  Value buffer = allocDevice(b, loc, bufferType, /*zeroFill=*/false);
  gpu::MemsetOp::create(
      b, loc, Type(), ValueRange(), buffer,
      arith::BitcastOp::create(b, loc, b.getI32Type(), amax));
  return buffer;
}

int64_t kernels::product(ArrayRef<int64_t> shape) {
  int64_t result = 1;
  for (int64_t d : shape)
    result *= d;
  return result;
}

std::string kernels::typeName(Type type) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << type;
  return text;
}

std::string kernels::shapeName(ArrayRef<int64_t> shape) {
  std::string text;
  llvm::raw_string_ostream os(text);
  llvm::interleave(shape, os, "x");
  return text;
}

std::string kernels::blockName(BlockScaledTensorType type) {
  return std::to_string(type.getBlockRows()) + "x16" +
         (type.getLayout() == ScaleLayout::Linear ? "" : "s");
}

/// Max over the lanes of a warp (xor butterfly), then one integer atomic
/// max of the FP32 bits into `amaxBits[0]` by lane 0 (non-negative floats
/// order like their bits; NaN never enters, maxnumf drops it).
void kernels::warpMaxToAmax(OpBuilder &b, Location loc, Value max, Value amaxBits) {
  IndexMath m{b, loc};
  for (int32_t offset : {16, 8, 4, 2, 1}) {
    Value other = gpu::ShuffleOp::create(b, loc, max, offset, 32,
                                         gpu::ShuffleMode::XOR)
                      .getShuffleResult();
    max = arith::MaxNumFOp::create(b, loc, max, other);
  }
  Value lane = m.rem(gpu::ThreadIdOp::create(b, loc, gpu::Dimension::x), 32);
  auto ifLeader = scf::IfOp::create(b, loc, m.eq(lane, 0),
                                    /*withElseRegion=*/false);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(ifLeader.thenBlock());
  Value bits = arith::BitcastOp::create(b, loc, b.getI32Type(), max);
  memref::AtomicRMWOp::create(b, loc, arith::AtomicRMWKind::maxs, bits,
                              amaxBits, ValueRange{m.c(0)});
}

// The transpose of a 16 x 16 nibble matrix as 2 x 2 blocks of 8 x 8: lanes
// 0-7 trade their columns 8-15 for the columns 0-7 of lanes 8-15 (one
// shuffle at distance 8), after which each word of a lane is a row of an
// 8 x 8 nibble matrix over 8 lanes; that is transposed in three steps of
// one shuffle each: 4 x 4 blocks (16-bit halves, one prmt), 2 x 2 blocks
// (bytes, one prmt), single nibbles (a rotate and a masked merge).
std::array<Value, 2> kernels::transposeNibbles16(OpBuilder &b, Location loc,
                                                 std::array<Value, 2> row,
                                                 Value lane) {
  ScalarBuilder s(b, loc);
  auto bitSet = [&](int64_t mask) {
    return arith::CmpIOp::create(
        b, loc, arith::CmpIPredicate::ne,
        arith::AndIOp::create(b, loc, lane, s.i32(mask)), s.i32(0));
  };
  auto select = [&](Value condition, Value yes, Value no) -> Value {
    return arith::SelectOp::create(b, loc, condition, yes, no);
  };
  auto shuffle = [&](Value value, int32_t offset) -> Value {
    return gpu::ShuffleOp::create(b, loc, value, offset, /*width=*/32,
                                  gpu::ShuffleMode::XOR)
        .getShuffleResult();
  };
  auto permute = [&](Value lo, Value hi, Value selector) -> Value {
    return NVVM::PermuteOp::create(
        b, loc, b.getI32Type(), lo, hi, selector,
        NVVM::PermuteModeAttr::get(b.getContext(),
                                   NVVM::PermuteMode::DEFAULT));
  };
  Value upper = bitSet(8);
  Value received = shuffle(select(upper, row[0], row[1]), 8);
  std::array<Value, 2> words = {select(upper, received, row[0]),
                                select(upper, row[1], received)};
  // prmt selectors (result byte i from byte nibble-i of {partner, own}):
  // keep the own half/byte where the lane bit is clear, else the partner's.
  Value halves = select(bitSet(4), s.i32(0x3276), s.i32(0x5410));
  Value bytes = select(bitSet(2), s.i32(0x3715), s.i32(0x6240));
  Value odd = bitSet(1);
  Value rotation = select(odd, s.i32(28), s.i32(4));
  Value keep = select(odd, s.i32(0xF0F0F0F0), s.i32(0x0F0F0F0F));
  Value take = arith::XOrIOp::create(b, loc, keep, s.i32(0xFFFFFFFF));
  for (Value &word : words) {
    word = permute(word, shuffle(word, 4), halves);
    word = permute(word, shuffle(word, 2), bytes);
    Value partner = shuffle(word, 1);
    Value moved = LLVM::FshlOp::create(b, loc, partner, partner, rotation);
    word = arith::OrIOp::create(b, loc,
                                arith::AndIOp::create(b, loc, word, keep),
                                arith::AndIOp::create(b, loc, moved, take));
  }
  return words;
}

std::pair<Value, Value> kernels::transposedTilePlace(IndexMath &m,
                                                    Value tileRow,
                                                    Value tileCol, Value col,
                                                    int64_t rows,
                                                    int64_t cols) {
  int64_t tilesPerMatrixRow = rows / 16;
  Value batch = m.div(tileRow, tilesPerMatrixRow);
  Value localTileRow = m.rem(tileRow, tilesPerMatrixRow);
  Value outRow = m.add(m.mul(batch, cols), m.add(m.mul(tileCol, 16), col));
  Value word = m.add(m.mul(outRow, rows / 8), m.mul(localTileRow, 2));
  Value scale =
      m.add(m.mul(batch, (cols / 16) * tilesPerMatrixRow),
            m.add(m.mul(tileCol, tilesPerMatrixRow), localTileRow));
  return {word, scale};
}
