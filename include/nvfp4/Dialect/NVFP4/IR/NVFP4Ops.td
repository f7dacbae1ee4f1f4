//===- NVFP4Ops.td - nvfp4 operation definitions -----------*- tablegen -*-===//
//
// Part of the nvfp4 project.
//
// Every constraint has a label (Cn) in the description; the verifier checks
// it under a `// <op>_cn` comment and test/Dialect/NVFP4/invalid.mlir holds
// one negative test named `@<op>_cn` for it.
//
//===----------------------------------------------------------------------===//

#ifndef NVFP4_DIALECT_NVFP4_IR_NVFP4OPS_TD
#define NVFP4_DIALECT_NVFP4_IR_NVFP4OPS_TD

include "nvfp4/Dialect/NVFP4/IR/NVFP4Types.td"
include "mlir/Interfaces/InferTypeOpInterface.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

//===----------------------------------------------------------------------===//
// Named type constraints
//===----------------------------------------------------------------------===//

/// The high-precision tensors that NVFP4 quantizes from and dequantizes to.
def NVFP4_HighPrecisionTensor : RankedTensorOf<[BF16, F16, F32]>;

/// The Random Hadamard Transform is defined on BF16 inputs only (NUMERICS.md
/// section 4): its FP32 sums are then exact in all but pathological cases.
def NVFP4_BF16Tensor : RankedTensorOf<[BF16]>;

/// The element codes of a block-scaled tensor, one per element: E2M1 (NVFP4,
/// MXFP4) or E4M3/E5M2 (MXFP8).
def NVFP4_CodesTensor : RankedTensorOf<[F4E2M1FN, F8E4M3FN, F8E5M2]>;

/// The block scales of a block-scaled tensor: E4M3 (NVFP4) or E8M0 (MX).
def NVFP4_ScalesTensor : RankedTensorOf<[F8E4M3FN, F8E8M0FNU]>;

/// The FP32 tensor amax.
def NVFP4_Amax : TypeAlias<F32, "FP32 tensor amax">;

/// The seed of stochastic rounding; random bits are a pure function of the
/// seed and the element index, so results are reproducible.
def NVFP4_Seed : TypeAlias<I64, "64-bit stochastic-rounding seed">;

def NVFP4_SignMaskAttr : ConfinedAttr<I32Attr,
    [IntMinValue<0>, IntMaxValue<65535>]> {
  let summary = "16-bit sign mask of the Random Hadamard Transform";
}

class NVFP4_Op<string mnemonic, list<Trait> traits = []>
    : Op<NVFP4_Dialect, mnemonic, traits>;

//===----------------------------------------------------------------------===//
// nvfp4.amax
//===----------------------------------------------------------------------===//

def NVFP4_AmaxOp : NVFP4_Op<"amax", [Pure]> {
  let summary = "maximum absolute value of a tensor, skipping NaN";
  let description = [{
    Returns `max |x|` over all elements of `input` as FP32. NaN elements are
    skipped; `+inf` is a valid result. The amax of an empty or all-zero
    tensor is `0.0`. This is the value from which `nvfp4.quantize` derives
    the FP32 tensor scale; computing it once and passing it to several
    quantizations of the same tensor is how they share one scale.

    With `hadamard(mask)` the amax is that of `nvfp4.hadamard(input)` with
    this sign mask (the post-RHT amax of NUMERICS.md section 4), computed
    without materializing the transformed tensor; `nvfp4-fuse-quantization`
    folds an `nvfp4.hadamard` into its amaxes and quantizations this way.

    Folds to a constant when `input` is a constant of at most 2^20
    elements (computed by the numerics library, bit-exact with the
    lowering).

    Constraints:

    1. (C1) `input` is a ranked tensor of `bf16`, `f16` or `f32`.
    2. (C2) with `hadamard`, `input` is BF16 and its last dimension is
       static and a multiple of 16 (the RHT's operand, as for
       `nvfp4.hadamard`).
    3. (C3) the static dimensions of `input` have at most 2^47 elements (the
       bound of rule T6 of `!nvfp4.tensor`: no count, grid or offset derived
       from the shape overflows 64 bits).

    Example:

    ```mlir
    %amax = nvfp4.amax %x : tensor<128x256xbf16>
    %post = nvfp4.amax %x hadamard(55272) : tensor<128x256xbf16>
    ```
  }];
  let arguments = (ins
    NVFP4_HighPrecisionTensor:$input,
    OptionalAttr<NVFP4_SignMaskAttr>:$hadamard
  );
  let results = (outs NVFP4_Amax:$result);
  let assemblyFormat = [{
    $input (`hadamard` `(` $hadamard^ `)`)? attr-dict `:` type($input)
  }];
  let hasVerifier = 1;
  let hasFolder = 1;
}

