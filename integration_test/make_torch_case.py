#!/usr/bin/python3
"""Writes the kit for integration_test/torch_linear.py (nvfp4.torch.Linear on
the GPU): the layer kernels compiled by nvfp4.torch's own path into a kernel
cache, libnvfp4_runtime.so, and for the correctness case the inputs, the
numerics library's quantized operands and the float64 model of the recipe.

  PYTHONPATH=build/python_packages /usr/bin/python3 \\
      integration_test/make_torch_case.py --build build --out integration_test/torch_kit

The correctness case is one layer Y = X W^T (no bias) on 512 tokens, 768 ->
1024, with the full recipe and a fixed stochastic-rounding seed:

  fprop  Y  = q(X) q16(W)^T                 X 1x16 RN, W 16x16 RN
  dgrad  dX = q_sr(dY) q16(W^T)^T           dY 1x16 SR (stream 0)
  wgrad  dW = q_sr(H dY^T) q(H X^T)^T       RHT along the tokens, dY^T SR
                                            (stream 1), X^T RN

with q the numerics library's quantization (nvfp4.quantize) and the
products of the dequantized operands in float64. The timing case is the
issue's 2048 tokens, 4096 x 4096 (kernels only; the GPU compares it with
cuBLAS BF16).
"""
import argparse
import json
import os
import shutil
import sys

import numpy as np

import nvfp4
from nvfp4 import layer_kernels as lk

CASE = {"tokens": 512, "in": 768, "out": 1024, "seed": 0x243F6A8885A308D3}
TIMING = {"tokens": 2048, "in": 4096, "out": 4096}


def bf16_bits(values):
    """float32 -> BF16 bits, round to nearest even."""
    u = np.asarray(values, np.float32).view(np.uint32).astype(np.uint64)
    return ((u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype(np.uint16)


def as_float(bits):
    return (bits.astype(np.uint32) << 16).view(np.float32)


def operand(q):
    return {"codes": q.packed.reshape(-1),
            "scales": np.asarray(q.scales, np.uint8).reshape(-1),
            "amax": np.array([q.amax], np.float32).view(np.uint32)}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--build", default="build")
    parser.add_argument("--out", default="integration_test/torch_kit")
    parser.add_argument("--chip", default="sm_90a")
    args = parser.parse_args()

    if os.path.isdir(args.out):
        shutil.rmtree(args.out)
    os.makedirs(os.path.join(args.out, "lib"))
    shutil.copy(os.path.join(args.build, "lib", "libnvfp4_runtime.so"),
                os.path.join(args.out, "lib"))
    cache = lk.KernelCache(os.path.join(args.out, "cache"))
    for case in (CASE, TIMING):
        lk.compile_layer(lk.LayerShape(case["tokens"], case["in"],
                                       case["out"]),
                         lk.RecipeOptions(), args.chip, cache)

    t, k, n = CASE["tokens"], CASE["in"], CASE["out"]
    rng = np.random.default_rng(20261201)
    # Activations with outlier columns, small weights, gradients of mixed
    # scale: every block scale and the RHT's spreading matter.
    x = rng.standard_normal((t, k)).astype(np.float32)
    x[:, rng.choice(k, 8, replace=False)] *= 20.0
    w = (rng.standard_normal((n, k)) * 0.02).astype(np.float32)
    dy = (rng.standard_normal((t, n)) *
          np.exp(rng.standard_normal((t, 1)))).astype(np.float32) * 1e-3
    x, w, dy = (bf16_bits(v) for v in (x, w, dy))

    seed = CASE["seed"]
    qx = nvfp4.quantize(x, (1, 16))
    qw = nvfp4.quantize(w, (16, 16))
    qdy = nvfp4.quantize(dy, (1, 16), "sr", lk.derive_stream_seed(seed, 0))
    qwt = nvfp4.quantize(np.ascontiguousarray(w.T), (16, 16))
    qdyt = nvfp4.quantize(nvfp4.hadamard(np.ascontiguousarray(dy.T)), (1, 16),
                          "sr", lk.derive_stream_seed(seed, 1))
    qxt = nvfp4.quantize(nvfp4.hadamard(np.ascontiguousarray(x.T)), (1, 16))

    def deq(q):
        return nvfp4.dequantize(q).astype(np.float64)

    data = {"x": x, "w": w, "dy": dy,
            "y_ref": (deq(qx) @ deq(qw).T).astype(np.float32),
            "dx_ref": (deq(qdy) @ deq(qwt).T).astype(np.float32),
            "dw_ref": (deq(qdyt) @ deq(qxt).T).astype(np.float32)}
    for name, q in (("x", qx), ("w", qw), ("dy", qdy), ("wt", qwt),
                    ("dyt", qdyt), ("xt", qxt)):
        for part, value in operand(q).items():
            data[f"q_{name}_{part}"] = value
    np.savez_compressed(os.path.join(args.out, "data.npz"), **data)
    with open(os.path.join(args.out, "meta.json"), "w") as f:
        json.dump({"case": CASE, "timing": TIMING, "chip": args.chip,
                   "operands": {"forward": ["x", "w"],
                                "backward": ["dy", "wt", "dyt", "xt"]},
                   "tolerance": 8e-3}, f, indent=1)
    total = sum(os.path.getsize(os.path.join(root, f))
                for root, _, files in os.walk(args.out) for f in files)
    print(f"make_torch_case: {args.out}: {total / 2**20:.1f} MiB "
          f"({cache.compiles} bundles compiled)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
