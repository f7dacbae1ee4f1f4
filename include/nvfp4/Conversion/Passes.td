//===- Passes.td - nvfp4 conversion passes -----------------*- tablegen -*-===//
//
// Part of the nvfp4 project.
//
//===----------------------------------------------------------------------===//

#ifndef NVFP4_CONVERSION_PASSES_TD
#define NVFP4_CONVERSION_PASSES_TD

include "mlir/Pass/PassBase.td"

def ConvertNVFP4ToReference : Pass<"convert-nvfp4-to-reference", "ModuleOp"> {
  let summary = "Lower nvfp4 ops to bit-exact linalg/arith/math on tensors";
  let description = [{
    Rewrites every nvfp4 op into target-independent tensor code that
    reproduces docs/Numerics.md bit for bit, so that a program using nvfp4
    ops runs on the CPU (through bufferization and the LLVM dialect) and
    prints exactly the bytes of the C++ numerics library. This is the golden
    model the GPU code generators are checked against.

    A `!nvfp4.tensor` value becomes three values: the E2M1 codes as an `i8`
    tensor (one code per element, low nibble), the E4M3 scale bits as an
    `i8` tensor in the type's scale layout, and the FP32 amax. Function
    signatures, calls and returns are converted accordingly;
    `nvfp4.pack`/`nvfp4.unpack` bitcast to and from the builtin
    `f4E2M1FN`/`f8E4M3FN` tensors.

    Example:

    ```mlir
    %q = nvfp4.quantize %x : tensor<4x32xbf16>
        -> !nvfp4.tensor<4x32xf4E2M1FN, scale = f8E4M3FN, block = 1x16>
    ```

    becomes a `linalg.reduce` for the tensor amax, a block reduction over a
    `[4, 1, 2, 16]` view of `%x` for the block amaxes, the E4M3 rounding of
    each block scale, and an elementwise `linalg.generic` that scales each
    element and rounds it to an E2M1 code (with Philox4x32-10 random bits
    for `rounding<stochastic>`).

    Everything is computed with IEEE FP32 operations in the order the spec
    gives; no fast-math flags are set, so LLVM may not re-associate or fuse.
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::bufferization::BufferizationDialect",
    "::mlir::linalg::LinalgDialect",
    "::mlir::math::MathDialect",
    "::mlir::tensor::TensorDialect",
  ];
}

#endif // NVFP4_CONVERSION_PASSES_TD
