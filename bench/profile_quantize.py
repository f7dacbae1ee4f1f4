#!/usr/bin/env python3
"""Runs each quantize benchmark program once, for a profiler (on the GPU
machine):

  ncu --clock-control none --kernel-name regex:'nvfp4_(amax|quantize|rht|dual)' \
      --section SpeedOfLight --section MemoryWorkloadAnalysis \
      --section Occupancy --section WarpStateStats --section SchedulerStats \
      --section LaunchStats --section InstructionStats \
      python3 bench/profile_quantize.py bench/build
"""
import sys

import cupy as cp
import numpy as np

sys.path.insert(0, __file__.rsplit("/", 1)[0])
import run_bench  # noqa: E402

N = run_bench.N
rng = cp.random.default_rng(0)
x = rng.standard_normal((N, N), dtype=cp.float32)
x_bits = (x.view(cp.uint32) >> 16).astype(cp.uint16)  # truncated to BF16
amax = float(cp.abs(x).max())
path = sys.argv[1]
for name, args in [("quantize", [x_bits]),
                   ("quantize_amax_given", [x_bits, amax]),
                   ("wgrad_operand", [x_bits, 1234]),
                   ("wgrad_operand_amax_given", [x_bits, 1234, amax]),
                   ("weight_copies", [x_bits]),
                   ("weight_copies_amax_given", [x_bits, amax]),
                   ("dual_x", [x_bits]),
                   ("dual_x_amax_given", [x_bits, amax, amax]),
                   ("dual_dy", [x_bits, 1234, 5678]),
                   ("dual_dy_amax_given", [x_bits, 1234, 5678, amax, amax])]:
    run_bench.program(path, name, args)()
    cp.cuda.runtime.deviceSynchronize()
