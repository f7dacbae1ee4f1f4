#!/usr/bin/env bash
# Compiles the producer-quantization benchmark (sm_90a) into
# bench/build-producer/: an elementwise op y = bf16(max(g, 0) * u) at a
# Llama-8B FFN activation's size (16384 x 14336) quantized 1x16 with a given
# amax, as ONE kernel (ProducerQuantize.cpp: y never stored), and the two
# kernels it replaces, each alone: the op writing y, and the quantization
# of y (amax given). Then on the GPU machine:
#   python3 bench/run_producer_quantize_bench.py bench/build-producer
# Environment: BUILD_DIR (default build/), BENCH_OUT.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
OUT=${BENCH_OUT:-$ROOT/bench/build-producer}
BUILD=${BUILD_DIR:-$ROOT/build}
[[ -n ${BUILD_DIR:-} ]] || bash "$ROOT/scripts/setup.sh"
mkdir -p "$OUT"
M=16384 N=14336
T="tensor<${M}x${N}xbf16>"
Q="!nvfp4.tensor<${M}x${N}xf4E2M1FN, scale = f8E4M3FN, block = 1x16>"
ID="affine_map<(i, j) -> (i, j)>"
producer() {  # the op, its result %y
  cat <<MLIR
  %e = tensor.empty() : $T
  %y = linalg.generic {indexing_maps = [$ID, $ID, $ID], iterator_types = ["parallel", "parallel"]}
      ins(%g, %u : $T, $T) outs(%e : $T) {
  ^bb0(%gv: bf16, %uv: bf16, %out: bf16):
    %zero = arith.constant 0.0 : f32
    %gf = arith.extf %gv : bf16 to f32
    %uf = arith.extf %uv : bf16 to f32
    %r = arith.maximumf %gf, %zero : f32
    %p = arith.mulf %r, %uf : f32
    %o = arith.truncf %p : f32 to bf16
    linalg.yield %o : bf16
  } -> $T
MLIR
}
{ echo "func.func @fused(%g: $T, %u: $T, %a: f32) -> $Q {"; producer
  echo "  %q = nvfp4.quantize %y amax(%a) : $T -> $Q"
  echo "  return %q : $Q"; echo "}"; } > "$OUT/fused.mlir"
{ echo "func.func @producer(%g: $T, %u: $T) -> $T {"; producer
  echo "  return %y : $T"; echo "}"; } > "$OUT/producer.mlir"
{ echo "func.func @quantize(%y: $T, %a: f32) -> $Q {"
  echo "  %q = nvfp4.quantize %y amax(%a) : $T -> $Q"
  echo "  return %q : $Q"; echo "}"; } > "$OUT/quantize.mlir"
for p in fused producer quantize; do
  "$BUILD/bin/nvfp4-compile" "$OUT/$p.mlir" --chip=sm_90a --emit=cubin \
    -o "$OUT/$p.cubin" --report="$OUT/$p.json"
done
