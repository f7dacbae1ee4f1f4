#!/usr/bin/env python3
"""The block-scaled GEMM against what a Hopper user would pick instead, in
one run (issue 13):

  python3 bench/run_gemm_bench.py bench/build-gemm      (after make_gemm_bench.sh)

Per shape M x N x K (BF16 output): cuBLAS BF16 (torch.matmul on BF16
operands of the same shape); the route -- our dequantize kernels for A and
B, then torch.matmul on their BF16 outputs; the fused nvfp4.scaled_matmul
under the lowering's schedule choice and under forced schedules (the kernel
name says which), among them the route's GEMM with the TMA-store epilogue
(ts_schedules.txt; the route and those are timed twice, the faster counts). For memory-bound shapes (M <= 128) also the bytes the
weight B occupies (codes + scales) per second against the 1 GiB device
copy -- with one set of operands, so B stays in the 50 MB L2 between
runs, and with each launch's host overhead: the decode-shape numbers of
record are bench/run_decode_bench.py's (CUDA graphs, 8 rotating operand
sets, the same-size copy and the read-only peer in the same run).
Times are CUDA-event medians (run_bench.time_ms) after a warm-up of 5
runs of each program; the peers are timed before and after the fused
variants of a shape and the faster of the two counts (the GPU's clocks
drift over a run: the first of two identical kernels measured up to 7 %
slower, bench/logs/2026-12-01-h200-gemm-final-run10.log).
"""
import os
import sys

import cupy as cp
import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from run_bench import device_copy_gbs, program, time_ms  # noqa: E402


def operands(rng, m, n, k, block_b, scale_bytes=(0x20, 0x40)):
    """Random codes, E4M3 scale bytes in [scale_bytes) (by default scales in
    [2^-3, 2^1], no NaN bytes) and amax 1."""
    lo, hi = scale_bytes
    codes_a = cp.asarray(rng.integers(0, 256, m * k // 2, dtype=cp.uint8))
    codes_b = cp.asarray(rng.integers(0, 256, n * k // 2, dtype=cp.uint8))
    scales_a = cp.asarray(rng.integers(lo, hi, m * k // 16, dtype=cp.uint8))
    rows_b = n if block_b == "1x16" else n // 16
    scales_b = cp.asarray(rng.integers(lo, hi, rows_b * k // 16,
                                       dtype=cp.uint8))
    amax = cp.full(1, np.float32(1.0).view(np.uint32), cp.uint32)
    return [codes_a, scales_a, amax, codes_b, scales_b, amax.copy()]


def timed(fn, repeat):
    """time_ms after 5 untimed runs."""
    for _ in range(5):
        fn()
    return time_ms(fn, repeat=repeat)


def main():
    path = sys.argv[1]
    dev = cp.cuda.runtime.getDeviceProperties(0)["name"].decode()
    print(f"device: {dev}; torch {torch.__version__}; cupy {cp.__version__}")
    with open(os.path.join(path, "shapes.txt")) as f:
        shapes = f.read().split()
    with open(os.path.join(path, "extra_schedules.txt")) as f:
        extra = f.read().split()
    # The TMA-store schedules (absent in older build folders).
    ts_path = os.path.join(path, "ts_schedules.txt")
    ts = open(ts_path).read().split() if os.path.exists(ts_path) else []
    rng = cp.random.default_rng(0)

    # The copy bandwidth (read + write), the ceiling of memory-bound shapes.
    copy_ms, copy_gbs = device_copy_gbs()

    rows = []
    for shape in shapes:
        dims, block_b = shape.split(":")
        m, n, k = (int(v) for v in dims.split("x"))
        flops = 2 * m * n * k
        args = operands(rng, m, n, k, block_b)
        a16 = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
        b16 = torch.randn(n, k, device="cuda", dtype=torch.bfloat16)
        repeat = 20 if flops > 1e11 else 50
        cublas_run = lambda: torch.matmul(a16, b16.t())
        cublas = timed(cublas_run, repeat)
        deq = program(path, f"dequant_{dims}", args)
        xa, xb = deq.results[0], deq.results[1]
        ta = torch.as_tensor(xa, device="cuda").view(torch.bfloat16).view(m, k)
        tb = torch.as_tensor(xb, device="cuda").view(torch.bfloat16).view(n, k)

        def route():
            deq()
            torch.matmul(ta, tb.t())
        route_ms = timed(route, repeat)
        deq_ms = timed(deq, repeat)
        variants = [("", "default"), ("_v1", "v1"), ("_v2", "v2"),
                    ("_route", "route (ours)"),
                    ("_route_c2", "route, clusters of 2")]
        if dims == "8192x8192x8192":
            variants += [("_" + s, s) for s in extra]
        variants += [("_" + s, s) for s in ts if os.path.exists(
            os.path.join(path, f"gemm_{dims}_{s}.json"))]
        measured = []
        for suffix, label in variants:
            g = program(path, f"gemm_{dims}{suffix}", args)
            # The GEMM's kernel (split-K ends with its finalize kernel).
            gemm = [x for x in g.kernels if "scaled_matmul" in x] or g.kernels
            measured.append((label, gemm[-1], timed(g, repeat)))
            del g
        # The route and its TMA-store variants once more, in the same
        # order: each keeps the faster of its two times, so that the clock
        # drift does not decide between them.
        for i, (suffix, label) in enumerate(variants):
            if suffix == "_route" or suffix[1:] in ts:
                g = program(path, f"gemm_{dims}{suffix}", args)
                name, ms = measured[i][1], measured[i][2]
                measured[i] = (label, name, min(ms, timed(g, repeat)))
                del g
        # The peers again, after the fused variants: the faster counts.
        cublas = min(cublas, timed(cublas_run, repeat))
        route_ms = min(route_ms, timed(route, repeat))
        del ta, tb, a16, b16
        print(f"{dims} (B {block_b}): cuBLAS bf16 {cublas:.4f} ms "
              f"({flops / cublas / 1e9:.0f} TFLOP/s); route {route_ms:.4f} ms "
              f"(our dequantize kernels {deq_ms:.4f} ms + cuBLAS)")
        for label, kernel, ms in measured:
            line = (f"  fused {label:26s} {kernel.split('_to_bf16_')[-1]:32s}"
                    f" {ms:.4f} ms {flops / ms / 1e9:6.1f} TFLOP/s = "
                    f"{cublas / ms:.3f} x cuBLAS, {route_ms / ms:.3f} x route")
            if m <= 128:
                rows_b = n if block_b == "1x16" else n // 16
                weight = n * k // 2 + rows_b * k // 16
                gbs = weight / ms / 1e6
                line += f"; weight {gbs:.0f} GB/s = {gbs / copy_gbs:.2f} x copy"
            print(line)
            rows.append((dims, label, ms, cublas, route_ms))
        del deq
        cp.get_default_memory_pool().free_all_blocks()
        torch.cuda.empty_cache()
    print("\nsummary: shape, schedule, fused ms, x cuBLAS, x route")
    for dims, label, ms, cublas, route_ms in rows:
        print(f"  {dims:20s} {label:26s} {ms:8.4f} {cublas / ms:6.3f} "
              f"{route_ms / ms:6.3f}")


if __name__ == "__main__":
    main()
