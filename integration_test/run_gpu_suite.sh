#!/usr/bin/env bash
# The GPU integration suite, in one device call (see integration_test/README.md):
#   1. on the development machine: build, then make_cases.py writes the cases
#      (programs, sm_90a cubins + manifests from nvfp4-compile, inputs and the
#      numerics library's expected bytes) into integration_test/cases/;
#   2. on the GPU machine (this script with --device): run_cases.py executes
#      them, then again under compute-sanitizer memcheck and racecheck.
set -uo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/.." && pwd)
CASES=${CASES_DIR:-$HERE/cases}
# BUILD_DIR: the build whose nvfp4-compile and Python module make the cases
# (default build/, which setup.sh configures and builds).
BUILD=${BUILD_DIR:-$ROOT/build}

if [[ ${1:-} != --device ]]; then
  BUILD_DIR=$BUILD bash "$ROOT/scripts/setup.sh" || exit 1
  rm -rf "$CASES"
  PYTHONPATH="$BUILD/python_packages" /usr/bin/python3 "$HERE/make_cases.py" \
    --build "$BUILD" --chip sm_90a --out "$CASES"
  exit $?
fi

LOG=${OUT:-$HERE}/gpu-suite.log
{
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  echo "== run"
  python3 "$HERE/run_cases.py" "$CASES"; status=$?
  SAN=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
  for tool in memcheck racecheck; do
    echo "== compute-sanitizer --tool $tool"
    "$SAN" --tool "$tool" --error-exitcode 3 python3 "$HERE/run_cases.py" "$CASES" \
      | grep -E "passed|ERROR SUMMARY|RACECHECK SUMMARY|FAIL" ; s=${PIPESTATUS[0]}
    (( s != 0 )) && status=$s
  done
  echo "suite exit status: $status"
  exit $status
} 2>&1 | tee "$LOG"
