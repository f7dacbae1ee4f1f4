//===- NVFP4Ops.cpp - nvfp4 operation verifiers and folders --------------===//
//
// Part of the nvfp4 project.
//
// Each check carries the label of the constraint it enforces, as numbered in
// the op's description in NVFP4Ops.td (`quantize_c2` is (C2) of
// nvfp4.quantize); test/Dialect/NVFP4/invalid.mlir has a test per label.
//
//===----------------------------------------------------------------------===//

#include "nvfp4/Dialect/NVFP4/IR/NVFP4Ops.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/Matchers.h"
#include "llvm/ADT/StringExtras.h"
#include "mlir/IR/OpImplementation.h"

using namespace mlir;
using namespace mlir::nvfp4;

/// Prints a shape as `AxBxC` for diagnostics.
/// "16x?x32": dynamic sizes as MLIR spells them (not as kDynamic, INT64_MIN).
static std::string formatShape(ArrayRef<int64_t> shape) {
  std::string text;
  llvm::raw_string_ostream os(text);
  llvm::interleave(
      shape, os,
      [&](int64_t size) {
        if (ShapedType::isDynamic(size))
          os << '?';
        else
          os << size;
      },
      "x");
  return text;
}

/// Prints a block shape as `RxC`.
static std::string formatBlockShape(ArrayRef<int64_t> block) {
  return formatShape(block);
}

/// Whether `type` can be the operand of the 16-point RHT: BF16 with a
/// static last dimension that is a multiple of 16 (hadamard_c1, c2).
static bool isHadamardOperand(RankedTensorType type) {
  return type.getElementType().isBF16() && type.getRank() > 0 &&
         !type.isDynamicDim(type.getRank() - 1) &&
         type.getShape().back() % kBlockSize == 0;
}

/// Whether the static dimensions of `type` have at most
/// kMaxBlockScaledElements elements, as rule T6 bounds `!nvfp4.tensor`: the
/// lowerings compute element counts, grids and byte offsets in int64, and a
/// count that wraps (2^60 x 16 is 16 modulo 2^64) would build kernels for
/// the wrong size. Dynamic dimensions are bounded at run time.
static bool hasBoundedElementCount(ShapedType type) {
  SmallVector<int64_t> staticDims;
  for (int64_t dim : type.getShape())
    if (!ShapedType::isDynamic(dim))
      staticDims.push_back(dim);
  return getBoundedElementCount(staticDims).has_value();
}

static InFlightDiagnostic emitTooLarge(Operation *op, StringRef what,
                                       Type type) {
  return op->emitOpError()
         << what << " " << type
         << " has more than 2^47 elements (the bound of !nvfp4.tensor, rule "
            "T6)";
}

/// A tensor amax is `max |x|`: never negative and never NaN (+inf is a
/// valid amax). A constant one that is either gives scale bytes 0xFF and NaN
/// outputs, so it is rejected when it is known (quantize_c5,
/// scaled_matmul_quantize_c5, pack_c3); a run-time value is the caller's
/// contract, as for the Python module's `amax=`.
static LogicalResult verifyConstantAmax(Operation *op, Value amax) {
  FloatAttr constant;
  if (!amax || !matchPattern(amax, m_Constant(&constant)))
    return success();
  const APFloat &value = constant.getValue();
  // -0.0 compares equal to 0 and gives S_enc = 1 like +0.0.
  if (value.isNaN() || (value.isNegative() && !value.isZero()))
    return op->emitOpError("the tensor amax must be non-negative and not NaN "
                           "(an amax is max |x|), got ")
           << constant;
  return success();
}

/// Quantizing ops compute an amax; a decode scale only comes from a
/// checkpoint through nvfp4.pack.
static LogicalResult verifyAmaxResult(Operation *op, StringRef name,
                                      BlockScaledTensorType type) {
  if (!type.hasDecodeScale())
    return success();
  return op->emitOpError("the ")
         << name << " must hold an amax, got tensor_scale = decode (a decode "
                    "scale is assembled with nvfp4.pack)";
}

