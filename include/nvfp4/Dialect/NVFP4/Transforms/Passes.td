//===- Passes.td - nvfp4 graph-level passes ----------------*- tablegen -*-===//
//
// Part of the nvfp4 project.
//
// The passes that turn a model (func + linalg on tensors) into an NVFP4
// model: a per-layer precision policy, the training recipe per GEMM role and
// the fusion of the resulting quantizations. The logic lives in public
// functions and pattern sets (see the headers next to this file); the pass
// classes only read their options.
//
//===----------------------------------------------------------------------===//

#ifndef NVFP4_DIALECT_NVFP4_TRANSFORMS_PASSES_TD
#define NVFP4_DIALECT_NVFP4_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

//===----------------------------------------------------------------------===//
// nvfp4-assign-precision
//===----------------------------------------------------------------------===//

def NVFP4AssignPrecision : Pass<"nvfp4-assign-precision", "ModuleOp"> {
  let summary = "Choose NVFP4, MXFP8, MXFP4 or BF16 for every linalg "
                "contraction, per layer and layer kind";
  let description = [{
    Writes `nvfp4.precision = "nvfp4" | "mxfp8" | "mxfp4" | "bf16"` on every
    floating-point
    linalg contraction (`linalg.matmul`, `linalg.batch_matmul`, their
    transposed forms, `linalg.contract` and equivalent `linalg.generic`
    contractions) following the paper's 12B recipe:

    1. an explicit `nvfp4.precision` is kept as it is;
    2. `all-bf16` (the late-training switch) makes every GEMM BF16, and
       `forward-bf16` every fprop GEMM (the forward-only variant);
    3. GEMMs whose `nvfp4.kind` is listed in `keep-kinds` stay BF16, unless
       `formats` names the same entry (an explicit format wins). The
       pseudo-kind `attention-bmm` names the activation-by-activation GEMMs
       of attention (QK^T and SV): `nvfp4.kind = "attention"` (or no kind
       and batch dimensions) with no `{nvfp4.weight}` operand, not a wgrad;
    4. the first `keep-first` and the last `keep-last` blocks stay BF16.
       The defaults, 2 and 8, are the paper's 12B recipe for its 62 blocks;
       when an option is not given, a model shallower than 62 blocks keeps
       the same fraction of its depth, rounded down (`floor(2 * N / 62)`
       first and `floor(8 * N / 62)` last blocks of N: none for a single
       block, 0 and 1 of 8, 1 and 4 of 31), so that a small model still
       gets NVFP4 GEMMs. A value given explicitly is used as it is
       (docs/Rationale.md, "Keeping blocks in BF16");
    5. the other GEMMs get the format of their kind from `formats`
       (entries `KIND=FORMAT`, FORMAT one of `nvfp4`, `mxfp8`, `mxfp4`,
       `bf16`; a bare `FORMAT` is the default for the kinds not listed; an
       attention BMM takes an `attention-bmm` entry before one of its kind),
       NVFP4 when no entry applies. `formats=attention=mxfp8,ffn=nvfp4` is
       the mixed recipe of MXFP8 attention projections and NVFP4 FFN GEMMs;
       a malformed entry, a repeated kind or `fp8` (no lowering) is an
       error;
    6. what the format cannot represent stays BF16 with a remark, never an
       error: a contraction (K) length that is not a multiple of the block
       (16 for NVFP4, 32 for MXFP8 and MXFP4), dynamic or empty shapes,
       buffers, element types other than bf16/f16/f32.

    Roles (for `forward-bf16` and `attention-bmm`) are resolved as
    `nvfp4-apply-recipe` describes. GEMMs are contractions with at least one
    M, N and K loop; matrix-vector products get no attribute.

    Blocks come from `nvfp4.layer`; the number of blocks is the largest
    `nvfp4.layer` in the module plus one. In a function without any
    `nvfp4.layer`, blocks are inferred from residual connections (an
    elementwise add of a value and a tensor computed from it through at
    least one contraction closes a block); the inferred index is written as
    `nvfp4.layer` and a remark on the function says what was found. With
    no residual structure either, the remark says that the whole function
    was taken as one block. GEMMs after the last residual connection (an
    output head) count in the last block. A GEMM without `nvfp4.layer` in a
    function where other GEMMs have one stays BF16 with a remark.

    Cost: linear in the size of the module for a stack of blocks (each
    residual connection looks only at the ops between its two operands);
    10,000 blocks add one or two seconds to parsing and printing
    (docs/Testing.md, "Resource limits").

    Example (`keep-first=1 keep-last=0`):

    ```mlir
    %0 = linalg.matmul {nvfp4.layer = 0 : i64} ins(%x, %w0 : ...) outs(...)
    %1 = linalg.matmul {nvfp4.layer = 1 : i64} ins(%0, %w1 : ...) outs(...)
    ```

    (blocks 0 and 1 of two) becomes

    ```mlir
    %0 = linalg.matmul {nvfp4.layer = 0 : i64, nvfp4.precision = "bf16"} ...
    %1 = linalg.matmul {nvfp4.layer = 1 : i64, nvfp4.precision = "nvfp4"} ...
    ```
  }];
  let options = [
    Option<"keepFirst", "keep-first", "unsigned", /*default=*/"2",
           "Number of leading blocks kept in BF16 (default 2 of the paper's "
           "62; not given: scaled down for shallower models)">,
    Option<"keepLast", "keep-last", "unsigned", /*default=*/"8",
           "Number of trailing blocks kept in BF16 (default 8 of the paper's "
           "62; not given: scaled down for shallower models)">,
    ListOption<"keepKinds", "keep-kinds", "std::string",
               "nvfp4.kind values kept in BF16 ('attention-bmm' names the "
               "attention BMMs; 'none' keeps no kind)",
               "llvm::cl::list_init<std::string>("
               "{\"attention-bmm\", \"embedding\", \"head\"})">,
    Option<"allBF16", "all-bf16", "bool", /*default=*/"false",
           "Late-training switch: every GEMM in BF16">,
    Option<"forwardBF16", "forward-bf16", "bool", /*default=*/"false",
           "Late-training switch: every fprop GEMM in BF16, gradients stay "
           "NVFP4">,
    ListOption<"formats", "formats", "std::string",
               "Format per nvfp4.kind, KIND=FORMAT (FORMAT: nvfp4, mxfp8, "
               "mxfp4, bf16); a bare FORMAT is the default of the kinds not "
               "listed (none given: nvfp4)">,
  ];
}

