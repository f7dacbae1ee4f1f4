#!/usr/bin/env python3
"""Runs quantize benchmark programs once each, for a profiler (on the GPU
machine):

  python3 bench/profile_quantize.py bench/build [PROGRAM...]

with no PROGRAM, every base program (bench/profile_quantize_args.py);
bench/ncu_quantize.sh runs it under Nsight Compute one program at a time.
"""
import sys

import cupy as cp

sys.path.insert(0, __file__.rsplit("/", 1)[0])
import profile_quantize_args as q  # noqa: E402
import run_bench  # noqa: E402

x_bits, amax = q.input_bits()
path, names = sys.argv[1], sys.argv[2:] or list(q.BASES)
for name in names:
    run_bench.program(path, name, q.arguments(q.base_of(name), x_bits, amax))()
    cp.cuda.runtime.deviceSynchronize()
