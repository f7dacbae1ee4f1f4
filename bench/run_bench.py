#!/usr/bin/env python3
"""NVFP4 benchmarks on one GPU, with the peers measured in the same run.

  python3 bench/run_bench.py bench/build [--quantize-only]

Each nvfp4 program runs from its manifest (report.json) like
integration_test/run_cases.py: arguments uploaded, other buffers allocated
(zeroed where the manifest says so), kernels launched in order. Times are
CUDA-event medians of repeated runs after a warm-up; the bandwidth rows
(copy, quantize, RHT + SR) time BATCH back-to-back runs between two events,
so that launch gaps of tens of microseconds do not count against kernels
that run for tens of microseconds.
"""
import glob
import json
import math
import os
import subprocess
import sys
import textwrap

import cupy as cp
import numpy as np
import torch

# TMA tensor maps of "tensormap" parameters (shared with run_cases.py).
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "runtime", "python"))
import nvfp4_tensormap  # noqa: E402

N = 8192
REPEAT = 20
DTYPES = {"bf16": np.uint16, "f16": np.uint16, "f32": np.float32, "i8": np.uint8,
          "i32": np.uint32, "i64": np.int64}


def time_ms(fn, repeat=REPEAT):
    """Median over `repeat` runs of the time of one run of fn."""
    return time_batched_ms(fn, batch=1, repeat=repeat)


def time_batched_ms(fn, batch=10, repeat=REPEAT):
    """Median over `repeat` of the time of `batch` back-to-back runs of fn,
    per run."""
    fn()
    cp.cuda.runtime.deviceSynchronize()
    times = []
    for _ in range(repeat):
        start, stop = cp.cuda.Event(), cp.cuda.Event()
        start.record()
        for _ in range(batch):
            fn()
        stop.record()
        stop.synchronize()
        times.append(cp.cuda.get_elapsed_time(start, stop) / batch)
    return float(np.median(times))


def device_copy_gbs():
    """The device copy of 1 GiB: (ms, GB/s counting read + write), the
    ceiling of memory-bound kernels; printed."""
    src = cp.empty(1 << 30, cp.uint8)
    dst = cp.empty_like(src)
    ms = time_batched_ms(lambda: dst.__setitem__(slice(None), src))
    gbs = 2 * src.nbytes / ms / 1e6
    print(f"device copy 1 GiB: {ms:.3f} ms, {gbs:.0f} GB/s")
    return ms, gbs


def program(path, name, args):
    """A callable that runs nvfp4 program `name` with `args` (arrays or
    scalars, by function argument)."""
    with open(os.path.join(path, name + ".json")) as f:
        report = json.load(f)
    module = cp.RawModule(path=os.path.join(path, name + ".cubin"))
    buffers, zeroed, filled = [], [], []
    for b in report["buffers"]:
        dtype = DTYPES[b["element_type"]]
        if "argument" in b:
            buffers.append(args[b["argument"]].reshape(-1).view(dtype))
        else:
            buffers.append(cp.zeros(b["elements"], dtype))
            if b["zero_initialized"]:
                zeroed.append(buffers[-1])
            if "fill_from_argument" in b:  # e.g. a given amax (f32 bits)
                value = np.float32(args[b["fill_from_argument"]]).view(np.uint32)
                filled.append((buffers[-1], value))
            if "fill_bits" in b:  # a constant, e.g. a static amax (32-bit)
                filled.append((buffers[-1].view(np.uint32),
                               np.uint32(b["fill_bits"])))
    launches = []
    for k in report["kernels"]:
        params = []
        for p in k["params"]:
            if p["type"] == "ptr":
                params.append(buffers[p["buffer"]])
            elif p["type"] == "tensormap":  # encoded once per program
                params.append(nvfp4_tensormap.cupy_tensormap(
                    p, report["buffers"], buffers,
                    f"{name}: kernel '{k['name']}'"))
            elif "argument" in p:
                params.append({"i64": np.int64, "f32": np.float32}[p["type"]](
                    args[p["argument"]]))
            else:
                params.append(np.float32(float(p["value"])))
        fn = module.get_function(k["name"])
        smem = k.get("shared_memory_bytes", 0) or 0
        # The limit counts static + dynamic shared memory: ask for the
        # dynamic bytes whenever there are any (a kernel with 36 KB static
        # and 20 KB dynamic failed to launch without it).
        if smem > 0:
            fn.max_dynamic_shared_size_bytes = smem
        launches.append((fn, tuple(k["grid"]), tuple(k["block"]),
                         tuple(params), smem))

    def run():
        for z in zeroed:  # the manifest's memsets are part of the work
            z.fill(0)
        for buffer, value in filled:
            buffer.fill(value)
        for fn, grid, block, params, smem in launches:
            fn(grid, block, params, shared_mem=smem)
    run.kernels = [k["name"] for k in report["kernels"]]
    # Result buffers by result index (e.g. to feed another library).
    run.results = {b["result"]: buffers[i]
                   for i, b in enumerate(report["buffers"]) if "result" in b}
    return run


