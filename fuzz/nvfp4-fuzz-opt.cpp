//===- nvfp4-fuzz-opt.cpp - libFuzzer target: parser, verifier, passes ----===//
//
// Part of the nvfp4 project.
//
//===----------------------------------------------------------------------===//
//
// Feeds arbitrary bytes to what nvfp4-opt and nvfp4-compile do with a user's
// file: parse them as MLIR with every dialect nvfp4 registers, verify, and
// run each nvfp4 pass and pipeline on what verifies -- nvfp4-compile's GPU
// path (compileModule, kernel report included) for every chip, so each
// chip's tensor-core GEMM generator sees every input. Every stage may reject
// the input with a diagnostic (they are swallowed here); none may crash,
// assert, trip a sanitizer or reach an LLVM fatal error. Build with
// -DNVFP4_BUILD_FUZZERS=ON (clang); scripts/fuzz.sh builds and runs it.
//
//===----------------------------------------------------------------------===//

#include "nvfp4/Compiler/Compiler.h"
#include "nvfp4/Conversion/Passes.h"
#include "nvfp4/Dialect/NVFP4/IR/NVFP4Dialect.h"
#include "nvfp4/Dialect/NVFP4/Transforms/Passes.h"
#include "nvfp4/InitAll.h"
#include "nvfp4/Pipelines/Pipelines.h"
#include "nvfp4/Report/Passes.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/OwningOpRef.h"
#include "mlir/IR/RegionKindInterface.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Transforms/Passes.h"

#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/raw_ostream.h"

#include <cctype>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <iterator>

using namespace mlir;

