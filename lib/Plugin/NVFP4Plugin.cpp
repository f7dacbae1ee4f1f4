//===- NVFP4Plugin.cpp - nvfp4 as an mlir-opt plugin ---------------------===//
//
// Part of the nvfp4 project.
//
// Lets an unmodified `mlir-opt` (the one from Debian's mlir-22-tools) parse
// nvfp4 IR and run our passes:
//
//   mlir-opt --load-dialect-plugin=lib/NVFP4Plugin.so \
//            --load-pass-plugin=lib/NVFP4Plugin.so in.mlir
//
//===----------------------------------------------------------------------===//

#include "nvfp4/InitAll.h"

#include "mlir/Tools/Plugins/DialectPlugin.h"
#include "mlir/Tools/Plugins/PassPlugin.h"
#include "llvm/Config/llvm-config.h"

extern "C" LLVM_ATTRIBUTE_WEAK mlir::DialectPluginLibraryInfo
mlirGetDialectPluginInfo() {
  return {MLIR_PLUGIN_API_VERSION, "NVFP4", LLVM_VERSION_STRING,
          [](mlir::DialectRegistry *registry) {
            mlir::nvfp4::registerNVFP4Dialect(*registry);
          }};
}

extern "C" LLVM_ATTRIBUTE_WEAK mlir::PassPluginLibraryInfo
mlirGetPassPluginInfo() {
  return {MLIR_PLUGIN_API_VERSION, "NVFP4", LLVM_VERSION_STRING,
          []() { mlir::nvfp4::registerNVFP4Passes(); }};
}
