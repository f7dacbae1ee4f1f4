#!/usr/bin/env bash
# Compile time of one 256x512x1024 block-scaled GEMM to PTX, per chip, on
# the development machine (issue 4's target: <= 0.3 s). Prints the median
# wall time of 5 runs of the whole tool (process start, parsing, lowering,
# LLVM's NVPTX backend; ptxas excluded), the median CPU (user + system)
# time -- the figure that other jobs on the machine disturb least -- and
# the times of an empty program, the tool's fixed start-up cost. Where the
# time goes: nvfp4-compile ... --mlir-timing.
#   bash bench/compile_time.sh [build-dir]
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BIN=${1:-$ROOT/build}/bin/nvfp4-compile
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
A='!nvfp4.tensor<256x1024xf4E2M1FN, scale = f8E4M3FN, block = 1x16>'
B='!nvfp4.tensor<512x1024xf4E2M1FN, scale = f8E4M3FN, block = 16x16>'
cat > "$TMP/gemm.mlir" <<MLIR
func.func @gemm(%a: $A, %b: $B) -> tensor<256x512xbf16> {
  %c = nvfp4.scaled_matmul %a, %b : $A, $B -> tensor<256x512xbf16>
  return %c : tensor<256x512xbf16>
}
MLIR
echo 'func.func @empty() { return }' > "$TMP/empty.mlir"
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
measure() {  # file chip format
  for _ in 1 2 3 4 5; do
    /usr/bin/time -f "$3" "$BIN" "$1" --chip="$2" --emit=ptx --no-ptxas-check \
      -o /dev/null 2>&1 >/dev/null | tail -n 1 | awk '{print $1 + $2}'
  done | median
}
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg) on $(nproc) cores"
for chip in sm_90a sm_100a sm_103a sm_120a; do
  echo "$chip: gemm $(measure "$TMP/gemm.mlir" $chip '%e 0') s wall," \
    "$(measure "$TMP/gemm.mlir" $chip '%U %S') s CPU; empty program" \
    "$(measure "$TMP/empty.mlir" $chip '%e 0') s wall," \
    "$(measure "$TMP/empty.mlir" $chip '%U %S') s CPU"
done
