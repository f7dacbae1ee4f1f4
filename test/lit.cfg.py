# -*- Python -*-
# lit configuration for the nvfp4 FileCheck tests.

import os
import shutil
import subprocess

import lit.formats
from lit.llvm import llvm_config
from lit.llvm.subst import ToolSubst

config.name = "nvfp4"
config.test_format = lit.formats.ShTest(not llvm_config.use_lit_shell)
config.suffixes = [".mlir", ".py", ".test"]
config.excludes = ["lit.cfg.py", "lit.site.cfg.py", "Inputs"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.nvfp4_obj_root, "test")

config.substitutions.append(("%PATH%", config.environment["PATH"]))
config.substitutions.append(("%nvfp4_src_root", config.nvfp4_src_root))
config.substitutions.append(("%nvfp4_obj_root", config.nvfp4_obj_root))
config.substitutions.append(("%nvfp4_lib_dir", config.nvfp4_lib_dir))
config.substitutions.append(("%mlir_lib_dir", config.mlir_lib_dir))

llvm_config.with_system_environment(["HOME", "INCLUDE", "LIB", "TMP", "TEMP"])
llvm_config.use_default_substitutions()

# Our tools first, then LLVM's (FileCheck, not, mlir-opt, mlir-runner...).
llvm_config.with_environment("PATH", config.nvfp4_tools_dir, append_path=True)
llvm_config.with_environment("PATH", config.llvm_tools_dir, append_path=True)
tool_dirs = [config.nvfp4_tools_dir, config.llvm_tools_dir]
llvm_config.add_tool_substitutions(
    ["nvfp4-opt", "nvfp4-refgen", "mlir-runner", "mlir-translate", "llc"],
    tool_dirs,
)

# In a sanitizer build (cmake/Sanitizers.cmake) our shared objects need the
# sanitizer runtime, which programs we did not build (Debian's python3 and
# mlir-opt) do not link: preload it into those. Leak checking stays on for
# our own tools and is off for those hosts, whose own leaks are not ours.
sanitizer_env = ""
nvfp4_sanitize = getattr(config, "nvfp4_sanitize", "")
if nvfp4_sanitize:
    config.available_features.add("sanitizer")
    preload = getattr(config, "nvfp4_sanitizer_preload", "")
    if preload:
        asan_options = os.environ.get("ASAN_OPTIONS", "")
        asan_options = (asan_options + ":" if asan_options else "") + "detect_leaks=0"
        sanitizer_env = "env LD_PRELOAD={} ASAN_OPTIONS={} ".format(
            preload, asan_options
        )
    # test/Embedding builds a project against our (instrumented) static
    # libraries; CMake takes these for its first configure.
    flags = "-fsanitize={} -fno-omit-frame-pointer".format(nvfp4_sanitize)
    config.environment["CXXFLAGS"] = flags
    config.environment["LDFLAGS"] = flags
llvm_config.add_tool_substitutions(
    [
        ToolSubst(
            "mlir-opt",
            command=sanitizer_env + os.path.join(config.llvm_tools_dir, "mlir-opt"),
        )
    ],
    tool_dirs,
)

# Runs a module lowered by nvfp4-reference-pipeline on the host.
runner_libs = ",".join(
    os.path.join(config.mlir_lib_dir, lib)
    for lib in ["libmlir_c_runner_utils.so", "libmlir_runner_utils.so"]
)
config.substitutions.append(
    (
        "%run-reference",
        "mlir-runner -e main -entry-point-result=void -shared-libs=" + runner_libs,
    )
)

# Python module tests run Debian's interpreter (the one with numpy) on the
# package built into build/python_packages.
if config.nvfp4_python_enabled and os.path.exists(config.python_executable):
    config.available_features.add("python-nvfp4")
    # nvfp4.torch's CPU tests need PyTorch in that interpreter (Debian's
    # python3-torch, which scripts/setup.sh installs).
    try:
        subprocess.run([config.python_executable, "-c", "import torch"],
                       check=True, capture_output=True, timeout=120)
        config.available_features.add("python-torch")
    except (OSError, subprocess.SubprocessError):
        pass
    config.environment["PYTHONPATH"] = os.path.join(
        config.nvfp4_obj_root, "python_packages"
    )
config.substitutions.append(("%PYTHON", sanitizer_env + config.python_executable))

# CUDA's ptxas is optional: tests that assemble PTX say `REQUIRES: ptxas`.
ptxas = shutil.which("ptxas") or (
    "/usr/local/cuda/bin/ptxas"
    if os.path.exists("/usr/local/cuda/bin/ptxas")
    else None
)
if ptxas:
    config.available_features.add("ptxas")
    config.substitutions.append(("%ptxas", ptxas))

# test/Embedding builds examples/embedding against an install of this tree.
if shutil.which("cmake") and shutil.which("ninja"):
    config.available_features.add("cmake-ninja")

# The kernel runtime (runtime/: libnvfp4_runtime.so, nvfp4-run) is built only
# where CUDA's cuda.h is; test/Runtime is unsupported without it. Its
# GPU-free tests load CUDA's stub driver (whose cuInit fails) through
# $NVFP4_CUDA_DRIVER to check the "no CUDA device" path.
if getattr(config, "nvfp4_runtime_enabled", False):
    config.available_features.add("nvfp4-runtime")
stub = getattr(config, "nvfp4_cuda_stub_driver", "")
if stub and os.path.exists(stub):
    config.available_features.add("cuda-stub-driver")
    config.substitutions.append(("%cuda_stub_driver", stub))

# `cuda-device`: `nvidia-smi -L` lists a GPU. `%cuda_chip` is the nvfp4 chip
# of GPU 0 (sm_90a on an H100/H200) and `cuda-nvfp4-chip` says there is one.
# Most tests that need a GPU live in integration_test/ and are gated there.
def _nvidia_smi(*args):
    smi = shutil.which("nvidia-smi")
    if not smi:
        return ""
    try:
        return subprocess.run(
            [smi] + list(args), capture_output=True, text=True, timeout=60
        ).stdout
    except (OSError, subprocess.SubprocessError):
        return ""


if any(line.startswith("GPU ") for line in _nvidia_smi("-L").splitlines()):
    config.available_features.add("cuda-device")
    capability = _nvidia_smi(
        "--query-gpu=compute_cap", "--format=csv,noheader", "-i", "0"
    ).strip()
    chip = {"9.0": "sm_90a", "10.0": "sm_100a", "10.3": "sm_103a",
            "12.0": "sm_120a"}.get(capability)
    if chip:
        config.available_features.add("cuda-nvfp4-chip")
        config.substitutions.append(("%cuda_chip", chip))
