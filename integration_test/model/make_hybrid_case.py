"""Writes the hybrid's GPU case: examples/hybrid_tiny_blocks.mlir on the H200.

The first blocks of the hybrid (gen-model.py hybrid --tiny --pattern 'M-*-'
--block-only: a Mamba-2 mixer, an FFN, an attention and an FFN block at
d = 256) compiled for sm_90a twice -- the default precision policy (NVFP4
GEMMs) and all-BF16 (--keep-first=2 --keep-last=2) -- each a kernel bundle
that must leave no host computation and no spill. Here (the development
machine) it also runs the CPU reference pipeline of the same IR with
mlir-runner on the inputs (model_inputs.bf16_bits; the FP32 parameters are
those BF16 values widened), and writes, into OUT:

  hybrid.cubin/.json, hybrid_bf16.cubin/.json   the bundles
  reference.f32            the NVFP4 IR's CPU reference output (BF16 BMMs
                           accumulating in BF16, as the IR says)
  reference_fp32acc.f32    the same with the BMMs accumulating in FP32
  reference_bf16.f32       the all-BF16 IR, every GEMM accumulating in FP32
                           (what the GPU's wgmma computes)
  reference_bf16_fp64acc.f32   the same with every GEMM accumulating in FP64,
                           rounded once: a second correct formulation, whose
                           distance to reference_bf16 is the floor an
                           end-to-end comparison can reach (run_hybrid_case.py)
  arguments.json           the inputs: (name, shape, seed, exponent, signed,
                           dtype) per argument of @decoder_block
  nvfp4-run, libnvfp4_runtime.so.*, run_hybrid_case.py and its modules
"""

import argparse
import concurrent.futures
import json
import math
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
import make_model_case  # noqa: E402

BF16_POLICY = ["--keep-first=2", "--keep-last=2"]


def arguments_of(text):
    """(name, shape, seed, exponent, signed, dtype) for each argument of
    @decoder_block: activations and norms O(1), weights scaled by about
    1 / sqrt(K), the Mamba-2 parameters small (dt_bias, a_log signed)."""
    signature = text[text.index("func.func @decoder_block("):]
    signature = signature[:signature.index("{\n")]
    arguments = []
    for seed, (name, dims, dtype) in enumerate(re.findall(
            r"%(\w+): tensor<([0-9x]+)x(bf16|f32)>", signature), start=1):
        shape = tuple(int(d) for d in dims.split("x"))
        base = name.split("_", 1)[1] if name[0] == "l" and "_" in name else name
        if base == "hidden":
            exponent, signed = 126, True
        elif base.endswith("norm"):
            exponent, signed = 126, False
        elif base == "conv_w":
            exponent, signed = 125, True
        elif base == "dt_bias":
            exponent, signed = 124, True
        elif base == "a_log":
            exponent, signed = 125, True
        elif base == "d_skip":
            exponent, signed = 126, False
        else:  # a weight [N, K]
            exponent, signed = 126 - int(round(math.log2(shape[-1]) / 2)), True
        arguments.append((name, shape, seed, exponent, signed, dtype))
    return arguments


def compile_bundle(build, model, out, name, policy):
    subprocess.run([os.path.join(build, "bin", "nvfp4-compile"), model, "--chip=sm_90a",
                    "--emit=cubin", "-o", os.path.join(out, name + ".cubin"),
                    "--report=" + os.path.join(out, name + ".json")] + policy, check=True)
    manifest = json.load(open(os.path.join(out, name + ".json")))
    if manifest.get("host_computation"):
        sys.exit("make_hybrid_case: %s leaves host computation: %s"
                 % (name, manifest["host_computation"]))
    spills = [k["name"] for k in manifest["kernels"] if k.get("spill_bytes")]
    if spills:
        sys.exit("make_hybrid_case: %s: kernels spill: %s" % (name, spills))
    print("make_hybrid_case: %s: %d launches, %d kernels, no host computation, no spills"
          % (name, len(manifest["kernels"]), len({k["name"] for k in manifest["kernels"]})))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--build", default=os.path.join(ROOT, "build"))
    parser.add_argument("--out", default=os.path.join(ROOT, "integration_test", "hybrid_case"))
    parser.add_argument("--model", default=os.path.join(ROOT, "examples", "hybrid_tiny_blocks.mlir"))
    parser.add_argument("--jobs", type=int, default=4,
                        help="CPU references run at once (each holds the model's weights: "
                             "about 10 GB apiece for examples/hybrid_first_blocks.mlir)")
    parser.add_argument("--without", default="",
                        help="comma-separated info-only references not to compute: reference "
                             "(the NVFP4 IR as written; its CPU pipeline needs ~20 GB at d = 5120)")
    parser.add_argument("--reuse-reference", action="store_true",
                        help="keep the references already written in --out")
    args = parser.parse_args()
    out, build = args.out, args.build
    os.makedirs(out, exist_ok=True)
    text = open(args.model).read()
    arguments = arguments_of(text)
    result = re.search(r"func\.func @decoder_block\(.*?\) -> tensor<([0-9x]+)xbf16>", text, re.S)
    out_shape = tuple(int(d) for d in result.group(1).split("x"))
    json.dump({"arguments": arguments, "output": out_shape},
              open(os.path.join(out, "arguments.json"), "w"), indent=1)

    compile_bundle(build, args.model, out, "hybrid", [])
    compile_bundle(build, args.model, out, "hybrid_bf16", BF16_POLICY)

    plain = [a[:5] for a in arguments]
    f32_args = {a[0] for a in arguments if a[5] == "f32"}
    reference = dict(arguments=plain, out_shape=out_shape, f32_args=f32_args)
    contractions = len(re.findall(r"linalg\.(?:batch_)?matmul ", text))
    bmms = len(re.findall(r"linalg\.batch_matmul ", text))
    bf16 = dict(reference, precision="--nvfp4-assign-precision=keep-first=2 keep-last=2")
    references = [
        ("reference", text, reference),
        ("reference_fp32acc", make_model_case.fp32_accumulation(text, expected=bmms), reference),
        ("reference_bf16", make_model_case.fp32_accumulation(
            text, ops=("matmul", "batch_matmul"), expected=contractions), bf16),
        ("reference_bf16_fp64acc", make_model_case.fp32_accumulation(
            text, ops=("matmul", "batch_matmul"), expected=contractions, acc="f64"), bf16)]
    skipped = {name for name in args.without.split(",") if name}
    if not skipped <= {"reference"}:
        sys.exit("make_hybrid_case: --without takes only info-only references (reference)")
    references = [r for r in references if r[0] not in skipped]
    if args.reuse_reference:
        references = [r for r in references
                      if not os.path.exists(os.path.join(out, r[0] + ".f32"))]
    with concurrent.futures.ThreadPoolExecutor(max(1, args.jobs)) as pool:
        jobs = [pool.submit(make_model_case.run_reference, build, out, name, program, **options)
                for name, program, options in references]
        for job in jobs:
            job.result()

    make_model_case.copy_runner(build, out, "run_hybrid_case.py")


if __name__ == "__main__":
    main()
