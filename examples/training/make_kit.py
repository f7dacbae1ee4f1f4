#!/usr/bin/python3
"""Writes the kit that examples/training/train.py needs on a GPU machine
without the compiler: for every NVFP4 arm, the per-layer precision policy
and the kernels of every linear shape of the model, compiled by
nvfp4.torch's own path (nvfp4.torch.convert and nvfp4.torch.prepare) into
one kernel cache; and libnvfp4_runtime.so.

    PYTHONPATH=build/python_packages /usr/bin/python3 \\
        examples/training/make_kit.py --build build --kit examples/training/kit

Takes train.py's model options (--layers, --width, ..., --batch); the kit
records them and train.py refuses a kit made for another model.
"""
import argparse
import json
import os
import shutil
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import train  # noqa: E402  (the arms and the model options)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    train.add_model_arguments(parser)
    parser.add_argument("--build", default="build")
    parser.add_argument("--kit", default=os.path.join(HERE, "kit"))
    parser.add_argument("--chip", default="sm_90a")
    parser.add_argument("--arms", default=",".join(
        a for a, (_, recipe) in train.ARMS.items() if recipe is not None))
    args = parser.parse_args()

    import torch
    import nvfp4.torch as nt

    library = os.path.join(args.build, "lib", "libnvfp4_runtime.so")
    if not os.path.isfile(library):
        raise SystemExit(f"make_kit: {library} is missing (build first)")
    cache_dir = os.path.join(args.kit, "cache")
    os.makedirs(os.path.join(args.kit, "lib"), exist_ok=True)
    shutil.copy(library, os.path.join(args.kit, "lib"))
    tokens = args.batch * args.context
    arms = {}
    start = time.monotonic()
    for arm in args.arms.split(","):
        if arm not in train.ARMS or train.ARMS[arm][1] is None:
            raise SystemExit(f"make_kit: {arm!r} is not an NVFP4 arm")
        model = train.build_model(args, arm, torch.device("cpu"), cache_dir)
        layers = train.nvfp4_layers(model)
        if not layers:
            raise SystemExit(f"make_kit: the policy of arm {arm} leaves no "
                             f"layer in NVFP4")
        compiled = nt.prepare(model, tokens, chip=args.chip)
        arms[arm] = {"nvfp4_layers": len(layers),
                     "layers": [m.layer_name for m in layers],
                     "recipe": repr(layers[0].recipe),
                     "formats": {m.layer_name: m.format for m in layers},
                     "shapes": train.layer_shapes(layers),
                     "bundles": compiled}
        print(f"make_kit: {arm}: {len(layers)} quantized layers, {compiled} "
              f"layer kernels ({time.monotonic() - start:.0f} s)", flush=True)
    kit = {"config": train.model_config(args), "chip": args.chip,
           "tokens": tokens, "arms": arms}
    with open(os.path.join(args.kit, "meta.json"), "w") as f:
        json.dump(kit, f, indent=1)

    # What the GPU machine will do, without a compiler: every arm's policy
    # and kernels must come from the kit.
    os.environ["NVFP4_TOOLS_DIR"] = os.path.join(args.kit, "no-compiler-here")
    for arm in arms:
        train.build_model(args, arm, torch.device("cpu"), cache_dir)
    train.check_kit(args, kit, cache_dir, list(arms))
    total = sum(os.path.getsize(os.path.join(root, name))
                for root, _, files in os.walk(args.kit) for name in files)
    print(f"make_kit: {args.kit}: {total / 2**20:.1f} MiB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
