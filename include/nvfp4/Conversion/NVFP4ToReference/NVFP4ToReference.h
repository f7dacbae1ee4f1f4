//===- NVFP4ToReference.h - nvfp4 to bit-exact tensor code ------*- C++ -*-===//
//
// Part of the nvfp4 project.
//
//===----------------------------------------------------------------------===//
//
// Public entry points of the reference lowering, for compilers that embed
// it in their own conversion: the type converter (one !nvfp4.tensor becomes
// codes, scales and amax) and the pattern sets, one per op family.
//
//===----------------------------------------------------------------------===//

#ifndef NVFP4_CONVERSION_NVFP4TOREFERENCE_NVFP4TOREFERENCE_H
#define NVFP4_CONVERSION_NVFP4TOREFERENCE_NVFP4TOREFERENCE_H

#include "nvfp4/Dialect/NVFP4/IR/NVFP4Ops.h"

#include "mlir/Transforms/DialectConversion.h"

#include <utility>

namespace mlir {
class RewritePatternSet;

namespace nvfp4 {

/// Converts `!nvfp4.tensor<...>` to (tensor<shape x i8> codes,
/// tensor<scale shape x i8> scale bits, f32 amax) and leaves other types
/// alone.
class ReferenceTypeConverter : public TypeConverter {
public:
  ReferenceTypeConverter();
};

/// nvfp4.amax, nvfp4.quantize and nvfp4.hadamard.
void populateQuantizeToReferencePatterns(const TypeConverter &converter,
                                         RewritePatternSet &patterns);

/// nvfp4.dequantize and nvfp4.scaled_matmul.
void populateMatmulToReferencePatterns(const TypeConverter &converter,
                                       RewritePatternSet &patterns);

/// nvfp4.pack, nvfp4.unpack and nvfp4.swizzle_scales.
void populatePackingToReferencePatterns(const TypeConverter &converter,
                                        RewritePatternSet &patterns);

/// Replaces `op` by the two nvfp4.quantize ops it stands for -- the
/// rowwise one of its input and the columnwise one of a linalg.transpose of
/// the input (last two dimensions) -- and returns them (rowwise,
/// columnwise). The reference lowering runs on this form; any lowering
/// without a fused kernel can.
std::pair<QuantizeOp, QuantizeOp> decomposeDualQuantize(RewriterBase &rewriter,
                                                        DualQuantizeOp op);

/// All of the above.
void populateNVFP4ToReferencePatterns(const TypeConverter &converter,
                                      RewritePatternSet &patterns);

} // namespace nvfp4
} // namespace mlir

#endif // NVFP4_CONVERSION_NVFP4TOREFERENCE_NVFP4TOREFERENCE_H
