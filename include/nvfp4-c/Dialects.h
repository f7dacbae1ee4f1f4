/*===- nvfp4-c/Dialects.h - C API of the nvfp4 dialect and passes -*- C -*-===*\
|*                                                                            *|
|* Part of the nvfp4 project.                                                 *|
|*                                                                            *|
|*===----------------------------------------------------------------------===*|
|*                                                                            *|
|* For compilers built on MLIR's C API (or on Python bindings over it): the   *|
|* nvfp4 dialect handle, the upstream dialects and translations our           *|
|* pipelines create, and the registration of our passes and pipelines for     *|
|* mlirParsePassPipeline. Link libNVFP4-C.so (docs/Embedding.md, section 4):  *|
|* it also carries MLIR's own C API, which Debian's libMLIR.so lacks.         *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

#ifndef NVFP4_C_DIALECTS_H
#define NVFP4_C_DIALECTS_H

#include "mlir-c/IR.h"

#ifdef __cplusplus
extern "C" {
#endif

/* mlirGetDialectHandle__nvfp4__(): the nvfp4 dialect, for
 * mlirDialectHandleInsertDialect / mlirDialectHandleLoadDialect. */
MLIR_DECLARE_CAPI_DIALECT_REGISTRATION(NVFP4, nvfp4);

/* Adds every upstream dialect, the interface models and the LLVM IR
 * translations the nvfp4 pipelines create (registerUpstreamDependencies in
 * nvfp4/InitAll.h); without them a pipeline fails to load the dialects it
 * converts to. Does not add nvfp4 itself. */
MLIR_CAPI_EXPORTED void
nvfp4RegisterUpstreamDependencies(MlirDialectRegistry registry);

/* Registers the nvfp4 passes (nvfp4-apply-recipe, convert-nvfp4-to-gpu, ...)
 * and pipelines (nvfp4-reference-pipeline, nvfp4-to-ptx, ...) in the global
 * pass registry. Upstream passes named in the same pipeline string need
 * mlirRegisterAllPasses() (mlir-c/RegisterEverything.h) as well. Calling it
 * more than once is harmless. */
MLIR_CAPI_EXPORTED void nvfp4RegisterPasses(void);

#ifdef __cplusplus
}
#endif

#endif /* NVFP4_C_DIALECTS_H */
