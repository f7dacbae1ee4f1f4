#!/usr/bin/env bash
# Compiles the benchmark kernels (sm_90a, for the lent H200) into bench/build/:
# quantize 8192x8192 (1x16, RN); the wgrad operand recipe (RHT + amax + SR
# quantize of an 8192x8192 operand along its last dimension, i.e. already in
# the column-wise layout; the compiler fuses the RHT into the quantize
# kernel); both also with the amax given (TE passes the amax of the previous
# step: no amax pass); 16x16 weight quantization with its transposed copy
# (fprop W and dgrad W^T from one kernel), 8192x8192 with the amax given
# and included, and 4096x4096 (the training step's weight) included, the
# amax-given one also with each input path forced (registers, ring2-4:
# --quantize-schedule) and 4096x4096 with registers (the default is ring2;
# the dual X and dY with the amax given also with registers, ring2 and
# ring3); the
# dual quantization of a training step's X (RN rowwise + RHT + RN along the
# tokens, one read) and dY (SR + RHT + SR), amax given and included, dY also
# at the training step's 2048x4096, and the two separate quantizations it
# replaces (dY and a dY^T given as a second tensor: two reads); the
# 8192^3 block-scaled GEMM, alone, with its output
# amax (the epilogue reduction), and followed by the 1x16 quantization of its
# output -- fused (nvfp4-fuse-quantization's fuse-output-amax: the GEMM's
# epilogue amax, no amax pass) and unfused (--no-recipe: GEMM, amax pass,
# quantize); and with a static amax (an argument: the whole quantization in
# the epilogue, nvfp4.scaled_matmul_quantize, vs GEMM + quantize kernel).
# Then run
#   python3 bench/run_bench.py bench/build      (on the GPU machine)
# Environment: BUILD_DIR (default build/, built by setup.sh), BENCH_OUT
# (default bench/build), BENCH_PROGRAMS (default: all of them).
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
OUT=${BENCH_OUT:-$ROOT/bench/build}
BUILD=${BUILD_DIR:-$ROOT/build}
PROGRAMS=${BENCH_PROGRAMS:-quantize quantize_amax_given wgrad_operand wgrad_operand_amax_given weight_copies weight_copies_amax_given weight_copies_amax_given_registers weight_copies_amax_given_ring2 weight_copies_amax_given_ring3 weight_copies_amax_given_ring4 weight_copies_4096 weight_copies_4096_registers dual_x_amax_given_registers dual_x_amax_given_ring2 dual_x_amax_given_ring3 dual_dy_amax_given_registers dual_dy_amax_given_ring2 dual_dy_amax_given_ring3 dual_x dual_x_amax_given dual_dy dual_dy_amax_given dual_dy_2048x4096 dual_dy_separate_amax_given wgrad_operand_amax_given__mulsplit_signlegacy weight_copies_amax_given__signlegacy dual_x_amax_given__signlegacy dual_dy_amax_given__signlegacy wgrad_operand_amax_given__runs1 wgrad_operand_amax_given__runs1_blocks4 dual_x_amax_given__rolled dual_dy_amax_given__rolled gemm gemm_output_amax gemm_quantize gemm_quantize_unfused gemm_quantize_static gemm_quantize_static_unfused gemm_k256_quantize_fused gemm_k256_quantize_unfused}
mkdir -p "$OUT"
[[ -n ${BUILD_DIR:-} ]] || bash "$ROOT/scripts/setup.sh"
N=8192
ACT="!nvfp4.tensor<${N}x${N}xf4E2M1FN, scale = f8E4M3FN, block = 1x16>"
W="!nvfp4.tensor<${N}x${N}xf4E2M1FN, scale = f8E4M3FN, block = 16x16>"
cat > "$OUT/quantize.mlir" <<MLIR
func.func @quantize(%x: tensor<${N}x${N}xbf16>) -> $ACT {
  %q = nvfp4.quantize %x : tensor<${N}x${N}xbf16> -> $ACT
  return %q : $ACT
}
MLIR
cat > "$OUT/quantize_amax_given.mlir" <<MLIR
func.func @quantize_amax_given(%x: tensor<${N}x${N}xbf16>, %amax: f32) -> $ACT {
  %q = nvfp4.quantize %x amax(%amax) : tensor<${N}x${N}xbf16> -> $ACT
  return %q : $ACT
}
MLIR
cat > "$OUT/wgrad_operand_amax_given.mlir" <<MLIR
func.func @wgrad_operand_amax_given(%dy: tensor<${N}x${N}xbf16>, %seed: i64, %amax: f32) -> $ACT {
  %h = nvfp4.hadamard %dy : tensor<${N}x${N}xbf16>
  %q = nvfp4.quantize %h amax(%amax) rounding<stochastic> seed(%seed) : tensor<${N}x${N}xbf16> -> $ACT
  return %q : $ACT
}
MLIR
cat > "$OUT/wgrad_operand.mlir" <<MLIR
func.func @wgrad_operand(%dy: tensor<${N}x${N}xbf16>, %seed: i64) -> $ACT {
  %h = nvfp4.hadamard %dy : tensor<${N}x${N}xbf16>
  %q = nvfp4.quantize %h rounding<stochastic> seed(%seed) : tensor<${N}x${N}xbf16> -> $ACT
  return %q : $ACT
}
MLIR
WT4="!nvfp4.tensor<4096x4096xf4E2M1FN, scale = f8E4M3FN, block = 16x16>"
cat > "$OUT/weight_copies.mlir" <<MLIR
func.func @weight_copies(%w: tensor<${N}x${N}xbf16>) -> ($W, $W) {
  %q = nvfp4.quantize %w : tensor<${N}x${N}xbf16> -> $W
  %t = nvfp4.transpose %q : $W -> $W
  return %q, %t : $W, $W
}
MLIR
cat > "$OUT/weight_copies_amax_given.mlir" <<MLIR
func.func @weight_copies_amax_given(%w: tensor<${N}x${N}xbf16>, %amax: f32) -> ($W, $W) {
  %q = nvfp4.quantize %w amax(%amax) : tensor<${N}x${N}xbf16> -> $W
  %t = nvfp4.transpose %q : $W -> $W
  return %q, %t : $W, $W
}
MLIR
cat > "$OUT/weight_copies_4096.mlir" <<MLIR
func.func @weight_copies_4096(%w: tensor<4096x4096xbf16>) -> ($WT4, $WT4) {
  %q = nvfp4.quantize %w : tensor<4096x4096xbf16> -> $WT4
  %t = nvfp4.transpose %q : $WT4 -> $WT4
  return %q, %t : $WT4, $WT4
}
MLIR
# The dual quantizations (nvfp4.dual_quantize): rowwise and, transposed,
# columnwise with the RHT, from one read; N x N, so both results have the
# type $ACT.
cat > "$OUT/dual_x.mlir" <<MLIR
func.func @dual_x(%x: tensor<${N}x${N}xbf16>) -> ($ACT, $ACT) {
  %r, %c = nvfp4.dual_quantize %x columnwise hadamard(55272) : tensor<${N}x${N}xbf16> -> $ACT, $ACT
  return %r, %c : $ACT, $ACT
}
MLIR
cat > "$OUT/dual_x_amax_given.mlir" <<MLIR
func.func @dual_x_amax_given(%x: tensor<${N}x${N}xbf16>, %a: f32, %b: f32) -> ($ACT, $ACT) {
  %r, %c = nvfp4.dual_quantize %x amax(%a) columnwise amax(%b) hadamard(55272) : tensor<${N}x${N}xbf16> -> $ACT, $ACT
  return %r, %c : $ACT, $ACT
}
MLIR
cat > "$OUT/dual_dy.mlir" <<MLIR
func.func @dual_dy(%dy: tensor<${N}x${N}xbf16>, %s0: i64, %s1: i64) -> ($ACT, $ACT) {
  %r, %c = nvfp4.dual_quantize %dy rounding<stochastic> seed(%s0) columnwise hadamard(55272) rounding<stochastic> seed(%s1) : tensor<${N}x${N}xbf16> -> $ACT, $ACT
  return %r, %c : $ACT, $ACT
}
MLIR
cat > "$OUT/dual_dy_amax_given.mlir" <<MLIR
func.func @dual_dy_amax_given(%dy: tensor<${N}x${N}xbf16>, %s0: i64, %s1: i64, %a: f32, %b: f32) -> ($ACT, $ACT) {
  %r, %c = nvfp4.dual_quantize %dy amax(%a) rounding<stochastic> seed(%s0) columnwise amax(%b) hadamard(55272) rounding<stochastic> seed(%s1) : tensor<${N}x${N}xbf16> -> $ACT, $ACT
  return %r, %c : $ACT, $ACT
}
MLIR
DYR="!nvfp4.tensor<2048x4096xf4E2M1FN, scale = f8E4M3FN, block = 1x16>"
DYC="!nvfp4.tensor<4096x2048xf4E2M1FN, scale = f8E4M3FN, block = 1x16>"
cat > "$OUT/dual_dy_2048x4096.mlir" <<MLIR
func.func @dual_dy_2048x4096(%dy: tensor<2048x4096xbf16>, %s0: i64, %s1: i64) -> ($DYR, $DYC) {
  %r, %c = nvfp4.dual_quantize %dy rounding<stochastic> seed(%s0) columnwise hadamard(55272) rounding<stochastic> seed(%s1) : tensor<2048x4096xbf16> -> $DYR, $DYC
  return %r, %c : $DYR, $DYC
}
MLIR
cat > "$OUT/dual_dy_separate_amax_given.mlir" <<MLIR
func.func @dual_dy_separate_amax_given(%dy: tensor<${N}x${N}xbf16>, %dyt: tensor<${N}x${N}xbf16>, %s0: i64, %s1: i64, %a: f32, %b: f32) -> ($ACT, $ACT) {
  %r = nvfp4.quantize %dy amax(%a) rounding<stochastic> seed(%s0) : tensor<${N}x${N}xbf16> -> $ACT
  %c = nvfp4.quantize %dyt amax(%b) hadamard(55272) rounding<stochastic> seed(%s1) : tensor<${N}x${N}xbf16> -> $ACT
  return %r, %c : $ACT, $ACT
}
MLIR
cat > "$OUT/gemm.mlir" <<MLIR
func.func @gemm(%a: $ACT, %b: $W) -> tensor<${N}x${N}xbf16> {
  %c = nvfp4.scaled_matmul %a, %b : $ACT, $W -> tensor<${N}x${N}xbf16>
  return %c : tensor<${N}x${N}xbf16>
}
MLIR
cat > "$OUT/gemm_output_amax.mlir" <<MLIR
func.func @gemm_output_amax(%a: $ACT, %b: $W) -> (tensor<${N}x${N}xbf16>, f32) {
  %c, %m = nvfp4.scaled_matmul %a, %b : $ACT, $W -> tensor<${N}x${N}xbf16>, f32
  return %c, %m : tensor<${N}x${N}xbf16>, f32
}
MLIR
cat > "$OUT/gemm_quantize.mlir" <<MLIR
func.func @gemm_quantize(%a: $ACT, %b: $W, %v: $W) -> tensor<${N}x${N}xbf16> {
  %c = nvfp4.scaled_matmul %a, %b : $ACT, $W -> tensor<${N}x${N}xbf16>
  %q = nvfp4.quantize %c : tensor<${N}x${N}xbf16> -> $ACT
  %d = nvfp4.scaled_matmul %q, %v : $ACT, $W -> tensor<${N}x${N}xbf16>
  return %d : tensor<${N}x${N}xbf16>
}
MLIR
cp "$OUT/gemm_quantize.mlir" "$OUT/gemm_quantize_unfused.mlir"
cat > "$OUT/gemm_quantize_static.mlir" <<MLIR
func.func @gemm_quantize_static(%a: $ACT, %b: $W, %v: $W, %g: f32) -> tensor<${N}x${N}xbf16> {
  %c = nvfp4.scaled_matmul %a, %b : $ACT, $W -> tensor<${N}x${N}xbf16>
  %q = nvfp4.quantize %c amax(%g) : tensor<${N}x${N}xbf16> -> $ACT
  %d = nvfp4.scaled_matmul %q, %v : $ACT, $W -> tensor<${N}x${N}xbf16>
  return %d : tensor<${N}x${N}xbf16>
}
MLIR
cp "$OUT/gemm_quantize_static.mlir" "$OUT/gemm_quantize_static_unfused.mlir"
# K = 256 (a memory-bound GEMM: writing C costs as much as the products),
# output quantized with a static amax: the epilogue-quantizing kernel as
# written vs GEMM + quantize kernel.
ACT_K="!nvfp4.tensor<${N}x256xf4E2M1FN, scale = f8E4M3FN, block = 1x16>"
W_K="!nvfp4.tensor<${N}x256xf4E2M1FN, scale = f8E4M3FN, block = 16x16>"
cat > "$OUT/gemm_k256_quantize_fused.mlir" <<MLIR
func.func @gemm_k256_quantize_fused(%a: $ACT_K, %b: $W_K, %g: f32) -> $ACT {
  %q = nvfp4.scaled_matmul_quantize %a, %b amax(%g) : $ACT_K, $W_K -> $ACT
  return %q : $ACT
}
MLIR
cat > "$OUT/gemm_k256_quantize_unfused.mlir" <<MLIR
func.func @gemm_k256_quantize_unfused(%a: $ACT_K, %b: $W_K, %g: f32) -> $ACT {
  %c = nvfp4.scaled_matmul %a, %b : $ACT_K, $W_K -> tensor<${N}x${N}xbf16>
  %q = nvfp4.quantize %c amax(%g) : tensor<${N}x${N}xbf16> -> $ACT
  return %q : $ACT
}
MLIR
# The 16x16 kernels' input paths forced (quantize-schedule), same IR: the
# A/B of the registers path and the cp.async rings in one run.
for variant in registers ring2 ring3 ring4; do
  cp "$OUT/weight_copies_amax_given.mlir" "$OUT/weight_copies_amax_given_$variant.mlir"
