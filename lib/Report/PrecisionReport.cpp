//===- PrecisionReport.cpp - collect the precision report ----------------===//
//
// Part of the nvfp4 project.
//
//===----------------------------------------------------------------------===//

#include "nvfp4/Report/PrecisionReport.h"
#include "nvfp4/Dialect/NVFP4/IR/NVFP4Ops.h"
#include "nvfp4/Dialect/NVFP4/Transforms/ApplyRecipe.h"
#include "nvfp4/Dialect/NVFP4/Transforms/GemmAnalysis.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/RegionKindInterface.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/Path.h"

#include <map>

using namespace mlir;
using namespace mlir::nvfp4;

bool GemmReport::usesHadamard() const {
  return llvm::any_of(operands,
                      [](const OperandReport &o) { return o.hadamard; });
}

bool GemmReport::usesStochasticRounding() const {
  return llvm::any_of(operands, [](const OperandReport &o) {
    return o.rounding == RoundingMode::Stochastic;
  });
}

bool GemmReport::usesTwoDimensionalBlocks() const {
  return llvm::any_of(
      operands, [](const OperandReport &o) { return o.block == "16x16"; });
}

unsigned PrecisionReport::numNVFP4Gemms() const {
  return llvm::count_if(gemms, [](const GemmReport &g) { return g.isNVFP4(); });
}

unsigned PrecisionReport::numGemmsIn(StringRef precision) const {
  return llvm::count_if(
      gemms, [&](const GemmReport &g) { return g.precision == precision; });
}

/// "file:line:col" with the file's base name, or the printed location.
static std::string formatLocation(Location loc) {
  if (auto fileLoc = dyn_cast<FileLineColLoc>(loc))
    return (llvm::sys::path::filename(fileLoc.getFilename().getValue()) + ":" +
            llvm::Twine(fileLoc.getLine()) + ":" +
            llvm::Twine(fileLoc.getColumn()))
        .str();
  if (auto nameLoc = dyn_cast<NameLoc>(loc))
    return nameLoc.getName().str();
  if (auto fused = dyn_cast<FusedLoc>(loc))
    if (!fused.getLocations().empty())
      return formatLocation(fused.getLocations().front());
  std::string text;
  llvm::raw_string_ostream os(text);
  loc.print(os);
  return text;
}

static std::string formatBlock(BlockScaledTensorType type) {
  return (llvm::Twine(type.getBlockRows()) + "x" +
          llvm::Twine(type.getBlockCols()))
      .str();
}

/// The rounding and RHT of the quantization an operand of scaled_matmul
/// comes from: directly (either result of an nvfp4.dual_quantize too),
/// through a scale swizzle, through the nvfp4.transpose that
/// nvfp4-fuse-quantization builds for the dgrad copy of a weight, or
/// through an equivalent pack(transpose(unpack(q))). Fills nothing when the
/// quantization is not visible.
static void findQuantization(Value value, OperandReport &report) {
  while (Operation *def = value.getDefiningOp()) {
    // A graph region may make this chain a cycle: stop at its ops.
    if (!mayHaveSSADominance(*def->getParentRegion()))
      return;
    if (auto quantize = dyn_cast<QuantizeOp>(def)) {
      report.rounding = quantize.getRounding();
      Value input = quantize.getInput();
      if (auto trunc = input.getDefiningOp<arith::TruncFOp>())
        input = trunc.getIn();
      // The RHT folded into the quantization, or still an op before it.
      report.hadamard = quantize.getHadamard().has_value() ||
                        isa_and_nonnull<HadamardOp>(input.getDefiningOp());
      return;
    }
    if (auto dual = dyn_cast<DualQuantizeOp>(def)) {
      bool columnwise = value == dual.getColumnwise();
      report.rounding =
          columnwise ? dual.getColumnwiseRounding() : dual.getRounding();
      report.hadamard = columnwise && dual.getHadamard().has_value();
      return;
    }
    if (auto swizzle = dyn_cast<SwizzleScalesOp>(def)) {
      value = swizzle.getInput();
      continue;
    }
    if (auto transpose = dyn_cast<TransposeOp>(def)) {
      value = transpose.getInput();
      continue;
    }
    if (auto pack = dyn_cast<PackOp>(def)) {
      Value codes = stripElementMoves(pack.getCodes());
      auto unpack = codes.getDefiningOp<UnpackOp>();
      if (!unpack)
        return;
      value = unpack.getInput();
      continue;
    }
    return;
  }
}

static OperandReport reportOperand(Value operand) {
  OperandReport report;
  auto type = cast<BlockScaledTensorType>(operand.getType());
  report.format = stringifyBlockScaledFormat(type.getFormat()).str();
  report.block = formatBlock(type);
  findQuantization(operand, report);
  return report;
}

