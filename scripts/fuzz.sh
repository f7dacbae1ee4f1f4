#!/usr/bin/env bash
#===- scripts/fuzz.sh - build and run the libFuzzer target ----------------===#
#
# Usage: scripts/fuzz.sh [SECONDS]   (default 300)
#        FUZZ_TARGET=manifest scripts/fuzz.sh [SECONDS]
#
# Builds fuzz/nvfp4-fuzz-opt in build-fuzz/ with clang, libFuzzer, ASan and
# UBSan, and runs it for SECONDS on fuzz/corpus/ (kept between runs, not in
# git), seeded with every .mlir file under test/ and examples/, each
# `// -----` chunk of a split-input file as its own seed. Crashing inputs go
# to fuzz/crashes/; reproduce one with
#   build-fuzz/bin/nvfp4-fuzz-opt fuzz/crashes/crash-<sha>
# and feed it to nvfp4-opt to see the diagnostic. Environment:
#   BUILD_DIR   build directory (default: build-fuzz)
#   JOBS        parallel build jobs (default: number of cores)
#   FUZZ_ARGS   extra libFuzzer flags (e.g. -jobs=2 -workers=2)
#   FUZZ_TARGET opt (default: nvfp4-fuzz-opt, MLIR in) or manifest
#               (nvfp4-fuzz-manifest: the runtime's manifest parser, JSON
#               in; seeds: the manifests of test/Runtime/Inputs, the
#               --report manifests of fuzz/seeds, and deeply nested JSON)
# Exit status: 0 when the run found nothing, non-zero when it crashed.
#
#===----------------------------------------------------------------------===#
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
SECONDS_TO_RUN=${1:-300}
BUILD_DIR=${BUILD_DIR:-$ROOT/build-fuzz}
JOBS=${JOBS:-$(nproc)}
LLVM_PREFIX=/usr/lib/llvm-22

# libFuzzer comes with clang's runtime libraries: Debian's clang-22 (same
# version as our MLIR) first, the clang-14 of the base image otherwise.
CLANG_VERSION=""
for v in 22 14; do
  if command -v clang++-$v >/dev/null &&
     [[ -f $(clang++-$v -print-file-name=libclang_rt.fuzzer-x86_64.a) ||
        -d $(clang++-$v -print-resource-dir)/lib/x86_64-pc-linux-gnu ]]; then
    CLANG_VERSION=$v; break
  fi
done
if [[ -z $CLANG_VERSION ]]; then
  echo "fuzz: installing clang-22 and libclang-rt-22-dev"
  SUDO=""; [[ $(id -u) -ne 0 ]] && SUDO=sudo
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq clang-22 libclang-rt-22-dev >/dev/null
  CLANG_VERSION=22
fi

if [[ ! -f $BUILD_DIR/build.ninja ]]; then
  echo "fuzz: configuring $BUILD_DIR (clang-$CLANG_VERSION)"
  cmake -G Ninja -S "$ROOT" -B "$BUILD_DIR" \
    -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_C_COMPILER=clang-$CLANG_VERSION \
    -DCMAKE_CXX_COMPILER=clang++-$CLANG_VERSION \
    -DCMAKE_CXX_FLAGS=-gline-tables-only \
    -DMLIR_DIR="$LLVM_PREFIX/lib/cmake/mlir" \
    -DLLVM_EXTERNAL_LIT="$LLVM_PREFIX/bin/lit" \
    -DNVFP4_SANITIZE=address,undefined \
    -DNVFP4_BUILD_FUZZERS=ON \
    -DNVFP4_ENABLE_PYTHON=OFF >"$BUILD_DIR.configure.log" 2>&1 \
    || { cat "$BUILD_DIR.configure.log"; exit 1; }
fi
TARGET=nvfp4-fuzz-opt
[[ ${FUZZ_TARGET:-opt} == manifest ]] && TARGET=nvfp4-fuzz-manifest
echo "fuzz: building $TARGET with $JOBS jobs"
ninja -C "$BUILD_DIR" -j "$JOBS" "$TARGET" >"$BUILD_DIR.build.log" 2>&1 \
  || { tail -n 60 "$BUILD_DIR.build.log"; echo "fuzz: build failed"; exit 1; }

export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:allow_user_poisoning=0}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}
export ASAN_SYMBOLIZER_PATH=$LLVM_PREFIX/bin/llvm-symbolizer

