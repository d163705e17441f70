#!/usr/bin/env bash
# `commlens record` on a GPU machine (issue 13): a DDP job run under record (NCCL profiler
# plugin, NVML GPU samples, NIC samples) and the same job without it, alternating, for the
# step-time overhead; then what record wrote, for `commlens analyze` here.
#   scripts/device/slim_build.sh build-portable .device/build   # here, then carry .device
#   scripts/device/record_check.sh                              # there; results in $OUT/record/
set -u
ROOT=$(pwd)
BUILD=${COMMLENS_BUILD:-$ROOT/.device/build}
COMMLENS="$BUILD/src/cli/commlens"
. "$(dirname "$0")/torch_env.sh"
DEST="${OUT:-$ROOT/device-out}/record"
mkdir -p "$DEST"
STEPS=${STEPS:-60}
"$COMMLENS" --version
"$COMMLENS" env --preset ib > "$DEST/env-ib.txt" 2>&1
job() {  # job NAME [record args...]: one DDP run, its step times in $DEST/NAME/
  local name=$1; shift
  local cmd=("$TORCHRUN" --standalone --nproc_per_node "$NGPU" "$ROOT/examples/workloads/train.py"
             --workload ddp --no-profile --steps "$STEPS" --out "$DEST/$name")
  if [ $# -gt 0 ]; then cmd=("$COMMLENS" record "$@" -- "${cmd[@]}"); fi
  "${cmd[@]}" > "$DEST/$name.log" 2>&1
  echo "$name: rc=$? median step $(sort -n "$DEST/$name/rank0.steps.txt" | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}') s"
}
for round in 1 2 3; do
  job "plain$round"
  job "rec$round" -o "$DEST/rec$round/trace" --sample-hz 100 --prometheus "$DEST/rec$round.prom"
done
job rec1k -o "$DEST/rec1k/trace" --sample-hz 1000
grep -h "commlens record" "$DEST"/rec*.log | head -4
ls -la "$DEST/rec1/trace" "$DEST/rec1k/trace"
cd "$DEST" && tar czf "${OUT:-$ROOT/device-out}/record.tgz" . && echo "record.tgz written"