//===----------------------------------------------------------------------===//
// AmaxOp
//===----------------------------------------------------------------------===//

LogicalResult AmaxOp::verify() {
  auto inputType = cast<RankedTensorType>(getInput().getType());
  // amax_c2
  if (getHadamard() && !isHadamardOperand(inputType))
    return emitOpError("with hadamard, the input must be BF16 with a static "
                       "last dimension that is a multiple of 16, got ")
           << inputType;
  // amax_c3
  if (!hasBoundedElementCount(inputType))
    return emitTooLarge(*this, "input", inputType);
  return success();
}

//===----------------------------------------------------------------------===//
// QuantizeOp
//===----------------------------------------------------------------------===//

LogicalResult QuantizeOp::verify() {
  auto inputType = cast<RankedTensorType>(getInput().getType());
  BlockScaledTensorType resultType = getResult().getType();
  // quantize_c1
  if (inputType.getShape() != resultType.getShape())
    return emitOpError("input shape ")
           << formatShape(inputType.getShape())
           << " does not match result shape "
           << formatShape(resultType.getShape());
  // quantize_c2
  if (getRounding() == RoundingMode::Stochastic && !getSeed())
    return emitOpError("stochastic rounding requires a seed operand");
  // quantize_c3
  if (getRounding() != RoundingMode::Stochastic && getSeed())
    return emitOpError("a seed is only meaningful with rounding<stochastic>");
  // quantize_c4
  if (getHadamard() &&
      (!inputType.getElementType().isBF16() || resultType.getBlockRows() != 1))
    return emitOpError("with hadamard, the input must be BF16 and the blocks "
                       "1x16 (one block per RHT chunk), got ")
           << inputType << " with " << formatBlockShape(resultType.getBlockShape())
           << " blocks";
  // quantize_c5
  if (failed(verifyConstantAmax(*this, getAmax())))
    return failure();
  // quantize_c6
  if (resultType.isMX()) {
    StringRef format = stringifyBlockScaledFormat(resultType.getFormat());
    if (getAmax())
      return emitOpError("an amax operand is meaningless for ")
             << format << ": the MX formats have no tensor scale";
    if (getHadamard() || getRounding() != RoundingMode::NearestEven)
      return emitOpError("quantize to ")
             << format
             << " supports only round to nearest even without hadamard";
  }
  // quantize_c7
  return verifyAmaxResult(*this, "result", resultType);
}

//===----------------------------------------------------------------------===//
// DualQuantizeOp
//===----------------------------------------------------------------------===//

LogicalResult DualQuantizeOp::verify() {
  auto inputType = cast<RankedTensorType>(getInput().getType());
  BlockScaledTensorType rowType = getRowwise().getType();
  BlockScaledTensorType columnType = getColumnwise().getType();
  // dual_quantize_c1
  if (inputType.getShape() != rowType.getShape())
    return emitOpError("input shape ")
           << formatShape(inputType.getShape())
           << " does not match rowwise result shape "
           << formatShape(rowType.getShape());
  // dual_quantize_c2
  SmallVector<int64_t> transposed(inputType.getShape());
  std::swap(transposed[transposed.size() - 2], transposed.back());
  if (columnType.getShape() != ArrayRef<int64_t>(transposed))
    return emitOpError("columnwise result shape ")
           << formatShape(columnType.getShape()) << " should be "
           << formatShape(transposed)
           << " (the input's with the last two dimensions swapped)";
  // dual_quantize_c3
  for (auto [name, type] : {std::pair{"rowwise", rowType},
                            std::pair{"columnwise", columnType}})
    if (type.isMX() || type.getBlockRows() != 1)
      return emitOpError("the ")
             << name << " result must be NVFP4 with 1x16 blocks, got "
             << type;
  // dual_quantize_c4
  auto checkSeed = [&](StringRef name, RoundingMode rounding,
                       Value seed) -> LogicalResult {
    if (rounding == RoundingMode::Stochastic && !seed)
      return emitOpError("stochastic rounding of the ")
             << name << " part requires a seed operand";
    if (rounding != RoundingMode::Stochastic && seed)
      return emitOpError("a seed of the ")
             << name << " part is only meaningful with rounding<stochastic>";
    return success();
  };
  if (failed(checkSeed("rowwise", getRounding(), getSeed())) ||
      failed(checkSeed("columnwise", getColumnwiseRounding(),
                       getColumnwiseSeed())))
    return failure();
  // dual_quantize_c5
  if (getHadamard() && !inputType.getElementType().isBF16())
    return emitOpError("with hadamard, the input must be BF16, got ")
           << inputType;
  // dual_quantize_c6
  if (failed(verifyAmaxResult(*this, "rowwise result", rowType)))
    return failure();
  return verifyAmaxResult(*this, "columnwise result", columnType);
}