namespace {

/// The chips convert-nvfp4-to-gpu knows. Every input is lowered for each of
/// them: their GEMM kernels are different generators (mma.sync with BF16
/// decode on sm_90a, tcgen05 on sm_100a/sm_103a, mma.sync block_scale on
/// sm_120a), chosen when K % 256 == 0.
constexpr llvm::StringLiteral kChips[] = {"sm_90a", "sm_100a", "sm_103a",
                                          "sm_120a"};
/// A chip convert-nvfp4-to-gpu must reject.
constexpr llvm::StringLiteral kUnsupportedChip = "sm_80";

/// NVFP4_FUZZ_TRACE=1: one line per input on stderr saying how far it got
/// and which GEMM kernels each chip produced (to check that the corpus
/// reaches the tensor-core lowerings; see docs/Testing.md).
bool traceEnabled() {
  static const bool enabled = [] {
    const char *value = std::getenv("NVFP4_FUZZ_TRACE");
    return value && *value && llvm::StringRef(value) != "0";
  }();
  return enabled;
}

const DialectRegistry &getRegistry() {
  static const DialectRegistry *registry = [] {
    auto *r = new DialectRegistry();
    mlir::nvfp4::registerAllNVFP4Dependencies(*r);
    return r;
  }();
  return *registry;
}

/// Runs the passes `build` adds on a clone of `module`; returns the clone
/// (null when the pipeline failed, which is an accepted outcome).
OwningOpRef<ModuleOp>
runOnClone(ModuleOp module,
           llvm::function_ref<void(OpPassManager &)> build) {
  OwningOpRef<ModuleOp> clone = module.clone();
  PassManager pm(module.getContext());
  build(pm);
  if (failed(pm.run(*clone)))
    return nullptr;
  return clone;
}

/// What nvfp4-compile does for `chip` (graph passes, GPU lowering,
/// nvfp4-verify-kernel-target, LLVM's NVPTX backend, the kernel manifest and
/// both reports), without ptxas. Appends a summary to `trace` when tracing.
void compileForChip(ModuleOp module, llvm::StringRef chip,
                    llvm::raw_ostream &trace) {
  OwningOpRef<ModuleOp> clone = module.clone();
  mlir::nvfp4::CompileOptions options;
  options.chip = chip.str();
  options.emit = mlir::nvfp4::EmitKind::PTX;
  options.verifyWithPtxas = false;
  options.applyRecipe = true;
  options.buildPrecisionReport = true;
  FailureOr<mlir::nvfp4::CompileResult> result =
      mlir::nvfp4::compileModule(*clone, options);
  if (succeeded(result))
    mlir::nvfp4::writeKernelReport(llvm::nulls(), *result);
  if (!traceEnabled())
    return;
  trace << " " << chip << "=";
  if (failed(result)) {
    trace << "rejected";
    return;
  }
  unsigned tensorCore = 0, simt = 0;
  for (const mlir::nvfp4::KernelInfo &kernel : result->kernels) {
    if (kernel.sourceOp != "nvfp4.scaled_matmul")
      continue;
    if (llvm::StringRef(kernel.name).ends_with("_simt"))
      ++simt;
    else
      ++tensorCore;
  }
  trace << result->kernels.size() << "k/" << tensorCore << "tc/" << simt
        << "simt/" << result->ptx.size() << "B";
}

/// MLIR 22.1.8's linalg.transpose parser dereferences a null attribute when
/// `permutation` is not a well-formed integer list
/// (fuzz/known-upstream/linalg-transpose-bad-permutation.mlir; upstream
/// mlir-opt crashes the same way). Inputs with such a permutation are
/// skipped so that the known upstream crash does not end every run.
bool hasMalformedTransposePermutation(llvm::StringRef text) {
  size_t at = 0;
  while ((at = text.find("linalg.transpose", at)) != llvm::StringRef::npos) {
    at += sizeof("linalg.transpose") - 1;
    size_t perm = text.find("permutation", at);
    if (perm == llvm::StringRef::npos)
      return false;
    llvm::StringRef rest =
        text.drop_front(perm + sizeof("permutation") - 1).ltrim();
    if (!rest.consume_front("="))
      return true;
    rest = rest.ltrim();
    if (!rest.consume_front("["))
      return true;
    // -?digits separated by commas, then ']'; an empty list is fine too.
    rest = rest.ltrim();
    if (rest.consume_front("]"))
      continue;
    while (true) {
      rest.consume_front("-");
      if (rest.empty() || !std::isdigit(static_cast<unsigned char>(rest[0])))
        return true;
      rest = rest.drop_while(
          [](char c) { return std::isdigit(static_cast<unsigned char>(c)); });
      rest = rest.ltrim();
      if (rest.consume_front("]"))
        break;
      if (!rest.consume_front(","))
        return true;
      rest = rest.ltrim();
    }
  }
  return false;
}

/// Whether a region without SSA dominance (the module body) holds an op of
/// another dialect than nvfp4, other than a symbol (func.func, gpu.module)
/// or a terminator. MLIR 22.1.8's own folders assume acyclic use-def
/// chains: a cycle of linalg.transpose ops crashes the canonicalizer
/// (fuzz/known-upstream/linalg-transpose-cycle-fold.mlir) and one of
/// arith.negf ops loops in it forever; Debian's mlir-opt does the same. The
/// stages that run upstream folders skip such inputs; nvfp4's own cycles
/// (issue 16, H1) still go through all of them.
bool hasUpstreamOpsInGraphRegion(ModuleOp module) {
  WalkResult result = module.walk([](Operation *op) {
    Region *region = op->getParentRegion();
    if (!region || mayHaveSSADominance(*region) ||
        op->hasTrait<OpTrait::IsTerminator>() || isa<SymbolOpInterface>(op) ||
        llvm::isa_and_present<mlir::nvfp4::NVFP4Dialect>(op->getDialect()))
      return WalkResult::advance();
    return WalkResult::interrupt();
  });
  return result.wasInterrupted();
}

} // namespace

