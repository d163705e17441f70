#!/usr/bin/env bash
# Records the TP x DP mesh of examples/workloads/mesh.py (4 GPUs: TP 2 x DP 2) under the
# PyTorch profiler and the commlens NCCL profiler plugin at once: the real mesh job on
# which contention is measured on transfers (docs/analysis.md, "Process-group contention").
#   scripts/device/slim_build.sh build-portable .device/build   # here, then carry .device
#   scripts/device/mesh_traces.sh                               # there; $OUT/mesh.tgz
set -u
ROOT=$(pwd)
BUILD=${COMMLENS_BUILD:-$ROOT/.device/build}
PLUGIN="$BUILD/src/recorder/nccl_profiler/libnccl-profiler-commlens.so"
. "$(dirname "$0")/torch_env.sh"
[ "$NGPU" -ge 4 ] || { echo "mesh_traces: needs 4 GPUs, found $NGPU"; exit 2; }
DEST="${OUT:-$ROOT/device-out}/mesh"
mkdir -p "$DEST"
nvidia-smi -L > "$DEST/gpus.txt"
ONLY=${ONLY:-}  # run names to run (space-separated), all when empty
run() {  # run NAME ARGS...: Kineto traces in DEST/NAME, native ones in DEST/NAME/native
  local name=$1; shift
  [ -n "$ONLY" ] && [[ " $ONLY " != *" $name "* ]] && return 0
  local t0=$SECONDS
  NCCL_PROFILER_PLUGIN="$PLUGIN" COMMLENS_OUT="$DEST/$name/native" COMMLENS_JOB_ID="$name" \
    timeout 240 "$TORCHRUN" --standalone --nproc_per_node 4 "$ROOT/examples/workloads/mesh.py" "$@" \
    --out "$DEST/$name" > "$DEST/$name.log" 2>&1
  local rc=$?
  echo "$name: rc=$rc $((SECONDS - t0)) s, $(ls "$DEST/$name" "$DEST/$name/native" 2>/dev/null | tr '\n' ' ')"
  [ $rc -ne 0 ] && tail -20 "$DEST/$name.log"
  return 0
}
run tp2-dp2
run tp2-dp2-heavy3 --heavy-rank 3 --heavy-factor 2
run tp2-dp2-coalesced --coalesced   # the DP traffic in coalesced batches (ZeRO/FSDP-style)
cd "$DEST" && tar czf "${OUT:-$ROOT/device-out}/mesh.tgz" . && echo "mesh.tgz written"