done
cp "$OUT/weight_copies_4096.mlir" "$OUT/weight_copies_4096_registers.mlir"
for variant in registers ring2 ring3; do
  cp "$OUT/dual_x_amax_given.mlir" "$OUT/dual_x_amax_given_$variant.mlir"
  cp "$OUT/dual_dy_amax_given.mlir" "$OUT/dual_dy_amax_given_$variant.mlir"
done
# Arithmetic variants of the quantize kernels (issue 15 rounds 5 and 6): a
# program named <base>__<schedule> is <base> compiled with
# --quantize-schedule=<schedule>, e.g. wgrad_operand_amax_given__mulsplit_signlegacy
# (the session-8 arithmetic) or __runs1 (one run a work unit) and
# dual_*__rolled (the tile rows' loop kept) beside the default; run_bench.py
# times every such program after its base and compares their outputs byte
# for byte.
for name in $PROGRAMS; do
  [[ $name == *__* ]] && cp "$OUT/${name%%__*}.mlir" "$OUT/$name.mlir"
done
for name in $PROGRAMS; do
  flags=()
  [[ $name == *_unfused ]] && flags=(--no-recipe)
  [[ $name =~ _(registers|ring[234])$ ]] && flags=(--quantize-schedule="${BASH_REMATCH[1]}")
  [[ $name =~ __(.+)$ ]] && flags=(--quantize-schedule="${BASH_REMATCH[1]}")
  "$BUILD/bin/nvfp4-compile" "$OUT/$name.mlir" --chip=sm_90a --emit=cubin \
    "${flags[@]}" -o "$OUT/$name.cubin" --report="$OUT/$name.json" > /dev/null
done
echo "benchmark kernels in ${OUT#$ROOT/}"
