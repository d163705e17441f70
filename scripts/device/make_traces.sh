#!/usr/bin/env bash
# Runs on a machine with 2-4 GPUs: trains the example workloads under the PyTorch
# profiler and collects one Kineto trace per rank.
#   scripts/device/make_traces.sh OUTDIR [samples|large|all]
# samples: ddp, fsdp, moe (4 profiled steps, 4 layers) -> OUTDIR/{ddp,fsdp,moe}/rank<R>.json.gz
# large:   ddp, 4 layers, 60 profiled steps (~65 MB of JSON per rank, for benchmarks)
set -u
out=${1:?usage: make_traces.sh OUTDIR [samples|large|all]}
what=${2:-all}
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
export OMP_NUM_THREADS=4
ngpu=${NGPU:-$(nvidia-smi -L | wc -l)}
[ "$ngpu" -gt 4 ] && ngpu=4
here=$(cd "$(dirname "$0")/../.." && pwd)
run() {  # run NAME ARGS...
  local name=$1; shift
  local t0=$SECONDS
  torchrun --standalone --nproc_per_node "$ngpu" "$here/examples/workloads/train.py" \
    --out "$out/$name" "$@" > "$out/$name.log" 2>&1
  local rc=$?
  echo "$name: rc=$rc $((SECONDS - t0))s $(du -sh "$out/$name" 2>/dev/null | cut -f1)"
  [ $rc -ne 0 ] && tail -30 "$out/$name.log"
  return 0
}
mkdir -p "$out"
if [ "$what" = samples ] || [ "$what" = all ]; then
  run ddp --workload ddp
  run fsdp --workload fsdp
  run moe --workload moe
fi
if [ "$what" = large ] || [ "$what" = all ]; then
  run large --workload ddp --layers 4 --steps 60
fi
