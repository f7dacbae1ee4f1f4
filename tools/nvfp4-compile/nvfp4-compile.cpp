//===- nvfp4-compile.cpp - nvfp4 IR to PTX / cubin for one chip ----------===//
//
// Part of the nvfp4 project.
//
//   nvfp4-compile IN.mlir --chip=sm_103a -o OUT.ptx
//                 [--emit=mlir|llvm|ptx|cubin] [--report=FILE.json]
//
// Every failure -- unreadable or invalid input, an unsupported chip or op,
// a missing ptxas for --emit=cubin, an unwritable output -- is one
// diagnostic line and exit status 1.
//
//===----------------------------------------------------------------------===//

#include "nvfp4/Compiler/Compiler.h"
#include "nvfp4/InitAll.h"
#include "nvfp4/Target/Chip.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Support/Timing.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/ErrorHandling.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/ToolOutputFile.h"

#include <cstdlib>

using namespace mlir;
namespace cl = llvm::cl;

static cl::OptionCategory category("nvfp4-compile options");

static cl::opt<std::string> inputFilename(cl::Positional,
                                          cl::desc("<input .mlir>"),
                                          cl::init("-"), cl::cat(category));
static cl::opt<std::string> outputFilename("o", cl::desc("Output file"),
                                           cl::value_desc("filename"),
                                           cl::init("-"), cl::cat(category));
static cl::opt<std::string>
    chip("chip",
         cl::desc("Target GPU: sm_103a (GB300, default), sm_100a, sm_120a "
                  "or sm_90a"),
         cl::init("sm_103a"), cl::cat(category));
static cl::opt<std::string>
    emit("emit", cl::desc("What to write: mlir, llvm, ptx (default), cubin"),
         cl::init("ptx"), cl::cat(category));
static cl::opt<std::string>
    reportFilename("report",
                   cl::desc("Write a JSON report of the kernels (launch "
                            "geometry, parameters, ptxas statistics)"),
                   cl::value_desc("file.json"), cl::init(""),
                   cl::cat(category));
static cl::opt<std::string>
    ptxasPath("ptxas", cl::desc("ptxas to use (default: PATH, then "
                                "/usr/local/cuda/bin/ptxas)"),
              cl::init(""), cl::cat(category));
static cl::opt<unsigned>
    keepFirst("keep-first",
              cl::desc("Model IR: first transformer blocks kept in BF16 "
                       "(default 2)"),
              cl::init(2), cl::cat(category));
static cl::opt<unsigned>
    keepLast("keep-last",
             cl::desc("Model IR: last transformer blocks kept in BF16 "
                      "(default 8)"),
             cl::init(8), cl::cat(category));
static cl::opt<bool> skipRecipe(
    "no-recipe",
    cl::desc("Do not run nvfp4-assign-precision / nvfp4-apply-recipe / "
             "nvfp4-fuse-quantization on the input first"),
    cl::init(false), cl::cat(category));
static cl::opt<std::string> gemmSchedule(
    "gemm-schedule",
    cl::desc("Force the tensor-core GEMM schedule, e.g. "
             "128x256x256_s2_d2w1_p8 or 128x128_s4 (docs/GemmKernels.md); "
             "default: the lowering's choice for each shape"),
    cl::init(""), cl::cat(category));
static cl::opt<bool> skipPtxasCheck(
    "no-ptxas-check",
    cl::desc("Do not assemble --emit=ptx output with ptxas to check it"),
    cl::init(false), cl::cat(category));

/// LLVM's fatal errors (e.g. an instruction the backend cannot select) end
/// the process; make that one clear line and status 1 instead of a crash
/// report. The code generators check every chip/instruction pair first, so
/// reaching this is a bug in nvfp4.
static void reportFatalLLVMError(void *, const char *reason, bool) {
  llvm::errs() << "nvfp4-compile: error: internal error in the LLVM backend: "
               << reason << "\n";
  std::_Exit(1);
}

static int fail(const llvm::Twine &message) {
  llvm::errs() << "nvfp4-compile: error: " << message << "\n";
  return 1;
}

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  llvm::install_fatal_error_handler(reportFatalLLVMError);
  // --mlir-timing[-display=list|tree]: where the compile time goes.
  registerDefaultTimingManagerCLOptions();
  cl::HideUnrelatedOptions(category);
  cl::ParseCommandLineOptions(argc, argv,
                              "nvfp4-compile: nvfp4 IR to PTX for one GPU\n");

  mlir::nvfp4::CompileOptions options;
  options.chip = chip;
  options.gemmSchedule = gemmSchedule;
  options.ptxasPath = ptxasPath;
  options.verifyWithPtxas = !skipPtxasCheck;
  options.applyRecipe = !skipRecipe;
  options.keepFirst = keepFirst;
  options.keepLast = keepLast;
  options.buildPrecisionReport = !reportFilename.empty();
  std::optional<mlir::nvfp4::EmitKind> kind = mlir::nvfp4::parseEmitKind(emit);
  if (!kind)
    return fail("unknown --emit=" + emit + " (expected mlir, llvm, ptx or cubin)");
  options.emit = *kind;
  if (!::nvfp4::target::lookupChip(options.chip))
    return fail("unsupported chip '" + options.chip + "' (supported: " +
                ::nvfp4::target::supportedChipNames() + ")");

  std::string error;
  std::unique_ptr<llvm::MemoryBuffer> input =
      openInputFile(inputFilename, &error);
  if (!input)
    return fail(error);

  DefaultTimingManager timingManager;
  applyDefaultTimingManagerCLOptions(timingManager);
  TimingScope timing = timingManager.getRootScope();
  options.timing = &timing;

  DialectRegistry registry;
  mlir::nvfp4::registerAllNVFP4Dependencies(registry);
  MLIRContext context(registry);
  llvm::SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(std::move(input), llvm::SMLoc());
  SourceMgrDiagnosticHandler diagnostics(sourceMgr, &context);

  TimingScope parseTiming = timing.nest("parse");
  OwningOpRef<ModuleOp> module = parseSourceFile<ModuleOp>(sourceMgr, &context);
  parseTiming.stop();
  if (!module)
    return 1;
  FailureOr<mlir::nvfp4::CompileResult> result = mlir::nvfp4::compileModule(*module, options);
  if (failed(result))
    return 1;

  std::unique_ptr<llvm::ToolOutputFile> output =
      openOutputFile(outputFilename, &error);
  if (!output)
    return fail(error);
  output->os() << result->output;
  if (!reportFilename.empty()) {
    // FILE.json, the chart next to it as FILE.svg, and the per-layer table
    // on stdout (stderr when the compiled output goes to stdout).
    std::unique_ptr<llvm::ToolOutputFile> report =
        openOutputFile(reportFilename, &error);
    if (!report)
      return fail(error);
    mlir::nvfp4::writeKernelReport(report->os(), *result);
    SmallString<128> svgPath(reportFilename);
    llvm::sys::path::replace_extension(svgPath, "svg");
    std::unique_ptr<llvm::ToolOutputFile> svg = openOutputFile(svgPath, &error);
    if (!svg)
      return fail(error);
    if (result->precision) {
      svg->os() << mlir::nvfp4::renderSVG(*result->precision);
      (outputFilename == "-" ? llvm::errs() : llvm::outs())
          << mlir::nvfp4::renderTable(*result->precision);
    }
    report->keep();
    svg->keep();
  }
  output->keep();
  return 0;
}
