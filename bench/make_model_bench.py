"""Builds the model benchmark kit (issue 18): a Llama-8B-shaped decoder block
at 16k tokens, compiled twice for sm_90a, for bench/run_model_bench.py.

Here (no GPU): scripts/gen-model.py writes the block (llama --block-only
--tokens T); nvfp4-compile makes two kernel bundles of it, one with the
default precision (the block's seven linear layers in NVFP4, the attention
matmuls in BF16) and one all-BF16 (--keep-first=2 --keep-last=8 keeps the
only block in BF16). Each bundle must run on its own (no host computation),
every kernel must compile without spills, and its buffers must fit the
H200's memory; anything else stops the build with one line saying which.
Then it copies nvfp4-run, its runtime library and the input generator.

OUT gets (no weights: run_model_bench.py regenerates the inputs there)
  block.mlir                  the IR of both bundles
  nvfp4.cubin, nvfp4.json     NVFP4 GEMMs (emulated on sm_90a: decode + wgmma)
  bf16.cubin, bf16.json       the same IR, all GEMMs BF16
  kit.json                    tokens, arguments, per-bundle summary
  nvfp4-run, libnvfp4_runtime.so.*, model_inputs.py
"""

import argparse
import json
import os
import shutil
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

# An H200's memory as the driver reports it (cuDeviceTotalMem: 139.8 GiB);
# a bundle keeps every buffer for the whole run, and the context, the
# module and the tensor maps need a little more.
H200_BYTES = 150_110_011_392
HEADROOM_BYTES = 2 << 30

ELEMENT_BYTES = {"bf16": 2, "f16": 2, "f32": 4, "f64": 8, "i8": 1, "ui8": 1,
                 "i16": 2, "i32": 4, "i64": 8, "f8E4M3FN": 1, "f8E5M2": 1}

BUNDLES = [
    # name, extra nvfp4-compile options, what it is
    ("nvfp4", [], "NVFP4 linear layers (default precision), BF16 attention matmuls"),
    ("bf16", ["--keep-first=2", "--keep-last=8"], "all GEMMs BF16 (the block kept in BF16)"),
]


def die(message):
    sys.exit("make_model_bench: " + message)


def buffer_bytes(manifest):
    total = 0
    for index, buffer in enumerate(manifest["buffers"]):
        size = ELEMENT_BYTES.get(buffer["element_type"])
        if size is None:
            die("buffer %d has an element type this script does not size: %s"
                % (index, buffer["element_type"]))
        total += buffer["elements"] * size
    return total


def check_bundle(name, manifest, tokens):
    """The checks of the module docstring; returns the bundle's summary."""
    if manifest.get("host_computation"):
        die("the %s bundle leaves computation on the host: %s"
            % (name, manifest["host_computation"]))
    spills = sorted({k["name"] for k in manifest["kernels"] if k.get("spill_bytes")})
    if spills:
        die("%s bundle: %d kernels spill: %s" % (name, len(spills), ", ".join(spills)))
    if not manifest.get("assembled_with_ptxas"):
        die("%s bundle: not assembled with ptxas (no register or spill counts)" % name)
    total = buffer_bytes(manifest)
    if total + HEADROOM_BYTES > H200_BYTES:
        die("%s bundle: its buffers take %.1f GB, more than an H200 holds (%.1f GB)"
            % (name, total / 1e9, H200_BYTES / 1e9))
    gemms = manifest["precision"]["gemms"]
    precisions = {}
    for g in gemms:
        precisions[g["precision"]] = precisions.get(g["precision"], 0) + 1
    linear = [g for g in gemms if g.get("batch", 1) == 1]
    if name == "bf16" and any(g["precision"] != "bf16" for g in gemms):
        die("the bf16 bundle has non-BF16 GEMMs: %s" % precisions)
    if name == "nvfp4" and any(g["precision"] != "nvfp4" for g in linear):
        die("the nvfp4 bundle keeps linear layers out of NVFP4: %s" % precisions)
    if any(g["m"] != tokens for g in linear):
        die("%s bundle: a linear layer's M is not the %d tokens" % (name, tokens))
    return {
        "launches": len(manifest["kernels"]),
        "kernels": len({k["name"] for k in manifest["kernels"]}),
        "buffer_bytes": total,
        "max_registers": max(k.get("registers", 0) for k in manifest["kernels"]),
        "spilling_kernels": 0,
        "gemm_precisions": precisions,
        "gemm_flops": sum(g["flops"] for g in gemms),
    }


