#!/usr/bin/env bash
# The CUPTI tracer's checks on the GPU machine (issue 28), in one call; what it writes is
# analyzed here afterwards (the portable build has no importers).
#   1. cupti_gpu_test: CUPTI's backend traces a small CUDA program and an NVTX range, and
#      steps aside for another subscriber (one process each);
#   2. with 2+ GPUs, the slow-compute job of examples/workloads/cross_rank.py twice: under
#      the PyTorch profiler (Kineto, rank<R>.json.gz) and under `commlens record --cupti`
#      (NVTX "step N" ranges mark its steps), for kernel counts, compute and
#      communication per step, and the late rank's cause on the recording; and the same
#      job on gloo, both ways (a job without NCCL: the tracer started by CUDA's injection);
#   3. with 2+ GPUs and STEPS_AB > 0, scripts/device/record_ab.sh with CUPTI=1: the
#      recorder's step-time cost with the tracer (on and off blocks in one run); AB_EVENTS
#      gives record's --events there (its default mask when empty), AB_KINDS the
#      --cupti-kinds of each run ("kernel kernel,api all": three runs).
#   CHECKS="gpu-test slow gloo pipeline" (the default: all but the cost) names the parts
#   to run; STEPS_AB > 0 adds the cost.
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
# libcupti: the CUDA toolkit's, else the nvidia-cuda-cupti wheel's beside PyTorch.
CUPTI_LIB=${CUPTI_LIB:-}
for c in "${CUDA_HOME:-/usr/local/cuda}/lib64/libcupti.so.13" "${CUDA_HOME:-/usr/local/cuda}/extras/CUPTI/lib64/libcupti.so.13" \
         "$CU13_LIB/libcupti.so.13"; do
  [ -z "$CUPTI_LIB" ] && [ -e "$c" ] && CUPTI_LIB=$c
done
mkdir -p "$DEST"
{
  nvidia-smi -L
  "$PY" -c "import torch; print('torch', torch.__version__, 'nccl', torch.cuda.nccl.version())"
  ls "$CU13_LIB" | grep -i cupti
  echo "libcupti: $CUPTI_LIB"
} > "$DEST/machine.txt" 2>&1

# 1. The GPU test, each case in a process of its own (CUPTI's state is per process).
CHECKS=${CHECKS:-gpu-test slow gloo pipeline}
wants() { case " $CHECKS " in *" $1 "*) return 0 ;; esac; return 1; }
wants gpu-test &&
for case in TracesASmallCudaProgram NamesTheLaunchStreamWithTheDefaultKinds StepsAsideForAnotherSubscriber; do
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
      COMMLENS_JOB_ID="$name" timeout 100 "$COMMLENS" record "${pre[@]}" -- "${cmd[@]}" > "$DEST/$name.log" 2>&1
    else
      timeout 100 "${cmd[@]}" > "$DEST/$name.log" 2>&1
    fi
    echo "$name: rc=$? $((SECONDS - t0)) s: $(ls "$DEST/$name" 2>/dev/null | tr '\n' ' ')"
  }
  if wants slow; then
    job slow-kineto -- slow --slow-kind compute --steps 6 --out "$DEST/slow-kineto"
    job slow-rec -o "$DEST/slow-rec" --cupti="$CUPTI_LIB" --sample-hz 100 -- \
      slow --slow-kind compute --steps 6 --no-profile --out "$DEST/slow-rec-steps"
    # The same recording with every kind, the CUDA calls too: NCCL's ops joined to their
    # kernels by the launch calls' correlation ids rather than by stream order.
    job slow-rec-all -o "$DEST/slow-rec-all" --cupti="$CUPTI_LIB" --cupti-kinds all -- \
      slow --slow-kind compute --steps 6 --no-profile --out "$DEST/slow-rec-all-steps"
  fi
  # The same job on gloo (no NCCL in the job): the tracer starts from CUDA's injection,
  # and the recording still holds every rank's kernels, as the profiler's trace does.
  if wants gloo; then
    job gloo-kineto -- slow --backend gloo --slow-kind compute --steps 6 --out "$DEST/gloo-kineto"
    job gloo-rec -o "$DEST/gloo-rec" --cupti="$CUPTI_LIB" --sample-hz 100 -- \
      slow --backend gloo --slow-kind compute --steps 6 --no-profile --out "$DEST/gloo-rec-steps"
  fi
  # With 4 GPUs, a 4-stage 1F1B pipeline recorded so: its bubble from the GPUs' idle time.
  if [ "$NGPU" -ge 4 ] && wants pipeline; then
    t0=$SECONDS
    COMMLENS_JOB_ID=pp-rec timeout 100 "$COMMLENS" record -o "$DEST/pp-rec" --cupti="$CUPTI_LIB" -- \
      "$TORCHRUN" --standalone --nproc_per_node 4 "$ROOT/examples/workloads/pipeline.py" --schedule megatron \
      --layers 16 --tokens 8192 --steps 6 --no-profile --out "$DEST/pp-rec-steps" > "$DEST/pp-rec.log" 2>&1
    echo "pp-rec: rc=$? $((SECONDS - t0)) s: $(ls "$DEST/pp-rec" 2>/dev/null | tr '\n' ' ')"
  fi
  # 3. The cost, every op timed and CUPTI on, against the same steps with both off.
  #    One run per AB_KINDS entry (record's --cupti-kinds; "all" when unset).
  if [ "${STEPS_AB:-0}" -gt 0 ]; then
    for kinds in ${AB_KINDS:-all}; do
      tag=cupti-${kinds//,/-}
      OUT="$DEST" TAG=$tag CUPTI="${CUPTI_LIB:-1}" CUPTI_KINDS=$kinds EVENTS="${AB_EVENTS:-}" STEPS="$STEPS_AB" \
        NGPU=$G "$(dirname "$0")/record_ab.sh" > "$DEST/record_ab_$tag.txt" 2>&1
      echo "record_ab $tag:"; grep -E "recorder on|rc=" "$DEST/record_ab_$tag.txt"
    done
  fi
else
  echo "one GPU: the two-rank jobs and the cost are left for a 2-GPU machine"
fi
# The A/B runs' long recordings stay there (their own record_ab-*.tgz come back).
cd "$DEST" && tar czf "${OUT:-$ROOT/device-out}/cupti.tgz" --exclude='./record_ab-*/trace' . && echo "cupti.tgz written"
