#!/usr/bin/env bash
# nvfp4.torch.Linear on the GPU (integration_test/torch_linear.py), in one
# device call:
#   here:      bash integration_test/run_torch_suite.sh
#              (builds, compiles the layer kernels through nvfp4.torch's
#              path and writes integration_test/torch_kit/: kernel cache,
#              libnvfp4_runtime.so, inputs and the library's bytes)
#   GPU:       bash integration_test/run_torch_suite.sh --device
#              (carrying integration_test/torch_kit; PyTorch with CUDA)
set -uo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/.." && pwd)
KIT=${TORCH_KIT:-$HERE/torch_kit}
BUILD=${BUILD_DIR:-$ROOT/build}

if [[ ${1:-} != --device ]]; then
  BUILD_DIR=$BUILD bash "$ROOT/scripts/setup.sh" || exit 1
  PYTHONPATH="$BUILD/python_packages" /usr/bin/python3 "$HERE/make_torch_case.py" \
    --build "$BUILD" --out "$KIT"
  exit $?
fi

LOG=${OUT:-$HERE}/torch-suite.log
{
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  export PYTHONPATH="$ROOT/python:$ROOT/runtime/python${PYTHONPATH:+:$PYTHONPATH}"
  export NVFP4_RUNTIME_LIBRARY="$KIT/lib/libnvfp4_runtime.so"
  # The kit's cache is prepared; there is no compiler on the GPU machine.
  export NVFP4_TOOLS_DIR="$KIT/no-compiler-here"
  python3 "$HERE/torch_linear.py" "$KIT"; status=$?
  SAN=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
  # memcheck of the correctness case (about a minute more): TORCH_SUITE_SANITIZE=1.
  if [[ ${TORCH_SUITE_SANITIZE:-0} == 1 ]]; then
    echo "== compute-sanitizer --tool memcheck (correctness case)"
    TORCH_LINEAR_SKIP_TIMING=1 TORCH_LINEAR_SKIP_COMPILE=1 "$SAN" --tool memcheck --error-exitcode 3 \
      python3 "$HERE/torch_linear.py" "$KIT" 2>&1 | grep -E "^(ok|FAIL)|ERROR SUMMARY|torch_linear:" ; s=${PIPESTATUS[0]}
    (( s != 0 )) && status=$s
  fi
  echo "torch suite exit status: $status"
  exit $status
} 2>&1 | tee "$LOG"
