"""Runs the hybrid's case on the GPU machine (no MLIR needed there).

Regenerates the inputs (arguments.json, model_inputs.bf16_bits), runs both
bundles of make_hybrid_case.py through nvfp4-run with every internal buffer
read back, and checks:

  * end to end, the all-BF16 bundle against the CPU reference pipeline of
    the same IR (every GEMM accumulating in FP32, as the GPU's wgmma):
    max-norm relative error within the largest of 8e-3, the distance of two
    correct CPU formulations of the IR (the GEMMs accumulating in FP32 in
    loop order vs in FP64, each rounded once to BF16) and how far the
    bundle's own output moves when 0.1% of its input elements change by one
    BF16 ulp: an implementation that rounds anywhere differently from the
    reference (sums in another order, exp by ex2.approx) cannot be judged
    closer than that. On the tiny hybrid the two CPU formulations are
    9.0e-3 apart -- 2 BF16 ulps of the largest output element (0.25 at
    27.75). The NVFP4 bundle's distance to its CPU
    references is printed (info: an NVFP4 model is not continuous under
    rounding, docs/Runtime.md "Whole models");
  * stage by stage, in both bundles, from the GPU's own input buffers of
    each kernel: every slice copy and the pad bit-exact, the causal conv
    within 1e-5, the selective scan (numpy, FP64, token by token) within
    1e-3 -- FP32 state, exp by ex2.approx -- and every BF16 GEMM (numpy,
    FP64 accumulation, rounded once) rounding only: at most 0.1% of the
    elements more than 1 BF16 ulp off and max-norm within 8e-3.

With $MODEL_SANITIZE (compute-sanitizer's path) each bundle runs under
memcheck instead and only its verdict and the output's finiteness count.
Exit status 0: every check passes.
"""

import json
import os
import re
import subprocess
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import model_inputs  # noqa: E402
import stage_check  # noqa: E402

TOLERANCE = 8e-3
SCAN_TOLERANCE = 1e-3
CONV_TOLERANCE = 1e-5


def inputs(case, work):
    spec = json.load(open(os.path.join(case, "arguments.json")))
    values, files = [], []
    for name, shape, seed, exponent, signed, dtype in spec["arguments"]:
        bits = model_inputs.bf16_bits(tuple(shape), seed, exponent, signed)
        path = os.path.join(work, name + ".bin")
        value = stage_check.from_bits(bits)
        (value if dtype == "f32" else bits).tofile(path)
        values.append(value)
        files.append(path)
    return values, files


def run(case, bundle, files, work, everything, prefix=()):
    """nvfp4-run of `bundle`: {buffer index: FP32 values} of its result and,
    with `everything`, of every internal bf16 / f32 buffer."""
    manifest = json.load(open(os.path.join(case, bundle + ".json")))
    results = {i: b["result"] for i, b in enumerate(manifest["buffers"]) if "result" in b}
    next_result = max(results.values()) + 1
    for i, b in enumerate(manifest["buffers"]):
        if not everything or "argument" in b or "result" in b or \
                b["element_type"] not in ("bf16", "f32"):
            continue
        b["result"] = next_result
        results[i] = next_result
        next_result += 1
    patched = os.path.join(work, bundle + ".json")
    json.dump(manifest, open(patched, "w"))
    command = list(prefix) + [os.path.join(case, "nvfp4-run"),
                              os.path.join(case, bundle + ".cubin"), "--manifest=" + patched]
    for index, path in enumerate(files):
        command += ["--input", "%d=%s" % (index, path)]
    for buffer, result in results.items():
        command += ["--output", "%d=%s" % (result, os.path.join(work, "%s_b%d.bin" % (bundle, buffer)))]
    env = dict(os.environ, LD_LIBRARY_PATH=case + ":" + os.environ.get("LD_LIBRARY_PATH", ""))
    subprocess.run(command, check=True, env=env)
    out = {}
    for b in results:
        path = os.path.join(work, "%s_b%d.bin" % (bundle, b))
        if manifest["buffers"][b]["element_type"] == "f32":
            out[b] = np.fromfile(path, np.float32)
        else:
            out[b] = stage_check.from_bits(np.fromfile(path, np.uint16))
    output = next(b for b, r in results.items() if r == 0)
    return out, output, manifest, command, env


def relative(y, ref):
    ref = np.asarray(ref, np.float64)
    scale = np.abs(ref).max()
    d = np.abs(np.asarray(y, np.float64) - ref).max()
    return float(d / scale) if scale > 0 else float(d)


