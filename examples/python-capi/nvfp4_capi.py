#!/usr/bin/env python3
"""A Python-based compiler driving nvfp4 through its C API with ctypes.

No bindings to build: libNVFP4-C.so carries MLIR's C API and nvfp4's
(include/nvfp4-c/), so plain ctypes can register the dialect and the passes,
parse IR, run a pass pipeline and compile to PTX with the kernel manifest:

  nvfp4_capi.py IN.mlir [--pipeline 'builtin.module(...)'] [--chip sm_100a]
                [--emit ptx|cubin|llvm|mlir] [-o OUT] [--manifest OUT.json]
                [--lib path/to/libNVFP4-C.so]

With --pipeline it prints the module after the pipeline; otherwise it
compiles (as nvfp4-compile does) and writes the artifact. Errors are MLIR
diagnostics on stderr and exit status 1.
"""

import argparse
import ctypes
import json
import os
import sys


class StringRef(ctypes.Structure):
    # MlirStringRef: not NUL-terminated, and a cubin holds NULs, hence a
    # void pointer and an explicit length rather than c_char_p.
    _fields_ = [("data", ctypes.c_void_p), ("length", ctypes.c_size_t)]

    @staticmethod
    def of(text):
        data = text.encode() if isinstance(text, str) else text
        # Kept alive by the caller for the duration of the call.
        buffer = ctypes.create_string_buffer(data, len(data))
        ref = StringRef(ctypes.cast(buffer, ctypes.c_void_p), len(data))
        ref._keep = buffer
        return ref

    def bytes(self):
        return ctypes.string_at(self.data, self.length) if self.length else b""


def _handle(name):
    # Every MLIR C API object is a struct holding one pointer, passed by value.
    return type(name, (ctypes.Structure,), {"_fields_": [("ptr", ctypes.c_void_p)]})


Context = _handle("MlirContext")
DialectRegistry = _handle("MlirDialectRegistry")
DialectHandle = _handle("MlirDialectHandle")
Module = _handle("MlirModule")
Operation = _handle("MlirOperation")
PassManager = _handle("MlirPassManager")
OpPassManager = _handle("MlirOpPassManager")
Diagnostic = _handle("MlirDiagnostic")
CompileOptions = _handle("NVFP4CompileOptions")


class LogicalResult(ctypes.Structure):
    _fields_ = [("value", ctypes.c_int8)]

    def failed(self):
        return self.value == 0


StringCallback = ctypes.CFUNCTYPE(None, StringRef, ctypes.c_void_p)
# ctypes callbacks cannot return structures; MlirLogicalResult is a struct
# of one int8_t, which the x86-64 and AArch64 ABIs return like an int8_t.
DiagnosticHandler = ctypes.CFUNCTYPE(ctypes.c_int8, Diagnostic, ctypes.c_void_p)

EMIT_KINDS = {"mlir": 0, "llvm": 1, "ptx": 2, "cubin": 3}


class NVFP4:
    """The C API functions this compiler uses, typed."""

    def __init__(self, path):
        lib = ctypes.CDLL(path)
        self.lib = lib

        def fn(name, restype, *argtypes):
            f = getattr(lib, name)
            f.restype = restype
            f.argtypes = list(argtypes)
            setattr(self, name, f)

        fn("mlirContextCreate", Context)
        fn("mlirContextDestroy", None, Context)
        fn("mlirDialectRegistryCreate", DialectRegistry)
        fn("mlirDialectRegistryDestroy", None, DialectRegistry)
        fn("mlirContextAppendDialectRegistry", None, Context, DialectRegistry)
        fn("mlirGetDialectHandle__nvfp4__", DialectHandle)
        fn("mlirDialectHandleInsertDialect", None, DialectHandle, DialectRegistry)
        fn("nvfp4RegisterUpstreamDependencies", None, DialectRegistry)
        fn("mlirRegisterAllPasses", None)
        fn("nvfp4RegisterPasses", None)
        fn("mlirContextAttachDiagnosticHandler", ctypes.c_uint64, Context,
           DiagnosticHandler, ctypes.c_void_p, ctypes.c_void_p)
        fn("mlirDiagnosticPrint", None, Diagnostic, StringCallback, ctypes.c_void_p)
        fn("mlirModuleCreateParse", Module, Context, StringRef)
        fn("mlirModuleGetOperation", Operation, Module)
        fn("mlirModuleDestroy", None, Module)
        fn("mlirOperationPrint", None, Operation, StringCallback, ctypes.c_void_p)
        fn("mlirPassManagerCreate", PassManager, Context)
        fn("mlirPassManagerDestroy", None, PassManager)
        fn("mlirPassManagerGetAsOpPassManager", OpPassManager, PassManager)
        fn("mlirParsePassPipeline", LogicalResult, OpPassManager, StringRef,
           StringCallback, ctypes.c_void_p)
        fn("mlirPassManagerRunOnOp", LogicalResult, PassManager, Operation)
        fn("nvfp4CompileOptionsCreate", CompileOptions)
        fn("nvfp4CompileOptionsDestroy", None, CompileOptions)
        fn("nvfp4CompileOptionsSetChip", None, CompileOptions, StringRef)
        fn("nvfp4CompileOptionsSetEmit", None, CompileOptions, ctypes.c_int)
        fn("nvfp4CompileOptionsSetVerifyWithPtxas", None, CompileOptions, ctypes.c_bool)
        fn("nvfp4CompileModule", LogicalResult, Module, CompileOptions,
           StringCallback, StringCallback, ctypes.c_void_p)


