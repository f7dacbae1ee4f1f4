//===- NVFP4Types.cpp - the !nvfp4.tensor type ---------------------------===//
//
// Part of the nvfp4 project.
//
//===----------------------------------------------------------------------===//

#include "nvfp4/Dialect/NVFP4/IR/NVFP4Dialect.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/MathExtras.h"

using namespace mlir;
using namespace mlir::nvfp4;

#define GET_TYPEDEF_CLASSES
#include "nvfp4/Dialect/NVFP4/IR/NVFP4Types.cpp.inc"

void NVFP4Dialect::registerTypes() {
  addTypes<
#define GET_TYPEDEF_LIST
#include "nvfp4/Dialect/NVFP4/IR/NVFP4Types.cpp.inc"
      >();
}

//===----------------------------------------------------------------------===//
// Verification
//===----------------------------------------------------------------------===//

std::optional<int64_t>
mlir::nvfp4::getBoundedElementCount(ArrayRef<int64_t> shape) {
  int64_t count = 1;
  for (int64_t dim : shape) {
    if (dim < 0)
      return std::nullopt;
    // count * dim > kMax, without computing the product.
    if (dim != 0 && count > kMaxBlockScaledElements / dim)
      return std::nullopt;
    count *= dim;
  }
  return count;
}

LogicalResult
BlockScaledTensorType::verify(function_ref<InFlightDiagnostic()> emitError,
                              ArrayRef<int64_t> shape, Type elementType,
                              Type scaleType, ArrayRef<int64_t> blockShape,
                              ScaleLayout layout, TensorScaleKind tensorScale) {
  // tensor_t1
  if (shape.size() < 2)
    return emitError() << "block-scaled tensor must have rank >= 2, got rank "
                       << shape.size();
  if (llvm::any_of(shape, [](int64_t d) { return d <= 0; }))
    return emitError() << "block-scaled tensor dimensions must be static and "
                          "positive";
  // tensor_t2
  if (!isa<Float4E2M1FNType, Float8E4M3FNType, Float8E5M2Type>(elementType))
    return emitError() << "block-scaled tensor element type must be f4E2M1FN, "
                          "f8E4M3FN or f8E5M2, got "
                       << elementType;
  // tensor_t3
  bool e4m3Scale = isa<Float8E4M3FNType>(scaleType);
  if (!e4m3Scale && !isa<Float8E8M0FNUType>(scaleType))
    return emitError() << "block-scaled tensor scale type must be f8E4M3FN or "
                          "f8E8M0FNU, got "
                       << scaleType;
  // tensor_t7
  if (e4m3Scale && !isa<Float4E2M1FNType>(elementType))
    return emitError() << "f8E4M3FN scales (NVFP4) require f4E2M1FN elements, "
                          "got "
                       << elementType
                       << " (MXFP8 has f8E8M0FNU scales)";
  // tensor_t8
  if (tensorScale == TensorScaleKind::Decode && !e4m3Scale)
    return emitError() << "tensor_scale = decode needs NVFP4 (f8E4M3FN "
                          "scales): the MX formats have no tensor scale";
  // tensor_t4
  auto isBlock = [&](int64_t rows, int64_t cols) {
    return blockShape.size() == 2 && blockShape[0] == rows &&
           blockShape[1] == cols;
  };
  bool validBlock = e4m3Scale ? isBlock(1, kBlockSize) ||
                                    isBlock(kBlockSize, kBlockSize)
                              : isBlock(1, kMXBlockSize);
  if (!validBlock) {
    InFlightDiagnostic diag = emitError()
                              << "block shape must be "
                              << (e4m3Scale ? "1x16 or 16x16 with f8E4M3FN"
                                            : "1x32 with f8E8M0FNU")
                              << " scales, got ";
    llvm::interleave(blockShape, diag, "x");
    return diag;
  }
  // tensor_t5
  int64_t rows = shape[shape.size() - 2], cols = shape.back();
  if (cols % blockShape[1] != 0 || rows % blockShape[0] != 0)
    return emitError() << "block " << blockShape[0] << "x" << blockShape[1]
                       << " does not divide the trailing dimensions " << rows
                       << "x" << cols;
  // tensor_t6
  if (!getBoundedElementCount(shape))
    return emitError() << "block-scaled tensor is too large: more than 2^47 "
                          "elements";
  return success();
}

//===----------------------------------------------------------------------===//
// Derived types
//===----------------------------------------------------------------------===//

BlockScaledFormat BlockScaledTensorType::getFormat() const {
  if (isa<Float8E4M3FNType>(getScaleType()))
    return BlockScaledFormat::NVFP4;
  return TypeSwitch<Type, BlockScaledFormat>(getElementType())
      .Case([](Float8E4M3FNType) { return BlockScaledFormat::MXFP8E4M3; })
      .Case([](Float8E5M2Type) { return BlockScaledFormat::MXFP8E5M2; })
      .Default([](Type) { return BlockScaledFormat::MXFP4; });
}

RankedTensorType BlockScaledTensorType::getCodesType() const {
  return RankedTensorType::get(getShape(), getElementType());
}

