#!/usr/bin/env python3
"""Runs the cases make_cases.py built on a GPU and compares every byte.

Each case holds kernels.cubin and the manifest nvfp4-compile wrote
(report.json: buffers, launches, parameters; a "tensormap" parameter gets
a TMA descriptor over its buffer from runtime/python/nvfp4_tensormap.py).
Buffers that come from the host function's arguments get the input data;
other buffers are filled with a poison pattern (0xAB bytes) unless the
manifest says they start at zero, so an element a kernel forgets to write
is a mismatch. Results are
compared with the numerics library's bytes (data.npz) exactly, except where
meta.json gives a "tolerance" (all results) or "tolerances" (per result):
tensor-core GEMMs sum in another order than docs/Numerics.md, so their
results must lie within that max-norm relative error of the reference (and
be finite wherever the reference is). "any_nan": ["r"] compares the F32 result r
bit for bit except that any NaN matches any NaN. "amax_of": {"r": "c"} checks that
result r holds, bit for bit, the FP32 max |x| of the GPU's own result c;
"equal_to": {"r": "s"} checks that results r and s are the same bytes (two
paths on the GPU that must agree exactly); results listed in "unchecked"
depend on the GPU's own results and are not compared with the library.

  python3 run_cases.py CASES_DIR
"""
import json
import os
import sys

import cupy as cp
import numpy as np

# The TMA tensor-map encoder shared with bench/run_bench.py (and the same
# driver arguments as libnvfp4_runtime).
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "runtime", "python"))
import nvfp4_tensormap  # noqa: E402

DTYPES = {"bf16": np.uint16, "f16": np.uint16, "f32": np.float32,
          "i8": np.uint8, "i32": np.uint32, "i64": np.int64,
          "f8E4M3FN": np.uint8, "f8E5M2": np.uint8, "f8E8M0FNU": np.uint8}


def scalar(type_name, value):
    if type_name == "i64":
        # A 64-bit seed in [0, 2**64) travels as the i64 of the same bits.
        return np.uint64(value).view(np.int64)
    return {"i32": np.int32, "f32": np.float32}[type_name](value)


def as_f32(raw_bytes, meta, name=None):
    """Result bytes -> float32 values (BF16 results are widened)."""
    result_type = meta.get("result_types", {}).get(
        name, meta.get("result_type", "f32"))
    if result_type == "bf16":
        return (raw_bytes.view(np.uint16).astype(np.uint32) << 16).view(np.float32)
    return raw_bytes.view(np.float32)


