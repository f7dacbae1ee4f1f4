"""Writes the whole-model GPU case: examples/llama_block.mlir on the H200.

Here (the development machine): compiles the block for sm_90a into a kernel
bundle (nvfp4-compile --emit=cubin --report; the manifest must list no host
computation), runs the CPU reference pipeline of the same IR with
mlir-runner on the inputs of model_inputs.py (generated inside the program,
checked against numpy's by their checksums) and writes, into OUT:

  block.cubin, block.json     the bundle
  reference.f32               the CPU reference's output (128 x 4096 FP32)
  nvfp4-run, libnvfp4_runtime.so.*   the runner (driver API only)
  model_inputs.py, run_model_case.py   what the device machine runs

The weights are not written: run_model_case.py regenerates them there.
"""

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
import model_inputs  # noqa: E402

LLVM = "/usr/lib/llvm-22"


def i32(value):
    """`value` (mod 2^32) as a signed 32-bit MLIR literal."""
    value &= 0xFFFFFFFF
    return value - (1 << 32) if value >= 1 << 31 else value


def generator(name, shape, seed, exponent, signed):
    """An MLIR function returning model_inputs.bf16_bits(...) as BF16."""
    rank = len(shape)
    dims = ", ".join(f"d{d}" for d in range(rank))
    tensor = "tensor<%sxbf16>" % "x".join(map(str, shape))
    parallel = ", ".join(['"parallel"'] * rank)
    reduction = ", ".join(['"reduction"'] * rank)
    lines = [f"  func.func @gen_{name}() -> {tensor} {{",
             f"    %e = tensor.empty() : {tensor}",
             f"    %r = linalg.generic {{indexing_maps = [affine_map<({dims}) -> ({dims})>], "
             f"iterator_types = [{parallel}]}} outs(%e : {tensor}) {{",
             "    ^bb0(%out: bf16):"]
    lines.append("      %flat0 = linalg.index 0 : index")
    for d in range(1, rank):
        lines += [f"      %x{d} = linalg.index {d} : index",
                  f"      %n{d} = arith.constant {shape[d]} : index",
                  f"      %m{d} = arith.muli %flat{d - 1}, %n{d} : index",
                  f"      %flat{d} = arith.addi %m{d}, %x{d} : index"]
    c = lambda v: f"arith.constant {i32(v)} : i32"
    lines += [f"      %i = arith.index_cast %flat{rank - 1} : index to i32",
              f"      %kmul = {c(model_inputs.MUL_INDEX)}",
              f"      %kseed = {c(seed * model_inputs.MUL_SEED)}",
              f"      %kmix1 = {c(model_inputs.MIX1)}",
              f"      %kmix2 = {c(model_inputs.MIX2)}",
              "      %s15 = arith.constant 15 : i32",
              "      %s12 = arith.constant 12 : i32",
              "      %s7 = arith.constant 7 : i32",
              "      %s31 = arith.constant 31 : i32",
              "      %one = arith.constant 1 : i32",
              "      %m7f = arith.constant 127 : i32",
              f"      %exp = arith.constant {exponent} : i32",
              "      %h0 = arith.muli %i, %kmul : i32",
              "      %h1 = arith.addi %h0, %kseed : i32",
              "      %t1 = arith.shrui %h1, %s15 : i32",
              "      %h2 = arith.xori %h1, %t1 : i32",
              "      %h3 = arith.muli %h2, %kmix1 : i32",
              "      %t3 = arith.shrui %h3, %s12 : i32",
              "      %h4 = arith.xori %h3, %t3 : i32",
              "      %h5 = arith.muli %h4, %kmix2 : i32",
              "      %t5 = arith.shrui %h5, %s15 : i32",
              "      %h = arith.xori %h5, %t5 : i32",
              "      %eb0 = arith.shrui %h, %s7 : i32",
              "      %eb = arith.andi %eb0, %one : i32",
              "      %e1 = arith.addi %exp, %eb : i32",
              "      %e2 = arith.shli %e1, %s7 : i32",
              "      %mant = arith.andi %h, %m7f : i32",
              "      %b0 = arith.ori %e2, %mant : i32"]
    if signed:
        lines += ["      %sg0 = arith.shrui %h, %s31 : i32",
                  "      %sg = arith.shli %sg0, %s15 : i32",
                  "      %bits = arith.ori %b0, %sg : i32"]
    else:
        lines += ["      %bits = arith.ori %b0, %b0 : i32"]
    lines += ["      %b16 = arith.trunci %bits : i32 to i16",
              "      %v = arith.bitcast %b16 : i16 to bf16",
              "      linalg.yield %v : bf16",
              f"    }} -> {tensor}",
              f"    return %r : {tensor}",
              "  }",
              f"  func.func @sum_{name}(%t: {tensor}) -> i64 {{",
              "    %z = arith.constant 0 : i64",
              "    %e = tensor.empty() : tensor<i64>",
              "    %f = linalg.fill ins(%z : i64) outs(%e : tensor<i64>) -> tensor<i64>",
              f"    %s = linalg.generic {{indexing_maps = [affine_map<({dims}) -> ({dims})>, "
              f"affine_map<({dims}) -> ()>], iterator_types = [{reduction}]}} "
              f"ins(%t : {tensor}) outs(%f : tensor<i64>) {{",
              "    ^bb0(%in: bf16, %acc: i64):",
              "      %b = arith.bitcast %in : bf16 to i16",
              "      %x = arith.extui %b : i16 to i64",
              "      %r = arith.addi %acc, %x : i64",
              "      linalg.yield %r : i64",
              "    } -> tensor<i64>",
              "    %v = tensor.extract %s[] : tensor<i64>",
              "    return %v : i64",
              "  }"]
    return "\n".join(lines), tensor


