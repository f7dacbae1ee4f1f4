/*===- nvfp4-c/Compiler.h - C API of nvfp4-compile --------------*- C -*-===*\
|*                                                                            *|
|* Part of the nvfp4 project.                                                 *|
|*                                                                            *|
|*===----------------------------------------------------------------------===*|
|*                                                                            *|
|* The compile step of nvfp4-compile as a function: nvfp4 or annotated model  *|
|* IR in, the artifact (MLIR, LLVM IR, PTX or a cubin) and the kernel         *|
|* manifest (the JSON of --report, docs/Runtime.md) out. Errors are           *|
|* diagnostics on the module's context (mlirContextAttachDiagnosticHandler)   *|
|* and a failed result; no output is produced then.                           *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

#ifndef NVFP4_C_COMPILER_H
#define NVFP4_C_COMPILER_H

#include "mlir-c/IR.h"
#include "mlir-c/Support.h"

#ifdef __cplusplus
extern "C" {
#endif

/* What nvfp4CompileModule produces (nvfp4-compile --emit=...). */
typedef enum NVFP4EmitKind {
  NVFP4EmitMLIR = 0,
  NVFP4EmitLLVM = 1,
  NVFP4EmitPTX = 2,
  NVFP4EmitCubin = 3,
} NVFP4EmitKind;

/* Options of one compilation, an opaque handle so that options can be added
 * without breaking the ABI. Defaults are nvfp4-compile's: chip sm_103a, PTX,
 * the recipe passes run first, PTX checked with ptxas where one is found. */
typedef struct NVFP4CompileOptions {
  void *ptr;
} NVFP4CompileOptions;

MLIR_CAPI_EXPORTED NVFP4CompileOptions nvfp4CompileOptionsCreate(void);
MLIR_CAPI_EXPORTED void nvfp4CompileOptionsDestroy(NVFP4CompileOptions options);

/* "sm_90a", "sm_100a", "sm_103a" or "sm_120a" (--chip); another name makes
 * nvfp4CompileModule fail with a diagnostic. */
MLIR_CAPI_EXPORTED void nvfp4CompileOptionsSetChip(NVFP4CompileOptions options,
                                                   MlirStringRef chip);
MLIR_CAPI_EXPORTED void nvfp4CompileOptionsSetEmit(NVFP4CompileOptions options,
                                                   NVFP4EmitKind emit);
/* Forces the tensor-core GEMM schedule (--gemm-schedule); empty: default. */
MLIR_CAPI_EXPORTED void
nvfp4CompileOptionsSetGemmSchedule(NVFP4CompileOptions options,
                                   MlirStringRef schedule);
/* Assemble the PTX with ptxas to check it (--no-ptxas-check turns it off). */
MLIR_CAPI_EXPORTED void
nvfp4CompileOptionsSetVerifyWithPtxas(NVFP4CompileOptions options, bool verify);
/* Run nvfp4-assign-precision, nvfp4-apply-recipe and nvfp4-fuse-quantization
 * first (--no-recipe turns it off). */
MLIR_CAPI_EXPORTED void
nvfp4CompileOptionsSetApplyRecipe(NVFP4CompileOptions options, bool apply);
/* nvfp4-assign-precision's keep-first / keep-last; a negative value restores
 * the pass's default. */
MLIR_CAPI_EXPORTED void
nvfp4CompileOptionsSetKeepFirst(NVFP4CompileOptions options, int blocks);
MLIR_CAPI_EXPORTED void
nvfp4CompileOptionsSetKeepLast(NVFP4CompileOptions options, int blocks);

/* Lowers `module` (modified in place) as nvfp4-compile does. On success
 * calls `artifact` with the output (binary for a cubin: use the length) and,
 * when `manifest` is not NULL, with the JSON manifest; asking for the
 * manifest also requires the host code to be describable as one (a
 * diagnostic otherwise). Each callback is called once, with `userData`;
 * the string is valid only during the call. */
MLIR_CAPI_EXPORTED MlirLogicalResult nvfp4CompileModule(
    MlirModule module, NVFP4CompileOptions options,
    MlirStringCallback artifact, MlirStringCallback manifest, void *userData);

#ifdef __cplusplus
}
#endif

#endif /* NVFP4_C_COMPILER_H */
