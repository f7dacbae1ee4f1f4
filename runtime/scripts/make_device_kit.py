#!/usr/bin/python3
"""Builds a self-contained folder to check the runtime on a GPU machine.

  PYTHONPATH=build/python_packages /usr/bin/python3 \
      runtime/scripts/make_device_kit.py --build build --runtime-build build-rt \
      --cases integration_test/cases --out build-rt/device-kit

The kit holds nvfp4-run, libnvfp4_runtime.so and nvfp4_runtime.py (nothing
else: they need no LLVM), the integration cases (kernels, manifests, inputs,
expected bytes; integration_test/make_cases.py writes them) plus three of
its own -- a quantize with a given amax (a buffer filled from a scalar
argument), one with a constant amax (a buffer filled with "fill_bits"), a
PTX bundle (JIT-compiled by the driver) and hand-written PTX
kernels for the 48 KiB dynamic shared memory opt-in and a fault -- and
device_check.py. On the GPU machine (device tool, carrying the kit):

  cd build-rt/device-kit && LD_LIBRARY_PATH=$PWD/lib python3 device_check.py
"""
import argparse
import glob
import json
import os
import shutil
import subprocess

import numpy as np

import nvfp4

HERE = os.path.dirname(os.path.abspath(__file__))

AMAX_PROGRAM = """\
func.func @main(%x: tensor<128x256xbf16>, %a: f32) -> !nvfp4.tensor<128x256xf4E2M1FN, scale = f8E4M3FN, block = 1x16> {
  %q = nvfp4.quantize %x amax(%a) : tensor<128x256xbf16> -> !nvfp4.tensor<128x256xf4E2M1FN, scale = f8E4M3FN, block = 1x16>
  return %q : !nvfp4.tensor<128x256xf4E2M1FN, scale = f8E4M3FN, block = 1x16>
}
"""


# A static calibration amax: the buffer is filled with the bits of 3.0
# (fill_bits 0x40400000).
CONSTANT_AMAX_PROGRAM = """\
func.func @main(%x: tensor<128x256xbf16>) -> !nvfp4.tensor<128x256xf4E2M1FN, scale = f8E4M3FN, block = 1x16> {
  %a = arith.constant 3.0 : f32
  %q = nvfp4.quantize %x amax(%a) : tensor<128x256xbf16> -> !nvfp4.tensor<128x256xf4E2M1FN, scale = f8E4M3FN, block = 1x16>
  return %q : !nvfp4.tensor<128x256xf4E2M1FN, scale = f8E4M3FN, block = 1x16>
}
"""


