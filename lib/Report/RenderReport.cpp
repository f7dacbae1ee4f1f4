//===- RenderReport.cpp - the precision report as a table and an SVG ------===//
//
// Part of the nvfp4 project.
//
//===----------------------------------------------------------------------===//

#include "nvfp4/Report/PrecisionReport.h"

#include "llvm/Support/FormatVariadic.h"

#include <algorithm>

using namespace mlir;
using namespace mlir::nvfp4;

static std::string layerName(std::optional<int64_t> layer) {
  return layer ? std::to_string(*layer) : std::string("-");
}

static std::string percent(double share) {
  return llvm::formatv("{0:F2}%", 100.0 * share).str();
}

static std::string operandText(const GemmReport &gemm, unsigned i) {
  if (i >= gemm.operands.size())
    return "-";
  const OperandReport &operand = gemm.operands[i];
  // MX operands are always 1x32, round to nearest, without RHT.
  if (operand.format != "nvfp4")
    return operand.format;
  std::string text = operand.block;
  if (operand.hadamard)
    text += "+rht";
  if (operand.rounding == RoundingMode::Stochastic)
    text += "+sr";
  return text;
}

std::string mlir::nvfp4::renderTable(const PrecisionReport &report) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << "NVFP4 precision report: " << report.gemms.size() << " GEMMs, "
     << report.numNVFP4Gemms() << " in NVFP4";
  // The MX formats only when a GEMM uses them (NVFP4-only reports keep
  // their two lines).
  static constexpr llvm::StringLiteral kMXPrecisions[] = {"mxfp8", "mxfp4"};
  for (StringRef mx : kMXPrecisions)
    if (unsigned count = report.numGemmsIn(mx))
      os << ", " << count << " in " << mx.upper();
  os << "\n";
  os << "GEMM FLOPs: " << report.flops << " total, " << report.nvfp4Flops
     << " in NVFP4 (" << percent(report.nvfp4Share()) << ")";
  for (StringRef mx : kMXPrecisions) {
    auto it = report.flopsByPrecision.find(mx.str());
    if (it != report.flopsByPrecision.end() && report.numGemmsIn(mx))
      os << ", " << it->second << " in " << mx.upper() << " ("
         << percent(report.flops ? double(it->second) / report.flops : 0)
         << ")";
  }
  os << "\n";

  os << "\nPer layer:\n";
  os << llvm::formatv("{0,6}  {1,5}  {2,5}  {3,20}  {4,20}  {5,8}\n", "layer",
                      "gemms", "nvfp4", "flops", "nvfp4 flops", "share");
  for (const LayerReport &layer : report.layers)
    os << llvm::formatv("{0,6}  {1,5}  {2,5}  {3,20}  {4,20}  {5,8}\n",
                        layerName(layer.layer), layer.numGemms,
                        layer.numNVFP4Gemms, layer.flops, layer.nvfp4Flops,
                        percent(layer.nvfp4Share()));

  // Operand columns: block shape, +rht, +sr; "(planned)" when the recipe is
  // not applied yet.
  os << "\nPer GEMM:\n";
  os << llvm::formatv("{0,6}  {1,-10} {2,-6} {3,-9} {4,-9} {5,-14} {6,-14} "
                      "{7,-26} {8,16}  {9}\n",
                      "layer", "kind", "role", "source", "precision", "A", "B",
                      "batch x M x N x K", "flops", "location");
  for (const GemmReport &gemm : report.gemms) {
    std::string shape =
        llvm::formatv("{0}x{1}x{2}x{3}", gemm.batch, gemm.m, gemm.n, gemm.k)
            .str();
    std::string precision = gemm.precision;
    if (gemm.isBlockScaled() && !gemm.applied)
      precision += "*";
    os << llvm::formatv(
        "{0,6}  {1,-10} {2,-6} {3,-9} {4,-9} {5,-14} {6,-14} {7,-26} {8,16}  "
        "{9}\n",
        layerName(gemm.layer), gemm.kind.empty() ? "-" : gemm.kind,
        gemm.role ? stringifyGemmRole(*gemm.role) : "-", gemm.roleSource,
        precision, operandText(gemm, 0), operandText(gemm, 1), shape,
        gemm.flops, gemm.location);
  }
  if (llvm::any_of(report.gemms, [](const GemmReport &gemm) {
        return gemm.isBlockScaled() && !gemm.applied;
      }))
    os << "(nvfp4*: recipe planned, nvfp4-apply-recipe not run yet)\n";
  return text;
}

/// One bar of the chart: a layer, a run of consecutive layers, or the
/// GEMMs without a layer.
namespace {
struct Bar {
  std::optional<int64_t> first, last;
  uint64_t flops = 0, nvfp4Flops = 0;
  unsigned numLayers = 0;

  double nvfp4Share() const { return flops ? double(nvfp4Flops) / flops : 0; }
  /// "7", "0-83" or "other".
  std::string name() const {
    if (!first)
      return "other";
    if (*first == *last)
      return std::to_string(*first);
    return std::to_string(*first) + "-" + std::to_string(*last);
  }
};
} // namespace

