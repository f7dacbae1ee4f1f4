#!/usr/bin/env bash
# The NVFP4 training replication (examples/training/README.md), in two
# halves:
#   here:  bash examples/training/run_training.sh [model options]
#          builds the tree and writes examples/training/kit/ (the layer
#          kernels of every arm and linear shape, the policies,
#          libnvfp4_runtime.so; about 7 MiB) with make_kit.py
#   GPU:   bash examples/training/run_training.sh --device --time-budget S
#          [train.py options]   (carrying examples/training/kit; PyTorch
#          with CUDA, matplotlib) runs train.py; its logs, summary and plot
#          go to $OUT/training (examples/training/runs/training without $OUT)
set -uo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
KIT=${TRAINING_KIT:-$HERE/kit}
BUILD=${BUILD_DIR:-$ROOT/build}

if [[ ${1:-} != --device ]]; then
  BUILD_DIR=$BUILD bash "$ROOT/scripts/setup.sh" || exit 1
  PYTHONPATH="$BUILD/python_packages" /usr/bin/python3 "$HERE/make_kit.py" \
    --build "$BUILD" --kit "$KIT" "$@"
  exit $?
fi
shift

RUN=${OUT:-$HERE/runs}/training
mkdir -p "$RUN"
{
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  export PYTHONPATH="$ROOT/python:$ROOT/runtime/python${PYTHONPATH:+:$PYTHONPATH}"
  export NVFP4_RUNTIME_LIBRARY="$KIT/lib/libnvfp4_runtime.so"
  # The kit's cache is prepared; there is no compiler on the GPU machine.
  export NVFP4_TOOLS_DIR="$KIT/no-compiler-here"
  python3 "$HERE/train.py" --kit "$KIT" --out "$RUN" "$@"; status=$?
  echo "training exit status: $status"
  exit $status
} 2>&1 | tee "$RUN/train.log"
exit "${PIPESTATUS[0]}"
