"""Times the model benchmark kit on the GPU machine (issue 18's benchmark).

  python3 bench/run_model_bench.py bench/build-model [--repeat R] [--warmup W]

One run, in this order (the nvfp4-run processes first, so that each has
the GPU's memory to itself before PyTorch takes its share):

  1. the block's inputs, regenerated from model_inputs.py's hash (the same
     seeds and scales as the 128-token model case, at the kit's shapes);
  2. the NVFP4 bundle and the all-BF16 bundle through nvfp4-run: the output
     (--output), the step time (--time: median of R runs after W), then the
     time of each launch (--time-kernels, an event between launches);
  3. the PyTorch module of the same IR (bench/llama_block_torch.py) in BF16,
     eager and torch.compile (default mode; the first call compiles, then W
     more untimed calls), timed with CUDA events (median of R), with its
     peak memory (a peak below the [32, t, t] scores' size would mean the
     compiler did not compute the IR's explicit attention);
  4. the check: PyTorch eager's and torch.compile's outputs against the BF16
     bundle's on the same inputs, max |y - y_bf16| / max |y_bf16|, which
     must be below CHECK_TOLERANCE (the comparison is of one computation);
     the NVFP4 bundle's distance from the BF16 one is reported too;
  5. the report: ms per forward step, the ratios (goal: the BF16 bundle
     within 1.2x of torch.compile), the NVFP4 step's breakdown by kernel
     (each launch, each kernel, each kind of kernel) and the BF16 step's.

Prints the report and writes it as JSON to DIR/results.json (and, when $OUT
is set, as $OUT/model_bench.log and $OUT/model_bench.json). Exit status 0
when every step ran and the check passed.
"""

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

# PyTorch vs nvfp4's BF16 bundle: both are BF16 GEMMs with FP32
# accumulation and the same roundings in between, so they differ by the
# GEMMs' summation order, ex2.approx in the bundle's softmax and the
# BF16 roundings those move; on the 128-token block the BF16 bundle is
# 1.2e-2 off an independent numpy formulation. A mistake in the math (a
# wrong mask, scale, RoPE half or GQA grouping) is far above this.
CHECK_TOLERANCE = 5e-2

# Kinds of kernels, by the name nvfp4-compile gives them.
KINDS = [
    ("NVFP4 GEMM (decode + wgmma)", r"^nvfp4_scaled_matmul_"),
    ("BF16 GEMM (wgmma)", r"^nvfp4_bf16_matmul_\d+x\d+x\d+_"),
    ("BF16 batched GEMM (attention)", r"^nvfp4_bf16_matmul_\d+x\d+x\d+x\d+_"),
    ("split-K finalize", r"^nvfp4_splitk_finalize_"),
    ("NVFP4 decode to F16", r"^nvfp4_decode_"),
    ("NVFP4 quantize", r"^nvfp4_quantize_"),
    ("amax", r"^nvfp4_amax_"),
    ("row kernel (softmax, RMSNorm: reductions + normalization)", r"^nvfp4_linalg_rows_"),
    ("reduction (RMSNorm sum, softmax max/sum)", r"^nvfp4_linalg_generic_.*_r\d+_"),
    ("elementwise (norm, RoPE, softmax, SwiGLU, residual)", r"^nvfp4_linalg_generic_"),
    ("transpose / broadcast (heads, repeat_kv)", r"^nvfp4_linalg_(transpose|broadcast)_"),
]

LINE = re.compile(r"^nvfp4-run: launch (\d+) (\S+): median ([0-9.]+) ms, min ([0-9.]+) ms")
STEP = re.compile(r"median ([0-9.]+) ms, min ([0-9.]+) ms, mean ([0-9.]+) ms per launch sequence")


class Report:
    def __init__(self):
        self.lines = []

    def __call__(self, text=""):
        print(text, flush=True)
        self.lines.append(text)


def kind_of(name):
    for kind, pattern in KINDS:
        if re.search(pattern, name):
            return kind
    return "other"