/// The bars of the chart: one per layer up to kMaxSVGBars numbered layers;
/// above that, runs of ceil(layers / kMaxSVGBars) consecutive layers per bar
/// (their FLOPs summed), so that the chart keeps a readable width. The
/// GEMMs without a layer keep a bar of their own.
static std::vector<Bar> chartBars(const PrecisionReport &report,
                                  size_t numbered, size_t &layersPerBar) {
  layersPerBar =
      numbered <= kMaxSVGBars ? 1 : (numbered + kMaxSVGBars - 1) / kMaxSVGBars;
  std::vector<Bar> bars;
  for (const LayerReport &layer : report.layers) {
    if (!layer.layer || bars.empty() || !bars.back().first ||
        bars.back().numLayers == layersPerBar) {
      bars.emplace_back();
      bars.back().first = layer.layer;
    }
    Bar &bar = bars.back();
    bar.last = layer.layer;
    bar.flops += layer.flops;
    bar.nvfp4Flops += layer.nvfp4Flops;
    ++bar.numLayers;
  }
  return bars;
}

std::string mlir::nvfp4::renderSVG(const PrecisionReport &report) {
  size_t numbered = llvm::count_if(
      report.layers, [](const LayerReport &layer) { return layer.layer; });
  size_t layersPerBar = 1;
  std::vector<Bar> bars = chartBars(report, numbered, layersPerBar);
  const double plotHeight = 200, top = 50, left = 60, right = 20;
  size_t numBars = std::max<size_t>(bars.size(), 1);
  double pitch = std::clamp(720.0 / numBars, 6.0, 40.0);
  double barWidth = pitch * 0.75;
  // Wide enough for the title, whatever the number of bars.
  double width = std::max(left + numBars * pitch + right, 480.0);
  double baseline = top + plotHeight;
  double height = baseline + 50;

  std::string text;
  llvm::raw_string_ostream os(text);
  os << llvm::formatv("<svg xmlns=\"http://www.w3.org/2000/svg\" "
                      "width=\"{0:F0}\" height=\"{1:F0}\" "
                      "viewBox=\"0 0 {0:F0} {1:F0}\" "
                      "font-family=\"sans-serif\" font-size=\"11\">\n",
                      width, height);
  os << llvm::formatv("  <title>NVFP4 share of GEMM FLOPs per layer</title>\n"
                      "  <text x=\"{0:F1}\" y=\"20\" font-size=\"14\">NVFP4 "
                      "share of GEMM FLOPs per layer (overall {1})</text>\n",
                      left, percent(report.nvfp4Share()));
  if (layersPerBar > 1)
    os << llvm::formatv("  <text x=\"{0:F1}\" y=\"36\">{1} layers, {2} per "
                        "bar (FLOPs summed)</text>\n",
                        left, numbered, layersPerBar);

  // Axis with ticks at 0, 25, 50, 75 and 100 %.
  for (int tick = 0; tick <= 100; tick += 25) {
    double y = baseline - plotHeight * tick / 100.0;
    os << llvm::formatv("  <line x1=\"{0:F1}\" y1=\"{1:F1}\" x2=\"{2:F1}\" "
                        "y2=\"{1:F1}\" stroke=\"#cccccc\"/>\n"
                        "  <text x=\"{3:F1}\" y=\"{4:F1}\" "
                        "text-anchor=\"end\">{5}%</text>\n",
                        left, y, width - right, left - 6, y + 4, tick);
  }

  // One bar per layer (or run of layers): grey for the whole, green for
  // its NVFP4 part. Runs are labelled with their first layer.
  size_t labelEvery = numBars > 80 ? 10 : numBars > 40 ? 5 : 1;
  for (auto [i, bar] : llvm::enumerate(bars)) {
    double x = left + i * pitch + (pitch - barWidth) / 2;
    double share = bar.nvfp4Share();
    double barHeight = plotHeight * share;
    os << llvm::formatv("  <g>\n    <title>{0} {1}: {2} of {3} GEMM FLOPs "
                        "in NVFP4</title>\n",
                        bar.numLayers > 1 ? "layers" : "layer", bar.name(),
                        percent(share), bar.flops);
    os << llvm::formatv("    <rect x=\"{0:F1}\" y=\"{1:F1}\" width=\"{2:F1}\" "
                        "height=\"{3:F1}\" fill=\"#d9d9d9\"/>\n",
                        x, top, barWidth, plotHeight);
    os << llvm::formatv("    <rect x=\"{0:F1}\" y=\"{1:F1}\" width=\"{2:F1}\" "
                        "height=\"{3:F1}\" fill=\"#76b900\"/>\n  </g>\n",
                        x, baseline - barHeight, barWidth, barHeight);
    if (i % labelEvery == 0 || !bar.first)
      os << llvm::formatv("  <text x=\"{0:F1}\" y=\"{1:F1}\" "
                          "text-anchor=\"middle\">{2}</text>\n",
                          x + barWidth / 2, baseline + 14,
                          bar.first ? std::to_string(*bar.first) : "other");
  }

  // The overall share as a dashed line.
  double overall = baseline - plotHeight * report.nvfp4Share();
  os << llvm::formatv("  <line x1=\"{0:F1}\" y1=\"{1:F1}\" x2=\"{2:F1}\" "
                      "y2=\"{1:F1}\" stroke=\"#333333\" "
                      "stroke-dasharray=\"4 3\"/>\n",
                      left, overall, width - right);
  os << llvm::formatv("  <text x=\"{0:F1}\" y=\"{1:F1}\" "
                      "text-anchor=\"middle\">layer</text>\n",
                      left + numBars * pitch / 2, baseline + 32);
  os << "</svg>\n";
  return text;
}
