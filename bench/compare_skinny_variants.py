#!/usr/bin/env python3
"""The skinny kernel's byte decode (_e), prefetch (_pf) and scaled staged A
(_s) against their plain twins, bit for bit, on the GPU:

  python3 bench/compare_skinny_variants.py bench/build-gemm   (after make_gemm_bench.sh)

The byte decode leaves a power of two in every product (2^-14, or 2^-19
with _s) that alpha takes back, and the prefetch only moves loads, so each
such variant must give the same result bits as the schedule without those
suffixes (same warps, chunk order and tiles), here on operands whose block
scales span every finite positive E4M3 value (0 and the subnormals
included), which reaches the F16 subnormals the decode relies on. Prints
one line per pair and "N of N variants bit-identical to their twins"; exits
1 when a pair differs.
"""
import os
import re
import sys

import cupy as cp
import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from run_bench import program  # noqa: E402
from run_gemm_bench import operands  # noqa: E402


def wide_operands(rng, m, n, k, block_b):
    """Random codes, block scales anywhere in [0, 448] and amax 1."""
    return operands(rng, m, n, k, block_b, scale_bytes=(0, 0x7F))


def twin(variant):
    """The schedule without _pf, _s, _e and _uN (None if nothing to drop)."""
    if not variant.startswith("skinny"):
        return None
    plain = re.sub(r"_u\d+", "", variant)
    for suffix in ("_pf", "_s", "_e"):
        plain = re.sub(suffix + r"(?=_|$)", "", plain)
    return plain if plain != variant else None


def main():
    path = sys.argv[1]
    with open(os.path.join(path, "shapes.txt")) as f:
        shapes = [s for s in f.read().split() if int(s.split("x")[0]) <= 128]
    with open(os.path.join(path, "decode_variants.txt")) as f:
        variants = f.read().split()
    rng = np.random.default_rng(1)
    same = total = 0
    for shape in shapes:
        dims, block_b = shape.split(":")
        m, n, k = (int(v) for v in dims.split("x"))
        args = wide_operands(rng, m, n, k, block_b)
        for variant in variants:
            plain = twin(variant)
            name, ref = f"gemm_{dims}_{variant}", f"gemm_{dims}_{plain}"
            if plain is None or not all(
                    os.path.exists(os.path.join(path, x + ".json"))
                    for x in (name, ref)):
                continue
            outputs = []
            for x in (ref, name):
                run = program(path, x, args)
                run()
                outputs.append(cp.asnumpy(run.results[0]).copy())
            got, want = outputs[1], outputs[0]
            total += 1
            differ = int(np.count_nonzero(got.view(np.uint16) !=
                                          want.view(np.uint16)))
            if differ == 0:
                same += 1
                print(f"  {dims:16s} {variant:26s} = {plain}: bit-identical "
                      f"({want.size} values)")
            else:
                w = want.view(np.uint16).astype(np.uint32) << 16
                g = got.view(np.uint16).astype(np.uint32) << 16
                w, g = w.view(np.float32), g.view(np.float32)
                scale = np.nanmax(np.abs(w)) or 1.0
                print(f"  {dims:16s} {variant:26s} vs {plain}: {differ} of "
                      f"{want.size} values differ, max |diff| / max |C| = "
                      f"{np.nanmax(np.abs(g - w)) / scale:.3e}")
    print(f"{same} of {total} variants bit-identical to their twins")
    sys.exit(0 if same == total and total > 0 else 1)


if __name__ == "__main__":
    main()