def torch_quantize(x):
    """NVFP4 1x16 quantization (same algorithm) in PyTorch, for torch.compile."""
    amax = x.abs().float().amax()
    packed, scales = torch_quantize_given(x, amax)
    return packed, scales, amax


def torch_quantize_given(x, amax):
    """torch_quantize with the tensor amax given (no amax reduction)."""
    s_enc = torch.where((amax == 0) | torch.isinf(amax), torch.ones_like(amax),
                        torch.clamp(2688.0 / amax, max=3.4028234663852886e38))
    s_dec = 1.0 / s_enc
    mult = s_enc * np.float32(1.0 / 6.0)
    xb = x.float().view(x.shape[0], -1, 16)
    bamax = xb.abs().amax(dim=-1, keepdim=True)
    scale = torch.clamp(bamax * mult, max=448.0).to(torch.float8_e4m3fn)
    enc = torch.clamp(1.0 / (scale.float() * s_dec), max=3.4028234663852886e38)
    y = xb * enc
    a = y.abs()
    code = ((a > 0.25).int() + (a >= 0.75).int() + (a > 1.25).int() +
            (a >= 1.75).int() + (a > 2.5).int() + (a >= 3.5).int() +
            (a > 5.0).int())
    code = code | (torch.signbit(y).int() << 3)
    code = code.view(x.shape[0], -1, 2).to(torch.uint8)
    packed = code[..., 0] | (code[..., 1] << 4)
    return packed, scale.view(torch.uint8)


def compare_fused(path, label, fused_label, name, args, fused_suffix="",
                  repeat=10):
    """Times program `name` + fused_suffix against `name`_unfused (the same
    IR compiled without the fusion) and prints both and the ratio."""
    fused = program(path, name + fused_suffix, args)
    unfused = program(path, name + "_unfused", args)
    fused_ms = time_ms(fused, repeat=repeat)
    unfused_ms = time_ms(unfused, repeat=repeat)
    print(f"{label}: {fused_label} ({' + '.join(fused.kernels)}) "
          f"{fused_ms:.4f} ms, unfused ({' + '.join(unfused.kernels)}) "
          f"{unfused_ms:.4f} ms: {unfused_ms / fused_ms:.3f} x faster fused")