namespace {
/// Everything nvfp4-opt and nvfp4-compile would do with `text`.
void runInput(llvm::StringRef text, llvm::raw_ostream &trace) {
  // A fresh context per input: a crash reproduces from its input alone and
  // interned types do not pile up over millions of runs.
  MLIRContext context(getRegistry(), MLIRContext::Threading::DISABLED);
  context.allowUnregisteredDialects(false);
  ScopedDiagnosticHandler swallow(&context,
                                  [](Diagnostic &) { return success(); });

  OwningOpRef<ModuleOp> module =
      parseSourceString<ModuleOp>(text, ParserConfig(&context), "fuzz");
  if (!module || failed(verify(*module))) {
    trace << (module ? " invalid" : " unparsed");
    return;
  }
  trace << " verified";

  // Option values and the one nvfp4-to-ptx chip vary with the input's bytes.
  unsigned byteSum = 0;
  for (char c : text)
    byteSum += static_cast<unsigned char>(c);

  bool upstreamFolders = !hasUpstreamOpsInGraphRegion(*module);
  if (!upstreamFolders)
    trace << " (upstream ops in a graph region: no canonicalize)";

  // Each pass on its own, as a user would run it with nvfp4-opt.
  if (upstreamFolders)
    runOnClone(*module, [](OpPassManager &pm) {
      pm.addPass(createCanonicalizerPass());
    });
  runOnClone(*module, [](OpPassManager &pm) {
    pm.addPass(mlir::nvfp4::createNVFP4AssignPrecision());
  });
  runOnClone(*module, [](OpPassManager &pm) {
    pm.addPass(mlir::nvfp4::createNVFP4ApplyRecipe());
  });
  runOnClone(*module, [](OpPassManager &pm) {
    pm.addPass(mlir::nvfp4::createNVFP4FuseQuantization());
  });
  runOnClone(*module, [&](OpPassManager &pm) {
    mlir::nvfp4::NVFP4PrintPrecisionReportOptions options;
    options.json = byteSum & 1;
    // The report goes to stderr by default; keep the fuzzer's log readable.
    options.outputFile = "/dev/null";
    pm.addPass(mlir::nvfp4::createNVFP4PrintPrecisionReport(options));
  });
  runOnClone(*module, [](OpPassManager &pm) {
    pm.addPass(mlir::nvfp4::createConvertNVFP4ToReference());
  });
  runOnClone(*module, [](OpPassManager &pm) {
    mlir::nvfp4::ConvertNVFP4ToGPUOptions options;
    options.chip = kUnsupportedChip.str();
    pm.addPass(mlir::nvfp4::createConvertNVFP4ToGPU(options));
  });

  // The host lowering of the input as given and of what the graph passes
  // make of it (model IR becomes nvfp4 IR).
  if (upstreamFolders) {
    runOnClone(*module, mlir::nvfp4::buildReferencePipeline);
    OwningOpRef<ModuleOp> recipe = runOnClone(*module, [](OpPassManager &pm) {
      pm.addPass(mlir::nvfp4::createNVFP4AssignPrecision());
      pm.addPass(mlir::nvfp4::createNVFP4ApplyRecipe());
      pm.addPass(mlir::nvfp4::createNVFP4FuseQuantization());
      pm.addPass(createCanonicalizerPass());
    });
    if (recipe)
      runOnClone(*recipe, mlir::nvfp4::buildReferencePipeline);
  }

  // nvfp4-compile's whole GPU path, for every chip (it applies the graph
  // passes itself, so model IR reaches the GEMM kernels too).
  for (llvm::StringRef chip : kChips)
    compileForChip(*module, chip, trace);

  // nvfp4-opt's nvfp4-to-ptx (nvvm target + gpu-module-to-binary instead of
  // nvfp4-compile's own translation), for one chip.
  llvm::StringRef ptxChip = kChips[byteSum % std::size(kChips)];
  bool ptxOk = static_cast<bool>(runOnClone(*module, [&](OpPassManager &pm) {
    mlir::nvfp4::buildToPTXPipeline(pm, ptxChip);
  }));
  trace << " nvfp4-to-ptx{" << ptxChip << "}=" << (ptxOk ? "ok" : "rejected");
}
} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  llvm::StringRef text(reinterpret_cast<const char *>(data), size);
  if (hasMalformedTransposePermutation(text)) {
    if (traceEnabled())
      llvm::errs() << "fuzz-trace: skipped (known upstream parser crash)\n";
    return 0;
  }
  std::string traceText;
  llvm::raw_string_ostream trace(traceText);
  runInput(text, trace);
  if (traceEnabled())
    llvm::errs() << "fuzz-trace:" << traceText << "\n";
  return 0;
}