static void setAnnotations(GemmReport &report, Operation *op) {
  if (auto layer = op->getAttrOfType<IntegerAttr>(ModelAnnotation::kLayer))
    report.layer = layer.getInt();
  if (auto kind = op->getAttrOfType<StringAttr>(ModelAnnotation::kKind))
    report.kind = kind.getValue().str();
}

static StringRef roleSourceName(RoleSource source) {
  switch (source) {
  case RoleSource::Annotated:
    return "annotated";
  case RoleSource::Inferred:
    return "inferred";
  case RoleSource::Assumed:
    return "assumed";
  }
  return "assumed";
}

FailureOr<PrecisionReport> mlir::nvfp4::buildPrecisionReport(ModuleOp module) {
  PrecisionReport report;
  GemmAnalysis analysis(module);
  bool failedShape = false;

  module.walk([&](Operation *op) {
    GemmReport gemm;
    gemm.op = op->getName().getStringRef().str();
    gemm.location = formatLocation(op->getLoc());
    setAnnotations(gemm, op);

    if (auto matmul = dyn_cast<ScaledMatmulOp>(op)) {
      BlockScaledTensorType lhs = matmul.getLhs().getType();
      BlockScaledTensorType rhs = matmul.getRhs().getType();
      // The precision names the format family: MXFP8 whatever its elements.
      switch (lhs.getFormat()) {
      case BlockScaledFormat::NVFP4:
        gemm.precision = stringifyPrecision(Precision::NVFP4).str();
        break;
      case BlockScaledFormat::MXFP4:
        gemm.precision = stringifyPrecision(Precision::MXFP4).str();
        break;
      default:
        gemm.precision = stringifyPrecision(Precision::MXFP8).str();
        break;
      }
      gemm.applied = true;
      if (std::optional<GemmRole> role = matmul.getRole()) {
        gemm.role = *role;
        gemm.roleSource = "op";
      }
      for (int64_t dim : lhs.getBatchShape())
        gemm.batch *= dim;
      gemm.m = lhs.getRows();
      gemm.n = rhs.getRows();
      gemm.k = lhs.getCols();
      gemm.operands = {reportOperand(matmul.getLhs()),
                       reportOperand(matmul.getRhs())};
    } else if (const GemmInfo *info = analysis.lookup(op)) {
      if (!info->shape.isStatic()) {
        op->emitError("precision report: the GEMM shape is dynamic, so its "
                      "FLOPs are unknown");
        failedShape = true;
        return;
      }
      gemm.precision = info->precision
                           ? stringifyPrecision(*info->precision).str()
                           : std::string("unassigned");
      gemm.role = info->role;
      gemm.roleSource = roleSourceName(info->roleSource).str();
      gemm.batch = info->shape.batch;
      gemm.m = info->shape.m;
      gemm.n = info->shape.n;
      gemm.k = info->shape.k;
      if (info->precision && isBlockScaledPrecision(*info->precision)) {
        // Not rewritten yet: show the recipe nvfp4-apply-recipe will apply
        // with its default options.
        GemmRecipe recipe = planRecipe(*info, RecipeOptions());
        for (const OperandRecipe &operand : recipe.operands) {
          OperandReport r;
          r.format = stringifyBlockScaledFormat(operand.format).str();
          r.block = operand.format != BlockScaledFormat::NVFP4
                        ? "1x32"
                        : operand.twoDimensional ? "16x16" : "1x16";
          r.hadamard = operand.hadamard;
          r.rounding = operand.rounding;
          gemm.operands.push_back(r);
        }
      }
    } else {
      return;
    }
    gemm.flops = 2 * uint64_t(gemm.batch) * uint64_t(gemm.m) *
                 uint64_t(gemm.n) * uint64_t(gemm.k);
    report.gemms.push_back(std::move(gemm));
  });
  if (failedShape)
    return failure();

  // Per layer: numbered layers in order, then the GEMMs without one.
  std::map<int64_t, LayerReport> numbered;
  LayerReport unnumbered;
  for (const GemmReport &gemm : report.gemms) {
    LayerReport &layer = gemm.layer ? numbered[*gemm.layer] : unnumbered;
    layer.layer = gemm.layer;
    ++layer.numGemms;
    layer.flops += gemm.flops;
    report.flops += gemm.flops;
    layer.flopsByPrecision[gemm.precision] += gemm.flops;
    report.flopsByPrecision[gemm.precision] += gemm.flops;
    if (gemm.isNVFP4()) {
      ++layer.numNVFP4Gemms;
      layer.nvfp4Flops += gemm.flops;
      report.nvfp4Flops += gemm.flops;
    }
  }
  for (auto &entry : numbered)
    report.layers.push_back(entry.second);
  if (unnumbered.numGemms)
    report.layers.push_back(unnumbered);
  return report;
}