def run_case(path):
    with open(os.path.join(path, "report.json")) as f:
        report = json.load(f)
    with open(os.path.join(path, "meta.json")) as f:
        meta = json.load(f)
    data = np.load(os.path.join(path, "data.npz"))
    module = cp.RawModule(path=os.path.join(path, "kernels.cubin"))
    scalars = meta.get("scalars", {})

    buffers = []
    for b in report["buffers"]:
        dtype = DTYPES[b["element_type"]]
        if "argument" in b:
            host = data["in_" + meta["args"][b["argument"]]].reshape(-1)
            buffers.append(cp.asarray(host.view(dtype)))
        elif b["zero_initialized"]:
            buffers.append(cp.zeros(b["elements"], dtype))
        else:
            poison = np.full(b["elements"] * np.dtype(dtype).itemsize, 0xAB,
                             np.uint8)
            buffers.append(cp.asarray(poison.view(dtype)))
        if "fill_from_argument" in b:
            value = scalars[meta["args"][b["fill_from_argument"]]]
            buffers[-1].fill(np.float32(value).view(np.uint32))
        if "fill_bits" in b:  # a constant, e.g. a static amax (32-bit)
            buffers[-1].view(np.uint32).fill(np.uint32(b["fill_bits"]))

    tensormaps = []  # alive until the launches are done
    for launch, k in enumerate(report["kernels"]):
        params = []
        for j, p in enumerate(k["params"]):
            if p["type"] == "ptr":
                params.append(buffers[p["buffer"]])
            elif p["type"] == "tensormap":
                # The buffers keep their addresses: encoding once is enough.
                tensormaps.append(nvfp4_tensormap.cupy_tensormap(
                    p, report["buffers"], buffers,
                    f"kernel '{k['name']}' (launch {launch}) parameter {j}"))
                params.append(tensormaps[-1])
            elif "argument" in p:
                params.append(scalar(p["type"],
                                     scalars[meta["args"][p["argument"]]]))
            else:
                params.append(scalar(p["type"], float(p["value"])))
        fn = module.get_function(k["name"])
        smem = k.get("shared_memory_bytes", 0) or 0
        # The limit counts static + dynamic shared memory: ask for the
        # dynamic bytes whenever there are any (a kernel with 36 KB static
        # and 20 KB dynamic failed to launch without it).
        if smem > 0:
            fn.max_dynamic_shared_size_bytes = smem
        fn(tuple(k["grid"]), tuple(k["block"]), tuple(params), shared_mem=smem)
    cp.cuda.runtime.deviceSynchronize()

    failures = []
    results = {}
    for b in report["buffers"]:
        if "result" in b:
            results[meta["results"][b["result"]]] = cp.asnumpy(
                buffers[report["buffers"].index(b)]).view(np.uint8)
    for name, got in results.items():
        if name in meta.get("unchecked", []):
            print(f"    {name}: not compared (depends on the GPU's own result)")
            continue
        if name in meta.get("equal_to", {}):
            other = meta["equal_to"][name]
            bad = np.flatnonzero(got != results[other])
            if got.shape != results[other].shape or bad.size:
                failures.append(f"{name}: differs from {other} in "
                                f"{bad.size if got.shape == results[other].shape else 'size'}"
                                f" of {got.size} bytes")
            else:
                print(f"    {name}: {got.size} bytes identical to {other}")
            continue
        if name in meta.get("amax_of", {}):
            source = meta["amax_of"][name]
            values = as_f32(results[source], meta, source)
            want_amax = np.float32(np.nanmax(np.abs(values))) if values.size else np.float32(0)
            if got.view(np.uint32)[0] != want_amax.view(np.uint32):
                failures.append(f"{name}: {got.view(np.float32)[0]!r} is not "
                                f"max |{source}| = {want_amax!r}")
            else:
                print(f"    {name}: {want_amax!r} = max |{source}| of the GPU's "
                      f"{source}, bit for bit")
            continue
        want = np.ascontiguousarray(data["want_" + name]).view(np.uint8)
        if got.shape != want.shape:
            failures.append(f"{name}: {got.size} bytes, expected {want.size}")
            continue
        tolerance = meta.get("tolerances", {}).get(name, meta.get("tolerance"))
        if tolerance is not None:
            g, w = as_f32(got, meta, name), as_f32(want, meta, name)
            scale = np.max(np.abs(w[np.isfinite(w)])) if np.isfinite(w).any() else 1.0
            err = np.max(np.abs(g - w)) / scale if g.size else 0.0
            if not np.all(np.isfinite(g) == np.isfinite(w)) or not err <= tolerance:
                failures.append(f"{name}: max-norm relative error {err:.3e} "
                                f"exceeds {tolerance:g} (or non-finite values)")
            else:
                print(f"    {name}: {w.size} values, max-norm relative "
                      f"error {err:.2e} <= {tolerance:g}")
            continue
        differs = got != want
        if name in meta.get("any_nan", []):
            # F32 results where any NaN matches any NaN: GPU arithmetic on a
            # NaN returns the canonical NaN (0x7FFFFFFF), the library keeps
            # the operand's sign and payload.
            g32, w32 = got.view(np.float32), want.view(np.float32)
            both = np.repeat(np.isnan(g32) & np.isnan(w32), 4)
            differs &= ~both
        bad = np.flatnonzero(differs)
        if bad.size:
            failures.append(f"{name}: {bad.size} of {want.size} bytes differ, "
                            f"first at byte {bad[0]}: got {got[bad[0]]:#04x} "
                            f"want {want[bad[0]]:#04x}")
        else:
            print(f"    {name}: {want.size} bytes identical")
    return failures


def main():
    root = sys.argv[1]
    print("device:", cp.cuda.runtime.getDeviceProperties(0)["name"].decode())
    passed = failed = 0
    for case in sorted(os.listdir(root)):
        path = os.path.join(root, case)
        if not os.path.isfile(os.path.join(path, "report.json")):
            continue
        print(f"{case}:")
        failures = run_case(path)
        for f in failures:
            print("    FAIL", f)
        passed += not failures
        failed += bool(failures)
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
