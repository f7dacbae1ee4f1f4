#!/usr/bin/env python3
"""A/B timing of GEMM programs of one make_gemm_bench.sh directory, with the
variants interleaved so that clock and thermal drift hit them alike:

  python3 bench/alternate_gemm_programs.py bench/build-gemm --rounds 8 \\
      gemm_8192x8192x8192_route gemm_8192x8192x8192_128x256x256_s0_d4w0_p16_ts

All programs must have the same shape (their names' second field, MxNxK);
the first one is the baseline. Each round times every program once
(CUDA-event median of `--repeat` runs, after a warm-up), in an order that
rotates from round to round (A B C, B C A, ...). Printed per program: the
median over the rounds, the spread (min-max), and the ratio baseline /
program of each round, summarized as median and the number of rounds the
program beat the baseline. Operands as in run_gemm_bench.py (16x16 B).
A variant is "consistently faster" when it wins in most rounds and its
median ratio exceeds the rounds' spread of the baseline; the script prints
both so the reader decides, it does not.
"""
import argparse
import sys

import cupy as cp
import numpy as np

sys.path.insert(0, __file__.rsplit("/", 1)[0])
import run_bench  # noqa: E402
import run_gemm_bench  # noqa: E402


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("path")
    parser.add_argument("programs", nargs="+")
    parser.add_argument("--rounds", type=int, default=8)
    parser.add_argument("--repeat", type=int, default=20)
    parser.add_argument("--block-b", default="16x16")
    args = parser.parse_args()

    shapes = {name.split("_")[1] for name in args.programs}
    if len(shapes) != 1:
        sys.exit("alternate_gemm_programs.py: the programs have different "
                 f"shapes: {sorted(shapes)}")
    m, n, k = (int(v) for v in shapes.pop().split("x"))
    rng = cp.random.default_rng(0)
    ops = run_gemm_bench.operands(rng, m, n, k, args.block_b)
    gemms = [run_bench.program(args.path, name, ops) for name in args.programs]

    count = len(gemms)
    times = np.zeros((args.rounds, count))
    for r in range(args.rounds):
        for j in range(count):
            i = (r + j) % count
            times[r, i] = run_bench.time_ms(gemms[i], repeat=args.repeat)

    base = times[:, 0]
    print(f"{m}x{n}x{k}, {args.rounds} rounds of {args.repeat} runs each, "
          "rotating order")
    for i, name in enumerate(args.programs):
        t = times[:, i]
        ratio = base / t
        tflops = 2 * m * n * k / np.median(t) / 1e9
        line = (f"  {name}: median {np.median(t):.4f} ms "
                f"({tflops:.1f} TFLOP/s), spread {t.min():.4f}-{t.max():.4f}")
        if i:
            wins = int((ratio > 1).sum())
            line += (f", baseline/this median {np.median(ratio):.3f}x, "
                     f"faster in {wins}/{args.rounds} rounds")
        print(line)


if __name__ == "__main__":
    main()
