#!/usr/bin/env python3
"""The MX GEMM's two sm_90a kernels against each other and cuBLAS BF16:

  python3 bench/run_mx_gemm_bench.py bench/build-mx-gemm   (after make_mx_gemm_bench.sh)

Per format (MXFP8 E4M3, MXFP4) and square size: the SIMT kernel
(--mx-gemm=simt), the tensor-core form (--mx-gemm=tensor-core: two decode
kernels into BF16 scratch + the route's wgmma GEMM) and torch.matmul on
BF16 operands of the same shape. The last line per format is the smallest
size from which the tensor-core form is faster: the measured threshold of
the rule (kMXTensorCoreMinMultiplyAdds = 2^22, i.e. 161^3). Times are
CUDA-event medians (run_bench.time_ms) after 5 warm-up runs.
"""
import json
import os
import sys

import cupy as cp
import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from run_bench import program, time_ms  # noqa: E402


def mx_operands(path, name, rng):
    """The program's arguments from its manifest (by argument index: codes,
    scales, amax of A, then of B; the unused amax parts have no buffer):
    random finite codes and E8M0 scales in [2^-4, 2^4]."""
    with open(os.path.join(path, name + ".json")) as f:
        buffers = json.load(f)["buffers"]
    args = {}
    for b in buffers:
        if "argument" not in b:
            continue
        part = b["argument"] % 3  # codes, scales, amax of A then of B
        count = b["elements"]
        if part == 0:
            # FP8: no NaN/Inf codes (magnitudes below 0x78); E2M1: any.
            codes = rng.integers(0, 256, count, dtype=cp.uint8)
            if "mxfp8" in name:
                codes = (codes & 0x80) | (codes % 0x78)
            args[b["argument"]] = codes
        elif part == 1:
            args[b["argument"]] = rng.integers(123, 132, count, dtype=cp.uint8)
        else:
            args[b["argument"]] = cp.zeros(count, cp.uint32)
    return [args.get(i) for i in range(max(args) + 1)]


def timed(fn, repeat):
    for _ in range(5):
        fn()
    return time_ms(fn, repeat=repeat)


def main():
    path = sys.argv[1]
    dev = cp.cuda.runtime.getDeviceProperties(0)["name"].decode()
    print(f"device: {dev}; torch {torch.__version__}; cupy {cp.__version__}")
    rng = cp.random.default_rng(0)
    table = {}
    with open(os.path.join(path, "programs.txt")) as f:
        entries = [line.split() for line in f if line.strip()]
    for fmt, size, kernel, name in entries:
        size = int(size)
        flops = 2 * size ** 3
        repeat = 5 if kernel == "simt" and size >= 1024 else 20
        run = program(path, name, mx_operands(path, name, rng))
        ms = timed(run, repeat)
        table.setdefault((fmt, size), {})[kernel] = ms
        print(f"{fmt:10s} {size:5d}^3 {kernel:6s} {ms:9.4f} ms "
              f"{flops / ms / 1e9:7.1f} TFLOP/s  ({run.kernels[-1]})")
        del run
        cp.get_default_memory_pool().free_all_blocks()
    for (fmt, size), row in sorted(table.items()):
        a = torch.randn(size, size, device="cuda", dtype=torch.bfloat16)
        b = torch.randn(size, size, device="cuda", dtype=torch.bfloat16)
        row["cublas"] = timed(lambda: torch.matmul(a, b.t()), 20)
        del a, b
    # "tc speed" = the tensor-core form's speed as a fraction of cuBLAS's;
    # "simt / tc" = how many times faster than the SIMT kernel it is.
    print("\nformat      size  simt ms  tensor-core ms  cuBLAS bf16 ms  "
          "  tc speed   simt / tc")
    for fmt in sorted({f for f, _ in table}):
        crossover = None
        for (f, size), row in sorted(table.items()):
            if f != fmt:
                continue
            simt, tc, cublas = (row.get("simt"), row.get("tensor"),
                                row["cublas"])
            print(f"{fmt:10s} {size:5d} "
                  f"{simt if simt is not None else float('nan'):8.4f} "
                  f"{tc:15.4f} {cublas:15.4f} {cublas / tc:12.3f} "
                  f"{(simt / tc) if simt is not None else float('nan'):10.2f}")
            if crossover is None and simt is not None and tc < simt:
                crossover = size
        print(f"{fmt}: tensor-core form faster from {crossover}^3 "
              f"multiply-adds on (rule: 2^22 = 161^3)")


if __name__ == "__main__":
    main()
