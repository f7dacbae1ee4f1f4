//===- NVFP4Dialect.cpp - nvfp4 dialect and annotation verifier ----------===//
//
// Part of the nvfp4 project.
//
//===----------------------------------------------------------------------===//

#include "nvfp4/Dialect/NVFP4/IR/NVFP4Bytecode.h"
#include "nvfp4/Dialect/NVFP4/IR/NVFP4Dialect.h"
#include "nvfp4/Dialect/NVFP4/IR/NVFP4Ops.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::nvfp4;

#include "nvfp4/Dialect/NVFP4/IR/NVFP4Dialect.cpp.inc"
#include "nvfp4/Dialect/NVFP4/IR/NVFP4Enums.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "nvfp4/Dialect/NVFP4/IR/NVFP4Attrs.cpp.inc"

void NVFP4Dialect::initialize() {
  addAttributes<
#define GET_ATTRDEF_LIST
#include "nvfp4/Dialect/NVFP4/IR/NVFP4Attrs.cpp.inc"
      >();
  registerTypes();
  addOperations<
#define GET_OP_LIST
#include "nvfp4/Dialect/NVFP4/IR/NVFP4Ops.cpp.inc"
      >();
  detail::addBytecodeInterface(this);
}

//===----------------------------------------------------------------------===//
// Model annotations
//===----------------------------------------------------------------------===//

/// Checks that a string-valued annotation is one of the spellings of an enum.
template <typename EnumT>
static LogicalResult
verifyEnumAnnotation(Operation *op, NamedAttribute attr,
                     std::optional<EnumT> (*symbolize)(llvm::StringRef),
                     llvm::StringRef allowed) {
  auto str = dyn_cast<StringAttr>(attr.getValue());
  if (!str || !symbolize(str.getValue()))
    return op->emitError() << "'" << attr.getName().getValue()
                           << "' must be one of " << allowed << ", got "
                           << attr.getValue();
  return success();
}

LogicalResult NVFP4Dialect::verifyOperationAttribute(Operation *op,
                                                     NamedAttribute attr) {
  StringRef name = attr.getName().getValue();
  if (name == ModelAnnotation::kLayer) {
    auto layer = dyn_cast<IntegerAttr>(attr.getValue());
    if (!layer || !layer.getType().isSignlessInteger() ||
        layer.getValue().isNegative())
      return op->emitError()
             << "'" << name
             << "' must be a non-negative integer (the 0-based transformer "
                "block index), got "
             << attr.getValue();
    return success();
  }
  if (name == ModelAnnotation::kKind) {
    auto kind = dyn_cast<StringAttr>(attr.getValue());
    if (!kind || kind.getValue().empty())
      return op->emitError() << "'" << name
                             << "' must be a non-empty string such as "
                                "\"attention\" or \"ffn\", got "
                             << attr.getValue();
    return success();
  }
  if (name == ModelAnnotation::kRole)
    return verifyEnumAnnotation<GemmRole>(op, attr, symbolizeGemmRole,
                                          "\"fprop\", \"dgrad\", \"wgrad\"");
  if (name == ModelAnnotation::kPrecision)
    return verifyEnumAnnotation<Precision>(op, attr, symbolizePrecision,
                                           "\"nvfp4\", \"mxfp8\", \"mxfp4\", "
                                           "\"fp8\", \"bf16\"");
  if (name == ModelAnnotation::kWeight)
    return op->emitError() << "'" << name
                           << "' belongs on function arguments, not on "
                              "operations";
  if (name == kGeneratedKernelsAttrName) {
    if (!isa<UnitAttr>(attr.getValue()))
      return op->emitError() << "'" << name << "' must be a unit attribute";
    return success();
  }
  return op->emitError() << "unknown nvfp4 annotation '" << name
                         << "' (expected nvfp4.layer, nvfp4.kind, nvfp4.role "
                            "or nvfp4.precision)";
}

LogicalResult NVFP4Dialect::verifyRegionArgAttribute(Operation *op,
                                                     unsigned regionIndex,
                                                     unsigned argIndex,
                                                     NamedAttribute attr) {
  StringRef name = attr.getName().getValue();
  if (name != ModelAnnotation::kWeight)
    return op->emitError() << "unknown nvfp4 argument annotation '" << name
                           << "' (expected nvfp4.weight)";
  if (!isa<UnitAttr>(attr.getValue()))
    return op->emitError() << "'" << name << "' is a unit attribute, got "
                           << attr.getValue();
  return success();
}