class Compiler:
    """One MLIR context with nvfp4 and every upstream dialect and pass."""

    # snippet: python-context
    def __init__(self, library_path):
        self.api = api = NVFP4(library_path)
        self.context = api.mlirContextCreate()
        registry = api.mlirDialectRegistryCreate()
        api.mlirDialectHandleInsertDialect(api.mlirGetDialectHandle__nvfp4__(), registry)
        api.nvfp4RegisterUpstreamDependencies(registry)
        api.mlirContextAppendDialectRegistry(self.context, registry)
        api.mlirDialectRegistryDestroy(registry)
        # Upstream passes for pipeline strings that name them, then ours.
        api.mlirRegisterAllPasses()
        api.nvfp4RegisterPasses()
        self.diagnostics = []
        # Kept on self: ctypes frees a callback object that is collected.
        self._on_diagnostic = DiagnosticHandler(self._diagnostic)
        api.mlirContextAttachDiagnosticHandler(self.context, self._on_diagnostic, None, None)
    # end snippet: python-context

    def _diagnostic(self, diagnostic, _):
        parts = []
        collect = StringCallback(lambda text, _: parts.append(text.bytes()))
        self.api.mlirDiagnosticPrint(diagnostic, collect, None)
        self.diagnostics.append(b"".join(parts).decode())
        return 1  # handled

    def _collect(self):
        parts = []
        return parts, StringCallback(lambda text, _: parts.append(text.bytes()))

    def parse(self, text):
        module = self.api.mlirModuleCreateParse(self.context, StringRef.of(text))
        if not module.ptr:
            raise CompileError(self.diagnostics)
        return module

    def run_pipeline(self, module, pipeline):
        """Runs an anchored pipeline string ("builtin.module(...)")."""
        api = self.api
        pm = api.mlirPassManagerCreate(self.context)
        try:
            errors, on_error = self._collect()
            if api.mlirParsePassPipeline(api.mlirPassManagerGetAsOpPassManager(pm),
                                         StringRef.of(pipeline), on_error, None).failed():
                raise CompileError([b"".join(errors).decode()])
            if api.mlirPassManagerRunOnOp(pm, api.mlirModuleGetOperation(module)).failed():
                raise CompileError(self.diagnostics)
        finally:
            api.mlirPassManagerDestroy(pm)

    def print(self, module):
        parts, on_text = self._collect()
        self.api.mlirOperationPrint(self.api.mlirModuleGetOperation(module), on_text, None)
        return b"".join(parts).decode()

    def compile(self, module, chip, emit="ptx", ptxas_check=False):
        """nvfp4-compile's step: the artifact (bytes) and the manifest (dict)."""
        api = self.api
        options = api.nvfp4CompileOptionsCreate()
        try:
            api.nvfp4CompileOptionsSetChip(options, StringRef.of(chip))
            api.nvfp4CompileOptionsSetEmit(options, EMIT_KINDS[emit])
            api.nvfp4CompileOptionsSetVerifyWithPtxas(options, ptxas_check)
            artifact, on_artifact = self._collect()
            manifest, on_manifest = self._collect()
            if api.nvfp4CompileModule(module, options, on_artifact, on_manifest,
                                      None).failed():
                raise CompileError(self.diagnostics)
        finally:
            api.nvfp4CompileOptionsDestroy(options)
        return b"".join(artifact), json.loads(b"".join(manifest))

    def close(self):
        self.api.mlirContextDestroy(self.context)


class CompileError(Exception):
    def __init__(self, messages):
        super().__init__("\n".join(messages) or "failed")


def default_library():
    # An install's lib/ or the build tree's, relative to this file; or
    # $NVFP4_C_LIBRARY.
    here = os.path.dirname(os.path.abspath(__file__))
    for candidate in (os.environ.get("NVFP4_C_LIBRARY", ""),
                      os.path.join(here, "..", "..", "build", "lib", "libNVFP4-C.so")):
        if candidate and os.path.exists(candidate):
            return candidate
    return "libNVFP4-C.so"  # the dynamic loader's search path


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("input")
    parser.add_argument("--lib", default=None, help="path to libNVFP4-C.so")
    parser.add_argument("--pipeline", help="run this pipeline and print the module")
    parser.add_argument("--chip", default="sm_103a")
    parser.add_argument("--emit", default="ptx", choices=sorted(EMIT_KINDS))
    parser.add_argument("-o", dest="output", default="-")
    parser.add_argument("--manifest", help="write the kernel manifest (JSON)")
    args = parser.parse_args()

    with open(args.input) as f:
        text = f.read()
    compiler = Compiler(args.lib or default_library())
    try:
        module = compiler.parse(text)
        if args.pipeline:
            compiler.run_pipeline(module, args.pipeline)
            sys.stdout.write(compiler.print(module) + "\n")
        else:
            artifact, manifest = compiler.compile(module, args.chip, args.emit)
            if args.output == "-":
                sys.stdout.buffer.write(artifact)
            else:
                with open(args.output, "wb") as f:
                    f.write(artifact)
            if args.manifest:
                with open(args.manifest, "w") as f:
                    json.dump(manifest, f, indent=2)
        compiler.api.mlirModuleDestroy(module)
    except CompileError as error:
        sys.stderr.write("nvfp4_capi.py: %s\n" % error)
        return 1
    finally:
        compiler.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
