#!/usr/bin/env bash
# The model benchmark kit (issue 18): a Llama-8B-shaped decoder block at 16k
# tokens, compiled for sm_90a twice (NVFP4 linear layers; all-BF16), checked
# (no host computation, no spills, fits the H200) and written with nvfp4-run
# into bench/build-model/ (about 3 MB, no weights). Then, on the GPU machine:
#   python3 bench/run_model_bench.py bench/build-model
# --check-torch first compares bench/llama_block_torch.py with the CPU
# reference pipeline of the 128-token block (mlir-runner, 2-4 minutes; needs
# torch in $PYTHON). Environment: BUILD_DIR (default build/, built by
# setup.sh when not given), MODEL_BENCH_OUT (default bench/build-model),
# MODEL_BENCH_TOKENS (16384), PYTHON (default /usr/bin/python3).
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
[[ -n ${BUILD_DIR:-} ]] || bash "$ROOT/scripts/setup.sh"
BUILD=$(cd "${BUILD_DIR:-$ROOT/build}" && pwd)
exec "${PYTHON:-/usr/bin/python3}" "$ROOT/bench/make_model_bench.py" --build "$BUILD" \
  --out "${MODEL_BENCH_OUT:-$ROOT/bench/build-model}" \
  --tokens "${MODEL_BENCH_TOKENS:-16384}" "$@"
