//===- Compiler.h - nvfp4 IR to PTX, cubin and a kernel report --*- C++ -*-===//
//
// Part of the nvfp4 project.
//
//===----------------------------------------------------------------------===//
//
// The whole GPU path as a library, shared by nvfp4-compile and the Python
// module: lower nvfp4 IR for one chip (convert-nvfp4-to-gpu + kernel
// lowering), translate the kernel module to LLVM IR, run LLVM's NVPTX
// backend for the chip, and optionally assemble with ptxas. Failures are
// reported through the MLIR context's diagnostics.
//
//===----------------------------------------------------------------------===//

#ifndef NVFP4_COMPILER_COMPILER_H
#define NVFP4_COMPILER_COMPILER_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Support/LLVM.h"

#include <array>
#include <optional>
#include <string>
#include <vector>

namespace mlir {
namespace nvfp4 {

/// What compileModule produces.
enum class EmitKind { MLIR, LLVM, PTX, Cubin };

/// Parses "mlir", "llvm", "ptx" or "cubin".
std::optional<EmitKind> parseEmitKind(StringRef text);

struct CompileOptions {
  std::string chip = "sm_103a";
  EmitKind emit = EmitKind::PTX;
  /// ptxas to use; empty means $PATH, then /usr/local/cuda/bin.
  std::string ptxasPath;
  /// Assemble the PTX with ptxas (when found) even for --emit=ptx, to check
  /// it and collect register and spill counts.
  bool verifyWithPtxas = true;
};

/// One kernel parameter (bare pointer or scalar).
struct KernelParam {
  std::string type;           ///< "ptr" or the scalar type, e.g. "i64"
  std::string elementType;    ///< pointee element type for pointers
  int64_t elements = 0;       ///< pointee element count for pointers
};

/// One kernel and how the host launches it.
struct KernelInfo {
  std::string name;
  std::string sourceOp;                ///< the nvfp4 op it implements
  std::array<int64_t, 3> grid{1, 1, 1};
  std::array<int64_t, 3> block{1, 1, 1};
  int64_t sharedMemoryBytes = 0;
  std::vector<KernelParam> params;
  std::optional<int64_t> registers;    ///< from ptxas -v
  std::optional<int64_t> spillBytes;   ///< stores + loads, from ptxas -v
};

struct CompileResult {
  std::string chip;
  unsigned ptxVersion = 0;
  std::string output;                 ///< the text or binary asked for
  std::string ptx;                    ///< always set when PTX was produced
  std::vector<KernelInfo> kernels;    ///< in launch order
  bool assembledWithPtxas = false;
  std::string ptxasPath;              ///< the ptxas used, if any
};

/// Lowers `module` (nvfp4 IR; it is modified) and produces what `options`
/// ask for. Emits diagnostics and fails on any error.
FailureOr<CompileResult> compileModule(ModuleOp module,
                                       const CompileOptions &options);

/// The JSON report of a compilation (kernels, launch geometry, ptxas
/// statistics).
std::string renderKernelReport(const CompileResult &result);

/// Finds ptxas as CompileOptions::ptxasPath describes; empty if none.
std::string findPtxas(StringRef explicitPath);

} // namespace nvfp4
} // namespace mlir

#endif // NVFP4_COMPILER_COMPILER_H
