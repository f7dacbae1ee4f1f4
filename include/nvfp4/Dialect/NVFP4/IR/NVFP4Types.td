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
  let summary = "a block-scaled tensor: narrow values, block scales and an "
                "FP32 tensor amax (NVFP4, MXFP8, MXFP4)";
  let description = [{
    One SSA value that carries everything needed to interpret a quantized
    tensor:

    * `shape`: the logical shape (static, rank >= 2). The last dimension is
      the contraction dimension; blocks run along it. Leading dimensions
      beyond the last two are batch dimensions.
    * `elementType`: the element format, `f4E2M1FN` (NVFP4, MXFP4),
      `f8E4M3FN` or `f8E5M2` (MXFP8).
    * `scaleType`: the block-scale format, `f8E4M3FN` (NVFP4; sign bit always
      0) or `f8E8M0FNU` (the power-of-two scale of the MX formats).
    * `blockShape`: for NVFP4 `1x16` (16 consecutive elements of a row) or
      `16x16` (a tile over the last two dimensions, the weight recipe); for
      the MX formats `1x32`.
    * `layout`: how the block scales are laid out in memory (`linear` is the
      row-major scale matrix; `swizzled_128x4` is the layout tensor cores
      read). Omitted when `linear`.
    * `tensorScale`: what the FP32 tensor-scale part of the value holds:
      `amax` (the tensor amax, TransformerEngine's form; what
      `nvfp4.quantize` produces) or `decode` (the decode scale itself, as a
      checkpoint's `weight_scale_2` gives it, kept bit for bit). An element
      decodes to `e2m1(q) * s_b * fp32(amax / 2688)` or
      `e2m1(q) * s_b * decode`. Omitted when `amax`.

    The FP32 tensor scale is part of the value; its kind (`tensorScale`) is
    in the type, its bits are not. The MX
    formats have no tensor scale: their amax part is 0 and unused
    (docs/Numerics.md section 11).

    | format | element | scale | block |
    |---|---|---|---|
    | NVFP4 | `f4E2M1FN` | `f8E4M3FN` | `1x16`, `16x16` |
    | MXFP8 | `f8E4M3FN`, `f8E5M2` | `f8E8M0FNU` | `1x32` |
    | MXFP4 | `f4E2M1FN` | `f8E8M0FNU` | `1x32` |

    Constraints (verified):

    1. (T1) rank >= 2 and every dimension static and positive;
    2. (T2) the element type is `f4E2M1FN`, `f8E4M3FN` or `f8E5M2`;
    3. (T3) the scale type is `f8E4M3FN` or `f8E8M0FNU`;
    4. (T4) the block shape is one the format admits: `1x16` or `16x16` with
       `f8E4M3FN` scales, `1x32` with `f8E8M0FNU` scales;
    5. (T5) the block divides the last two dimensions;
    6. (T6) at most 2^47 elements, so that no size or index derived from the
       type (scales padded to the 128x64 swizzle tile, byte offsets)
       overflows 64 bits;
    7. (T7) `f8E4M3FN` scales (NVFP4) go with `f4E2M1FN` elements only;
    8. (T8) `tensor_scale = decode` only for NVFP4 (the MX formats have no
       tensor scale).

    Example:

    ```mlir
    !nvfp4.tensor<256x512xf4E2M1FN, scale = f8E4M3FN, block = 1x16>
    !nvfp4.tensor<512x512xf4E2M1FN, scale = f8E4M3FN, block = 16x16,
                  layout = swizzled_128x4>
    !nvfp4.tensor<256x512xf8E4M3FN, scale = f8E8M0FNU, block = 1x32>
    !nvfp4.tensor<256x512xf4E2M1FN, scale = f8E8M0FNU, block = 1x32>
    !nvfp4.tensor<256x512xf4E2M1FN, scale = f8E4M3FN, block = 1x16,
                  tensor_scale = decode>
    ```
  }];

  let parameters = (ins
    ArrayRefParameter<"int64_t", "logical shape">:$shape,
    "::mlir::Type":$elementType,
    "::mlir::Type":$scaleType,
    ArrayRefParameter<"int64_t", "block shape (rows x cols)">:$blockShape,
    "::mlir::nvfp4::ScaleLayout":$layout,
    "::mlir::nvfp4::TensorScaleKind":$tensorScale
  );

  let builders = [
    TypeBuilder<(ins "::llvm::ArrayRef<int64_t>":$shape,
                     "::llvm::ArrayRef<int64_t>":$blockShape,
                     CArg<"::mlir::nvfp4::ScaleLayout",
                          "::mlir::nvfp4::ScaleLayout::Linear">:$layout), [{
      return $_get($_ctxt, shape, ::mlir::Float4E2M1FNType::get($_ctxt),
                   ::mlir::Float8E4M3FNType::get($_ctxt), blockShape, layout,
                   ::mlir::nvfp4::TensorScaleKind::Amax);
    }]>,
    // Every type built before tensor scales had a kind holds an amax.
    TypeBuilder<(ins "::llvm::ArrayRef<int64_t>":$shape,
                     "::mlir::Type":$elementType, "::mlir::Type":$scaleType,
                     "::llvm::ArrayRef<int64_t>":$blockShape,
                     "::mlir::nvfp4::ScaleLayout":$layout), [{
      return $_get($_ctxt, shape, elementType, scaleType, blockShape, layout,
                   ::mlir::nvfp4::TensorScaleKind::Amax);
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

    /// The member of the block-scaled family this type holds.
    ::mlir::nvfp4::BlockScaledFormat getFormat() const;
    /// True for the MX formats (E8M0 scales, no tensor scale).
    bool isMX() const {
      return getFormat() != ::mlir::nvfp4::BlockScaledFormat::NVFP4;
    }

    /// The tensor type of the element codes, one per element.
    ::mlir::RankedTensorType getCodesType() const;
    /// The tensor type of the block scales in this type's layout:
    /// linear: [batch..., rows / blockRows, cols / blockCols];
    /// swizzled_128x4: [batch..., roundUp(rows, 128),
    /// roundUp(cols / blockCols, 4)],
    /// with 16x16-block scales replicated into each of the 16 rows, which is
    /// the form tensor cores consume.
    ::mlir::RankedTensorType getScalesType() const;
    /// The same type with another scale layout.
    BlockScaledTensorType cloneWithLayout(::mlir::nvfp4::ScaleLayout layout) const;
    /// The same type with another tensor-scale kind.
    BlockScaledTensorType
    cloneWithTensorScale(::mlir::nvfp4::TensorScaleKind kind) const;
    /// True when the tensor-scale part is a decode scale (a checkpoint's).
    bool hasDecodeScale() const {
      return getTensorScale() == ::mlir::nvfp4::TensorScaleKind::Decode;
    }
  }];
}

#endif // NVFP4_DIALECT_NVFP4_IR_NVFP4TYPES_TD
