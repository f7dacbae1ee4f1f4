"""The CPU reference pipeline of the Llama block, stage by stage (issue 18).

The counterpart of stage_check.py on the development machine: runs the CPU
reference pipeline (nvfp4-opt ... --nvfp4-reference-pipeline, mlir-runner)
of examples/llama_block.mlir with every stage of the block returned, then
recomputes each stage with numpy (stage_check.py's formulation, NVFP4 by
nvfp4_numpy.py) from the reference's own inputs of that stage. Every NVFP4
GEMM stage (quantize X and W, block-scaled GEMM, BF16 result) must equal
numpy's bit for bit; every other stage must be within rounding, as
stage_check.py judges the GPU's. With both checks, the GPU and the CPU
reference agree stage by stage through one independent formulation.

Usage: reference_stages.py BUILD OUT [--fp32-accumulation]
  OUT receives reference_stages.mlir and the log lines are printed.
  --fp32-accumulation: the attention BMMs accumulate in FP32 (as the GPU's
  wgmma does); without it they accumulate in BF16 as linalg says, and
  numpy's BMM stages are then not expected to match (reported, not judged).
Exit status 0: every judged stage passes.
"""

import os
import re
import subprocess
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
import make_model_case  # noqa: E402
import model_inputs  # noqa: E402
import nvfp4_numpy  # noqa: E402
import stage_check  # noqa: E402

LLVM = "/usr/lib/llvm-22"


def tensor_type(shape):
    return "tensor<%sxbf16>" % "x".join(map(str, shape))


def staged_program(fp32_accumulation):
    """The reference program with @decoder_block returning every stage and
    @main printing each (as FP32) after the input checksums."""
    text = open(os.path.join(ROOT, "examples", "llama_block.mlir")).read()
    if fp32_accumulation:
        text = make_model_case.fp32_accumulation(text)
    names = [s[0] for s in stage_check.STAGES]
    types = [tensor_type(s[3]) for s in stage_check.STAGES]
    out = tensor_type((128, 4096))
    signature = "%l0_w_down: tensor<4096x14336xbf16> {nvfp4.weight}) -> " + out
    if signature not in text or "    return %h41 : " + out not in text:
        sys.exit("reference_stages: examples/llama_block.mlir is not the block this script knows")
    text = text.replace(signature, signature[:-len(out)] + "(" + ", ".join(types) + ")")
    text = text.replace("    return %h41 : " + out,
                        "    return " + ", ".join("%" + n for n in names) + " : " + ", ".join(types))
    program = make_model_case.reference_program(text)
    call = re.search(r"    %o = func.call @decoder_block\((.*)\) : \((.*)\) -> " + re.escape(out) + "\n",
                     program)
    lines = ["    %s = func.call @decoder_block(%s) : (%s) -> (%s)" % (
        ", ".join("%%o%d" % i for i in range(len(names))), call.group(1), call.group(2),
        ", ".join(types))]
    for i, (name, shape) in enumerate((s[0], s[3]) for s in stage_check.STAGES):
        f32 = tensor_type(shape).replace("bf16", "f32")
        memref = f32.replace("tensor", "memref")
        lines += ["    %%f%d = arith.extf %%o%d : %s to %s" % (i, i, types[i], f32),
                  "    %%m%d = bufferization.to_buffer %%f%d : %s to %s" % (i, i, f32, memref),
                  "    %%u%d = memref.cast %%m%d : %s to memref<*xf32>" % (i, i, memref),
                  "    func.call @printMemrefF32(%%u%d) : (memref<*xf32>) -> ()" % i]
    end = program.index("    return\n", call.start())
    return program[:call.start()] + "\n".join(lines) + "\n" + program[end:]


