#!/usr/bin/env bash
# Nsight Compute profiles of the quantize kernels, on the GPU machine (builds
# nothing; the cubins and manifests come from bench/make_bench.sh):
#   bash bench/ncu_quantize.sh DIR [PROGRAM...]
# DIR is a bench build directory (e.g. bench/build); PROGRAM defaults to the
# amax-given RHT + SR, dual X, dual dY, 16x16 + transpose and 1x16 RN
# programs. Each program runs once under ncu (clocks left alone, every
# nvfp4_* kernel, one launch) with the sections named below; the reports go
# to $OUT (default /tmp/ncu-quantize) as five files, so that a device call
# (which brings back at most eight) has room for its other logs:
#   summary.txt     what ncu printed while profiling, then ncu --page
#                   details of every kernel
#   raw.csv         ncu --page raw --csv (every metric, the stall reasons too)
#   source.csv      ncu --page source --csv --print-source sass: per SASS
#                   instruction, its executions and warp-state samples
#   stalls.txt      per kernel its SASS opcodes (share of the executed
#                   instructions, top stall samples) and its stall reasons,
#                   largest first, with the headline metrics (bench/ncu_stalls.py)
#   sass.txt        cuobjdump -res-usage and -sass of each cubin
# and with NCU_REPORTS=1 also reports.tar (the .ncu-rep files, for the UI).
set -uo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
DIR=${1:?usage: ncu_quantize.sh DIR [PROGRAM...]}
shift
PROGRAMS=("$@")
((${#PROGRAMS[@]})) || PROGRAMS=(wgrad_operand_amax_given dual_x_amax_given dual_dy_amax_given
                                 weight_copies_amax_given quantize_amax_given)
DEST=${OUT:-/tmp/ncu-quantize}
WORK=$(mktemp -d)
mkdir -p "$DEST"
SECTIONS=(SpeedOfLight MemoryWorkloadAnalysis Occupancy LaunchStats WarpStateStats
          SchedulerStats SourceCounters InstructionStats ComputeWorkloadAnalysis)
section_args=()
for s in "${SECTIONS[@]}"; do section_args+=(--section "$s"); done
: > "$DEST/raw.csv"; : > "$DEST/source.csv"; : > "$DEST/sass.txt"
LOG=$WORK/log.txt DETAILS=$WORK/details.txt
: > "$LOG"; : > "$DETAILS"
status=0
for p in "${PROGRAMS[@]}"; do
  echo "== $p" | tee -a "$LOG"
  if ! ncu --clock-control none --kernel-name regex:'^nvfp4_' --launch-count 1 \
       "${section_args[@]}" --import-source no -f -o "$WORK/$p" \
       python3 "$ROOT/bench/profile_quantize.py" "$DIR" "$p" >> "$LOG" 2>&1; then
    echo "ncu_quantize: ncu failed on $p (see summary.txt)" | tee -a "$LOG"
    status=1
    continue
  fi
  { echo "== $p"; ncu -i "$WORK/$p.ncu-rep" --page details --print-details all \
      || ncu -i "$WORK/$p.ncu-rep" --page details; } >> "$DETAILS" 2>&1
  { echo "== $p"; ncu -i "$WORK/$p.ncu-rep" --page raw --csv; } >> "$DEST/raw.csv" 2>&1
  { echo "== $p"; ncu -i "$WORK/$p.ncu-rep" --page source --csv --print-source sass \
      || ncu -i "$WORK/$p.ncu-rep" --page source --csv; } >> "$DEST/source.csv" 2>&1
  { echo "== $p"; cuobjdump -res-usage "$DIR/$p.cubin"; cuobjdump -sass "$DIR/$p.cubin"; } >> "$DEST/sass.txt" 2>&1
done
python3 "$ROOT/bench/ncu_stalls.py" "$DEST/raw.csv" --source "$DEST/source.csv" \
  > "$DEST/stalls.txt" 2>&1 || status=1
cat "$LOG" "$DETAILS" > "$DEST/summary.txt"
[[ ${NCU_REPORTS:-0} == 1 ]] && tar -C "$WORK" -cf "$DEST/reports.tar" --exclude=log.txt --exclude=details.txt .
rm -rf "$WORK"
cat "$DEST/stalls.txt"
((status == 0)) && echo "ncu_quantize ok: ${#PROGRAMS[@]} programs in $DEST"
exit $status