//===----------------------------------------------------------------------===//
// DequantizeOp
//===----------------------------------------------------------------------===//

LogicalResult DequantizeOp::verify() {
  auto resultType = cast<RankedTensorType>(getResult().getType());
  // dequantize_c1
  if (getInput().getType().getShape() != resultType.getShape())
    return emitOpError("input shape ")
           << formatShape(getInput().getType().getShape())
           << " does not match result shape "
           << formatShape(resultType.getShape());
  return success();
}

//===----------------------------------------------------------------------===//
// HadamardOp
//===----------------------------------------------------------------------===//

LogicalResult HadamardOp::verify() {
  auto inputType = cast<RankedTensorType>(getInput().getType());
  // hadamard_c1
  if (inputType.getRank() == 0 || inputType.isDynamicDim(inputType.getRank() - 1) ||
      inputType.getShape().back() % kBlockSize != 0)
    return emitOpError("last dimension must be static and a multiple of 16, "
                       "got ")
           << inputType;
  // hadamard_c3
  if (!hasBoundedElementCount(inputType))
    return emitTooLarge(*this, "input", inputType);
  return success();
}

//===----------------------------------------------------------------------===//
// ScaledMatmulOp
//===----------------------------------------------------------------------===//

/// The shape rules scaled_matmul and scaled_matmul_quantize share
/// (scaled_matmul_c1..c3, scaled_matmul_quantize_c1..c3).
static LogicalResult verifyMatmulShapes(Operation *op,
                                        BlockScaledTensorType lhsType,
                                        BlockScaledTensorType rhsType,
                                        ArrayRef<int64_t> resultShape) {
  // c1
  if (lhsType.getRank() != rhsType.getRank() ||
      lhsType.getBatchShape() != rhsType.getBatchShape())
    return op->emitOpError("lhs batch dimensions [")
           << formatShape(lhsType.getBatchShape())
           << "] do not match rhs batch dimensions ["
           << formatShape(rhsType.getBatchShape()) << "]";
  // c2
  if (lhsType.getCols() != rhsType.getCols())
    return op->emitOpError("contraction dimensions differ: lhs has K = ")
           << lhsType.getCols() << ", rhs has K = " << rhsType.getCols();
  // c3
  SmallVector<int64_t> expected(lhsType.getBatchShape());
  expected.push_back(lhsType.getRows());
  expected.push_back(rhsType.getRows());
  if (resultShape != ArrayRef<int64_t>(expected))
    return op->emitOpError("result shape ")
           << formatShape(resultShape) << " should be "
           << formatShape(expected) << " (batch x M x N)";
  return success();
}

LogicalResult ScaledMatmulOp::verify() {
  auto resultType = cast<RankedTensorType>(getResult().getType());
  if (failed(verifyMatmulShapes(*this, getLhs().getType(), getRhs().getType(),
                                resultType.getShape())))
    return failure();
  // scaled_matmul_c4
  if (!hasBoundedElementCount(resultType))
    return emitTooLarge(*this, "result", resultType);
  // scaled_matmul_c5
  if (getLhs().getType().getScaleType() != getRhs().getType().getScaleType())
    return emitOpError("lhs and rhs must both be NVFP4 or both MX, got ")
           << stringifyBlockScaledFormat(getLhs().getType().getFormat())
           << " and "
           << stringifyBlockScaledFormat(getRhs().getType().getFormat());
  return success();
}

