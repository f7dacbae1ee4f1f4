//===- PrintPrecisionReport.cpp - nvfp4-print-precision-report ------------===//
//
// Part of the nvfp4 project.
//
//===----------------------------------------------------------------------===//

#include "nvfp4/Report/Passes.h"
#include "nvfp4/Report/PrecisionReport.h"

#include "mlir/Support/FileUtilities.h"
#include "llvm/Support/ToolOutputFile.h"

namespace mlir {
namespace nvfp4 {
#define GEN_PASS_DEF_NVFP4PRINTPRECISIONREPORT
#include "nvfp4/Report/Passes.h.inc"
} // namespace nvfp4
} // namespace mlir

using namespace mlir;
using namespace mlir::nvfp4;

namespace {
struct NVFP4PrintPrecisionReportPass
    : public nvfp4::impl::NVFP4PrintPrecisionReportBase<
          NVFP4PrintPrecisionReportPass> {
  using Base::Base;

  void runOnOperation() override {
    FailureOr<PrecisionReport> report = buildPrecisionReport(getOperation());
    if (failed(report))
      return signalPassFailure();
    // Standard error by default: nvfp4-opt prints the IR on standard
    // output, and the two must not interleave.
    std::unique_ptr<llvm::ToolOutputFile> reportFile;
    if (!outputFile.empty()) {
      std::string error;
      reportFile = openOutputFile(outputFile, &error);
      if (!reportFile) {
        getOperation().emitError() << "nvfp4-print-precision-report: cannot "
                                      "write '"
                                   << outputFile << "': " << error;
        return signalPassFailure();
      }
    }
    llvm::raw_ostream &os = reportFile ? reportFile->os() : llvm::errs();
    if (json)
      writeJSON(os, *report);
    else
      os << renderTable(*report);
    os.flush();
    if (reportFile)
      reportFile->keep();

    if (!svgFile.empty()) {
      std::string error;
      std::unique_ptr<llvm::ToolOutputFile> file =
          openOutputFile(svgFile, &error);
      if (!file) {
        getOperation().emitError() << "nvfp4-print-precision-report: cannot "
                                      "write '"
                                   << svgFile << "': " << error;
        return signalPassFailure();
      }
      file->os() << renderSVG(*report);
      file->keep();
    }
    markAllAnalysesPreserved();
  }
};
} // namespace