def parse_launches(text):
    """The per-launch lines of nvfp4-run --time-kernels."""
    launches = []
    for line in text.splitlines():
        m = LINE.match(line)
        if m:
            launches.append({"launch": int(m.group(1)), "kernel": m.group(2),
                             "median_ms": float(m.group(3)), "min_ms": float(m.group(4))})
    return launches


def generate_inputs(kit, work, report):
    """Writes each argument's BF16 bits to WORK/NAME.bin; returns the
    (name, path, shape) list in the IR's order."""
    import model_inputs  # the kit's copy
    import llama_block_torch as block
    tokens = kit["tokens"]
    specs = {name: (seed, exponent, signed)
             for name, _, seed, exponent, signed in model_inputs.ARGUMENTS}
    start = time.time()
    inputs = []
    for name, shape_of in block.ARGUMENTS:
        shape = shape_of(tokens)
        seed, exponent, signed = specs[name]
        path = os.path.join(work, name + ".bin")
        model_inputs.bf16_bits(shape, seed, exponent, signed).tofile(path)
        inputs.append((name, path, shape))
    report("inputs: %d arguments (%.0f MB) generated in %.1f s"
           % (len(inputs), sum(os.path.getsize(p) for _, p, _ in inputs) / 1e6,
              time.time() - start))
    return inputs


def check_manifest_arguments(manifest, inputs, bundle):
    """Every argument of the bundle is one of the module's, same size."""
    sizes = {}
    for buffer in manifest["buffers"]:
        if "argument" in buffer:
            sizes[buffer["argument"]] = buffer["elements"]
    for index, (name, _, shape) in enumerate(inputs):
        if sizes.get(index) != int(np.prod(shape)):
            sys.exit("run_model_bench: %s bundle: argument %d (%s) has %s elements, "
                     "the module's %s has %d" % (bundle, index, name, sizes.get(index),
                                                 name, int(np.prod(shape))))


def run_bundle(kit_dir, name, inputs, work, args, report):
    """nvfp4-run: output, step time, per-launch times."""
    env = dict(os.environ, LD_LIBRARY_PATH=kit_dir + ":" + os.environ.get("LD_LIBRARY_PATH", ""))
    manifest_path = os.path.join(kit_dir, name + ".json")
    with open(manifest_path) as f:
        manifest = json.load(f)
    check_manifest_arguments(manifest, inputs, name)
    base = [os.path.join(kit_dir, "nvfp4-run"), os.path.join(kit_dir, name + ".cubin"),
            "--manifest=" + manifest_path]
    for index, (_, path, _) in enumerate(inputs):
        base += ["--input", "%d=%s" % (index, path)]
    output = os.path.join(work, "y_%s.bin" % name)
    start = time.time()
    timed = subprocess.run(base + ["--output", "0=" + output, "--time",
                                   "--warmup", str(args.warmup), "--repeat", str(args.repeat)],
                           env=env, capture_output=True, text=True)
    if timed.returncode != 0:
        report("%s bundle: nvfp4-run failed: %s" % (name, timed.stderr.strip()))
        return None
    step = STEP.search(timed.stdout)
    per_launch = subprocess.run(base + ["--time-kernels", "--warmup", "1",
                                        "--repeat", str(args.kernel_repeat)],
                                env=env, capture_output=True, text=True)
    if per_launch.returncode != 0:
        report("%s bundle: nvfp4-run --time-kernels failed: %s"
               % (name, per_launch.stderr.strip()))
        return None
    launches = parse_launches(per_launch.stdout)
    if len(launches) != len(manifest["kernels"]):
        report("%s bundle: --time-kernels printed %d launches, the manifest has %d"
               % (name, len(launches), len(manifest["kernels"])))
        return None
    with_events = STEP.search(per_launch.stdout)
    y = (np.fromfile(output, np.uint16).astype(np.uint32) << 16).view(np.float32)
    result = {"median_ms": float(step.group(1)), "min_ms": float(step.group(2)),
              "mean_ms": float(step.group(3)),
              "median_ms_with_launch_events": float(with_events.group(1)),
              "launches": launches, "finite": bool(np.isfinite(y).all()),
              "wall_s": time.time() - start}
    report("%s bundle: %.3f ms per step (median of %d; min %.3f), %d launches, "
           "output finite: %s (nvfp4-run took %.0f s)"
           % (name, result["median_ms"], args.repeat, result["min_ms"], len(launches),
              result["finite"], result["wall_s"]))
    return result, y