LogicalResult ScaledMatmulQuantizeOp::verify() {
  BlockScaledTensorType resultType = getResult().getType();
  if (failed(verifyMatmulShapes(*this, getLhs().getType(), getRhs().getType(),
                                resultType.getShape())))
    return failure();
  // scaled_matmul_quantize_c4
  if (resultType.getBlockRows() != 1 ||
      resultType.getLayout() != ScaleLayout::Linear)
    return emitOpError("the result must have 1x16 blocks and linear scales "
                       "(the epilogue quantizes runs of 16 along N), got ")
           << resultType;
  // scaled_matmul_quantize_c5
  if (failed(verifyConstantAmax(*this, getAmax())))
    return failure();
  // scaled_matmul_quantize_c6
  for (BlockScaledTensorType type :
       {getLhs().getType(), getRhs().getType(), resultType})
    if (type.isMX())
      return emitOpError("supports NVFP4 operands and results only, got ")
             << type;
  // scaled_matmul_quantize_c7
  return verifyAmaxResult(*this, "result", resultType);
}

Operation *ScaledMatmulQuantizeOp::decompose(RewriterBase &rewriter) {
  OpBuilder::InsertionGuard guard(rewriter);
  rewriter.setInsertionPoint(*this);
  BlockScaledTensorType type = getResult().getType();
  auto product = ScaledMatmulOp::create(
      rewriter, getLoc(), RankedTensorType::get(type.getShape(), getProductElementType()),
      /*result_amax=*/Type(), getLhs(), getRhs(), getAlpha(), getRoleAttr());
  product->setDiscardableAttrs(getOperation()->getDiscardableAttrDictionary());
  auto quantize = QuantizeOp::create(rewriter, getLoc(), type,
                                     product.getResult(), getAmax(),
                                     /*seed=*/Value());
  rewriter.replaceOp(*this, quantize.getResult());
  return quantize;
}

//===----------------------------------------------------------------------===//
// PackOp / UnpackOp
//===----------------------------------------------------------------------===//

LogicalResult PackOp::verify() {
  // pack_c3
  if (failed(verifyConstantAmax(*this, getAmax())))
    return failure();
  // pack_c5
  FloatAttr decode;
  if (getResult().getType().hasDecodeScale() &&
      matchPattern(getAmax(), m_Constant(&decode)) &&
      decode.getValue().isInfinity())
    return emitOpError("a decode scale must be finite, got ") << decode;
  // pack_c4: an E4M3 block scale is a positive magnitude (the type's sign
  // bit is always 0); 0x7F/0xFF are E4M3FN's NaN. E8M0 has no sign and one
  // NaN, 0xFF.
  DenseElementsAttr scales;
  if (!matchPattern(getScales(), m_Constant(&scales)))
    return success();
  bool e8m0 = getResult().getType().isMX();
  ArrayRef<char> raw = scales.getRawData();
  for (auto [index, byte] : llvm::enumerate(raw)) {
    uint8_t bits = static_cast<uint8_t>(byte);
    if (e8m0 ? bits != 0xFF : (bits & 0x80) == 0 && (bits & 0x7F) != 0x7F)
      continue;
    return emitOpError("block scales must be non-negative and not NaN (")
           << (e8m0 ? "E8M0 bits 0x00-0xFE" : "E4M3 bits 0x00-0x7E")
           << "), got 0x"
           << llvm::utohexstr(bits) << " at "
           << (scales.isSplat() ? std::string("every element")
                                : "flat index " + std::to_string(index));
  }
  return success();
}

