#!/usr/bin/env python3
"""Runs the benchmark GEMM once, for a profiler (on the GPU machine):

  ncu --kernel-name regex:scaled_matmul --launch-count 1 \
      --section SpeedOfLight --section WarpStateStats --section SchedulerStats \
      python3 bench/profile_gemm.py bench/build
"""
import sys

import cupy as cp
import numpy as np

sys.path.insert(0, __file__.rsplit("/", 1)[0])
import run_bench  # noqa: E402

N = run_bench.N
rng = cp.random.default_rng(0)
codes_a = cp.asarray(rng.integers(0, 256, N * N // 2, dtype=cp.uint8))
codes_b = cp.asarray(rng.integers(0, 256, N * N // 2, dtype=cp.uint8))
scales_a = cp.full(N * N // 16, 0x38, cp.uint8)
scales_b = cp.full((N // 16) * (N // 16), 0x38, cp.uint8)
amax = cp.full(1, np.float32(1.0).view(np.uint32), cp.uint32)
gemm = run_bench.program(sys.argv[1], "gemm",
                         [codes_a, scales_a, amax, codes_b, scales_b, amax.copy()])
gemm()
cp.cuda.runtime.deviceSynchronize()
