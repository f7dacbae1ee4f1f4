"""Per-stage check of a compiled Llama block on the GPU machine (issue 18).

It runs a bundle through nvfp4-run with every internal device buffer
declared a result (nvfp4-run allocates each manifest buffer separately and
keeps it until the end, so after the launch sequence each holds what its
producing kernel wrote), then recomputes every stage of the block in numpy
(FP64 GEMM accumulation, FP32 elementwise math, BF16 rounding where the IR
rounds; NVFP4 quantization and GEMMs by nvfp4_numpy.py) from the GPU's own
input buffers of that stage ("local" error: one kernel in isolation, should
be ~1 BF16 ulp) and along the whole numpy chain from the block's inputs
("chain" error). For every NVFP4 GEMM it also looks for the packed codes of
both operands among the bundle's byte buffers: they must be bit-identical
to nvfp4_numpy's quantization of the GPU's own input.

Why stages and not only the output: an NVFP4 block is not continuous under
rounding. A BF16 value one ulp away flips a code or a block scale, and the
next quantization turns the difference into more flips; with 0.1% of one
activation's elements 1 ulp off, the FFN's output moves by 5.5e-2 (max-norm,
docs/Runtime.md). Two correct formulations that sum in different orders
(the CPU reference's sequential FP32 RMSNorm sum, numpy's FP64 one) end
1.1e-1 apart although every NVFP4 stage of each, given the other's inputs,
is bit-identical.

A stage's GPU buffer is found by value: the buffer of the stage's element
count that is closest to the recomputed stage.

Usage: stage_check.py CASE BUNDLE MODE [REFERENCE.f32...]
       stage_check.py --numpy-only REFERENCE.f32   (no GPU: the numpy block only)
  MODE bf16: every GEMM is BF16 (nvfp4-compile --keep-first=2 --keep-last=8);
             with REFERENCE (the mlir-runner output of the same IR, FP32
             accumulation) the output's distance to it is printed next to the
             numpy block's, the floor that two correct formulations reach.
  MODE nvfp4: the 7 linear GEMMs are NVFP4, checked like every other stage
             against nvfp4_numpy, their operands' codes bit for bit. With two
             REFERENCEs their distance to each other is printed too.
A stage passes when its local error is rounding only: at most 0.1% of the
elements more than 1 BF16 ulp off and max-norm relative error <= 8e-3.
End to end, the output must be within 8e-3 of the numpy block (bf16), or
within the distance a 1-ulp change of 0.1% of the hidden state's elements
moves the bundle's own output (nvfp4).
Exit status 0: every stage passes, every NVFP4 operand's codes were found
and the output is within its bound.
"""

import json
import os
import subprocess
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import model_inputs  # noqa: E402
import nvfp4_numpy  # noqa: E402

TOLERANCE = 8e-3


def bf16(x):
    """FP32 -> BF16 round-to-nearest-even, returned as FP32 values."""
    u = np.ascontiguousarray(x, np.float32).view(np.uint32).astype(np.uint64)
    u = (u + 0x7FFF + ((u >> 16) & 1)) >> 16 << 16
    return u.astype(np.uint32).view(np.float32).reshape(np.shape(x))


def from_bits(bits):
    return (bits.astype(np.uint32) << 16).view(np.float32)


def mm(x, w):
    """linalg.matmul (m,k) x (n,k) -> (m,n), FP32 accumulation, BF16 result."""
    return bf16((x.astype(np.float64) @ w.astype(np.float64).T).astype(np.float32))


def bmm_nt(a, b):
    return bf16(np.matmul(a.astype(np.float64), b.astype(np.float64).transpose(0, 2, 1)).astype(np.float32))


def bmm_nn(a, b):
    return bf16(np.matmul(a.astype(np.float64), b.astype(np.float64)).astype(np.float32))


def rms(x, g):
    s = (x.astype(np.float64) ** 2).sum(axis=1).astype(np.float32)
    r = (np.float32(1) / np.sqrt(s / np.float32(4096) + np.float32(1e-5))).astype(np.float32)
    return bf16((x * r[:, None]) * g[None, :])


def split(x, heads):
    return np.ascontiguousarray(x.reshape(128, heads, 128).transpose(1, 0, 2))


