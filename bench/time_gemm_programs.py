#!/usr/bin/env python3
"""Times named GEMM programs of a make_gemm_bench.sh directory, one after
the other in one process (for A/B experiments with schedules and kernel
variants; the full comparison with the peers is run_gemm_bench.py):

  python3 bench/time_gemm_programs.py bench/build-gemm gemm_8192x8192x8192 ...

Operands as in run_gemm_bench.py; CUDA-event medians of 20 runs.
"""
import sys

import cupy as cp

sys.path.insert(0, __file__.rsplit("/", 1)[0])
import run_bench  # noqa: E402
import run_gemm_bench  # noqa: E402

path = sys.argv[1]
rng = cp.random.default_rng(0)
for name in sys.argv[2:]:
    m, n, k = (int(v) for v in name.split("_")[1].split("x"))
    gemm = run_bench.program(path, name,
                             run_gemm_bench.operands(rng, m, n, k, "16x16"))
    ms = run_bench.time_ms(gemm, repeat=20)
    print(f"{name}: {ms:.4f} ms, {2 * m * n * k / ms / 1e9:.1f} TFLOP/s "
          f"({gemm.kernels[-1].split('_to_')[-1]})")