def run_reference(build, out, fp32_accumulation):
    """{stage: FP32 values} of the CPU reference pipeline."""
    path = os.path.join(out, "reference_stages.mlir")
    with open(path, "w") as f:
        f.write(staged_program(fp32_accumulation))
    start = time.time()
    lowered = subprocess.run(
        [os.path.join(build, "bin", "nvfp4-opt"), path, "--nvfp4-assign-precision",
         "--nvfp4-apply-recipe", "--nvfp4-fuse-quantization", "--nvfp4-reference-pipeline"],
        check=True, capture_output=True, text=True).stdout
    printed = subprocess.run(
        [LLVM + "/bin/mlir-runner", "-e", "main", "-entry-point-result=void", "-O2",
         "-shared-libs=%s/lib/libmlir_c_runner_utils.so,%s/lib/libmlir_runner_utils.so"
         % (LLVM, LLVM)], input=lowered, check=True, capture_output=True, text=True).stdout
    print("reference_stages: CPU reference in %.0f s" % (time.time() - start))
    lines = printed.splitlines()
    for index, (arg, shape, seed, exponent, signed) in enumerate(model_inputs.ARGUMENTS):
        expected = model_inputs.bits_sum(model_inputs.bf16_bits(shape, seed, exponent, signed))
        if int(lines[index]) != expected:
            sys.exit("reference_stages: input %s differs between MLIR and numpy" % arg)
    stages = {}
    chunks = printed.split("data =")[1:]
    number = re.compile(r"-?(?:nan|inf|\d+(?:\.\d*)?(?:e[-+]?\d+)?)")
    for (name, _, _, shape, _), chunk in zip(stage_check.STAGES, chunks):
        # A chunk ends with the next memref's header ("Unranked Memref base@
        # = 0x... rank = ..."): only the values up to it count.
        chunk = chunk.split("Unranked")[0]
        values = np.array([float(v) for v in number.findall(chunk)], np.float32)
        if values.size != int(np.prod(shape)):
            sys.exit("reference_stages: %s printed %d values" % (name, values.size))
        stages[name] = stage_check.bf16(values).reshape(shape)
    return stages


def main():
    build, out = sys.argv[1], sys.argv[2]
    fp32_accumulation = "--fp32-accumulation" in sys.argv[3:]
    os.makedirs(out, exist_ok=True)
    stages = run_reference(build, out, fp32_accumulation)
    values = {name: stage_check.from_bits(model_inputs.bf16_bits(shape, seed, exponent, signed))
              for name, shape, seed, exponent, signed in model_inputs.ARGUMENTS}
    values.update(stages)
    print("columns: max-norm rel err, fraction > 1 ulp, fraction not bit-equal, rel RMS err")
    print("numpy of each stage from the CPU reference's own inputs of that stage")
    ok = True
    for name, op, inputs, shape, linear in stage_check.STAGES:
        args = [values[i] for i in inputs]
        if linear:
            y = stage_check.bf16(nvfp4_numpy.scaled_matmul(
                nvfp4_numpy.quantize(args[0]), nvfp4_numpy.quantize(args[1], tile=True)))
        else:
            y = op(*args)
        e = stage_check.error(y.reshape(-1), stages[name].reshape(-1))
        if linear:
            # The same products and one rounding to BF16: only an FP32
            # summation-order difference could move a bit.
            stage_ok = e[2] <= 1e-3 and e[1] == 0
            verdict = "NVFP4 GEMM " + ("bit-exact" if e[2] == 0 else
                                       "within rounding" if stage_ok else "DIVERGES")
        elif op in (stage_check.bmm_nt, stage_check.bmm_nn) and not fp32_accumulation:
            stage_ok, verdict = True, "BF16 accumulation (info)"
        else:
            stage_ok = e[1] <= 1e-3 and e[0] <= stage_check.TOLERANCE
            verdict = "ok" if stage_ok else "DIVERGES"
        ok &= stage_ok
        print("%-9s %s  %s" % (name, stage_check.show(e), verdict))
    print("%s reference stages: %s" % ("PASS" if ok else "FAIL",
                                       "every stage agrees with numpy" if ok else "a stage diverges"))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
