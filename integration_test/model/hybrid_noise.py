"""Where the hybrid's end-to-end distance to its CPU reference comes from.

Runs on the GPU machine against a case of make_hybrid_case.py (the
all-BF16 bundle only) and prints, without judging:

  * for every distinct BF16 GEMM of the bundle, from the GPU's own input
    buffers: how its output differs from the exactly rounded product (FP64
    sums, rounded once to BF16), next to two other GPU formulations of the
    same product on the same inputs -- cuBLAS through torch.matmul (what a
    PyTorch user gets; reduced-precision reductions off) and FP32 sums in
    loop order, k = 0, 1, ... (the CPU reference's order, one multiply-add
    step a k on the GPU; the products of BF16 values are exact in FP32):
    the fraction of elements not bit-equal, of those the fraction rounded
    toward zero (0.5 for unbiased rounding), and the mean signed error in
    BF16 ulps of the exact value;
  * end to end: the same IR written op by op in PyTorch (cuBLAS GEMMs)
    and in numpy (exactly rounded GEMMs), hybrid_formulation.py, against
    both CPU references and against the bundle; the bundle's output against reference_bf16 (FP32 sums in
    loop order) and reference_bf16_fp64acc, the same statistics, and the
    distances of the bundle's output to itself when the input (or the input
    and every BF16 weight) has 0.1% of its elements one BF16 ulp off, for
    four random choices each: how far rounding differences anywhere move
    this model's output.

Usage: python3 hybrid_noise.py CASE_DIR
"""

import os
import re
import sys
import tempfile

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import hybrid_formulation  # noqa: E402
import run_hybrid_case as hybrid  # noqa: E402
import stage_check  # noqa: E402


def bits_of(x):
    return np.ascontiguousarray(x, np.float32).view(np.uint32) >> 16


def rounding(c, exact):
    """(fraction not bit-equal, fraction of those toward zero, mean signed
    error in ulps of the exact BF16 value) of BF16 values c against the
    exact value rounded once (both FP32 arrays of BF16 values)."""
    c = np.asarray(c, np.float64).reshape(-1)
    ref = stage_check.bf16(np.asarray(exact, np.float32)).astype(np.float64).reshape(-1)
    d = c - ref
    neq = d != 0
    _, e = np.frexp(np.maximum(np.abs(ref), 2.0 ** -126))
    ulp = np.ldexp(1.0, e - 8)
    toward = (np.abs(c) < np.abs(ref)) & neq
    nonzero = ref != 0
    return (float(neq.mean()), float(toward.sum() / max(neq.sum(), 1)),
            float((d / ulp * np.sign(ref))[nonzero].mean()) if nonzero.any() else 0.0)


def show(r):
    return "not bit-equal %.4f, toward zero %.3f of those, mean signed error %+.4f ulp" % r


def gemm_forms(a, b):
    """[batch, m, k] x [batch, n, k] BF16 values (FP32 arrays): exact (FP64
    sums, FP32), cuBLAS (BF16 out), FP32 in loop order (BF16 out)."""
    exact = np.matmul(a.astype(np.float64), b.astype(np.float64).transpose(0, 2, 1)).astype(np.float32)
    ta = torch.from_numpy(a).cuda()
    tb = torch.from_numpy(b).cuda()
    torch.backends.cuda.matmul.allow_bf16_reduced_precision_reduction = False
    cublas = torch.matmul(ta.bfloat16(), tb.bfloat16().transpose(1, 2)).float().cpu().numpy()
    acc = torch.zeros(a.shape[0], a.shape[1], b.shape[1], dtype=torch.float32, device="cuda")
    for k in range(a.shape[2]):
        acc = acc + ta[:, :, k:k + 1] * tb[:, :, k].unsqueeze(1)
    seq = acc.bfloat16().float().cpu().numpy()
    return exact, cublas, seq


def main():
    case = sys.argv[1] if len(sys.argv) > 1 else HERE
    work = tempfile.mkdtemp(prefix="nvfp4-noise-")
    args, files = hybrid.inputs(case, work)
    buffers, output, manifest, _, _ = hybrid.run(case, "hybrid_bf16", files, work, True)

    def value(param):
        arg = manifest["buffers"][param["buffer"]].get("argument")
        return args[arg].reshape(-1) if arg is not None else buffers[param["buffer"]]

    seen = set()
    for kernel in manifest["kernels"]:
        name = kernel["name"]
        if not name.startswith("nvfp4_bf16_matmul_") or name in seen:
            continue
        seen.add(name)
        maps = [p for p in kernel["params"] if p["type"] == "tensormap"]
        ptrs = [p for p in kernel["params"] if p["type"] == "ptr"]
        result = maps[2:3] or ptrs[-1:]
        a = value(maps[0]).astype(np.float32).reshape(maps[0]["dims"])
        b = value(maps[1]).astype(np.float32).reshape(maps[1]["dims"])
        c = value(result[0])
        exact, cublas, seq = gemm_forms(a, b)
        short = re.sub(r"_wgmma_.*", "", name)
        print("%s K=%d" % (short, a.shape[2]))
        print("  nvfp4 wgmma   %s" % show(rounding(c, exact)))
        print("  cuBLAS        %s" % show(rounding(cublas, exact)))
        print("  FP32 in order %s" % show(rounding(seq, exact)))
        print("  nvfp4 vs cuBLAS bit-equal %.4f, nvfp4 vs FP32 in order bit-equal %.4f"
              % (float((c.reshape(-1) == cublas.reshape(-1)).mean()),
                 float((c.reshape(-1) == seq.reshape(-1)).mean())))

    y = buffers[output]
    for name in ("reference_bf16", "reference_bf16_fp64acc"):
        ref = np.fromfile(os.path.join(case, name + ".f32"), np.float32)
        print("end to end vs %s: %s; %s" % (name, stage_check.show(stage_check.error(y, ref)),
                                           show(rounding(y, ref))))
    spec = hybrid.json.load(open(os.path.join(case, "arguments.json")))["arguments"]
    ir = open(os.path.join(case, "reference_bf16.mlir")).read()
    names = [s[0] for s in spec]
    for backend in (hybrid_formulation.Torch(), hybrid_formulation.Numpy()):
        other = hybrid_formulation.forward(args, names, ir, backend)
        for name in ("reference_bf16", "reference_bf16_fp64acc"):
            ref = np.fromfile(os.path.join(case, name + ".f32"), np.float32)
            print("%s formulation vs %s: %s" % (backend.name, name,
                                                stage_check.show(stage_check.error(other, ref))))
        print("nvfp4 bundle vs the %s formulation: %s"
              % (backend.name, stage_check.show(stage_check.error(y, other))))
    for what, which in (("input", [0]),
                        ("input and every BF16 weight",
                         [i for i, s in enumerate(spec) if s[5] == "bf16"])):
        for seed in range(4):
            moved, out_moved = hybrid.run_perturbed(case, files, which, seed, work)
            print("%s 0.1%% one ulp off, choice %d: moved %s"
                  % (what, seed, stage_check.show(stage_check.error(moved[out_moved], y))))
    return 0


if __name__ == "__main__":
    sys.exit(main())
