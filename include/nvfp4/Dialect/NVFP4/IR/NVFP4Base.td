//===- NVFP4Base.td - nvfp4 dialect definition -------------*- tablegen -*-===//
//
// Part of the nvfp4 project.
//
//===----------------------------------------------------------------------===//

#ifndef NVFP4_DIALECT_NVFP4_IR_NVFP4BASE_TD
#define NVFP4_DIALECT_NVFP4_IR_NVFP4BASE_TD

include "mlir/IR/OpBase.td"

def NVFP4_Dialect : Dialect {
  let name = "nvfp4";
  let cppNamespace = "::mlir::nvfp4";
  let summary = "Block-scaled 4-bit floating point (NVFP4) tensors and their "
                "arithmetic";
  let description = [{
    The `nvfp4` dialect models NVIDIA's NVFP4 format at the tensor level, in a
    target-independent way:

    * an E2M1 value per element (builtin `f4E2M1FN`),
    * one E4M3 scale (builtin `f8E4M3FN`, always non-negative) per block of
      16 consecutive elements along the contraction (last) dimension, or per
      16x16 tile for weights,
    * one FP32 tensor amax from which the second-level tensor scale derives.

    These three parts travel together as one SSA value of type
    `!nvfp4.tensor`. Quantization, dequantization, the 16-point Random
    Hadamard Transform, stochastic rounding (with an explicit seed) and the
    block-scaled matrix product are ops on such values. The exact numerics are
    those of TransformerEngine's NVFP4 recipe; see `docs/Numerics.md`.

    Device-specific instructions (tcgen05, mma.sync block_scale, cvt e2m1)
    never appear in this dialect: the conversions to the `gpu`/`nvvm`
    dialects introduce them per target chip.

    The dialect also verifies the discardable model annotations that a
    frontend puts on `linalg` contractions (`nvfp4.layer`, `nvfp4.kind`,
    `nvfp4.role`, `nvfp4.precision`) and on function arguments
    (`nvfp4.weight`).
  }];

  let useDefaultTypePrinterParser = 1;
  let useDefaultAttributePrinterParser = 1;
  let hasOperationAttrVerify = 1;
  let hasRegionArgAttrVerify = 1;
  // Folds of constant inputs (amax, hadamard) produce arith.constant.
  let hasConstantMaterializer = 1;
  let dependentDialects = ["::mlir::arith::ArithDialect"];

  let extraClassDeclaration = [{
    /// Registers the dialect's types; defined next to their storage classes.
    void registerTypes();
  }];
}

#endif // NVFP4_DIALECT_NVFP4_IR_NVFP4BASE_TD
