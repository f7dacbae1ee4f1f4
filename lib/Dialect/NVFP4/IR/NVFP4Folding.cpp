//===- NVFP4Folding.cpp - compile-time evaluation of nvfp4 ops ------------===//
//
// Part of the nvfp4 project.
//
// Folds nvfp4.amax and nvfp4.hadamard on constants, and canonicalizes a
// constant nvfp4.quantize into an nvfp4.pack of constants. All three call
// the numerics library (lib/Numerics), the same specification the
// reference lowering reproduces, so a folded result has exactly the bytes
// the executed code would produce. Constants above kMaxFoldElements are
// left alone so that a huge weight does not stall the compiler.
//
//===----------------------------------------------------------------------===//

#include "nvfp4/Dialect/NVFP4/IR/NVFP4Ops.h"
#include "nvfp4/Numerics/Numerics.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"

using namespace mlir;
using namespace mlir::nvfp4;
namespace numerics = ::nvfp4::numerics;

/// The largest constant (in elements) evaluated at compile time: 2^20
/// elements, 2 MiB of BF16.
static constexpr int64_t kMaxFoldElements = int64_t(1) << 20;

Operation *NVFP4Dialect::materializeConstant(OpBuilder &builder,
                                             Attribute value, Type type,
                                             Location loc) {
  auto typed = dyn_cast<TypedAttr>(value);
  if (!typed || typed.getType() != type)
    return nullptr;
  return arith::ConstantOp::create(builder, loc, type, typed);
}

/// The values of a small dense float constant as floats (bf16, f16 and f32
/// convert exactly), or nothing.
static std::optional<std::vector<float>> getFloatValues(Attribute attr) {
  auto dense = dyn_cast_if_present<DenseFPElementsAttr>(attr);
  if (!dense || dense.getNumElements() > kMaxFoldElements)
    return std::nullopt;
  std::vector<float> values;
  values.reserve(dense.getNumElements());
  for (APFloat value : dense.getValues<APFloat>()) {
    bool losesInfo = false;
    value.convert(APFloat::IEEEsingle(), APFloat::rmNearestTiesToEven,
                  &losesInfo);
    values.push_back(value.convertToFloat());
  }
  return values;
}

/// The float values of a small dense constant after the RHT with
/// `hadamard`'s sign mask when one is given (the input an nvfp4.amax or
/// nvfp4.quantize with a `hadamard` attribute works on), or nothing.
static std::optional<std::vector<float>>
getTransformedValues(Attribute attr, std::optional<uint32_t> hadamard) {
  std::optional<std::vector<float>> values = getFloatValues(attr);
  if (!values || !hadamard)
    return values;
  numerics::Expected<std::vector<float>> transformed =
      numerics::hadamardTransform(values->data(), values->size(),
                                  static_cast<uint16_t>(*hadamard));
  if (!transformed.ok())
    return std::nullopt;
  return transformed.take();
}

static int64_t product(ArrayRef<int64_t> shape) {
  int64_t result = 1;
  for (int64_t d : shape)
    result *= d;
  return result;
}

//===----------------------------------------------------------------------===//
// nvfp4.amax / nvfp4.hadamard folds
//===----------------------------------------------------------------------===//

OpFoldResult AmaxOp::fold(FoldAdaptor adaptor) {
  // The amax of an empty tensor is 0 (with or without the RHT), whatever
  // its values: no kernel has anything to reduce.
  auto inputType = cast<RankedTensorType>(getInput().getType());
  if (llvm::is_contained(inputType.getShape(), 0))
    return FloatAttr::get(Float32Type::get(getContext()), 0.0);
  std::optional<std::vector<float>> values =
      getTransformedValues(adaptor.getInput(), getHadamard());
  if (!values)
    return {};
  return FloatAttr::get(Float32Type::get(getContext()),
                        numerics::computeAmax(values->data(), values->size()));
}