def quantize_benchmarks(path, x_bits, x_bf16, copy_gbs):
    """The quantization rows of issue 15's table, each against the device
    copy measured in the same run. Bytes: the input read once plus the codes
    and scales written (and the 4-byte amax); amax-included rows also give
    the ratio counting both reads of the input (amax pass + quantize pass);
    the weight rows write two copies (W and W^T), and so do the dual rows
    (rowwise and columnwise)."""
    in_bytes = N * N * 2
    codes_1x16 = N * N // 2 + N * N // 16 + 4
    codes_16x16 = N * N // 2 + N * N // 256

    def report(label, ms, out_bytes, reads=1, peer_ms=None, size=N):
        scale = (size / N) ** 2
        one = (in_bytes + out_bytes) * scale / ms / 1e6
        line = (f"{label}: {ms:.4f} ms, {one:.0f} GB/s (input + output bytes) "
                f"= {one / copy_gbs:.2f} x copy")
        if reads > 1:
            both = (reads * in_bytes + out_bytes) * scale / ms / 1e6
            line += (f"; counting all {reads} reads: {both:.0f} GB/s = "
                     f"{both / copy_gbs:.2f} x copy")
        if peer_ms is not None:
            line += f"; nvfp4 is {peer_ms / ms:.2f} x faster than torch.compile"
        print(line)

    # The amax the "amax given" programs receive (TE's amax of the previous
    # step): the tensor's own, so that the bytes are those of the full path.
    amax = float(cp.abs(x_bits.view(cp.uint16).astype(cp.uint32) << 16)
                 .view(cp.float32).max())
    compiled = torch.compile(torch_quantize)
    t_ms = time_batched_ms(lambda: compiled(x_bf16))
    t_gbs = (in_bytes + codes_1x16) / t_ms / 1e6
    print(f"torch.compile quantize (same algorithm, amax included): {t_ms:.4f} ms, "
          f"{t_gbs:.0f} GB/s = {t_gbs / copy_gbs:.2f} x copy")
    amax_t = torch.tensor(amax, device="cuda", dtype=torch.float32)
    compiled_given = torch.compile(torch_quantize_given)
    tg_ms = time_batched_ms(lambda: compiled_given(x_bf16, amax_t))
    tg_gbs = (in_bytes + codes_1x16) / tg_ms / 1e6
    print(f"torch.compile quantize (same algorithm, amax given): {tg_ms:.4f} ms, "
          f"{tg_gbs:.0f} GB/s = {tg_gbs / copy_gbs:.2f} x copy")

    # nvfp4 quantize: with the amax given (one pass), then amax pass +
    # quantize pass.
    qg = program(path, "quantize_amax_given", [x_bits, amax])
    report(f"nvfp4 quantize 1x16 RN, amax given ({' + '.join(qg.kernels)})",
           time_batched_ms(qg), codes_1x16, peer_ms=tg_ms)
    q = program(path, "quantize", [x_bits])
    report(f"nvfp4 quantize 1x16 RN, amax included ({' + '.join(q.kernels)})",
           time_batched_ms(q), codes_1x16, reads=2, peer_ms=t_ms)

    wg = program(path, "wgrad_operand_amax_given", [x_bits, 1234, amax])
    report(f"nvfp4 RHT + SR quantize (wgrad operand), amax given "
           f"({' + '.join(wg.kernels)})", time_batched_ms(wg), codes_1x16)
    w = program(path, "wgrad_operand", [x_bits, 1234])
    report(f"nvfp4 RHT + SR quantize (wgrad operand), amax included "
           f"({' + '.join(w.kernels)})", time_batched_ms(w), codes_1x16,
           reads=2)

    # 16x16 weights and their transposed copy (fprop W, dgrad W^T).
    cg = program(path, "weight_copies_amax_given", [x_bits, amax])
    report(f"nvfp4 16x16 weight + transposed copy, amax given "
           f"({' + '.join(cg.kernels)})", time_batched_ms(cg), 2 * codes_16x16)
    c = program(path, "weight_copies", [x_bits])
    report(f"nvfp4 16x16 weight + transposed copy, amax included "
           f"({' + '.join(c.kernels)})", time_batched_ms(c), 2 * codes_16x16,
           reads=2)
    # One read, two quantizations (nvfp4.dual_quantize): X's rowwise RN and
    # columnwise RHT + RN, dY's SR and RHT + SR; output = two sets of codes
    # and scales, the input counted once. The separate pair reads dY and a
    # dY^T given as its own tensor (the transpose itself not counted).
    # Given amaxes: the tensor's own for both sides (the post-RHT amax is
    # within a few percent of it; the bytes written are the same).
    dual_out = 2 * codes_1x16
    dxg = program(path, "dual_x_amax_given", [x_bits, amax, amax])
    report(f"nvfp4 dual quantize X (RN + RHT RN columnwise), amax given "
           f"({' + '.join(dxg.kernels)})", time_batched_ms(dxg), dual_out)
    dx = program(path, "dual_x", [x_bits])
    report(f"nvfp4 dual quantize X (RN + RHT RN columnwise), amax included "
           f"({' + '.join(dx.kernels)})", time_batched_ms(dx), dual_out,
           reads=2)
    ddg = program(path, "dual_dy_amax_given", [x_bits, 1234, 5678, amax, amax])
    ddg_ms = time_batched_ms(ddg)
    report(f"nvfp4 dual quantize dY (SR + RHT SR columnwise), amax given "
           f"({' + '.join(ddg.kernels)})", ddg_ms, dual_out)
    dd = program(path, "dual_dy", [x_bits, 1234, 5678])
    report(f"nvfp4 dual quantize dY (SR + RHT SR columnwise), amax included "
           f"({' + '.join(dd.kernels)})", time_batched_ms(dd), dual_out,
           reads=2)
    dt = x_bits.reshape(-1)[:2048 * 4096]
    d4 = program(path, "dual_dy_2048x4096", [dt, 1234, 5678])
    report(f"nvfp4 dual quantize dY 2048x4096 (the training step's), amax "
           f"included ({' + '.join(d4.kernels)})", time_batched_ms(d4),
           dual_out, reads=2, size=math.sqrt(2048 * 4096))
    xt_bits = cp.ascontiguousarray(x_bits.reshape(N, N).T)
    sep = program(path, "dual_dy_separate_amax_given",
                  [x_bits, xt_bits, 1234, 5678, amax, amax])
    sep_ms = time_batched_ms(sep)
    report(f"nvfp4 dY SR + dY^T RHT SR as two quantizations, amax given "
           f"({' + '.join(sep.kernels)})", sep_ms, dual_out, reads=2)
    print(f"dual quantize dY vs the two separate quantizations (amax given): "
          f"{sep_ms / ddg_ms:.2f} x faster")
    w4 = x_bits.reshape(-1)[:4096 * 4096]
    c4 = program(path, "weight_copies_4096", [w4])
    report(f"nvfp4 16x16 weight + transposed copy 4096x4096, amax included "
           f"({' + '.join(c4.kernels)})", time_batched_ms(c4),
           2 * codes_16x16, reads=2, size=4096)
    if os.path.exists(os.path.join(path, "weight_copies_4096_registers.json")):
        r4 = program(path, "weight_copies_4096_registers", [w4])
        report(f"nvfp4 16x16 weight + transposed copy 4096x4096, amax "
               f"included, registers path forced ({' + '.join(r4.kernels)})",
               time_batched_ms(r4), 2 * codes_16x16, reads=2, size=4096)
    forced_input_paths(path, "wgrad_operand_amax_given",
                       "RHT + SR quantize (wgrad operand), amax given",
                       [x_bits, 1234, amax], codes_1x16, report)
    forced_input_paths(path, "weight_copies_amax_given",
                       "16x16 weight + transposed copy, amax given",
                       [x_bits, amax], 2 * codes_16x16, report)
    forced_input_paths(path, "dual_x_amax_given",
                       "dual quantize X (RN + RHT RN columnwise), amax given",
                       [x_bits, amax, amax], dual_out, report)
    forced_input_paths(path, "dual_dy_amax_given",
                       "dual quantize dY (SR + RHT SR columnwise), amax given",
                       [x_bits, 1234, 5678, amax, amax], dual_out, report)


