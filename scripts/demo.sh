#!/usr/bin/env bash
#===- scripts/demo.sh - the main job on the bundled examples --------------===#
#
# Installs what is missing and builds, then:
#  1. compiles the bundled Llama-style transformer block
#     (examples/llama_block.mlir) to PTX for GB300 (sm_103a): precision
#     assignment, the NVFP4 training recipe, GPU kernels, LLVM's NVPTX
#     backend, ptxas when CUDA is installed; prints the per-layer precision
#     report and the kernels;
#  2. runs an NVFP4 linear layer on the CPU through the bit-exact reference
#     lowering and prints its error against FP32.
#
#===----------------------------------------------------------------------===#
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD_DIR=${BUILD_DIR:-$ROOT/build}
LLVM=/usr/lib/llvm-22
OUT_DIR=$BUILD_DIR/demo

bash "$ROOT/scripts/setup.sh"
mkdir -p "$OUT_DIR"

# A single block: the default policy (the paper's 2 first and 8 last of 62
# blocks, scaled to the depth) keeps no block in BF16 by position; attention
# BMMs stay BF16 by kind. The norms, softmax, SwiGLU and residual adds are
# kernels, and the attention BMMs are tcgen05 .kind::f16 BF16 GEMMs: the
# bundle is the whole block (compiled and assembled; GB300 is not here to
# run it).
block=$ROOT/examples/llama_block.mlir
echo "== nvfp4-compile ${block#$ROOT/} --chip=sm_103a (GB300)"
"$BUILD_DIR/bin/nvfp4-compile" "$block" --chip=sm_103a --print-report \
  -o "$OUT_DIR/llama_block.sm_103a.ptx" --report="$OUT_DIR/llama_block.json" \
  --report-svg="$OUT_DIR/llama_block.svg"
/usr/bin/python3 - "$OUT_DIR/llama_block.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
print(f"\nKernels for {r['chip']} (PTX {r['ptx_version']}, "
      f"{'assembled by ptxas' if r['assembled_with_ptxas'] else 'ptxas not found: not assembled'}):")
seen = set()
for k in r["kernels"]:
    if k["name"] in seen:
        continue
    seen.add(k["name"])
    regs = k.get("registers", "-")
    spill = k.get("spill_bytes", "-")
    print(f"  {k['name']:<60} grid {k['grid'][0]:>6} x {k['block'][0]} threads"
          f"  regs {regs:>3}  spill {spill}")
PY
echo "PTX: ${OUT_DIR#$ROOT/}/llama_block.sm_103a.ptx   report: ${OUT_DIR#$ROOT/}/llama_block.json   chart: ${OUT_DIR#$ROOT/}/llama_block.svg"

example=$ROOT/examples/reference/quantized_linear.mlir
echo
echo "== nvfp4-opt --nvfp4-reference-pipeline ${example#$ROOT/} | mlir-runner"
"$BUILD_DIR/bin/nvfp4-opt" "$example" --nvfp4-reference-pipeline \
  | "$LLVM/bin/mlir-runner" -e main -entry-point-result=void \
      -shared-libs="$LLVM/lib/libmlir_c_runner_utils.so,$LLVM/lib/libmlir_runner_utils.so"