if [[ $TARGET == nvfp4-fuzz-manifest ]]; then
  # Manifests: the runtime tests' inputs, what nvfp4-compile --report writes
  # for the MLIR seeds (a Release build's tools, when there is one), and
  # nesting 40,000 deep -- arrays, objects and both, in and out of a field
  # the parser reads (issue 16, C2: the parser's recursion overflowed the
  # stack at about 35,000).
  SEEDS=$BUILD_DIR/seeds-manifest
  rm -rf "$SEEDS" && mkdir -p "$SEEDS" "$ROOT/fuzz/corpus-manifest" "$ROOT/fuzz/crashes"
  cp "$ROOT"/test/Runtime/Inputs/*.json "$SEEDS/"
  COMPILE=${RELEASE_BUILD_DIR:-$ROOT/build}/bin/nvfp4-compile
  if [[ -x $COMPILE ]]; then
    for seed in "$ROOT"/fuzz/seeds/*.mlir; do
      "$COMPILE" "$seed" --chip=sm_90a --no-ptxas-check -o /dev/null \
        --report="$SEEDS/$(basename "$seed" .mlir).json" >/dev/null 2>&1 || true
    done
  fi
  python3 - "$SEEDS" <<'PY'
import sys
out = sys.argv[1]
depth = 40000
seeds = {
    "deep-arrays.json": "[" * depth + "]" * depth,
    "deep-objects.json": '{"a":' * depth + "1" + "}" * depth,
    "deep-mixed.json": '[{"k":' * (depth // 2) + "0" + "}]" * (depth // 2),
    "deep-in-kernels.json": '{"function":"f","chip":"sm_90a","buffers":[],"kernels":' + "[" * depth + "]" * depth + "}",
    "deep-unclosed.json": "[" * depth,
}
for name, text in seeds.items():
    open(f"{out}/{name}", "w").write(text)
PY
  echo "fuzz: $(ls "$SEEDS" | wc -l) manifest seeds, $(ls "$ROOT/fuzz/corpus-manifest" | wc -l) corpus entries; running ${SECONDS_TO_RUN}s"
  "$BUILD_DIR/bin/nvfp4-fuzz-manifest" "$ROOT/fuzz/corpus-manifest" "$SEEDS" \
    -max_total_time="$SECONDS_TO_RUN" -max_len=262144 -timeout=60 \
    -rss_limit_mb=4096 -print_final_stats=1 \
    -artifact_prefix="$ROOT/fuzz/crashes/manifest-" ${FUZZ_ARGS:-}
  exit
fi

# Seeds: each .mlir file, or each `// -----` chunk of a split-input file;
# the `#--- NAME.mlir` parts of split-file lit tests (*.test: most GPU and
# tool tests keep their inputs there); and the hand-written GEMM seeds in
# fuzz/seeds/ (scaled_matmul with K % 256 == 0 and not, for the tensor-core
# and SIMT kernels). Files over 32 KiB (the generated 12B model) only slow
# every execution down.
SEEDS=$BUILD_DIR/seeds
rm -rf "$SEEDS" && mkdir -p "$SEEDS" "$ROOT/fuzz/corpus" "$ROOT/fuzz/crashes"
find "$ROOT/test" "$ROOT/examples" "$ROOT/fuzz/seeds" -name '*.mlir' -size -32k -print0 |
  while IFS= read -r -d '' file; do
    name=$(realpath --relative-to="$ROOT" "$file" | tr '/' '_')
    awk -v out="$SEEDS/$name" '
      /^\/\/ -----/ { n++; next }
      { print > (out "." n) }' "$file"
  done
find "$ROOT/test" -name '*.test' -size -32k -print0 |
  while IFS= read -r -d '' file; do
    grep -q '^#--- .*\.mlir$' "$file" || continue
    name=$(realpath --relative-to="$ROOT" "$file" | tr '/' '_')
    awk -v out="$SEEDS/$name" '
      /^#--- / { keep = ($2 ~ /\.mlir$/); part = $2; next }
      keep { print > (out "." part) }' "$file"
  done
echo "fuzz: $(ls "$SEEDS" | wc -l) seeds, $(ls "$ROOT/fuzz/corpus" | wc -l) corpus entries; running ${SECONDS_TO_RUN}s"

# -close_fd_mask=1: the precision report prints to stdout. -timeout: a
# single input that takes a minute is a hang worth keeping.
# allow_user_poisoning=0: see scripts/sanitize.sh (LLVM's allocator poisons
# slabs by hand in our instrumented code, Debian's libMLIR fills them).
"$BUILD_DIR/bin/nvfp4-fuzz-opt" "$ROOT/fuzz/corpus" "$SEEDS" \
  -dict="$ROOT/fuzz/mlir.dict" \
  -max_total_time="$SECONDS_TO_RUN" -max_len=32768 -timeout=60 \
  -rss_limit_mb=4096 -close_fd_mask=1 -print_final_stats=1 \
  -artifact_prefix="$ROOT/fuzz/crashes/" ${FUZZ_ARGS:-}
