#!/usr/bin/env bash
#===- scripts/demo.sh - the main job on the bundled example ---------------===#
#
# Installs what is missing, builds, then runs the furthest stage of the
# pipeline that works today: the bundled NVFP4 linear layer
# (examples/reference/quantized_linear.mlir) is lowered with
# nvfp4-reference-pipeline to LLVM and executed on the CPU, bit-exact with
# the numerics library, printing the error of NVFP4 against FP32.
#
#===----------------------------------------------------------------------===#
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD_DIR=${BUILD_DIR:-$ROOT/build}
LLVM=/usr/lib/llvm-22

bash "$ROOT/scripts/setup.sh"

example=$ROOT/examples/reference/quantized_linear.mlir
echo "== nvfp4-opt --nvfp4-reference-pipeline ${example#$ROOT/} | mlir-runner"
"$BUILD_DIR/bin/nvfp4-opt" "$example" --nvfp4-reference-pipeline \
  | "$LLVM/bin/mlir-runner" -e main -entry-point-result=void \
      -shared-libs="$LLVM/lib/libmlir_c_runner_utils.so,$LLVM/lib/libmlir_runner_utils.so"
