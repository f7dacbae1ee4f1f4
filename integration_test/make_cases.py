#!/usr/bin/python3
"""Builds the GPU integration cases on the development machine.

For each case: an nvfp4 MLIR program with static shapes, its kernels
compiled by nvfp4-compile for one chip (cubin + JSON report), the input
data and the bytes the C++ numerics library (the nvfp4 Python module)
expects. run_cases.py executes the kernels on a GPU and compares.

  PYTHONPATH=build/python_packages /usr/bin/python3 \
      integration_test/make_cases.py --build build --chip sm_90a --out DIR
"""
import argparse
import json
import os
import subprocess
import sys
import zlib

import numpy as np

import nvfp4


def bf16_bits(x):
    """float32 array -> uint16 BF16 bits (round to nearest even)."""
    u = x.astype(np.float32).view(np.uint32).astype(np.uint64)
    rounded = (u + 0x7FFF + ((u >> 16) & 1)) >> 16
    return rounded.astype(np.uint16)


def bf16_values(bits):
    return (bits.astype(np.uint32) << 16).view(np.float32)


def make_input(shape, seed, edge=False):
    """BF16-representable data, per-16-block magnitudes from 2^-12 to 2^12."""
    rng = np.random.default_rng(seed)
    rows, cols = int(np.prod(shape[:-1])), shape[-1]
    x = rng.standard_normal((rows, cols // 16, 16)).astype(np.float32)
    x *= np.exp2(rng.integers(-12, 13, size=(rows, cols // 16, 1))).astype(np.float32)
    x = x.reshape(shape)
    if edge:
        flat = x.reshape(-1)
        flat[:16] = [np.nan, -0.0, 0.0, -1e-3, 1e4, -1e4, 0.5, -0.75,
                     1e-30, -1e-30, 3.0, -3.0, 7.0, 1.0, -2.0, 0.25]
        flat[16:32] = 0.0
        flat[32:48] = 1e-8 * np.arange(1, 17)
    bits = bf16_bits(x)
    if edge and bits.size >= 64:
        # NaNs of every kind (negative, signaling, both): amax skips them
        # and each becomes code 7 (+6), whatever its sign bit.
        flat = bits.reshape(-1)
        flat[48:52] = [0xFFC0, 0x7F81, 0xFF81, 0xFFFF]
    return bits


def as_input_type(bits, dtype):
    """BF16 bit patterns as the GPU input of element type `dtype`: "bf16"
    (the bits), "f32" (the same values) or "f16" (the same values where
    F16 holds them exactly, 0 elsewhere; the library then quantizes those
    values). Returns (device array, library input)."""
    if dtype == "bf16":
        return bits, bits
    values = bf16_values(bits)
    if dtype == "f32":
        return values, bits
    with np.errstate(over="ignore", invalid="ignore"):
        half = values.astype(np.float16)
        exact = (half.astype(np.float32) == values) | np.isnan(values)
    half = np.where(exact, half, np.float16(0.0))
    return half.view(np.uint16), bf16_bits(half.astype(np.float32))


def make_cancelling_input(shape, seed):
    """BF16 runs of 16 whose RHT sums round visibly: small values (2^-8 ..
    2^8, some FP32-subnormal-sized BF16 subnormals) and two or four copies
    of one large value +-B (2^16 .. 2^30) that cancel in many outputs, so
    the butterfly's roundings show in the BF16 results (a kernel that adds
    in another order mismatches)."""
    rng = np.random.default_rng(seed)
    runs = int(np.prod(shape)) // 16
    x = (np.exp2(rng.uniform(-8, 8, size=(runs, 16)))
         * rng.choice([-1.0, 1.0], size=(runs, 16))).astype(np.float32)
    tiny = rng.random((runs, 16)) < 0.05
    x[tiny] = np.float32(2.0 ** -130) * rng.integers(1, 8, size=tiny.sum())
    big = np.exp2(rng.integers(16, 31, size=runs)) * (
        1 + rng.integers(0, 128, size=runs) / 128)
    for r in range(runs):
        copies = rng.choice([2, 4])
        for position in rng.integers(0, 16, size=copies):
            x[r, position] = big[r] * rng.choice([-1.0, 1.0])
    return bf16_bits(x.reshape(shape))


def swizzled_scales(scales, block=(1, 16)):
    """The 128x4-swizzled layout of linear scales [batch..., rows / br,
    cols / 16]: one zero-padded matrix per batch element (16x16 scales
    replicated into their 16 rows first)."""
    scales = np.asarray(scales, np.uint8)
    per_row = np.repeat(scales, block[0], axis=-2) if block[0] == 16 else scales
    matrices = per_row.reshape(-1, per_row.shape[-2], per_row.shape[-1])
    return np.concatenate([nvfp4.swizzle_scales(np.ascontiguousarray(m))
                           for m in matrices])


def tensor_type(shape, block, swizzled):
    dims = "x".join(str(d) for d in shape)
    layout = ", layout = swizzled_128x4" if swizzled else ""
    return (f"!nvfp4.tensor<{dims}xf4E2M1FN, scale = f8E4M3FN, "
            f"block = {block[0]}x{block[1]}{layout}>")


def write_case(out, name, mlir, arrays, expected, meta, args, flags=()):
    case = os.path.join(out, name)
    os.makedirs(case, exist_ok=True)
    with open(os.path.join(case, "program.mlir"), "w") as f:
        f.write(mlir)
    compile_cmd = [os.path.join(args.build, "bin", "nvfp4-compile"),
                   os.path.join(case, "program.mlir"), "--chip=" + args.chip,
                   "--emit=cubin", "-o", os.path.join(case, "kernels.cubin"),
                   "--report=" + os.path.join(case, "report.json"), *flags]
    subprocess.run(compile_cmd, check=True)
    np.savez(os.path.join(case, "data.npz"),
             **{"in_" + k: v for k, v in arrays.items()},
             **{"want_" + k: v for k, v in expected.items()})
    with open(os.path.join(case, "meta.json"), "w") as f:
        json.dump(meta, f, indent=2)


def quantize_case(out, args, name, shape, block=(1, 16), rounding="rn",
                  seed=0, swizzled=False, edge=False, data_seed=1, amax=None,
                  dtype="bf16", constant_amax=False, flags=()):
    """nvfp4.quantize of a tensor; the amax computed (an amax pass), given
    as an argument of the function (a kernel parameter) or, with
    `constant_amax`, as a constant (a device buffer the host fills).
    `flags`: extra nvfp4-compile flags (a forced quantize schedule)."""
    device_x, x = as_input_type(make_input(shape, data_seed, edge), dtype)
    q = nvfp4.quantize(x, block=block, rounding=rounding, seed=seed, amax=amax)
    scales = q.scales
    if swizzled:
        scales = swizzled_scales(scales, block)
    dims = "x".join(str(d) for d in shape)
    t = tensor_type(shape, block, swizzled)
    sr = f" rounding<stochastic> seed(%seed)" if rounding == "sr" else ""
    given = " amax(%a)" if amax is not None else ""
    constant = ""
    if constant_amax:
        given = " amax(%c)"
        constant = f"  %c = arith.constant {float(amax)!r} : f32\n"
    mlir = (f"func.func @main(%x: tensor<{dims}x{dtype}>, %seed: i64, %a: f32) -> {t} {{\n"
            f"{constant}"
            f"  %q = nvfp4.quantize %x{given}{sr} : tensor<{dims}x{dtype}> -> {t}\n"
            f"  return %q : {t}\n}}\n")
    write_case(out, name, mlir, {"x": device_x},
               {"codes": q.packed.reshape(-1),
                "scales": np.asarray(scales, np.uint8).reshape(-1),
                "amax": np.array([q.amax], np.float32).view(np.uint32)},
               {"kind": "quantize", "args": ["x", "seed", "a"],
                "scalars": {"seed": seed,
                            "a": float(amax) if amax is not None else 0.0},
                "results": ["codes", "scales", "amax"]}, args, flags)


def rht_quantize_case(out, args, name, shape, rounding="sr", seed=0,
                      edge=False, amax=None, data_seed=3, cancel=False,
                      flags=()):
    """nvfp4.hadamard followed by its only user, a 1x16 quantization: the
    compiler fuses them (one RHT + amax pass, one RHT + quantize kernel);
    the bytes must equal the library's quantize(hadamard(x))."""
    x = (make_cancelling_input(shape, data_seed) if cancel
         else make_input(shape, data_seed, edge))
    h = nvfp4.hadamard(x)
    q = nvfp4.quantize(h, rounding=rounding, seed=seed, amax=amax)
    dims = "x".join(str(d) for d in shape)
    t = tensor_type(shape, (1, 16), False)
    sr = f" rounding<stochastic> seed(%seed)" if rounding == "sr" else ""
    given = " amax(%a)" if amax is not None else ""
    mlir = (f"func.func @main(%x: tensor<{dims}xbf16>, %seed: i64, %a: f32) -> {t} {{\n"
            f"  %h = nvfp4.hadamard %x : tensor<{dims}xbf16>\n"
            f"  %q = nvfp4.quantize %h{given}{sr} : tensor<{dims}xbf16> -> {t}\n"
            f"  return %q : {t}\n}}\n")
    write_case(out, name, mlir, {"x": x},
               {"codes": q.packed.reshape(-1),
                "scales": np.asarray(q.scales, np.uint8).reshape(-1),
                "amax": np.array([q.amax], np.float32).view(np.uint32)},
               {"kind": "rht_quantize", "args": ["x", "seed", "a"],
                "scalars": {"seed": seed,
                            "a": float(amax) if amax is not None else 0.0},
                "results": ["codes", "scales", "amax"]}, args, flags)


def dual_quantize_case(out, args, name, shape, rounding="rn",
                       col_rounding="rn", seed=0, col_seed=0, rht=True,
                       amax=None, col_amax=None, dtype="bf16", swizzled=False,
                       col_swizzled=False, edge=False, cancel=False,
                       data_seed=23, constant_amax=False, shared_amax=False,
                       flags=()):
    """nvfp4.dual_quantize of a tensor [batch..., M, K]: the rowwise
    quantization (blocks along K) and the columnwise one (the transpose,
    blocks along M, after the RHT with `rht`) from one kernel; both must
    equal the library's quantizations of x and of x^T (transposed here).
    Amaxes computed (one pass for both), given as function arguments
    (kernel parameters), with `constant_amax` as constants, or with
    `shared_amax` one nvfp4.amax of x for both parts (the kernel copies it
    into the columnwise result's own buffer)."""
    bits = (make_cancelling_input(shape, data_seed) if cancel
            else make_input(shape, data_seed, edge))
    device_x, x = as_input_type(bits, dtype)
    if shared_amax:
        amax = col_amax = np.float32(nvfp4.quantize(x).amax)
    row = nvfp4.quantize(x, rounding=rounding, seed=seed, amax=amax)
    xt = np.ascontiguousarray(np.swapaxes(x, -1, -2))
    if rht:
        xt = nvfp4.hadamard(xt)
    col = nvfp4.quantize(xt, rounding=col_rounding, seed=col_seed,
                         amax=col_amax)
    tshape = shape[:-2] + (shape[-1], shape[-2])
    dims = "x".join(str(d) for d in shape)
    tr = tensor_type(shape, (1, 16), swizzled)
    tc = tensor_type(tshape, (1, 16), col_swizzled)
    constants = ""

    def part(prefix, given, value, stochastic, seed_name):
        nonlocal constants
        text = ""
        if given is not None:
            if shared_amax:
                text += " amax(%m)"
            elif constant_amax:
                constants += (f"  %{value}c = arith.constant "
                              f"{float(given)!r} : f32\n")
                text += f" amax(%{value}c)"
            else:
                text += f" amax(%{value})"
        if prefix == "columnwise" and rht:
            text += " hadamard(55272)"
        if stochastic:
            text += f" rounding<stochastic> seed(%{seed_name})"
        return text

    if shared_amax:
        constants += f"  %m = nvfp4.amax %x : tensor<{dims}x{dtype}>\n"
    row_part = part("rowwise", amax, "a", rounding == "sr", "s0")
    col_part = part("columnwise", col_amax, "b", col_rounding == "sr", "s1")
    mlir = (f"func.func @main(%x: tensor<{dims}x{dtype}>, %s0: i64, %s1: i64, "
            f"%a: f32, %b: f32) -> ({tr}, {tc}) {{\n"
            f"{constants}"
            f"  %r, %c = nvfp4.dual_quantize %x{row_part} columnwise{col_part}"
            f" : tensor<{dims}x{dtype}> -> {tr}, {tc}\n"
            f"  return %r, %c : {tr}, {tc}\n}}\n")

    def scales_of(q, is_swizzled):
        if is_swizzled:
            return swizzled_scales(q.scales)
        return np.asarray(q.scales, np.uint8).reshape(-1)

    write_case(out, name, mlir, {"x": device_x},
               {"codes": row.packed.reshape(-1),
                "scales": scales_of(row, swizzled),
                "amax": np.array([row.amax], np.float32).view(np.uint32),
                "t_codes": col.packed.reshape(-1),
                "t_scales": scales_of(col, col_swizzled),
                "t_amax": np.array([col.amax], np.float32).view(np.uint32)},
               {"kind": "dual_quantize", "args": ["x", "s0", "s1", "a", "b"],
                "scalars": {"s0": seed, "s1": col_seed,
                            "a": float(amax) if amax is not None else 0.0,
                            "b": float(col_amax) if col_amax is not None
                            else 0.0},
                "results": ["codes", "scales", "amax", "t_codes", "t_scales",
                            "t_amax"]}, args, flags)
    kernels = case_kernels(out, name)
    if kernels is not None and (
            not kernels[-1].startswith("nvfp4_dual_quantize_") or
            len(kernels) > 2):
        raise SystemExit(f"{name}: not one amax pass and one dual quantize "
                         f"kernel: {kernels}")


def training_operands_case(out, args, name, tokens, features, seeds):
    """The X and dY operands of a linear layer's training step as
    nvfp4-apply-recipe writes them -- X (RN) and the RHT of X^T (RN); dY (SR)
    and the RHT of dY^T (SR), each as a quantization of a linalg.transpose
    -- which nvfp4-compile's nvfp4-fuse-quantization turns into one dual
    quantization each: two amax passes and two dual kernels, no transpose.
    Every byte must equal the library's."""
    x = make_input((tokens, features), 29)
    dy = make_input((tokens, features), 31, edge=True)
    want = {}
    for label, data, rounding, (s_row, s_col) in (
            ("x", x, "rn", (0, 0)), ("dy", dy, "sr", seeds)):
        row = nvfp4.quantize(data, rounding=rounding, seed=s_row)
        col = nvfp4.quantize(nvfp4.hadamard(np.ascontiguousarray(data.T)),
                             rounding=rounding, seed=s_col)
        for prefix, q in ((label + "_", row), (label + "_t_", col)):
            want[prefix + "codes"] = q.packed.reshape(-1)
            want[prefix + "scales"] = np.asarray(q.scales, np.uint8).reshape(-1)
            want[prefix + "amax"] = np.array([q.amax], np.float32).view(np.uint32)
    t, f = tokens, features
    tr = tensor_type((t, f), (1, 16), False)
    tc = tensor_type((f, t), (1, 16), False)
    mlir = (f"func.func @main(%x: tensor<{t}x{f}xbf16>, %dy: tensor<{t}x{f}xbf16>, "
            f"%s0: i64, %s1: i64) -> ({tr}, {tc}, {tr}, {tc}) {{\n"
            f"  %qx = nvfp4.quantize %x : tensor<{t}x{f}xbf16> -> {tr}\n"
            f"  %e0 = tensor.empty() : tensor<{f}x{t}xbf16>\n"
            f"  %xt = linalg.transpose ins(%x : tensor<{t}x{f}xbf16>) "
            f"outs(%e0 : tensor<{f}x{t}xbf16>) permutation = [1, 0]\n"
            f"  %hx = nvfp4.hadamard %xt : tensor<{f}x{t}xbf16>\n"
            f"  %qxt = nvfp4.quantize %hx : tensor<{f}x{t}xbf16> -> {tc}\n"
            f"  %qdy = nvfp4.quantize %dy rounding<stochastic> seed(%s0) : "
            f"tensor<{t}x{f}xbf16> -> {tr}\n"
            f"  %e1 = tensor.empty() : tensor<{f}x{t}xbf16>\n"
            f"  %dyt = linalg.transpose ins(%dy : tensor<{t}x{f}xbf16>) "
            f"outs(%e1 : tensor<{f}x{t}xbf16>) permutation = [1, 0]\n"
            f"  %hdy = nvfp4.hadamard %dyt : tensor<{f}x{t}xbf16>\n"
            f"  %qdyt = nvfp4.quantize %hdy rounding<stochastic> seed(%s1) : "
            f"tensor<{f}x{t}xbf16> -> {tc}\n"
            f"  return %qx, %qxt, %qdy, %qdyt : {tr}, {tc}, {tr}, {tc}\n}}\n")
    results = [p + part for p in ("x_", "x_t_", "dy_", "dy_t_")
               for part in ("codes", "scales", "amax")]
    write_case(out, name, mlir, {"x": x, "dy": dy}, want,
               {"kind": "training_operands", "args": ["x", "dy", "s0", "s1"],
                "scalars": {"s0": seeds[0], "s1": seeds[1]},
                "results": results}, args)
    kernels = case_kernels(out, name)
    if kernels is not None and (
            sum(k.startswith("nvfp4_dual_quantize_amax_") for k in kernels) != 2
            or len(kernels) != 4):
        raise SystemExit(f"{name}: the quantization pairs were not fused "
                         f"into dual quantizations: {kernels}")


def hadamard_case(out, args, name, shape, cancel=False):
    x = make_cancelling_input(shape, 7) if cancel else make_input(shape, 7)
    want = nvfp4.hadamard(x)
    dims = "x".join(str(d) for d in shape)
    mlir = (f"func.func @main(%x: tensor<{dims}xbf16>) -> tensor<{dims}xbf16> {{\n"
            f"  %h = nvfp4.hadamard %x : tensor<{dims}xbf16>\n"
            f"  return %h : tensor<{dims}xbf16>\n}}\n")
    write_case(out, name, mlir, {"x": x}, {"y": np.asarray(want).reshape(-1)},
               {"kind": "hadamard", "args": ["x"], "results": ["y"]}, args)


def dequantize_case(out, args, name, shape, block):
    x = make_input(shape, 11, edge=True)
    q = nvfp4.quantize(x, block=block)
    want = nvfp4.dequantize(q).astype(np.float32)
    dims = "x".join(str(d) for d in shape)
    t = tensor_type(shape, block, False)
    mlir = (f"func.func @main(%x: tensor<{dims}xbf16>) -> tensor<{dims}xf32> {{\n"
            f"  %q = nvfp4.quantize %x : tensor<{dims}xbf16> -> {t}\n"
            f"  %d = nvfp4.dequantize %q : {t} -> tensor<{dims}xf32>\n"
            f"  return %d : tensor<{dims}xf32>\n}}\n")
    write_case(out, name, mlir, {"x": x},
               {"y": want.reshape(-1).view(np.uint32)},
               {"kind": "dequantize", "args": ["x"], "results": ["y"]}, args)


MX_ELEMENTS = {"mxfp8_e4m3": "f8E4M3FN", "mxfp8_e5m2": "f8E5M2",
               "mxfp4": "f4E2M1FN"}


def mx_tensor_type(shape, format, swizzled):
    dims = "x".join(str(d) for d in shape)
    layout = ", layout = swizzled_128x4" if swizzled else ""
    return (f"!nvfp4.tensor<{dims}x{MX_ELEMENTS[format]}, scale = f8E8M0FNU, "
            f"block = 1x32{layout}>")


def make_mx_input(shape, seed, edge=False, exponents=(-140, 120)):
    """BF16 data for the MX formats: per-32-block magnitudes from 2^-140 to
    2^120 (scales near both ends of E8M0, BF16 subnormals, blocks that
    flush to zero) and, with `edge`, make_input's edge values plus +-Inf,
    an all-zero block and a block of one huge value among tiny ones."""
    rng = np.random.default_rng(seed)
    rows, cols = int(np.prod(shape[:-1])), shape[-1]
    x = rng.standard_normal((rows, cols // 32, 32)).astype(np.float32)
    lo, hi = exponents
    x *= np.exp2(rng.integers(lo, hi + 1, size=(rows, cols // 32, 1))).astype(np.float32)
    bits = bf16_bits(x.reshape(shape))
    if edge:
        flat = bits.reshape(-1)
        flat[:64] = make_input((64,), seed, edge=True).reshape(-1)
        flat[64:68] = [0x7F80, 0xFF80, 0x3F80, 0xBF80]  # +Inf, -Inf, 1, -1
        flat[96:128] = 0
        flat[128:160] = bf16_bits(np.float32(1e-30) * np.arange(1, 33))
        flat[130] = 0x7F7F  # the largest finite BF16
    return bits


def mx_quantize_case(out, args, name, shape, format, swizzled=False,
                     edge=False, dtype="bf16", data_seed=21):
    """nvfp4.quantize to an MX format (MXKernels.cpp): codes (MXFP8 one
    byte an element, MXFP4 packed), E8M0 scales, and an amax part of 0."""
    # F16 holds 2^-24 .. 65504: keep the data in its range.
    exponents = (-20, 12) if dtype == "f16" else (-140, 120)
    device_x, x = as_input_type(make_mx_input(shape, data_seed, edge,
                                              exponents), dtype)
    q = nvfp4.quantize(x, format=format)
    codes = q.packed if format == "mxfp4" else q.codes
    scales = np.asarray(q.scales, np.uint8)
    if swizzled:
        scales = swizzled_scales(scales, (1, 32))
    dims = "x".join(str(d) for d in shape)
    t = mx_tensor_type(shape, format, swizzled)
    mlir = (f"func.func @main(%x: tensor<{dims}x{dtype}>) -> {t} {{\n"
            f"  %q = nvfp4.quantize %x : tensor<{dims}x{dtype}> -> {t}\n"
            f"  return %q : {t}\n}}\n")
    write_case(out, name, mlir, {"x": device_x},
               {"codes": np.asarray(codes, np.uint8).reshape(-1),
                "scales": scales.reshape(-1),
                "amax": np.zeros(1, np.uint32)},
               {"kind": "quantize", "args": ["x"],
                "results": ["codes", "scales", "amax"]}, args)


def mx_dequantize_case(out, args, name, shape, format, result="f32",
                       swizzled=False, edge=True):
    """nvfp4.dequantize of an MX quantization on the GPU: f32 results
    compared bit for bit, except that any NaN matches any NaN (the GPU's
    multiply returns the canonical NaN), or BF16 ones rounded to nearest
    even here from the library's f32 values (no NaN in the data)."""
    x = make_mx_input(shape, 23, edge)
    q = nvfp4.quantize(x, format=format)
    want = nvfp4.dequantize(q).astype(np.float32).reshape(-1)
    if result == "bf16":
        assert not np.isnan(want).any()
        want = bf16_bits(want)
    else:
        want = want.view(np.uint32)
    dims = "x".join(str(d) for d in shape)
    t = mx_tensor_type(shape, format, swizzled)
    mlir = (f"func.func @main(%x: tensor<{dims}xbf16>) -> tensor<{dims}x{result}> {{\n"
            f"  %q = nvfp4.quantize %x : tensor<{dims}xbf16> -> {t}\n"
            f"  %d = nvfp4.dequantize %q : {t} -> tensor<{dims}x{result}>\n"
            f"  return %d : tensor<{dims}x{result}>\n}}\n")
    write_case(out, name, mlir, {"x": x}, {"y": want},
               {"kind": "dequantize", "args": ["x"], "results": ["y"],
                "result_type": result,
                "any_nan": ["y"] if result == "f32" else []}, args)


def mx_matmul_case(out, args, name, m, n, k, format_a, format_b=None,
                   alpha=1.0, swizzled_b=False, result="f32", batch=None,
                   kernel=None, exponents=(-20, 20), exact=False):
    """An MX GEMM on the GPU compared with the library's scaledMatmulMX (per
    batch element for batched shapes). `kernel` forces nvfp4-compile's
    --mx-gemm: "simt" (docs/Numerics.md 11.4's order: bit for bit) or
    "tensor-core" (sm_90a: exact BF16 decode + wgmma, another summation
    order: within MATMUL_TOLERANCE, or bit for bit with `exact`, where the
    data keep every partial sum exact in FP32 so that no order rounds:
    `exponents` None, small integers);
    None: the lowering's rule. The kernels the case got are checked."""
    format_b = format_b or format_a
    lead = (batch,) if batch else ()
    if exponents is None:
        # Small integers: every product and partial sum is exact in FP32.
        a = bf16_bits(np.random.default_rng(31).integers(
            -4, 5, lead + (m, k)).astype(np.float32))
        b = bf16_bits(np.random.default_rng(32).integers(
            -4, 5, lead + (n, k)).astype(np.float32))
    else:
        a = make_mx_input(lead + (m, k), 31, exponents=exponents)
        b = make_mx_input(lead + (n, k), 32, exponents=exponents)
    qa = nvfp4.quantize(a, format=format_a)
    qb = nvfp4.quantize(b, format=format_b)
    if batch:
        want = np.stack([
            np.asarray(nvfp4.scaled_matmul(
                nvfp4.quantize(a[i], format=format_a),
                nvfp4.quantize(b[i], format=format_b), alpha=alpha),
                np.float32) for i in range(batch)])
    else:
        want = np.asarray(nvfp4.scaled_matmul(qa, qb, alpha=alpha), np.float32)
    ta = mx_tensor_type(lead + (m, k), format_a, False)
    tb = mx_tensor_type(lead + (n, k), format_b, swizzled_b)
    dims = lambda *d: "x".join(str(x) for x in lead + d)
    mlir = (f"func.func @main(%a: tensor<{dims(m, k)}xbf16>, "
            f"%b: tensor<{dims(n, k)}xbf16>, %alpha: f32) -> "
            f"tensor<{dims(m, n)}x{result}> {{\n"
            f"  %qa = nvfp4.quantize %a : tensor<{dims(m, k)}xbf16> -> {ta}\n"
            f"  %qb = nvfp4.quantize %b : tensor<{dims(n, k)}xbf16> -> {tb}\n"
            f"  %c = nvfp4.scaled_matmul %qa, %qb alpha(%alpha) : {ta}, {tb}"
            f" -> tensor<{dims(m, n)}x{result}>\n"
            f"  return %c : tensor<{dims(m, n)}x{result}>\n}}\n")
    if result == "bf16":
        assert not np.isnan(want).any()
        want_bytes = bf16_bits(want).reshape(-1)
    else:
        want_bytes = want.reshape(-1).view(np.uint32)
    tensor_cores = kernel == "tensor-core" or (
        kernel is None and args.chip == "sm_90a" and
        (batch or 1) * m * n * k >= MX_TENSOR_CORE_MIN_MULTIPLY_ADDS)
    meta = {"kind": "matmul", "args": ["a", "b", "alpha"],
            "scalars": {"alpha": alpha}, "results": ["c"],
            "result_type": result}
    if tensor_cores and exact:
        # The claim that makes bit-exactness order-independent: the
        # library's result is the exact product of the dequantized operands.
        da = np.asarray(nvfp4.dequantize(qa), np.float64)
        db = np.asarray(nvfp4.dequantize(qb), np.float64)
        exact_product = alpha * (np.einsum("bmk,bnk->bmn", da, db) if batch
                                 else da @ db.T)
        if not np.array_equal(exact_product, want.astype(np.float64)):
            raise SystemExit(f"{name}: the data do not keep the sums exact")
    elif tensor_cores:
        meta["tolerance"] = MATMUL_TOLERANCE
    write_case(out, name, mlir, {"a": a, "b": b}, {"c": want_bytes}, meta,
               args, ["--mx-gemm=" + kernel] if kernel else [])
    kernels = case_kernels(out, name)
    if kernels is not None:
        wgmma = [kk for kk in kernels if "_wgmma_" in kk]
        decodes = [kk for kk in kernels
                   if kk.startswith("nvfp4_dequantize_") and
                   kk.endswith("_to_bf16")]
        if tensor_cores != (len(wgmma) == 1 and len(decodes) >= 1):
            raise SystemExit(f"{name}: expected the "
                             f"{'tensor-core' if tensor_cores else 'SIMT'} "
                             f"MX GEMM, got {kernels}")


def weight_copies_case(out, args, name, shape, rounding="rn", seed=0,
                       flags=()):
    """A 16x16 weight quantization and its transposed copy (fprop W, dgrad
    W^T) from one kernel: both must equal the library's quantization of W
    and of W^T (the shape may be batched: the last two dimensions swap)."""
    x = make_input(shape, 17, edge=True)
    want = nvfp4.quantize(x, block=(16, 16), rounding=rounding, seed=seed)
    transposed = np.ascontiguousarray(np.swapaxes(x, -1, -2))
    if rounding == "rn":
        want_t = nvfp4.quantize(transposed, block=(16, 16))
        want_t_codes = want_t.packed.reshape(-1)
        want_t_scales = np.asarray(want_t.scales, np.uint8).reshape(-1)
    else:
        # SR codes keep their (W) element's random bits: the copy is the
        # transpose of W's codes and scales.
        codes = np.swapaxes(want.codes, -1, -2)
        codes = codes.reshape(-1, 2)
        want_t_codes = (codes[:, 0] | (codes[:, 1] << 4)).astype(np.uint8)
        want_t_scales = np.ascontiguousarray(
            np.swapaxes(np.asarray(want.scales, np.uint8), -1, -2)).reshape(-1)
    dims = "x".join(str(d) for d in shape)
    tshape = shape[:-2] + (shape[-1], shape[-2])
    t = tensor_type(shape, (16, 16), False)
    tt = tensor_type(tshape, (16, 16), False)
    sr = f" rounding<stochastic> seed(%seed)" if rounding == "sr" else ""
    mlir = (f"func.func @main(%x: tensor<{dims}xbf16>, %seed: i64) -> ({t}, {tt}) {{\n"
            f"  %q = nvfp4.quantize %x{sr} : tensor<{dims}xbf16> -> {t}\n"
            f"  %t = nvfp4.transpose %q : {t} -> {tt}\n"
            f"  return %q, %t : {t}, {tt}\n}}\n")
    amax = np.array([want.amax], np.float32).view(np.uint32)
    write_case(out, name, mlir, {"x": x},
               {"codes": want.packed.reshape(-1),
                "scales": np.asarray(want.scales, np.uint8).reshape(-1),
                "amax": amax, "t_codes": want_t_codes,
                "t_scales": want_t_scales, "t_amax": amax},
               {"kind": "weight_copies", "args": ["x", "seed"],
                "scalars": {"seed": seed},
                "results": ["codes", "scales", "amax", "t_codes", "t_scales",
                            "t_amax"]}, args, flags)
    kernels = case_kernels(out, name)
    if kernels is not None and (len(kernels) != 2 or
                                "_and_transpose" not in kernels[1]):
        raise SystemExit(f"{name}: not one quantize kernel for both copies: "
                         f"{kernels}")


def transpose_argument_case(out, args, name, shape):
    """nvfp4.transpose of a tensor that arrives quantized (codes, scales and
    amax are function arguments): the standalone transpose kernel."""
    x = make_input(shape, 19, edge=True)
    q = nvfp4.quantize(x, block=(16, 16))
    want = nvfp4.quantize(np.ascontiguousarray(np.swapaxes(x, -1, -2)),
                          block=(16, 16))
    tshape = shape[:-2] + (shape[-1], shape[-2])
    t = tensor_type(shape, (16, 16), False)
    tt = tensor_type(tshape, (16, 16), False)
    mlir = (f"func.func @main(%q: {t}) -> {tt} {{\n"
            f"  %t = nvfp4.transpose %q : {t} -> {tt}\n"
            f"  return %t : {tt}\n}}\n")
    amax = np.array([q.amax], np.float32).view(np.uint32)
    write_case(out, name, mlir,
               {"codes": q.packed.reshape(-1),
                "scales": np.asarray(q.scales, np.uint8).reshape(-1),
                "amax": amax},
               {"codes": want.packed.reshape(-1),
                "scales": np.asarray(want.scales, np.uint8).reshape(-1),
                "amax": amax},
               {"kind": "transpose", "args": ["codes", "scales", "amax"],
                "results": ["codes", "scales", "amax"]}, args)


def transpose_case(out, args, name, shape):
    """nvfp4.transpose of a 16x16-block quantization: the bytes must equal
    the library's quantization of the transposed input (a 16x16 block's
    scale is shared by the whole tile, so W^T quantizes to exactly the
    transposed codes and scales)."""
    x = make_input(shape, 13, edge=True)
    want = nvfp4.quantize(np.ascontiguousarray(x.T), block=(16, 16))
    dims = "x".join(str(d) for d in shape)
    t = tensor_type(shape, (16, 16), False)
    tt = tensor_type(shape[::-1], (16, 16), False)
    mlir = (f"func.func @main(%x: tensor<{dims}xbf16>) -> {tt} {{\n"
            f"  %q = nvfp4.quantize %x : tensor<{dims}xbf16> -> {t}\n"
            f"  %t = nvfp4.transpose %q : {t} -> {tt}\n"
            f"  return %t : {tt}\n}}\n")
    write_case(out, name, mlir, {"x": x},
               {"codes": want.packed.reshape(-1),
                "scales": np.asarray(want.scales, np.uint8).reshape(-1),
                "amax": np.array([want.amax], np.float32).view(np.uint32)},
               {"kind": "transpose", "args": ["x"],
                "results": ["codes", "scales", "amax"]}, args)


def pack_case(out, args, name, shape, block=(1, 16), swizzled=False):
    """nvfp4.pack of a tensor quantized elsewhere (codes one per byte, scales
    in the result's layout, the amax an f32 argument): the GPU value's bytes
    must be the library's packed codes, the scales and the amax bits."""
    x = make_input(shape, 17, edge=True)
    q = nvfp4.quantize(x, block=block)
    scales = np.asarray(q.scales, np.uint8)
    if swizzled:
        scales = nvfp4.swizzle_scales(scales.reshape(-1, scales.shape[-1]),
                                      block=block)
    dims = "x".join(str(d) for d in shape)
    t = tensor_type(shape, block, swizzled)
    scale_dims = ("x".join(str(d) for d in
                           ((shape[0] + 127) // 128 * 128,
                            (shape[1] // 16 + 3) // 4 * 4)) if swizzled else
                  "x".join(str(d) for d in q.scales.shape))
    mlir = (f"func.func @main(%c: tensor<{dims}xf4E2M1FN>, "
            f"%s: tensor<{scale_dims}xf8E4M3FN>, %a: f32) -> {t} {{\n"
            f"  %q = nvfp4.pack %c, %s, %a : {t}\n"
            f"  return %q : {t}\n}}\n")
    write_case(out, name, mlir,
               {"codes": np.asarray(q.codes, np.uint8).reshape(-1),
                "scales": scales.reshape(-1)},
               {"codes": q.packed.reshape(-1), "scales": scales.reshape(-1),
                "amax": np.array([q.amax], np.float32).view(np.uint32)},
               {"kind": "pack", "args": ["codes", "scales", "a"],
                "scalars": {"a": float(q.amax)},
                "results": ["codes", "scales", "amax"]}, args)


# From this many batch x M x N x K multiply-adds the lowering takes the
# tensor-core MX GEMM on sm_90a (kMXTensorCoreMinMultiplyAdds, NVFP4ToGPU.h).
MX_TENSOR_CORE_MIN_MULTIPLY_ADDS = 1 << 22

# Tensor-core GEMMs (K a multiple of 256 on sm_90a) sum in another order
# than the reference: results must be within this max-norm relative error.
MATMUL_TOLERANCE = 8e-3


def matmul_case(out, args, name, m, n, k, block_b=(16, 16), alpha=1.0,
                swizzled_b=False, result="f32", batch=None, schedule=None):
    """A quantized GEMM; `schedule` forces the tensor-core schedule
    (nvfp4-compile --gemm-schedule, docs/GemmKernels.md)."""
    lead = (batch,) if batch else ()
    a = make_input(lead + (m, k), 21)
    b = make_input(lead + (n, k), 22)
    qa = nvfp4.quantize(a)
    qb = nvfp4.quantize(b, block=block_b)
    if batch:
        # The library's GEMM is 2-D: the batched reference is the float64
        # product of the dequantized operands (dequantization is exact).
        da = np.asarray(nvfp4.dequantize(qa), np.float64)
        db = np.asarray(nvfp4.dequantize(qb), np.float64)
        want = (alpha * np.einsum("bmk,bnk->bmn", da, db)).astype(np.float32)
    else:
        want = np.asarray(nvfp4.scaled_matmul(qa, qb, alpha=alpha), np.float32)
    ta = tensor_type(lead + (m, k), (1, 16), False)
    tb = tensor_type(lead + (n, k), block_b, swizzled_b)
    dims = lambda *d: "x".join(str(x) for x in lead + d)
    mlir = (f"func.func @main(%a: tensor<{dims(m, k)}xbf16>, "
            f"%b: tensor<{dims(n, k)}xbf16>, %alpha: f32) -> "
            f"tensor<{dims(m, n)}x{result}> {{\n"
            f"  %qa = nvfp4.quantize %a : tensor<{dims(m, k)}xbf16> -> {ta}\n"
            f"  %qb = nvfp4.quantize %b : tensor<{dims(n, k)}xbf16> -> {tb}\n"
            f"  %c = nvfp4.scaled_matmul %qa, %qb alpha(%alpha) : {ta}, {tb}"
            f" -> tensor<{dims(m, n)}x{result}>\n"
            f"  return %c : tensor<{dims(m, n)}x{result}>\n}}\n")
    if result == "bf16":
        want_bytes = bf16_bits(want).reshape(-1)
    else:
        want_bytes = want.reshape(-1).view(np.uint32)
    meta = {"kind": "matmul", "args": ["a", "b", "alpha"],
            "scalars": {"alpha": alpha}, "results": ["c"],
            "result_type": result}
    if k % 256 == 0 and args.chip == "sm_90a":
        meta["tolerance"] = MATMUL_TOLERANCE
    write_case(out, name, mlir, {"a": a, "b": b}, {"c": want_bytes}, meta,
               args, schedule_flags(schedule))


def unreachable_decode_scale(rng):
    """A decode scale d that no amax reproduces through fp32(amax / 2688):
    a checkpoint's weight_scale_2 that only tensor_scale = decode keeps."""
    while True:
        d = np.float32(rng.uniform(1e-4, 1e-2))
        near = np.float32(d * np.float32(2688)).view(np.uint32)
        steps = (near.astype(np.int64) + np.arange(-64, 65)).astype(np.uint32)
        if not np.any((steps.view(np.float32) / np.float32(2688))
                      .astype(np.float32) == d):
            return d


def checkpoint_parts(rng, rows, cols):
    """Random codes, E4M3 scales (sign 0, not NaN) and an unreachable decode
    scale: a weight as a ModelOpt checkpoint stores it."""
    codes = rng.integers(0, 16, (rows, cols)).astype(np.uint8)
    scales = rng.integers(0x20, 0x50, (rows, cols // 16)).astype(np.uint8)
    return codes, scales, unreachable_decode_scale(rng)


def checkpoint_case(out, args, name, m, n, k, both_decode=False):
    """An imported checkpoint layer (docs/Checkpoints.md): the weight packed
    with tensor_scale = decode from its parts; the activation quantized
    (amax) or, with both_decode, packed with a decode scale too (alpha =
    d_A * d_B). m == 0: dequantize the weight alone (exact)."""
    rng = np.random.default_rng(zlib.crc32(name.encode()))
    codes, scales, d = checkpoint_parts(rng, n, k)
    w = nvfp4.QuantizedTensor(codes, scales, decode_scale=d)
    wt = (f"!nvfp4.tensor<{n}x{k}xf4E2M1FN, scale = f8E4M3FN, block = 1x16, "
          f"tensor_scale = decode>")
    params = (f"%wc: tensor<{n}x{k}xf4E2M1FN>, "
              f"%ws: tensor<{n}x{k // 16}xf8E4M3FN>, %wd: f32")
    arrays = {"wc": codes.reshape(-1), "ws": scales.reshape(-1)}
    scalars = {"wd": float(d)}
    pack = f"  %w = nvfp4.pack %wc, %ws, %wd : {wt}\n"
    if m == 0:
        want = nvfp4.dequantize(w).astype(np.float32)
        mlir = (f"func.func @main({params}) -> tensor<{n}x{k}xf32> {{\n"
                + pack +
                f"  %y = nvfp4.dequantize %w : {wt} -> tensor<{n}x{k}xf32>\n"
                f"  return %y : tensor<{n}x{k}xf32>\n}}\n")
        write_case(out, name, mlir, arrays,
                   {"y": want.reshape(-1).view(np.uint32)},
                   {"kind": "checkpoint", "args": ["wc", "ws", "wd"],
                    "scalars": scalars, "results": ["y"]}, args)
        return
    if both_decode:
        xc, xs, xd = checkpoint_parts(rng, m, k)
        qx = nvfp4.QuantizedTensor(xc, xs, decode_scale=xd)
        xt = (f"!nvfp4.tensor<{m}x{k}xf4E2M1FN, scale = f8E4M3FN, "
              f"block = 1x16, tensor_scale = decode>")
        head = (f"%xc: tensor<{m}x{k}xf4E2M1FN>, "
                f"%xs: tensor<{m}x{k // 16}xf8E4M3FN>, %xd: f32, ")
        make_x = f"  %xq = nvfp4.pack %xc, %xs, %xd : {xt}\n"
        arrays.update({"xc": xc.reshape(-1), "xs": xs.reshape(-1)})
        scalars["xd"] = float(xd)
        names = ["xc", "xs", "xd"]
    else:
        x = make_input((m, k), 31)
        qx = nvfp4.quantize(x)
        xt = tensor_type((m, k), (1, 16), False)
        head = f"%x: tensor<{m}x{k}xbf16>, "
        make_x = f"  %xq = nvfp4.quantize %x : tensor<{m}x{k}xbf16> -> {xt}\n"
        arrays["x"] = x
        names = ["x"]
    want = np.asarray(nvfp4.scaled_matmul(qx, w), np.float32)
    mlir = (f"func.func @main({head}{params}) -> tensor<{m}x{n}xf32> {{\n"
            + make_x + pack +
            f"  %y = nvfp4.scaled_matmul %xq, %w role<fprop> : {xt}, {wt}"
            f" -> tensor<{m}x{n}xf32>\n"
            f"  return %y : tensor<{m}x{n}xf32>\n}}\n")
    meta = {"kind": "checkpoint", "args": names + ["wc", "ws", "wd"],
            "scalars": scalars, "results": ["y"]}
    if k % 256 == 0 and args.chip == "sm_90a":
        meta["tolerance"] = MATMUL_TOLERANCE
    write_case(out, name, mlir, arrays, {"y": want.reshape(-1).view(np.uint32)},
               meta, args)


def checkpoint_import_case(out, args, name, layer, tokens, hidden, ffn,
                           input_amax=None):
    """The program nvfp4-checkpoint import writes for a layer of a checkpoint
    nvfp4.checkpoint quantized (docs/Checkpoints.md), run with the
    checkpoint's own bytes as the weight argument: NAME.weight (packed
    codes), NAME.weight_scale and NAME.weight_scale_2's bits."""
    import tempfile
    import nvfp4.checkpoint as ck
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                    "..", "test", "Checkpoint", "Inputs"))
    import make_model
    with tempfile.TemporaryDirectory() as tmp:
        model = os.path.join(tmp, "model.safetensors")
        make_model.write_safetensors(
            model, make_model.model_tensors(1, seed=4, hidden=hidden, ffn=ffn))
        ck.quantize(model, os.path.join(tmp, "ck"),
                    input_amax={layer: input_amax} if input_amax else None)
        ckdir = os.path.join(tmp, "ck")
        mlir = ck.import_layer(ckdir, layer, tokens=tokens)
        w, input_scale = ck.load_layer(ckdir, layer)
        path = os.path.join(ckdir, "model.safetensors")
        packed = ck.read_tensor(path, layer + ".weight")
        scales = ck.read_tensor(path, layer + ".weight_scale")
        decode = ck.read_tensor(path, layer + ".weight_scale_2")
    n, k = w.shape
    x = make_input((tokens, k), 41)
    amax = None
    if input_scale is not None:
        amax = np.float32(np.float32(input_scale) * np.float32(2688))
    qx = nvfp4.quantize(x, amax=amax)
    want = np.asarray(nvfp4.scaled_matmul(qx, w), np.float32)
    meta = {"kind": "checkpoint_import", "args": ["x", "wc", "ws", "wd"],
            "results": ["y"], "result_type": "bf16"}
    if k % 256 == 0 and args.chip == "sm_90a":
        meta["tolerance"] = MATMUL_TOLERANCE
    write_case(out, name, mlir,
               {"x": x, "wc": packed.reshape(-1), "ws": scales.reshape(-1),
                "wd": decode.reshape(-1).view(np.uint32)},
               {"y": bf16_bits(want).reshape(-1)}, meta, args)


def schedule_flags(schedule):
    """nvfp4-compile flags forcing a GEMM schedule (docs/GemmKernels.md)."""
    return ["--gemm-schedule=" + schedule] if schedule else []


def write_chain_case(out, args, name, shape, inputs, first, first_types,
                     tensor_cores, flags):
    """The case of C = x W^T (operands `first`, quantized by the caller,
    of types `first_types`), then C quantized 1x16 with the amax the first
    GEMM's epilogue returns (fuse-output-amax), then D = C V^T with a 16x16
    V, for chain_case and mx_chain_case. SIMT: every byte is the library's;
    tensor cores: C within the GEMM tolerance and the epilogue's amax bit
    for bit max |C| of the GPU's own C (the rest depends on that C)."""
    m, r, k, n = shape
    x, w, v = inputs
    qx, qw = first
    tx, tw = first_types
    qv = nvfp4.quantize(v, block=(16, 16))
    c = bf16_bits(np.asarray(nvfp4.scaled_matmul(qx, qw), np.float32))
    qc = nvfp4.quantize((c.astype(np.uint32) << 16).view(np.float32))
    d = np.asarray(nvfp4.scaled_matmul(qc, qv), np.float32)
    tv = tensor_type((n, r), (16, 16), False)
    tc = tensor_type((m, r), (1, 16), False)
    mlir = (f"func.func @main(%x: tensor<{m}x{k}xbf16>, %w: tensor<{r}x{k}xbf16>, "
            f"%v: tensor<{n}x{r}xbf16>) -> (tensor<{m}x{r}xbf16>, {tc}, "
            f"tensor<{m}x{n}xf32>) {{\n"
            f"  %qx = nvfp4.quantize %x : tensor<{m}x{k}xbf16> -> {tx}\n"
            f"  %qw = nvfp4.quantize %w : tensor<{r}x{k}xbf16> -> {tw}\n"
            f"  %c = nvfp4.scaled_matmul %qx, %qw : {tx}, {tw} -> tensor<{m}x{r}xbf16>\n"
            f"  %qc = nvfp4.quantize %c : tensor<{m}x{r}xbf16> -> {tc}\n"
            f"  %qv = nvfp4.quantize %v : tensor<{n}x{r}xbf16> -> {tv}\n"
            f"  %d = nvfp4.scaled_matmul %qc, %qv : {tc}, {tv} -> tensor<{m}x{n}xf32>\n"
            f"  return %c, %qc, %d : tensor<{m}x{r}xbf16>, {tc}, tensor<{m}x{n}xf32>\n}}\n")
    meta = {"kind": "matmul_chain", "args": ["x", "w", "v"], "scalars": {},
            "results": ["c", "codes", "scales", "amax", "d"],
            "result_types": {"c": "bf16", "d": "f32"}}
    if tensor_cores:
        meta["tolerances"] = {"c": MATMUL_TOLERANCE}
        meta["amax_of"] = {"amax": "c"}
        meta["unchecked"] = ["codes", "scales", "d"]
    write_case(out, name, mlir, {"x": x, "w": w, "v": v},
               {"c": c.reshape(-1), "codes": qc.packed.reshape(-1),
                "scales": np.asarray(qc.scales, np.uint8).reshape(-1),
                "amax": np.array([qc.amax], np.float32).view(np.uint32),
                "d": d.reshape(-1).view(np.uint32)}, meta, args, flags)


def chain_case(out, args, name, m, r, k, n, tensor_cores, schedule=None):
    """x W^T then (x W^T) V^T, both NVFP4 (a low-rank adapter): the
    compiler's fuse-output-amax makes the first GEMM return the amax of its
    output from the epilogue, and the quantization of that output uses it
    (no amax pass). On the SIMT path (K % 256 != 0) every byte is the
    library's: C, its quantization (codes, scales, amax) and the second
    product. On the tensor-core path C is within the GEMM tolerance and the
    epilogue's amax must equal max |C| of the GPU's own C, bit for bit."""
    x = make_input((m, k), 31)
    w = make_input((r, k), 32)
    v = make_input((n, r), 33)
    qx = nvfp4.quantize(x)
    qw = nvfp4.quantize(w, block=(16, 16))
    write_chain_case(out, args, name, (m, r, k, n), (x, w, v), (qx, qw),
                     (tensor_type((m, k), (1, 16), False),
                      tensor_type((r, k), (16, 16), False)),
                     tensor_cores, schedule_flags(schedule))
    # The fusion must have happened: an epilogue-amax GEMM kernel and no
    # amax pass over C.
    kernels = case_kernels(out, name)
    if kernels is not None and (
            not any("_amax_" in kk for kk in kernels) or
            any(kk == f"nvfp4_amax_{m * r}xbf16" for kk in kernels)):
        raise SystemExit(f"{name}: GEMM output amax not fused: {kernels}")


def upstream_mx_quantize_case(out, args, name):
    """MXFP8 quantization written in upstream MLIR ops (the @mxfp8_quantize
    of examples/upstream_scaling.mlir: the block amax by linalg.reduce, the
    E8M0 byte by integer arithmetic, arith.scaling_truncf), compiled as it
    is, not raised to nvfp4.quantize: the linalg ops' kernels with upstream's
    scaling ops expanded as the numerics library's conversions
    (nvfp4-expand-small-float-casts in the GPU pipeline). The E4M3 codes
    and E8M0 scales must be the library's MXFP8 quantization byte for byte.
    Finite data (the function's fastmath<nnan,ninf>)."""
    with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..",
                           "examples", "upstream_scaling.mlir")) as f:
        text = f.read()
    start = text.index("func.func @mxfp8_quantize(")
    mlir = text[start:text.index("func.func @", start + 10)]
    x = make_mx_input((128, 256), 51, exponents=(-100, 100))
    q = nvfp4.quantize(x, format="mxfp8_e4m3")
    write_case(out, name, mlir, {"x": x},
               {"codes": np.asarray(q.codes, np.uint8).reshape(-1),
                "scales": np.asarray(q.scales, np.uint8).reshape(-1)},
               {"kind": "upstream_quantize", "args": ["x"],
                "results": ["codes", "scales"]}, args)
    kernels = case_kernels(out, name)
    if kernels is not None and any(k.startswith("nvfp4_quantize_")
                                   for k in kernels):
        raise SystemExit(f"{name}: expected the upstream ops' own kernels, "
                         f"got {kernels}")


def mx_chain_case(out, args, name, m, r, k, n, format, tensor_cores):
    """An MX GEMM whose BF16 output feeds an NVFP4 GEMM (a mixed per-layer
    policy: x W^T in MXFP8 or MXFP4, then (x W^T) V^T in NVFP4): the
    compiler's fuse-output-amax makes the MX GEMM return the amax of its
    output from its own epilogue, and the NVFP4 quantization of that output
    uses it (no amax pass). SIMT (--mx-gemm=simt): every byte is the
    library's -- C, its quantization (codes, scales, amax) and the second
    product. Tensor cores (--mx-gemm=tensor-core; sm_90a: the BF16 decode +
    wgmma with the epilogue amax): C within the GEMM tolerance, the amax bit
    for bit max |C| of the GPU's own C."""
    x = make_mx_input((m, k), 41, exponents=(-8, 8))
    w = make_mx_input((r, k), 42, exponents=(-8, 8))
    v = make_input((n, r), 43)
    qx = nvfp4.quantize(x, format=format)
    qw = nvfp4.quantize(w, format=format)
    write_chain_case(out, args, name, (m, r, k, n), (x, w, v), (qx, qw),
                     (mx_tensor_type((m, k), format, False),
                      mx_tensor_type((r, k), format, False)),
                     tensor_cores,
                     ["--mx-gemm=" + ("tensor-core" if tensor_cores else "simt")])
    # The fusion must have happened: the MX GEMM kernel writes the amax and
    # no amax pass reads C; the form is the one asked for.
    kernels = case_kernels(out, name)
    if kernels is None:
        return
    mx = [kk for kk in kernels if kk.startswith("nvfp4_scaled_matmul_") and
          f"_{format}" in kk]
    form = "_wgmma_" if tensor_cores else "_simt"
    if len(mx) != 1 or "_amax" not in mx[0] or form not in mx[0] or any(
            kk == f"nvfp4_amax_{m * r}xbf16" for kk in kernels):
        raise SystemExit(f"{name}: MX GEMM output amax not fused: {kernels}")


def epilogue_quantize_case(out, args, name, m, k, n, tensor_cores,
                           schedule=None):
    """A GEMM whose output is quantized with a static amax (known before the
    GEMM: a calibrated activation scale): nvfp4.scaled_matmul_quantize, the
    epilogue writes the codes and scales. SIMT (K % 256 != 0): bit for bit
    the library's quantization of C rounded to BF16, and the next GEMM on
    it. Tensor cores: C sums in another order, so the check is that the
    epilogue's codes/scales equal, byte for byte, the standalone quantize
    kernel's of the same GEMM's C (one kernel skeleton, the same sums)."""
    x = make_input((m, k), 41)
    w = make_input((n, k), 42)
    qx = nvfp4.quantize(x)
    qw = nvfp4.quantize(w, block=(16, 16))
    c = bf16_bits(np.asarray(nvfp4.scaled_matmul(qx, qw), np.float32))
    c32 = (c.astype(np.uint32) << 16).view(np.float32)
    # A calibration amax a little above the data's, as static scales are.
    amax = np.float32(1.25 * np.max(np.abs(c32)))
    qc = nvfp4.quantize(c32, amax=amax)
    tx = tensor_type((m, k), (1, 16), False)
    tw = tensor_type((n, k), (16, 16), False)
    tc = tensor_type((m, n), (1, 16), False)
    if not tensor_cores:
        v = make_input((32, n), 43)
        qv = nvfp4.quantize(v, block=(16, 16))
        d = np.asarray(nvfp4.scaled_matmul(qc, qv), np.float32)
        tv = tensor_type((32, n), (16, 16), False)
        # Written unfused: nvfp4-compile's fuse-epilogue-quantization fuses.
        mlir = (f"func.func @main(%x: tensor<{m}x{k}xbf16>, %w: tensor<{n}x{k}xbf16>, "
                f"%v: tensor<32x{n}xbf16>, %g: f32) -> ({tc}, tensor<{m}x32xf32>) {{\n"
                f"  %qx = nvfp4.quantize %x : tensor<{m}x{k}xbf16> -> {tx}\n"
                f"  %qw = nvfp4.quantize %w : tensor<{n}x{k}xbf16> -> {tw}\n"
                f"  %c = nvfp4.scaled_matmul %qx, %qw : {tx}, {tw} -> tensor<{m}x{n}xbf16>\n"
                f"  %q = nvfp4.quantize %c amax(%g) : tensor<{m}x{n}xbf16> -> {tc}\n"
                f"  %qv = nvfp4.quantize %v : tensor<32x{n}xbf16> -> {tv}\n"
                f"  %d = nvfp4.scaled_matmul %q, %qv : {tc}, {tv} -> tensor<{m}x32xf32>\n"
                f"  return %q, %d : {tc}, tensor<{m}x32xf32>\n}}\n")
        meta = {"kind": "epilogue_quantize", "args": ["x", "w", "v", "g"],
                "scalars": {"g": float(amax)},
                "results": ["codes", "scales", "amax", "d"]}
        arrays = {"x": x, "w": w, "v": v}
        expected = {"codes": qc.packed.reshape(-1),
                    "scales": np.asarray(qc.scales, np.uint8).reshape(-1),
                    "amax": np.array([amax], np.float32).view(np.uint32),
                    "d": d.reshape(-1).view(np.uint32)}
    else:
        # q1: the epilogue-quantizing GEMM as written; q2: the same GEMM's C
        # (returned, so not fused) quantized by the quantize kernel.
        mlir = (f"func.func @main(%x: tensor<{m}x{k}xbf16>, %w: tensor<{n}x{k}xbf16>, "
                f"%g: f32) -> ({tc}, tensor<{m}x{n}xbf16>, {tc}) {{\n"
                f"  %qx = nvfp4.quantize %x : tensor<{m}x{k}xbf16> -> {tx}\n"
                f"  %qw = nvfp4.quantize %w : tensor<{n}x{k}xbf16> -> {tw}\n"
                f"  %q1 = nvfp4.scaled_matmul_quantize %qx, %qw amax(%g) : {tx}, {tw} -> {tc}\n"
                f"  %c = nvfp4.scaled_matmul %qx, %qw : {tx}, {tw} -> tensor<{m}x{n}xbf16>\n"
                f"  %q2 = nvfp4.quantize %c amax(%g) : tensor<{m}x{n}xbf16> -> {tc}\n"
                f"  return %q1, %c, %q2 : {tc}, tensor<{m}x{n}xbf16>, {tc}\n}}\n")
        meta = {"kind": "epilogue_quantize", "args": ["x", "w", "g"],
                "scalars": {"g": float(amax)},
                "results": ["q1_codes", "q1_scales", "q1_amax", "c",
                            "q2_codes", "q2_scales", "q2_amax"],
                "result_types": {"c": "bf16"},
                "tolerances": {"c": MATMUL_TOLERANCE},
                "equal_to": {"q1_codes": "q2_codes", "q1_scales": "q2_scales",
                             "q1_amax": "q2_amax"},
                "unchecked": ["q2_codes", "q2_scales"]}
        arrays = {"x": x, "w": w}
        expected = {"c": c.reshape(-1),
                    "q2_amax": np.array([amax], np.float32).view(np.uint32)}
    write_case(out, name, mlir, arrays, expected, meta, args,
               schedule_flags(schedule))
    kernels = case_kernels(out, name)
    if kernels is not None and not any("_q_" in kk for kk in kernels):
        raise SystemExit(f"{name}: no epilogue-quantizing GEMM: {kernels}")


def row_division_case(out, args, name, rows, cols, normalize):
    """Divisions by a value shared by a row (the reciprocal path of
    nvfp4/Numerics/RowDivision.h, with IEEE divisions for the chunks it
    does not cover): the f32 quotients must equal numpy's correctly rounded
    x / s byte for byte (any NaN matching any NaN). normalize=False: x / s
    with s a broadcast operand (the vectorized elementwise kernel);
    normalize=True: x / sum(x) along the row (a row kernel). The sums are
    exact in any order (integers below 2^24, times a power of two per row),
    so the GPU's sum equals numpy's and the quotients are comparable."""
    rng = np.random.default_rng(20261201 + cols)
    x = rng.integers(0, 1000, (rows, cols)).astype(np.float32)
    x[rng.random((rows, cols)) < 0.3] = 0.0
    # Per row a power of two: most rows inside the path's ranges, some with
    # dividends below 2^-60 or above 2^60 (their chunks take the division).
    shifts = rng.choice([0, 0, 0, -20, 12, -75, 70, -140], rows)
    x *= np.exp2(shifts.astype(np.float32))[:, None]
    x[rows // 3] *= -1.0  # a negative row: its sum, a divisor < 0
    if normalize:
        s = x.sum(axis=1, dtype=np.float64).astype(np.float32)
        assert np.all(s.astype(np.float64) == x.astype(np.float64).sum(axis=1))
    else:
        s = np.exp2(rng.uniform(-40, 40, rows)).astype(np.float32)
        s[:8] = [0.0, -0.0, np.inf, np.nan, 2.0**-51, 2.0**60, -3.0, 1e-42]
        # Elements every chunk of the first rows can meet.
        x[8, :8] = [np.inf, -np.inf, np.nan, 0.0, -0.0, 1e-45, 3e38, 1.0]
    with np.errstate(divide="ignore", invalid="ignore", over="ignore",
                     under="ignore"):
        want = (x / s[:, None]).astype(np.float32)
    t = f"tensor<{rows}x{cols}xf32>"
    r = f"tensor<{rows}xf32>"
    maps = ("affine_map<(i, j) -> (i, j)>", "affine_map<(i, j) -> (i)>")
    if normalize:
        head = (f"func.func @main(%x: {t}) -> {t} {{\n"
                f"  %zero = arith.constant 0.0 : f32\n"
                f"  %e = tensor.empty() : {r}\n"
                f"  %f = linalg.fill ins(%zero : f32) outs(%e : {r}) -> {r}\n"
                f"  %s = linalg.generic {{indexing_maps = [{maps[0]}, {maps[1]}], "
                f"iterator_types = [\"parallel\", \"reduction\"]}} "
                f"ins(%x : {t}) outs(%f : {r}) {{\n"
                f"  ^bb0(%a: f32, %acc: f32):\n"
                f"    %v = arith.addf %acc, %a : f32\n"
                f"    linalg.yield %v : f32\n"
                f"  }} -> {r}\n")
        arrays, meta_args = {"x": x}, ["x"]
    else:
        head = f"func.func @main(%x: {t}, %s: {r}) -> {t} {{\n"
        arrays, meta_args = {"x": x, "s": s}, ["x", "s"]
    mlir = (head +
            f"  %o = tensor.empty() : {t}\n"
            f"  %y = linalg.generic {{indexing_maps = [{maps[0]}, {maps[1]}, {maps[0]}], "
            f"iterator_types = [\"parallel\", \"parallel\"]}} "
            f"ins(%x, %s : {t}, {r}) outs(%o : {t}) {{\n"
            f"  ^bb0(%a: f32, %d: f32, %out: f32):\n"
            f"    %q = arith.divf %a, %d : f32\n"
            f"    linalg.yield %q : f32\n"
            f"  }} -> {t}\n"
            f"  return %y : {t}\n}}\n")
    write_case(out, name, mlir, arrays, {"y": want.reshape(-1)},
               {"kind": "row_division", "args": meta_args, "results": ["y"],
                "any_nan": ["y"]}, args)


def producer_quantize_case(out, args, name, shape, amax):
    """An elementwise op whose only user is a 1x16 quantization with a
    given amax (ProducerQuantize.cpp): one kernel computes
    y = bf16(max(g, 0) * u) and writes y's codes and scales; y is never
    stored. The products of BF16 values are exact in FP32, so y is the
    same bits here (numpy, rounded to nearest even) and there, and the
    library's quantization of y is the expected result byte for byte."""
    g = make_input(shape, 11)
    u = make_input(shape, 12)
    with np.errstate(invalid="ignore"):
        y = bf16_bits(np.maximum(bf16_values(g), np.float32(0)) * bf16_values(u))
    q = nvfp4.quantize(y, block=(1, 16), amax=amax)
    dims = "x".join(str(d) for d in shape)
    t = tensor_type(shape, (1, 16), False)
    ty = f"tensor<{dims}xbf16>"
    m = "affine_map<(i, j) -> (i, j)>"
    mlir = (f"func.func @main(%g: {ty}, %u: {ty}, %a: f32) -> {t} {{\n"
            f"  %e = tensor.empty() : {ty}\n"
            f"  %y = linalg.generic {{indexing_maps = [{m}, {m}, {m}], "
            f"iterator_types = [\"parallel\", \"parallel\"]}} "
            f"ins(%g, %u : {ty}, {ty}) outs(%e : {ty}) {{\n"
            f"  ^bb0(%gv: bf16, %uv: bf16, %out: bf16):\n"
            f"    %zero = arith.constant 0.0 : f32\n"
            f"    %gf = arith.extf %gv : bf16 to f32\n"
            f"    %uf = arith.extf %uv : bf16 to f32\n"
            f"    %r = arith.maximumf %gf, %zero : f32\n"
            f"    %p = arith.mulf %r, %uf : f32\n"
            f"    %o = arith.truncf %p : f32 to bf16\n"
            f"    linalg.yield %o : bf16\n"
            f"  }} -> {ty}\n"
            f"  %q = nvfp4.quantize %y amax(%a) : {ty} -> {t}\n"
            f"  return %q : {t}\n}}\n")
    write_case(out, name, mlir, {"g": g, "u": u},
               {"codes": q.packed.reshape(-1),
                "scales": np.asarray(q.scales, np.uint8).reshape(-1),
                "amax": np.array([q.amax], np.float32).view(np.uint32)},
               {"kind": "quantize", "args": ["g", "u", "a"],
                "scalars": {"a": float(amax)},
                "results": ["codes", "scales", "amax"]}, args)


def case_kernels(out, name):
    """The kernel names of a written case (None when --only skipped it)."""
    path = os.path.join(out, name, "report.json")
    if not os.path.exists(path):
        return None
    with open(path) as f:
        return [k["name"] for k in json.load(f)["kernels"]]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--build", default="build")
    parser.add_argument("--chip", default="sm_90a")
    parser.add_argument("--out", required=True)
    parser.add_argument("--only", default="",
                        help="comma-separated name prefixes: write only the "
                             "cases whose names start with one of them")
    args = parser.parse_args()
    out = args.out
    prefixes = tuple(p for p in args.only.split(",") if p)
    if prefixes:
        global write_case
        write_all = write_case

        def write_case(out, name, *rest):
            if name.startswith(prefixes):
                write_all(out, name, *rest)
    quantize_case(out, args, "quantize_1x16_rn", (256, 1024))
    quantize_case(out, args, "quantize_1x16_rn_edge", (64, 256), edge=True)
    quantize_case(out, args, "quantize_16x16_rn", (256, 512), block=(16, 16))
    quantize_case(out, args, "quantize_16x16_swizzled", (160, 512),
                  block=(16, 16), swizzled=True)
    quantize_case(out, args, "quantize_1x16_swizzled", (200, 96), swizzled=True)
    quantize_case(out, args, "quantize_1x16_sr", (256, 1024), rounding="sr",
                  seed=0x123456789ABCDEF0)
    quantize_case(out, args, "quantize_decode_1x512", (1, 512))
    quantize_case(out, args, "quantize_1x16_sr_edge", (64, 256), rounding="sr",
                  seed=77, edge=True)
    quantize_case(out, args, "quantize_1x16_amax_given", (256, 1024),
                  amax=np.float32(3000.0))
    # The producer writes the quantization (a given amax): a ragged grid
    # (1000 runs, not a multiple of the block) and a tensor larger than one
    # wave of the grid-stride loop.
    producer_quantize_case(out, args, "producer_quantize_relu_mul_125x128",
                           (125, 128), np.float32(2000.0))
    producer_quantize_case(out, args, "producer_quantize_relu_mul_2048x2048",
                           (2048, 2048), np.float32(6000.0))
    # A tensor of 1000 runs: the last block of the 4-runs-per-thread
    # kernels is partly empty.
    quantize_case(out, args, "quantize_1x16_ragged_125x128", (125, 128))
    # The persistent kernels (issue 15): an odd number of runs (the last
    # thread's pair holds one), ragged 16x16 tile regions, every input
    # type, every way of getting the amax, unpadded swizzled scales (no
    # memset: every byte written), SR with 64-bit seeds on edge values.
    quantize_case(out, args, "quantize_1x16_rn_odd_runs_125x144", (125, 144))
    quantize_case(out, args, "quantize_1x16_sr_seed64_odd_runs_125x144",
                  (125, 144), rounding="sr", seed=0xC0FFEE0123456789)
    quantize_case(out, args, "quantize_1x16_sr_seed64_edge", (64, 256),
                  rounding="sr", seed=0x8000000000000001, edge=True)
    quantize_case(out, args, "quantize_1x16_f32_edge", (64, 256), edge=True,
                  dtype="f32")
    quantize_case(out, args, "quantize_1x16_f16_edge", (64, 256), edge=True,
                  dtype="f16")
    quantize_case(out, args, "quantize_1x16_sr_f16", (96, 160), rounding="sr",
                  seed=3, dtype="f16")
    quantize_case(out, args, "quantize_1x16_amax_constant", (128, 256),
                  amax=np.float32(2500.0), constant_amax=True)
    quantize_case(out, args, "quantize_1x16_swizzled_unpadded_256x128",
                  (256, 128), swizzled=True, edge=True)
    quantize_case(out, args, "quantize_1x16_batched_3x40x96", (3, 40, 96),
                  edge=True)
    quantize_case(out, args, "quantize_16x16_ragged_48x80", (48, 80),
                  block=(16, 16), edge=True)
    quantize_case(out, args, "quantize_16x16_sr_seed64", (96, 208),
                  block=(16, 16), rounding="sr", seed=0xFEDCBA9876543210)
    quantize_case(out, args, "quantize_16x16_amax_given_f32", (64, 128),
                  block=(16, 16), amax=np.float32(700.0), dtype="f32")
    quantize_case(out, args, "quantize_16x16_swizzled_batched_2x80x64",
                  (2, 80, 64), block=(16, 16), swizzled=True)
    # 16x16 weights and their transposed copy from one kernel.
    weight_copies_case(out, args, "weight_copies_256x512", (256, 512))
    weight_copies_case(out, args, "weight_copies_ragged_48x80", (48, 80))
    weight_copies_case(out, args, "weight_copies_batched_2x64x160",
                       (2, 64, 160))
    weight_copies_case(out, args, "weight_copies_sr_seed64_80x48", (80, 48),
                       rounding="sr", seed=0x0123456789ABCDEF)
    # The shared stage (issue 15, round 3): 4 x 8-tile regions that cross
    # batch elements (3 tile rows a matrix) and end inside a tile row of
    # the region (5 and 9 tile columns).
    weight_copies_case(out, args, "weight_copies_stage_straddle_3x48x80",
                       (3, 48, 80))
    weight_copies_case(out, args, "weight_copies_stage_sr_5x16x144",
                       (5, 16, 144), rounding="sr", seed=0xFFFFFFFF00000001)
    # The 16x16 kernels' cp.async input ring (quantize-schedule ring<S>),
    # on grids of 1-3 blocks so that each block walks the ring several
    # times (slot reuse, the prologue's and the tail's empty groups):
    # 256x512 is 16 regions, the batched ragged ones cross batch elements
    # and end inside a region, f32 input has 64-byte tile rows.
    for stages, grid in ((2, 1), (3, 2), (4, 3)):
        ring = [f"--quantize-schedule=ring{stages}_grid{grid}"]
        weight_copies_case(out, args,
                           f"weight_copies_ring{stages}_grid{grid}_256x512",
                           (256, 512), flags=ring)
        weight_copies_case(
            out, args, f"weight_copies_ring{stages}_grid{grid}_straddle_3x48x80",
            (3, 48, 80), flags=ring)
    ring = ["--quantize-schedule=ring3_grid2"]
    weight_copies_case(out, args, "weight_copies_ring3_grid2_sr_5x16x144",
                       (5, 16, 144), rounding="sr", seed=0xFFFFFFFF00000001,
                       flags=ring)
    quantize_case(out, args, "quantize_16x16_ring3_grid2_rn_edge_160x512",
                  (160, 512), block=(16, 16), edge=True, flags=ring)
    quantize_case(out, args, "quantize_16x16_ring3_grid2_swizzled_2x80x64",
                  (2, 80, 64), block=(16, 16), swizzled=True, flags=ring)
    quantize_case(out, args,
                  "quantize_16x16_ring2_grid2_f32_amax_given_64x384",
                  (64, 384), block=(16, 16), amax=np.float32(700.0),
                  dtype="f32", flags=["--quantize-schedule=ring2_grid2"])
    quantize_case(out, args, "quantize_16x16_ring4_chip_grid_ragged_48x80",
                  (48, 80), block=(16, 16), edge=True,
                  flags=["--quantize-schedule=ring4"])
    weight_copies_case(out, args, "weight_copies_registers_grid1_256x512",
                       (256, 512), flags=["--quantize-schedule=registers_grid1"])
    # ring3 is the 16x16 kernels' default: the registers path forced.
    quantize_case(out, args, "quantize_16x16_registers_rn_edge_160x512",
                  (160, 512), block=(16, 16), edge=True,
                  flags=["--quantize-schedule=registers"])
    transpose_argument_case(out, args, "transpose_argument_2x48x80",
                            (2, 48, 80))
    # RHT fused into the quantization (wgrad operands).
    rht_quantize_case(out, args, "rht_quantize_sr", (256, 1024),
                      seed=0x0123456789ABCDEF)
    rht_quantize_case(out, args, "rht_quantize_sr_edge", (64, 256), seed=5,
                      edge=True)
    rht_quantize_case(out, args, "rht_quantize_rn_ragged_125x128", (125, 128),
                      rounding="rn")
    # The arithmetic forms of issue 15 round 5 (quantize-schedule mulwide /
    # mulsplit, signlegacy, blocks<N>): the session-8 forms forced beside
    # the new defaults (wide Philox products in the 1x16 kernels, split ones
    # in the tile and dual kernels, sign words), each with edge values,
    # 64-bit seeds and ragged shapes; every one byte-identical to the
    # library.
    rht_quantize_case(out, args, "rht_quantize_sr_edge_mulsplit_signlegacy",
                      (64, 256), seed=5, edge=True,
                      flags=["--quantize-schedule=mulsplit_signlegacy"])
    rht_quantize_case(out, args, "rht_quantize_sr_seed64_ragged_125x128",
                      (125, 128), seed=0xFEDCBA9876543210, edge=True)
    rht_quantize_case(out, args, "rht_quantize_sr_ragged_mulsplit_125x128",
                      (125, 128), seed=0xFEDCBA9876543210, edge=True,
                      flags=["--quantize-schedule=mulsplit"])
    rht_quantize_case(out, args, "rht_quantize_sr_blocks2_256x1024",
                      (256, 1024), seed=0x8000000000000001,
                      flags=["--quantize-schedule=blocks2"])
    quantize_case(out, args, "quantize_sr_edge_signlegacy_96x208", (96, 208),
                  rounding="sr", seed=0x0123456789ABCDEF, edge=True,
                  flags=["--quantize-schedule=signlegacy"])
    quantize_case(out, args, "quantize_sr_edge_seed64_96x208", (96, 208),
                  rounding="sr", seed=0x0123456789ABCDEF, edge=True)
    dual_quantize_case(out, args, "dual_quantize_mulwide_signlegacy_dy_256x512",
                       (256, 512), rounding="sr", col_rounding="sr",
                       seed=0xC0FFEE0123456789, col_seed=0x8000000000000001,
                       edge=True,
                       flags=["--quantize-schedule=mulwide_signlegacy"])
    dual_quantize_case(out, args,
                       "dual_quantize_ring2_grid2_mulwide_straddle_5x16x272",
                       (5, 16, 272), rounding="sr", col_rounding="sr",
                       seed=0x0123456789ABCDEF, col_seed=31, edge=True,
                       flags=["--quantize-schedule=ring2_grid2_mulwide"])
    dual_quantize_case(out, args, "dual_quantize_ring2_blocks3_grid2_x_208x144",
                       (208, 144), edge=True,
                       flags=["--quantize-schedule=ring2_blocks3_grid2"])
    # Sign words (the default: codes as magnitudes or'ed with the signs of
    # the BF16 / F16 pairs, NaN -> +6) against the signed encoding forced.
    quantize_case(out, args, "quantize_1x16_rn_edge_signlegacy_64x256",
                  (64, 256), edge=True,
                  flags=["--quantize-schedule=signlegacy"])
    quantize_case(out, args, "quantize_1x16_rn_edge_f16_96x160", (96, 160),
                  edge=True, dtype="f16")
    weight_copies_case(out, args, "weight_copies_signlegacy_3x48x80",
                       (3, 48, 80), flags=["--quantize-schedule=signlegacy"])
    dual_quantize_case(out, args, "dual_quantize_signlegacy_x_edge_208x144",
                       (208, 144), edge=True,
                       flags=["--quantize-schedule=signlegacy"])
    dual_quantize_case(out, args,
                       "dual_quantize_signlegacy_mulsplit_dy_edge_256x512",
                       (256, 512), rounding="sr", col_rounding="sr",
                       seed=0x0123456789ABCDEF, col_seed=77, edge=True,
                       flags=["--quantize-schedule=mulsplit_signlegacy"])
    rht_quantize_case(out, args, "rht_quantize_sr_edge_signlegacy_64x256",
                      (64, 256), seed=9, edge=True,
                      flags=["--quantize-schedule=signlegacy"])
    rht_quantize_case(out, args, "rht_quantize_rn_edge_blocks2_64x256",
                      (64, 256), rounding="rn", edge=True,
                      flags=["--quantize-schedule=blocks2"])
    weight_copies_case(out, args,
                       "weight_copies_ring2_blocks4_grid3_sr_mulwide_5x16x144",
                       (5, 16, 144), rounding="sr", seed=0xFFFFFFFF00000001,
                       flags=["--quantize-schedule=ring2_blocks4_grid3_mulwide"])
    rht_quantize_case(out, args, "rht_quantize_sr_amax_given", (128, 512),
                      seed=9, amax=np.float32(1000.0))
    # One read, both quantizations (nvfp4.dual_quantize): the recipe's X
    # (RN; RHT + RN) and dY (SR; RHT + SR, 64-bit seeds), edge values and
    # cancelling RHT sums, odd tile counts (unpaired tiles, unaligned
    # stores), batches, every way of getting each amax, f32 / f16 inputs
    # without the RHT, swizzled scales on either side (with padding), and
    # the pairs written unfused, as the recipe does (nvfp4-compile fuses).
    dual_quantize_case(out, args, "dual_quantize_x_rn_rht_256x512",
                       (256, 512))
    dual_quantize_case(out, args, "dual_quantize_dy_sr_rht_seed64_256x512",
                       (256, 512), rounding="sr", col_rounding="sr",
                       seed=0xC0FFEE0123456789, col_seed=0x8000000000000001)
    dual_quantize_case(out, args, "dual_quantize_sr_edge_64x256", (64, 256),
                       rounding="sr", col_rounding="sr", seed=5, col_seed=6,
                       edge=True)
    dual_quantize_case(out, args, "dual_quantize_cancel_96x256", (96, 256),
                       col_rounding="sr", col_seed=0xFEDCBA9876543210,
                       cancel=True)
    dual_quantize_case(out, args, "dual_quantize_odd_tiles_48x80", (48, 80),
                       rounding="sr", col_rounding="sr", seed=7,
                       col_seed=0x9E3779B97F4A7C15, edge=True)
    dual_quantize_case(out, args, "dual_quantize_odd_tiles_208x144",
                       (208, 144))
    dual_quantize_case(out, args, "dual_quantize_batched_3x48x96",
                       (3, 48, 96), col_rounding="sr", col_seed=11, edge=True)
    dual_quantize_case(out, args, "dual_quantize_amax_given_128x512",
                       (128, 512), amax=np.float32(3000.0),
                       col_amax=np.float32(2500.0))
    dual_quantize_case(out, args, "dual_quantize_row_amax_given_96x160",
                       (96, 160), amax=np.float32(5000.0),
                       col_rounding="sr", col_seed=13)
    dual_quantize_case(out, args, "dual_quantize_col_amax_given_96x160",
                       (96, 160), col_amax=np.float32(100.0), rounding="sr",
                       seed=17)
    dual_quantize_case(out, args, "dual_quantize_amax_constant_64x128",
                       (64, 128), amax=np.float32(2000.0),
                       col_amax=np.float32(900.0), constant_amax=True)
    dual_quantize_case(out, args, "dual_quantize_shared_amax_op_96x160",
                       (96, 160), shared_amax=True, col_rounding="sr",
                       col_seed=29)
    dual_quantize_case(out, args, "dual_quantize_no_rht_f32_edge_64x160",
                       (64, 160), rht=False, dtype="f32", edge=True,
                       col_rounding="sr", col_seed=19)
    dual_quantize_case(out, args, "dual_quantize_no_rht_f16_80x48", (80, 48),
                       rht=False, dtype="f16", amax=np.float32(30.0))
    dual_quantize_case(out, args, "dual_quantize_swizzled_208x96", (208, 96),
                       swizzled=True, col_swizzled=True, edge=True)
    dual_quantize_case(out, args, "dual_quantize_swizzled_batched_2x80x48",
                       (2, 80, 48), swizzled=True, col_swizzled=True,
                       rounding="sr", seed=21)
    # The shared stage: regions of 2 pair rows x 8 tile columns that cross
    # batch elements (one unpaired tile row a matrix) and end inside the
    # region (17 tile columns), swizzled scales on one side.
    dual_quantize_case(out, args, "dual_quantize_stage_straddle_5x16x272",
                       (5, 16, 272), rounding="sr", col_rounding="sr",
                       seed=0x0123456789ABCDEF, col_seed=31, edge=True)
    dual_quantize_case(out, args, "dual_quantize_stage_swizzled_3x80x144",
                       (3, 80, 144), col_swizzled=True, col_rounding="sr",
                       col_seed=37)
    dual_quantize_case(out, args, "dual_quantize_1024x2048_sr", (1024, 2048),
                       rounding="sr", col_rounding="sr", seed=23, col_seed=24)
    training_operands_case(out, args, "dual_quantize_training_operands_256x384",
                           256, 384, (0x0123456789ABCDEF, 0xFEDCBA9876543210))
    # The dual kernels' cp.async input ring (quantize-schedule ring<S>) on
    # grids of 1-3 blocks (each walks the ring several times): RN + RHT,
    # SR + RHT SR with 64-bit seeds and edge values, odd tile rows (pairs
    # with one tile row) across batch elements, f32 and swizzled scales.
    dual_quantize_case(out, args, "dual_quantize_ring2_grid1_x_256x512",
                       (256, 512), flags=["--quantize-schedule=ring2_grid1"])
    # ring2 is the default of X's dual (RN on both sides): registers forced.
    dual_quantize_case(out, args, "dual_quantize_registers_x_256x512",
                       (256, 512), flags=["--quantize-schedule=registers"])
    dual_quantize_case(out, args, "dual_quantize_ring3_grid2_dy_sr_edge_256x512",
                       (256, 512), rounding="sr", col_rounding="sr",
                       seed=0xC0FFEE0123456789, col_seed=0x8000000000000001,
                       edge=True, flags=["--quantize-schedule=ring3_grid2"])
    dual_quantize_case(out, args, "dual_quantize_ring3_grid2_straddle_5x16x272",
                       (5, 16, 272), rounding="sr", col_rounding="sr",
                       seed=0x0123456789ABCDEF, col_seed=31, edge=True,
                       flags=["--quantize-schedule=ring3_grid2"])
    dual_quantize_case(out, args, "dual_quantize_ring4_grid3_odd_3x48x96",
                       (3, 48, 96), col_rounding="sr", col_seed=11, edge=True,
                       flags=["--quantize-schedule=ring4_grid3"])
    dual_quantize_case(out, args,
                       "dual_quantize_ring2_grid2_no_rht_f32_swizzled_64x160",
                       (64, 160), rht=False, dtype="f32", edge=True,
                       swizzled=True, col_swizzled=True, col_rounding="sr",
                       col_seed=19, flags=["--quantize-schedule=ring2_grid2"])
    dual_quantize_case(out, args, "dual_quantize_ring3_1024x2048_sr",
                       (1024, 2048), rounding="sr", col_rounding="sr",
                       seed=23, col_seed=24,
                       flags=["--quantize-schedule=ring3"])
    # Issue 15 round 6 (session 10): BF16 pairs extended by integer
    # operations, codes packed by multiply-adds, the binade by mul.hi
    # (every BF16 / F16 / f32 case above but the 16x16 ones runs them);
    # the schedule parts
    # runs1 (one run a work unit of the 1x16 kernels: 8-byte code stores,
    # single scale bytes, an odd run count, swizzled scales) and rolled (the
    # dual kernels' two tile rows in a loop), with edge values, ragged and
    # straddling shapes and 64-bit seeds.
    quantize_case(out, args, "quantize_1x16_rn_runs1_odd_runs_125x144",
                  (125, 144), edge=True, flags=["--quantize-schedule=runs1"])
    quantize_case(out, args, "quantize_1x16_swizzled_runs1_200x96", (200, 96),
                  swizzled=True, edge=True,
                  flags=["--quantize-schedule=runs1"])
    rht_quantize_case(out, args, "rht_quantize_sr_runs1_seed64_ragged_125x128",
                      (125, 128), seed=0xFEDCBA9876543210, edge=True,
                      flags=["--quantize-schedule=runs1"])
    rht_quantize_case(out, args, "rht_quantize_sr_runs1_blocks4_256x1024",
                      (256, 1024), seed=0x8000000000000001,
                      flags=["--quantize-schedule=runs1_blocks4"])
    rht_quantize_case(out, args, "rht_quantize_rn_cancel_runs1_128x256",
                      (128, 256), rounding="rn", cancel=True,
                      flags=["--quantize-schedule=runs1"])
    dual_quantize_case(out, args, "dual_quantize_rolled_dy_edge_256x512",
                       (256, 512), rounding="sr", col_rounding="sr",
                       seed=0xC0FFEE0123456789, col_seed=0x8000000000000001,
                       edge=True, flags=["--quantize-schedule=rolled"])
    dual_quantize_case(out, args,
                       "dual_quantize_ring2_grid2_rolled_straddle_5x16x272",
                       (5, 16, 272), rounding="sr", col_rounding="sr",
                       seed=0x0123456789ABCDEF, col_seed=31, edge=True,
                       flags=["--quantize-schedule=ring2_grid2_rolled"])
    dual_quantize_case(out, args, "dual_quantize_rolled_x_odd_tiles_208x144",
                       (208, 144), edge=True,
                       flags=["--quantize-schedule=rolled"])
    # The FMA-pipe forms are the default but in the 16x16 kernels: each
    # side forced where it is not the default (fmaforms / aluforms).
    weight_copies_case(out, args, "weight_copies_fmaforms_stage_sr_5x16x144",
                       (5, 16, 144), rounding="sr", seed=0xFFFFFFFF00000001,
                       flags=["--quantize-schedule=fmaforms"])
    quantize_case(out, args, "quantize_16x16_fmaforms_rn_edge_160x512",
                  (160, 512), block=(16, 16), edge=True,
                  flags=["--quantize-schedule=ring2_fmaforms"])
    rht_quantize_case(out, args, "rht_quantize_sr_edge_aluforms_64x256",
                      (64, 256), seed=5, edge=True,
                      flags=["--quantize-schedule=aluforms"])
    dual_quantize_case(out, args, "dual_quantize_aluforms_dy_edge_256x512",
                       (256, 512), rounding="sr", col_rounding="sr",
                       seed=0x0123456789ABCDEF, col_seed=77, edge=True,
                       flags=["--quantize-schedule=aluforms"])
    # dY's dual at its default 2 blocks a multiprocessor on a grid of 2
    # (each block walks several regions) and 3 forced.
    dual_quantize_case(out, args, "dual_quantize_grid2_dy_straddle_5x16x272",
                       (5, 16, 272), rounding="sr", col_rounding="sr",
                       seed=0x0123456789ABCDEF, col_seed=31, edge=True,
                       flags=["--quantize-schedule=registers_grid2"])
    dual_quantize_case(out, args, "dual_quantize_blocks3_dy_edge_256x512",
                       (256, 512), rounding="sr", col_rounding="sr",
                       seed=0xC0FFEE0123456789, col_seed=0x8000000000000001,
                       edge=True, flags=["--quantize-schedule=blocks3"])
    hadamard_case(out, args, "hadamard", (128, 512))
    # The butterfly's order (NUMERICS.md section 4) where it shows: data
    # whose FP32 sums round (refgen --data=cancel's kind), the RHT alone, in
    # the post-RHT amax and in the quantization, RN and SR with a 64-bit
    # seed.
    hadamard_case(out, args, "hadamard_cancel", (96, 512), cancel=True)
    rht_quantize_case(out, args, "rht_quantize_rn_cancel", (128, 256),
                      rounding="rn", cancel=True)
    rht_quantize_case(out, args, "rht_quantize_sr_cancel_seed64", (64, 512),
                      seed=0xFEDCBA9876543210, cancel=True, data_seed=5)
    rht_quantize_case(out, args, "rht_quantize_sr_seed64_odd_runs_125x144",
                      (125, 144), seed=0x9E3779B97F4A7C15, edge=True)
    rht_quantize_case(out, args, "rht_quantize_rn_amax_given_odd_runs",
                      (75, 48), rounding="rn", amax=np.float32(20.0))
    dequantize_case(out, args, "dequantize_1x16", (128, 256), (1, 16))
    dequantize_case(out, args, "dequantize_16x16", (128, 256), (16, 16))
    # The dgrad copy of a 16x16 weight quantization (nvfp4.transpose).
    transpose_case(out, args, "transpose_16x16_256x512", (256, 512))
    transpose_case(out, args, "transpose_16x16_48x160", (48, 160))
    # nvfp4.pack of a tensor quantized elsewhere (a checkpoint).
    pack_case(out, args, "pack_1x16_64x256", (64, 256))
    # Checkpoint layers (issue 21): decode scales no amax reproduces.
    checkpoint_case(out, args, "checkpoint_dequantize_96x128", 0, 96, 128)
    checkpoint_case(out, args, "checkpoint_matmul_simt_64x96x128", 64, 96, 128)
    checkpoint_case(out, args, "checkpoint_matmul_wgmma_256x256x512",
                    256, 256, 512)
    checkpoint_case(out, args, "checkpoint_matmul_both_decode_128x256x256",
                    128, 256, 256, both_decode=True)
    checkpoint_case(out, args, "checkpoint_matmul_splitk_16x256x512",
                    16, 256, 512)
    checkpoint_case(out, args, "checkpoint_matmul_skinny_1x2112x512",
                    1, 2112, 512)
    checkpoint_import_case(out, args, "checkpoint_import_up_64x128x64",
                           "model.layers.0.mlp.up_proj", 64, 64, 128)
    checkpoint_import_case(out, args,
                           "checkpoint_import_static_down_128x256x512",
                           "model.layers.0.mlp.down_proj", 128, 256, 512,
                           input_amax=9.5)
    pack_case(out, args, "pack_16x16_swizzled_48x160", (48, 160),
              block=(16, 16), swizzled=True)
    # Tensor-core kernel (K % 256 == 0): square, skinny, edges, layouts.
    matmul_case(out, args, "matmul_256x512x1024", 256, 512, 1024)
    matmul_case(out, args, "matmul_skinny_1x384x256", 1, 384, 256,
                block_b=(1, 16), alpha=0.5)
    matmul_case(out, args, "matmul_skinny_16x256x512", 16, 256, 512)
    matmul_case(out, args, "matmul_skinny_128x128x2048", 128, 128, 2048)
    matmul_case(out, args, "matmul_odd_144x80x512", 144, 80, 512)
    matmul_case(out, args, "matmul_odd_200x328x768_bf16", 200, 328, 768,
                block_b=(1, 16), result="bf16", alpha=2.0)
    matmul_case(out, args, "matmul_swizzled_b_256x256x1024", 256, 256, 1024,
                block_b=(1, 16), swizzled_b=True)
    matmul_case(out, args, "matmul_batched_3x64x144x512", 64, 144, 512,
                batch=3)
    matmul_case(out, args, "matmul_1024x1024x2048", 1024, 1024, 2048)
    # The persistent decoder-warpgroup kernel (the sm_90a default) with
    # several tiles per CTA (a grid limit of 5 or 7 CTAs): 32 tiles of one
    # K step (the FP4 ring crosses tiles every step), 32 tiles with a BF16
    # C, ragged edges in both dimensions and raster groups of 3; two
    # decoder warpgroups; a 128 x 128 tile; ragged edges smaller than a
    # tile. (The default schedule is still the consumers-decode kernel: it
    # measured faster, docs/GemmKernels.md.)
    matmul_case(out, args, "matmul_persistent_1024x1024x256_g5", 1024, 1024,
                256, block_b=(1, 16), schedule="128x256x256_s2_d2w1_p8_g5")
    matmul_case(out, args, "matmul_persistent_1000x1008x512_bf16_g7", 1000,
                1008, 512, result="bf16", alpha=0.25,
                schedule="128x256x256_s2_d2w1_p3_g7")
    matmul_case(out, args, "matmul_decoders2_1024x1024x1024", 1024, 1024,
                1024, schedule="128x128x256_s3_d3w2_p8")
    matmul_case(out, args, "matmul_tile128_520x400x768", 520, 400, 768,
                schedule="128x128x256_s3_d3w1_p2")
    matmul_case(out, args, "matmul_batched_v2_2x200x304x512", 200, 304, 512,
                batch=2, schedule="128x256x256_s2_d2w1_p1")
    matmul_case(out, args, "matmul_v2_odd_144x80x512", 144, 80, 512,
                schedule="128x256x256_s2_d2w1_p8")
    # Split-K (FP32 partials summed in split order by a finalize kernel):
    # the rule's choice for a decode-like shape, and forced on a ragged
    # BF16 one with alpha (3 splits of 3 K steps).
    matmul_case(out, args, "matmul_splitk_16x1024x1024", 16, 1024, 1024)
    matmul_case(out, args, "matmul_splitk_200x328x768_bf16_k3", 200, 328,
                768, block_b=(1, 16), result="bf16", alpha=2.0,
                schedule="128x128x256_s4_k3")
    # The skinny kernel (decode-like M: B streamed through mma.sync, the
    # warps of a CTA splitting K): the rule's choice at M = 16, 1 and 32,
    # and forced on ragged M and N, 1x16 and swizzled B, batches, BF16 out
    # with alpha, 32-row B tiles and 32-row A tiles.
    matmul_case(out, args, "matmul_skinny_16x2304x1024_bf16", 16, 2304, 1024,
                result="bf16")
    matmul_case(out, args, "matmul_skinny_1x2112x512", 1, 2112, 512)
    matmul_case(out, args, "matmul_skinny_32x2304x1024", 32, 2304, 1024)
    matmul_case(out, args, "matmul_skinny_5x1000x768_bf16_w3", 5, 1000, 768,
                block_b=(1, 16), result="bf16", alpha=2.0,
                schedule="skinny8x16_w3")
    matmul_case(out, args, "matmul_skinny_batched_2x12x208x512_n32", 12, 208,
                512, batch=2, schedule="skinny16x32_w4")
    matmul_case(out, args, "matmul_skinny_swizzled_b_9x256x1024", 9, 256,
                1024, block_b=(1, 16), swizzled_b=True,
                schedule="skinny16x16_w8")
    matmul_case(out, args, "matmul_skinny_30x160x512_m32", 30, 160, 512,
                schedule="skinny32x16_w2")
    # A staged in shared memory once per warp (_a), 16 warps, batched.
    matmul_case(out, args, "matmul_skinny_staged_3x2304x1024_bf16", 3, 2304,
                1024, result="bf16", schedule="skinny8x16_w8_a")
    matmul_case(out, args, "matmul_skinny_staged_batched_2x5x200x2048", 5,
                200, 2048, batch=2, block_b=(1, 16),
                schedule="skinny8x16_w16_u1_a")
    # A staged with two n8 tiles of A rows (tile M 16; it crashed the
    # compiler before).
    matmul_case(out, args, "matmul_skinny_staged_m16_14x256x1024", 14, 256,
                1024, schedule="skinny16x16_w4_a")
    # The byte decode (_e: codes placed as F16 high bytes, 2^-14 times
    # their value, scales times 2^7), the prefetch (_pf: the next group's
    # loads before the current group's math; loop-carried with two or more
    # groups) and the staged A times B's 16x16 block scales (_s: B's codes
    # straight into mma.sync), on ragged M and N, 1x16 and swizzled B,
    # batches, BF16 out with alpha, 16-warp CTAs one per SM (128
    # registers).
    matmul_case(out, args, "matmul_skinny_bytes_5x1000x768_bf16_w3", 5, 1000,
                768, block_b=(1, 16), result="bf16", alpha=2.0,
                schedule="skinny8x16_w3_e")
    matmul_case(out, args, "matmul_skinny_bytes_swizzled_b_9x256x1024", 9,
                256, 1024, block_b=(1, 16), swizzled_b=True,
                schedule="skinny16x16_w8_pf_e")
    matmul_case(out, args, "matmul_skinny_bytes_30x160x512_m32_u1", 30, 160,
                512, schedule="skinny32x16_w2_u1_pf_e")
    matmul_case(out, args, "matmul_skinny_bytes_batched_2x12x208x1024_n32",
                12, 208, 1024, batch=2, schedule="skinny16x32_w2_u2_pf_e")
    matmul_case(out, args, "matmul_skinny_bytes_16x256x2048_w16", 16, 256,
                2048, result="bf16", schedule="skinny16x32_w16_pf_e")
    matmul_case(out, args, "matmul_skinny_scaled_3x1152x1024_bf16", 3, 1152,
                1024, result="bf16", alpha=0.5,
                schedule="skinny8x16_w8_pf_a_s_e")
    matmul_case(out, args, "matmul_skinny_scaled_batched_2x3x208x2048_n32", 3,
                208, 2048, batch=2, schedule="skinny8x32_w16_u1_pf_a_s_e")
    matmul_case(out, args, "matmul_skinny_scaled_swizzled_b_1x256x1024", 1,
                256, 1024, swizzled_b=True, schedule="skinny8x16_w8_pf_a_s_e")
    # The rule's skinny schedules of session 10, forced on small N (the
    # rule takes them from N = 2112 on, lit checks its names): at M = 1
    # with 4 chunks per warp two groups of 2 in flight (_u2; here at M = 2
    # and 3), 16x16 and 1x16 B; M <= 32 as one 32-row A tile without the
    # prefetch, ragged M and N.
    matmul_case(out, args, "matmul_skinny_rule_u2_3x256x2560_bf16", 3, 256,
                2560, result="bf16", schedule="skinny8x16_w5_u2_pf_a_s_e")
    matmul_case(out, args, "matmul_skinny_rule_u2_rows_2x208x4096", 2, 208,
                4096, block_b=(1, 16), schedule="skinny8x16_w8_u2_pf_a_e")
    matmul_case(out, args, "matmul_skinny_rule_m32_20x272x2048", 20, 272,
                2048, schedule="skinny32x16_w8_e")
    # The route: decode kernels into F16 scratch, then the same wgmma
    # pipeline fed by TMA (ragged, BF16 out with alpha, batched, the
    # quantizing epilogue).
    matmul_case(out, args, "matmul_route_1000x1008x512_bf16_g7", 1000, 1008,
                512, result="bf16", alpha=0.25,
                schedule="128x256x256_s0_d4w0_p3_g7")
    matmul_case(out, args, "matmul_route_batched_2x200x304x512", 200, 304,
                512, batch=2, schedule="128x128x256_s0_d6w0_p1_g5")
    # The route with clusters of 2 CTAs sharing B by TMA multicast (_c2):
    # several tile pairs per CTA, a last pair whose second tile lies past
    # M, batches, BF16 with alpha.
    matmul_case(out, args, "matmul_route_c2_1000x1008x512_bf16_g6", 1000,
                1008, 512, result="bf16", alpha=0.25,
                schedule="128x256x256_s0_d4w0_p3_g6_c2")
    matmul_case(out, args, "matmul_route_c2_batched_2x300x528x768_g4", 300,
                528, 768, batch=2, schedule="128x256x256_s0_d4w0_p2_g4_c2")
    # The TMA-store epilogue (_ts): C leaves through per-warp staging
    # buffers in shared memory and bulk tensor stores, which C's tensor map
    # clips at M and N. Ragged M and N with BF16 and alpha and several tiles
    # per CTA; batches (a tile's rows past M must not reach the next batch
    # element); N smaller than the tile (whole chunks past N) with 3 decoded
    # stages; 128 x 128 tiles; the decoder-warpgroup kernel; clusters.
    matmul_case(out, args, "matmul_route_ts_1000x1008x512_bf16_g7", 1000,
                1008, 512, result="bf16", alpha=0.25,
                schedule="128x256x256_s0_d4w0_p3_g7_ts")
    matmul_case(out, args, "matmul_route_ts_batched_2x200x304x512", 200, 304,
                512, batch=2, schedule="128x256x256_s0_d4w0_p1_g3_ts")
    matmul_case(out, args, "matmul_route_ts_144x80x512_d3", 144, 80, 512,
                schedule="128x256x256_s0_d3w0_p16_ts")
    matmul_case(out, args, "matmul_route_ts_batched_3x72x144x768_bf16_t128",
                72, 144, 768, batch=3, result="bf16",
                schedule="128x128x256_s0_d6w0_p1_g2_ts")
    matmul_case(out, args, "matmul_v2_ts_520x400x768", 520, 400, 768,
                schedule="128x128x256_s3_d2w1_p2_ts")
    matmul_case(out, args, "matmul_route_ts_c2_1000x1008x512_bf16_g6", 1000,
                1008, 512, result="bf16", alpha=0.25,
                schedule="128x256x256_s0_d4w0_p3_g6_c2_ts")
    # SIMT fallback (K not a multiple of 256): bit-exact.
    matmul_case(out, args, "matmul_simt_96x64x272", 96, 64, 272)
    # A GEMM whose output feeds another NVFP4 GEMM: the output amax comes
    # from the first GEMM's epilogue (fuse-output-amax).
    chain_case(out, args, "chain_output_amax_simt_96x48x272x80", 96, 48, 272,
               80, tensor_cores=False)
    chain_case(out, args, "chain_output_amax_tc_200x256x1024x384", 200, 256,
               1024, 384, tensor_cores=True)
    # A static amax: the whole quantization in the epilogue.
    epilogue_quantize_case(out, args, "epilogue_quantize_simt_96x272x48", 96,
                           272, 48, tensor_cores=False)
    epilogue_quantize_case(out, args, "epilogue_quantize_tc_200x1024x384",
                           200, 1024, 384, tensor_cores=True)
    # Both epilogues on the decoder-warpgroup kernel.
    chain_case(out, args, "chain_output_amax_v2_200x256x1024x384", 200, 256,
               1024, 384, tensor_cores=True,
               schedule="128x256x256_s2_d2w1_p8_g3")
    epilogue_quantize_case(out, args, "epilogue_quantize_v2_200x1024x384",
                           200, 1024, 384, tensor_cores=True,
                           schedule="128x256x256_s2_d2w1_p8_g3")
    chain_case(out, args, "chain_output_amax_skinny_16x256x1024x384", 16,
               256, 1024, 384, tensor_cores=True, schedule="skinny16x16_w2")
    epilogue_quantize_case(out, args, "epilogue_quantize_route_200x1024x384",
                           200, 1024, 384, tensor_cores=True,
                           schedule="128x256x256_s0_d4w0_p8_g3")
    chain_case(out, args, "chain_output_amax_route_c2_200x256x1024x384", 200,
               256, 1024, 384, tensor_cores=True,
               schedule="128x256x256_s0_d4w0_p8_g4_c2")
    epilogue_quantize_case(out, args, "epilogue_quantize_route_c2_200x1024x384",
                           200, 1024, 384, tensor_cores=True,
                           schedule="128x256x256_s0_d4w0_p8_g4_c2")
    # Both epilogues under the TMA-store schedule: the output amax counts
    # only what lies inside C (bit for bit the max of the GPU's own C); the
    # quantizing GEMM keeps its direct stores (no _ts in its name) and the
    # plain GEMM of the same case stores by TMA.
    chain_case(out, args, "chain_output_amax_route_ts_200x256x1024x384", 200,
               256, 1024, 384, tensor_cores=True,
               schedule="128x256x256_s0_d4w0_p8_g3_ts")
    epilogue_quantize_case(out, args, "epilogue_quantize_route_ts_200x1024x384",
                           200, 1024, 384, tensor_cores=True,
                           schedule="128x256x256_s0_d4w0_p8_g3_ts")
    for name in ("chain_output_amax_route_ts_200x256x1024x384",
                 "epilogue_quantize_route_ts_200x1024x384"):
        kernels = case_kernels(out, name)
        if kernels is not None and not any(
                kk.endswith("_ts") and "_q_" not in kk for kk in kernels):
            raise SystemExit(f"{name}: no TMA-store GEMM: {kernels}")
    # The MX formats (issue 20): every format, input type and scale
    # layout, edge values (NaN, +-Inf, zero blocks, BF16 subnormals, the
    # largest BF16), E8M0 scales near both ends, a grid whose last block of
    # threads is partly empty (375 blocks), swizzled padding and batches;
    # dequantization to f32 (bit for bit; a NaN matches any NaN) and BF16.
    for fmt in ("mxfp8_e4m3", "mxfp8_e5m2", "mxfp4"):
        mx_quantize_case(out, args, f"mx_quantize_{fmt}_256x1024", (256, 1024),
                         fmt)
        mx_quantize_case(out, args, f"mx_quantize_{fmt}_edge_64x256",
                         (64, 256), fmt, edge=True)
        mx_quantize_case(out, args, f"mx_quantize_{fmt}_f32_edge_64x256",
                         (64, 256), fmt, edge=True, dtype="f32")
        mx_quantize_case(out, args, f"mx_quantize_{fmt}_f16_96x160",
                         (96, 160), fmt, dtype="f16")
        mx_quantize_case(out, args, f"mx_quantize_{fmt}_ragged_125x96",
                         (125, 96), fmt, edge=True)
        mx_quantize_case(out, args, f"mx_quantize_{fmt}_swizzled_200x96",
                         (200, 96), fmt, swizzled=True, edge=True)
        mx_quantize_case(out, args,
                         f"mx_quantize_{fmt}_swizzled_batched_3x40x128",
                         (3, 40, 128), fmt, swizzled=True)
        mx_dequantize_case(out, args, f"mx_dequantize_{fmt}_edge_64x256",
                           (64, 256), fmt)
        mx_dequantize_case(out, args, f"mx_dequantize_{fmt}_swizzled_200x96",
                           (200, 96), fmt, swizzled=True)
        mx_dequantize_case(out, args, f"mx_dequantize_{fmt}_bf16_128x256",
                           (128, 256), fmt, result="bf16", edge=False)
    # The MX GEMM (SIMT, bit-exact): MXFP8 E4M3 x E4M3 and E4M3 x E5M2 (as
    # kind::mxf8f6f4 allows), MXFP4, ragged shapes, batches, swizzled B
    # scales, alpha, BF16 results.
    mx_matmul_case(out, args, "mx_matmul_mxfp8_e4m3_200x96x512", 200, 96, 512,
                   "mxfp8_e4m3", kernel="simt")
    mx_matmul_case(out, args, "mx_matmul_mxfp8_e4m3_e5m2_64x80x256_bf16", 64,
                   80, 256, "mxfp8_e4m3", "mxfp8_e5m2", alpha=0.5,
                   result="bf16")
    mx_matmul_case(out, args, "mx_matmul_mxfp4_129x40x320", 129, 40, 320,
                   "mxfp4", alpha=3.0)
    mx_matmul_case(out, args, "mx_matmul_mxfp4_batched_2x48x32x128_swizzled",
                   48, 32, 128, "mxfp4", swizzled_b=True, batch=2)
    # The tensor-core MX GEMM (sm_90a: both operands decoded into exact
    # BF16, then the route's wgmma GEMM; docs/Numerics.md 11.7): both MXFP8
    # element types and their mix, MXFP4, ragged M/N/K (K not a multiple of
    # the 256 K step: the tensor maps' zero fill), batches, swizzled B
    # scales, alpha, BF16 results, both epilogues (TMA store, direct), forced
    # and by the rule; within the GEMM tolerance, and bit for bit where the
    # data keep every sum exact.
    mx_matmul_case(out, args, "mx_tc_mxfp8_e4m3_200x96x512", 200, 96, 512,
                   "mxfp8_e4m3", kernel="tensor-core")
    mx_matmul_case(out, args, "mx_tc_mxfp8_e5m2_131x200x736", 131, 200, 736,
                   "mxfp8_e5m2", alpha=0.25, kernel="tensor-core")
    mx_matmul_case(out, args, "mx_tc_mxfp8_e4m3_e5m2_256x384x1024_bf16_rule",
                   256, 384, 1024, "mxfp8_e4m3", "mxfp8_e5m2", alpha=0.5,
                   result="bf16")
    mx_matmul_case(out, args, "mx_tc_mxfp8_e4m3_batched_3x100x136x256_swizzled",
                   100, 136, 256, "mxfp8_e4m3", swizzled_b=True, batch=3,
                   kernel="tensor-core")
    mx_matmul_case(out, args, "mx_tc_mxfp4_129x72x320", 129, 72, 320, "mxfp4",
                   alpha=3.0, kernel="tensor-core")
    mx_matmul_case(out, args, "mx_tc_mxfp4_batched_2x128x264x512_rule", 128,
                   264, 512, "mxfp4", batch=2)
    # C's rows of 200 bytes: the direct-store epilogue (the others: _ts).
    mx_matmul_case(out, args, "mx_tc_mxfp8_e4m3_100x100x256_bf16_direct", 100,
                   100, 256, "mxfp8_e4m3", result="bf16", kernel="tensor-core")
    mx_matmul_case(out, args, "mx_tc_mxfp4_exact_192x160x512", 192, 160, 512,
                   "mxfp4", kernel="tensor-core", exponents=None, exact=True)
    mx_matmul_case(out, args, "mx_tc_mxfp8_e4m3_exact_64x256x256", 64, 256,
                   256, "mxfp8_e4m3", kernel="tensor-core", exponents=None,
                   exact=True)
    # An MX GEMM feeding an NVFP4 GEMM (a mixed per-layer policy): the MX
    # GEMM's epilogue writes the amax the NVFP4 quantization of its output
    # takes, on the SIMT kernel (bit for bit) and the tensor cores (sm_90a:
    # the wgmma epilogue's amax, bit for bit max |C|; ragged M and N tiles,
    # whose rows and columns past C the amax must not count).
    for fmt in ("mxfp8_e4m3", "mxfp4"):
        mx_chain_case(out, args, f"mx_chain_output_amax_simt_{fmt}_64x96x256x80",
                      64, 96, 256, 80, fmt, tensor_cores=False)
        mx_chain_case(out, args, f"mx_chain_output_amax_tc_{fmt}_200x256x512x384",
                      200, 256, 512, 384, fmt, tensor_cores=True)
    mx_chain_case(out, args, "mx_chain_output_amax_tc_ragged_mxfp8_e4m3_130x208x256x96",
                  130, 208, 256, 96, "mxfp8_e4m3", tensor_cores=True)
    # MXFP8 quantization in upstream MLIR ops, compiled without raising.
    upstream_mx_quantize_case(out, args, "mx_upstream_quantize_mxfp8_128x256")
    # Divisions by a row's value (the softmax's by its sum): one reciprocal
    # a row, correctly rounded; chunks outside its ranges divide.
    row_division_case(out, args, "row_division_broadcast_64x512", 64, 512,
                      normalize=False)
    row_division_case(out, args, "row_division_normalize_48x4096", 48, 4096,
                      normalize=True)
    print("cases written to", out)


if __name__ == "__main__":
    sys.exit(main())