def check_torch_module(build, out):
    """llama_block_torch.py against the CPU reference pipeline of the IR
    (mlir-runner, a few minutes), all-BF16 with FP32 accumulation, on the
    128-token block and model_inputs.py's inputs; needs numpy and torch
    (CPU) in this Python."""
    import numpy as np
    import torch
    sys.path.insert(0, os.path.join(ROOT, "integration_test", "model"))
    import llama_block_torch as block
    import make_model_case
    import model_inputs
    text = open(os.path.join(ROOT, "examples", "llama_block.mlir")).read()
    reference = make_model_case.run_reference(
        build, out, "torch_check_reference",
        make_model_case.fp32_accumulation(text, ops=("matmul", "batch_matmul"), expected=9),
        precision="--nvfp4-assign-precision=keep-first=2 keep-last=8")
    specs = {name: (seed, exponent, signed)
             for name, _, seed, exponent, signed in model_inputs.ARGUMENTS}
    tensors = [torch.from_numpy(model_inputs.bf16_bits(shape(128), *specs[name]).view(np.int16))
               .view(torch.bfloat16) for name, shape in block.ARGUMENTS]
    with torch.no_grad():
        y = block.decoder_block(*tensors).float().numpy().reshape(-1)
    error = float(np.abs(y.astype(np.float64) - reference).max() / np.abs(reference).max())
    print("make_model_bench: llama_block_torch.py vs the CPU reference of the IR (128 "
          "tokens, all-BF16, FP32 accumulation): max-norm relative error %.3e" % error)
    if not error <= 5e-2:
        die("llama_block_torch.py does not compute the IR's block")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--build", default=os.path.join(ROOT, "build"))
    parser.add_argument("--out", default=os.path.join(ROOT, "bench", "build-model"))
    parser.add_argument("--tokens", type=int, default=16384)
    parser.add_argument("--check-torch", action="store_true",
                        help="first check llama_block_torch.py against the IR's CPU "
                             "reference on 128 tokens (minutes; needs torch)")
    args = parser.parse_args()
    bin_dir = os.path.join(args.build, "bin")
    for tool in ("nvfp4-compile", "nvfp4-run"):
        if not os.access(os.path.join(bin_dir, tool), os.X_OK):
            die("%s is not built in %s" % (tool, bin_dir))
    usage = subprocess.run([os.path.join(bin_dir, "nvfp4-run"), "--help"],
                           capture_output=True, text=True).stdout
    if "--time-kernels" not in usage:
        die("%s/nvfp4-run has no --time-kernels: rebuild it (ninja -C %s nvfp4-run)"
            % (bin_dir, args.build))
    if os.path.exists(args.out):
        shutil.rmtree(args.out)
    os.makedirs(args.out)
    out = args.out
    if args.check_torch:
        check_torch_module(args.build, out)
        for name in os.listdir(out):
            os.remove(os.path.join(out, name))

    block = os.path.join(out, "block.mlir")
    with open(block, "w") as f:
        subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "gen-model.py"),
                        "llama", "--block-only", "--tokens", str(args.tokens)],
                       stdout=f, check=True)

    summary = {"tokens": args.tokens, "model": "Llama-3-8B-shaped decoder block "
               "(gen-model.py llama --block-only --tokens %d)" % args.tokens,
               "chip": "sm_90a", "bundles": {}}
    for name, options, what in BUNDLES:
        start = time.time()
        command = [os.path.join(bin_dir, "nvfp4-compile"), block, "--chip=sm_90a",
                   "--emit=cubin", "-o", os.path.join(out, name + ".cubin"),
                   "--report=" + os.path.join(out, name + ".json")] + options
        result = subprocess.run(command, capture_output=True, text=True)
        if result.returncode != 0:
            die("compiling the %s bundle failed (%s):\n%s"
                % (name, " ".join(command), result.stderr.strip()))
        with open(os.path.join(out, name + ".json")) as f:
            manifest = json.load(f)
        info = check_bundle(name, manifest, args.tokens)
        info["what"] = what
        info["compile_options"] = options
        summary["bundles"][name] = info
        print("make_model_bench: %s bundle: %d launches of %d kernels, no host "
              "computation, no spills (max %d registers), %.1f GB of buffers, "
              "GEMMs %s, compiled in %.0f s"
              % (name, info["launches"], info["kernels"], info["max_registers"],
                 info["buffer_bytes"] / 1e9, info["gemm_precisions"],
                 time.time() - start))
    with open(os.path.join(out, "kit.json"), "w") as f:
        json.dump(summary, f, indent=1)

    shutil.copy(os.path.join(bin_dir, "nvfp4-run"), out)
    library = os.path.realpath(os.path.join(args.build, "lib", "libnvfp4_runtime.so"))
    # nvfp4-run asks for the soname (libnvfp4_runtime.so.0.1); the device
    # machine finds it through LD_LIBRARY_PATH=OUT.
    soname = subprocess.run(["readelf", "-d", library], capture_output=True,
                            text=True, check=True).stdout
    soname = soname.split("Library soname: [", 1)[1].split("]", 1)[0]
    shutil.copy(library, os.path.join(out, soname))
    shutil.copy(os.path.join(ROOT, "integration_test", "model", "model_inputs.py"), out)
    size = sum(os.path.getsize(os.path.join(out, n)) for n in os.listdir(out))
    where = os.path.abspath(out)
    if where.startswith(ROOT + os.sep):
        where = os.path.relpath(where, ROOT)
    print("make_model_bench: wrote %s (%.1f MB); on the GPU machine run "
          "python3 bench/run_model_bench.py %s" % (out, size / 1e6, where))


if __name__ == "__main__":
    main()
