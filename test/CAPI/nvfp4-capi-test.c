/*===- nvfp4-capi-test.c - the nvfp4 C API from a C program -------*- C -*-===*\
|*                                                                            *|
|* Part of the nvfp4 project.                                                 *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

/* RUN: nvfp4-capi-test 2>&1 | FileCheck %s
 *
 * What a compiler written against MLIR's C API does with nvfp4: register the
 * dialect and every pass, parse annotated model IR into an MlirContext, run
 * nvfp4-apply-recipe and then the reference pipeline through
 * mlirParsePassPipeline, compile to PTX with the manifest, and get a
 * diagnostic (not a crash) for bad input. Plain C99: no C++ in sight.
 */

#include "nvfp4-c/Compiler.h"
#include "nvfp4-c/Dialects.h"

#include "mlir-c/Diagnostics.h"
#include "mlir-c/IR.h"
#include "mlir-c/Pass.h"
#include "mlir-c/RegisterEverything.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void printToStdout(MlirStringRef text, void *userData) {
  (void)userData;
  fwrite(text.data, 1, text.length, stdout);
}

/* Counts the occurrences of `needle` in what is printed through it. */
typedef struct {
  const char *needle;
  int count;
  size_t bytes;
} Counter;

static void countOccurrences(MlirStringRef text, void *userData) {
  Counter *counter = (Counter *)userData;
  counter->bytes += text.length;
  size_t n = strlen(counter->needle);
  for (size_t i = 0; i + n <= text.length; ++i)
    if (memcmp(text.data + i, counter->needle, n) == 0)
      ++counter->count;
}

/* Prints every diagnostic as "SEVERITY: MESSAGE". */
static MlirLogicalResult printDiagnostic(MlirDiagnostic diagnostic,
                                         void *userData) {
  (void)userData;
  static const char *const severities[] = {"error", "warning", "note",
                                           "remark"};
  fprintf(stdout, "%s: ", severities[mlirDiagnosticGetSeverity(diagnostic)]);
  mlirDiagnosticPrint(diagnostic, printToStdout, NULL);
  fprintf(stdout, "\n");
  return mlirLogicalResultSuccess();
}

/* snippet: c-pipeline */
static int runPipeline(MlirContext context, MlirModule module,
                       const char *pipeline) {
  MlirPassManager pm = mlirPassManagerCreate(context);
  MlirOpPassManager opm = mlirPassManagerGetAsOpPassManager(pm);
  /* The pipeline string carries its anchor (builtin.module(...)) and the
   * pass manager is anchored on builtin.module: mlirParsePassPipeline
   * checks that they agree. */
  MlirLogicalResult parsed = mlirParsePassPipeline(
      opm, mlirStringRefCreateFromCString(pipeline), printToStdout, NULL);
  if (mlirLogicalResultIsFailure(parsed)) {
    fprintf(stdout, "\npipeline rejected: %s\n", pipeline);
    mlirPassManagerDestroy(pm);
    return 1;
  }
  MlirLogicalResult ran =
      mlirPassManagerRunOnOp(pm, mlirModuleGetOperation(module));
  mlirPassManagerDestroy(pm);
  if (mlirLogicalResultIsFailure(ran)) {
    fprintf(stdout, "pipeline failed: %s\n", pipeline);
    return 1;
  }
  return 0;
}
/* end snippet: c-pipeline */

