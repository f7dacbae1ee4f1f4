#!/usr/bin/env bash
#===- scripts/sanitize.sh - the whole test suite under ASan + UBSan --------===#
#
# Configures build-asan/ with -DNVFP4_SANITIZE=address,undefined (see
# cmake/Sanitizers.cmake), builds it and runs every lit and unit test in it
# through scripts/test.sh, which ends with "N passed, N failed". Any
# AddressSanitizer, LeakSanitizer or UndefinedBehaviorSanitizer report makes
# the process that hit it fail, and with it its test. Environment:
#   BUILD_DIR   build directory (default: build-asan)
#   SANITIZERS  the -fsanitize= list (default: address,undefined)
#   JOBS        parallel build jobs (default: number of cores)
#   LIT_ARGS    extra lit arguments (e.g. "--filter Dialect")
#   TARGETS     build only these targets and run only the GoogleTest
#               binaries under unittests/ (the always-on subset .ci/run
#               uses: TARGETS="NVFP4NumericsTests NVFP4TargetTests", the
#               numerics library and the Blackwell encodings)
#
# Only nvfp4's own code is instrumented; Debian's libMLIR/libLLVM are not.
# Debian's python3 and mlir-opt, which load our Python module and plugin,
# get the runtime by LD_PRELOAD (test/lit.cfg.py), with leak checking off
# for them alone.
#
#===----------------------------------------------------------------------===#
set -uo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
export BUILD_DIR=${BUILD_DIR:-$ROOT/build-asan}
SANITIZERS=${SANITIZERS:-address,undefined}
JOBS=${JOBS:-$(nproc)}
LLVM_PREFIX=/usr/lib/llvm-22

start=$(date +%s)

# -g1: line numbers in reports without the size of full debug info.
CMAKE_ARGS="-DNVFP4_SANITIZE=$SANITIZERS -DCMAKE_CXX_FLAGS=-g1 -DCMAKE_C_FLAGS=-g1"
if [[ ! -f $BUILD_DIR/build.ninja ]]; then
  echo "sanitize: configuring $BUILD_DIR ($SANITIZERS)"
  cmake -G Ninja -S "$ROOT" -B "$BUILD_DIR" \
    -DCMAKE_BUILD_TYPE=Release \
    -DMLIR_DIR="$LLVM_PREFIX/lib/cmake/mlir" \
    -DLLVM_EXTERNAL_LIT="$LLVM_PREFIX/bin/lit" \
    $CMAKE_ARGS >"$BUILD_DIR.configure.log" 2>&1 \
    || { cat "$BUILD_DIR.configure.log"; echo "0 passed, 1 failed"; exit 1; }
fi
echo "sanitize: building $BUILD_DIR with $JOBS jobs${TARGETS:+ ($TARGETS)}"
ninja -C "$BUILD_DIR" -j "$JOBS" ${TARGETS:-} >"$BUILD_DIR.build.log" 2>&1 \
  || { tail -n 60 "$BUILD_DIR.build.log"; echo "sanitize: build failed (log: $BUILD_DIR.build.log)";
       echo "0 passed, 1 failed"; exit 1; }
built=$(date +%s)
echo "sanitize: build took $((built - start)) s"

# Leak checking stays on for our tools (it is clean: MLIR's and LLVM's
# globals are reachable at exit, not leaked). halt_on_error: the first
# report ends the process with a non-zero status. allow_user_poisoning=0:
# LLVM's BumpPtrAllocator poisons a new slab by hand when the code that
# inlines it is instrumented (ours) and unpoisons only what that code
# allocates; Debian's uninstrumented libMLIR then writes its own objects
# into the same slab (MLIR's storage uniquer), which ASan reports as
# use-after-poison (seen on the generic-form parse of ops.mlir). Half-
# instrumented, manual poisoning cannot be balanced, so it is ignored;
# heap, stack and global checks are unaffected.
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:halt_on_error=1:abort_on_error=0:strict_string_checks=1:detect_stack_use_after_return=1:check_initialization_order=1:allow_user_poisoning=0}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}
export ASAN_SYMBOLIZER_PATH=${ASAN_SYMBOLIZER_PATH:-$LLVM_PREFIX/bin/llvm-symbolizer}
export UBSAN_SYMBOLIZER_PATH=$ASAN_SYMBOLIZER_PATH

if [[ -n ${TARGETS:-} ]]; then
  # Only what was built: the GoogleTest binaries (lit finds those present).
  log=$(mktemp)
  "$LLVM_PREFIX/bin/lit" -sv "$BUILD_DIR/unittests" 2>&1 | tee "$log"
  status=${PIPESTATUS[0]}
  passed=$(sed -nE 's/^ *Passed *: *([0-9]+).*/\1/p' "$log" | head -n 1)
  failed=$(sed -nE 's/^ *(Failed|Unresolved|Timed Out) *: *([0-9]+).*/\2/p' "$log" \
           | awk '{s += $1} END {print s + 0}')
  (( status != 0 && failed == 0 )) && failed=1
  rm -f "$log"
  echo "${passed:-0} passed, $failed failed"
else
  bash "$ROOT/scripts/test.sh"
  status=$?
fi
echo "sanitize: build $((built - start)) s, tests $(( $(date +%s) - built )) s"
exit $status
