//===- nvfp4-opt.cpp - the nvfp4 optimizer driver ------------------------===//
//
// Part of the nvfp4 project.
//
// mlir-opt with the nvfp4 dialect and passes plus the upstream dialects and
// passes our pipelines use. Invalid input is reported as a diagnostic and
// the tool exits with status 1.
//
//===----------------------------------------------------------------------===//

#include "nvfp4/InitAll.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"

int main(int argc, char **argv) {
  mlir::registerAllPasses();
  mlir::nvfp4::registerNVFP4Passes();

  mlir::DialectRegistry registry;
  mlir::nvfp4::registerAllNVFP4Dependencies(registry);
  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "nvfp4 optimizer driver\n", registry));
}