// The folders below look through a producer of the same family. In a graph
// region (e.g. at module level) the producer may be the op's own user --
// `%p = pack(unpack(%p))`, `%x = transpose(%y)`, `%y = transpose(%x)` -- and
// folding would return the op's own result: the greedy driver and dialect
// conversion then fold the same op forever. Each folder refuses a result
// that is the op itself.

OpFoldResult PackOp::fold(FoldAdaptor) {
  // pack(unpack(q)) is q: the parts are exactly the parts of q.
  auto unpack = getCodes().getDefiningOp<UnpackOp>();
  if (!unpack || getScales() != unpack.getScales() ||
      getAmax() != unpack.getAmax() ||
      unpack.getInput().getType() != getResult().getType() ||
      unpack.getInput() == getResult())
    return {};
  return unpack.getInput();
}

LogicalResult UnpackOp::fold(FoldAdaptor,
                             SmallVectorImpl<OpFoldResult> &results) {
  // unpack(pack(c, s, a)) is (c, s, a).
  auto pack = getInput().getDefiningOp<PackOp>();
  if (!pack || llvm::any_of(pack->getOperands(), [&](Value part) {
        return part.getDefiningOp() == getOperation();
      }))
    return failure();
  results.push_back(pack.getCodes());
  results.push_back(pack.getScales());
  results.push_back(pack.getAmax());
  return success();
}

//===----------------------------------------------------------------------===//
// SwizzleScalesOp
//===----------------------------------------------------------------------===//

LogicalResult SwizzleScalesOp::verify() {
  BlockScaledTensorType inputType = getInput().getType();
  BlockScaledTensorType resultType = getResult().getType();
  // swizzle_scales_c1
  if (inputType.cloneWithLayout(resultType.getLayout()) != resultType)
    return emitOpError("result type ")
           << resultType << " may differ from input type " << inputType
           << " only in its scale layout";
  return success();
}

OpFoldResult SwizzleScalesOp::fold(FoldAdaptor) {
  if (getInput() == getResult())
    return {};
  // Re-laying out to the same layout changes nothing.
  if (getInput().getType() == getResult().getType())
    return getInput();
  // A chain of swizzles is one swizzle from the original layout; if that is
  // the final layout already, the chain is the original value.
  if (auto inner = getInput().getDefiningOp<SwizzleScalesOp>()) {
    if (inner.getInput() == getResult())
      return {};
    if (inner.getInput().getType() == getResult().getType())
      return inner.getInput();
    getInputMutable().assign(inner.getInput());
    return getResult();
  }
  return {};
}

//===----------------------------------------------------------------------===//
// TransposeOp
//===----------------------------------------------------------------------===//

LogicalResult TransposeOp::verify() {
  BlockScaledTensorType inputType = getInput().getType();
  BlockScaledTensorType resultType = getResult().getType();
  // transpose_c1
  if (!inputType.isTwoDimensionalBlock())
    return emitOpError("needs 16x16 blocks, got ")
           << formatBlockShape(inputType.getBlockShape())
           << ": only a tile scale stays exact under transposition";
  // transpose_c2
  if (inputType.getLayout() != ScaleLayout::Linear)
    return emitOpError("needs linear scales; transpose before swizzling");
  // transpose_c3
  SmallVector<int64_t> shape(inputType.getShape());
  std::swap(shape[shape.size() - 2], shape[shape.size() - 1]);
  auto expected = BlockScaledTensorType::get(
      getContext(), shape, inputType.getElementType(),
      inputType.getScaleType(), inputType.getBlockShape(),
      inputType.getLayout(), inputType.getTensorScale());
  if (resultType != expected)
    return emitOpError("result type ")
           << resultType << " should be " << expected;
  return success();
}

OpFoldResult TransposeOp::fold(FoldAdaptor) {
  // Swapping the last two dimensions twice is the identity.
  auto inner = getInput().getDefiningOp<TransposeOp>();
  if (!inner || inner.getInput() == getResult())
    return {};
  return inner.getInput();
}

#define GET_OP_CLASSES
#include "nvfp4/Dialect/NVFP4/IR/NVFP4Ops.cpp.inc"