def forced_input_paths(path, base_name, label, args, out_bytes, report):
    """Program `base_name` compiled with each input path forced
    (nvfp4-compile --quantize-schedule: `base_name`_registers, _ring2..4,
    where built): times, and each variant's outputs compared byte for byte
    with those of `base_name` (the default) on the 8192 x 8192 input (the
    GPU suite's ring cases are small)."""
    if not os.path.exists(os.path.join(path, base_name + ".json")):
        return
    base = program(path, base_name, args)
    base()
    cp.cuda.runtime.deviceSynchronize()
    want = {k: cp.asnumpy(v) for k, v in base.results.items()}
    # The input paths, then the arithmetic variants (<base>__<schedule>,
    # bench/make_bench.sh), each timed right after the default again so
    # that drift between the rows does not decide a comparison.
    variants = [base_name + "_" + v for v in ("registers", "ring2", "ring3", "ring4")]
    variants += sorted(os.path.basename(f)[:-5] for f in
                       glob.glob(os.path.join(path, base_name + "__*.json")))
    for name in variants:
        if not os.path.exists(os.path.join(path, name + ".json")):
            continue
        variant = name[len(base_name) + 1:].lstrip("_")
        if "__" in name:
            report(f"nvfp4 {label}, default again ({' + '.join(base.kernels)})",
                   time_batched_ms(base), out_bytes)
        run = program(path, name, args)
        ms = time_batched_ms(run)
        same = all(np.array_equal(cp.asnumpy(run.results[k]), v)
                   for k, v in want.items())
        report(f"nvfp4 {label}, quantize-schedule {variant} forced "
               f"({' + '.join(run.kernels)}; outputs "
               f"{'identical to' if same else 'DIFFER from'} the default's)",
               ms, out_bytes)