def reference_program(block_text, arguments=None, out_shape=(128, 4096), f32_args=()):
    """The block's module with generators, checksums and a @main that prints
    the checksums and then the output as FP32. Arguments named in f32_args
    are FP32 tensors of the generated BF16 values (exact)."""
    arguments = arguments or model_inputs.ARGUMENTS
    body = block_text.rstrip()
    assert body.endswith("}")
    body = body[:-1]
    parts = [body, "  func.func private @printMemrefF32(memref<*xf32>)"]
    calls, sums, types = [], [], []
    for index, (name, shape, seed, exponent, signed) in enumerate(arguments):
        text, tensor = generator(name, shape, seed, exponent, signed)
        parts.append(text)
        calls.append(f"    %a{index} = func.call @gen_{name}() : () -> {tensor}")
        sums += [f"    %s{index} = func.call @sum_{name}(%a{index}) : ({tensor}) -> i64",
                 f"    vector.print %s{index} : i64"]
        if name in f32_args:
            wide = tensor.replace("bf16", "f32")
            calls.append(f"    %w{index} = arith.extf %a{index} : {tensor} to {wide}")
            types.append((f"%w{index}", wide))
        else:
            types.append((f"%a{index}", tensor))
    args = ", ".join(value for value, _ in types)
    out = "x".join(map(str, out_shape))
    main = ["  func.func @main() {"] + calls + sums + [
        f"    %o = func.call @decoder_block({args}) : ({', '.join(t for _, t in types)}) -> tensor<{out}xbf16>",
        f"    %of = arith.extf %o : tensor<{out}xbf16> to tensor<{out}xf32>",
        f"    %m = bufferization.to_buffer %of : tensor<{out}xf32> to memref<{out}xf32>",
        f"    %u = memref.cast %m : memref<{out}xf32> to memref<*xf32>",
        "    func.call @printMemrefF32(%u) : (memref<*xf32>) -> ()",
        "    return",
        "  }",
        "}"]
    return "\n".join(parts + main) + "\n"


def fp32_accumulation(block_text, ops=("batch_matmul",), expected=2, acc="f32"):
    """The block with its BF16 GEMMs accumulating in FP32 (or `acc`), rounded
    once -- what the GPU's wgmma GEMM computes. linalg.batch_matmul with a BF16 C
    accumulates in BF16 (every partial sum rounded), which the CPU reference
    does literally; the case reports the error against both."""
    out = []
    pattern = re.compile(r"^(\s*)(%%\w+) = (linalg\.(?:%s) .*) outs\((%%\w+) : " % "|".join(ops) +
                         r"tensor<([0-9x]+)xbf16>\) -> tensor<[0-9x]+xbf16>$")
    count = 0
    for line in block_text.splitlines():
        m = pattern.match(line)
        if not m:
            out.append(line)
            continue
        indent, result, head, init, shape = m.groups()
        count += 1
        f32 = "tensor<%sx%s>" % (shape, acc)
        out += ["%s%s_empty_f32 = tensor.empty() : %s" % (indent, result, f32),
                "%s%s_zero_f32 = arith.constant 0.0 : %s" % (indent, result, acc),
                "%s%s_init_f32 = linalg.fill ins(%s_zero_f32 : %s) outs(%s_empty_f32 : %s) -> %s"
                % (indent, result, result, acc, result, f32, f32),
                "%s%s_f32 = %s outs(%s_init_f32 : %s) -> %s" % (indent, result, head, result, f32, f32),
                "%s%s = arith.truncf %s_f32 : %s to tensor<%sxbf16>" % (indent, result, result, f32, shape)]
    assert count == expected, "expected %d BF16 contractions, found %d" % (expected, count)
    return "\n".join(out) + "\n"


