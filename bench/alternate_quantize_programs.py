#!/usr/bin/env python3
"""Interleaved A/B timing of quantize benchmark programs, possibly from
different bench directories (e.g. one built from main, one from a branch):

  python3 bench/alternate_quantize_programs.py --rounds 6 \\
      bench/build-main:wgrad_operand_amax_given \\
      bench/build-new:wgrad_operand_amax_given \\
      bench/build-new:wgrad_operand_amax_given__runs1

Each entry is DIR:PROGRAM; PROGRAM's arguments are those of its base
(bench/profile_quantize.py's list: a forced variant <base>__<schedule> or
<base>_ring2 takes its base's). The first entry of each base is that base's
baseline. Each round times every entry once (bench/run_bench.py's batched
CUDA-event median), in an order rotating from round to round, so that
drift hits all alike; the device copy is timed in every round too. Printed
per entry: the median over the rounds and the spread, x copy (input + output
bytes against the same-size device copy of the same round), the median
ratio baseline / entry and the rounds it beat the baseline, and whether its
outputs equal the baseline's byte for byte (same input, same seeds).
"""
import argparse
import sys

import cupy as cp
import numpy as np

sys.path.insert(0, __file__.rsplit("/", 1)[0])
import profile_quantize_args  # noqa: E402
import run_bench  # noqa: E402

N = run_bench.N


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("entries", nargs="+", help="DIR:PROGRAM")
    parser.add_argument("--rounds", type=int, default=6)
    parser.add_argument("--repeat", type=int, default=run_bench.REPEAT)
    args = parser.parse_args()

    x_bits, amax = profile_quantize_args.input_bits()
    in_bytes = N * N * 2
    entries = []
    for entry in args.entries:
        path, sep, name = entry.rpartition(":")
        if not sep:
            sys.exit(f"alternate_quantize_programs.py: '{entry}' is not DIR:PROGRAM")
        base = profile_quantize_args.base_of(name)
        run = run_bench.program(path, name,
                                profile_quantize_args.arguments(base, x_bits, amax))
        entries.append((entry, base, run))

    # Outputs, byte for byte against the first entry of the same base.
    outputs, baseline_of = {}, {}
    for i, (entry, base, run) in enumerate(entries):
        run()
        cp.cuda.runtime.deviceSynchronize()
        outputs[i] = {k: cp.asnumpy(v) for k, v in run.results.items()}
        baseline_of.setdefault(base, i)

    dst = cp.empty_like(x_bits)
    copy = lambda: dst.__setitem__(slice(None), x_bits)  # noqa: E731
    count = len(entries)
    times = np.zeros((args.rounds, count))
    copies = np.zeros(args.rounds)
    for r in range(args.rounds):
        copies[r] = run_bench.time_batched_ms(copy, repeat=args.repeat)
        for j in range(count):
            i = (r + j) % count
            times[r, i] = run_bench.time_batched_ms(entries[i][2],
                                                    repeat=args.repeat)

    print(f"{N}x{N} bf16, {args.rounds} rounds, rotating order; device copy "
          f"median {np.median(copies):.4f} ms = "
          f"{2 * in_bytes / np.median(copies) / 1e6:.0f} GB/s")
    for i, (entry, base, run) in enumerate(entries):
        t = times[:, i]
        b = baseline_of[base]
        out_bytes = profile_quantize_args.output_bytes(base)
        # x copy per round: (input + output bytes) / t against 2 x input / copy.
        x_copy = (in_bytes + out_bytes) / t / (2 * in_bytes / copies)
        line = (f"{entry} ({' + '.join(run.kernels)}): median {np.median(t):.4f} ms "
                f"({t.min():.4f}-{t.max():.4f}), {np.median(x_copy):.3f} x copy")
        if b != i:
            ratio = times[:, b] / t
            same = all(np.array_equal(outputs[i][k], v)
                       for k, v in outputs[b].items())
            line += (f"; vs {entries[b][0]}: {np.median(ratio):.3f} x faster "
                     f"(faster in {int((ratio > 1).sum())}/{args.rounds} rounds), "
                     f"outputs {'identical' if same else 'DIFFER'}")
        print(line)


if __name__ == "__main__":
    main()
