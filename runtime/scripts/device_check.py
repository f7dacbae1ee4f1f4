"""Checks the runtime on a GPU, in the folder make_device_kit.py wrote.

Every case goes through nvfp4-run and through the ctypes helper
(nvfp4_runtime) and is compared byte for byte with the numerics library's
bytes; then the 48 KiB dynamic shared memory opt-in, the error paths on a
real GPU, and compute-sanitizer memcheck. Needs python3 with numpy. Ends
with "device check: N failures" (exit status 1 on any).

  cd device-kit && LD_LIBRARY_PATH=$PWD/lib python3 device_check.py
"""
import json
import os
import subprocess
import sys
import tempfile

import numpy as np

KIT = os.path.dirname(os.path.abspath(__file__))
RUN = os.path.join(KIT, "bin", "nvfp4-run")
EXTRA = os.path.join(KIT, "extra")
sys.path.insert(0, os.path.join(KIT, "python"))
os.environ["NVFP4_RUNTIME_LIBRARY"] = os.path.join(KIT, "lib",
                                                   "libnvfp4_runtime.so")
import nvfp4_runtime as rt  # noqa: E402

failures = 0


def fail(message):
    global failures
    failures += 1
    print("    FAIL", message)


def compare(name, got, want):
    got = np.ascontiguousarray(got).reshape(-1).view(np.uint8)
    want = np.ascontiguousarray(want).reshape(-1).view(np.uint8)
    if got.size != want.size:
        fail(f"{name}: {got.size} bytes, expected {want.size}")
        return
    bad = np.flatnonzero(got != want)
    if bad.size:
        fail(f"{name}: {bad.size} of {want.size} bytes differ, first at "
             f"{bad[0]}")
    else:
        print(f"    {name}: {want.size} bytes identical")


def within_tolerance(name, got, want, meta):
    """Tensor-core GEMM cases (meta "tolerance", see run_cases.py) sum in
    another order than the reference: max-norm relative error instead."""
    def as_f32(raw):
        raw = np.ascontiguousarray(raw).reshape(-1).view(np.uint8)
        if meta.get("result_type", "f32") == "bf16":
            return (raw.view(np.uint16).astype(np.uint32) << 16).view(
                np.float32)
        return raw.view(np.float32)
    g, w = as_f32(got), as_f32(want)
    if g.size != w.size:
        fail(f"{name}: {g.size} values, expected {w.size}")
        return
    finite = np.isfinite(w)
    scale = np.max(np.abs(w[finite])) if finite.any() else 1.0
    err = np.max(np.abs(g - w)) / scale if g.size else 0.0
    if not np.array_equal(np.isfinite(g), finite) or not err <= meta[
            "tolerance"]:
        fail(f"{name}: max-norm relative error {err:.3e} exceeds "
             f"{meta['tolerance']:g} (or non-finite values)")
    else:
        print(f"    {name}: {w.size} values within {err:.2e}")


def check(name, got, want, meta):
    if "tolerance" in meta:
        within_tolerance(name, got, want, meta)
    else:
        compare(name, got, want)


def scalar_text(value):
    return repr(float(value)) if isinstance(value, float) else str(int(value))


def run_case(path):
    """One integration case (report.json, meta.json, data.npz, kernels)."""
    meta = json.load(open(os.path.join(path, "meta.json")))
    manifest = os.path.join(path, "report.json")
    data = np.load(os.path.join(path, "data.npz"))
    image = os.path.join(path, "kernels.cubin")
    if not os.path.exists(image):
        image = os.path.join(path, "kernels.ptx")
    scalars = meta.get("scalars", {})
    described = subprocess.run([RUN, "--manifest=" + manifest, "--describe"],
                               capture_output=True, text=True).stdout
    tmp = tempfile.mkdtemp()

    command = [RUN, image, "--manifest=" + manifest, "--time", "--repeat",
               "5", "--warmup", "1"]
    python_args = []
    for i, name in enumerate(meta["args"]):
        if "in_" + name in data:
            array = np.ascontiguousarray(data["in_" + name])
            array.tofile(os.path.join(tmp, name + ".bin"))
            command += ["--input", f"{i}={os.path.join(tmp, name + '.bin')}"]
            python_args.append(array)
        else:
            python_args.append(scalars.get(name, 0))
            if f"argument {i}: scalar" in described:
                command += ["--scalar", f"{i}={scalar_text(scalars[name])}"]
    for r, name in enumerate(meta["results"]):
        command += ["--output", f"{r}={os.path.join(tmp, name + '.out')}"]

    run = subprocess.run(command, capture_output=True, text=True)
    print("    cli:", (run.stdout + run.stderr).strip())
    if run.returncode != 0:
        fail(f"nvfp4-run exit status {run.returncode}")
    else:
        for name in meta["results"]:
            check("cli " + name,
                  np.fromfile(os.path.join(tmp, name + ".out"), np.uint8),
                  data["want_" + name], meta)

    try:
        with rt.load(image, manifest) as bundle:
            outputs = bundle.run(*python_args, repeat=3)
            times = ", ".join(f"{t:.4f}" for t in bundle.last_times_ms)
            print(f"    ctypes on {bundle.device_name}: {times} ms")
            for name, output in zip(meta["results"], outputs):
                check("ctypes " + name, output, data["want_" + name], meta)
    except Exception as e:  # report and go on with the next case
        fail(f"ctypes: {type(e).__name__}: {e}")


