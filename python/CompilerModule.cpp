//===- CompilerModule.cpp - nvfp4.compile for Python ----------------------===//
//
// Part of the nvfp4 project.
//
// A separate extension (`nvfp4._compiler`) so that the numerics module does
// not load MLIR and LLVM: `import nvfp4` stays light, `nvfp4.compile` loads
// this on first use. Every compiler diagnostic becomes the ValueError's
// message.
//
//===----------------------------------------------------------------------===//

#include "nvfp4/Compiler/Compiler.h"
#include "nvfp4/InitAll.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

namespace py = pybind11;
using namespace mlir;

/// Compiles `text`; returns (output, report JSON). Raises ValueError with
/// the diagnostics on any failure.
static py::tuple compileText(const std::string &text, const std::string &chip,
                             const std::string &emit,
                             std::optional<unsigned> keepFirst,
                             std::optional<unsigned> keepLast, bool report,
                             const std::vector<std::string> &formats) {
  nvfp4::CompileOptions options;
  options.chip = chip;
  // None: the recipe's defaults, scaled to the model's depth.
  options.keepFirst = keepFirst;
  options.keepLast = keepLast;
  // nvfp4-assign-precision's formats= entries (KIND=FORMAT or FORMAT); the
  // compiler diagnoses malformed ones.
  options.formats = formats;
  options.buildPrecisionReport = true;
  options.requireManifest = report;
  std::optional<nvfp4::EmitKind> kind = nvfp4::parseEmitKind(emit);
  if (!kind)
    throw py::value_error("unknown emit '" + emit +
                          "' (expected mlir, llvm, ptx or cubin)");
  options.emit = *kind;

  DialectRegistry registry;
  nvfp4::registerAllNVFP4Dependencies(registry);
  MLIRContext context(registry);
  context.printOpOnDiagnostic(false);
  std::string diagnostics;
  llvm::raw_string_ostream os(diagnostics);
  llvm::SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(
      llvm::MemoryBuffer::getMemBufferCopy(text, "<mlir_text>"), llvm::SMLoc());
  SourceMgrDiagnosticHandler handler(sourceMgr, &context, os);

  OwningOpRef<ModuleOp> module = parseSourceFile<ModuleOp>(sourceMgr, &context);
  if (!module)
    throw py::value_error(diagnostics);
  FailureOr<nvfp4::CompileResult> result = nvfp4::compileModule(*module, options);
  if (failed(result))
    throw py::value_error(diagnostics);
  py::object output = options.emit == nvfp4::EmitKind::Cubin
                          ? py::object(py::bytes(result->output))
                          : py::object(py::str(result->output));
  return py::make_tuple(output, nvfp4::renderKernelReport(*result));
}

PYBIND11_MODULE(_compiler, module) {
  module.doc() = "nvfp4 IR to PTX/cubin (the nvfp4-compile path)";
  module.def("compile", &compileText, py::arg("mlir_text"), py::arg("chip"),
             py::arg("emit"), py::arg("keep_first"), py::arg("keep_last"),
             py::arg("report"), py::arg("formats"));
}