def scan_reference(name, ys_shape, state0, xs, bs, cs, dts, a_log, d_skip):
    """The selective scan of gen-model.py's mixer in FP64, token by token."""
    h, p, n, t = (int(v) for v in re.match(r"nvfp4_scan_(\d+)x(\d+)x(\d+)_t(\d+)_", name).groups())
    g = bs.size // (t * n)
    group = np.arange(h) // (h // g)
    a = -np.exp(a_log.astype(np.float64))
    state = state0.astype(np.float64).reshape(h, p, n)
    xs, bs, cs, dts = (v.astype(np.float64) for v in (xs, bs, cs, dts))
    ys = np.zeros((t, h * p))
    for ti in range(t):
        x = xs.reshape(t, h, p)[ti]
        b = bs.reshape(t, g, n)[ti][group]
        c = cs.reshape(t, g, n)[ti][group]
        dt = dts.reshape(t, h)[ti]
        state = np.exp(dt * a)[:, None, None] * state + (dt[:, None] * x)[:, :, None] * b[:, None, :]
        ys[ti] = ((state * c[:, None, :]).sum(-1) + d_skip.astype(np.float64)[:, None] * x).reshape(-1)
    return ys.reshape(ys_shape)


def check_stages(bundle, buffers, manifest, args):
    """The mixer's new kernels and the BF16 GEMMs from the GPU's own inputs;
    returns the number of failures."""
    def value(param):
        b = param["buffer"]
        arg = manifest["buffers"][b].get("argument")
        return args[arg].reshape(-1) if arg is not None else buffers[b]

    def known(param):
        return param["buffer"] in buffers or \
            manifest["buffers"][param["buffer"]].get("argument") is not None

    failures, seen = 0, set()
    for kernel in manifest["kernels"]:
        name, params = kernel["name"], kernel["params"]
        if name in seen and not name.startswith("nvfp4_scan_"):
            continue
        ptrs = [p for p in params if p["type"] == "ptr"]
        verdict = None
        maps = [p for p in params if p["type"] == "tensormap"]
        # C: a pointer, or with the TMA-store epilogue (_ts) a third map.
        result = maps[2:3] or ptrs[-1:]
        if name.startswith("nvfp4_bf16_matmul_") and len(maps) in (2, 3) and \
                all(known(p) for p in maps[:2] + result):
            # C[b, m, n] = sum_k A[b, m, k] B[b, n, k] (the maps' dims).
            a = value(maps[0]).astype(np.float64).reshape(maps[0]["dims"])
            b = value(maps[1]).astype(np.float64).reshape(maps[1]["dims"])
            c = value(result[0])
            ref = np.einsum("bmk,bnk->bmn", a, b).astype(np.float32).reshape(-1)
            e = stage_check.error(c, ref)
            verdict = ("BF16 GEMM", e[0], e[0] <= TOLERANCE and e[1] <= 1e-3)
            ptrs = result
        elif any(not known(p) for p in ptrs):
            continue
        elif name.startswith("nvfp4_scan_"):
            ys = value(ptrs[0])
            ref = scan_reference(name, ys.shape, *[value(p) for p in ptrs[1:8]])
            e = relative(ys, ref)
            verdict = ("selective scan", e, e <= SCAN_TOLERANCE)
        elif re.match(r"nvfp4_linalg_generic_\d+x\d+x4_r2_", name) and len(ptrs) == 4:
            out, padded, w, init = (value(p) for p in ptrs)
            t, c = (int(v) for v in re.match(r"nvfp4_linalg_generic_(\d+)x(\d+)x", name).groups())
            padded = padded.astype(np.float64).reshape(-1, c)
            w = w.astype(np.float64).reshape(c, 4)
            ref = init.astype(np.float64).reshape(t, c) + sum(
                padded[k:k + t] * w[:, k] for k in range(4))
            e = relative(out.reshape(t, c), ref)
            verdict = ("causal conv", e, e <= CONV_TOLERANCE)
        elif name.startswith("nvfp4_linalg_generic_") and len(ptrs) == 2 and \
                ptrs[0]["element_type"] == ptrs[1]["element_type"] and \
                ptrs[0]["elements"] != ptrs[1]["elements"]:
            # A slice (a column window of a row-major source of as many
            # rows) or the conv's pad (zero rows, then the source): bit-exact.
            out, src = value(ptrs[0]), value(ptrs[1])
            rows, width = (int(v) for v in re.match(r"nvfp4_linalg_generic_(\d+)x(\d+)_", name).groups())
            o = out.reshape(rows, width)
            if out.size > src.size and src.size % width == 0:
                pad = rows - src.size // width
                kind = "pad"
                exact = bool((o[:pad] == 0).all() and np.array_equal(o[pad:], src.reshape(-1, width)))
            elif src.size % rows == 0:
                s = src.reshape(rows, -1)
                kind = "slice"
                exact = any(np.array_equal(s[:, c0:c0 + width], o)
                            for c0 in range(s.shape[1] - width + 1))
            else:
                continue
            verdict = (kind, 0.0 if exact else 1.0, exact)
        if verdict is None:
            continue
        seen.add(name)
        what, e, ok = verdict
        if not np.abs(value(ptrs[0])).max() > 0:
            # All zero: no evidence (the kernel may not have run at all).
            what, ok = what + " (its output is all zero)", False
        print("%s %s: %s %s (max-norm relative error %.2e)"
              % ("PASS" if ok else "FAIL", bundle, what, name, e))
        failures += not ok
    return failures