def bf16_bits(x):
    u = x.astype(np.float32).view(np.uint32).astype(np.uint64)
    return ((u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype(np.uint16)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--build", default="build",
                        help="build with nvfp4-compile")
    parser.add_argument("--runtime-build", default="build-rt",
                        help="build with nvfp4-run and libnvfp4_runtime.so")
    parser.add_argument("--cases", default="integration_test/cases")
    parser.add_argument("--out", default="build-rt/device-kit")
    args = parser.parse_args()
    compiler = os.path.join(args.build, "bin", "nvfp4-compile")

    def compile_(source, output, chip="sm_90a", emit="cubin", report=None):
        command = [compiler, source, "--chip=" + chip, "--emit=" + emit,
                   "-o", output]
        if report:
            command.append("--report=" + report)
        subprocess.run(command, check=True, stdout=subprocess.DEVNULL)

    kit = args.out
    shutil.rmtree(kit, ignore_errors=True)
    for sub in ("bin", "lib", "python", "extra"):
        os.makedirs(os.path.join(kit, sub))
    shutil.copy(os.path.join(args.runtime_build, "bin", "nvfp4-run"),
                os.path.join(kit, "bin"))
    library = sorted(glob.glob(os.path.join(args.runtime_build, "lib",
                                            "libnvfp4_runtime.so.*.*.*")))[-1]
    soname = "libnvfp4_runtime.so." + ".".join(
        library.rsplit(".so.", 1)[1].split(".")[:2])
    shutil.copy(library, os.path.join(kit, "lib", soname))
    os.symlink(soname, os.path.join(kit, "lib", "libnvfp4_runtime.so"))
    shutil.copy(os.path.join(HERE, "..", "python", "nvfp4_runtime.py"),
                os.path.join(kit, "python"))
    shutil.copy(os.path.join(HERE, "device_check.py"), kit)
    shutil.copytree(args.cases, os.path.join(kit, "cases"))
    cases = os.path.join(kit, "cases")

    # A quantize with a given amax: its amax buffer is filled from scalar
    # argument 1 (fill_from_argument).
    case = os.path.join(cases, "quantize_given_amax")
    os.makedirs(case)
    with open(os.path.join(case, "program.mlir"), "w") as f:
        f.write(AMAX_PROGRAM)
    compile_(os.path.join(case, "program.mlir"),
             os.path.join(case, "kernels.cubin"),
             report=os.path.join(case, "report.json"))
    x = bf16_bits(np.random.default_rng(5).standard_normal((128, 256)))
    q = nvfp4.quantize(x, amax=6.5)
    np.savez(os.path.join(case, "data.npz"), in_x=x,
             want_codes=q.packed.reshape(-1),
             want_scales=np.asarray(q.scales, np.uint8).reshape(-1),
             want_amax=np.array([q.amax], np.float32).view(np.uint32))
    with open(os.path.join(case, "meta.json"), "w") as f:
        json.dump({"kind": "quantize", "args": ["x", "a"],
                   "scalars": {"a": 6.5},
                   "results": ["codes", "scales", "amax"]}, f)

    # The same with a constant amax: its buffer is filled with fill_bits.
    const_case = os.path.join(cases, "quantize_constant_amax")
    os.makedirs(const_case)
    with open(os.path.join(const_case, "program.mlir"), "w") as f:
        f.write(CONSTANT_AMAX_PROGRAM)
    compile_(os.path.join(const_case, "program.mlir"),
             os.path.join(const_case, "kernels.cubin"),
             report=os.path.join(const_case, "report.json"))
    q = nvfp4.quantize(x, amax=3.0)
    np.savez(os.path.join(const_case, "data.npz"), in_x=x,
             want_codes=q.packed.reshape(-1),
             want_scales=np.asarray(q.scales, np.uint8).reshape(-1),
             want_amax=np.array([q.amax], np.float32).view(np.uint32))
    with open(os.path.join(const_case, "meta.json"), "w") as f:
        json.dump({"kind": "quantize", "args": ["x"],
                   "results": ["codes", "scales", "amax"]}, f)

    # The same quantize_1x16_rn case as PTX.
    ptx_case = os.path.join(cases, "quantize_1x16_rn_ptx")
    shutil.copytree(os.path.join(cases, "quantize_1x16_rn"), ptx_case)
    os.remove(os.path.join(ptx_case, "kernels.cubin"))
    compile_(os.path.join(ptx_case, "program.mlir"),
             os.path.join(ptx_case, "kernels.ptx"), emit="ptx",
             report=os.path.join(ptx_case, "report.json"))

    # Error paths: a bundle for another chip, and hand-written kernels.
    extra = os.path.join(kit, "extra")
    compile_(os.path.join(case, "program.mlir"),
             os.path.join(extra, "sm100.cubin"), chip="sm_100a",
             report=os.path.join(extra, "sm100.json"))
    shutil.copy(os.path.join(HERE, "device_kernels.ptx"), extra)

    def smem_manifest(n, name="big_smem"):
        return {"function": "main", "chip": "sm_90a",
                "buffers": [{"element_type": "i32", "elements": 1,
                             "result": 0, "zero_initialized": True}],
                "kernels": [{"name": name, "grid": [1, 1, 1],
                             "block": [32, 1, 1], "shared_memory_bytes": n,
                             "params": [{"type": "ptr", "buffer": 0},
                                        {"type": "i32", "value": str(n)}]}]}

    manifests = {
        "big_smem.json": smem_manifest(180 * 1024),
        "too_big_smem.json": smem_manifest(300 * 1024),
        "missing_kernel.json": smem_manifest(1024, "no_such_kernel"),
        "fault.json": {"function": "main", "chip": "sm_90a",
                       "buffers": [{"element_type": "i32", "elements": 1,
                                    "result": 0,
                                    "zero_initialized": False}],
                       "kernels": [{"name": "fault", "grid": [1, 1, 1],
                                    "block": [1, 1, 1],
                                    "shared_memory_bytes": 0,
                                    "params": [{"type": "ptr",
                                                "buffer": 0}]}]},
    }
    for name, manifest in manifests.items():
        with open(os.path.join(extra, name), "w") as f:
            json.dump(manifest, f, indent=1)
    print("kit written to", kit)


if __name__ == "__main__":
    main()