def rope(x, cos, sin):
    rot = np.concatenate([-x[..., 64:], x[..., :64]], axis=-1)
    return bf16(x * cos[None] + rot * sin[None])


def repeat(x):
    return np.ascontiguousarray(np.repeat(x, 4, axis=0))


def softmax(s):
    scaled = s * np.float32(0.08838834764831843)
    visible = np.tril(np.ones((128, 128), bool))[None]
    x = np.where(visible, scaled, np.float32(-np.inf)).astype(np.float32)
    mx = x.max(axis=2, keepdims=True)
    p = np.exp(x - mx).astype(np.float32)
    total = p.astype(np.float64).sum(axis=2, keepdims=True).astype(np.float32)
    return bf16(p / total)


def merge(x):
    return np.ascontiguousarray(x.transpose(1, 0, 2).reshape(128, 4096))


def silu_mul(g, u):
    return bf16(g / (np.float32(1) + np.exp(-g)) * u)


def add(a, b):
    return bf16(a + b)


def nvfp4_mm(x, w):
    """The recipe's fprop GEMM: X 1x16, W 16x16 tiles, BF16 result."""
    return bf16(nvfp4_numpy.scaled_matmul(nvfp4_numpy.quantize(x),
                                          nvfp4_numpy.quantize(w, tile=True)))


# (stage, op, inputs, shape, is a linear GEMM)
STAGES = [
    ("xn1", rms, ["hidden", "attn_norm"], (128, 4096), False),
    ("q4", mm, ["xn1", "wq"], (128, 4096), True),
    ("k7", mm, ["xn1", "wk"], (128, 1024), True),
    ("v10", mm, ["xn1", "wv"], (128, 1024), True),
    ("qh11", lambda x: split(x, 32), ["q4"], (32, 128, 128), False),
    ("kh12", lambda x: split(x, 8), ["k7"], (8, 128, 128), False),
    ("vh13", lambda x: split(x, 8), ["v10"], (8, 128, 128), False),
    ("qr14", rope, ["qh11", "rope_cos", "rope_sin"], (32, 128, 128), False),
    ("kr15", rope, ["kh12", "rope_cos", "rope_sin"], (8, 128, 128), False),
    ("kg16", repeat, ["kr15"], (32, 128, 128), False),
    ("vg17", repeat, ["vh13"], (32, 128, 128), False),
    ("scores20", bmm_nt, ["qr14", "kg16"], (32, 128, 128), False),
    ("probs21", softmax, ["scores20"], (32, 128, 128), False),
    ("ctx24", bmm_nn, ["probs21", "vg17"], (32, 128, 128), False),
    ("ctxm25", merge, ["ctx24"], (128, 4096), False),
    ("attn28", mm, ["ctxm25", "wo"], (128, 4096), True),
    ("h29", add, ["hidden", "attn28"], (128, 4096), False),
    ("xn30", rms, ["h29", "ffn_norm"], (128, 4096), False),
    ("gate33", mm, ["xn30", "w_gate"], (128, 14336), True),
    ("up36", mm, ["xn30", "w_up"], (128, 14336), True),
    ("act37", silu_mul, ["gate33", "up36"], (128, 14336), False),
    ("down40", mm, ["act37", "w_down"], (128, 4096), True),
    ("h41", add, ["h29", "down40"], (128, 4096), False),
]


def error(y, ref):
    """(max-norm relative error, fraction of elements more than 1 BF16 ulp
    of the reference off, fraction not bit-equal, relative RMS error). The
    reference is rounded to BF16 first (mlir-runner prints 6 digits)."""
    ref = bf16(np.asarray(ref, np.float32)).astype(np.float64)
    d = np.abs(y.astype(np.float64) - ref)
    scale = np.abs(ref).max()
    _, exponent = np.frexp(np.maximum(np.abs(ref), 2.0 ** -126))
    ulp = np.ldexp(1.0, exponent - 8)  # BF16: 8 significant bits
    rms = np.sqrt((d ** 2).mean() / max((ref ** 2).mean(), 1e-300))
    return (float(d.max() / scale) if scale > 0 else float(d.max()),
            float((d > ulp).mean()), float((d > 0).mean()), float(rms))


