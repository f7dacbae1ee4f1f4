"""Runs the whole-model case on the GPU machine (no MLIR needed there).

Regenerates the block's inputs (model_inputs.py), runs the bundle through
nvfp4-run (the compiled host function: allocations, launches, frees) and
compares its output with the CPU reference pipeline's: max-norm relative
error max|y - ref| / max|ref| within 8e-3. Then times the launch sequence.
Exit status 0 means PASS.
"""

import os
import subprocess
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import model_inputs  # noqa: E402

TOLERANCE = 8e-3


def main():
    case = sys.argv[1] if len(sys.argv) > 1 else HERE
    work = tempfile.mkdtemp(prefix="nvfp4-model-")
    # $MODEL_SANITIZE: compute-sanitizer's path, to run under memcheck.
    sanitizer = os.environ.get("MODEL_SANITIZE")
    prefix = [sanitizer, "--tool", "memcheck", "--error-exitcode", "3"] if sanitizer else []
    command = prefix + [os.path.join(case, "nvfp4-run"), os.path.join(case, "block.cubin"),
               "--manifest=" + os.path.join(case, "block.json")]
    for index, (name, shape, seed, exponent, signed) in enumerate(model_inputs.ARGUMENTS):
        path = os.path.join(work, name + ".bin")
        model_inputs.bf16_bits(shape, seed, exponent, signed).tofile(path)
        command += ["--input", "%d=%s" % (index, path)]
    output = os.path.join(work, "y.bin")
    command += ["--output", "0=" + output]
    env = dict(os.environ, LD_LIBRARY_PATH=case + ":" + os.environ.get("LD_LIBRARY_PATH", ""))
    subprocess.run(command, check=True, env=env)
    y = (np.fromfile(output, np.uint16).astype(np.uint32) << 16).view(np.float32)
    finite = bool(np.isfinite(y).all())
    errors = {}
    # reference: the CPU reference pipeline of the same IR (its BF16 attention
    # BMMs accumulate in BF16, as linalg.batch_matmul with a BF16 C says);
    # reference_fp32acc: the same with those BMMs accumulating in FP32,
    # rounded once -- what the GPU's wgmma GEMM computes.
    for name in ("reference", "reference_fp32acc"):
        if not os.path.exists(os.path.join(case, name + ".f32")):
            print("llama_block: no %s.f32 in the case" % name)
            continue
        ref = np.fromfile(os.path.join(case, name + ".f32"), np.float32)
        if y.size != ref.size:
            sys.exit("FAIL llama_block: %d output values, %s has %d" % (y.size, name, ref.size))
        errors[name] = float(np.abs(y.astype(np.float64) - ref).max() / np.abs(ref).max())
        print("llama_block vs %s: max-norm relative error %.3e (tolerance %.0e), max |ref| %.4g"
              % (name, errors[name], TOLERANCE, np.abs(ref).max()))
    print("llama_block: output finite: %s" % finite)
    # The GPU's arithmetic is the FP32-accumulation one; without that
    # reference, the same IR's.
    error = errors.get("reference_fp32acc", errors["reference"])
    if sanitizer:
        timing = None
    else:
        timing = subprocess.run(command[:-2] + ["--time", "--warmup", "3", "--repeat", "20"],
                                env=env, capture_output=True, text=True)
        print(timing.stdout.strip() or timing.stderr.strip())
    if not finite or not error <= TOLERANCE:
        print("FAIL llama_block")
        return 1
    print("PASS llama_block")
    return 0


if __name__ == "__main__":
    sys.exit(main())
