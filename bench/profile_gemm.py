#!/usr/bin/env python3
"""Runs one benchmark GEMM program once, for a profiler (on the GPU machine):

  ncu --clock-control none --kernel-name regex:scaled_matmul --launch-count 1 \\
      --section SpeedOfLight --section WarpStateStats --section SchedulerStats \\
      python3 bench/profile_gemm.py bench/build-gemm gemm_8192x8192x8192

The program is one of bench/make_gemm_bench.sh's (default: the 8192^3 GEMM
under the lowering's schedule); operands as in bench/run_gemm_bench.py.
"""
import sys

import cupy as cp

sys.path.insert(0, __file__.rsplit("/", 1)[0])
import run_bench  # noqa: E402
import run_gemm_bench  # noqa: E402

path = sys.argv[1]
name = sys.argv[2] if len(sys.argv) > 2 else "gemm_8192x8192x8192"
m, n, k = (int(v) for v in name.split("_")[1].split("x"))
rng = cp.random.default_rng(0)
gemm = run_bench.program(path, name,
                         run_gemm_bench.operands(rng, m, n, k, "16x16"))
gemm()
cp.cuda.runtime.deviceSynchronize()
