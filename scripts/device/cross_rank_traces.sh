#!/usr/bin/env bash
# Runs on a machine with 2+ GPUs (issue 11): the cross-rank workloads of
# examples/workloads/cross_rank.py, each under the PyTorch profiler and the commlens NCCL
# profiler plugin at once; one tarball of Kineto and native traces per scenario.
#   scripts/device/slim_build.sh build-portable .device/build   # here, then carry .device
#   scripts/device/cross_rank_traces.sh                         # there; results in $OUT
set -u
ROOT=$(pwd)
BUILD=${COMMLENS_BUILD:-$ROOT/.device/build}
PLUGIN="$BUILD/src/recorder/nccl_profiler/libnccl-profiler-commlens.so"
. "$(dirname "$0")/torch_env.sh"
[ "$NGPU" -gt 2 ] && NGPU=2  # the samples are two-rank jobs
DEST="${OUT:-$ROOT/device-out}/cross_rank"
mkdir -p "$DEST"
nvidia-smi -L > "$DEST/gpus.txt"
"$PY" -c "import torch; print('torch', torch.__version__, 'nccl', torch.cuda.nccl.version())" >> "$DEST/gpus.txt"
ONLY=${ONLY:-}  # names to run (space-separated), all when empty
run() {  # run NAME SCENARIO ARGS...: Kineto traces in DEST/NAME, native ones in DEST/NAME/native
  local name=$1; shift
  [ -n "$ONLY" ] && [[ " $ONLY " != *" $name "* ]] && return 0
  local t0=$SECONDS
  NCCL_PROFILER_PLUGIN="$PLUGIN" COMMLENS_OUT="$DEST/$name/native" COMMLENS_JOB_ID="$name" \
    timeout 240 "$TORCHRUN" --standalone --nproc_per_node "$NGPU" \
    "$ROOT/examples/workloads/cross_rank.py" "$@" --out "$DEST/$name" > "$DEST/$name.log" 2>&1
  local rc=$?
  echo "$name: rc=$rc $((SECONDS - t0)) s, $(ls "$DEST/$name" "$DEST/$name/native" 2>/dev/null | tr '\n' ' ')"
  [ $rc -ne 0 ] && tail -20 "$DEST/$name.log"
  return 0
}
run pipeline-1f1b pipeline --schedule 1f1b --microbatches 8
run pipeline-gpipe pipeline --schedule gpipe --microbatches 8
run contention contention
run slow-compute slow --slow-kind compute
run slow-host slow --slow-kind host --slow-ms 8
run hang hang --slow-kind host --slow-ms 0 --stop-step 2
cat "$DEST"/*/rank*.steps.txt > /dev/null 2>&1
cd "$DEST" && tar czf "${OUT:-$ROOT/device-out}/cross_rank.tgz" . && echo "cross_rank.tgz written"
