#!/usr/bin/python3
"""Writes the kit of integration_test/torch_dist.py (nvfp4.torch under
torch.distributed on the GPU): the layer kernels of every shape a rank and
the single-process reference run, compiled by nvfp4.torch's path into a
kernel cache, and libnvfp4_runtime.so. The data is made on the GPU machine
(seeded), and the reference is a single-process run there.

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
"""
import argparse
import json
import os
import shutil
import sys

from nvfp4 import layer_kernels as lk

CASE = {"tokens": 256, "in": 256, "out": 512, "ranks": 2,
        "seed": 0x452821E638D01377}
RECIPES = {"full": lk.RecipeOptions(),
           "rn": lk.RecipeOptions(stochastic_rounding=False)}


def shapes(case):
    t, k, n, p = case["tokens"], case["in"], case["out"], case["ranks"]
    return {"single": (t, k, n), "data": (t // p, k, n),
            "column": (t, k, n // p), "row": (t, k // p, n)}


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
    with open(os.path.join(args.out, "meta.json"), "w") as f:
        json.dump({"case": CASE, "shapes": shapes(CASE), "chip": args.chip,
                   "tolerance": 8e-3}, f, indent=1)
    total = sum(os.path.getsize(os.path.join(root, f))
                for root, _, files in os.walk(args.out) for f in files)
    print(f"make_dist_kit: {args.out}: {total / 2**20:.1f} MiB "
          f"({cache.compiles} bundles compiled)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
