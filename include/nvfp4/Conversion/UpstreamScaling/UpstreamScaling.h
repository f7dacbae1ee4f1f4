//===- UpstreamScaling.h - interop with arith.scaling_truncf/extf -*- C++ -*-===//
//
// Part of the nvfp4 project.
//
//===----------------------------------------------------------------------===//
//
// Upstream MLIR's block-scaling casts, `arith.scaling_truncf` and
// `arith.scaling_extf`, take one E8M0 scale per element; the block structure
// and the choice of the scale are left to the IR around them. The MX members
// of the nvfp4 family (docs/Numerics.md section 11) can be written in those
// ops, and IR in those ops can become nvfp4 ops, where the two agree bit for
// bit. docs/Numerics.md section 11.6 says where that is, the form both
// directions use, and where the upstream ops differ from NVFP4 and MX.
//
//===----------------------------------------------------------------------===//

#ifndef NVFP4_CONVERSION_UPSTREAMSCALING_UPSTREAMSCALING_H
#define NVFP4_CONVERSION_UPSTREAMSCALING_UPSTREAMSCALING_H

#include "mlir/IR/PatternMatch.h"

#include <string>

namespace mlir {
namespace nvfp4 {

/// Rewrites `nvfp4.quantize` to an MX type (linear scales, f32 or bf16
/// input) into the block amax, the E8M0 scale rule, the broadcast,
/// `arith.scaling_truncf` and the non-finite fix-up of section 11.6, and
/// `nvfp4.dequantize` of an MX value (linear scales, f32 or bf16 result)
/// into the broadcast and `arith.scaling_extf`. Other nvfp4 ops and types
/// are left alone.
void populateLowerToUpstreamScalingPatterns(RewritePatternSet &patterns);

/// Raises the forms that populateLowerToUpstreamScalingPatterns writes (and
/// `arith.scaling_truncf` with `fastmath<nnan,ninf>` and no fix-up) back to
/// `nvfp4.quantize` / `nvfp4.dequantize`. Anything else is left alone.
void populateRaiseUpstreamScalingPatterns(RewritePatternSet &patterns);

/// Why `op`, an `arith.scaling_truncf` or `arith.scaling_extf`, cannot be
/// raised to an nvfp4 op (empty when it can): the first difference from
/// nvfp4's semantics that the analysis found.
std::string whyNotRaisable(Operation *op);

/// Lowers scalar `arith.scaling_truncf` / `arith.scaling_extf` (through
/// upstream's expansion into extf, divf/mulf and truncf) and scalar
/// `arith.truncf` / `arith.extf` between f32, bf16 or f16 and f8E4M3FN,
/// f8E5M2, f4E2M1FN (and f8E8M0FNU for extf) to integer code that is bit
/// for bit the numerics library's conversion (round to nearest even,
/// satfinite, NaN as section 11.1 says). Truncations with another rounding
/// mode are left alone.
void populateSmallFloatCastPatterns(RewritePatternSet &patterns);

} // namespace nvfp4
} // namespace mlir

#endif // NVFP4_CONVERSION_UPSTREAMSCALING_UPSTREAMSCALING_H
