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

def ConvertNVFP4ToGPU : Pass<"convert-nvfp4-to-gpu", "ModuleOp"> {
  let summary = "Lower nvfp4 ops to GPU kernels and host-side launches for "
                "one chip";
  let description = [{
    Replaces every nvfp4 op by launches (`gpu.launch_func`) of kernels that
    it generates into a `gpu.module @nvfp4_kernels`, specialized for the
    static shapes of the op and for `chip`:

    * `nvfp4.amax`: a grid-stride max-reduction (NaN skipped) finished by
      warp shuffles and one integer atomic max per warp on the FP32 bits;
    * `nvfp4.quantize`: a persistent kernel (a grid the size of the chip
      walks the tensor, every thread loading its next work unit before it
      computes the current one): two 16-element runs a thread for 1x16
      blocks, one row of a 16x16 tile a thread for 16x16 blocks (the tile
      amax reduced across 16 lanes; with an `nvfp4.transpose` of the result
      in the same function, the kernel also writes the transposed copy,
      the tile's codes transposed across its lanes). The block scale is
      `cvt.rn.satfinite.e4m3x2` and a lookup in a shared-memory table of
      the 127 encode factors of the tensor; an amax that is an argument of
      the host function is a kernel parameter. E2M1 rounding uses
      `cvt.rn.satfinite.e2m1x2.f32` where the chip has it (sm_100a,
      sm_103a, sm_120a) and exact integer/float emulation elsewhere
      (sm_90a); stochastic rounding uses `cvt.rs.satfinite.e2m1x4.f32` on
      sm_100a/sm_103a and the software formula of docs/Numerics.md on
      sm_120a/sm_90a, with the same Philox4x32-10 bits everywhere;
    * `nvfp4.quantize` (1x16, round to nearest, linear scales, amax given)
      of an elementwise linalg op's result that nothing else reads: one
      kernel computes the op's points 16 at a time and writes the codes
      and scales; the result is never stored (ProducerQuantize.cpp);
    * `nvfp4.hadamard`, `nvfp4.dequantize`: one thread per 16 elements
      (the RHT as the register butterfly of NUMERICS.md section 4, also
      where it is fused into an amax or a quantization);
    * `nvfp4.transpose` of a tensor quantized elsewhere: a half warp per
      16x16 tile transposes the tile's codes by shuffles; the first lane
      moves the tile scale; the amax buffer is shared with the input.

    On the host a block-scaled value becomes three device buffers (packed
    E2M1 codes, two per byte with the even element in the low nibble; E4M3
    scale bytes in the type's layout; the FP32 amax as its i32 bits).
    Kernels take bare pointers, so a runtime launches them from a manifest
    (`nvfp4-compile --report`). Every quantity is computed in the order of
    docs/Numerics.md, without fast-math, so the bytes equal the reference
    lowering's.

    An op or a configuration the chip cannot run is a diagnostic.
  }];
  let options = [
    Option<"chip", "chip", "std::string", /*default=*/"\"sm_103a\"",
           "Target GPU: sm_103a (GB300, the default of every nvfp4 tool), "
           "sm_100a, sm_120a or sm_90a">,
    Option<"gemmSchedule", "gemm-schedule", "std::string", /*default=*/"",
           "Force the tensor-core GEMM schedule, e.g. 128x256x256_s2_d2w1_p8 "
           "(tile, FP4 stages, decoded stages and decoder warpgroups, "
           "persistent with its raster group) or 128x128_s4; default: the "
           "lowering's choice for the shape and chip (docs/GemmKernels.md)">,
    Option<"quantizeSchedule", "quantize-schedule", "std::string",
           /*default=*/"",
           "Force parts of the quantize kernels' schedule, joined by '_': "
           "first how the 16x16 and dual kernels read their input, "
           "'registers' (each thread's next rows in registers) or 'ring2' to "
           "'ring4' (a ring of that many 64 x 128-element regions in shared "
           "memory filled by cp.async), then any of 'grid<N>' (N persistent "
           "blocks), 'blocks<N>' (blocks a multiprocessor, 1-8), 'mulwide' "
           "or 'mulsplit' (Philox products as one mul.wide.u32 or as "
           "mul.hi + mul.lo), 'signlegacy' (signs in each value's magic "
           "number instead of sign words), 'runs<N>' (runs of 16 a work "
           "unit of the 1x16 kernels, 1 or 2), 'rolled' (the dual "
           "kernels' two tile rows in a loop instead of unrolled) and "
           "'fmaforms' or 'aluforms' (the emulation's FMA-pipe forms -- "
           "integer BF16 extension, mul.hi binades, codes packed by "
           "multiply-adds -- or the session-9 ones); default: ring2 for the "
           "16x16 kernels and for the duals rounding to nearest on both sides, "
           "registers for the other duals and where a ring does not fit the "
           "chip; wide products in the 1x16 kernels only; sign words for "
           "BF16 and F16 inputs; two runs a work unit; the FMA-pipe forms "
           "in all but the 16x16 kernels">,
    Option<"mxGemm", "mx-gemm", "std::string", /*default=*/"",
           "Force the MX GEMM's kernel: 'simt' (the portable kernel, "
           "bit-exact with the reference) or 'tensor-core' (sm_90a: both "
           "operands decoded into BF16, then the wgmma GEMM; sm_100a / "
           "sm_103a: tcgen05 kind::mxf8f6f4 / kind::mxf4; sm_120a: "
           "mma.sync with the same kinds); default: the tensor cores, on "
           "sm_90a from 2^22 multiply-adds">,
  ];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::bufferization::BufferizationDialect",
    "::mlir::gpu::GPUDialect",
    "::mlir::linalg::LinalgDialect",
    // The BF16 GEMM plans describe their operands with block-scaled types.
    "::mlir::nvfp4::NVFP4Dialect",
    "::mlir::math::MathDialect",
    "::mlir::memref::MemRefDialect",
    "::mlir::NVVM::NVVMDialect",
    "::mlir::nvgpu::NVGPUDialect",
    "::mlir::scf::SCFDialect",
    "::mlir::tensor::TensorDialect",
    "::mlir::vector::VectorDialect",
  ];
}

def ConvertNVFP4KernelsToNVVM
    : Pass<"convert-nvfp4-kernels-to-nvvm", "::mlir::gpu::GPUModuleOp"> {
  let summary = "Lower generated kernels to the LLVM and NVVM dialects, "
                "keeping math in hardware instructions";
  let description = [{
    `convert-gpu-to-nvvm` with two differences that the bit-exact kernels
    need: math ops (`math.absf`, `math.floor`, `math.roundeven`,
    `math.fma`, `math.copysign`) become LLVM intrinsics, i.e. single PTX
    instructions (`abs.f32`, `cvt.rmi`, `cvt.rni`, `fma.rn`), instead of
    libdevice calls that would have to be linked in; and memrefs are passed
    as bare pointers, so a runtime can launch a kernel from its manifest.
    Expects `scf` already lowered to `cf`.
  }];
  let dependentDialects = [
    "::mlir::LLVM::LLVMDialect",
    "::mlir::NVVM::NVVMDialect",
  ];
}

def NVFP4VerifyKernelTarget
    : Pass<"nvfp4-verify-kernel-target", "::mlir::gpu::GPUModuleOp"> {
  let summary = "Diagnose NVVM operations of generated kernels that the "
                "target chip cannot run";
  let description = [{
    LLVM's NVPTX backend answers an instruction the target lacks with a
    fatal "Cannot select" (a process exit), and MLIR 22.1.8's own target
    check (`#nvvm.target` verification) both misses ops without an SM trait
    (`nvvm.mma.block_scale`) and rejects every `tcgen05.*` op on sm_103a,
    which PTX ISA 8.8, LLVM 22 and ptxas 13.0 accept. This pass runs in
    front of translation (nvfp4-compile, nvfp4-to-ptx) and decides with the
    chip table (include/nvfp4/Target/Chip.h):

    1. an op of an instruction family the table knows (`tcgen05.*`,
       `mma.block_scale`, `wgmma.*`, `cp.async.bulk.*`, the E2M1
       conversions) is legal when the chip has that family;
    2. any other op carrying `NVVMRequiresSM`/`NVVMRequiresSMa` is legal
       when its required SM matches the chip.

    With `attach-target`, the pass then attaches the `#nvvm.target` that
    `gpu-module-to-binary` serializes with, `verifyTarget = false` (this
    pass is the check), which is how nvfp4-to-ptx reaches PTX for sm_103a.

    Example, an sm_120a instruction in a kernel for sm_100a:

    ```
    error: 'nvvm.mma.block_scale' op needs mma.sync.m16n8k64.kind::mxf4nvf4.block_scale, which sm_100a does not have
    ```
  }];
  let options = [
    Option<"chip", "chip", "std::string", /*default=*/"\"sm_103a\"",
           "Target GPU: sm_103a (GB300, the default of every nvfp4 tool), "
           "sm_100a, sm_120a or sm_90a">,
    Option<"attachTarget", "attach-target", "bool", /*default=*/"false",
           "Then attach the #nvvm.target this check stands in for (chip, "
           "the table's PTX features, O3), with MLIR's own SM check off, "
           "for gpu-module-to-binary">,
  ];
}

def NVFP4FreeDeviceBuffers
    : Pass<"nvfp4-free-device-buffers", "::mlir::func::FuncOp"> {
  let summary = "Free every device buffer the host code allocates and does "
                "not return";
  let description = [{
    `convert-nvfp4-to-gpu` allocates a device buffer (`gpu.alloc`) for every
    intermediate (codes, scales, amax, scratch) and frees none: each call of
    the host function would leak them. This pass inserts a `gpu.dealloc`
    after the last use of each allocation in its block, following the
    buffer through views (`memref.collapse_shape`, `expand_shape`, `cast`,
    `subview`), `bufferization.to_tensor` and tensor-map creation
    (`nvgpu.tma.create_descriptor`) to its last kernel launch, fill, copy,
    load or store. A buffer that reaches `func.return` belongs to the caller
    (the manifest's results) and one used by anything else (a call, an op
    the pass does not know) is left alone: leaking is safe, freeing a
    buffer still in use is not. Synchronous host code only: an allocation
    with async dependencies is left alone.

    ```mlir
    %a = gpu.alloc () : memref<1xi32>
    gpu.launch_func @k::@amax ... args(%x : memref<2048xbf16>, %a : memref<1xi32>)
    gpu.launch_func @k::@quantize ... args(..., %a : memref<1xi32>, ...)
    // inserted:
    gpu.dealloc %a : memref<1xi32>
    ```
  }];
  let dependentDialects = ["::mlir::gpu::GPUDialect"];
}

def NVFP4TensorMapsAsPointers
    : Pass<"nvfp4-tensor-maps-as-pointers", "::mlir::func::FuncOp"> {
  let summary = "Pass the device pointers of TMA tensor maps to kernel "
                "launches (host code, for upstream's gpu-to-llvm)";
  let description = [{
    On the host, `convert-nvgpu-to-nvvm` turns `nvgpu.tma.create_descriptor`
    into a call of upstream's `mgpuTensorMapEncodeTiledMemref`, which
    encodes the 128-byte CUtensorMap and returns its copy in device memory
    as an `!llvm.ptr`; the `gpu.launch_func` operands that took the
    descriptor are left reading it through an
    `unrealized_conversion_cast` back to `!nvgpu.tensormap.descriptor`, a
    type `gpu-to-llvm` cannot convert ("failed to legalize operation
    'gpu.launch_func'"). This pass makes such operands the pointer itself:
    the kernels of `convert-nvfp4-to-gpu` take a tensor map as the address
    of its 128 bytes in global memory (the manifest's "tensormap"
    parameter, what the nvfp4 runtime passes too), so the launch passes
    exactly what the kernel reads. Operands of any other origin are left
    alone. Run it between `convert-nvgpu-to-nvvm` and `gpu-to-llvm` (the
    `nvfp4-to-upstream-gpu` pipeline does).

    ```mlir
    %p = llvm.call @mgpuTensorMapEncodeTiledMemref(...) : (...) -> !llvm.ptr
    %m = builtin.unrealized_conversion_cast %p : !llvm.ptr to !nvgpu.tensormap.descriptor<...>
    gpu.launch_func @k::@gemm ... args(%m : !nvgpu.tensormap.descriptor<...>, ...)
    // becomes
    gpu.launch_func @k::@gemm ... args(%p : !llvm.ptr, ...)
    ```
  }];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect"];
}

def NVFP4LowerToUpstreamScaling
    : Pass<"nvfp4-lower-to-upstream-scaling"> {
  let summary = "Write MX quantize and dequantize in upstream's "
                "arith.scaling_truncf / arith.scaling_extf";
  let description = [{
    Rewrites `nvfp4.quantize` to an MX type (E8M0 scales, 1x32 blocks,
    linear layout) of an f32 or bf16 tensor, and `nvfp4.dequantize` of such
    a value to f32 or bf16, into upstream ops with the same bytes
    (docs/Numerics.md section 11.6):

    * quantize: the block amax (`tensor.expand_shape` to
      `[..., C/32, 32]`, `linalg.reduce` of `math.absf` / `arith.maxnumf`
      from +0), the scale rule on the bits of `v = bamax * fp32(1/max)`
      (`linalg.map`: `b <= 0x400000 ? 0 : min((b + 0x7FFFFF) >> 23, 254)`,
      the E8M0 byte of 2^ceil(log2 v)), its broadcast to every element
      (`linalg.broadcast` + `tensor.collapse_shape`),
      `arith.scaling_truncf`, and a fix-up `linalg.map` for +-Inf and NaN
      elements, whose conversion upstream leaves to the target; the result
      is `nvfp4.pack` of the codes and the scales;
    * dequantize: `nvfp4.unpack`, the broadcast, `arith.scaling_extf`.

    NVFP4 values (E4M3 scales per 16 and an FP32 tensor scale), swizzled
    scales and f16 tensors are left alone: upstream's ops cannot express
    them bit for bit (section 11.6 says why).
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::linalg::LinalgDialect",
    "::mlir::math::MathDialect",
    "::mlir::tensor::TensorDialect",
  ];
}

def NVFP4RaiseUpstreamScaling : Pass<"nvfp4-raise-upstream-scaling"> {
  let summary = "Raise arith.scaling_truncf / arith.scaling_extf to MX "
                "nvfp4.quantize / nvfp4.dequantize where they agree bit "
                "for bit";
  let description = [{
    The inverse of `nvfp4-lower-to-upstream-scaling`.
    `arith.scaling_extf` of MX element codes (f8E4M3FN, f8E5M2, f4E2M1FN)
    to f32 or bf16 with one f8E8M0FNU scale per 1x32 block, broadcast along
    the last dimension, becomes `nvfp4.pack` + `nvfp4.dequantize`.
    `arith.scaling_truncf` of an f32 or bf16 tensor becomes
    `nvfp4.quantize` (and the users of its scales read them from
    `nvfp4.unpack`) when every part of its surroundings is nvfp4's: 1x32
    blocks along the last dimension; the block amax skipping NaN; the scale
    exponent rounded up (2^ceil(log2(bamax / max_elem)), not the OCP
    spec's floor); round to nearest even; and +-Inf and NaN elements
    either fixed up as the lowering does or excluded by
    `fastmath<nnan,ninf>`. docs/Numerics.md section 11.6 gives the form.
    An `nvfp4.pack` of the raised codes and scales with amax 0, and a
    dequantize of parts unpacked from one MX value, use that value
    directly, so lowering and raising give back the original ops.

    Anything else is left as it is. With `emit-remarks`, each scaling op
    left unchanged gets a remark with the first difference found, e.g.

    ```
    remark: left unchanged: the scale exponent is rounded down (arith.truncf to f8E8M0FNU keeps the exponent bits: floor(log2 v), the OCP MX rule); ...
    ```
  }];
  let options = [
    Option<"emitRemarks", "emit-remarks", "bool", /*default=*/"false",
           "Emit a remark on every arith.scaling_truncf / scaling_extf "
           "that is not raised, saying why">,
  ];
  let dependentDialects = ["::mlir::nvfp4::NVFP4Dialect"];
}

def NVFP4ExpandSmallFloatCasts : Pass<"nvfp4-expand-small-float-casts"> {
  let summary = "Lower scalar casts to and from f8E4M3FN, f8E5M2, f4E2M1FN "
                "and f8E8M0FNU to bit-exact integer code";
  let description = [{
    Part of `nvfp4-reference-pipeline`, after the loops are formed:
    scalar `arith.scaling_truncf` / `arith.scaling_extf` are expanded as
    upstream defines them (extf of the scale, divf or mulf, truncf), and
    scalar `arith.truncf` (round to nearest even) / `arith.extf` between
    f32, bf16 or f16 and those types become the integer code of the
    numerics library's conversions (RNE, satfinite, NaN as
    docs/Numerics.md 11.1, E8M0 0x00 = 2^-127). Upstream's LLVM lowering
    has no code for the FP8 ones, and arith-expand's f4E2M1FN and
    f8E8M0FNU code differs from the types' definitions (section 11.6).
    Truncations with another rounding mode are left alone.
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::math::MathDialect",
  ];
}

#endif // NVFP4_CONVERSION_PASSES_TD
