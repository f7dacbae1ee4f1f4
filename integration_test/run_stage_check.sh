#!/usr/bin/env bash
# The Llama block stage by stage (issue 18): every kernel of the NVFP4 and the
# all-BF16 bundle against numpy recomputed from the GPU's own inputs, the
# NVFP4 GEMMs and their operands' codes bit for bit (model/stage_check.py).
#   1. here: adds to the model case (integration_test/model_case, written by
#      run_model_suite.sh) the all-BF16 bundle of the same block
#      (--keep-first=2 --keep-last=8: all 9 GEMMs BF16 wgmma, no quantization),
#      its CPU reference with FP32 accumulation (mlir-runner, 4-12 min; kept when
#      present) and model/stage_check.py;
#   2. on the GPU machine (--device): stage_check.py reads back every internal
#      buffer of both bundles and checks each kernel against numpy recomputed
#      from the GPU's own input buffers (rounding only, or DIVERGES); prints
#      the outputs' distance to the CPU references next to the distance that
#      correct formulations reach (numpy block vs CPU; CPU vs CPU).
set -uo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/.." && pwd)
CASE=${MODEL_CASE_DIR:-$HERE/model_case}
BUILD=${BUILD_DIR:-$ROOT/build}

if [[ ${1:-} != --device ]]; then
  [[ -f $CASE/block.json ]] || { echo "run_stage_check: no $CASE/block.json (run run_model_suite.sh first)" >&2; exit 1; }
  "$BUILD/bin/nvfp4-compile" "$ROOT/examples/llama_block.mlir" --chip=sm_90a --emit=cubin \
    --keep-first=2 --keep-last=8 -o "$CASE/block_bf16.cubin" --report="$CASE/block_bf16.json" || exit 1
  if [[ ! -f $CASE/reference_bf16.f32 ]]; then
    # All nine contractions accumulate in FP32 and round once, as the GPU does.
    /usr/bin/python3 - "$HERE/model" "$BUILD" "$CASE" "$ROOT/examples/llama_block.mlir" <<'PY' || exit 1
import sys
sys.path.insert(0, sys.argv[1])
import make_model_case as m
text = m.fp32_accumulation(open(sys.argv[4]).read(), ops=("matmul", "batch_matmul"), expected=9)
m.run_reference(sys.argv[2], sys.argv[3], "reference_bf16", text,
                precision="--nvfp4-assign-precision=keep-first=2 keep-last=8")
PY
  fi
  cp "$HERE/model/stage_check.py" "$HERE/model/model_inputs.py" "$HERE/model/nvfp4_numpy.py" "$CASE/"
  exit 0
fi

LOG=${OUT:-$HERE}/stage-check.log
{
  echo "== all-BF16 bundle (no quantization): every stage, and the output vs its CPU reference"
  python3 "$CASE/stage_check.py" "$CASE" block_bf16 bf16 "$CASE/reference_bf16.f32"; s1=$?
  echo "== NVFP4 bundle: every stage, the NVFP4 GEMMs and their operands' codes against nvfp4_numpy"
  python3 "$CASE/stage_check.py" "$CASE" block nvfp4 "$CASE/reference_fp32acc.f32" "$CASE/reference.f32"; s2=$?
  echo "stage check exit status: bf16 $s1, nvfp4 $s2"
  exit $(( s1 || s2 ))
} 2>&1 | tee "$LOG"
exit "${PIPESTATUS[0]}"