//===----------------------------------------------------------------------===//
// nvfp4-apply-recipe
//===----------------------------------------------------------------------===//

def NVFP4ApplyRecipe : Pass<"nvfp4-apply-recipe", "ModuleOp"> {
  let summary = "Rewrite NVFP4 GEMMs into quantize / hadamard / scaled_matmul "
                "by GEMM role";
  let description = [{
    Rewrites every linalg contraction with `nvfp4.precision = "nvfp4"` into
    the NVFP4 training recipe of docs/Numerics.md section 7 (and those with
    `"mxfp8"` or `"mxfp4"` into the MX recipe below):

    | role  | lhs                      | rhs                            |
    |-------|--------------------------|--------------------------------|
    | fprop | X: 1x16, RN              | W: 16x16, RN                   |
    | dgrad | dY: 1x16, SR             | W: 16x16, RN                   |
    | wgrad | dY^T: RHT + 1x16, SR     | X^T: RHT + 1x16, RN            |

    16x16 goes to whichever operand is a `{nvfp4.weight}` argument (1x16,
    with a remark, when that operand's rows are not a multiple of 16).

    A GEMM with `nvfp4.precision = "mxfp8"` or `"mxfp4"` quantizes both
    operands to that MX format (docs/Numerics.md section 11; MXFP8 with
    E4M3 elements, TE's MXFP8 default) with 1x32 blocks along K, round to
    nearest and no RHT, whatever its role: the MX types admit neither
    stochastic rounding, nor the RHT, nor 16x16 blocks, so `rht`,
    `stochastic-rounding` and `weight-2d` apply to NVFP4 GEMMs only.
    `mxfp8-gradients=e5m2` gives the gradient operand of MXFP8 dgrad and
    wgrad GEMMs (dY, dY^T) E5M2 elements instead, TE's `HYBRID` format
    (E4M3 forward, E5M2 gradients: a wider range for the gradients); the
    other operands stay E4M3.

    A GEMM that cannot be quantized (dynamic or empty shape, K not a
    multiple of the block, 16 or 32, buffers, element types other than
    bf16/f16/f32) gets a warning and `nvfp4.precision = "bf16"` and is left
    as it is.

    `nvfp4.scaled_matmul` multiplies `lhs[batch, M, K]` by
    `rhs[batch, N, K]^T`, both blocked along K, so each operand is first
    transposed (`linalg.transpose`) and, for several M, N or K loops,
    collapsed into that form; the RHT of wgrad then runs along the token
    dimension, which is K there. Non-BF16 RHT inputs are rounded to BF16
    first (the transform is defined on BF16). The product is expanded and
    transposed back to the original result, whose element type is kept.
    The contraction's `outs` operand is accumulated: unless it is a fill
    with zero, a zero constant or `tensor.empty`, it is added in FP32 to the
    FP32 product and the sum is rounded once.

    Roles come from `nvfp4.role`. Without one (the weight is the operand
    that is a `{nvfp4.weight}` argument, looking through transposes, casts,
    reshapes, broadcasts and copies):

    1. a weight used by a single GEMM of the function: fprop;
    2. a weight used by several: fprop for the GEMM whose result reaches
       another use, dgrad for one that another use reaches; without such
       data flow, fprop where the weight's last dimension is contracted and
       dgrad where its first is (the [out, in] layout of PyTorch and TE);
    3. no weight operand, and a result shaped like a weight argument (or its
       transpose): wgrad, whose dY is the operand a dgrad also reads as dY
       (else the one that is not an fprop's activation, else operand A);
    4. anything else is ambiguous: a remark, and the conservative fprop
       treatment (round to nearest, no RHT; 1x16 without a weight operand).

    Stochastic rounding seeds: the i-th SR quantization of the module (in
    walk order) gets the (i+1)-th output of SplitMix64 started at `seed`, so
    each GEMM operand draws an independent Philox stream. With
    `seed-argument=<n>` the base seed is the n-th argument (an `i64`) of the
    enclosing function and the same mixing runs in `arith` at run time, so a
    training loop passes its step's seed.

    Example (fprop, `Y = X W^T`):

    ```mlir
    %y = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>,
                                        affine_map<(m, n, k) -> (n, k)>,
                                        affine_map<(m, n, k) -> (m, n)>]
        {nvfp4.precision = "nvfp4"}
        ins(%x, %w : tensor<64x128xbf16>, tensor<256x128xbf16>)
        outs(%zero : tensor<64x256xbf16>) -> tensor<64x256xbf16>
    ```

    becomes

    ```mlir
    %qx = nvfp4.quantize %x : tensor<64x128xbf16>
        -> !nvfp4.tensor<64x128xf4E2M1FN, scale = f8E4M3FN, block = 1x16>
    %qw = nvfp4.quantize %w : tensor<256x128xbf16>
        -> !nvfp4.tensor<256x128xf4E2M1FN, scale = f8E4M3FN, block = 16x16>
    %y = nvfp4.scaled_matmul %qx, %qw role<fprop> {nvfp4.precision = "nvfp4"}
        : ... -> tensor<64x256xbf16>
    ```
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::linalg::LinalgDialect",
    "::mlir::nvfp4::NVFP4Dialect",
    "::mlir::tensor::TensorDialect",
  ];
  let options = [
    Option<"rht", "rht", "bool", /*default=*/"true",
           "Random Hadamard Transform on the wgrad operands">,
    Option<"stochasticRounding", "stochastic-rounding", "bool",
           /*default=*/"true",
           "Stochastic rounding of the gradient operands (dgrad dY, wgrad "
           "dY^T)">,
    Option<"weight2D", "weight-2d", "bool", /*default=*/"true",
           "16x16 blocks for weights (1x16 when off)">,
    Option<"seed", "seed", "uint64_t", /*default=*/"0",
           "Base seed of stochastic rounding">,
    Option<"seedArgument", "seed-argument", "int", /*default=*/"-1",
           "Index of an i64 function argument holding the base seed at run "
           "time (-1: use `seed`)">,
    Option<"mxfp8Gradients", "mxfp8-gradients", "std::string",
           /*default=*/"\"e4m3\"",
           "Elements of the gradient operands (dgrad dY, wgrad dY^T) of "
           "MXFP8 GEMMs: e4m3 (TE's MXFP8 default) or e5m2 (TE's HYBRID)">,
  ];
}

//===----------------------------------------------------------------------===//
// nvfp4-fuse-quantization
//===----------------------------------------------------------------------===//

def NVFP4FuseQuantization : Pass<"nvfp4-fuse-quantization", "ModuleOp"> {
  let summary = "Share amaxes and weight quantizations, fold RHTs into "
                "quantizations, take output amaxes from GEMM epilogues, drop "
                "dead quantizations";
  let description = [{
    Runs eight independent fusions after `nvfp4-apply-recipe`; none of
    them changes a single result bit:

    1. *share-amax* (pattern set): quantizations of one tensor (the same
       value, or transposes, reshapes, copies and exact extensions of it,
       which have the same amax) compute one `nvfp4.amax` and pass it to
       each `nvfp4.quantize`; a quantize without `amax` computes exactly
       this value.
    2. *share-weight-quantization* (pattern set): a 16x16, round-to-nearest
       quantization of `transpose(W)` (dgrad) after one of `W` (fprop), or
       the reverse, becomes `nvfp4.transpose` of the earlier one: a 16x16
       tile has the same scale in both orientations, so the codes are bit
       for bit the transpose and one weight quantization remains. Both the
       reference and the GPU lowering lower `nvfp4.transpose`, so
       `nvfp4-compile` runs this fusion too.
    3. *fold-hadamard* (pattern set): an `nvfp4.hadamard` whose users are
       all 1x16 quantizations and amaxes of it becomes their `hadamard`
       attribute -- `quantize(hadamard(x))` is `quantize(x) {hadamard}` --
       so the code generators never write the transformed tensor (one
       RHT + amax pass and one RHT + quantize kernel on the GPU). An RHT
       with another user stays whole.
    4. *fuse-output-amax* (pattern set): a quantization of the output of
       an `nvfp4.scaled_matmul` (or of an exact view of it) that feeds
       another `nvfp4.scaled_matmul` takes its amax from the producing
       GEMM's second result, which the GEMM's epilogue computes from the
       values it stores; the quantization then needs no pass over the
       output for its amax. The whole quantization cannot move into the
       epilogue: its tensor scale depends on the amax of the entire
       output, known only when every tile is done.
    5. *fuse-epilogue-quantization* (pattern set): when that amax is known
       before the GEMM runs (a static, calibrated activation amax; TE's
       amax of the previous step), a 1x16 round-to-nearest quantization of
       the only use of a GEMM's output that feeds another NVFP4 GEMM
       becomes one `nvfp4.scaled_matmul_quantize`: the epilogue writes the
       E2M1 codes and E4M3 scales, and the high-precision product never
       reaches memory.
    6. *fuse-dual-quantization* (pattern set): a tensor quantized both
       along its rows (1x16, no RHT: X for fprop, dY for dgrad) and, as
       `linalg.transpose` of its last two dimensions, along its columns
       (1x16, with or without the RHT: X^T and dY^T for wgrad) gets one
       `nvfp4.dual_quantize` in the place of the earlier quantization; each
       part keeps its amax, rounding and seed. One GPU kernel then reads
       the tensor once for both, and the transposed tensor never exists.
       Runs after the fusions that set amaxes.
    7. *share-quantization* (pattern set): a quantization equal to an
       earlier one in its block (the same input and amax, result type,
       rounding, seed and RHT mask) is replaced by it. The recipe quantizes
       a GEMM's input once per GEMM: X of the Q, K and V projections
       arrives three times, and after share-amax the copies are identical.
       Runs once the amaxes are final, before fuse-dual-quantization.
    8. *remove-dead*: quantizations, amaxes, RHTs, dequantizations, packs,
       unpacks, scale swizzles and transposes whose results are unused are
       erased, with the producers that become dead with them. (This one is
       a walk, not a pattern set: a greedy rewrite erases dead ops before
       any pattern sees them, so it runs first.)

    Each function is processed on its own. The statistics count what each
    fusion did; Debian's LLVM is built without LLVM_ENABLE_STATS, which
    makes `-mlir-pass-statistics` print nothing, so `report-counts` also
    emits them as a remark on every function.

    Example (share-weight-quantization):

    ```mlir
    %qf = nvfp4.quantize %w : tensor<256x128xbf16>
        -> !nvfp4.tensor<256x128xf4E2M1FN, scale = f8E4M3FN, block = 16x16>
    %wt = linalg.transpose ins(%w ...) outs(...) permutation = [1, 0]
    %qd = nvfp4.quantize %wt : tensor<128x256xbf16>
        -> !nvfp4.tensor<128x256xf4E2M1FN, scale = f8E4M3FN, block = 16x16>
    ```

    becomes

    ```mlir
    %qf = nvfp4.quantize %w : ...
    %qd = nvfp4.transpose %qf
        : !nvfp4.tensor<256x128xf4E2M1FN, scale = f8E4M3FN, block = 16x16>
        -> !nvfp4.tensor<128x256xf4E2M1FN, scale = f8E4M3FN, block = 16x16>
    ```
  }];
  let dependentDialects = [
    "::mlir::linalg::LinalgDialect",
    "::mlir::nvfp4::NVFP4Dialect",
    "::mlir::tensor::TensorDialect",
  ];
  let options = [
    Option<"shareAmax", "share-amax", "bool", /*default=*/"true",
           "Run the share-amax patterns">,
    Option<"shareWeightQuantization", "share-weight-quantization", "bool",
           /*default=*/"true",
           "Run the share-weight-quantization patterns">,
    Option<"foldHadamard", "fold-hadamard", "bool", /*default=*/"true",
           "Run the fold-hadamard patterns">,
    Option<"fuseOutputAmax", "fuse-output-amax", "bool", /*default=*/"true",
           "Run the fuse-output-amax patterns">,
    Option<"fuseEpilogueQuantization", "fuse-epilogue-quantization", "bool",
           /*default=*/"true",
           "Run the fuse-epilogue-quantization patterns">,
    Option<"fuseDualQuantization", "fuse-dual-quantization", "bool",
           /*default=*/"true",
           "Run the fuse-dual-quantization patterns">,
    Option<"shareQuantization", "share-quantization", "bool",
           /*default=*/"true", "Run the share-quantization patterns">,
    Option<"removeDead", "remove-dead", "bool", /*default=*/"true",
           "Erase dead quantizations">,
    Option<"reportCounts", "report-counts", "bool", /*default=*/"false",
           "Emit a remark per function with what each fusion did">,
  ];
  let statistics = [
    Statistic<"numSharedAmax", "shared-amax",
              "Quantizations given a shared nvfp4.amax">,
    Statistic<"numSharedWeightQuantizations", "shared-weight-quantizations",
              "16x16 quantizations replaced by the transpose of another">,
    Statistic<"numFoldedHadamards", "folded-hadamards",
              "RHTs folded into the quantizations that consume them">,
    Statistic<"numFusedOutputAmaxes", "fused-output-amaxes",
              "Quantizations whose amax comes from the producer's epilogue">,
    Statistic<"numFusedEpilogueQuantizations", "fused-epilogue-quantizations",
              "Quantizations moved whole into their GEMM's epilogue">,
    Statistic<"numFusedDualQuantizations", "fused-dual-quantizations",
              "Rowwise + columnwise quantization pairs made one "
              "nvfp4.dual_quantize">,
    Statistic<"numSharedQuantizations", "shared-quantizations",
              "Quantizations replaced by an earlier equal one">,
    Statistic<"numDeadOpsRemoved", "dead-ops-removed",
              "Dead quantize/amax/hadamard/pack/unpack ops erased">,
  ];
}

#endif // NVFP4_DIALECT_NVFP4_TRANSFORMS_PASSES_TD