/* A 32x64 by 64x48 fprop GEMM that the precision pass marked NVFP4. */
static const char *modelIR =
    "func.func @fprop(%x: tensor<32x64xbf16>,\n"
    "                 %w: tensor<48x64xbf16> {nvfp4.weight})\n"
    "    -> tensor<32x48xbf16> {\n"
    "  %zero = arith.constant 0.0 : bf16\n"
    "  %e = tensor.empty() : tensor<32x48xbf16>\n"
    "  %init = linalg.fill ins(%zero : bf16) outs(%e : tensor<32x48xbf16>)\n"
    "      -> tensor<32x48xbf16>\n"
    "  %y = linalg.matmul indexing_maps = [\n"
    "        affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>,\n"
    "        affine_map<(m, n, k) -> (m, n)>]\n"
    "      {nvfp4.role = \"fprop\", nvfp4.precision = \"nvfp4\"}\n"
    "      ins(%x, %w : tensor<32x64xbf16>, tensor<48x64xbf16>)\n"
    "      outs(%init : tensor<32x48xbf16>) -> tensor<32x48xbf16>\n"
    "  return %y : tensor<32x48xbf16>\n"
    "}\n";

/* The same GEMM as nvfp4 IR, as a frontend that emits the dialect writes
 * it. */
static const char *nvfp4IR =
    "!x = !nvfp4.tensor<32x64xf4E2M1FN, scale = f8E4M3FN, block = 1x16>\n"
    "!w = !nvfp4.tensor<48x64xf4E2M1FN, scale = f8E4M3FN, block = 16x16>\n"
    "func.func @fprop(%x: tensor<32x64xbf16>, %w: tensor<48x64xbf16>)\n"
    "    -> tensor<32x48xbf16> {\n"
    "  %qx = nvfp4.quantize %x : tensor<32x64xbf16> -> !x\n"
    "  %qw = nvfp4.quantize %w : tensor<48x64xbf16> -> !w\n"
    "  %y = nvfp4.scaled_matmul %qx, %qw role<fprop> : !x, !w\n"
    "      -> tensor<32x48xbf16>\n"
    "  return %y : tensor<32x48xbf16>\n"
    "}\n";

static MlirModule parse(MlirContext context, const char *text) {
  return mlirModuleCreateParse(context, mlirStringRefCreateFromCString(text));
}

