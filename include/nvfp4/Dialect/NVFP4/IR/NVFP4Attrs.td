//===- NVFP4Attrs.td - nvfp4 attribute definitions ---------*- tablegen -*-===//
//
// Part of the nvfp4 project.
//
//===----------------------------------------------------------------------===//

#ifndef NVFP4_DIALECT_NVFP4_IR_NVFP4ATTRS_TD
#define NVFP4_DIALECT_NVFP4_IR_NVFP4ATTRS_TD

include "nvfp4/Dialect/NVFP4/IR/NVFP4Base.td"
include "mlir/IR/EnumAttr.td"

//===----------------------------------------------------------------------===//
// Rounding mode
//===----------------------------------------------------------------------===//

def NVFP4_RoundingMode : I32EnumAttr<"RoundingMode",
    "rounding of scaled values to E2M1", [
      I32EnumAttrCase<"NearestEven", 0, "nearest_even">,
      I32EnumAttrCase<"Stochastic", 1, "stochastic">
    ]> {
  let cppNamespace = "::mlir::nvfp4";
  let genSpecializedAttr = 0;
}

def NVFP4_RoundingModeAttr : EnumAttr<NVFP4_Dialect, NVFP4_RoundingMode,
                                      "rounding"> {
  let summary = "E2M1 rounding: round to nearest even, or stochastic";
  let assemblyFormat = "`<` $value `>`";
}

//===----------------------------------------------------------------------===//
// Scale layout
//===----------------------------------------------------------------------===//

// Layouts are an open set: per-target layouts (the sm_103a scale atom, the
// register layout of sm_120a mma.sync) join this enum as the code generators
// need them. `linear` is the only target-independent one.
def NVFP4_ScaleLayout : I32EnumAttr<"ScaleLayout",
    "memory layout of the E4M3 block scales", [
      I32EnumAttrCase<"Linear", 0, "linear">,
      I32EnumAttrCase<"Swizzled128x4", 1, "swizzled_128x4">
    ]> {
  let cppNamespace = "::mlir::nvfp4";
  let genSpecializedAttr = 0;
}

def NVFP4_ScaleLayoutAttr : EnumAttr<NVFP4_Dialect, NVFP4_ScaleLayout,
                                     "layout"> {
  let summary = "block-scale layout: linear or the 128x4 tensor-core swizzle";
  let assemblyFormat = "`<` $value `>`";
}

//===----------------------------------------------------------------------===//
// Tensor scale
//===----------------------------------------------------------------------===//

// What the FP32 tensor-scale part of an NVFP4 value holds. `amax` is what
// TransformerEngine keeps and what nvfp4.quantize produces; `decode` is the
// decode scale a checkpoint stores (ModelOpt's `weight_scale_2` /
// `input_scale`), kept bit for bit because no amax reproduces every one of
// them (docs/Rationale.md, "Exact tensor scales").
def NVFP4_TensorScaleKind : I32EnumAttr<"TensorScaleKind",
    "meaning of the FP32 tensor-scale part of an NVFP4 value", [
      I32EnumAttrCase<"Amax", 0, "amax">,
      I32EnumAttrCase<"Decode", 1, "decode">
    ]> {
  let cppNamespace = "::mlir::nvfp4";
  let genSpecializedAttr = 0;
}

//===----------------------------------------------------------------------===//
// Block-scaled format
//===----------------------------------------------------------------------===//

// The member of the block-scaled family an `!nvfp4.tensor` holds, derived from
// its element type, scale type and block (never stored). The names are the
// Python module's `format=` values (docs/Numerics.md section 11).
def NVFP4_BlockScaledFormat : I32EnumAttr<"BlockScaledFormat",
    "member of the block-scaled family", [
      I32EnumAttrCase<"NVFP4", 0, "nvfp4">,
      I32EnumAttrCase<"MXFP8E4M3", 1, "mxfp8_e4m3">,
      I32EnumAttrCase<"MXFP8E5M2", 2, "mxfp8_e5m2">,
      I32EnumAttrCase<"MXFP4", 3, "mxfp4">
    ]> {
  let cppNamespace = "::mlir::nvfp4";
  let genSpecializedAttr = 0;
}

//===----------------------------------------------------------------------===//
// Precision
//===----------------------------------------------------------------------===//

def NVFP4_Precision : I32EnumAttr<"Precision",
    "numeric format chosen for a GEMM", [
      I32EnumAttrCase<"NVFP4", 0, "nvfp4">,
      I32EnumAttrCase<"FP8", 1, "fp8">,
      I32EnumAttrCase<"BF16", 2, "bf16">,
      I32EnumAttrCase<"MXFP8", 3, "mxfp8">,
      I32EnumAttrCase<"MXFP4", 4, "mxfp4">
    ]> {
  let cppNamespace = "::mlir::nvfp4";
  let genSpecializedAttr = 0;
}

def NVFP4_PrecisionAttr : EnumAttr<NVFP4_Dialect, NVFP4_Precision,
                                   "precision"> {
  let summary = "precision assigned to a GEMM: nvfp4, mxfp8, mxfp4, fp8 or "
                "bf16";
  let assemblyFormat = "`<` $value `>`";
}

//===----------------------------------------------------------------------===//
// GEMM role in a training step
//===----------------------------------------------------------------------===//

def NVFP4_GemmRole : I32EnumAttr<"GemmRole",
    "role of a GEMM in a training step", [
      I32EnumAttrCase<"Fprop", 0, "fprop">,
      I32EnumAttrCase<"Dgrad", 1, "dgrad">,
      I32EnumAttrCase<"Wgrad", 2, "wgrad">
    ]> {
  let cppNamespace = "::mlir::nvfp4";
  let genSpecializedAttr = 0;
}

def NVFP4_GemmRoleAttr : EnumAttr<NVFP4_Dialect, NVFP4_GemmRole, "role"> {
  let summary = "GEMM role: fprop (Y = X Wt), dgrad (dX = dY W) or wgrad "
                "(dW = dYt X)";
  let assemblyFormat = "`<` $value `>`";
}

#endif // NVFP4_DIALECT_NVFP4_IR_NVFP4ATTRS_TD