OpFoldResult HadamardOp::fold(FoldAdaptor adaptor) {
  std::optional<std::vector<float>> transformed =
      getTransformedValues(adaptor.getInput(), getSignMask());
  if (!transformed)
    return {};
  // The library rounds every output to BF16, so the conversion is exact.
  SmallVector<APFloat> result;
  for (float value : *transformed) {
    APFloat element(value);
    bool losesInfo = false;
    element.convert(APFloat::BFloat(), APFloat::rmNearestTiesToEven,
                    &losesInfo);
    result.push_back(element);
  }
  return DenseElementsAttr::get(cast<ShapedType>(getType()), result);
}

//===----------------------------------------------------------------------===//
// nvfp4.quantize of constants
//===----------------------------------------------------------------------===//

/// `bits` as a dense constant of `type`'s float element type.
static DenseElementsAttr denseFromBits(RankedTensorType type,
                                       ArrayRef<uint8_t> bits) {
  const llvm::fltSemantics &semantics =
      cast<FloatType>(type.getElementType()).getFloatSemantics();
  unsigned width = APFloat::getSizeInBits(semantics);
  SmallVector<APFloat> values;
  values.reserve(bits.size());
  for (uint8_t b : bits)
    values.emplace_back(semantics, APInt(width, b));
  return DenseElementsAttr::get(type, values);
}

/// The library's linear scales ([batch x rows / blockRows, cols / 16]) in
/// the layout of `type`.
static FailureOr<std::vector<uint8_t>>
scalesInLayout(BlockScaledTensorType type,
               const numerics::QuantizedTensor &quantized) {
  if (type.getLayout() == ScaleLayout::Linear)
    return quantized.Scales;
  // Swizzling is per matrix: one [rows / blockRows, cols / 16] slice per
  // batch element, each expanded to per-row scales first.
  int64_t scaleRows = type.getRows() / type.getBlockRows();
  int64_t scaleCols = type.getCols() / kBlockSize;
  std::vector<uint8_t> result;
  for (int64_t b = 0, e = product(type.getBatchShape()); b < e; ++b) {
    const uint8_t *slice =
        quantized.Scales.data() + b * scaleRows * scaleCols;
    std::vector<uint8_t> perRow(slice, slice + scaleRows * scaleCols);
    if (type.isTwoDimensionalBlock()) {
      auto replicated = numerics::replicateTileScales(
          perRow.data(), perRow.size(), scaleRows, scaleCols);
      if (!replicated.ok())
        return failure();
      perRow = replicated.take();
    }
    auto swizzled = numerics::swizzleScales(perRow.data(), perRow.size(),
                                            type.getRows(), scaleCols);
    if (!swizzled.ok())
      return failure();
    result.insert(result.end(), swizzled->begin(), swizzled->end());
  }
  return result;
}

/// The numerics library's name of an MX format.
static numerics::MXFormat toNumericsFormat(BlockScaledFormat format) {
  switch (format) {
  case BlockScaledFormat::MXFP8E5M2:
    return numerics::MXFormat::MXFP8E5M2;
  case BlockScaledFormat::MXFP4:
    return numerics::MXFormat::MXFP4;
  default:
    return numerics::MXFormat::MXFP8E4M3;
  }
}

