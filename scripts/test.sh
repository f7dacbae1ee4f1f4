#!/usr/bin/env bash
#===- scripts/test.sh - build and run every test ---------------------------===#
#
# Runs scripts/setup.sh, then lit over test/ (FileCheck, Python and tool
# tests) and unittests/ (every GoogleTest case) in one invocation, and ends
# with a single line "N passed, N failed". Exit status is non-zero on any
# failure. Tests that need CUDA's ptxas are reported as unsupported when it
# is missing; GPU tests live in integration_test/ and are not run here.
#
#===----------------------------------------------------------------------===#
set -uo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD_DIR=${BUILD_DIR:-$ROOT/build}
LIT=/usr/lib/llvm-22/bin/lit

bash "$ROOT/scripts/setup.sh" || { echo "0 passed, 1 failed"; exit 1; }

log=$(mktemp)
"$LIT" -sv ${LIT_ARGS:-} "$BUILD_DIR/test" "$BUILD_DIR/unittests" 2>&1 | tee "$log"
lit_status=${PIPESTATUS[0]}

# lit's summary lines look like "  Passed           : 123 (98.40%)".
count() { sed -nE "s/^ *$1 *: *([0-9]+).*/\1/p" "$log" | head -n 1; }
passed=$(( $(count Passed || true) + 0 ))
failed=0
for kind in Failed Unresolved "Timed Out" "Unexpectedly Passed"; do
  n=$(count "$kind")
  failed=$(( failed + ${n:-0} ))
done
rm -f "$log"
if (( lit_status != 0 && failed == 0 )); then
  failed=1  # lit itself failed (bad config, no tests found...)
fi
echo "$passed passed, $failed failed"
(( failed == 0 ))
