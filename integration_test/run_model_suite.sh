#!/usr/bin/env bash
# The whole-model GPU case (issue 18), in one device call:
#   1. here: build, then model/make_model_case.py compiles examples/llama_block.mlir
#      for sm_90a (kernels only), runs its CPU reference (mlir-runner, ~4 min) and
#      writes integration_test/model_case/ (bundle, reference output, nvfp4-run; ~13 MiB);
#      run_stage_check.sh adds the all-BF16 bundle and its CPU reference;
#   2. on the GPU machine (this script with --device): run_model_case.py regenerates
#      the inputs, runs the bundle through nvfp4-run, prints its distance to the
#      numpy block and the CPU references, and times it; then once more under
#      compute-sanitizer memcheck; then run_stage_check.sh --device judges both
#      bundles stage by stage and end to end (model/stage_check.py).
# Exit status 0: memcheck clean, output finite, both stage checks pass.
set -uo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/.." && pwd)
CASE=${MODEL_CASE_DIR:-$HERE/model_case}
BUILD=${BUILD_DIR:-$ROOT/build}

if [[ ${1:-} != --device ]]; then
  BUILD_DIR=$BUILD bash "$ROOT/scripts/setup.sh" || exit 1
  rm -rf "$CASE"
  /usr/bin/python3 "$HERE/model/make_model_case.py" --build "$BUILD" --out "$CASE" || exit 1
  MODEL_CASE_DIR=$CASE BUILD_DIR=$BUILD bash "$HERE/run_stage_check.sh"
  exit $?
fi

LOG=${OUT:-$HERE}/model-suite.log
{
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  echo "== run"
  python3 "$CASE/run_model_case.py" "$CASE"; status=$?
  SAN=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
  echo "== compute-sanitizer --tool memcheck"
  MODEL_SANITIZE=$SAN python3 "$CASE/run_model_case.py" "$CASE" | grep -E "PASS|FAIL|ERROR SUMMARY"
  s=${PIPESTATUS[0]}; (( s != 0 )) && status=$s
  MODEL_CASE_DIR=$CASE bash "$HERE/run_stage_check.sh" --device; s=$?
  (( s != 0 )) && status=$s
  echo "model suite exit status: $status"
  exit $status
} 2>&1 | tee "$LOG"
exit "${PIPESTATUS[0]}"
