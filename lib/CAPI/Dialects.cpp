//===- Dialects.cpp - C API of the nvfp4 dialect and passes ---------------===//
//
// Part of the nvfp4 project.
//
//===----------------------------------------------------------------------===//

#include "nvfp4-c/Dialects.h"
#include "nvfp4/Dialect/NVFP4/IR/NVFP4Dialect.h"
#include "nvfp4/InitAll.h"

#include "mlir/CAPI/IR.h"
#include "mlir/CAPI/Registration.h"

MLIR_DEFINE_CAPI_DIALECT_REGISTRATION(NVFP4, nvfp4, mlir::nvfp4::NVFP4Dialect)

void nvfp4RegisterUpstreamDependencies(MlirDialectRegistry registry) {
  mlir::nvfp4::registerUpstreamDependencies(*unwrap(registry));
}

void nvfp4RegisterPasses(void) {
  // The pass registry rejects a second registration of a name, so make the
  // documented "more than once is harmless" true here.
  static bool registered = [] {
    mlir::nvfp4::registerNVFP4Passes();
    return true;
  }();
  (void)registered;
}
