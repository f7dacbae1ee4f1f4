//===- nvfp4-fuzz-opt.cpp - libFuzzer target: parser, verifier, passes ----===//
//
// Part of the nvfp4 project.
//
//===----------------------------------------------------------------------===//
//
// Feeds arbitrary bytes to what nvfp4-opt and nvfp4-compile do with a user's
// file: parse them as MLIR with every dialect nvfp4 registers, verify, and
// run each nvfp4 pass and pipeline on what verifies. Every stage may reject
// the input with a diagnostic (they are swallowed here); none may crash,
// assert, trip a sanitizer or reach an LLVM fatal error. Build with
// -DNVFP4_BUILD_FUZZERS=ON (clang); scripts/fuzz.sh builds and runs it.
//
//===----------------------------------------------------------------------===//

#include "nvfp4/Conversion/Passes.h"
#include "nvfp4/Dialect/NVFP4/Transforms/Passes.h"
#include "nvfp4/InitAll.h"
#include "nvfp4/Pipelines/Pipelines.h"
#include "nvfp4/Report/Passes.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/OwningOpRef.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Transforms/Passes.h"

#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/StringRef.h"

#include <cstddef>
#include <cstdint>
#include <iterator>

using namespace mlir;

namespace {

/// The chips convert-nvfp4-to-gpu knows, plus one it must reject.
constexpr llvm::StringLiteral kChips[] = {"sm_90a", "sm_100a", "sm_103a",
                                          "sm_120a", "sm_80"};

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

/// The lowerings of nvfp4 IR: to the host (reference) and to PTX for `chip`.
void runLowerings(ModuleOp module, llvm::StringRef chip) {
  runOnClone(module, mlir::nvfp4::buildReferencePipeline);
  runOnClone(module, [&](OpPassManager &pm) {
    mlir::nvfp4::buildToPTXPipeline(pm, chip);
  });
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  // A fresh context per input: a crash reproduces from its input alone and
  // interned types do not pile up over millions of runs.
  MLIRContext context(getRegistry(), MLIRContext::Threading::DISABLED);
  context.allowUnregisteredDialects(false);
  ScopedDiagnosticHandler swallow(&context,
                                  [](Diagnostic &) { return success(); });

  llvm::StringRef text(reinterpret_cast<const char *>(data), size);
  OwningOpRef<ModuleOp> module =
      parseSourceString<ModuleOp>(text, ParserConfig(&context), "fuzz");
  if (!module || failed(verify(*module)))
    return 0;

  // One chip per input, from its bytes, so the corpus covers all of them.
  unsigned byteSum = 0;
  for (size_t i = 0; i < size; ++i)
    byteSum += data[i];
  llvm::StringRef chip = kChips[byteSum % std::size(kChips)];

  // Each pass on its own, as a user would run it with nvfp4-opt.
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
    pm.addPass(mlir::nvfp4::createNVFP4PrintPrecisionReport(options));
  });
  runOnClone(*module, [](OpPassManager &pm) {
    pm.addPass(mlir::nvfp4::createConvertNVFP4ToReference());
  });
  runOnClone(*module, [&](OpPassManager &pm) {
    mlir::nvfp4::ConvertNVFP4ToGPUOptions options;
    options.chip = chip.str();
    pm.addPass(mlir::nvfp4::createConvertNVFP4ToGPU(options));
  });

  // The whole path nvfp4-compile takes: the input as given (nvfp4 IR), and
  // the nvfp4 IR the graph passes make of model IR, through both lowerings.
  runLowerings(*module, chip);
  OwningOpRef<ModuleOp> recipe = runOnClone(*module, [](OpPassManager &pm) {
    pm.addPass(mlir::nvfp4::createNVFP4AssignPrecision());
    pm.addPass(mlir::nvfp4::createNVFP4ApplyRecipe());
    pm.addPass(mlir::nvfp4::createNVFP4FuseQuantization());
    pm.addPass(createCanonicalizerPass());
  });
  if (recipe)
    runLowerings(*recipe, chip);
  return 0;
}
