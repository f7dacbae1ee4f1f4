//===- PrecisionReport.h - per-layer, per-GEMM precision report -*- C++ -*-===//
//
// Part of the nvfp4 project.
//
//===----------------------------------------------------------------------===//
//
// What a module's GEMMs run in after nvfp4-assign-precision (and, if it ran,
// nvfp4-apply-recipe): precision, role, the recipe of each operand, FLOPs,
// and the share of GEMM FLOPs in NVFP4 per layer and overall -- the number
// behind the paper's "preserves 84 % of the computational savings". Rendered
// as JSON, a text table and an SVG bar chart; nvfp4-compile --report and the
// nvfp4-print-precision-report pass use it.
//
//===----------------------------------------------------------------------===//

#ifndef NVFP4_REPORT_PRECISIONREPORT_H
#define NVFP4_REPORT_PRECISIONREPORT_H

#include "nvfp4/Dialect/NVFP4/IR/NVFP4Dialect.h"

#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"

#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace mlir {
namespace nvfp4 {

/// How one operand of a block-scaled GEMM is quantized.
struct OperandReport {
  /// The member of the block-scaled family: "nvfp4", "mxfp8_e4m3",
  /// "mxfp8_e5m2" or "mxfp4" (Python's format= names).
  std::string format = "nvfp4";
  /// Block shape, "1x16", "16x16" or (MX) "1x32".
  std::string block;
  /// Random Hadamard Transform before quantization.
  bool hadamard = false;
  /// Rounding, std::nullopt when the quantization is not visible (the
  /// operand comes from outside, e.g. a checkpoint).
  std::optional<RoundingMode> rounding;
};

/// One GEMM: a linalg contraction (BF16/FP8 or an NVFP4 GEMM whose recipe
/// is not applied yet, reported with the recipe it will get) or an
/// nvfp4.scaled_matmul.
struct GemmReport {
  /// Op name and source location ("file:line:col").
  std::string op;
  std::string location;
  std::optional<int64_t> layer;
  std::string kind;
  /// "nvfp4", "mxfp8", "mxfp4", "fp8", "bf16", or "unassigned" (no
  /// nvfp4.precision).
  std::string precision;
  std::optional<GemmRole> role;
  /// "annotated", "inferred", "assumed", or "op" (scaled_matmul's role).
  std::string roleSource;
  /// The recipe is applied (nvfp4 ops) rather than planned.
  bool applied = false;
  int64_t batch = 1, m = 0, n = 0, k = 0;
  uint64_t flops = 0;
  /// Operands A and B, for block-scaled (NVFP4, MXFP8, MXFP4) GEMMs only.
  std::vector<OperandReport> operands;

  bool isNVFP4() const { return precision == "nvfp4"; }
  /// NVFP4, MXFP8 or MXFP4: the GEMMs nvfp4-apply-recipe rewrites.
  bool isBlockScaled() const {
    return isNVFP4() || precision == "mxfp8" || precision == "mxfp4";
  }
  bool usesHadamard() const;
  bool usesStochasticRounding() const;
  bool usesTwoDimensionalBlocks() const;
};

/// FLOPs of one layer (std::nullopt: GEMMs outside the blocks, e.g. the
/// output head).
struct LayerReport {
  std::optional<int64_t> layer;
  unsigned numGemms = 0;
  unsigned numNVFP4Gemms = 0;
  uint64_t flops = 0;
  uint64_t nvfp4Flops = 0;
  /// FLOPs per precision ("bf16", "mxfp8", "nvfp4", "unassigned", ...).
  std::map<std::string, uint64_t> flopsByPrecision;

  double nvfp4Share() const { return flops ? double(nvfp4Flops) / flops : 0; }
};

struct PrecisionReport {
  /// GEMMs in walk order.
  std::vector<GemmReport> gemms;
  /// Layers in increasing order, then the GEMMs without a layer.
  std::vector<LayerReport> layers;
  uint64_t flops = 0;
  uint64_t nvfp4Flops = 0;
  /// FLOPs per precision, as in LayerReport.
  std::map<std::string, uint64_t> flopsByPrecision;

  unsigned numNVFP4Gemms() const;
  /// The number of GEMMs whose precision is `precision`.
  unsigned numGemmsIn(llvm::StringRef precision) const;
  double nvfp4Share() const { return flops ? double(nvfp4Flops) / flops : 0; }
};

/// Collects the report of `module`. Fails, with an error on the op, when a
/// GEMM has a dynamic shape (its FLOPs are unknown).
FailureOr<PrecisionReport> buildPrecisionReport(ModuleOp module);

/// The report as JSON: {"summary", "layers", "gemms"}; FLOPs are integers.
llvm::json::Value toJSON(const PrecisionReport &report);
/// Writes toJSON(report) to `json` one layer and one GEMM at a time, without
/// building the whole tree (memory stays flat on models of 10,000 blocks).
void writeJSON(llvm::json::OStream &json, const PrecisionReport &report);
/// Pretty-printed toJSON(report) (indent 2) followed by a newline, streamed.
void writeJSON(llvm::raw_ostream &os, const PrecisionReport &report);

/// A human-readable summary, per-layer and per-GEMM table.
std::string renderTable(const PrecisionReport &report);

/// The most bars the SVG chart draws for numbered layers. A model with more
/// layers gets one bar per run of ceil(layers / kMaxSVGBars) consecutive
/// layers (FLOPs summed, the run named "first-last" in the bar's tooltip),
/// so that the chart stays about 60 + 6 * kMaxSVGBars pixels wide and a few
/// tens of kilobytes whatever the depth of the model.
constexpr size_t kMaxSVGBars = 120;

/// A standalone SVG bar chart of the NVFP4 share of GEMM FLOPs per layer
/// (per run of layers beyond kMaxSVGBars layers), plus one bar for the
/// GEMMs without a layer.
std::string renderSVG(const PrecisionReport &report);

} // namespace nvfp4
} // namespace mlir

#endif // NVFP4_REPORT_PRECISIONREPORT_H
