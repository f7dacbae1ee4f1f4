//===- NVFP4ToGPU.h - nvfp4 to GPU kernels ----------------------*- C++ -*-===//
//
// Part of the nvfp4 project.
//
//===----------------------------------------------------------------------===//

#ifndef NVFP4_CONVERSION_NVFP4TOGPU_NVFP4TOGPU_H
#define NVFP4_CONVERSION_NVFP4TOGPU_NVFP4TOGPU_H

#include "nvfp4/Target/Chip.h"

#include "mlir/Transforms/DialectConversion.h"

namespace mlir {
namespace nvfp4 {

/// Host-side form of values for the GPU path: `!nvfp4.tensor` becomes
/// (memref<rows x cols/2 x i8> packed codes, memref<scale shape x i8>,
/// memref<1xi32> amax bits); everything else is unchanged.
class GPUHostTypeConverter : public TypeConverter {
public:
  GPUHostTypeConverter();
};

/// How the 16x16 quantize kernels (with or without the transposed copy) and
/// the dual quantize kernels bring their input in: convert-nvfp4-to-gpu's
/// quantize-schedule, so that both ways can be measured against each other in
/// one run.
struct QuantizeSchedule {
  /// ringStages of the lowering's choice for each kernel (the measured rule
  /// at chosenRingStages in QuantizeKernels.cpp).
  static constexpr int64_t kDefault = -1;
  /// kDefault; 0: each thread loads its rows of the next region into
  /// registers while it computes the current one; 2-4: a ring of that many
  /// regions in shared memory, filled by 16-byte cp.async copies
  /// (consecutive threads on consecutive addresses), ringStages - 1 regions
  /// in flight.
  int64_t ringStages = kDefault;
  /// Blocks of the persistent grid; 0: the chip's. A small grid makes a
  /// small tensor walk the ring several times (the GPU suite's cases).
  int64_t gridBlocks = 0;
  /// How a quantize kernel multiplies in Philox's rounds: kDefault (the
  /// measured rule at chosenPhiloxWide in QuantizeKernels.cpp), 1: one
  /// mul.wide.u32 per product, 0: mul.hi.u32 and mul.lo.u32.
  int64_t philoxWide = kDefault;
  /// Codes with the sign put into each value's magic number (session 8)
  /// instead of magnitudes or'ed with sign words from the BF16 / F16 pairs.
  bool legacySigns = false;
  /// Blocks of 256 threads a multiprocessor runs at once (nvvm.minctasm,
  /// which sets the register cap, and the persistent grid); 0: each
  /// kernel's measured count.
  int64_t blocksPerMultiprocessor = 0;
  /// Runs of 16 elements in a work unit of the 1x16 kernels (1 or 2); 0:
  /// the measured count. One run a unit halves the loop body (its code and
  /// its registers) for the same bytes in flight per iteration.
  int64_t runsPerUnit = 0;
  /// The dual kernels compute the two tile rows of their pair in a loop
  /// that stays a loop (half the code) instead of unrolled.
  bool rolledDual = false;
  /// The emulation's FMA-pipe forms (integer BF16 extension, mul.hi
  /// binades, codes packed by multiply-adds; QuantizeKernels.cpp
  /// ArithmeticForm::fmaForms): kDefault (all kernels but the 16x16 ones),
  /// 1 forced on, 0 forced off (the session-9 forms).
  int64_t fmaForms = kDefault;
};

/// Parses a quantize-schedule: "" (the default) or parts joined by '_':
/// first optionally the input path, "registers" or "ring<S>" (S = 2..4),
/// then any of "grid<N>" (N >= 1), "mulwide", "mulsplit", "signlegacy",
/// "blocks<N>" (N = 1..8), "runs<N>" (N = 1, 2), "rolled", "fmaforms" and
/// "aluforms". On failure `message` says why.
FailureOr<QuantizeSchedule> parseQuantizeSchedule(StringRef text,
                                                  std::string &message);

/// Patterns that replace nvfp4.amax, nvfp4.quantize, nvfp4.hadamard and
/// nvfp4.dequantize by kernel launches for `chip`. Kernels are created in
/// the `gpu.module @nvfp4_kernels` of the enclosing module. `schedule`
/// applies to the 16x16 and dual quantize kernels.
void populateQuantizeToGPUPatterns(const TypeConverter &converter,
                                   RewritePatternSet &patterns,
                                   const ::nvfp4::target::ChipInfo &chip,
                                   const QuantizeSchedule &schedule = {});

/// Which kernel an MX nvfp4.scaled_matmul gets (convert-nvfp4-to-gpu's
/// mx-gemm option): the rule's choice, the portable SIMT kernel, or the
/// chip's tensor-core GEMM (sm_90a: both operands decoded into exact BF16,
/// then the route's wgmma kernel, docs/Numerics.md section 11.7; sm_100a,
/// sm_103a and sm_120a: the block-scaled MMA's .kind::mxf8f6f4 /
/// .kind::mxf4, docs/Blackwell.md section 10).
enum class MXGemmKernel { Auto, Simt, TensorCore };

/// Parses the mx-gemm option: "" (Auto), "simt" or "tensor-core"; anything
/// else fails with `message`.
FailureOr<MXGemmKernel> parseMXGemmKernel(StringRef text, std::string &message);

/// Batch x M x N x K multiply-adds from which the rule (MXGemmKernel::Auto)
/// takes sm_90a's decoding tensor-core MX GEMM (Blackwell's block-scaled
/// MMAs decode nothing and take every shape they can): below, the SIMT
/// kernel's single launch costs less than the decode kernels, the scratch
/// and a persistent GEMM.
constexpr int64_t kMXTensorCoreMinMultiplyAdds = int64_t(1) << 22;

/// Patterns that replace nvfp4.quantize, nvfp4.dequantize and
/// nvfp4.scaled_matmul of the MX formats (MXFP8 E4M3/E5M2, MXFP4) by kernel
/// launches; quantize and dequantize are the same kernels on every chip,
/// the GEMM is chosen by `gemmKernel` (docs/Numerics.md section 11). They
/// take precedence over the NVFP4 patterns for MX types.
void populateMXToGPUPatterns(const TypeConverter &converter,
                             RewritePatternSet &patterns,
                             const ::nvfp4::target::ChipInfo &chip,
                             MXGemmKernel gemmKernel = MXGemmKernel::Auto);

/// Patterns that replace nvfp4.scaled_matmul and
/// nvfp4.scaled_matmul_quantize by a launch of `chip`'s tensor-core GEMM
/// kernel when it takes the shape (K a multiple of 256), otherwise of the
/// portable SIMT kernel (bit-exact with the reference; no tensor cores).
/// `gemmSchedule`, when not empty, forces the tensor-core schedule
/// (GemmSchedule::name() syntax, e.g. "128x256x256_s2_d2w1_p8"); a schedule
/// that does not parse fails with `message`.
LogicalResult populateMatmulToGPUPatterns(const TypeConverter &converter,
                                          RewritePatternSet &patterns,
                                          const ::nvfp4::target::ChipInfo &chip,
                                          StringRef gemmSchedule,
                                          std::string &message);

/// Pattern that replaces nvfp4.transpose by a launch of a kernel that
/// transposes the packed E2M1 codes (nibble by nibble) and the linear
/// 16x16-tile scale matrix; the amax buffer is shared.
void populateTransposeToGPUPatterns(const TypeConverter &converter,
                                    RewritePatternSet &patterns);

/// Pattern that replaces nvfp4.pack (codes one per element, scales in the
/// result's layout, an f32 amax: a tensor quantized elsewhere) by a kernel
/// that packs the codes two per byte and copies the scale bytes.
void populatePackingToGPUPatterns(const TypeConverter &converter,
                                  RewritePatternSet &patterns);

/// Inserts a gpu.dealloc after the last use of every synchronous gpu.alloc
/// in `region` whose buffer neither reaches a return nor is used by an op
/// the analysis does not know (nvfp4-free-device-buffers). Returns how many
/// were inserted.
unsigned freeDeviceBuffers(Region &region);

/// The row-group pattern (RowKernels.cpp): reductions over the last loop
/// and the elementwise op that reads their results along the same rows
/// (softmax, RMSNorm) become one kernel in which W threads own a row. Part
/// of populateLinalgToGPUPatterns, with a higher benefit than its
/// one-op-one-kernel patterns.
void populateRowKernelPatterns(RewritePatternSet &patterns);

/// The row-group pattern for groups whose elementwise op's result feeds an
/// nvfp4.amax or a quantization that computes its own: the row kernel also
/// computes that amax (max |y| of what it stores: a block max, one atomic
/// per block). Part of populateProducerAmaxToGPUPatterns.
void populateRowKernelAmaxPatterns(RewritePatternSet &patterns);

/// Patterns that make kernels of the linalg ops around the nvfp4 ops
/// (LinalgKernels.cpp): row groups (populateRowKernelPatterns), ops with
/// parallel loops (one thread per run of up to 16 bytes along the last
/// loop) or one reduction loop (one warp per output element, lanes combined
/// by shuffles), constant fills (gpu.memset), tensor reshapes (buffer views),
/// and -- where hasBF16GemmKernel(chip) -- linalg.matmul / batch_matmul of
/// BF16 operands (the chip's BF16 GEMM). What they do not take stays on
/// the host, which nvfp4-compile reports.
/// Plain rewrite patterns on tensors (run after the conversion of the
/// nvfp4 ops, whose results are then tensors of device buffers).
void populateLinalgToGPUPatterns(RewritePatternSet &patterns,
                                 const ::nvfp4::target::ChipInfo &chip);

/// Patterns for the rest of a Mamba-2 mixer (ScanKernels.cpp):
/// tensor.extract_slice and tensor.pad become linalg.generic ops that
/// populateLinalgToGPUPatterns makes kernels of, and an scf.for that carries
/// a state through a sequence (the selective scan) becomes one kernel that
/// keeps the state in registers. Plain rewrite patterns on tensors, run
/// with populateLinalgToGPUPatterns.
void populateScanToGPUPatterns(RewritePatternSet &patterns);

/// A warning on each scf.for over tensors left at a function's top level
/// (populateScanToGPUPatterns did not take it), with the reason: the host
/// computation nvfp4-compile reports then says why.
void warnAboutHostLoops(ModuleOp module);

/// nvfp4.amax of the result of an elementwise linalg op becomes part of
/// that op's kernel (grid-stride, the amax reduced by warps and one atomic
/// per warp), so the tensor is not read again for it. Plain rewrite
/// patterns, run before the nvfp4 ops are converted.
void populateProducerAmaxToGPUPatterns(RewritePatternSet &patterns,
                                       const ::nvfp4::target::ChipInfo &chip);

/// Whether `chip` has a BF16 GEMM kernel: sm_90a's wgmma route, the
/// tcgen05 .kind::f16 kernel of sm_100a/sm_103a, sm_120a's mma.sync .bf16
/// kernel (BF16Gemm.cpp). A shape one of them cannot take stays on the
/// host (warnAboutHostBF16Gemms says why).
bool hasBF16GemmKernel(const ::nvfp4::target::ChipInfo &chip);

/// A warning on each linalg.matmul / batch_matmul of 16-bit operands left
/// in `module` after populateLinalgToGPUPatterns, with the reason (no
/// kernel for the chip, or what the chip's kernel cannot take): the host
/// computation nvfp4-compile reports then says why.
void warnAboutHostBF16Gemms(ModuleOp module,
                            const ::nvfp4::target::ChipInfo &chip);

} // namespace nvfp4
} // namespace mlir

#endif // NVFP4_CONVERSION_NVFP4TOGPU_NVFP4TOGPU_H