def time_cuda(torch, fn, warmup, repeat):
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(repeat):
        start = torch.cuda.Event(enable_timing=True)
        stop = torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        stop.record()
        stop.synchronize()
        times.append(start.elapsed_time(stop))
    return float(np.median(times)), float(np.min(times))


def max_norm_error(y, reference):
    return float(np.abs(y.astype(np.float64) - reference).max() / np.abs(reference).max())


def rms_error(y, reference):
    """The relative RMS error: the bulk of the outputs, where the max-norm
    is one element."""
    d = y.astype(np.float64) - reference
    return float(np.sqrt(np.mean(d * d) / np.mean(reference.astype(np.float64) ** 2)))


def run_torch(inputs, args, report):
    import torch
    import llama_block_torch as block
    device = torch.device("cuda")
    tensors = []
    for _, path, shape in inputs:
        bits = np.fromfile(path, np.int16).reshape(shape)
        tensors.append(torch.from_numpy(bits).view(torch.bfloat16).to(device))
    results = {}
    outputs = {}
    scores_bytes = block.HEADS * inputs[0][2][0] ** 2 * 2
    modes = [("eager", block.decoder_block)]
    if not args.no_compile:
        modes.append(("torch.compile", torch.compile(block.decoder_block)))
    report("torch %s on %s" % (torch.__version__, torch.cuda.get_device_name()))
    for mode, fn in modes:
        call = lambda: fn(*tensors)  # noqa: E731
        torch.cuda.synchronize()
        start = time.time()
        try:
            with torch.no_grad():
                y = call()
                torch.cuda.synchronize()
                first_s = time.time() - start
                torch.cuda.reset_peak_memory_stats()
                base = torch.cuda.memory_allocated()
                median, minimum = time_cuda(torch, call, args.warmup, args.repeat)
                peak = torch.cuda.max_memory_allocated() - base
        except Exception as e:  # report it; the other measurements stand
            message = ("%s: %s" % (type(e).__name__, e)).splitlines()[0][:400]
            results[mode] = {"error": message}
            report("PyTorch %s FAILED: %s" % (mode, message))
            y = None
            torch.cuda.empty_cache()
            continue
        outputs[mode] = y.float().cpu().numpy().reshape(-1)
        del y
        results[mode] = {"median_ms": median, "min_ms": minimum, "first_call_s": first_s,
                         "peak_bytes_beyond_inputs": peak,
                         "materializes_scores": peak >= scores_bytes}
        report("PyTorch %s: %.3f ms per step (median of %d; min %.3f), first call %.1f s, "
               "peak %.1f GB beyond the inputs (the BF16 scores alone are %.1f GB)"
               % (mode, median, args.repeat, minimum, first_s, peak / 1e9, scores_bytes / 1e9))
        torch.cuda.empty_cache()
    return results, outputs


ELEMENT_BYTES = {"bf16": 2, "f16": 2, "f32": 4, "f64": 8, "i8": 1, "ui8": 1,
                 "i16": 2, "i32": 4, "i64": 8, "f8E4M3FN": 1, "f8E5M2": 1}
GEMM_NAME = re.compile(r"^nvfp4_(?:scaled|bf16)_matmul_((?:\d+x){2,3}\d+)_")


def launch_rate(kernel, manifest):
    """What a launch's time is measured against: a GEMM's FLOPs (2 M N K,
    times the batch; the dimensions are in its name) or, for the other
    kernels, the bytes of the buffers its parameters point to (every
    buffer read or written once: a lower bound on its traffic)."""
    m = GEMM_NAME.match(kernel["name"])
    if m:
        flops = 2
        for d in m.group(1).split("x"):
            flops *= int(d)
        return "flops", flops
    buffers = {p["buffer"] for p in kernel["params"] if "buffer" in p}
    return "bytes", sum(manifest["buffers"][b]["elements"] *
                        ELEMENT_BYTES.get(manifest["buffers"][b]["element_type"], 0)
                        for b in buffers)


