//===- nvfp4-checkpoint.cpp - NVFP4 checkpoints in and out ---------------===//
//
// Part of the nvfp4 project.
//
//   nvfp4-checkpoint quantize IN.safetensors --out DIR [--exclude=PATTERN]...
//                    [--keep-first=N] [--keep-last=N] [--input-amax=FILE]
//   nvfp4-checkpoint inspect FILE.safetensors|DIR
//   nvfp4-checkpoint import DIR --layer NAME -o layer.mlir [--tokens=T]
//
// The checkpoint layout is ModelOpt's (docs/Checkpoints.md). Silent on
// success like LLVM's tools: quantize writes DIR, import writes -o (stdout by
// default), inspect prints to stdout because that is what it is asked for.
// Every failure -- a malformed or truncated file, a wrong dtype or shape, a
// missing layer -- is one "error:" line and exit status 1.
//
//===----------------------------------------------------------------------===//

#include "nvfp4/Checkpoint/ModelOpt.h"

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/WithColor.h"
#include "llvm/Support/raw_ostream.h"

using namespace llvm;
using namespace nvfp4::checkpoint;

static cl::SubCommand
    quantizeCommand("quantize",
                    "Quantize a BF16/FP16/FP32 checkpoint's linear weights to "
                    "NVFP4 (ModelOpt layout)");
static cl::SubCommand inspectCommand("inspect",
                                     "Print what a checkpoint holds");
static cl::SubCommand
    importCommand("import",
                  "Write an MLIR program for one NVFP4 layer of a checkpoint");

static cl::opt<std::string> quantizeInput(cl::Positional, cl::Required,
                                          cl::desc("<input .safetensors>"),
                                          cl::sub(quantizeCommand));
static cl::opt<std::string> outDir("out", cl::Required,
                                   cl::desc("Output checkpoint directory"),
                                   cl::value_desc("dir"),
                                   cl::sub(quantizeCommand));
static cl::list<std::string>
    exclude("exclude",
            cl::desc("Keep modules matching this pattern unquantized ('*' "
                     "matches anything; repeatable)"),
            cl::value_desc("pattern"), cl::sub(quantizeCommand));
static cl::opt<int64_t>
    keepFirst("keep-first",
              cl::desc("Keep the first N transformer blocks in BF16"),
              cl::init(0), cl::sub(quantizeCommand));
static cl::opt<int64_t>
    keepLast("keep-last",
             cl::desc("Keep the last N transformer blocks in BF16"),
             cl::init(0), cl::sub(quantizeCommand));
static cl::opt<std::string> inputAmax(
    "input-amax",
    cl::desc("JSON file {\"module\": activation amax}: writes input_scale"),
    cl::value_desc("file.json"), cl::init(""), cl::sub(quantizeCommand));
static cl::opt<bool> verbose("v",
                             cl::desc("Print which modules were quantized"),
                             cl::init(false), cl::sub(quantizeCommand));

static cl::opt<std::string> inspectInput(cl::Positional, cl::Required,
                                         cl::desc("<file.safetensors | dir>"),
                                         cl::sub(inspectCommand));

static cl::opt<std::string> importInput(cl::Positional, cl::Required,
                                        cl::desc("<checkpoint dir>"),
                                        cl::sub(importCommand));
static cl::opt<std::string> layer("layer", cl::Required,
                                  cl::desc("Module name of the layer"),
                                  cl::value_desc("name"),
                                  cl::sub(importCommand));
static cl::opt<std::string> outputFilename("o", cl::desc("Output file"),
                                           cl::value_desc("filename"),
                                           cl::init("-"),
                                           cl::sub(importCommand));
static cl::opt<int64_t> tokens("tokens",
                               cl::desc("Rows of the activation (default 128)"),
                               cl::init(128), cl::sub(importCommand));

static int fail(const Twine &Message) {
  WithColor::error(errs(), "nvfp4-checkpoint") << Message << "\n";
  return 1;
}

static int fail(Error E) { return fail(toString(std::move(E))); }

static int runQuantize() {
  if (keepFirst < 0 || keepLast < 0)
    return fail("--keep-first and --keep-last must be >= 0");
  CheckpointQuantizeOptions Options;
  Options.Policy.Exclude.assign(exclude.begin(), exclude.end());
  Options.Policy.KeepFirst = keepFirst;
  Options.Policy.KeepLast = keepLast;
  Options.InputAmaxFile = inputAmax;
  Options.ProducerVersion = NVFP4_VERSION;
  Expected<QuantizeSummary> Summary =
      quantizeCheckpoint(quantizeInput, outDir, Options);
  if (!Summary)
    return fail(Summary.takeError());
  if (verbose) {
    for (const std::string &Module : Summary->Quantized)
      errs() << "nvfp4    " << Module << "\n";
    for (const auto &[Module, Reason] : Summary->Excluded)
      errs() << "kept     " << Module << " (" << Reason << ")\n";
  }
  return 0;
}

static int runImport() {
  if (tokens <= 0 || tokens % 16 != 0)
    return fail("--tokens must be a positive multiple of 16, got " +
                Twine(tokens));
  Expected<NVFP4Layer> Layer = loadLayer(importInput, layer);
  if (!Layer)
    return fail(Layer.takeError());
  std::string Program = importLayerProgram(*Layer, tokens);
  std::error_code EC;
  ToolOutputFile Out(outputFilename, EC, sys::fs::OF_Text);
  if (EC)
    return fail(outputFilename + ": " + EC.message());
  Out.os() << Program;
  Out.os().flush();
  if (Out.os().has_error()) {
    Out.os().clear_error();
    return fail(outputFilename + ": write failed");
  }
  Out.keep();
  return 0;
}

int main(int argc, char **argv) {
  InitLLVM X(argc, argv);
  cl::SetVersionPrinter([](raw_ostream &OS) {
    OS << "nvfp4-checkpoint " << NVFP4_VERSION << "\n";
  });
  cl::ParseCommandLineOptions(
      argc, argv,
      "nvfp4-checkpoint: NVFP4 checkpoints (ModelOpt / Hugging Face "
      "safetensors layout)\n");
  if (quantizeCommand)
    return runQuantize();
  if (inspectCommand) {
    if (Error E = inspectCheckpoint(inspectInput, outs()))
      return fail(std::move(E));
    return 0;
  }
  if (importCommand)
    return runImport();
  return fail("expected a subcommand: quantize, inspect or import (see "
              "--help)");
}
