//===- nvfp4-compile.cpp - nvfp4 IR to PTX / cubin for one chip ----------===//
//
// Part of the nvfp4 project.
//
//   nvfp4-compile IN.mlir --chip=sm_103a -o OUT.ptx
//                 [--emit=mlir|llvm|ptx|cubin] [--report=FILE.json]
//                 [--report-svg=FILE.svg] [--print-report] [--remarks] [-v]
//
// Silent on success, like LLVM's tools: the artifact goes to -o (stdout by
// default), the manifest to --report, the chart to --report-svg; the
// precision table, remarks and the kernel list only when asked for. Every
// failure -- unreadable or invalid input, an unsupported chip or op, a
// missing ptxas for --emit=cubin, colliding or unwritable outputs, a full
// disk -- is one diagnostic and exit status 1, and leaves every output file
// as it was: outputs are written to temporary files next to them and
// renamed over them only once all of them are complete.
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
#include "llvm/ADT/StringMap.h"
#include "llvm/Config/llvm-config.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/ErrorHandling.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SourceMgr.h"

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
                   cl::desc("Write the kernel manifest as JSON (launch "
                            "geometry, parameters, buffers, ptxas "
                            "statistics, per-layer precision)"),
                   cl::value_desc("file.json"), cl::init(""),
                   cl::cat(category));
static cl::opt<std::string>
    reportSvgFilename("report-svg",
                      cl::desc("Write an SVG chart of the NVFP4 share of "
                               "GEMM FLOPs per layer"),
                      cl::value_desc("file.svg"), cl::init(""),
                      cl::cat(category));
static cl::opt<bool> printReport(
    "print-report",
    cl::desc("Print the per-layer precision table (to stdout, or to stderr "
             "when the output goes to stdout)"),
    cl::init(false), cl::cat(category));
static cl::opt<bool>
    showRemarks("remarks",
                cl::desc("Show the passes' remarks (blocks inferred, GEMMs "
                         "kept in BF16 and why, roles assumed)"),
                cl::init(false), cl::cat(category));
static cl::opt<bool> verbose(
    "v", cl::desc("Verbose: --print-report, --remarks and the kernels "
                  "(grid, block, registers) on stderr"),
    cl::init(false), cl::cat(category));
static cl::opt<std::string>
    ptxasPath("ptxas", cl::desc("ptxas to use (default: PATH, then "
                                "/usr/local/cuda/bin/ptxas)"),
              cl::init(""), cl::cat(category));
static cl::opt<unsigned>
    keepFirst("keep-first",
              cl::desc("Model IR: first transformer blocks kept in BF16 "
                       "(default 2 of the paper's 62; not given: scaled "
                       "down for shallower models)"),
              cl::init(2), cl::cat(category));
static cl::opt<unsigned>
    keepLast("keep-last",
             cl::desc("Model IR: last transformer blocks kept in BF16 "
                      "(default 8 of the paper's 62; not given: scaled "
                      "down for shallower models)"),
             cl::init(8), cl::cat(category));
static cl::list<std::string> formats(
    "formats",
    cl::desc("Model IR: block-scaled format per nvfp4.kind, KIND=FORMAT "
             "(FORMAT: nvfp4, mxfp8, mxfp4, bf16), comma-separated; a bare "
             "FORMAT is the default of the kinds not listed (default: nvfp4)"),
    cl::CommaSeparated, cl::cat(category));
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
static cl::opt<std::string> quantizeSchedule(
    "quantize-schedule",
    cl::desc("Force parts of the quantize kernels' schedule, joined by '_' "
             "(convert-nvfp4-to-gpu's quantize-schedule): the 16x16 and dual "
             "kernels' input path registers, ring2, ring3 or ring4 first, "
             "then any of grid<N>, blocks<N>, mulwide, mulsplit, "
             "signlegacy, runs<N>, rolled, fmaforms, aluforms; default: "
             "ring2 for the 16x16 kernels and the duals rounding to "
             "nearest on both sides, registers for the other "
             "duals and where a ring does not fit"),
    cl::init(""), cl::cat(category));
static cl::opt<std::string> mxGemm(
    "mx-gemm",
    cl::desc("Force the MX GEMM's kernel: simt or tensor-core "
             "(convert-nvfp4-to-gpu's mx-gemm); default: the tensor cores, "
             "on sm_90a from 2^22 multiply-adds"),
    cl::init(""), cl::cat(category));
static cl::opt<bool> skipPtxasCheck(
    "no-ptxas-check",
    cl::desc("Do not assemble --emit=ptx output with ptxas to check it"),
    cl::init(false), cl::cat(category));

/// LLVM's fatal errors (e.g. an instruction the backend cannot select) end
/// the process; make that one clear line and status 1 instead of a crash
/// report. The code generators check every chip/instruction pair first and
/// outputs are written with their errors checked, so reaching this is a bug
/// in nvfp4.
static void reportFatalLLVMError(void *, const char *reason, bool) {
  llvm::errs() << "nvfp4-compile: error: internal error in LLVM: " << reason
               << "\n";
  std::_Exit(1);
}

