//===- NVFP4Types.td - nvfp4 type definitions --------------*- tablegen -*-===//
//
// Part of the nvfp4 project.
//
//===----------------------------------------------------------------------===//

#ifndef NVFP4_DIALECT_NVFP4_IR_NVFP4TYPES_TD
#define NVFP4_DIALECT_NVFP4_IR_NVFP4TYPES_TD

include "nvfp4/Dialect/NVFP4/IR/NVFP4Attrs.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/BuiltinTypeInterfaces.td"

def NVFP4_BlockScaledTensor : TypeDef<NVFP4_Dialect, "BlockScaledTensor"> {
  let mnemonic = "tensor";
  let summary = "a block-scaled tensor: E2M1 values, E4M3 block scales and an "
                "FP32 tensor amax";
  let description = [{
    One SSA value that carries everything needed to interpret a quantized
    tensor:

    * `shape`: the logical shape (static, rank >= 2). The last dimension is
      the contraction dimension; blocks run along it. Leading dimensions
      beyond the last two are batch dimensions.
    * `elementType`: the element format, `f4E2M1FN`.
    * `scaleType`: the block-scale format, `f8E4M3FN` (sign bit always 0).
    * `blockShape`: `1x16` (16 consecutive elements of a row) or `16x16`
      (a tile over the last two dimensions, the weight recipe).
    * `layout`: how the block scales are laid out in memory (`linear` is the
      row-major scale matrix; `swizzled_128x4` is the layout tensor cores
      read). Omitted when `linear`.

    The FP32 tensor amax is part of the value; it is not in the type.

    Constraints (verified):

    1. (T1) rank >= 2 and every dimension static and positive;
    2. (T2) the element type is `f4E2M1FN`;
    3. (T3) the scale type is `f8E4M3FN`;
    4. (T4) the block shape is `1x16` or `16x16`;
    5. (T5) the block divides the last two dimensions;
    6. (T6) at most 2^47 elements, so that no size or index derived from the
       type (scales padded to the 128x64 swizzle tile, byte offsets)
       overflows 64 bits.

    Example:

    ```mlir
    !nvfp4.tensor<256x512xf4E2M1FN, scale = f8E4M3FN, block = 1x16>
    !nvfp4.tensor<512x512xf4E2M1FN, scale = f8E4M3FN, block = 16x16,
                  layout = swizzled_128x4>
    ```
  }];

  let parameters = (ins
    ArrayRefParameter<"int64_t", "logical shape">:$shape,
    "::mlir::Type":$elementType,
    "::mlir::Type":$scaleType,
    ArrayRefParameter<"int64_t", "block shape (rows x cols)">:$blockShape,
    "::mlir::nvfp4::ScaleLayout":$layout
  );

  let builders = [
    TypeBuilder<(ins "::llvm::ArrayRef<int64_t>":$shape,
                     "::llvm::ArrayRef<int64_t>":$blockShape,
                     CArg<"::mlir::nvfp4::ScaleLayout",
                          "::mlir::nvfp4::ScaleLayout::Linear">:$layout), [{
      return $_get($_ctxt, shape, ::mlir::Float4E2M1FNType::get($_ctxt),
                   ::mlir::Float8E4M3FNType::get($_ctxt), blockShape, layout);
    }]>
  ];
  let skipDefaultBuilders = 0;
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;

  let extraClassDeclaration = [{
    int64_t getRank() const { return getShape().size(); }
    /// Number of rows in the trailing 2-D matrix (second-to-last dimension).
    int64_t getRows() const { return getShape()[getRank() - 2]; }
    /// Length of the contraction (last) dimension.
    int64_t getCols() const { return getShape().back(); }
    /// Leading (batch) dimensions, possibly empty.
    ::llvm::ArrayRef<int64_t> getBatchShape() const {
      return getShape().drop_back(2);
    }
    int64_t getBlockRows() const { return getBlockShape()[0]; }
    int64_t getBlockCols() const { return getBlockShape()[1]; }
    bool isTwoDimensionalBlock() const { return getBlockRows() != 1; }

    /// The tensor type of the E2M1 codes, one per element.
    ::mlir::RankedTensorType getCodesType() const;
    /// The tensor type of the block scales in this type's layout:
    /// linear: [batch..., rows / blockRows, cols / 16];
    /// swizzled_128x4: [batch..., roundUp(rows, 128), roundUp(cols / 16, 4)],
    /// with 16x16-block scales replicated into each of the 16 rows, which is
    /// the form tensor cores consume.
    ::mlir::RankedTensorType getScalesType() const;
    /// The same type with another scale layout.
    BlockScaledTensorType cloneWithLayout(::mlir::nvfp4::ScaleLayout layout) const;
  }];
}

#endif // NVFP4_DIALECT_NVFP4_IR_NVFP4TYPES_TD
