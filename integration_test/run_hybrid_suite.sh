#!/usr/bin/env bash
# The hybrid's first blocks on the GPU (issue 18), in one device call:
#   1. here: build, then model/make_hybrid_case.py compiles
#      examples/hybrid_tiny_blocks.mlir (Mamba-2, FFN, attention, FFN at d = 256)
#      for sm_90a twice (default policy: NVFP4 GEMMs; all-BF16), kernels only, runs
#      the CPU references of the same IR (mlir-runner, ~1 min) and writes
#      integration_test/hybrid_case/ (~5 MiB: bundles, references, nvfp4-run);
#   2. on the GPU machine (this script with --device): model/run_hybrid_case.py
#      regenerates the inputs, runs both bundles through nvfp4-run, checks the
#      all-BF16 output against its CPU reference (8e-3 max-norm, or what the
#      IR's other correct implementations reach: PyTorch on the same GPU, numpy,
#      the CPU pipeline with FP64 sums; docs/Runtime.md "Whole models"), the mixer's
#      kernels stage by stage (slices, pad, causal conv, selective scan) in both
#      bundles from the GPU's own inputs, and times them; then both bundles under
#      compute-sanitizer memcheck.
# Exit status 0: every check passes and memcheck is clean.
set -uo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/.." && pwd)
CASE=${HYBRID_CASE_DIR:-$HERE/hybrid_case}
BUILD=${BUILD_DIR:-$ROOT/build}

if [[ ${1:-} != --device ]]; then
  BUILD_DIR=$BUILD bash "$ROOT/scripts/setup.sh" || exit 1
  rm -rf "$CASE"
  /usr/bin/python3 "$HERE/model/make_hybrid_case.py" --build "$BUILD" --out "$CASE"
  exit $?
fi

LOG=${OUT:-$HERE}/hybrid-suite.log
{
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  echo "== run"
  python3 "$CASE/run_hybrid_case.py" "$CASE"; status=$?
  SAN=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
  echo "== compute-sanitizer --tool memcheck"
  MODEL_SANITIZE=$SAN python3 "$CASE/run_hybrid_case.py" "$CASE" | grep -E "PASS|FAIL|ERROR SUMMARY"
  s=${PIPESTATUS[0]}; (( s != 0 )) && status=$s
  echo "hybrid suite exit status: $status"
  exit $status
} 2>&1 | tee "$LOG"
exit "${PIPESTATUS[0]}"