def show(e):
    return "%.2e %.4f %.4f %.1e" % e


def run_bundle(case, bundle, args, perturb=False):
    """nvfp4-run with every non-argument bf16 buffer as a result: {buffer: values}.
    perturb: 0.1% of the hidden state's elements (a fixed random choice) 1
    BF16 ulp off (their lowest mantissa bit flipped), and only the output
    read back."""
    work = tempfile.mkdtemp(prefix="nvfp4-stages-")
    manifest = json.load(open(os.path.join(case, bundle + ".json")))
    results = {}
    for i, b in enumerate(manifest["buffers"]):
        if "result" in b:
            results[i] = b["result"]
    next_result = max(results.values()) + 1
    for i, b in enumerate(manifest["buffers"]):
        if perturb or "argument" in b or "result" in b or b["elements"] < 16384 \
                or b["element_type"] not in ("bf16", "i8"):
            continue
        b["result"] = next_result
        results[i] = next_result
        next_result += 1
    patched = os.path.join(work, bundle + ".json")
    json.dump(manifest, open(patched, "w"))
    command = [os.path.join(case, "nvfp4-run"), os.path.join(case, bundle + ".cubin"),
               "--manifest=" + patched]
    for index, (name, shape, seed, exponent, signed) in enumerate(model_inputs.ARGUMENTS):
        path = os.path.join(work, name + ".bin")
        bits = model_inputs.bf16_bits(shape, seed, exponent, signed)
        if perturb and name == "hidden":
            chosen = np.random.default_rng(0).choice(bits.size, bits.size // 1000, replace=False)
            bits.flat[chosen] ^= 1
        bits.tofile(path)
        command += ["--input", "%d=%s" % (index, path)]
    for buffer, result in results.items():
        command += ["--output", "%d=%s" % (result, os.path.join(work, "b%d.bin" % buffer))]
    env = dict(os.environ, LD_LIBRARY_PATH=case + ":" + os.environ.get("LD_LIBRARY_PATH", ""))
    subprocess.run(command, check=True, env=env)
    out = {}
    for b in results:
        path = os.path.join(work, "b%d.bin" % b)
        out[b] = (np.fromfile(path, np.uint8) if manifest["buffers"][b]["element_type"] == "i8"
                  else from_bits(np.fromfile(path, np.uint16)))
    return out, results, manifest


def numpy_only(reference):
    """The numpy chain alone against an all-BF16 CPU reference (no GPU): checks
    this script's formulation of the block on the development machine."""
    chain = {name: from_bits(model_inputs.bf16_bits(shape, seed, exponent, signed))
             for name, shape, seed, exponent, signed in model_inputs.ARGUMENTS}
    for name, op, inputs, shape, linear in STAGES:
        chain[name] = op(*[chain[i] for i in inputs])
    e = error(chain["h41"].reshape(-1), np.fromfile(reference, np.float32))
    print("numpy block vs %s: %s" % (os.path.basename(reference), show(e)))
    return 0


def main():
    if sys.argv[1] == "--numpy-only":
        return numpy_only(sys.argv[2])
    case, bundle, mode = sys.argv[1:4]
    references = sys.argv[4:]
    values = {name: from_bits(model_inputs.bf16_bits(shape, seed, exponent, signed))
              for name, shape, seed, exponent, signed in model_inputs.ARGUMENTS}
    buffers, results, manifest = run_bundle(case, bundle, values)
    output_buffer = [b for b, r in results.items() if r == 0][0]
    print("stage_check %s (%s): %d launches, %d buffers read back"
          % (bundle, mode, len(manifest["kernels"]), len(buffers)))
    print("columns: max-norm rel err, fraction > 1 ulp, fraction not bit-equal, rel RMS err")
    print("local = numpy of this stage from the GPU's own input buffers; chain = the numpy block")

    gpu = {}      # stage -> (buffer, values) the GPU computed
    chain = dict(values)  # the numpy chain from the block's inputs
    ok = True

    def best_output(ref, candidates, exclude=()):
        scored = sorted((error(buffers[b], ref), b) for b in candidates if b not in exclude)
        return scored[0] if scored else None

    quantized = {}  # id(array) -> nvfp4_numpy.Quantized of a GEMM operand

    def quantize(x, tile):
        key = (id(x), tile)
        if key not in quantized:
            quantized[key] = (x, nvfp4_numpy.quantize(x, tile=tile))
        return quantized[key][1]

    def stage_op(op, linear):
        if mode == "nvfp4" and linear:
            return lambda x, w: bf16(nvfp4_numpy.scaled_matmul(quantize(x, False),
                                                               quantize(w, True)))
        return op

    def find_codes(x, tile):
        """Is nvfp4_numpy's packed quantization of x some byte buffer?"""
        packed = quantize(x, tile).packed().reshape(-1)
        return any(v.size == packed.size and np.array_equal(v, packed)
                   for b, v in buffers.items()
                   if manifest["buffers"][b]["element_type"] == "i8")

    for name, op, inputs, shape, linear in STAGES:
        size = int(np.prod(shape))
        candidates = [b for b, v in buffers.items()
                      if v.size == size and manifest["buffers"][b]["element_type"] == "bf16"]
        if name == "h41":
            candidates = [output_buffer]
        compute = stage_op(op, linear)
        args = [gpu[i][1] if i in gpu else values[i] for i in inputs]
        match = best_output(compute(*args).reshape(-1), candidates)
        if match is None:
            print("%-9s no candidate buffers" % name)
            ok = False
            continue
        e, b = match
        gpu[name] = (b, buffers[b].reshape(shape))
        chain[name] = compute(*[chain[i] for i in inputs])
        chain_text = "chain " + show(error(buffers[b], chain[name].reshape(-1)))
        # A correct kernel differs from numpy by rounding only: at most 1 ulp,
        # and in very few elements.
        stage_ok = e[1] <= 1e-3 and e[0] <= TOLERANCE
        verdict = "ok" if stage_ok else "DIVERGES"
        if mode == "nvfp4" and linear:
            codes = (find_codes(args[0], False), find_codes(args[1], True))
            stage_ok &= all(codes)
            verdict += ", codes of X %s, of W %s" % tuple(
                "bit-exact" if c else "NOT FOUND" for c in codes)
        ok &= stage_ok
        print("%-9s buf %-3d local %s  %s  %s" % (name, b, show(e), chain_text, verdict))
        quantized.clear()

    y = buffers[output_buffer]
    n = error(y, chain["h41"].reshape(-1))
    print("%s output vs the numpy block: %s" % (bundle, show(n)))
    for reference in references:
        ref = np.fromfile(reference, np.float32)
        print("%s output vs %s: %s" % (bundle, os.path.basename(reference), show(error(y, ref))))
        print("numpy block  vs %s: %s   <- two correct formulations"
              % (os.path.basename(reference), show(error(chain["h41"].reshape(-1), ref))))
    # How far does a rounding-level change of the input move this bundle's own
    # output? The floor any comparison of two formulations of the block can reach.
    moved, _, _ = run_bundle(case, bundle, values, perturb=True)
    floor = error(moved[output_buffer], y)
    print("%s output with 0.1%% of hidden's elements 1 ulp off vs %s output (both GPU): %s"
          % (bundle, bundle, show(floor)))
    # End to end against the numpy block: within 8e-3 for BF16 (rounding
    # differences stay rounding differences); for NVFP4 within the floor
    # above (code flips amplify any rounding difference; the stages carry
    # the bit-level verdict).
    bound = TOLERANCE if mode == "bf16" else max(TOLERANCE, floor[0])
    end_ok = n[0] <= bound
    ok &= end_ok
    print("%s end to end vs the numpy block: %.2e %s %.2e (%s)" % (
        bundle, n[0], "<=" if end_ok else ">", bound,
        "8e-3" if mode == "bf16" else "the perturbation floor"))
    if len(references) == 2:
        a, b = (np.fromfile(r, np.float32) for r in references)
        print("%s vs %s (CPU vs CPU): %s" % (os.path.basename(references[0]),
                                             os.path.basename(references[1]), show(error(a, b))))
    print("%s %s: every kernel %s" % ("PASS" if ok else "FAIL", bundle,
                                      "within rounding of numpy" if ok else "NOT within rounding"))
    return 0 if ok else 1

if __name__ == "__main__":
    sys.exit(main())
