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

#include "nvfp4/Report/PrecisionReport.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Support/Timing.h"
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
  /// Forces the tensor-core GEMM schedule (convert-nvfp4-to-gpu's
  /// gemm-schedule); empty: the lowering's choice.
  std::string gemmSchedule;
  /// Forces the 16x16 and dual quantize kernels' input path
  /// (convert-nvfp4-to-gpu's quantize-schedule); empty: the lowering's
  /// choice.
  std::string quantizeSchedule;
  /// Forces the MX GEMM's kernel: "simt" or "tensor-core"
  /// (convert-nvfp4-to-gpu's mx-gemm); empty: the lowering's rule.
  std::string mxGemm;
  EmitKind emit = EmitKind::PTX;
  /// ptxas to use; empty means $PATH, then /usr/local/cuda/bin.
  std::string ptxasPath;
  /// Assemble the PTX with ptxas (when found) even for --emit=ptx, to check
  /// it and collect register and spill counts.
  bool verifyWithPtxas = true;
  /// Run the graph-level passes first (nvfp4-assign-precision,
  /// nvfp4-apply-recipe, nvfp4-fuse-quantization with default options), so
  /// annotated model IR (linalg on tensors) compiles; on nvfp4 IR they
  /// change nothing.
  bool applyRecipe = true;
  /// nvfp4-assign-precision's keep-first / keep-last. Unset: the pass's
  /// defaults (the paper's 2 and 8 of its 62 blocks, scaled down for
  /// shallower models; docs/Rationale.md).
  std::optional<unsigned> keepFirst;
  std::optional<unsigned> keepLast;
  /// nvfp4-assign-precision's formats= entries (KIND=FORMAT or FORMAT,
  /// FORMAT one of nvfp4, mxfp8, mxfp4, bf16); empty: NVFP4 everywhere.
  std::vector<std::string> formats;
  /// Build the per-layer precision report (after the recipe, before the
  /// GPU lowering).
  bool buildPrecisionReport = false;
  /// A kernel manifest is wanted (--report): fail, with a diagnostic, when
  /// the host code cannot be described as one straight-line sequence of
  /// launches (launches in loops, branches, calls or several functions).
  bool requireManifest = false;
  /// When set, the phases (each pass, LLVM translation, LLVM's optimizer,
  /// the NVPTX backend, ptxas) are timed under this scope (--mlir-timing).
  mlir::TimingScope *timing = nullptr;
};

/// One kernel parameter: a bare pointer, a scalar, or a TMA tensor map.
///
/// A "tensormap" parameter is the device address of 128 bytes holding a
/// CUtensorMap that the runtime encodes (cuTensorMapEncodeTiled) over
/// buffer `buffer` viewed as a dense row-major array of shape `dims` with
/// elements `elementType`; the kernel copies boxes of shape `box` with the
/// given swizzle ("none", "32B", "64B", "128B"), L2 promotion ("none",
/// "64B", "128B", "256B") and out-of-bounds fill ("zero", "nan").
/// Dimensions are listed outermost first, as in MLIR shapes.
struct KernelParam {
  std::string type;           ///< "ptr", "tensormap" or a scalar type ("i64")
  std::string elementType;    ///< pointee element type for pointers and maps
  int64_t elements = 0;       ///< pointee element count for pointers
  int64_t buffer = -1;        ///< pointers, maps: index into buffers
  int64_t argument = -1;      ///< scalars: the host function argument, if any
  /// Scalars: the stream seed nvfp4-apply-recipe derives from `argument`
  /// (deriveStreamSeed(argument, *seedStream)).
  std::optional<uint64_t> seedStream;
  std::string constant;       ///< scalars: the value, if a constant
  std::vector<int64_t> dims, box;               ///< tensor maps
  std::string swizzle, l2Promotion, oobFill;    ///< tensor maps
};

/// A device buffer the launches use: where its contents come from and
/// whether the host function returns it. This is the manifest a runtime
/// needs to run the kernels without MLIR.
struct BufferInfo {
  std::string elementType;
  int64_t elements = 0;
  int64_t argument = -1;      ///< copied from host function argument N
  int64_t result = -1;        ///< returned as host function result N
  bool zeroInitialized = false;
  int64_t fillFromArgument = -1; ///< every element set to scalar argument N
  /// Every 32-bit element set to these bits: a memset with a constant that
  /// is not zero (e.g. the static amax of a quantization for inference).
  std::optional<uint32_t> fillBits;
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

/// An operation the host function keeps on the host: computation that no
/// generated kernel covers (a BF16 GEMM, a norm, a softmax, a residual add,
/// a call to such a function). A runtime that only launches the kernels
/// cannot run a bundle that has any.
struct HostComputation {
  std::string op;        ///< the operation's name ("linalg.generic")
  std::string location;  ///< "file:line:col"
  std::string callee;    ///< for calls: the function called
};

struct CompileResult {
  std::string chip;
  unsigned ptxVersion = 0;
  std::string output;                 ///< the text or binary asked for
  std::string ptx;                    ///< always set when PTX was produced
  std::string function;               ///< the host function launched from
  std::vector<KernelInfo> kernels;    ///< in launch order
  std::vector<BufferInfo> buffers;
  /// What the host function computes besides launching kernels, in order.
  std::vector<HostComputation> hostComputation;
  bool assembledWithPtxas = false;
  std::optional<PrecisionReport> precision; ///< when asked for
  std::string ptxasPath;              ///< the ptxas used, if any
};

/// Lowers `module` (nvfp4 IR; it is modified) and produces what `options`
/// ask for. Emits diagnostics and fails on any error.
FailureOr<CompileResult> compileModule(ModuleOp module,
                                       const CompileOptions &options);

/// The JSON report of a compilation (kernels, launch geometry, ptxas
/// statistics).
std::string renderKernelReport(const CompileResult &result);
/// Writes renderKernelReport(result) to `os`, one kernel and one buffer at a
/// time (no json::Value tree of the whole report).
void writeKernelReport(llvm::raw_ostream &os, const CompileResult &result);

/// One line naming `result.hostComputation` (empty when there is none), for
/// the warning of nvfp4-compile.
std::string summarizeHostComputation(const CompileResult &result);

/// Finds ptxas as CompileOptions::ptxasPath describes; empty if none.
std::string findPtxas(StringRef explicitPath);

} // namespace nvfp4
} // namespace mlir

#endif // NVFP4_COMPILER_COMPILER_H
