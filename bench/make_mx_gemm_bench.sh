#!/usr/bin/env bash
# Compiles the MX GEMM benchmark (sm_90a, for the lent H200) into
# bench/build-mx-gemm/: for square shapes from 128 to 8192 and for MXFP8
# (E4M3) and MXFP4, nvfp4.scaled_matmul of two quantized operands with the
# SIMT kernel (--mx-gemm=simt, up to MX_GEMM_SIMT_MAX) and with the
# tensor-core form (--mx-gemm=tensor-core: BF16 decode + the wgmma GEMM),
# BF16 results; the crossover sets kMXTensorCoreMinMultiplyAdds
# (docs/GemmKernels.md, "MX operands"). Then run
#   python3 bench/run_mx_gemm_bench.py bench/build-mx-gemm   (on the GPU machine)
# Environment: BUILD_DIR (default build/), MX_GEMM_BENCH_OUT (default
# bench/build-mx-gemm), MX_GEMM_SIZES, MX_GEMM_SIMT_MAX.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
OUT=${MX_GEMM_BENCH_OUT:-$ROOT/bench/build-mx-gemm}
BUILD=${BUILD_DIR:-$ROOT/build}
[[ -n ${BUILD_DIR:-} ]] || bash "$ROOT/scripts/setup.sh"
SIZES=${MX_GEMM_SIZES:-"128 256 512 1024 2048 4096 8192"}
# The SIMT kernel runs at about a TFLOP/s: 2048^3 takes ~20 ms a run.
SIMT_MAX=${MX_GEMM_SIMT_MAX:-2048}
rm -rf "$OUT"
mkdir -p "$OUT"
declare -A ELEMENT=([mxfp8_e4m3]=f8E4M3FN [mxfp4]=f4E2M1FN)
for format in mxfp8_e4m3 mxfp4; do
  for s in $SIZES; do
    T="!nvfp4.tensor<${s}x${s}x${ELEMENT[$format]}, scale = f8E8M0FNU, block = 1x32>"
    for kernel in simt tensor-core; do
      [[ $kernel == simt && $s -gt $SIMT_MAX ]] && continue
      name=mx_gemm_${format}_${s}_${kernel%%-*}
      cat > "$OUT/$name.mlir" <<MLIR
func.func @gemm(%a: $T, %b: $T) -> tensor<${s}x${s}xbf16> {
  %c = nvfp4.scaled_matmul %a, %b : $T, $T -> tensor<${s}x${s}xbf16>
  return %c : tensor<${s}x${s}xbf16>
}
MLIR
      "$BUILD/bin/nvfp4-compile" "$OUT/$name.mlir" --chip=sm_90a --emit=cubin \
        --no-recipe --mx-gemm=$kernel -o "$OUT/$name.cubin" \
        --report="$OUT/$name.json" >/dev/null
      echo "$format $s ${kernel%%-*} $name" >> "$OUT/programs.txt"
    done
  done
done
