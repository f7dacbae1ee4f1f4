/*===- my-c-tool.c - a C program on the installed nvfp4 C API -----*- C -*-===*\
|*                                                                            *|
|* Part of the nvfp4 project.                                                 *|
|*                                                                            *|
|*===----------------------------------------------------------------------===*|
|*                                                                            *|
|*   my-c-tool PIPELINE < FILE.mlir                                          *|
|*                                                                            *|
|* Parses nvfp4 (or model) IR from stdin into an MlirContext, runs PIPELINE   *|
|* ("builtin.module(...)", upstream and nvfp4 passes) through                 *|
|* mlirParsePassPipeline and prints the result; exit 1 on any error.          *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

#include "nvfp4-c/Dialects.h"

#include "mlir-c/IR.h"
#include "mlir-c/Pass.h"
#include "mlir-c/RegisterEverything.h"

#include <stdio.h>
#include <stdlib.h>

static void print(MlirStringRef text, void *stream) {
  fwrite(text.data, 1, text.length, (FILE *)stream);
}

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: my-c-tool PIPELINE < FILE.mlir\n");
    return 1;
  }
  static char input[1 << 20];
  size_t length = fread(input, 1, sizeof(input) - 1, stdin);
  input[length] = '\0';

  MlirContext context = mlirContextCreate();
  MlirDialectRegistry registry = mlirDialectRegistryCreate();
  mlirDialectHandleInsertDialect(mlirGetDialectHandle__nvfp4__(), registry);
  nvfp4RegisterUpstreamDependencies(registry);
  mlirContextAppendDialectRegistry(context, registry);
  mlirDialectRegistryDestroy(registry);
  mlirRegisterAllPasses();
  nvfp4RegisterPasses();

  int status = 1;
  /* Without a diagnostic handler, MLIR prints errors to stderr. */
  MlirModule module =
      mlirModuleCreateParse(context, mlirStringRefCreate(input, length));
  if (!mlirModuleIsNull(module)) {
    MlirPassManager pm = mlirPassManagerCreate(context);
    if (mlirLogicalResultIsSuccess(mlirParsePassPipeline(
            mlirPassManagerGetAsOpPassManager(pm),
            mlirStringRefCreateFromCString(argv[1]), print, stderr)) &&
        mlirLogicalResultIsSuccess(
            mlirPassManagerRunOnOp(pm, mlirModuleGetOperation(module)))) {
      mlirOperationPrint(mlirModuleGetOperation(module), print, stdout);
      printf("\n");
      status = 0;
    }
    mlirPassManagerDestroy(pm);
    mlirModuleDestroy(module);
  }
  mlirContextDestroy(context);
  return status;
}