def main():
    case = sys.argv[1] if len(sys.argv) > 1 else HERE
    work = tempfile.mkdtemp(prefix="nvfp4-hybrid-")
    sanitizer = os.environ.get("MODEL_SANITIZE")
    args, files = inputs(case, work)
    status = 0
    if sanitizer:
        for bundle in ("hybrid", "hybrid_bf16"):
            buffers, output, *_ = run(case, bundle, files, work, False,
                                      [sanitizer, "--tool", "memcheck", "--error-exitcode", "3"])
            finite = bool(np.isfinite(buffers[output]).all())
            print("%s %s under memcheck: output finite: %s" % ("PASS" if finite else "FAIL",
                                                                bundle, finite))
            status |= not finite
        return status

    # Two correct CPU formulations of the all-BF16 IR: how close any
    # implementation summing in another order can come to either.
    floor = stage_check.error(np.fromfile(os.path.join(case, "reference_bf16.f32"), np.float32),
                              np.fromfile(os.path.join(case, "reference_bf16_fp64acc.f32"),
                                          np.float32))
    print("info reference_bf16 vs reference_bf16_fp64acc (two correct formulations): %s"
          % stage_check.show(floor))
    # The all-BF16 bundle's own response to one-ulp changes of its input:
    # 0.1% of the hidden state's elements (a fixed random choice, as
    # stage_check.py's perturbation floor) with the lowest mantissa bit
    # flipped. Any two implementations that round anywhere differently
    # differ by at least this much downstream; a wrong kernel shows up in
    # the stage checks below, which judge each kernel from its own inputs.
    hidden = json.load(open(os.path.join(case, "arguments.json")))["arguments"][0]
    assert hidden[0] == "hidden" and hidden[5] == "bf16", hidden
    bits = np.fromfile(files[0], np.uint16)
    chosen = np.random.default_rng(0).choice(bits.size, bits.size // 1000, replace=False)
    bits[chosen] ^= 1
    perturbed = list(files)
    perturbed[0] = os.path.join(work, "hidden_perturbed.bin")
    bits.tofile(perturbed[0])
    plain, out_plain, *_ = run(case, "hybrid_bf16", files, work, False)
    moved, out_moved, *_ = run(case, "hybrid_bf16", perturbed, work, False)
    sensitivity = stage_check.error(moved[out_moved], plain[out_plain])
    print("info hybrid_bf16 moved by one-ulp changes of 0.1%% of its input: %s"
          % stage_check.show(sensitivity))
    bound = max(TOLERANCE, floor[0], sensitivity[0])
    for bundle, references, judged in (
            ("hybrid_bf16", ["reference_bf16", "reference_bf16_fp64acc"], "reference_bf16"),
            ("hybrid", ["reference_fp32acc", "reference", "reference_bf16"], None)):
        buffers, output, manifest, command, env = run(case, bundle, files, work, True)
        y = buffers[output]
        finite = bool(np.isfinite(y).all())
        print("%s %s: output finite: %s" % ("PASS" if finite else "FAIL", bundle, finite))
        status |= not finite
        for name in references:
            path = os.path.join(case, name + ".f32")
            if name != judged and not os.path.exists(path):
                # make_hybrid_case.py --without: an info-only reference not written
                print("info %s vs %s: not in this case" % (bundle, name))
                continue
            ref = np.fromfile(path, np.float32)
            e = stage_check.error(y, ref)
            if name == judged:
                ok = e[0] <= bound
                print("%s %s vs %s (CPU reference of the same IR): max-norm relative error "
                      "%.3e (bound %.3e: the largest of 8e-3, the two CPU formulations' distance "
                      "and the input-ulp response); "
                      "all errors %s"
                      % ("PASS" if ok else "FAIL", bundle, name, e[0], bound, stage_check.show(e)))
                status |= not ok
            else:
                print("info %s vs %s: %s" % (bundle, name, stage_check.show(e)))
        status |= check_stages(bundle, buffers, manifest, args) != 0
        timing = subprocess.run(command[:command.index("--output")] + ["--time", "--warmup", "3",
                                                                       "--repeat", "20"],
                                env=env, capture_output=True, text=True)
        print("%s: %s" % (bundle, timing.stdout.strip() or timing.stderr.strip()))
    print("%s hybrid case" % ("PASS" if status == 0 else "FAIL"))
    return status


if __name__ == "__main__":
    sys.exit(main())