//===----------------------------------------------------------------------===//
// JSON
//===----------------------------------------------------------------------===//

static llvm::json::Value optionalLayer(std::optional<int64_t> layer) {
  return layer ? llvm::json::Value(*layer) : llvm::json::Value(nullptr);
}

// Each layer and GEMM is one small object; writeJSON streams them one at a
// time, so that a model of 10,000 blocks (30,000 GEMMs) never holds the
// whole document as a json::Value tree (several hundred bytes per key).

static llvm::json::Value
flopsToJSON(const std::map<std::string, uint64_t> &flops) {
  llvm::json::Object object;
  for (const auto &[precision, count] : flops)
    object[precision] = count;
  return object;
}

static llvm::json::Value layerToJSON(const LayerReport &layer) {
  return llvm::json::Object{
      {"flops_by_precision", flopsToJSON(layer.flopsByPrecision)},
      {"layer", optionalLayer(layer.layer)},
      {"gemms", layer.numGemms},
      {"nvfp4_gemms", layer.numNVFP4Gemms},
      {"flops", layer.flops},
      {"nvfp4_flops", layer.nvfp4Flops},
      {"nvfp4_flop_share", layer.nvfp4Share()},
  };
}

static llvm::json::Value gemmToJSON(const GemmReport &gemm) {
  llvm::json::Object object{
      {"op", gemm.op},
      {"location", gemm.location},
      {"layer", optionalLayer(gemm.layer)},
      {"kind", gemm.kind.empty() ? llvm::json::Value(nullptr)
                                 : llvm::json::Value(gemm.kind)},
      {"precision", gemm.precision},
      {"role", gemm.role ? llvm::json::Value(stringifyGemmRole(*gemm.role))
                         : llvm::json::Value(nullptr)},
      {"role_source", gemm.roleSource},
      {"recipe_applied", gemm.applied},
      {"batch", gemm.batch},
      {"m", gemm.m},
      {"n", gemm.n},
      {"k", gemm.k},
      {"flops", gemm.flops},
  };
  if (gemm.isBlockScaled()) {
    llvm::json::Array operands;
    for (const OperandReport &operand : gemm.operands)
      operands.push_back(llvm::json::Object{
          {"block", operand.block},
          {"format", operand.format},
          {"rht", operand.hadamard},
          {"rounding",
           operand.rounding
               ? llvm::json::Value(stringifyRoundingMode(*operand.rounding))
               : llvm::json::Value(nullptr)},
      });
    object["operands"] = std::move(operands);
    object["rht"] = gemm.usesHadamard();
    object["sr"] = gemm.usesStochasticRounding();
    object["2d"] = gemm.usesTwoDimensionalBlocks();
  }
  return object;
}

static llvm::json::Value summaryToJSON(const PrecisionReport &report) {
  return llvm::json::Object{
      {"flops_by_precision", flopsToJSON(report.flopsByPrecision)},
      {"gemms", uint64_t(report.gemms.size())},
      {"nvfp4_gemms", report.numNVFP4Gemms()},
      {"flops", report.flops},
      {"nvfp4_flops", report.nvfp4Flops},
      {"nvfp4_flop_share", report.nvfp4Share()},
  };
}

llvm::json::Value mlir::nvfp4::toJSON(const PrecisionReport &report) {
  llvm::json::Array layers;
  for (const LayerReport &layer : report.layers)
    layers.push_back(layerToJSON(layer));
  llvm::json::Array gemms;
  for (const GemmReport &gemm : report.gemms)
    gemms.push_back(gemmToJSON(gemm));
  return llvm::json::Object{
      {"summary", summaryToJSON(report)},
      {"layers", std::move(layers)},
      {"gemms", std::move(gemms)},
  };
}

void mlir::nvfp4::writeJSON(llvm::json::OStream &json,
                            const PrecisionReport &report) {
  // The keys in the order json::OStream prints an Object's (sorted), so
  // that the text equals toJSON's.
  json.object([&] {
    json.attributeArray("gemms", [&] {
      for (const GemmReport &gemm : report.gemms)
        json.value(gemmToJSON(gemm));
    });
    json.attributeArray("layers", [&] {
      for (const LayerReport &layer : report.layers)
        json.value(layerToJSON(layer));
    });
    json.attribute("summary", summaryToJSON(report));
  });
}

void mlir::nvfp4::writeJSON(llvm::raw_ostream &os,
                            const PrecisionReport &report) {
  llvm::json::OStream json(os, /*IndentSize=*/2);
  writeJSON(json, report);
  os << "\n";
}