/// The MX quantization of a constant (quantize_c6 leaves no options): codes,
/// scales in `type`'s layout and the amax part 0.
static LogicalResult foldMXQuantize(QuantizeOp op, BlockScaledTensorType type,
                                    const std::vector<float> &values,
                                    PatternRewriter &rewriter) {
  int64_t cols = type.getCols();
  int64_t rows = product(type.getShape()) / cols;
  numerics::Expected<numerics::MXTensor> quantized = numerics::quantizeMX(
      values.data(), values.size(), rows, cols,
      toNumericsFormat(type.getFormat()));
  if (!quantized.ok())
    return rewriter.notifyMatchFailure(op, quantized.message());
  std::vector<uint8_t> scales = quantized->Scales;
  if (type.getLayout() == ScaleLayout::Swizzled128x4) {
    int64_t scaleCols = quantized->scaleCols();
    scales.clear();
    for (int64_t b = 0, e = product(type.getBatchShape()); b < e; ++b) {
      auto swizzled = numerics::swizzleScales(
          quantized->Scales.data() + b * type.getRows() * scaleCols,
          type.getRows() * scaleCols, type.getRows(), scaleCols);
      if (!swizzled.ok())
        return rewriter.notifyMatchFailure(op, swizzled.message());
      scales.insert(scales.end(), swizzled->begin(), swizzled->end());
    }
  }
  Location loc = op.getLoc();
  Value codes = arith::ConstantOp::create(
      rewriter, loc, denseFromBits(type.getCodesType(), quantized->Codes));
  Value scaleBits = arith::ConstantOp::create(
      rewriter, loc, denseFromBits(type.getScalesType(), scales));
  Value amax =
      arith::ConstantOp::create(rewriter, loc, rewriter.getF32FloatAttr(0.0f));
  rewriter.replaceOpWithNewOp<PackOp>(op, type, codes, scaleBits, amax);
  return success();
}

namespace {
struct FoldConstantQuantize : OpRewritePattern<QuantizeOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(QuantizeOp op,
                                PatternRewriter &rewriter) const override {
    Attribute input;
    if (!matchPattern(op.getInput(), m_Constant(&input)))
      return rewriter.notifyMatchFailure(op, "input is not a constant");
    std::optional<std::vector<float>> values =
        getTransformedValues(input, op.getHadamard());
    if (!values)
      return rewriter.notifyMatchFailure(
          op, "input is not a dense float constant of at most 2^20 elements");

    BlockScaledTensorType type = op.getResult().getType();
    if (type.isMX())
      return foldMXQuantize(op, type, *values, rewriter);
    numerics::QuantizeOptions options;
    options.Block = type.isTwoDimensionalBlock()
                        ? numerics::BlockShape::Tile16x16
                        : numerics::BlockShape::Row1x16;
    if (Value amax = op.getAmax()) {
      FloatAttr amaxAttr;
      if (!matchPattern(amax, m_Constant(&amaxAttr)))
        return rewriter.notifyMatchFailure(op, "amax is not a constant");
      options.Amax = amaxAttr.getValue().convertToFloat();
    }
    if (op.getRounding() == RoundingMode::Stochastic) {
      APInt seed;
      if (!matchPattern(op.getSeed(), m_ConstantInt(&seed)))
        return rewriter.notifyMatchFailure(op, "seed is not a constant");
      options.Rounding = numerics::RoundingMode::Stochastic;
      options.Seed = seed.getZExtValue();
    }

    // Batch dimensions fold into rows: blocks never cross a row.
    int64_t cols = type.getCols();
    int64_t rows = product(type.getShape()) / cols;
    numerics::Expected<numerics::QuantizedTensor> quantized =
        numerics::quantize(values->data(), values->size(), rows, cols,
                           options);
    if (!quantized.ok())
      return rewriter.notifyMatchFailure(op, quantized.message());
    FailureOr<std::vector<uint8_t>> scales = scalesInLayout(type, *quantized);
    if (failed(scales))
      return rewriter.notifyMatchFailure(op, "could not lay out the scales");

    Location loc = op.getLoc();
    Value codes = arith::ConstantOp::create(
        rewriter, loc, denseFromBits(type.getCodesType(), quantized->Codes));
    Value scaleBits = arith::ConstantOp::create(
        rewriter, loc, denseFromBits(type.getScalesType(), *scales));
    Value amax = arith::ConstantOp::create(
        rewriter, loc, rewriter.getF32FloatAttr(quantized->Amax));
    rewriter.replaceOpWithNewOp<PackOp>(op, type, codes, scaleBits, amax);
    return success();
  }
};
} // namespace

void QuantizeOp::getCanonicalizationPatterns(RewritePatternSet &results,
                                             MLIRContext *context) {
  results.add<FoldConstantQuantize>(context);
}