int main(void) {
  /* snippet: c-registration */
  MlirContext context = mlirContextCreate();
  MlirDialectRegistry registry = mlirDialectRegistryCreate();
  mlirDialectHandleInsertDialect(mlirGetDialectHandle__nvfp4__(), registry);
  nvfp4RegisterUpstreamDependencies(registry);
  mlirContextAppendDialectRegistry(context, registry);
  mlirDialectRegistryDestroy(registry);
  /* Upstream passes (canonicalize, one-shot-bufferize, ...) for the
   * pipelines, ours for nvfp4-apply-recipe and nvfp4-reference-pipeline. */
  mlirRegisterAllPasses();
  nvfp4RegisterPasses();
  /* end snippet: c-registration */
  nvfp4RegisterPasses(); /* idempotent */
  mlirContextAttachDiagnosticHandler(context, printDiagnostic, NULL, NULL);

  MlirDialect nvfp4 = mlirContextGetOrLoadDialect(
      context, mlirStringRefCreateFromCString("nvfp4"));
  MlirStringRef ns = mlirDialectGetNamespace(nvfp4);
  fprintf(stdout, "dialect: %.*s\n", (int)ns.length, ns.data);
  // CHECK: dialect: nvfp4

  MlirModule module = parse(context, modelIR);
  if (mlirModuleIsNull(module))
    return 1;
  if (runPipeline(context, module, "builtin.module(nvfp4-apply-recipe)"))
    return 1;
  mlirOperationPrint(mlirModuleGetOperation(module), printToStdout, NULL);
  fprintf(stdout, "\n");
  // CHECK-LABEL: func.func @fprop
  // CHECK:         %[[QX:.*]] = nvfp4.quantize %{{.*}} : tensor<32x64xbf16> -> !nvfp4.tensor<32x64xf4E2M1FN, scale = f8E4M3FN, block = 1x16>
  // CHECK:         %[[QW:.*]] = nvfp4.quantize %{{.*}} : tensor<48x64xbf16> -> !nvfp4.tensor<48x64xf4E2M1FN, scale = f8E4M3FN, block = 16x16>
  // CHECK:         nvfp4.scaled_matmul %[[QX]], %[[QW]] role<fprop>
  // CHECK-NOT:     linalg.matmul

  if (runPipeline(context, module, "builtin.module(nvfp4-reference-pipeline)"))
    return 1;
  mlirOperationPrint(mlirModuleGetOperation(module), printToStdout, NULL);
  fprintf(stdout, "\n");
  // CHECK:     llvm.func @fprop(
  // CHECK-NOT: nvfp4.
  // CHECK-NOT: linalg.
  // CHECK:     reference lowered
  fprintf(stdout, "reference lowered\n");
  mlirModuleDestroy(module);

  /* nvfp4-compile's step: PTX for sm_100a and the manifest. */
  module = parse(context, nvfp4IR);
  NVFP4CompileOptions options = nvfp4CompileOptionsCreate();
  nvfp4CompileOptionsSetChip(options, mlirStringRefCreateFromCString("sm_100a"));
  nvfp4CompileOptionsSetEmit(options, NVFP4EmitPTX);
  nvfp4CompileOptionsSetVerifyWithPtxas(options, false);
  Counter entries = {".entry", 0, 0};
  if (mlirLogicalResultIsFailure(nvfp4CompileModule(
          module, options, countOccurrences, NULL, &entries)))
    return 1;
  fprintf(stdout, "ptx: %d kernels\n", entries.count);
  // CHECK: ptx: [[KERNELS:[1-9][0-9]*]] kernels
  mlirModuleDestroy(module);

  module = parse(context, nvfp4IR);
  Counter manifest = {"\"grid\"", 0, 0};
  /* The artifact and the manifest go through the same userData here; the
   * counter sees both, and only the manifest has "grid" keys. */
  if (mlirLogicalResultIsFailure(nvfp4CompileModule(
          module, options, countOccurrences, countOccurrences, &manifest)))
    return 1;
  fprintf(stdout, "manifest: %d launches\n", manifest.count);
  // CHECK: manifest: [[KERNELS]] launches
  mlirModuleDestroy(module);

  /* Bad input is a diagnostic and a failure, never an abort. */
  module = parse(context, modelIR);
  nvfp4CompileOptionsSetChip(options, mlirStringRefCreateFromCString("sm_75"));
  if (mlirLogicalResultIsSuccess(nvfp4CompileModule(
          module, options, countOccurrences, NULL, &entries)))
    return 1;
  // CHECK: error: unsupported chip 'sm_75' (supported: sm_90a, sm_100a, sm_103a, sm_120a)
  nvfp4CompileOptionsSetChip(options, mlirStringRefCreateFromCString("sm_90a"));
  nvfp4CompileOptionsSetEmit(options, (NVFP4EmitKind)7);
  if (mlirLogicalResultIsSuccess(nvfp4CompileModule(
          module, options, countOccurrences, NULL, &entries)))
    return 1;
  // CHECK: error: unknown emit kind
  nvfp4CompileOptionsDestroy(options);
  mlirModuleDestroy(module);

  module = parse(context, "func.func @f(%x: tensor<16x30xbf16>) {\n"
                          "  %q = nvfp4.quantize %x : tensor<16x30xbf16>\n"
                          "      -> !nvfp4.tensor<16x30xf4E2M1FN, scale = "
                          "f8E4M3FN, block = 1x16>\n"
                          "  return\n}\n");
  fprintf(stdout, "invalid IR parsed: %s\n",
          mlirModuleIsNull(module) ? "no" : "yes");
  // CHECK: error: block 1x16 does not divide the trailing dimensions 16x30
  // CHECK: invalid IR parsed: no

  module = parse(context, modelIR);
  runPipeline(context, module, "builtin.module(nvfp4-no-such-pass)");
  // CHECK: pipeline rejected: builtin.module(nvfp4-no-such-pass)
  mlirModuleDestroy(module);

  mlirContextDestroy(context);
  fprintf(stdout, "done\n");
  // CHECK: done
  return 0;
}