static int fail(const llvm::Twine &message) {
  llvm::errs() << "nvfp4-compile: error: " << message << "\n";
  return 1;
}

namespace {
/// One file the tool writes, with what goes in it.
struct Output {
  std::string flag;   ///< "-o", "--report", "--report-svg"
  std::string path;   ///< "-" is stdout
  std::string contents;
  std::string tempPath; ///< set once written to a temporary file
};
} // namespace

/// What identifies the file `path` names: "-" for stdout, the device and
/// inode when it exists, else its absolute path with `.` and `..` removed.
static std::string fileIdentity(StringRef path) {
  if (path == "-")
    return "<stdout>";
  llvm::sys::fs::UniqueID id;
  if (!llvm::sys::fs::getUniqueID(path, id))
    return "id:" + std::to_string(id.getDevice()) + ":" +
           std::to_string(id.getFile());
  SmallString<256> absolute(path);
  llvm::sys::fs::make_absolute(absolute);
  llvm::sys::path::remove_dots(absolute, /*remove_dot_dot=*/true);
  return "path:" + absolute.str().str();
}

/// Outputs must be different files, and none may be the input: one would
/// silently overwrite the other.
static bool checkDistinctPaths(ArrayRef<Output *> outputs) {
  llvm::StringMap<const Output *> seen;
  if (inputFilename != "-")
    seen[fileIdentity(inputFilename)] = nullptr;
  for (const Output *output : outputs) {
    auto [it, inserted] = seen.try_emplace(fileIdentity(output->path), output);
    if (inserted)
      continue;
    if (!it->second)
      fail(output->flag + " '" + output->path + "' is the input file");
    else
      fail(output->flag + " '" + output->path + "' and " + it->second->flag +
           " '" + it->second->path + "' name the same file");
    return false;
  }
  return true;
}

/// Whether `path` is written in place rather than through a temporary file:
/// stdout, and an existing file that is not a regular file (/dev/null, a
/// FIFO, a terminal), which a rename would replace.
static bool writesInPlace(StringRef path) {
  if (path == "-")
    return true;
  llvm::sys::fs::file_status status;
  return !llvm::sys::fs::status(path, status) &&
         llvm::sys::fs::exists(status) &&
         status.type() != llvm::sys::fs::file_type::regular_file;
}

/// Writes `contents` to the open descriptor `fd` (closing it); the message
/// of the write error, if any.
static std::optional<std::string> writeAndClose(int fd, StringRef contents) {
  llvm::raw_fd_ostream os(fd, /*shouldClose=*/true);
  os << contents;
  os.close();
  if (!os.has_error())
    return std::nullopt;
  std::string message = os.error().message();
  // Handled here: raw_fd_ostream reports an unchecked error as fatal.
  os.clear_error();
  return message;
}

/// Writes every output to a temporary file in its directory, then renames
/// them all over their destinations; on any failure removes the temporary
/// files, leaves the destinations as they were and reports the cause.
static bool commitOutputs(MutableArrayRef<Output *> outputs) {
  auto removeTemporaries = [&] {
    for (Output *output : outputs)
      if (!output->tempPath.empty())
        llvm::sys::fs::remove(output->tempPath);
  };
  for (Output *output : outputs) {
    if (writesInPlace(output->path))
      continue;
    SmallString<256> model(output->path);
    llvm::sys::path::remove_filename(model);
    llvm::sys::path::append(model, "." +
                                       llvm::sys::path::filename(output->path) +
                                       "-%%%%%%%%.tmp");
    int fd;
    SmallString<256> temp;
    if (std::error_code ec =
            llvm::sys::fs::createUniqueFile(model, fd, temp)) {
      removeTemporaries();
      fail("cannot write " + output->flag + " '" + output->path +
           "': " + ec.message());
      return false;
    }
    output->tempPath = temp.str().str();
    if (std::optional<std::string> error =
            writeAndClose(fd, output->contents)) {
      removeTemporaries();
      fail("cannot write " + output->flag + " '" + output->path +
           "': " + *error + " (the file is unchanged)");
      return false;
    }
  }
  for (Output *output : outputs) {
    if (output->tempPath.empty())
      continue;
    if (std::error_code ec =
            llvm::sys::fs::rename(output->tempPath, output->path)) {
      removeTemporaries();
      fail("cannot write " + output->flag + " '" + output->path +
           "': " + ec.message());
      return false;
    }
    output->tempPath.clear();
  }
  // Stdout and special files last: nothing can fail after them.
  for (Output *output : outputs) {
    if (!writesInPlace(output->path))
      continue;
    if (output->path == "-") {
      llvm::outs() << output->contents;
      llvm::outs().flush();
      continue;
    }
    std::error_code ec;
    llvm::raw_fd_ostream os(output->path, ec);
    if (!ec) {
      os << output->contents;
      os.close();
      if (os.has_error()) {
        ec = os.error();
        os.clear_error();
      }
    }
    if (ec) {
      fail("cannot write " + output->flag + " '" + output->path +
           "': " + ec.message());
      return false;
    }
  }
  return true;
}

