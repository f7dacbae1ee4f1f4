#!/usr/bin/env bash
# nvfp4.torch under torch.distributed on the GPU (integration_test/torch_dist.py:
# DDP, FSDP2, tensor-parallel column/row splits against a single-process
# run), in one device call:
#   here:  bash integration_test/run_dist_suite.sh
#          (builds, compiles the layer kernels of every rank's shape and
#          writes integration_test/dist_kit/: kernel cache,
#          libnvfp4_runtime.so, inputs and the numerics library's bytes,
#          about 7 MiB; then checks it as the GPU machine will use it:
#          no numerics extension, no compiler)
#   GPU:   bash integration_test/run_dist_suite.sh --device
#          (carrying integration_test/dist_kit; PyTorch with CUDA). Two ranks
#          through torchrun: NCCL, one GPU per rank, when the machine has
#          two GPUs; gloo, both ranks on GPU 0 (CUDA tensors), with one.
#          NVFP4_DIST_BACKEND=gloo|nccl chooses; NVFP4_DIST_SECTIONS=
#          name,... runs some sections (names or their beginnings).
set -uo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/.." && pwd)
KIT=${DIST_KIT:-$HERE/dist_kit}
BUILD=${BUILD_DIR:-$ROOT/build}

if [[ ${1:-} != --device ]]; then
  BUILD_DIR=$BUILD bash "$ROOT/scripts/setup.sh" || exit 1
  PYTHONPATH="$BUILD/python_packages" /usr/bin/python3 "$HERE/make_dist_kit.py" \
    --build "$BUILD" --out "$KIT"
  exit $?
fi

LOG=${OUT:-$HERE}/dist-suite.log
{
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  export PYTHONPATH="$ROOT/python:$ROOT/runtime/python${PYTHONPATH:+:$PYTHONPATH}"
  export NVFP4_RUNTIME_LIBRARY="$KIT/lib/libnvfp4_runtime.so"
  # The kit's cache is prepared; there is no compiler on the GPU machine.
  export NVFP4_TOOLS_DIR="$KIT/no-compiler-here"
  # One host, no network: the loopback for gloo and NCCL's bootstrap;
  # NVLink multicast off.
  export GLOO_SOCKET_IFNAME=${GLOO_SOCKET_IFNAME:-lo}
  export NCCL_SOCKET_IFNAME=${NCCL_SOCKET_IFNAME:-lo}
  export NCCL_NVLS_ENABLE=${NCCL_NVLS_ENABLE:-0}
  export OMP_NUM_THREADS=${OMP_NUM_THREADS:-4}
  start=$(date +%s)
  # A run that dies in a section (a rank's crash, a hang past the timeout)
  # is started again with the sections after that one, within one device
  # call's 600 s.
  progress=$(mktemp)
  sections=${NVFP4_DIST_SECTIONS:-}
  status=0
  for attempt in 1 2 3 4; do
    left=$(( start + 540 - $(date +%s) ))
    (( left > 420 )) && left=420
    if (( left < 60 )); then
      echo "== no time left for another run"; (( status == 0 )) && status=1; break
    fi
    : > "$progress"
    NVFP4_DIST_PROGRESS=$progress NVFP4_DIST_SECTIONS=$sections \
      timeout "$left" python3 -m torch.distributed.run --nnodes=1 --nproc_per_node=2 \
      --master_addr=127.0.0.1 --master_port=$(( ${DIST_PORT:-29517} + attempt )) \
      "$HERE/torch_dist.py" "$KIT"; s=$?
    (( s != 0 )) && status=$s
    grep -qx finished "$progress" && break
    order=$(sed -n 's/^order //p' "$progress")
    last=$(sed -n 's/^start //p' "$progress" | tail -n 1)
    [[ -z $order || -z $last ]] && break  # it died before its first section
    IFS=, read -ra names <<< "$order"
    sections=; after=0
    for name in "${names[@]}"; do
      (( after )) && sections=${sections:+$sections,}$name
      [[ $name == "$last" ]] && after=1
    done
    [[ -z $sections ]] && break
    echo "== the run stopped in section '$last' (exit status $s); again with: $sections"
  done
  rm -f "$progress"
  echo "dist suite exit status: $status ($(( $(date +%s) - start )) s)"
  exit $status
} 2>&1 | tee "$LOG"
exit "${PIPESTATUS[0]}"
