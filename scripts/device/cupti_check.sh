#!/usr/bin/env bash
# The CUPTI tracer's checks on the GPU machine (issue 28), in one call; what it writes is
# analyzed here afterwards (the portable build has no importers).
#   1. cupti_gpu_test: CUPTI's backend traces a small CUDA program and an NVTX range, and
#      steps aside for another subscriber (one process each);
#   2. with 2+ GPUs, the slow-compute job of examples/workloads/cross_rank.py twice: under
#      the PyTorch profiler (Kineto, rank<R>.json.gz) and under `commlens record --cupti`
#      (NVTX "step N" ranges mark its steps), for kernel counts, compute and
#      communication per step, and the late rank's cause on the recording;
#   3. with 2+ GPUs and STEPS_AB > 0, scripts/device/record_ab.sh with CUPTI=1: the
#      recorder's step-time cost with the tracer (on and off blocks in one run).
#   scripts/device/slim_build.sh build-portable .device/build   # here, then carry .device
#   scripts/device/cupti_check.sh                               # there; results in $OUT/cupti/
# Then here: tar xzf cupti.tgz -C /tmp/cupti && commlens analyze /tmp/cupti/slow-kineto and
# /tmp/cupti/slow-rec (see docs/recorder.md, "The CUPTI tracer").
set -u
ROOT=$(pwd)
BUILD=${COMMLENS_BUILD:-$ROOT/.device/build}
COMMLENS="$BUILD/src/cli/commlens"
. "$(dirname "$0")/torch_env.sh"
DEST="${OUT:-$ROOT/device-out}/cupti"
mkdir -p "$DEST"
{
  nvidia-smi -L
  "$PY" -c "import torch; print('torch', torch.__version__, 'nccl', torch.cuda.nccl.version())"
  ls "$CU13_LIB" | grep -i cupti
} > "$DEST/machine.txt" 2>&1

# 1. The GPU test, each case in a process of its own (CUPTI's state is per process).
for case in TracesASmallCudaProgram StepsAsideForAnotherSubscriber; do
  COMMLENS_TEST_OUTPUT="$DEST/gpu_test_files" timeout 120 "$BUILD/tests/recorder/cupti_gpu_test" \
    --gtest_filter="CuptiGpu.$case" > "$DEST/gpu_test_$case.txt" 2>&1
  echo "cupti_gpu_test $case: rc=$? $(grep -E '^\[  (PASSED|FAILED) ' "$DEST/gpu_test_$case.txt" | head -1)"
done

if [ "$NGPU" -ge 2 ]; then
  G=2
  # 2. One job, two ways (separate runs: one CUPTI subscriber per process).
  job() {  # job NAME [record args...] -- cross_rank.py args
    local name=$1; shift
    local pre=()
    while [ $# -gt 0 ] && [ "$1" != "--" ]; do pre+=("$1"); shift; done
    shift
    local cmd=("$TORCHRUN" --standalone --nproc_per_node "$G" "$ROOT/examples/workloads/cross_rank.py" "$@")
    local t0=$SECONDS
    if [ ${#pre[@]} -gt 0 ]; then
      COMMLENS_JOB_ID="$name" timeout 300 "$COMMLENS" record "${pre[@]}" -- "${cmd[@]}" > "$DEST/$name.log" 2>&1
    else
      timeout 300 "${cmd[@]}" > "$DEST/$name.log" 2>&1
    fi
    echo "$name: rc=$? $((SECONDS - t0)) s: $(ls "$DEST/$name" 2>/dev/null | tr '\n' ' ')"
  }
  job slow-kineto -- slow --slow-kind compute --steps 6 --out "$DEST/slow-kineto"
  job slow-rec -o "$DEST/slow-rec" --cupti --sample-hz 100 -- \
    slow --slow-kind compute --steps 6 --no-profile --out "$DEST/slow-rec-steps"
  # The same recording with the kernel-channel events off: NCCL's ops timed by CUPTI's
  # kernels alone (the launch bracketing the reader relies on).
  job slow-rec-nokernel -o "$DEST/slow-rec-nokernel" --cupti --events coll,p2p,api,launch -- \
    slow --slow-kind compute --steps 6 --no-profile --out "$DEST/slow-rec-nokernel-steps"
  # 3. The cost, every op timed and CUPTI on, against the same steps with both off.
  if [ "${STEPS_AB:-0}" -gt 0 ]; then
    OUT="$DEST" TAG=cupti CUPTI=1 STEPS="$STEPS_AB" NGPU=$G "$(dirname "$0")/record_ab.sh" \
      > "$DEST/record_ab_cupti.txt" 2>&1
    tail -6 "$DEST/record_ab_cupti.txt"
  fi
else
  echo "one GPU: the two-rank jobs and the cost are left for a 2-GPU machine"
fi
cd "$DEST" && tar czf "${OUT:-$ROOT/device-out}/cupti.tgz" . && echo "cupti.tgz written"
