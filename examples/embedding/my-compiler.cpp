//===- my-compiler.cpp - a compiler that embeds nvfp4 ---------------------===//
//
// Part of the nvfp4 project.
//
//===----------------------------------------------------------------------===//
//
// Stands in for another ML compiler that uses nvfp4 from its install tree.
// It does the things an embedder needs:
//
//   my-compiler FILE.mlir   parse, verify and print nvfp4 IR;
//   my-compiler --build     build nvfp4 IR with the generated C++ API;
//   my-compiler --pass-pipeline='builtin.module(...)' FILE.mlir
//                           run a pipeline string naming upstream and nvfp4
//                           passes, print the result;
//   my-compiler --lower FILE.mlir
//                           run a pass manager built in C++: the NVFP4
//                           recipe, then the bit-exact CPU lowering.
//
// Each exits 1 after printing a diagnostic when something is wrong.
//
//===----------------------------------------------------------------------===//

#include "nvfp4/Dialect/NVFP4/IR/NVFP4Dialect.h"
#include "nvfp4/Dialect/NVFP4/IR/NVFP4Ops.h"
#include "nvfp4/InitAll.h"

#include "nvfp4/Dialect/NVFP4/Transforms/Passes.h"
#include "nvfp4/Pipelines/Pipelines.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Transforms/Passes.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;

/// How the parsed module is transformed before it is printed.
using Transform = llvm::function_ref<LogicalResult(ModuleOp)>;

/// Parses `path` as a module, transforms it and prints it. The parser also
/// runs the verifiers; the SourceMgr handler prints any diagnostic with its
/// source line, as mlir-opt does.
static int parseTransformAndPrint(MLIRContext &context, llvm::StringRef path,
                                  Transform transform) {
  std::string errorMessage;
  std::unique_ptr<llvm::MemoryBuffer> file = openInputFile(path, &errorMessage);
  if (!file) {
    llvm::errs() << "my-compiler: " << errorMessage << "\n";
    return 1;
  }
  llvm::SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(std::move(file), llvm::SMLoc());
  SourceMgrDiagnosticHandler diagnosticHandler(sourceMgr, &context);

  OwningOpRef<ModuleOp> module =
      parseSourceFile<ModuleOp>(sourceMgr, ParserConfig(&context));
  if (!module || failed(transform(*module)))
    return 1;
  module->print(llvm::outs());
  return 0;
}

// snippet: pipeline-string
/// Runs `pipeline`, a textual pipeline with its anchor
/// ("builtin.module(nvfp4-apply-recipe,canonicalize)"), on `module`.
static LogicalResult runPipelineString(ModuleOp module,
                                       llvm::StringRef pipeline) {
  // The overload that returns the pass manager, not
  // parsePassPipeline(pipeline, pm): that one adds to an existing pm, and
  // with an anchored string it nests a builtin.module pass manager inside
  // the module's own, which then runs on the (absent) modules nested in
  // the module: nothing happens, and nothing says so.
  FailureOr<OpPassManager> parsed = parsePassPipeline(pipeline, llvm::errs());
  if (failed(parsed))
    return failure();
  PassManager pm(module->getContext());
  static_cast<OpPassManager &>(pm) = std::move(*parsed);
  // Fails with a diagnostic when the anchor is not the module's op name.
  return pm.run(module);
}
// end snippet: pipeline-string

// snippet: pass-manager
/// The NVFP4 recipe, then the bit-exact CPU lowering, as a pass manager
/// built in C++: no pass registration needed for this one.
static LogicalResult lowerToReference(ModuleOp module) {
  PassManager pm(module->getContext());
  pm.addPass(nvfp4::createNVFP4AssignPrecision());
  pm.addPass(nvfp4::createNVFP4ApplyRecipe());
  pm.addPass(createCanonicalizerPass());
  // convert-nvfp4-to-reference, bufferization, loops and the conversions to
  // the LLVM dialect (nvfp4/Pipelines/Pipelines.h).
  nvfp4::buildReferencePipeline(pm);
  return pm.run(module);
}
// end snippet: pass-manager

