//===- KernelUtils.h - helpers for writing kernel bodies --------*- C++ -*-===//
//
// Part of the nvfp4 project.
//
//===----------------------------------------------------------------------===//
//
// Small helpers shared by the kernel generators: index arithmetic with
// constants, the scale-buffer offset of a block in each layout, the amax
// buffer, and names.
//
//===----------------------------------------------------------------------===//

#ifndef NVFP4_LIB_CONVERSION_NVFP4TOGPU_KERNELUTILS_H
#define NVFP4_LIB_CONVERSION_NVFP4TOGPU_KERNELUTILS_H

#include "KernelBuilder.h"
#include "nvfp4/Conversion/Utils/ElementBuilders.h"
#include "nvfp4/Dialect/NVFP4/IR/NVFP4Dialect.h"
#include "nvfp4/Target/Chip.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Transforms/DialectConversion.h"

#include <string>

namespace mlir {
namespace nvfp4 {
namespace kernels {

/// Index arithmetic with constants, for readable kernel bodies.
struct IndexMath {
  OpBuilder &b;
  Location loc;
  Value c(int64_t v) { return indexConstant(b, loc, v); }
  Value add(Value x, Value y) { return arith::AddIOp::create(b, loc, x, y); }
  Value mul(Value x, int64_t y) {
    return arith::MulIOp::create(b, loc, x, c(y));
  }
  Value div(Value x, int64_t y) {
    return arith::DivUIOp::create(b, loc, x, c(y));
  }
  Value rem(Value x, int64_t y) {
    return arith::RemUIOp::create(b, loc, x, c(y));
  }
  Value lt(Value x, int64_t y) {
    return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, x, c(y));
  }
  Value eq(Value x, int64_t y) {
    return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, x, c(y));
  }
};

/// Byte offset of the scale of (row, colBlock) in the scale buffer of
/// `type` (docs/Numerics.md section 8 for the swizzled layout; one matrix
/// per batch element). `row` counts rows over all batch elements.
Value scaleOffset(IndexMath &m, BlockScaledTensorType type, Value row,
                  Value colBlock);

/// Loads the amax buffer (FP32 bits in an i32) as an f32.
Value loadAmax(OpBuilder &b, Location loc, Value amaxBits);

/// The codes buffer (flat i8, two codes a byte) seen as i32 words, for
/// 8-byte stores of a block's codes.
Value codesAsWords(OpBuilder &b, Location loc, Value codes);

/// The device buffer (memref<1xi32>, FP32 bits) a kernel reads a given f32
/// `amax` from: the buffer it was loaded from when a kernel computed it
/// (loadAmax: no round trip through the host), else a new one the host
/// fills with its bits.
Value givenAmaxBuffer(OpBuilder &b, Location loc, Value amax);

/// Max of the f32 `max` over the lanes of a warp (xor butterfly), then one
/// integer atomic max of the FP32 bits into `amaxBits[0]` (memref<1xi32>)
/// by lane 0: non-negative floats order like their bits, and NaN never
/// enters (maxnumf drops it). Every lane of the warp must call it.
void warpMaxToAmax(OpBuilder &b, Location loc, Value max, Value amaxBits);

//===----------------------------------------------------------------------===//
// Quantization pieces the GEMM epilogues share with the quantize kernels
// (defined in QuantizeKernels.cpp): the same instructions, so the same
// bytes.
//===----------------------------------------------------------------------===//

/// Transposes the 16 x 16 matrix of E2M1 codes that the 16 lanes of each
/// half warp hold: lane i holds row i as two words (column c at bits
/// 4 * (c % 8) of word c / 8, the packed byte order); each lane gets column
/// (i) in the same form. 7 shuffles and about 15 integer operations a lane. `lane`
/// is the lane id (i32); every lane of the warp must call it.
std::array<Value, 2> transposeNibbles16(OpBuilder &b, Location loc,
                                        std::array<Value, 2> row, Value lane);

/// Where column `col` of 16x16 tile (tileRow, tileCol) of a [batch...,
/// rows, cols] tensor (tile rows counted over all batch elements) lands in
/// its transpose: the offset of the column's 16 codes in the transposed
/// codes seen as i32 words (codesAsWords), and the index of the tile's
/// linear scale.
std::pair<Value, Value> transposedTilePlace(IndexMath &m, Value tileRow,
                                            Value tileCol, Value col,
                                            int64_t rows, int64_t cols);

/// Maximum of `value` (f32) over the 16 lanes of a half warp.
Value halfWarpMaxOf(OpBuilder &b, Location loc, Value value);

/// One byte of two E2M1 codes, round to nearest even: `lo` (already
/// multiplied by its block's encode factor) in the low nibble, `hi` in the
/// high one. The hardware cvt where the chip has it, exact emulation
/// elsewhere.
Value encodePairNearestEven(OpBuilder &b, Location loc, Value lo, Value hi,
                            const ::nvfp4::target::ChipInfo &chip);

/// Device buffers for the codes and scales of a quantization to `type`
/// (the parts `converter` gives it); the swizzled layout's padding (rows to
/// 128, scale columns to 4) is zero-filled, since the kernels write only
/// the scales of real blocks (QuantizeKernels.cpp).
FailureOr<std::pair<Value, Value>>
allocateQuantizedParts(OpBuilder &b, Location loc,
                       const TypeConverter &converter,
                       BlockScaledTensorType type);

/// A quantized 1x16 block: its E4M3 scale (i8) and the 8 code bytes as two
/// i32 words (even element in the low nibble).
struct QuantizedRun {
  Value scaleCode;
  std::array<Value, 2> words;
};

/// Quantizes the 16 f32 `values` of one block with the tensor scale
/// `scale`, rounding to nearest even (lib/Numerics' quantize).
QuantizedRun quantizeRunNearestEven(OpBuilder &b, Location loc,
                                    ArrayRef<Value> values,
                                    const ScalarBuilder::TensorScale &scale,
                                    const ::nvfp4::target::ChipInfo &chip);

/// Product of the dimensions.
int64_t product(ArrayRef<int64_t> shape);

/// "bf16", "f32": the printed form of a type, for kernel names.
std::string typeName(Type type);

/// "4x8x16": a shape, for kernel names.
std::string shapeName(ArrayRef<int64_t> shape);

/// "1x16", "16x16s" (s for swizzled scales): a block-scaled operand's form,
/// for kernel names.
std::string blockName(BlockScaledTensorType type);

} // namespace kernels
} // namespace nvfp4
} // namespace mlir

#endif // NVFP4_LIB_CONVERSION_NVFP4TOGPU_KERNELUTILS_H
