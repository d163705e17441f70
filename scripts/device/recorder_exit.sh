#!/usr/bin/env bash
# On a GPU machine (any number of GPUs): the commlens plugin inside real PyTorch + NCCL
# jobs that exit without finalizing NCCL (examples/workloads/exit_without_finalize.py),
# three ways, twice each. Every run must exit 0 and leave one readable trace per rank
# with an end record. Needs build-portable/ (the plugin) carried. Output: $OUT/exit/.
set -u
ROOT=$(pwd)
PLUGIN="$ROOT/build-portable/src/recorder/nccl_profiler/libnccl-profiler-commlens.so"
DEST="${OUT:-$ROOT/device-out}/exit"
PY=$(command -v python3)
NGPU=$(nvidia-smi -L | grep -c '^GPU')
[ "$NGPU" -gt 4 ] && NGPU=4
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
NCCL_LIB=$("$PY" -c 'import nvidia.nccl, os; print(os.path.join(list(nvidia.nccl.__path__)[0], "lib"))')
export LD_LIBRARY_PATH="$NCCL_LIB:${LD_LIBRARY_PATH:-}"
mkdir -p "$DEST"
status=0
for mode in return inflight finalize; do
  for run in 1 2; do
    out="$DEST/$mode-$run"
    mkdir -p "$out"
    NCCL_PROFILER_PLUGIN="$PLUGIN" COMMLENS_OUT="$out/" timeout 300 \
      torchrun --standalone --nproc_per_node "$NGPU" "$ROOT/examples/workloads/exit_without_finalize.py" \
      --mode "$mode" > "$out.log" 2>&1
    rc=$?
    files=$(ls "$out" | wc -l)
    echo "exit-test $mode run $run: rc=$rc, $files trace files, $(du -sh "$out" | cut -f1)"
    [ $rc -eq 0 ] && [ "$files" -ge "$NGPU" ] || { status=1; tail -20 "$out.log"; }
  done
done
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1
"$PY" -c 'import torch; print("torch", torch.__version__, "nccl", torch.cuda.nccl.version())'
exit $status