static void printVersion(llvm::raw_ostream &os) {
  os << "nvfp4-compile (nvfp4 " << NVFP4_VERSION << ")\n"
     << "  LLVM/MLIR " << LLVM_VERSION_STRING << ", default chip sm_103a\n";
}

/// The kernels, one line each, for -v.
static void printKernels(const mlir::nvfp4::CompileResult &result) {
  llvm::errs() << "nvfp4-compile: " << result.kernels.size()
               << " kernel launches for " << result.chip << " from @"
               << result.function << "\n";
  for (const mlir::nvfp4::KernelInfo &kernel : result.kernels) {
    llvm::errs() << "  " << kernel.name << " grid " << kernel.grid[0] << "x"
                 << kernel.grid[1] << "x" << kernel.grid[2] << " block "
                 << kernel.block[0] << " smem " << kernel.sharedMemoryBytes;
    if (kernel.registers)
      llvm::errs() << " registers " << *kernel.registers;
    if (kernel.spillBytes)
      llvm::errs() << " spill " << *kernel.spillBytes;
    llvm::errs() << "\n";
  }
}

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  llvm::install_fatal_error_handler(reportFatalLLVMError);
  // --mlir-timing[-display=list|tree]: where the compile time goes. Listed
  // with our options in --help.
  registerDefaultTimingManagerCLOptions();
  for (StringRef name : {"mlir-timing", "mlir-timing-display"})
    if (cl::Option *option = cl::getRegisteredOptions().lookup(name))
      option->addCategory(category);
  cl::HideUnrelatedOptions(category);
  cl::SetVersionPrinter(printVersion);
  cl::ParseCommandLineOptions(argc, argv,
                              "nvfp4-compile: nvfp4 IR to PTX for one GPU\n");
  bool wantRemarks = showRemarks || verbose;
  bool wantTable = printReport || verbose;

  mlir::nvfp4::CompileOptions options;
  options.chip = chip;
  options.gemmSchedule = gemmSchedule;
  options.quantizeSchedule = quantizeSchedule;
  options.mxGemm = mxGemm;
  options.ptxasPath = ptxasPath;
  options.verifyWithPtxas = !skipPtxasCheck;
  options.applyRecipe = !skipRecipe;
  // Given or not: the pass scales the recipe's defaults to the model's depth
  // only when they were not given.
  if (keepFirst.getNumOccurrences())
    options.keepFirst = keepFirst;
  if (keepLast.getNumOccurrences())
    options.keepLast = keepLast;
  options.formats.assign(formats.begin(), formats.end());
  options.buildPrecisionReport =
      !reportFilename.empty() || !reportSvgFilename.empty() || wantTable;
  options.requireManifest = !reportFilename.empty();
  std::optional<mlir::nvfp4::EmitKind> kind = mlir::nvfp4::parseEmitKind(emit);
  if (!kind)
    return fail("unknown --emit=" + emit + " (expected mlir, llvm, ptx or cubin)");
  options.emit = *kind;
  if (!::nvfp4::target::lookupChip(options.chip))
    return fail("unsupported chip '" + options.chip + "' (supported: " +
                ::nvfp4::target::supportedChipNames() + ")");

  // The outputs, checked before the work: colliding paths would overwrite
  // each other (--report=r.svg --report-svg=r.svg, -o k.json --report=k.json).
  Output artifact{"-o", outputFilename, "", ""};
  Output report{"--report", reportFilename, "", ""};
  Output svg{"--report-svg", reportSvgFilename, "", ""};
  SmallVector<Output *> outputs = {&artifact};
  if (!reportFilename.empty())
    outputs.push_back(&report);
  if (!reportSvgFilename.empty())
    outputs.push_back(&svg);
  if (!checkDistinctPaths(outputs))
    return 1;

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
  // A diagnostic names its source location; the op's generic form (a whole
  // function, for one on a function) is noise for a compiler user.
  context.printOpOnDiagnostic(false);
  llvm::SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(std::move(input), llvm::SMLoc());
  SourceMgrDiagnosticHandler diagnostics(sourceMgr, &context);
  // Registered last, so asked first: remarks are dropped unless asked for.
  ScopedDiagnosticHandler quietRemarks(&context, [&](Diagnostic &diag) {
    return success(diag.getSeverity() == DiagnosticSeverity::Remark &&
                   !wantRemarks);
  });

  TimingScope parseTiming = timing.nest("parse");
  OwningOpRef<ModuleOp> module = parseSourceFile<ModuleOp>(sourceMgr, &context);
  parseTiming.stop();
  if (!module)
    return 1;
  FailureOr<mlir::nvfp4::CompileResult> result = mlir::nvfp4::compileModule(*module, options);
  if (failed(result))
    return 1;

  artifact.contents = std::move(result->output);
  if (!reportFilename.empty())
    report.contents = mlir::nvfp4::renderKernelReport(*result);
  if (!reportSvgFilename.empty())
    svg.contents = mlir::nvfp4::renderSVG(*result->precision);
  if (!commitOutputs(outputs))
    return 1;

  if (wantTable)
    (outputFilename == "-" ? llvm::errs() : llvm::outs())
        << mlir::nvfp4::renderTable(*result->precision);
  if (verbose)
    printKernels(*result);
  return 0;
}
