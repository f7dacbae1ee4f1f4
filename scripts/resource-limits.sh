#!/usr/bin/env bash
#===- scripts/resource-limits.sh - time and memory on huge inputs ----------===#
#
# Measures wall time, CPU time and peak RSS (GNU time's %M) of the paths
# issue 7 ("Resource limits") bounds, and prints one line per run:
#
#   1. nvfp4-assign-precision on generated models of 100, 1,000 and 10,000
#      blocks (scripts/gen-model.py hybrid, pattern "M-*-" repeated), with
#      nvfp4.layer annotations and without (blocks inferred from residual
#      connections); the parse + print cost alone for comparison.
#   2. nvfp4-compile --emit=mlir --report=R.json on the same models.
#   3. The precision report writers (table, JSON, SVG) on the annotated
#      model after assign-precision.
#   4. -canonicalize on nvfp4.amax / nvfp4.hadamard / nvfp4.quantize of huge
#      constants: 1 GiB splats (2^29 bf16 elements), hex dense constants and
#      dense_resource blobs; and the largest constant that still folds
#      (2^20 elements, not a splat).
#
# Nothing is checked here (timing is not a test); test/Transforms/
# assign-precision-scale.test and friends check the behaviour at scale.
# The numbers recorded in docs/Testing.md ("Resource limits") come from
# this script.
#
#   bash scripts/resource-limits.sh                   # everything, build/
#   BUILD_DIR=build-h5 BLOCKS="100 1000" bash scripts/resource-limits.sh
#   SECTIONS="fold" HEX_LOG2="20 24 26" bash scripts/resource-limits.sh
#
# Environment: BUILD_DIR (default build), BLOCKS (default "100 1000 10000"),
# SECTIONS (any of "assign compile report fold"; default all), HEX_LOG2
# (log2 of the element counts of the hex constants; default "22 24"),
# CHIP (default sm_90a), WORK (scratch directory; default a fresh mktemp
# directory, removed at exit unless KEEP=1), LIMIT (seconds per run before
# it is killed; default 1800).
#
#===----------------------------------------------------------------------===#
set -uo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD_DIR=${BUILD_DIR:-$ROOT/build}
case $BUILD_DIR in /*) ;; *) BUILD_DIR=$ROOT/$BUILD_DIR ;; esac
BLOCKS=${BLOCKS:-100 1000 10000}
SECTIONS=${SECTIONS:-assign compile report fold}
HEX_LOG2=${HEX_LOG2:-22 24}
CHIP=${CHIP:-sm_90a}
LIMIT=${LIMIT:-1800}
PYTHON=/usr/bin/python3
OPT=$BUILD_DIR/bin/nvfp4-opt
COMPILE=$BUILD_DIR/bin/nvfp4-compile
TIME=/usr/bin/time

for tool in "$OPT" "$COMPILE" "$TIME" "$PYTHON"; do
  [[ -x $tool ]] || { echo "resource-limits.sh: $tool not found" >&2; exit 1; }
done

if [[ -n ${WORK:-} ]]; then
  mkdir -p "$WORK"
else
  WORK=$(mktemp -d)
  [[ ${KEEP:-0} == 1 ]] || trap 'rm -rf "$WORK"' EXIT
fi

section() { [[ " $SECTIONS " == *" $1 "* ]]; }

# run LABEL COMMAND...: one line "LABEL  wall s  user s  peak MiB  status".
run() {
  local label=$1
  shift
  local stats=$WORK/time.txt
  timeout "$LIMIT" "$TIME" -o "$stats" -f "%e %U %M" "$@" >/dev/null 2>"$WORK/stderr.txt"
  local status=$?
  local wall user rss
  read -r wall user rss < <(tail -n 1 "$stats" 2>/dev/null || echo "- - 0")
  if [[ $status == 124 ]]; then
    wall=">$LIMIT"
  fi
  printf '%-66s %8s s %8s s %7s MiB  exit %s\n' "$label" "$wall" "$user" \
    "$(( ${rss:-0} / 1024 ))" "$status"
}

echo "# nvfp4 resource limits: $(date -u +%Y-%m-%dT%H:%MZ), $(nproc) cores, build $BUILD_DIR"
printf '%-66s %10s %10s %11s\n' "what" "wall" "user" "peak RSS"

model() {  # model BLOCKS [--no-layers] -> path
  local blocks=$1 suffix=${2:+-nolayers}
  local path=$WORK/hybrid-$blocks$suffix.mlir
  if [[ ! -f $path ]]; then
    local pattern
    pattern=$("$PYTHON" -c "print(('M-*-' * ($blocks // 4 + 1))[:$blocks])")
    "$PYTHON" "$ROOT/scripts/gen-model.py" hybrid --pattern "$pattern" ${2:-} >"$path"
  fi
  echo "$path"
}

if section assign || section compile || section report; then
  for blocks in $BLOCKS; do
    for layers in "" --no-layers; do
      m=$(model "$blocks" $layers)
      name="$blocks blocks${layers:+, no nvfp4.layer}"
      if section assign; then
        run "parse + print only ($name)" "$OPT" "$m" -o "$WORK/out.mlir"
        run "nvfp4-assign-precision ($name)" \
          "$OPT" "$m" --nvfp4-assign-precision -o "$WORK/out.mlir"
      fi
      if section compile; then
        run "nvfp4-compile --emit=mlir --report ($name)" \
          "$COMPILE" "$m" --chip="$CHIP" --emit=mlir --report="$WORK/r.json" \
          -o "$WORK/out.mlir"
      fi
    done
    if section report; then
      m=$(model "$blocks")
      assigned=$WORK/assigned-$blocks.mlir
      "$OPT" "$m" --nvfp4-assign-precision -o "$assigned" 2>/dev/null
      run "parse only, assigned model ($blocks blocks)" \
        "$OPT" "$assigned" -o /dev/null
      run "report: table ($blocks blocks)" \
        "$OPT" "$assigned" --nvfp4-print-precision-report -o /dev/null
      run "report: JSON ($blocks blocks)" \
        "$OPT" "$assigned" --nvfp4-print-precision-report=json=true -o /dev/null
      run "report: table + SVG ($blocks blocks)" "$OPT" "$assigned" \
        "--nvfp4-print-precision-report=svg-file=$WORK/chart.svg" -o /dev/null
      "$OPT" "$assigned" --nvfp4-print-precision-report=json=true -o /dev/null \
        >"$WORK/report.json" 2>/dev/null
      printf '%-66s JSON %s KiB, SVG %s KiB, %s SVG bars\n' \
        "  report sizes ($blocks blocks)" \
        "$(( $(stat -c %s "$WORK/report.json") / 1024 ))" \
        "$(( $(stat -c %s "$WORK/chart.svg") / 1024 ))" \
        "$(grep -c '<g>' "$WORK/chart.svg")"
    fi
  done
fi

if section fold; then
  # constant.py KIND LOG2 OUT: a module whose constant of 2^LOG2 bf16
  # elements (rows x 16384, or 1 x 2^LOG2 when smaller) feeds nvfp4.amax,
  # nvfp4.hadamard and nvfp4.quantize. KIND: splat, hex or resource.
  cat >"$WORK/constant.py" <<'EOF'
import sys

kind, log2, out = sys.argv[1], int(sys.argv[2]), sys.argv[3]
n = 1 << log2
cols = min(n, 16384)
rows = n // cols
ty = "tensor<%dx%dxbf16>" % (rows, cols)
q = "!nvfp4.tensor<%dx%dxf4E2M1FN, scale = f8E4M3FN, block = 1x16>" % (rows, cols)
# 4096 distinct finite bf16 values (no NaN/Inf), repeated.
pattern = bytearray()
for i in range(4096):
    bits = (0x3C00 + (i * 37) % 0x0700) | (0x8000 if i % 3 == 0 else 0)
    pattern += bits.to_bytes(2, "little")
pattern_hex = pattern.hex()
with open(out, "w") as f:
    f.write("func.func @big() -> (f32, %s, %s) {\n" % (ty, q))
    if kind == "splat":
        f.write("  %%x = arith.constant dense<1.5> : %s\n" % ty)
    elif kind == "hex":
        f.write('  %x = arith.constant dense<"0x')
        for _ in range(n // 4096):
            f.write(pattern_hex)
        f.write('"> : %s\n' % ty)
    else:
        f.write("  %%x = arith.constant dense_resource<big> : %s\n" % ty)
    f.write("  %%a = nvfp4.amax %%x : %s\n" % ty)
    f.write("  %%h = nvfp4.hadamard %%x : %s\n" % ty)
    f.write("  %%q = nvfp4.quantize %%x amax(%%a) : %s -> %s\n" % (ty, q))
    f.write("  return %%a, %%h, %%q : f32, %s, %s\n}\n" % (ty, q))
    if kind == "resource":
        # Blob: 4-byte alignment header, then the data.
        f.write('{-#\n  dialect_resources: {\n    builtin: {\n      big: "0x02000000')
        for _ in range(n // 4096):
            f.write(pattern_hex)
        f.write('"\n    }\n  }\n#-}\n')
EOF
  fold() {  # fold KIND LOG2 LABEL
    local m=$WORK/const-$1-$2.mlir
    "$PYTHON" "$WORK/constant.py" "$1" "$2" "$m"
    run "$3 ($(( $(stat -c %s "$m") / 1048576 )) MiB of text): parse" \
      "$OPT" "$m" -o /dev/null --mlir-elide-elementsattrs-if-larger=16 \
      --mlir-elide-resource-strings-if-larger=16
    run "$3: -canonicalize" \
      "$OPT" "$m" -canonicalize -o "$WORK/folded.mlir" \
      --mlir-elide-elementsattrs-if-larger=16 \
      --mlir-elide-resource-strings-if-larger=16
    local folded="(no output)"
    if [[ -s $WORK/folded.mlir ]]; then
      folded=$(for op in amax hadamard quantize; do
                 grep -q "nvfp4.$op" "$WORK/folded.mlir" || echo -n "$op "; done)
    fi
    printf '%-66s %s\n' "  folded at compile time" "${folded:-none}"
    rm -f "$WORK/folded.mlir"
    rm -f "$m"
  }
  fold splat 29 "splat, 2^29 bf16 (1 GiB)"
  fold hex 20 "hex dense, 2^20 bf16 (largest that folds)"
  for log2 in $HEX_LOG2; do
    fold hex "$log2" "hex dense, 2^$log2 bf16"
    fold resource "$log2" "dense_resource, 2^$log2 bf16"
  done
fi
