//===- F16Decode.cpp - E2M1 codes x E4M3 scales to exact F16 --------------===//
//
// Part of the nvfp4 project.
//
//===----------------------------------------------------------------------===//

#include "F16Decode.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"

#include <cmath>

using namespace mlir;
using namespace mlir::nvfp4;
using namespace mlir::nvfp4::kernels;

namespace {
// F16 high bytes of the E2M1 magnitudes 0, 0.5, 1, 1.5, 2, 3, 4, 6 (codes
// 0..7; every low byte is 0): 0x00 0x38 0x3C 0x3E | 0x40 0x42 0x44 0x46.
constexpr int64_t kF16HighBytes0 = 0x3E3C3800, kF16HighBytes1 = 0x46444240;

Value c32(OpBuilder &b, Location loc, int64_t v) {
  return arith::ConstantIntOp::create(b, loc, b.getI32Type(), v);
}
Value prmt(OpBuilder &b, Location loc, Value lo, Value hi, Value selector) {
  return NVVM::PermuteOp::create(b, loc, b.getI32Type(), lo, hi, selector,
                                 NVVM::PermuteMode::DEFAULT);
}
Value andi(OpBuilder &b, Location loc, Value x, int64_t mask) {
  return arith::AndIOp::create(b, loc, x, c32(b, loc, mask));
}
} // namespace

std::array<Value, 4> kernels::decodeE2M1x8ToF16(OpBuilder &b, Location loc,
                                                Value word) {
  Value tableLo = c32(b, loc, kF16HighBytes0);
  Value tableHi = c32(b, loc, kF16HighBytes1);
  // The magnitudes of codes 0-3 and 4-7 as bytes H0..H3 and H4..H7.
  Value low = prmt(b, loc, tableLo, tableHi, andi(b, loc, word, 0x7777));
  Value high =
      prmt(b, loc, tableLo, tableHi,
           andi(b, loc, arith::ShRUIOp::create(b, loc, word, c32(b, loc, 16)),
                0x7777));
  std::array<Value, 4> words;
  for (int64_t i = 0; i < 4; ++i) {
    // Bytes [0, H_i, 0, H_{i+4}]: selector 0x8 is the sign-replicated byte
    // 0 of `low`, whose top bit -- like every H's -- is 0.
    int64_t selector = 0x8 | (i << 4) | (0x8 << 8) | ((4 + i) << 12);
    Value magnitude = prmt(b, loc, low, high, c32(b, loc, selector));
    // Sign bits 4i + 3 and 4i + 19 to 15 and 31 (a multiply by a power of
    // two, which ptxas may issue on the FMA pipe rather than the ALU).
    Value signs =
        i == 3 ? word
               : arith::MulIOp::create(b, loc, word,
                                       c32(b, loc, int64_t(1) << (12 - 4 * i)));
    words[i] = arith::OrIOp::create(b, loc, magnitude,
                                    andi(b, loc, signs, 0x80008000));
  }
  return words;
}

std::array<Value, 4> kernels::decodeE2M1x8ToF16Pow2(OpBuilder &b, Location loc,
                                                    Value word) {
  auto shift = [&](Value x, int64_t bits) -> Value {
    if (bits > 0)
      return arith::ShLIOp::create(b, loc, x, c32(b, loc, bits));
    return arith::ShRUIOp::create(b, loc, x, c32(b, loc, -bits));
  };
  // (a & ~0x0E0E0E0E) | (b & 0x0E0E0E0E): a carries only sign bits, which
  // land on bit 7 or bit 3 of a byte, so outside the mask it is the sign
  // or zero (one lop3).
  auto merge = [&](Value signs, Value magnitudes) -> Value {
    return arith::OrIOp::create(b, loc, andi(b, loc, signs, int32_t(~0x0E0E0E0Eu)),
                                andi(b, loc, magnitudes, 0x0E0E0E0E));
  };
  Value signs = andi(b, loc, word, int32_t(0x88888888u));
  // Byte j: the high byte of code 2j (its sign from bit 3 to 7, magnitude
  // from bits 0..2 to 1..3), resp. of code 2j + 1 (sign already at bit 7,
  // magnitude from bits 4..6 to 1..3).
  Value even = merge(shift(signs, 4), shift(word, 1));
  Value odd = merge(signs, shift(word, -3));
  Value zero = c32(b, loc, 0);
  // Word i = {code i, code i + 4}: bytes [0, H_i, 0, H_{i+4}], codes i and
  // i + 4 being bytes i / 2 and i / 2 + 2 of `even` (i even) or `odd`.
  std::array<Value, 4> words;
  for (int64_t i = 0; i < 4; ++i) {
    int64_t byte = i / 2;
    int64_t selector = 0x4 | (byte << 4) | (0x4 << 8) | ((byte + 2) << 12);
    words[i] = prmt(b, loc, i % 2 ? odd : even, zero, c32(b, loc, selector));
  }
  return words;
}

std::array<Value, 2> kernels::decodeE4M3x2ToF16Pairs(OpBuilder &b, Location loc,
                                                     Value twoBytes,
                                                     int exponent) {
  Value scales = NVVM::ConvertF8x2ToF16x2Op::create(
      b, loc, VectorType::get({2}, b.getF16Type()), twoBytes,
      b.getBoolAttr(false), TypeAttr::get(b.getType<Float8E4M3FNType>()));
  if (exponent) {
    auto f16 = b.getF16Type();
    auto type = VectorType::get({2}, f16);
    Attribute power = b.getFloatAttr(f16, std::ldexp(1.0, exponent));
    Value factor = arith::ConstantOp::create(
        b, loc, type, DenseElementsAttr::get(type, power));
    scales = arith::MulFOp::create(b, loc, scales, factor);
  }
  Value bits = LLVM::BitcastOp::create(b, loc, b.getI32Type(), scales);
  return {prmt(b, loc, bits, bits, c32(b, loc, 0x1010)),
          prmt(b, loc, bits, bits, c32(b, loc, 0x3232))};
}

Value kernels::mulF16x2(OpBuilder &b, Location loc, Value x, Value y) {
  auto type = VectorType::get({2}, b.getF16Type());
  Value product =
      arith::MulFOp::create(b, loc, LLVM::BitcastOp::create(b, loc, type, x),
                            LLVM::BitcastOp::create(b, loc, type, y));
  return LLVM::BitcastOp::create(b, loc, b.getI32Type(), product);
}
