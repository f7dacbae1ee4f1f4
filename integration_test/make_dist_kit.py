#!/usr/bin/python3
"""Writes the kit of integration_test/torch_dist.py (nvfp4.torch under
torch.distributed on the GPU): the layer kernels of every shape a rank and
the single-process reference run, compiled by nvfp4.torch's path into a
kernel cache, libnvfp4_runtime.so, the inputs, and the numerics library's
bytes of the single-process run. The GPU machine has no build of nvfp4's
numerics extension (nvfp4._nvfp4 is built for this machine's Python), so
everything that needs the library is computed here; the kit is checked
here as the GPU machine will use it (torch_dist.py --check-kit: no
extension, no compiler).

  PYTHONPATH=build/python_packages /usr/bin/python3 \\
      integration_test/make_dist_kit.py --build build \\
      --out integration_test/dist_kit

The layer: T tokens, IN -> OUT, two ranks. Shapes compiled:
  single process        T x IN -> OUT        (both recipes)
  data parallel (DDP, FSDP2: tokens split)   T/2 x IN -> OUT (full recipe)
  tensor parallel, column (OUT split)        T x IN -> OUT/2 (both)
  tensor parallel, row (IN split)            T x IN/2 -> OUT (both)
with the full recipe and the full recipe without stochastic rounding (the
tensor-parallel gradient checks: a rank's SR draws depend on the element's
position in its shard, so SR bytes cannot equal the single-process ones).

data.npz: X, W, dY (BF16 bits; halves of different magnitude along every
split dimension, so a shard's own amax is not the whole tensor's), and for
each recipe the library's quantization of the single-process run's six
operands and the float64 model of its Y, dX, dW:

  fprop  Y  = q(X) q16(W)^T        dgrad  dX = q'(dY) q16(W^T)^T
  wgrad  dW = q'(H dY^T) q(H X^T)^T

(q: 1x16 RN, q16: 16x16 RN, q': 1x16 SR with the seed's streams 0 and 1
in the full recipe, RN in the "rn" one; H the RHT along the tokens).
"""
import argparse
import json
import os
import shutil
import subprocess
import sys

import numpy as np

import nvfp4
from nvfp4 import layer_kernels as lk

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
from make_torch_case import bf16_bits, operand  # noqa: E402

CASE = {"tokens": 256, "in": 256, "out": 512, "ranks": 2,
        "seed": 0x452821E638D01377}
RECIPES = {"full": lk.RecipeOptions(),
           "rn": lk.RecipeOptions(stochastic_rounding=False)}


def shapes(case):
    t, k, n, p = case["tokens"], case["in"], case["out"], case["ranks"]
    return {"single": (t, k, n), "data": (t // p, k, n),
            "column": (t, k, n // p), "row": (t, k // p, n)}


def make_data(case):
    t, k, n = case["tokens"], case["in"], case["out"]
    rng = np.random.default_rng(20261201)
    x = rng.standard_normal((t, k)).astype(np.float32)
    x[:, k // 2:] *= 3.0
    x[:, rng.choice(k, 4, replace=False)] *= 10.0
    w = (rng.standard_normal((n, k)) * 0.02).astype(np.float32)
    w[n // 2:, :] *= 4.0
    w[:, k // 2:] *= 3.0
    dy = (rng.standard_normal((t, n)) * 1e-3 *
          np.exp(rng.standard_normal((t, 1)))).astype(np.float32)
    dy[:, n // 2:] *= 5.0
    x, w, dy = (bf16_bits(v) for v in (x, w, dy))
    data = {"x": x, "w": w, "dy": dy}

    def deq(q):
        return nvfp4.dequantize(q).astype(np.float64)

    seed = case["seed"]
    for recipe in RECIPES:
        def grad(values, stream):
            if recipe == "full":
                return nvfp4.quantize(values, (1, 16), "sr",
                                      lk.derive_stream_seed(seed, stream))
            return nvfp4.quantize(values, (1, 16))
        q = {"x": nvfp4.quantize(x, (1, 16)),
             "w": nvfp4.quantize(w, (16, 16)),
             "dy": grad(dy, 0),
             "wt": nvfp4.quantize(np.ascontiguousarray(w.T), (16, 16)),
             "dyt": grad(nvfp4.hadamard(np.ascontiguousarray(dy.T)), 1),
             "xt": nvfp4.quantize(nvfp4.hadamard(np.ascontiguousarray(x.T)),
                                  (1, 16))}
        for name, quantized in q.items():
            for part, value in operand(quantized).items():
                data[f"{recipe}_q_{name}_{part}"] = value
        for name, (a, b) in (("y", ("x", "w")), ("dx", ("dy", "wt")),
                             ("dw", ("dyt", "xt"))):
            data[f"{recipe}_{name}_ref"] = (deq(q[a]) @ deq(q[b]).T).astype(
                np.float32)
    return data


def check_kit(out):
    """torch_dist.py --check-kit as on the GPU machine: this tree's python/
    without the extension, no compiler."""
    env = dict(os.environ,
               PYTHONPATH=os.pathsep.join([os.path.join(ROOT, "python"),
                                           os.path.join(ROOT, "runtime",
                                                        "python")]),
               NVFP4_TOOLS_DIR=os.path.join(out, "no-compiler-here"))
    return subprocess.run([sys.executable, os.path.join(HERE, "torch_dist.py"),
                           out, "--check-kit"], env=env).returncode


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--build", default="build")
    parser.add_argument("--out", default="integration_test/dist_kit")
    parser.add_argument("--chip", default="sm_90a")
    args = parser.parse_args()

    if os.path.isdir(args.out):
        shutil.rmtree(args.out)
    os.makedirs(os.path.join(args.out, "lib"))
    shutil.copy(os.path.join(args.build, "lib", "libnvfp4_runtime.so"),
                os.path.join(args.out, "lib"))
    cache = lk.KernelCache(os.path.join(args.out, "cache"))
    for recipe, options in RECIPES.items():
        for split, shape in shapes(CASE).items():
            if recipe == "rn" and split == "data":
                continue
            lk.compile_layer(lk.LayerShape(*shape), options, args.chip,
                             cache)
    np.savez_compressed(os.path.join(args.out, "data.npz"), **make_data(CASE))
    with open(os.path.join(args.out, "meta.json"), "w") as f:
        json.dump({"case": CASE, "shapes": shapes(CASE), "chip": args.chip,
                   "tolerance": 8e-3}, f, indent=1)
    total = sum(os.path.getsize(os.path.join(root, f))
                for root, _, files in os.walk(args.out) for f in files)
    print(f"make_dist_kit: {args.out}: {total / 2**20:.1f} MiB "
          f"({cache.compiles} bundles compiled)")
    if check_kit(args.out):
        print("make_dist_kit: the kit does not work without the numerics "
              "extension and the compiler (above)", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
