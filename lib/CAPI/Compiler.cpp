//===- Compiler.cpp - C API of nvfp4-compile ------------------------------===//
//
// Part of the nvfp4 project.
//
//===----------------------------------------------------------------------===//

#include "nvfp4-c/Compiler.h"
#include "nvfp4/Compiler/Compiler.h"
#include "nvfp4/Target/Chip.h"

#include "mlir/CAPI/IR.h"
#include "mlir/CAPI/Support.h"

using namespace mlir;

static mlir::nvfp4::CompileOptions &unwrapOptions(NVFP4CompileOptions options) {
  return *static_cast<mlir::nvfp4::CompileOptions *>(options.ptr);
}

NVFP4CompileOptions nvfp4CompileOptionsCreate(void) {
  return {new mlir::nvfp4::CompileOptions()};
}

void nvfp4CompileOptionsDestroy(NVFP4CompileOptions options) {
  delete static_cast<mlir::nvfp4::CompileOptions *>(options.ptr);
}

void nvfp4CompileOptionsSetChip(NVFP4CompileOptions options,
                                MlirStringRef chip) {
  unwrapOptions(options).chip = unwrap(chip).str();
}

void nvfp4CompileOptionsSetEmit(NVFP4CompileOptions options,
                                NVFP4EmitKind emit) {
  // Out-of-range values are kept (as -1) and diagnosed by the compile.
  mlir::nvfp4::CompileOptions &o = unwrapOptions(options);
  switch (emit) {
  case NVFP4EmitMLIR:
    o.emit = mlir::nvfp4::EmitKind::MLIR;
    return;
  case NVFP4EmitLLVM:
    o.emit = mlir::nvfp4::EmitKind::LLVM;
    return;
  case NVFP4EmitPTX:
    o.emit = mlir::nvfp4::EmitKind::PTX;
    return;
  case NVFP4EmitCubin:
    o.emit = mlir::nvfp4::EmitKind::Cubin;
    return;
  }
  o.emit = static_cast<mlir::nvfp4::EmitKind>(-1);
}

void nvfp4CompileOptionsSetGemmSchedule(NVFP4CompileOptions options,
                                        MlirStringRef schedule) {
  unwrapOptions(options).gemmSchedule = unwrap(schedule).str();
}

void nvfp4CompileOptionsSetVerifyWithPtxas(NVFP4CompileOptions options,
                                           bool verify) {
  unwrapOptions(options).verifyWithPtxas = verify;
}

void nvfp4CompileOptionsSetApplyRecipe(NVFP4CompileOptions options,
                                       bool apply) {
  unwrapOptions(options).applyRecipe = apply;
}

void nvfp4CompileOptionsSetKeepFirst(NVFP4CompileOptions options, int blocks) {
  unwrapOptions(options).keepFirst =
      blocks < 0 ? std::nullopt : std::optional<unsigned>(blocks);
}

void nvfp4CompileOptionsSetKeepLast(NVFP4CompileOptions options, int blocks) {
  unwrapOptions(options).keepLast =
      blocks < 0 ? std::nullopt : std::optional<unsigned>(blocks);
}

MlirLogicalResult nvfp4CompileModule(MlirModule module,
                                     NVFP4CompileOptions options,
                                     MlirStringCallback artifact,
                                     MlirStringCallback manifest,
                                     void *userData) {
  ModuleOp moduleOp = unwrap(module);
  // A copy: the manifest decides two options, the caller's stay as set.
  mlir::nvfp4::CompileOptions compileOptions = unwrapOptions(options);
  // What nvfp4-compile checks on its command line, as diagnostics here.
  if (!::nvfp4::target::lookupChip(compileOptions.chip)) {
    moduleOp.emitError() << "unsupported chip '" << compileOptions.chip
                         << "' (supported: "
                         << ::nvfp4::target::supportedChipNames() << ")";
    return mlirLogicalResultFailure();
  }
  if (static_cast<int>(compileOptions.emit) < 0) {
    moduleOp.emitError("unknown emit kind (expected NVFP4EmitMLIR, "
                       "NVFP4EmitLLVM, NVFP4EmitPTX or NVFP4EmitCubin)");
    return mlirLogicalResultFailure();
  }
  if (!artifact) {
    moduleOp.emitError("nvfp4CompileModule needs an artifact callback");
    return mlirLogicalResultFailure();
  }
  compileOptions.requireManifest = manifest != nullptr;
  compileOptions.buildPrecisionReport = manifest != nullptr;

  FailureOr<mlir::nvfp4::CompileResult> result =
      mlir::nvfp4::compileModule(moduleOp, compileOptions);
  if (failed(result))
    return mlirLogicalResultFailure();
  artifact(wrap(StringRef(result->output)), userData);
  if (manifest) {
    std::string json = mlir::nvfp4::renderKernelReport(*result);
    manifest(wrap(StringRef(json)), userData);
  }
  return mlirLogicalResultSuccess();
}