def main():
    path = sys.argv[1]
    dev = cp.cuda.runtime.getDeviceProperties(0)["name"].decode()
    print(f"device: {dev}; torch {torch.__version__}; cupy {cp.__version__}")
    rng = cp.random.default_rng(0)
    x = (rng.standard_normal((N, N), dtype=cp.float32)).astype(cp.float32)
    x_bf16 = torch.as_tensor(x, device="cuda").to(torch.bfloat16)
    x_bits = cp.asarray(x_bf16.view(torch.int16)).view(cp.uint16)
    in_bytes = N * N * 2

    # Device copy: the bandwidth ceiling.
    dst = cp.empty_like(x_bits)
    copy_ms = time_batched_ms(lambda: dst.__setitem__(slice(None), x_bits))
    copy_gbs = 2 * in_bytes / copy_ms / 1e6
    print(f"device copy {N}x{N} bf16: {copy_ms:.4f} ms, {copy_gbs:.0f} GB/s (read+write)")

    quantize_benchmarks(path, x_bits, x_bf16, copy_gbs)
    if "--quantize-only" in sys.argv:
        return

    # GEMM 8192^3: cuBLAS BF16 vs the nvfp4 SIMT kernel (dequant included).
    a = torch.randn(N, N, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(N, N, device="cuda", dtype=torch.bfloat16)
    cublas_ms = time_ms(lambda: torch.matmul(a, b), repeat=10)
    flops = 2 * N ** 3
    print(f"cuBLAS bf16 GEMM {N}^3: {cublas_ms:.3f} ms, {flops / cublas_ms / 1e9:.0f} TFLOP/s")
    codes_a = cp.asarray(rng.integers(0, 256, N * N // 2, dtype=cp.uint8))
    scales_a = cp.full(N * N // 16, 0x38, cp.uint8)
    codes_b = cp.asarray(rng.integers(0, 256, N * N // 2, dtype=cp.uint8))
    scales_b = cp.full((N // 16) * (N // 16), 0x38, cp.uint8)
    amax = cp.full(1, np.float32(1.0).view(np.uint32), cp.uint32)
    g = program(path, "gemm", [codes_a, scales_a, amax, codes_b, scales_b, amax.copy()])
    g_ms = time_ms(g, repeat=10)
    print(f"nvfp4 scaled_matmul {N}^3 ({g.kernels[-1]}): {g_ms:.3f} ms, "
          f"{flops / g_ms / 1e9:.1f} TFLOP/s = {cublas_ms / g_ms:.3f} x cuBLAS bf16")
    # The epilogue amax (fuse-output-amax): its cost in the GEMM, and what it
    # saves when the output is quantized for the next GEMM.
    go = program(path, "gemm_output_amax",
                 [codes_a, scales_a, amax, codes_b, scales_b, amax.copy()])
    go_ms = time_ms(go, repeat=10)
    print(f"nvfp4 scaled_matmul {N}^3 + output amax ({go.kernels[-1]}): "
          f"{go_ms:.3f} ms = {g_ms / go_ms:.3f} x the GEMM alone")
    chain_args = [codes_a, scales_a, amax, codes_b, scales_b, amax.copy(),
                  codes_b, scales_b, amax.copy()]
    compare_fused(path, f"GEMM -> quantize -> GEMM {N}^3", "fused output amax",
                  "gemm_quantize", chain_args)
    # A static amax: the quantization moves into the first GEMM's epilogue
    # (codes and scales written there; no BF16 C in memory).
    compare_fused(path, f"GEMM -> quantize (static amax) -> GEMM {N}^3",
                  "epilogue quantization", "gemm_quantize_static",
                  chain_args + [1000.0])
    # K = 256: the memory-bound case, where C's write and re-read matter.
    ca = cp.asarray(rng.integers(0, 256, N * 256 // 2, dtype=cp.uint8))
    sa = cp.full(N * 256 // 16, 0x38, cp.uint8)
    cb = cp.asarray(rng.integers(0, 256, N * 256 // 2, dtype=cp.uint8))
    sb = cp.full((N // 16) * (256 // 16), 0x38, cp.uint8)
    k_args = [ca, sa, amax.copy(), cb, sb, amax.copy(), 1000.0]
    compare_fused(path, f"GEMM {N}x{N}x256 + quantize (static amax)",
                  "epilogue quantization", "gemm_k256_quantize", k_args,
                  fused_suffix="_fused", repeat=20)
    triton_peer(flops, cublas_ms)
    jax_peer(flops, cublas_ms)


def triton_peer(flops, cublas_ms):
    """Triton's tl.dot_scaled with E2M1 operands and E8M0 (MXFP4) scales:
    the block-scaled GEMM a Triton user would write on Hopper (Triton's
    NVFP4 scales, E4M3 per 16, crash its compiler there)."""
    try:
        import triton
        import triton.language as tl

        @triton.jit
        def mxfp4_gemm(a, a_scale, b, b_scale, c, M, N, K,
                       BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
            pid_m = tl.program_id(0)
            pid_n = tl.program_id(1)
            rm = pid_m * BM + tl.arange(0, BM)
            rn = pid_n * BN + tl.arange(0, BN)
            acc = tl.zeros((BM, BN), dtype=tl.float32)
            for k0 in range(0, K, BK):
                rk = k0 // 2 + tl.arange(0, BK // 2)
                rs = k0 // 32 + tl.arange(0, BK // 32)
                av = tl.load(a + rm[:, None] * (K // 2) + rk[None, :])
                bv = tl.load(b + rk[:, None] + rn[None, :] * (K // 2))
                sa = tl.load(a_scale + rm[:, None] * (K // 32) + rs[None, :])
                sb = tl.load(b_scale + rn[:, None] * (K // 32) + rs[None, :])
                acc = tl.dot_scaled(av, sa, "e2m1", bv, sb, "e2m1", acc)
            tl.store(c + rm[:, None] * N + rn[None, :], acc.to(tl.bfloat16))

        a = torch.randint(0, 256, (N, N // 2), device="cuda", dtype=torch.uint8)
        b = torch.randint(0, 256, (N, N // 2), device="cuda", dtype=torch.uint8)
        sa = torch.full((N, N // 32), 127, device="cuda", dtype=torch.uint8)
        sb = torch.full((N, N // 32), 127, device="cuda", dtype=torch.uint8)
        c = torch.empty((N, N), device="cuda", dtype=torch.bfloat16)
        BM, BN, BK = 128, 128, 128
        grid = (N // BM, N // BN)
        run = lambda: mxfp4_gemm[grid](a, sa, b, sb, c, N, N, N, BM, BN, BK,
                                      num_warps=8, num_stages=3)
        ms = time_ms(run, repeat=10)
        print(f"Triton {triton.__version__} dot_scaled mxfp4 {N}^3: {ms:.3f} ms, "
              f"{flops / ms / 1e9:.0f} TFLOP/s = {cublas_ms / ms:.3f} x cuBLAS bf16")
    except Exception as e:  # a peer failing is a result, not a crash
        print(f"Triton dot_scaled mxfp4: failed ({type(e).__name__}: "
              f"{str(e).splitlines()[0][:200] if str(e) else ''})")


def jax_peer(flops, cublas_ms):
    """JAX's nvfp4 scaled_dot_general, in a subprocess (JAX and PyTorch each
    want the GPU's memory)."""
    code = textwrap.dedent(f"""
        import os, time
        os.environ["XLA_PYTHON_CLIENT_PREALLOCATE"] = "false"
        import jax, jax.numpy as jnp
        from jax import nn
        N = {N}
        ka, kb = jax.random.split(jax.random.key(0))
        a = jax.random.normal(ka, (1, N, N), jnp.bfloat16)
        b = jax.random.normal(kb, (1, N, N), jnp.bfloat16)
        configs = [nn.get_scaled_dot_general_config("nvfp4")] * 3
        f = jax.jit(lambda x, y: nn.scaled_dot_general(
            x, y, (((2,), (2,)), ((0,), (0,))), configs=configs,
            preferred_element_type=jnp.bfloat16))
        f(a, b).block_until_ready()
        times = []
        for _ in range(10):
            t = time.perf_counter(); f(a, b).block_until_ready()
            times.append(time.perf_counter() - t)
        times.sort()
        print("JAXMS", times[len(times) // 2] * 1e3, jax.__version__)
    """)
    try:
        out = subprocess.run([sys.executable, "-c", code], capture_output=True,
                             text=True, timeout=300)
        line = [l for l in out.stdout.splitlines() if l.startswith("JAXMS")]
        if not line:
            tail = (out.stderr.strip().splitlines() or ["no output"])[-1]
            print(f"JAX scaled_dot_general nvfp4: failed ({tail[:200]})")
            return
        ms, version = float(line[0].split()[1]), line[0].split()[2]
        print(f"JAX {version} scaled_dot_general nvfp4 {N}^3 (quantization "
              f"included, wall-clock): {ms:.3f} ms, {flops / ms / 1e9:.0f} "
              f"TFLOP/s = {cublas_ms / ms:.3f} x cuBLAS bf16")
    except Exception as e:
        print(f"JAX scaled_dot_general nvfp4: failed ({type(e).__name__}: {e})")


if __name__ == "__main__":
    main()