def expect_error(args, fragment, env=None):
    """nvfp4-run must exit with 1 and one line containing `fragment`."""
    run = subprocess.run([RUN] + args, capture_output=True, text=True,
                         env=env)
    line = run.stderr.strip()
    ok = run.returncode == 1 and fragment in line and "\n" not in line
    print(f"    {'ok  ' if ok else 'FAIL'} exit {run.returncode}: {line}")
    if not ok:
        fail(f"expected exit status 1 and '{fragment}'")


def main():
    try:
        print(subprocess.run(
            ["nvidia-smi", "--query-gpu=name,driver_version,compute_cap",
             "--format=csv,noheader"], capture_output=True,
            text=True).stdout.strip())
    except OSError as e:
        print("nvidia-smi:", e)

    cases = os.path.join(KIT, "cases")
    for case in sorted(os.listdir(cases)):
        print(case + ":")
        run_case(os.path.join(cases, case))

    kernels = os.path.join(EXTRA, "device_kernels.ptx")
    print("180 KiB of dynamic shared memory (opt-in attribute):")
    out = os.path.join(tempfile.mkdtemp(), "v.bin")
    run = subprocess.run([RUN, kernels, "--manifest=" + EXTRA +
                          "/big_smem.json", "--output", "0=" + out],
                         capture_output=True, text=True)
    if run.returncode == 0:
        value = np.fromfile(out, np.uint32)[0]
        print(f"    result {value:#x}")
        if value != 0x600DF00D:
            fail("big_smem wrote the wrong value")
    else:
        fail("big_smem: " + run.stderr.strip())

    print("error paths on a real GPU:")
    expect_error([kernels, "--manifest=" + EXTRA + "/too_big_smem.json"],
                 "shared memory")
    expect_error([kernels, "--manifest=" + EXTRA + "/missing_kernel.json"],
                 "CUDA_ERROR_NOT_FOUND")
    expect_error([kernels, "--manifest=" + EXTRA + "/fault.json"],
                 "CUDA_ERROR_ILLEGAL_ADDRESS")
    x = os.path.join(tempfile.mkdtemp(), "x.bin")
    np.zeros(128 * 256, np.uint16).tofile(x)
    expect_error([EXTRA + "/sm100.cubin", "--manifest=" + EXTRA +
                  "/sm100.json", "--input", "0=" + x, "--scalar", "1=1.0"],
                 "the bundle is compiled for sm_100a, but device 0")
    expect_error([kernels, "--manifest=" + EXTRA + "/big_smem.json",
                  "--device", "7"], "no CUDA device 7")
    expect_error([kernels, "--manifest=" + EXTRA + "/big_smem.json"],
                 "no CUDA device: the CUDA driver library could not be loaded",
                 env=dict(os.environ,
                          NVFP4_CUDA_DRIVER="/nonexistent/libcuda.so"))
    try:
        rt.load(kernels, EXTRA + "/fault.json").run()
        fail("a faulting kernel did not raise CudaError")
    except rt.CudaError as e:
        print("    ok   ctypes CudaError:", e)

    sanitizer = "/usr/local/cuda/bin/compute-sanitizer"
    if os.path.exists(sanitizer):
        case = os.path.join(cases, "quantize_given_amax")
        x = os.path.join(tempfile.mkdtemp(), "x.bin")
        np.load(case + "/data.npz")["in_x"].tofile(x)
        run = subprocess.run(
            [sanitizer, "--tool", "memcheck", "--error-exitcode", "3", RUN,
             case + "/kernels.cubin", "--manifest=" + case + "/report.json",
             "--input", "0=" + x, "--scalar", "1=6.5"],
            capture_output=True, text=True)
        summary = [l for l in run.stdout.splitlines() if "ERROR SUMMARY" in l]
        print("    memcheck:", run.returncode, summary)
        if run.returncode != 0:
            fail("compute-sanitizer memcheck")

    print(f"device check: {failures} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
