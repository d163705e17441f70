#!/usr/bin/env bash
# What CUPTI adds to each CUDA launch on the host (issue 28), on the GPU machine: each
# setting of benchmarks/recorder/gpu/cupti_launch_cost.cc in a process of its own, in turns
# (ROUNDS), so that a slow spell of the machine falls on every setting alike.
#   scripts/device/slim_build.sh build-portable .device/build        # here, carry .device
#   scripts/device/cupti_launch_cost.sh                              # there; $OUT/launch_cost.jsonl
set -u
. "$(dirname "$0")/torch_env.sh"
export LD_LIBRARY_PATH="${CUDA_HOME:-/usr/local/cuda}/lib64:$LD_LIBRARY_PATH"
BIN=${BIN:-.device/build/benchmarks/recorder/gpu/cupti_launch_cost}
SETTINGS=${SETTINGS:-none bare bare-zeroed bare-shared ours-kernel ours-default events events-known}
ROUNDS=${ROUNDS:-3}
ITER=${ITER:-200000}
ITER_COLD=${ITER_COLD:-5000}   # the cold loop reads 2 MiB between launches: fewer iterations
LOOPS=${LOOPS:-launch mixed}   # and cold
LOG="${OUT:-.}/launch_cost.jsonl"
: > "$LOG"
for round in $(seq "$ROUNDS"); do
  for loop in $LOOPS; do
    for s in $SETTINGS; do
      n=$ITER; [ "$loop" = cold ] && n=$ITER_COLD
      "$BIN" "$s" "$loop" "$n" | sed "s/^{/{\"round\":$round,/" | tee -a "$LOG"
    done
  done
done