def run_reference(build, out, name, block_text, precision="--nvfp4-assign-precision",
                  arguments=None, out_shape=(128, 4096), f32_args=()):
    """The CPU reference pipeline's output of @decoder_block (FP32 values),
    after checking that the program's inputs equal model_inputs.py's (or
    `arguments`, the same tuples)."""
    arguments = arguments or model_inputs.ARGUMENTS
    program = reference_program(block_text, arguments, out_shape, f32_args)
    path = os.path.join(out, name + ".mlir")
    with open(path, "w") as f:
        f.write(program)
    start = time.time()
    lowered = subprocess.run(
        [os.path.join(build, "bin", "nvfp4-opt"), path,
         precision, "--nvfp4-apply-recipe", "--nvfp4-fuse-quantization",
         "--nvfp4-reference-pipeline"], check=True, capture_output=True, text=True).stdout
    run = subprocess.run(
        [LLVM + "/bin/mlir-runner", "-e", "main", "-entry-point-result=void", "-O2",
         "-shared-libs=%s/lib/libmlir_c_runner_utils.so,%s/lib/libmlir_runner_utils.so"
         % (LLVM, LLVM)], input=lowered, check=True, capture_output=True, text=True).stdout
    print("make_model_case: CPU reference %s in %.0f s" % (name, time.time() - start))
    lines = run.splitlines()
    for index, (arg, shape, seed, exponent, signed) in enumerate(arguments):
        expected = model_inputs.bits_sum(model_inputs.bf16_bits(shape, seed, exponent, signed))
        if int(lines[index]) != expected:
            sys.exit("make_model_case: input %s differs between MLIR and numpy "
                     "(checksums %s, %d)" % (arg, lines[index], expected))
    data = run[run.index("data =") + len("data ="):]
    values = np.array([float(v) for v in re.findall(
        r"-?(?:nan|inf|\d+(?:\.\d*)?(?:e[-+]?\d+)?)", data)], np.float32)
    if values.size != int(np.prod(out_shape)):
        sys.exit("make_model_case: the reference printed %d values" % values.size)
    values.tofile(os.path.join(out, name + ".f32"))
    print("make_model_case: %s max |y| = %.4g" % (name, np.abs(values).max()))
    return values


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--build", default=os.path.join(ROOT, "build"))
    parser.add_argument("--out", default=os.path.join(ROOT, "integration_test", "model_case"))
    parser.add_argument("--model", default=os.path.join(ROOT, "examples", "llama_block.mlir"))
    parser.add_argument("--reuse-reference", action="store_true",
                        help="keep OUT's reference outputs (only recompile the bundle)")
    args = parser.parse_args()
    out = args.out
    os.makedirs(out, exist_ok=True)
    build = args.build

    # 1. The bundle: kernels only.
    compile_cmd = [os.path.join(build, "bin", "nvfp4-compile"), args.model,
                   "--chip=sm_90a", "--emit=cubin", "-o", os.path.join(out, "block.cubin"),
                   "--report=" + os.path.join(out, "block.json")]
    subprocess.run(compile_cmd, check=True)
    manifest = json.load(open(os.path.join(out, "block.json")))
    if manifest.get("host_computation"):
        sys.exit("make_model_case: the bundle leaves host computation: %s"
                 % manifest["host_computation"])
    spills = [k["name"] for k in manifest["kernels"] if k.get("spill_bytes")]
    if spills:
        sys.exit("make_model_case: kernels spill: %s" % spills)
    print("make_model_case: %d launches, %d kernels, no host computation, no spills"
          % (len(manifest["kernels"]), len({k["name"] for k in manifest["kernels"]})))

    # 2. The CPU reference of the same IR, and of the IR with the BF16 GEMMs
    # accumulating in FP32 (both at once: about 4 minutes each).
    block_text = open(args.model).read()
    if not (args.reuse_reference and os.path.exists(os.path.join(out, "reference.f32"))):
        import concurrent.futures
        with concurrent.futures.ThreadPoolExecutor(2) as pool:
            jobs = [pool.submit(run_reference, build, out, "reference", block_text),
                    pool.submit(run_reference, build, out, "reference_fp32acc",
                                fp32_accumulation(block_text))]
            for job in jobs:
                job.result()

    # 3. The runner and the device script.
    copy_runner(build, out, "run_model_case.py")


def copy_runner(build, out, runner):
    """nvfp4-run, libnvfp4_runtime.so and the device scripts (`runner` and
    the modules it imports) into the case directory `out`."""
    shutil.copy(os.path.join(build, "bin", "nvfp4-run"), out)
    for name in os.listdir(os.path.join(build, "lib")):
        if name.startswith("libnvfp4_runtime.so"):
            shutil.copy(os.path.join(build, "lib", name), out, follow_symlinks=True)
    for name in ("model_inputs.py", runner, "stage_check.py", "nvfp4_numpy.py",
                 "hybrid_formulation.py", "hybrid_noise.py"):
        shutil.copy(os.path.join(HERE, name), out)


if __name__ == "__main__":
    main()
