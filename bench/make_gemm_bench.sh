#!/usr/bin/env bash
# Compiles the GEMM benchmark (sm_90a, for the lent H200) into
# bench/build-gemm/: for every shape of issue 13 the fused scaled_matmul
# under the lowering's schedule choice and under forced schedules (the
# kernel name in each manifest says which ran), and a program of our own
# dequantize kernels for both operands (the "route": dequantize + a BF16
# GEMM); on the large shapes also the route's GEMM with the TMA-store
# epilogue (GEMM_TS_SCHEDULES). Then run
#   python3 bench/run_gemm_bench.py bench/build-gemm      (on the GPU machine)
# Environment: BUILD_DIR (default build/), GEMM_BENCH_OUT (default
# bench/build-gemm), GEMM_SHAPES ("MxNxK:blockB ..." to override).
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
OUT=${GEMM_BENCH_OUT:-$ROOT/bench/build-gemm}
BUILD=${BUILD_DIR:-$ROOT/build}
[[ -n ${BUILD_DIR:-} ]] || bash "$ROOT/scripts/setup.sh"
mkdir -p "$OUT"
# blockB: 16x16 for a weight (fprop X.W^T; dgrad dY.W uses the transposed
# 16x16 copy), 1x16 for wgrad's RHT'd dY^T.X operands (both 1x16).
SHAPES=${GEMM_SHAPES:-"8192x8192x8192:16x16 16384x4096x4096:16x16 16384x14336x4096:16x16 16384x4096x14336:16x16 14336x4096x16384:1x16 1x4096x4096:16x16 16x4096x4096:16x16 32x4096x4096:16x16 128x4096x4096:16x16"}
# Forced schedules measured beside the default (name suffix: schedule).
EXTRA_8192=${GEMM_EXTRA_SCHEDULES:-"128x256x256_s2_d2w1_p8 128x256x256_s0_d3w0_p16 128x256x256_s0_d4w0_p8 128x128x256_s0_d6w0_p16"}
# Forced schedules of the decode-like shapes (M <= 128, bench/run_decode_bench.py
# and bench/compare_skinny_variants.py): split-K on 128 x 128 tiles (2 to 16
# splits, 4 or 2 stages: the rule's choice at M = 128 and its neighbours),
# the route on 128 x 128 tiles, the skinny kernels of the rule, and the same
# with the byte decode (_e), the prefetch (_pf), the staged A scaled by B's
# block scales (_s) and 16-warp CTAs one per SM; a schedule a shape cannot
# take is skipped.
DECODE=${GEMM_DECODE_SCHEDULES:-"128x128x256_s4_k2 128x128x256_s4_k4 128x128x256_s4_k8 128x128x256_s4_k16 \
128x128x256_s2_k8 128x128x256_s2_k16 128x128x256_s0_d6w0_p16 skinny8x16_w8_a skinny16x16_w8 skinny16x32_w8 skinny32x16_w8 skinny16x32_w16 skinny8x32_w16_a \
skinny8x16_w8_a_e skinny8x16_w8_a_s_e skinny8x16_w8_pf_a_s_e skinny8x16_w8_u2_pf_a_s_e skinny8x16_w8_u1_pf_a_s_e \
skinny8x16_w16_pf_a_s_e skinny8x32_w16_pf_a_s_e skinny8x32_w16_u1_pf_a_s_e \
skinny16x16_w8_e skinny16x16_w8_pf_e skinny16x16_w8_u2_pf_e \
skinny16x32_w16_e skinny16x32_w16_pf_e skinny16x32_w16_u1_pf_e skinny16x32_w8_e skinny16x32_w8_pf_e \
skinny32x16_w8_e skinny32x16_w8_pf_e skinny32x16_w8_u2_pf_e \
skinny8x16_w16_a skinny8x16_w16_u1_pf_a_s_e 128x128x256_s2_d2w1_p16"}
# The TMA-store epilogue (_ts) beside the route on the large shapes (M >
# 128): with the route's 4 decoded stages and with 3.
TS=${GEMM_TS_SCHEDULES:-"128x256x256_s0_d4w0_p16_ts 128x256x256_s0_d3w0_p16_ts"}
t() { echo "!nvfp4.tensor<$1x$2xf4E2M1FN, scale = f8E4M3FN, block = $3>"; }
compile() { # name, extra flags...
  local name=$1; shift
  "$BUILD/bin/nvfp4-compile" "$OUT/$name.mlir" --chip=sm_90a --emit=cubin \
    --no-recipe "$@" -o "$OUT/$name.cubin" --report="$OUT/$name.json" >/dev/null
}
for shape in $SHAPES; do
  dims=${shape%%:*}; block=${shape##*:}
  IFS=x read -r M N K <<<"$dims"
  A=$(t "$M" "$K" 1x16); B=$(t "$N" "$K" "$block")
  cat > "$OUT/gemm_$dims.mlir" <<MLIR
func.func @gemm(%a: $A, %b: $B) -> tensor<${M}x${N}xbf16> {
  %c = nvfp4.scaled_matmul %a, %b : $A, $B -> tensor<${M}x${N}xbf16>
  return %c : tensor<${M}x${N}xbf16>
}
MLIR
  compile "gemm_$dims"
  cp "$OUT/gemm_$dims.mlir" "$OUT/gemm_${dims}_v1.mlir"
  compile "gemm_${dims}_v1" --gemm-schedule=128x128x256_s4
  cp "$OUT/gemm_$dims.mlir" "$OUT/gemm_${dims}_v2.mlir"
  compile "gemm_${dims}_v2" --gemm-schedule=128x256x256_s2_d2w1_p16
  cp "$OUT/gemm_$dims.mlir" "$OUT/gemm_${dims}_route.mlir"
  compile "gemm_${dims}_route" --gemm-schedule=128x256x256_s0_d4w0_p16
  cp "$OUT/gemm_$dims.mlir" "$OUT/gemm_${dims}_route_c2.mlir"
  compile "gemm_${dims}_route_c2" --gemm-schedule=128x256x256_s0_d4w0_p16_c2
  if (( M > 128 )); then
    for s in $TS; do
      cp "$OUT/gemm_$dims.mlir" "$OUT/gemm_${dims}_$s.mlir"
      compile "gemm_${dims}_$s" --gemm-schedule="$s"
    done
  fi
  if (( M <= 128 )); then
    for s in $DECODE; do
      cp "$OUT/gemm_$dims.mlir" "$OUT/gemm_${dims}_$s.mlir"
      compile "gemm_${dims}_$s" --gemm-schedule="$s" 2>/dev/null ||
        rm -f "$OUT/gemm_${dims}_$s".*
    done
  fi
  if [[ $dims == 8192x8192x8192 ]]; then
    for s in $EXTRA_8192; do
      cp "$OUT/gemm_$dims.mlir" "$OUT/gemm_${dims}_$s.mlir"
      compile "gemm_${dims}_$s" --gemm-schedule="$s"
    done
  fi
  cat > "$OUT/dequant_$dims.mlir" <<MLIR
func.func @dequant(%a: $A, %b: $B) -> (tensor<${M}x${K}xbf16>, tensor<${N}x${K}xbf16>) {
  %x = nvfp4.dequantize %a : $A -> tensor<${M}x${K}xbf16>
  %y = nvfp4.dequantize %b : $B -> tensor<${N}x${K}xbf16>
  return %x, %y : tensor<${M}x${K}xbf16>, tensor<${N}x${K}xbf16>
}
MLIR
  compile "dequant_$dims"
done
echo "$SHAPES" > "$OUT/shapes.txt"
echo "$EXTRA_8192" > "$OUT/extra_schedules.txt"
echo "$DECODE" > "$OUT/decode_variants.txt"
echo "$TS" > "$OUT/ts_schedules.txt"
echo "GEMM benchmark kernels in ${OUT#$ROOT/}"
