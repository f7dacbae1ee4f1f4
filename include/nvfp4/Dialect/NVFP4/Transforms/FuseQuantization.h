//===- FuseQuantization.h - share and remove quantizations ------*- C++ -*-===//
//
// Part of the nvfp4 project.
//
//===----------------------------------------------------------------------===//
//
// The fusions of nvfp4-fuse-quantization, one entry point each so another
// compiler can pick the ones it wants.
//
//===----------------------------------------------------------------------===//

#ifndef NVFP4_DIALECT_NVFP4_TRANSFORMS_FUSEQUANTIZATION_H
#define NVFP4_DIALECT_NVFP4_TRANSFORMS_FUSEQUANTIZATION_H

#include "mlir/IR/PatternMatch.h"

#include <cstdint>

namespace mlir {
namespace nvfp4 {

/// What the fusions did; patterns add to it when given one.
struct FusionCounters {
  /// Quantizations that were given a shared nvfp4.amax.
  uint64_t sharedAmax = 0;
  /// 16x16 quantizations replaced by the transpose of another.
  uint64_t sharedWeightQuantizations = 0;
  /// nvfp4.hadamard ops folded into the quantizations (and amaxes) that
  /// consume them.
  uint64_t foldedHadamards = 0;
  /// Quantizations whose amax now comes from the producing GEMM's epilogue.
  uint64_t fusedOutputAmaxes = 0;
  /// Quantizations moved whole into their GEMM's epilogue
  /// (nvfp4.scaled_matmul_quantize).
  uint64_t fusedEpilogueQuantizations = 0;
  /// Pairs of a rowwise and a columnwise (transposed) quantization of one
  /// tensor turned into one nvfp4.dual_quantize.
  uint64_t fusedDualQuantizations = 0;
  /// Dead nvfp4 ops erased.
  uint64_t deadOpsRemoved = 0;
  /// Quantizations replaced by an earlier equal one.
  uint64_t sharedQuantizations = 0;
};

/// Quantizations (without an amax operand) of one tensor -- the same value
/// or views of it that keep its elements (transposes, reshapes, copies,
/// broadcasts, exact extensions) -- get one `nvfp4.amax`, created right
/// after the tensor is defined. Results do not change.
void populateShareAmaxPatterns(RewritePatternSet &patterns,
                               FusionCounters *counters = nullptr);

/// A 16x16, round-to-nearest, linear-layout quantization of `transpose(W)`
/// (last two dimensions swapped) that follows one of `W` (or the reverse)
/// becomes `pack(transpose(codes), transpose(scales), amax)` of the earlier
/// one's `unpack`: bit for bit the same value, one quantization fewer.
void populateShareWeightQuantizationPatterns(
    RewritePatternSet &patterns, FusionCounters *counters = nullptr);

/// An nvfp4.hadamard whose users are all 1x16 quantizations and amaxes of
/// it is folded into them as their `hadamard` attribute (quantize(x) of the
/// RHT of x): the transformed tensor is never materialized. An RHT with any
/// other user stays, so that nothing computes it twice.
void populateShareQuantizationPatterns(RewritePatternSet &patterns,
                                       FusionCounters *counters = nullptr);

void populateFoldHadamardPatterns(RewritePatternSet &patterns,
                                  FusionCounters *counters = nullptr);

/// A quantization of an nvfp4.scaled_matmul's output (or of an exact view
/// of it) that feeds another nvfp4.scaled_matmul takes its amax from the
/// producing GEMM's second result, computed in its epilogue; the
/// quantization's implicit amax, or the nvfp4.amax of the output it used,
/// is replaced. The same bits: max is exact and order-free.
void populateFuseOutputAmaxPatterns(RewritePatternSet &patterns,
                                    FusionCounters *counters = nullptr);

/// A 1x16, round-to-nearest, linear-scale quantization of the only use of
/// an nvfp4.scaled_matmul's output, whose amax is known before the GEMM (a
/// static amax) and which feeds another NVFP4 GEMM, becomes one
/// nvfp4.scaled_matmul_quantize: the GEMM's epilogue writes codes and
/// scales, and the high-precision product never reaches memory.
void populateFuseEpilogueQuantizationPatterns(
    RewritePatternSet &patterns, FusionCounters *counters = nullptr);

/// A 1x16 quantization of X without RHT and a 1x16 quantization of
/// `linalg.transpose(X)` (the last two dimensions; with or without RHT) in
/// one block become one nvfp4.dual_quantize of X where the earlier of the
/// two was (pure producers of the later one's amax and seed move up with
/// it): the rowwise and the columnwise operand of a training step from one
/// read of X. Amaxes, roundings and seeds are kept: the same bytes.
void populateFuseDualQuantizationPatterns(RewritePatternSet &patterns,
                                          FusionCounters *counters = nullptr);

/// Erases nvfp4 ops (quantize, dual_quantize, amax, hadamard, dequantize,
/// pack, unpack, swizzle_scales, transpose) whose results are unused, and
/// the side-effect-free producers that become dead with them. Returns how many nvfp4 ops were
/// erased. This is a walk rather than a pattern set: a greedy rewrite
/// erases trivially dead ops itself before any pattern could see them.
uint64_t removeDeadQuantizations(Operation *root);

} // namespace nvfp4
} // namespace mlir

#endif // NVFP4_DIALECT_NVFP4_TRANSFORMS_FUSEQUANTIZATION_H