//===----------------------------------------------------------------------===//
// nvfp4.quantize
//===----------------------------------------------------------------------===//

def NVFP4_QuantizeOp : NVFP4_Op<"quantize", [Pure, AttrSizedOperandSegments]> {
  let summary = "quantize a high-precision tensor to NVFP4, MXFP8 or MXFP4";
  let description = [{
    Quantizes `input` to a block-scaled tensor with the block shape and scale
    layout of the result type, following TransformerEngine's recipe bit for
    bit (see docs/Numerics.md):

    ```
    S_enc = 2688 / amax   (1 when amax is 0 or inf), S_dec = 1 / S_enc
    s_b   = e4m3(min(bamax_b * (S_enc * (1/6)), 448))   per block b
    q_i   = e2m1(x_i * min(1 / (s_b * S_dec), FLT_MAX))
    ```

    `amax` defaults to `nvfp4.amax(input)`; passing it explicitly lets several
    quantizations share one tensor scale. With `rounding<stochastic>` the
    final E2M1 rounding is stochastic, driven by Philox4x32-10 random bits
    keyed by `seed` and each element's linear index: the same seed gives the
    same bytes on every target and tiling.

    With `hadamard(mask)` the op quantizes `nvfp4.hadamard(input)` with this
    sign mask instead of `input` -- every run of 16 elements along the last
    dimension is transformed (and rounded to BF16) first, so each 1x16 block
    is one RHT chunk -- and the default `amax` is the post-RHT amax. This is
    the form `nvfp4-fuse-quantization` gives `quantize(hadamard(x))`: the
    transformed tensor never has to exist in memory.

    With an MX result type (E8M0 scales, 1x32 blocks) the op quantizes per
    OCP MX with TransformerEngine's scale rule (docs/Numerics.md section 11):
    `s_b = 2^ceil(log2(bamax_b / max_elem))`, `q_i = elem(x_i / s_b)` with
    round to nearest even and saturation. There is no tensor scale (the
    result's amax part is 0), and stochastic rounding and `hadamard` are
    NVFP4-only for now.

    With a constant `input` (at most 2^20 elements) and constant `amax` and
    `seed` where present, canonicalization computes the result at compile
    time with the numerics library and replaces the op by an `nvfp4.pack`
    of constants -- the same bytes the lowered code computes.

    Constraints:

    1. (C1) `input` and the result have the same shape.
    2. (C2) stochastic rounding needs a `seed`.
    3. (C3) a `seed` is only accepted with stochastic rounding.
    4. (C4) with `hadamard`, `input` is BF16 and the blocks are 1x16 (the
       RHT's 16-element runs).
    5. (C5) a constant `amax` is non-negative and not NaN (an amax is
       `max |x|`; `+inf` is valid).
    6. (C6) with an MX result: no `amax` (MX has no tensor scale), no
       `hadamard` and round to nearest even.
    7. (C7) the result holds an amax (`tensor_scale = decode` is for
       tensors quantized elsewhere, assembled with `nvfp4.pack`).

    Example:

    ```mlir
    %m = nvfp4.quantize %x : tensor<128x256xbf16>
        -> !nvfp4.tensor<128x256xf8E4M3FN, scale = f8E8M0FNU, block = 1x32>
    %q = nvfp4.quantize %x : tensor<128x256xbf16>
        -> !nvfp4.tensor<128x256xf4E2M1FN, scale = f8E4M3FN, block = 1x16>
    %g = nvfp4.quantize %dy amax(%a) rounding<stochastic> seed(%s)
        : tensor<128x256xbf16>
        -> !nvfp4.tensor<128x256xf4E2M1FN, scale = f8E4M3FN, block = 1x16>
    %h = nvfp4.quantize %xt hadamard(55272) rounding<stochastic> seed(%s)
        : tensor<256x128xbf16>
        -> !nvfp4.tensor<256x128xf4E2M1FN, scale = f8E4M3FN, block = 1x16>
    ```
  }];
  let arguments = (ins
    NVFP4_HighPrecisionTensor:$input,
    Optional<NVFP4_Amax>:$amax,
    Optional<NVFP4_Seed>:$seed,
    DefaultValuedAttr<NVFP4_RoundingModeAttr,
                      "::mlir::nvfp4::RoundingMode::NearestEven">:$rounding,
    OptionalAttr<NVFP4_SignMaskAttr>:$hadamard
  );
  let results = (outs NVFP4_BlockScaledTensor:$result);
  // The builder embedders used before `hadamard` existed: no RHT.
  let builders = [
    OpBuilder<(ins "::mlir::Type":$result, "::mlir::Value":$input,
                   "::mlir::Value":$amax, "::mlir::Value":$seed,
                   CArg<"::mlir::nvfp4::RoundingMode",
                        "::mlir::nvfp4::RoundingMode::NearestEven">:$rounding),
    [{
      build($_builder, $_state, result, input, amax, seed, rounding,
            /*hadamard=*/nullptr);
    }]>
  ];
  let assemblyFormat = [{
    $input (`amax` `(` $amax^ `)`)? (`hadamard` `(` $hadamard^ `)`)?
    (`rounding` `` $rounding^)? (`seed` `(` $seed^ `)`)?
    attr-dict `:` type($input) `->` qualified(type($result))
  }];
  let hasVerifier = 1;
  let hasCanonicalizer = 1;
}

//===----------------------------------------------------------------------===//
// nvfp4.dual_quantize
//===----------------------------------------------------------------------===//

def NVFP4_DualQuantizeOp : NVFP4_Op<"dual_quantize",
    [Pure, AttrSizedOperandSegments]> {
  let summary = "quantize a tensor along its rows and, transposed, along its "
                "columns, reading it once";
  let description = [{
    Quantizes `input` [batch..., M, K] twice with 1x16 blocks: `rowwise`
    ([batch..., M, K], blocks along K: the fprop or dgrad operand) and
    `columnwise` ([batch..., K, M], the quantization of the transpose, blocks
    along M: the tokens, which wgrad contracts). It is exactly

    ```
    %rowwise = nvfp4.quantize %input amax(%amax) rounding<r> seed(%seed)
    %t = linalg.transpose ins(%input ...) ... // the last two dimensions
    %columnwise = nvfp4.quantize %t amax(%columnwise_amax) hadamard(mask)
        rounding<rc> seed(%columnwise_seed)
    ```

    where every part of the columnwise quantization has its own operand or
    attribute after the `columnwise` keyword. Each amax defaults as for
    `nvfp4.quantize`: the rowwise one to `nvfp4.amax(input)`, the columnwise
    one to the post-RHT amax of the transpose with `hadamard` (the amax of
    `input` without). The RHT applies to the columnwise part only: it runs
    along the tokens, for the wgrad operands, never for fprop or dgrad
    (NUMERICS.md section 4).

    A training step quantizes both X (RN for fprop; RHT + RN for wgrad) and
    dY (SR for dgrad; RHT + SR for wgrad) this way;
    `nvfp4-fuse-quantization` (fuse-dual-quantization) forms this op from the
    two quantizations the recipe writes. The GPU kernel reads the input once
    for both results (and once more for both default amaxes); neither the
    transposed tensor nor the RHT's output is written to memory.

    Constraints:

    1. (C1) `rowwise` has the shape of `input`.
    2. (C2) `columnwise` has the shape of `input` with the last two
       dimensions swapped.
    3. (C3) both results are NVFP4 with 1x16 blocks.
    4. (C4) each part has a `seed` exactly when its rounding is stochastic.
    5. (C5) with `hadamard`, `input` is BF16.
    6. (C6) both results hold an amax (not `tensor_scale = decode`).

    Example:

    ```mlir
    %qx, %qxt = nvfp4.dual_quantize %x columnwise hadamard(55272)
        : tensor<2048x4096xbf16>
        -> !nvfp4.tensor<2048x4096xf4E2M1FN, scale = f8E4M3FN, block = 1x16>,
           !nvfp4.tensor<4096x2048xf4E2M1FN, scale = f8E4M3FN, block = 1x16>
    %qdy, %qdyt = nvfp4.dual_quantize %dy rounding<stochastic> seed(%s0)
        columnwise hadamard(55272) rounding<stochastic> seed(%s1)
        : tensor<2048x4096xbf16>
        -> !nvfp4.tensor<2048x4096xf4E2M1FN, scale = f8E4M3FN, block = 1x16>,
           !nvfp4.tensor<4096x2048xf4E2M1FN, scale = f8E4M3FN, block = 1x16>
    ```
  }];
  let arguments = (ins
    NVFP4_HighPrecisionTensor:$input,
    Optional<NVFP4_Amax>:$amax,
    Optional<NVFP4_Seed>:$seed,
    DefaultValuedAttr<NVFP4_RoundingModeAttr,
                      "::mlir::nvfp4::RoundingMode::NearestEven">:$rounding,
    Optional<NVFP4_Amax>:$columnwise_amax,
    Optional<NVFP4_Seed>:$columnwise_seed,
    DefaultValuedAttr<NVFP4_RoundingModeAttr,
                      "::mlir::nvfp4::RoundingMode::NearestEven">:
        $columnwise_rounding,
    OptionalAttr<NVFP4_SignMaskAttr>:$hadamard
  );
  let results = (outs NVFP4_BlockScaledTensor:$rowwise,
                      NVFP4_BlockScaledTensor:$columnwise);
  let assemblyFormat = [{
    $input (`amax` `(` $amax^ `)`)? (`rounding` `` $rounding^)?
    (`seed` `(` $seed^ `)`)?
    `columnwise` (`amax` `(` $columnwise_amax^ `)`)?
    (`hadamard` `(` $hadamard^ `)`)?
    (`rounding` `` $columnwise_rounding^)?
    (`seed` `(` $columnwise_seed^ `)`)?
    attr-dict `:` type($input) `->` qualified(type($rowwise)) `,`
    qualified(type($columnwise))
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// nvfp4.dequantize
//===----------------------------------------------------------------------===//

def NVFP4_DequantizeOp : NVFP4_Op<"dequantize", [Pure]> {
  let summary = "expand a block-scaled tensor to a high-precision tensor";
  let description = [{
    Computes `x_hat = (e2m1(q) * s_b) * (amax / 2688)` in FP32 for every
    element of an NVFP4 input (`(e2m1(q) * s_b) * decode` with
    `tensor_scale = decode`: the checkpoint's scale, bit for bit), `x_hat = elem(q) * 2^(s_b - 127)` for an MX
    input (an E8M0 scale of 0xFF gives NaN), and rounds it (to nearest even)
    to the result element type.
    `dequantize(quantize(x))` is *not* `x`: quantization loses information,
    and this op is never folded away against a quantize.

    Constraints:

    1. (C1) `input` and the result have the same shape.

    Example:

    ```mlir
    %x = nvfp4.dequantize %q
        : !nvfp4.tensor<128x256xf4E2M1FN, scale = f8E4M3FN, block = 1x16>
        -> tensor<128x256xbf16>
    ```
  }];
  let arguments = (ins NVFP4_BlockScaledTensor:$input);
  let results = (outs NVFP4_HighPrecisionTensor:$result);
  let assemblyFormat = [{
    $input attr-dict `:` qualified(type($input)) `->` type($result)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// nvfp4.hadamard
//===----------------------------------------------------------------------===//

def NVFP4_HadamardOp : NVFP4_Op<"hadamard", [Pure, SameOperandsAndResultType]> {
  let summary = "16-point Random Hadamard Transform along the last dimension";
  let description = [{
    Multiplies every run of 16 consecutive elements along the last dimension
    by `R = diag(sign) * H16 * 0.25`, where `H16` is the Sylvester-ordered
    Hadamard matrix and `sign_i = -1` where bit `i` of `sign_mask` is set
    (default `0xD7E8`, TransformerEngine's fixed vector). The order of
    operations is fixed (NUMERICS.md section 4), so every target gives the
    same bits: the inputs are negated where their sign bit is set (exact),
    then four FP32 butterfly stages h = 1, 2, 4, 8 replace each pair
    `(u_i, u_{i+h})` with `i & h == 0` by `(u_i + u_{i+h}, u_i - u_{i+h})`,
    then each entry is multiplied by 0.25 in FP32 and rounded to BF16. This
    equals `v * R` whenever the sums are exact (the non-zero inputs of a run
    within 13 binades; docs/Numerics.md). `R` is orthonormal, so applying the same transform to
    both operands of a GEMM along its contraction dimension leaves the
    product unchanged while spreading outliers across each 16-block.
    Folds when `input` is a constant of at most 2^20 elements.

    Constraints:

    1. (C1) the last dimension is static and a multiple of 16.
    2. (C2) `input` is a BF16 tensor and the result has its type.
    3. (C3) the static dimensions of `input` have at most 2^47 elements (as
       `nvfp4.amax` (C3)).

    Example:

    ```mlir
    %y = nvfp4.hadamard %x : tensor<256x128xbf16>
    %z = nvfp4.hadamard %x {sign_mask = 255 : i32} : tensor<256x128xbf16>
    ```
  }];
  let arguments = (ins
    NVFP4_BF16Tensor:$input,
    DefaultValuedAttr<NVFP4_SignMaskAttr, "0xD7E8">:$sign_mask
  );
  let results = (outs NVFP4_BF16Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input)";
  let hasVerifier = 1;
  let hasFolder = 1;
}

//===----------------------------------------------------------------------===//
// nvfp4.scaled_matmul
//===----------------------------------------------------------------------===//

def NVFP4_ScaledMatmulOp : NVFP4_Op<"scaled_matmul", [Pure]> {
  let summary = "block-scaled matrix product C = alpha * A * Bt with FP32 "
                "accumulation";
  let description = [{
    Multiplies `lhs` [batch..., M, K] by the transpose of `rhs`
    [batch..., N, K]; both are quantized along K, the layout tensor cores
    read. For every output element, each 16-block of K contributes
    `s_A * s_B * sum(q_A * q_B)`, accumulated in FP32; the tensor scales are
    applied once at the end as TransformerEngine's
    `alpha = alpha_in * amax_A * amax_B / (36 * 448 * 448)` (`alpha_in`
    defaults to 1). The result is rounded to its element type.
    An operand with `tensor_scale = decode` contributes its decode scale
    and no `1 / 2688`: `alpha = alpha_in * d_A * d_B` for two checkpoint
    operands (vLLM's `input_scale * weight_scale_2`), each product rounded
    to FP32 in this order (docs/Numerics.md, "Exact tensor scales").

    With MX operands the blocks are the 32-element MX blocks, each
    contributing `2^eA * 2^eB * sum(q_A * q_B)`, and `alpha = alpha_in`
    (MX has no tensor scale; docs/Numerics.md section 11.4). MXFP8 operands
    may mix E4M3 and E5M2 elements.

    `role` records which GEMM of a training step this is (fprop, dgrad,
    wgrad); it does not change the arithmetic.

    With a second (`f32`) result, the op also returns the amax of its
    result -- `nvfp4.amax` of the rounded values -- computed in the GEMM's
    epilogue while the values are in registers. `nvfp4-fuse-quantization`
    uses it when the output is quantized for another NVFP4 GEMM: the
    quantization then needs no amax pass over the output.

    Constraints:

    1. (C1) `lhs` and `rhs` have the same rank and the same batch dimensions.
    2. (C2) `lhs` and `rhs` have the same contraction (last) dimension.
    3. (C3) the result shape is [batch..., M, N].
    4. (C4) the result has at most 2^47 elements (operands within rule T6
       can still multiply to more: 2^43 x 16 by 2^43 x 16).
    5. (C5) `lhs` and `rhs` have the same scale type: both NVFP4 or both MX
       (the K blocks of the two operands must line up).

    Example:

    ```mlir
    %c = nvfp4.scaled_matmul %a, %b role<fprop>
        : !nvfp4.tensor<128x256xf4E2M1FN, scale = f8E4M3FN, block = 1x16>,
          !nvfp4.tensor<64x256xf4E2M1FN, scale = f8E4M3FN, block = 16x16>
        -> tensor<128x64xbf16>
    %d, %amax = nvfp4.scaled_matmul %a, %b
        : !nvfp4.tensor<128x256xf4E2M1FN, scale = f8E4M3FN, block = 1x16>,
          !nvfp4.tensor<64x256xf4E2M1FN, scale = f8E4M3FN, block = 16x16>
        -> tensor<128x64xbf16>, f32
    ```
  }];
  let arguments = (ins
    NVFP4_BlockScaledTensor:$lhs,
    NVFP4_BlockScaledTensor:$rhs,
    Optional<F32>:$alpha,
    OptionalAttr<NVFP4_GemmRoleAttr>:$role
  );
  let results = (outs
    NVFP4_HighPrecisionTensor:$result,
    Optional<NVFP4_Amax>:$result_amax
  );
  let assemblyFormat = [{
    $lhs `,` $rhs (`alpha` `(` $alpha^ `)`)? (`role` `` $role^)? attr-dict
    `:` qualified(type($lhs)) `,` qualified(type($rhs)) `->` type($result)
    (`,` type($result_amax)^)?
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// nvfp4.scaled_matmul_quantize
//===----------------------------------------------------------------------===//

def NVFP4_ScaledMatmulQuantizeOp
    : NVFP4_Op<"scaled_matmul_quantize", [Pure]> {
  let summary = "block-scaled matrix product quantized to NVFP4 in its "
                "epilogue, with a tensor amax known beforehand";
  let description = [{
    `nvfp4.scaled_matmul` whose output is quantized (1x16 blocks along N,
    round to nearest even, linear scales) with the given tensor `amax`,
    without materializing the high-precision product: exactly

    ```
    %c = nvfp4.scaled_matmul %lhs, %rhs alpha(%alpha) role<r>
        : ... -> tensor<[batch...,] M x N x intermediate>
    %q = nvfp4.quantize %c amax(%amax) : ... -> result type
    ```

    `intermediate` (absent: `bf16`) is the element type the product is
    rounded to before the quantization sees it. The tensor scale must be
    known before the GEMM runs -- a calibrated (static) activation amax as
    NVFP4 inference uses, or TE's amax of the previous step -- because the
    epilogue of each tile quantizes its own outputs. With the amax of the
    output itself (current scaling) the product is needed first: there
    `nvfp4.scaled_matmul` returns the amax from its epilogue instead.
    `nvfp4-fuse-quantization` (fuse-epilogue-quantization) forms this op.

    Constraints:

    1. (C1) `lhs` and `rhs` have the same rank and the same batch dimensions.
    2. (C2) `lhs` and `rhs` have the same contraction (last) dimension.
    3. (C3) the result shape is [batch..., M, N].
    4. (C4) the result has 1x16 blocks and linear scales.
    5. (C5) a constant `amax` is non-negative and not NaN.
    6. (C6) `lhs`, `rhs` and the result are NVFP4 (the quantizing epilogue
       exists for NVFP4 only).
    7. (C7) the result holds an amax (not `tensor_scale = decode`).

    Example:

    ```mlir
    %q = nvfp4.scaled_matmul_quantize %a, %b amax(%calibrated)
        : !nvfp4.tensor<128x256xf4E2M1FN, scale = f8E4M3FN, block = 1x16>,
          !nvfp4.tensor<64x256xf4E2M1FN, scale = f8E4M3FN, block = 16x16>
        -> !nvfp4.tensor<128x64xf4E2M1FN, scale = f8E4M3FN, block = 1x16>
    ```
  }];
  let arguments = (ins
    NVFP4_BlockScaledTensor:$lhs,
    NVFP4_BlockScaledTensor:$rhs,
    NVFP4_Amax:$amax,
    Optional<F32>:$alpha,
    OptionalAttr<NVFP4_GemmRoleAttr>:$role,
    OptionalAttr<TypeAttrOf<AnyTypeOf<[BF16, F16, F32]>>>:$intermediate
  );
  let results = (outs NVFP4_BlockScaledTensor:$result);
  let assemblyFormat = [{
    $lhs `,` $rhs `amax` `(` $amax `)` (`alpha` `(` $alpha^ `)`)?
    (`role` `` $role^)? attr-dict `:` qualified(type($lhs)) `,`
    qualified(type($rhs)) `->` qualified(type($result))
  }];
  let extraClassDeclaration = [{
    /// The element type the product is rounded to: `intermediate`, bf16
    /// when absent.
    ::mlir::Type getProductElementType() {
      std::optional<::mlir::Type> type = getIntermediate();
      return type ? *type : ::mlir::BFloat16Type::get(getContext());
    }
    /// Replaces this op by the nvfp4.scaled_matmul + nvfp4.quantize it
    /// stands for (the lowerings without a quantizing epilogue use this)
    /// and returns the new quantize op.
    ::mlir::Operation *decompose(::mlir::RewriterBase &rewriter);
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// nvfp4.pack / nvfp4.unpack
//===----------------------------------------------------------------------===//

def NVFP4_PackOp : NVFP4_Op<"pack", [Pure,
    TypesMatchWith<"codes type matches the result's codes type", "result",
        "codes", "::llvm::cast<BlockScaledTensorType>($_self).getCodesType()">,
    TypesMatchWith<"scales type matches the result's scales type", "result",
        "scales",
        "::llvm::cast<BlockScaledTensorType>($_self).getScalesType()">]> {
  let summary = "assemble a block-scaled tensor from codes, scales and amax";
  let description = [{
    Builds a block-scaled tensor from its parts, e.g. a checkpoint quantized
    elsewhere. `codes` holds one element value per element (the result's
    element type), `scales` the block scales in the result's layout and
    scale type (see `!nvfp4.tensor`), and `amax` the FP32 tensor scale: the
    amax, or with `tensor_scale = decode` the decode scale exactly as a
    checkpoint stores it (`weight_scale_2`); unused by the MX formats. Operand types are implied by the result type. On the
    GPU path the codes are one byte each in memory, as MLIR stores
    `f4E2M1FN` (the code in the low nibble, zero above), and a kernel packs
    them two per byte.

    Constraints:

    1. (C1) `codes` has the shape and element type of the result.
    2. (C2) `scales` has the result's scale shape and scale type.
    3. (C3) a constant `amax` is non-negative and not NaN.
    4. (C4) constant `scales` are non-negative and not NaN (E4M3 bits
       0x00-0x7E: a block scale is a magnitude; E8M0 bits 0x00-0xFE).
    5. (C5) with `tensor_scale = decode`, a constant decode scale is finite
       (an infinite one would decode every element to inf or NaN).

    Example:

    ```mlir
    %q = nvfp4.pack %codes, %scales, %amax
        : !nvfp4.tensor<128x256xf4E2M1FN, scale = f8E4M3FN, block = 1x16>
    ```
  }];
  let arguments = (ins NVFP4_CodesTensor:$codes, NVFP4_ScalesTensor:$scales,
                       NVFP4_Amax:$amax);
  let results = (outs NVFP4_BlockScaledTensor:$result);
  let assemblyFormat = [{
    $codes `,` $scales `,` $amax attr-dict `:` qualified(type($result))
  }];
  let hasVerifier = 1;
  let hasFolder = 1;
}

def NVFP4_UnpackOp : NVFP4_Op<"unpack", [Pure,
    TypesMatchWith<"codes type matches the input's codes type", "input",
        "codes", "::llvm::cast<BlockScaledTensorType>($_self).getCodesType()">,
    TypesMatchWith<"scales type matches the input's scales type", "input",
        "scales",
        "::llvm::cast<BlockScaledTensorType>($_self).getScalesType()">]> {
  let summary = "split a block-scaled tensor into codes, scales and amax";
  let description = [{
    The inverse of `nvfp4.pack`: returns the element codes (one per element),
    the block scales in the input's layout and the FP32 tensor scale (the
    amax, or the decode scale with `tensor_scale = decode`).
    `unpack(pack(c, s, a))` folds to `(c, s, a)`.

    Constraints:

    1. (C1) `codes` has the shape and element type of the input.
    2. (C2) `scales` has the input's scale shape and scale type.

    Example:

    ```mlir
    %codes, %scales, %amax = nvfp4.unpack %q
        : !nvfp4.tensor<128x256xf4E2M1FN, scale = f8E4M3FN, block = 1x16>
    ```
  }];
  let arguments = (ins NVFP4_BlockScaledTensor:$input);
  let results = (outs NVFP4_CodesTensor:$codes, NVFP4_ScalesTensor:$scales,
                      NVFP4_Amax:$amax);
  let assemblyFormat = "$input attr-dict `:` qualified(type($input))";
  let hasFolder = 1;
}

//===----------------------------------------------------------------------===//
// nvfp4.swizzle_scales
//===----------------------------------------------------------------------===//

def NVFP4_SwizzleScalesOp : NVFP4_Op<"swizzle_scales", [Pure]> {
  let summary = "change the memory layout of a block-scaled tensor's scales";
  let description = [{
    Returns the same quantized tensor with its block scales rearranged into
    the result type's layout; codes, block shape and amax are unchanged.
    `linear -> swizzled_128x4` pads the scale matrix with zeros to a multiple
    of 128 rows and 4 columns and permutes it into 512-byte atoms
    (`offset(r, c) = ((r/128)*(C/4) + c/4)*512 + (r%32)*16 + ((r%128)/32)*4 +
    c%4`), replicating 16x16-block scales into each of their 16 rows. The
    inverse direction is accepted too.

    Folds: a swizzle to the input's own layout is the input, and a chain of
    swizzles collapses to one.

    Constraints:

    1. (C1) the result type equals the input type except for the layout.

    Example:

    ```mlir
    %s = nvfp4.swizzle_scales %q
        : !nvfp4.tensor<128x256xf4E2M1FN, scale = f8E4M3FN, block = 1x16>
        -> !nvfp4.tensor<128x256xf4E2M1FN, scale = f8E4M3FN, block = 1x16,
                         layout = swizzled_128x4>
    ```
  }];
  let arguments = (ins NVFP4_BlockScaledTensor:$input);
  let results = (outs NVFP4_BlockScaledTensor:$result);
  let assemblyFormat = [{
    $input attr-dict `:` qualified(type($input)) `->` qualified(type($result))
  }];
  let hasVerifier = 1;
  let hasFolder = 1;
}

//===----------------------------------------------------------------------===//
// nvfp4.transpose
//===----------------------------------------------------------------------===//

def NVFP4_TransposeOp : NVFP4_Op<"transpose", [Pure]> {
  let summary = "transpose a block-scaled tensor with 16x16 blocks";
  let description = [{
    Swaps the last two dimensions of a block-scaled tensor quantized in
    16x16 tiles: the E2M1 codes are transposed element by element, the
    linear scale matrix [batch..., rows / 16, cols / 16] is transposed tile
    by tile, and the amax is unchanged. Batch dimensions stay in place.

    The result is exact: one E4M3 scale serves a whole 16x16 tile, so the
    transposed codes and scales describe exactly the transposed values.
    This is how one weight quantization serves both fprop (W) and dgrad
    (W^T): with round-to-nearest and a shared amax,
    `transpose(quantize(W))` has the same bytes as `quantize(transpose(W))`.
    1x16 blocks have no exact transpose (a block would become a column), and
    `swizzled_128x4` scales replicate each tile scale into 16 rows; transpose
    the linear form and swizzle afterwards.

    Folds: `transpose(transpose(x))` is `x`.

    Constraints:

    1. (C1) the input has 16x16 blocks.
    2. (C2) the input's scale layout is `linear`.
    3. (C3) the result type is the input type with the last two dimensions
       swapped.

    Example:

    ```mlir
    %wt = nvfp4.transpose %w
        : !nvfp4.tensor<64x256xf4E2M1FN, scale = f8E4M3FN, block = 16x16>
        -> !nvfp4.tensor<256x64xf4E2M1FN, scale = f8E4M3FN, block = 16x16>
    ```
  }];
  let arguments = (ins NVFP4_BlockScaledTensor:$input);
  let results = (outs NVFP4_BlockScaledTensor:$result);
  let assemblyFormat = [{
    $input attr-dict `:` qualified(type($input)) `->` qualified(type($result))
  }];
  let hasVerifier = 1;
  let hasFolder = 1;
}

#endif // NVFP4_DIALECT_NVFP4_IR_NVFP4OPS_TD