RankedTensorType BlockScaledTensorType::getScalesType() const {
  SmallVector<int64_t> scaleShape(getBatchShape());
  int64_t scaleCols = getCols() / getBlockCols();
  switch (getLayout()) {
  case ScaleLayout::Linear:
    scaleShape.push_back(getRows() / getBlockRows());
    scaleShape.push_back(scaleCols);
    break;
  case ScaleLayout::Swizzled128x4:
    // Tensor cores read one scale per row and 16-column block; a 16x16 tile
    // scale is replicated into its 16 rows. The atom is 128 rows x 4 scales.
    scaleShape.push_back(llvm::alignTo(getRows(), 128));
    scaleShape.push_back(llvm::alignTo(scaleCols, 4));
    break;
  }
  return RankedTensorType::get(scaleShape, getScaleType());
}

BlockScaledTensorType
BlockScaledTensorType::cloneWithLayout(ScaleLayout layout) const {
  return get(getContext(), getShape(), getElementType(), getScaleType(),
             getBlockShape(), layout, getTensorScale());
}

BlockScaledTensorType
BlockScaledTensorType::cloneWithTensorScale(TensorScaleKind kind) const {
  return get(getContext(), getShape(), getElementType(), getScaleType(),
             getBlockShape(), getLayout(), kind);
}

//===----------------------------------------------------------------------===//
// Assembly format
//
//   !nvfp4.tensor<256x512xf4E2M1FN, scale = f8E4M3FN, block = 1x16
//                 [, layout = swizzled_128x4] [, tensor_scale = decode]>
//===----------------------------------------------------------------------===//

/// `= VALUE` of an optional type parameter whose values are the keywords
/// `symbolize` knows; an unknown one is an error naming `what` and the
/// `expected` spellings.
template <typename EnumT>
static std::optional<EnumT>
parseEnumParameter(AsmParser &parser, StringRef what, StringRef expected,
                   function_ref<std::optional<EnumT>(StringRef)> symbolize) {
  if (parser.parseEqual())
    return std::nullopt;
  llvm::SMLoc valueLoc = parser.getCurrentLocation();
  StringRef value;
  if (parser.parseKeyword(&value))
    return std::nullopt;
  std::optional<EnumT> parsed = symbolize(value);
  if (!parsed)
    parser.emitError(valueLoc) << "unknown " << what << " '" << value
                               << "' (expected " << expected << ")";
  return parsed;
}

Type BlockScaledTensorType::parse(AsmParser &parser) {
  SmallVector<int64_t> shape, blockShape;
  Type elementType, scaleType;
  ScaleLayout layout = ScaleLayout::Linear;
  TensorScaleKind tensorScale = TensorScaleKind::Amax;
  llvm::SMLoc loc = parser.getCurrentLocation();
  if (parser.parseLess() ||
      parser.parseDimensionList(shape, /*allowDynamic=*/false,
                                /*withTrailingX=*/true) ||
      parser.parseType(elementType) || parser.parseComma() ||
      parser.parseKeyword("scale") || parser.parseEqual() ||
      parser.parseType(scaleType) || parser.parseComma() ||
      parser.parseKeyword("block") || parser.parseEqual() ||
      parser.parseDimensionList(blockShape, /*allowDynamic=*/false,
                                /*withTrailingX=*/false))
    return {};
  // Optional trailing parameters, each at most once, in this order.
  bool seenLayout = false, seenTensorScale = false;
  while (succeeded(parser.parseOptionalComma())) {
    StringRef key, value;
    llvm::SMLoc keyLoc = parser.getCurrentLocation();
    if (parser.parseKeyword(&key))
      return {};
    if (key == "layout" && !seenLayout && !seenTensorScale) {
      seenLayout = true;
      std::optional<ScaleLayout> parsed = parseEnumParameter<ScaleLayout>(
          parser, "scale layout", "linear or swizzled_128x4",
          [](StringRef v) { return symbolizeScaleLayout(v); });
      if (!parsed)
        return {};
      layout = *parsed;
      continue;
    }
    if (key == "tensor_scale" && !seenTensorScale) {
      seenTensorScale = true;
      std::optional<TensorScaleKind> parsed =
          parseEnumParameter<TensorScaleKind>(
              parser, "tensor scale", "amax or decode",
              [](StringRef v) { return symbolizeTensorScaleKind(v); });
      if (!parsed)
        return {};
      tensorScale = *parsed;
      continue;
    }
    parser.emitError(keyLoc)
        << "expected 'layout = ...' then 'tensor_scale = ...', each at most "
           "once, got '"
        << key << "'";
    return {};
  }
  if (parser.parseGreater())
    return {};
  return parser.getChecked<BlockScaledTensorType>(
      loc, parser.getContext(), shape, elementType, scaleType, blockShape,
      layout, tensorScale);
}

void BlockScaledTensorType::print(AsmPrinter &printer) const {
  printer << "<";
  printer.printDimensionList(getShape());
  printer << "x" << getElementType() << ", scale = " << getScaleType()
          << ", block = ";
  printer.printDimensionList(getBlockShape());
  if (getLayout() != ScaleLayout::Linear)
    printer << ", layout = " << stringifyScaleLayout(getLayout());
  if (getTensorScale() != TensorScaleKind::Amax)
    printer << ", tensor_scale = " << stringifyTensorScaleKind(getTensorScale());
  printer << ">";
}