/// Builds the fake quantization a frontend emits for one activation, with
/// the amax computed once and passed to the quantize explicitly:
///
///   func.func @quantize_activation(%x: tensor<32x64xbf16>)
///       -> tensor<32x64xbf16> {
///     %amax = nvfp4.amax %x : tensor<32x64xbf16>
///     %q = nvfp4.quantize %x amax(%amax) : ... -> !nvfp4.tensor<...>
///     %y = nvfp4.dequantize %q : !nvfp4.tensor<...> -> tensor<32x64xbf16>
///     return %y : tensor<32x64xbf16>
///   }
static int buildAndPrint(MLIRContext &context) {
  // Registration only makes dialects loadable; the parser loads them on
  // demand, but ops cannot be built until their dialect is loaded.
  context.loadDialect<func::FuncDialect, nvfp4::NVFP4Dialect>();

  OpBuilder builder(&context);
  Location loc = FileLineColLoc::get(&context, "my-compiler", 0, 0);
  OwningOpRef<ModuleOp> module = ModuleOp::create(loc);
  builder.setInsertionPointToEnd(module->getBody());

  auto activationType = RankedTensorType::get({32, 64}, builder.getBF16Type());
  // E2M1 codes with E4M3 scales over 1x16 blocks, linear scale layout.
  auto quantizedType =
      nvfp4::BlockScaledTensorType::get(&context, {32, 64}, {1, 16});

  auto function = func::FuncOp::create(
      builder, loc, "quantize_activation",
      builder.getFunctionType({activationType}, {activationType}));
  Block *body = function.addEntryBlock();
  builder.setInsertionPointToStart(body);
  Value input = body->getArgument(0);
  Value amax = nvfp4::AmaxOp::create(builder, loc, input);
  Value quantized = nvfp4::QuantizeOp::create(builder, loc, quantizedType,
                                              input, amax, /*seed=*/Value());
  Value dequantized =
      nvfp4::DequantizeOp::create(builder, loc, activationType, quantized);
  func::ReturnOp::create(builder, loc, dequantized);

  // Built IR is not verified automatically; without a handler installed the
  // context prints the verifier's diagnostics to stderr.
  if (failed(verify(*module)))
    return 1;
  module->print(llvm::outs());
  return 0;
}

int main(int argc, char **argv) {
  llvm::StringRef argument = argc >= 2 ? argv[1] : "";
  llvm::StringRef file = argc == 3 ? argv[2] : "";
  bool pipelineMode = argument.consume_front("--pass-pipeline=");
  bool lowerMode = argument == "--lower";
  bool valid = argc == 2 ? !argument.empty() && (argument == "--build" ||
                                                 !argument.starts_with("-"))
                         : argc == 3 && (pipelineMode || lowerMode);
  if (!valid) {
    llvm::errs() << "usage: my-compiler (FILE.mlir | --build | "
                    "--pass-pipeline=PIPELINE FILE.mlir | --lower FILE.mlir)\n";
    return 1;
  }

  // snippet: registration
  // Passes: every upstream pass (canonicalize, one-shot-bufferize, ... as
  // named in pipeline strings) and ours. Without registerAllPasses() a
  // string naming an upstream pass fails to parse ("does not refer to a
  // registered pass"); a pass manager built in C++ needs neither call.
  registerAllPasses();
  nvfp4::registerNVFP4Passes();

  // Dialects: nvfp4 and everything our pipelines convert to (linalg,
  // bufferization, llvm, gpu, nvvm, ...) with their interface models.
  DialectRegistry registry;
  nvfp4::registerAllNVFP4Dependencies(registry);
  MLIRContext context(registry);
  // end snippet: registration
  // One line per diagnostic: the source location already points at the op.
  context.printOpOnDiagnostic(false);

  if (argument == "--build")
    return buildAndPrint(context);
  if (pipelineMode)
    return parseTransformAndPrint(context, file, [&](ModuleOp module) {
      return runPipelineString(module, argument);
    });
  if (lowerMode)
    return parseTransformAndPrint(context, file, lowerToReference);
  return parseTransformAndPrint(context, argument,
                                [](ModuleOp) { return success(); });
}
