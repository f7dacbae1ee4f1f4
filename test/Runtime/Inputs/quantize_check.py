"""Helper of quantize-gpu.test.

  quantize_check.py write DIR   writes DIR/x.bin (256x1024 bf16 bits)
  quantize_check.py check DIR   compares DIR/{codes,scales,amax}.bin with
                                nvfp4.quantize (the numerics library)
  quantize_check.py ctypes DIR  runs DIR/k.cubin + DIR/k.json through
                                nvfp4_runtime and compares the same way
"""
import os
import sys

import numpy as np

import nvfp4

SEED = 0x123456789ABCDEF0
SHAPE = (256, 1024)


def make_input():
    """BF16 bits; per-16-block magnitudes from 2^-12 to 2^12, with NaN, -0
    and an all-zero block."""
    rng = np.random.default_rng(1)
    rows, cols = SHAPE
    x = rng.standard_normal((rows, cols // 16, 16)).astype(np.float32)
    x *= np.exp2(rng.integers(-12, 13, size=(rows, cols // 16, 1))).astype(
        np.float32)
    x = x.reshape(-1)
    x[:4] = [np.nan, -0.0, 1e4, -1e-30]
    x[16:32] = 0.0
    u = x.view(np.uint32).astype(np.uint64)
    return ((u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype(np.uint16).reshape(
        SHAPE)


def expected():
    q = nvfp4.quantize(make_input(), rounding="sr", seed=SEED)
    return {"codes": np.asarray(q.packed, np.uint8).reshape(-1),
            "scales": np.asarray(q.scales, np.uint8).reshape(-1),
            "amax": np.array([q.amax], np.float32).view(np.uint8)}


def compare(got):
    status = 0
    for name, want in expected().items():
        have = np.asarray(got[name]).reshape(-1).view(np.uint8)
        want = want.view(np.uint8)
        if have.size != want.size:
            print(f"{name}: {have.size} bytes, expected {want.size}")
            status = 1
            continue
        bad = np.flatnonzero(have != want)
        if bad.size:
            print(f"{name}: {bad.size} of {want.size} bytes differ, first at "
                  f"{bad[0]}: {have[bad[0]]:#04x} != {want[bad[0]]:#04x}")
            status = 1
        else:
            print(f"{name}: {want.size} bytes identical")
    return status


def main():
    mode, directory = sys.argv[1], sys.argv[2]
    if mode == "write":
        make_input().tofile(os.path.join(directory, "x.bin"))
        return 0
    if mode == "check":
        return compare({n: np.fromfile(os.path.join(directory, n + ".bin"),
                                       np.uint8)
                        for n in ("codes", "scales", "amax")})
    import nvfp4_runtime as rt
    with rt.load(os.path.join(directory, "k.cubin"),
                 os.path.join(directory, "k.json")) as bundle:
        codes, scales, amax = bundle.run(make_input(), SEED, repeat=2)
        assert len(bundle.last_times_ms) == 2
        assert amax.dtype == np.uint32 and codes.dtype == np.uint8
    return compare({"codes": codes, "scales": scales, "amax": amax})


if __name__ == "__main__":
    sys.exit(main())