def rate_text(rate, ms):
    what, amount = rate
    if ms <= 0:
        return ""
    if what == "flops":
        return "%7.1f TFLOP/s" % (amount / ms / 1e9)
    return "%7.0f GB/s" % (amount / ms / 1e6)


def breakdown(name, bundle, report, manifest):
    launches = bundle["launches"]
    total = sum(l["median_ms"] for l in launches)
    kinds, kernels = {}, {}
    for l in launches:
        k = kind_of(l["kernel"])
        kinds.setdefault(k, [0.0, 0])
        kinds[k][0] += l["median_ms"]
        kinds[k][1] += 1
        kernels.setdefault(l["kernel"], [0.0, 0])
        kernels[l["kernel"]][0] += l["median_ms"]
        kernels[l["kernel"]][1] += 1
    report()
    report("%s step by kind of kernel (sum of the launches' medians %.3f ms; the step "
           "with an event between launches %.3f ms, without %.3f ms):"
           % (name, total, bundle["median_ms_with_launch_events"], bundle["median_ms"]))
    report("  %9s %6s %8s  %s" % ("ms", "%", "launches", "kind"))
    for kind, (ms, count) in sorted(kinds.items(), key=lambda kv: -kv[1][0]):
        report("  %9.3f %6.1f %8d  %s" % (ms, 100 * ms / total, count, kind))
    report("%s step by launch (GEMMs: TFLOP/s; other kernels: the bytes of the buffers "
           "they touch, once, per second):" % name)
    report("  %6s %9s %6s %14s  %s" % ("launch", "ms", "%", "rate", "kernel"))
    for l in launches:
        rate = launch_rate(manifest["kernels"][l["launch"]], manifest)
        l["rate"] = {"what": rate[0], "amount": rate[1]}
        report("  %6d %9.3f %6.1f %14s  %s" % (l["launch"], l["median_ms"],
                                               100 * l["median_ms"] / total,
                                               rate_text(rate, l["median_ms"]), l["kernel"]))
    return {"kinds": {k: {"ms": v[0], "launches": v[1]} for k, v in kinds.items()},
            "kernels": {k: {"ms": v[0], "launches": v[1]} for k, v in kernels.items()},
            "sum_ms": total}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("kit", help="the directory make_model_bench.sh wrote")
    parser.add_argument("--repeat", type=int, default=10)
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--kernel-repeat", type=int, default=5,
                        help="runs of the per-launch timing")
    parser.add_argument("--no-torch", action="store_true", help="only the bundles")
    parser.add_argument("--no-compile", action="store_true", help="no torch.compile")
    args = parser.parse_args()
    kit_dir = os.path.abspath(args.kit)
    sys.path.insert(0, kit_dir)
    with open(os.path.join(kit_dir, "kit.json")) as f:
        kit = json.load(f)
    report = Report()
    started = time.time()
    try:
        smi = subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version,memory.total",
                              "--format=csv,noheader"], capture_output=True, text=True).stdout
    except OSError as e:
        smi = "nvidia-smi: %s" % e
    report("GPU: %s" % smi.strip())
    report("block: %s, %s; GEMMs %.2f TFLOP per step"
           % (kit["model"], kit["chip"], kit["bundles"]["bf16"]["gemm_flops"] / 1e12))
    work = tempfile.mkdtemp(prefix="nvfp4-model-bench-")
    inputs = generate_inputs(kit, work, report)

    results = {"kit": kit, "repeat": args.repeat, "warmup": args.warmup}
    bundles, outputs = {}, {}
    for name in ("nvfp4", "bf16"):
        got = run_bundle(kit_dir, name, inputs, work, args, report)
        if got is None:
            results["error"] = "%s bundle failed" % name
            break
        bundles[name], outputs[name] = got
    results["bundles"] = bundles

    ok = "error" not in results and all(b["finite"] for b in bundles.values())
    if ok and not args.no_torch:
        results["torch"], torch_outputs = run_torch(inputs, args, report)
        outputs.update(torch_outputs)
        ok &= not any("error" in r for r in results["torch"].values())

    # The check: one computation.
    checks = {}
    if "bf16" in outputs:
        reference = outputs["bf16"]
        report()
        for name in ("eager", "torch.compile", "nvfp4"):
            if name not in outputs:
                continue
            checks[name] = max_norm_error(outputs[name], reference)
            checks[name + " (relative RMS)"] = rms_error(outputs[name], reference)
            gate = name != "nvfp4"
            passed = checks[name] <= CHECK_TOLERANCE
            ok &= passed or not gate
            report("check: %s vs the BF16 bundle: max-norm relative error %.3e, relative RMS "
                   "%.3e%s"
                   % (name, checks[name], checks[name + " (relative RMS)"],
                      (" (tolerance %.0e: %s)" % (CHECK_TOLERANCE, "ok" if passed else "FAIL"))
                      if gate else " (NVFP4 quantization error, reported only)"))
        if "eager" in outputs and "torch.compile" in outputs:
            checks["torch.compile vs eager"] = max_norm_error(outputs["torch.compile"],
                                                              outputs["eager"])
            report("check: torch.compile vs eager: %.3e" % checks["torch.compile vs eager"])
    results["checks"] = checks

    # Times and ratios.
    times = {"nvfp4 (NVFP4 GEMMs, emulated on sm_90a)": bundles.get("nvfp4", {}).get("median_ms"),
             "nvfp4 all-BF16": bundles.get("bf16", {}).get("median_ms")}
    for mode in ("eager", "torch.compile"):
        if "median_ms" in results.get("torch", {}).get(mode, {}):
            times["PyTorch %s (BF16)" % mode] = results["torch"][mode]["median_ms"]
    report()
    report("forward step of the block (ms, median):")
    for what, ms in times.items():
        if ms is not None:
            report("  %10.3f  %s" % (ms, what))
    ratios = {}
    bf16 = times["nvfp4 all-BF16"]
    compiled = times.get("PyTorch torch.compile (BF16)")
    eager = times.get("PyTorch eager (BF16)")
    fp4 = times["nvfp4 (NVFP4 GEMMs, emulated on sm_90a)"]
    if bf16 and compiled:
        ratios["all-BF16 / torch.compile"] = bf16 / compiled
    if bf16 and eager:
        ratios["all-BF16 / eager"] = bf16 / eager
    if fp4 and bf16:
        ratios["NVFP4 / all-BF16"] = fp4 / bf16
    if fp4 and compiled:
        ratios["NVFP4 / torch.compile"] = fp4 / compiled
    for what, r in ratios.items():
        goal = ""
        if what == "all-BF16 / torch.compile":
            goal = "  (goal <= 1.2: %s)" % ("met" if r <= 1.2 else "not met")
        report("  %10.3fx %s%s" % (r, what, goal))
    results["times_ms"] = times
    results["ratios"] = ratios

    results["breakdown"] = {}
    for name in ("nvfp4", "bf16"):
        if name in bundles:
            with open(os.path.join(kit_dir, name + ".json")) as f:
                manifest = json.load(f)
            results["breakdown"][name] = breakdown(name, bundles[name], report, manifest)
    shutil.rmtree(work, ignore_errors=True)
    report()
    report("model bench %s in %.0f s" % ("ok" if ok else "FAILED", time.time() - started))
    results["ok"] = ok

    try:
        with open(os.path.join(kit_dir, "results.json"), "w") as f:
            json.dump(results, f, indent=1)
    except OSError as e:
        print("run_model_bench: cannot write %s/results.json: %s" % (kit_dir, e))
    if os.environ.get("OUT"):
        with open(os.path.join(os.environ["OUT"], "model_bench.log"), "w") as f:
            f.write("\n".join(report.lines) + "\n")
        with open(os.path.join(os.environ["OUT"], "model_bench.json"), "w") as f:
            json.dump(results, f, indent=1)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
