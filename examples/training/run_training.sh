#!/usr/bin/env bash
# The NVFP4 training replication (examples/training/README.md), in two
# halves:
#   here:  bash examples/training/run_training.sh [model options]
#          builds the tree and writes examples/training/kit/ (the layer
#          kernels of every arm and linear shape, the policies,
#          libnvfp4_runtime.so; about 6 MiB) with make_kit.py
#   GPU:   bash examples/training/run_training.sh --device [--check]
#          [train.py or check.py options]   (carrying examples/training/kit;
#          PyTorch with CUDA, matplotlib) runs train.py (or, with --check,
#          check.py: the layer and model checks of RESULTS.md; with
#          --ddp N, train_ddp.py on N ranks through torchrun: one arm
#          data-parallel, the kit made with the per-rank --batch). The run's
#          files go to one archive, $OUT/$NAME.tar.gz, with its summary
#          (and plot) beside it as $OUT/$NAME-summary.md and
#          $OUT/$NAME-loss_curves.png; NAME is $TRAINING_RUN, default
#          "training" ("check" with --check). Without $OUT:
#          examples/training/runs/.
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
SCRIPT=train.py
NAME=${TRAINING_RUN:-training}
LAUNCH=(python3)
if [[ ${1:-} == --check ]]; then
  SCRIPT=check.py
  NAME=${TRAINING_RUN:-check}
  shift
elif [[ ${1:-} == --ddp ]]; then
  SCRIPT=train_ddp.py
  NAME=${TRAINING_RUN:-ddp}
  LAUNCH=(python3 -m torch.distributed.run --nnodes=1 --nproc_per_node="${2:?--ddp needs the number of ranks}"
          --master_addr=127.0.0.1 --master_port="${DDP_PORT:-29518}")
  shift 2
  # One host, no network: the loopback for gloo and NCCL's bootstrap.
  export GLOO_SOCKET_IFNAME=${GLOO_SOCKET_IFNAME:-lo} NCCL_SOCKET_IFNAME=${NCCL_SOCKET_IFNAME:-lo}
  export NCCL_NVLS_ENABLE=${NCCL_NVLS_ENABLE:-0}
fi

BASE=${OUT:-$HERE/runs}
RUN=$BASE/$NAME
mkdir -p "$RUN"

# One archive and the summary beside it: a device call returns few files.
bundle() {
  [[ -d $RUN ]] || return 0
  tar -czf "$BASE/$NAME.tar.gz" -C "$BASE" "$NAME" &&
    for f in summary.md loss_curves.png; do
      [[ -f $RUN/$f ]] && cp "$RUN/$f" "$BASE/$NAME-$f"
    done
  [[ -f $BASE/$NAME.tar.gz ]] && rm -rf "$RUN"
}
trap bundle EXIT
trap "exit 143" TERM

{
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  export PYTHONPATH="$ROOT/python:$ROOT/runtime/python${PYTHONPATH:+:$PYTHONPATH}"
  export NVFP4_RUNTIME_LIBRARY="$KIT/lib/libnvfp4_runtime.so"
  # The kit's cache is prepared; there is no compiler on the GPU machine.
  export NVFP4_TOOLS_DIR="$KIT/no-compiler-here"
  "${LAUNCH[@]}" "$HERE/$SCRIPT" --kit "$KIT" --out "$RUN" "$@"; status=$?
  echo "$SCRIPT exit status: $status"
  exit $status
} 2>&1 | tee "$RUN/$NAME.log"
exit "${PIPESTATUS[0]}"
