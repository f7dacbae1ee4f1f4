//===- my-compiler.cpp - a compiler that embeds nvfp4 ---------------------===//
//
// Part of the nvfp4 project.
//
//===----------------------------------------------------------------------===//
//
// Stands in for another ML compiler that uses nvfp4 from its install tree.
// It does the two things an embedder needs:
//
//   my-compiler FILE.mlir   parse, verify and print nvfp4 IR;
//   my-compiler --build     build nvfp4 IR with the generated C++ API.
//
// Both exit 1 after printing a diagnostic when something is wrong.
//
//===----------------------------------------------------------------------===//

#include "nvfp4/Dialect/NVFP4/IR/NVFP4Dialect.h"
#include "nvfp4/Dialect/NVFP4/IR/NVFP4Ops.h"
#include "nvfp4/InitAll.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;

/// Parses `path` as a module and prints it back. The parser also runs the
/// verifiers; the SourceMgr handler prints any diagnostic with its source
/// line, as mlir-opt does.
static int parseAndPrint(MLIRContext &context, llvm::StringRef path) {
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
  if (!module)
    return 1;
  module->print(llvm::outs());
  return 0;
}

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
  llvm::StringRef argument = argc == 2 ? argv[1] : "";
  if (argument.empty() ||
      (argument.starts_with("-") && argument != "--build")) {
    llvm::errs() << "usage: my-compiler (FILE.mlir | --build)\n";
    return 1;
  }

  // nvfp4 ops live in func.func bodies and use builtin tensor types, so func
  // is the only upstream dialect this tool needs. A compiler that runs the
  // nvfp4 pipelines would call registerAllNVFP4Dependencies instead.
  DialectRegistry registry;
  nvfp4::registerNVFP4Dialect(registry);
  registry.insert<func::FuncDialect>();
  MLIRContext context(registry);
  // One line per diagnostic: the source location already points at the op.
  context.printOpOnDiagnostic(false);

  if (argument == "--build")
    return buildAndPrint(context);
  return parseAndPrint(context, argument);
}
