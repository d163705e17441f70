#!/usr/bin/env bash
# Records the pipeline jobs of examples/workloads/pipeline.py (issue 30) and the what-if /
# diff jobs of issue 31 on a 4-GPU machine (2 GPUs: the two-rank ones only), each under
# the PyTorch profiler and the commlens NCCL profiler plugin at once; with NSYS=1 the
# pipelines again under Nsight Systems, one report per rank, exported with and without
# payload blobs. One tarball per set in $OUT.
#   scripts/device/slim_build.sh build-portable .device/build   # here, then carry .device
#   SETS="pp whatif" scripts/device/pipeline_traces.sh           # there (pp-big: the pipelines, heavier)
#   SETS=nsys scripts/device/pipeline_traces.sh                  # (needs .nsysdeps, see nsys_samples.sh)
set -u
ROOT=$(pwd)
BUILD=${COMMLENS_BUILD:-$ROOT/.device/build}
PLUGIN="$BUILD/src/recorder/nccl_profiler/libnccl-profiler-commlens.so"
. "$(dirname "$0")/torch_env.sh"
export PYTHONUNBUFFERED=1
SETS=${SETS:-pp whatif}
ONLY=${ONLY:-}  # run names to run (space-separated), all when empty
OUTDIR="${OUT:-$ROOT/device-out}"
nvidia-smi -L > "$OUTDIR/gpus.txt"
"$PY" -c "import torch; print('torch', torch.__version__, 'nccl', torch.cuda.nccl.version())" >> "$OUTDIR/gpus.txt"

# run SET NAME NPROC SCRIPT ARGS...: Kineto traces in SET/NAME, native ones in SET/NAME/native.
run() {
  local set=$1 name=$2 nproc=$3 script=$4; shift 4
  [ -n "$ONLY" ] && [[ " $ONLY " != *" $name "* ]] && return 0
  [ "$nproc" -gt "$NGPU" ] && { echo "$name: skipped, needs $nproc GPUs"; return 0; }
  local dest="$OUTDIR/$set/$name" t0=$SECONDS
  mkdir -p "$dest"
  NCCL_PROFILER_PLUGIN="$PLUGIN" COMMLENS_OUT="$dest/native" COMMLENS_JOB_ID="$name" \
    timeout 120 "$TORCHRUN" --standalone --nproc_per_node "$nproc" \
    "$ROOT/examples/workloads/$script" "$@" --out "$dest" > "$dest.log" 2>&1
  local rc=$?
  echo "$name: rc=$rc $((SECONDS - t0)) s, $(ls "$dest" "$dest/native" 2>/dev/null | wc -l) files; $(tail -1 "$dest.log")"
  [ $rc -ne 0 ] && tail -15 "$dest.log"
  return 0
}

# nsys_run NAME NPROC SCRIPT ARGS...: one Nsight report per rank, exported twice.
NSYS=${NSYS_BIN:-/opt/nvidia/nsight-compute/2025.3.1/host/target-linux-x64/nsys}
nsys_run() {
  local name=$1 nproc=$2 script=$3; shift 3
  [ -n "$ONLY" ] && [[ " $ONLY " != *" $name "* ]] && return 0
  [ "$nproc" -gt "$NGPU" ] && { echo "$name: skipped, needs $nproc GPUs"; return 0; }
  local dest="$OUTDIR/nsys/$name" work="/tmp/nsys-$name" t0=$SECONDS
  rm -rf "$work"; mkdir -p "$dest" "$dest-noblobs" "$work"
  NSYS="$NSYS" work="$work" timeout 240 "$TORCHRUN" --standalone --nproc_per_node "$nproc" --no-python \
    bash -c '"$NSYS" profile -t cuda,nvtx --force-overwrite true -o "$work/rank$RANK" "$0" "$@"' \
    "$PY" "$ROOT/examples/workloads/$script" "$@" --no-profile --out "$work/run" > "$dest.log" 2>&1
  local rc=$?
  for rep in "$work"/*.nsys-rep; do
    local base; base=$(basename "$rep" .nsys-rep)
    "$NSYS" export --type sqlite --include-blobs=true --force-overwrite true -o "$work/$base.sqlite" "$rep" >> "$dest.log" 2>&1
    xz -T4 -c "$work/$base.sqlite" > "$dest/$base.sqlite.xz"
    "$NSYS" export --type sqlite --force-overwrite true -o "$work/$base-nb.sqlite" "$rep" >> "$dest.log" 2>&1
    xz -T4 -c "$work/$base-nb.sqlite" > "$dest-noblobs/$base.sqlite.xz"
  done
  cp "$work"/run/*.txt "$dest/" 2>/dev/null
  echo "$name (nsys): rc=$rc $((SECONDS - t0)) s; $(du -sh "$dest" | cut -f1)"
  [ $rc -ne 0 ] && tail -15 "$dest.log"
  return 0
}

for set in $SETS; do
  case $set in
    pp)
      run pp megatron-1f1b 4 pipeline.py --schedule megatron
      run pp megatron-1f1b-heavy 4 pipeline.py --schedule megatron --heavy-last 1.5
      run pp megatron-pp2-dp2 4 pipeline.py --schedule megatron --dp 2
      run pp torch-gpipe 4 pipeline.py --schedule gpipe
      run pp torch-1f1b 4 pipeline.py --schedule 1f1b
      run pp torch-1f1b-heavy 4 pipeline.py --schedule 1f1b --heavy-last 1.5
      run pp torch-interleaved 4 pipeline.py --schedule interleaved --stages-per-rank 2
      run pp torch-zero-bubble 4 pipeline.py --schedule zero-bubble --stages-per-rank 2
      run pp torch-interleaved-2r 2 pipeline.py --schedule interleaved --stages-per-rank 2 --layers 2 --dim 2048
      run pp megatron-2r 2 pipeline.py --schedule megatron --layers 2 --dim 2048
      ;;
    pp-big)
      # A model heavy enough that the pipeline's compute, not its launches, fills the
      # step: 16 layers a stage (8 a model chunk when interleaved), 8192-row micro-batches.
      big="--layers 16 --tokens 8192"
      run pp-big megatron-1f1b 4 pipeline.py --schedule megatron $big
      run pp-big megatron-1f1b-heavy 4 pipeline.py --schedule megatron --heavy-last 1.5 $big
      run pp-big torch-1f1b 4 pipeline.py --schedule 1f1b $big
      run pp-big torch-1f1b-heavy 4 pipeline.py --schedule 1f1b --heavy-last 1.5 $big
      run pp-big torch-gpipe 4 pipeline.py --schedule gpipe $big
      run pp-big torch-interleaved 4 pipeline.py --schedule interleaved --stages-per-rank 2 --layers 8 --tokens 8192
      ;;
    whatif)
      # Slow blocks inside one run: what-if predictions held against the clean blocks.
      run whatif ddp-slow-blocks 4 cross_rank.py slow --slow-kind compute --slow-rank 2 --slow-blocks 4 --steps 14
      run whatif pp-heavy-blocks 4 pipeline.py --schedule megatron --heavy-last 1.5 --heavy-blocks 4 --steps 14
      # Run-to-run diff: the same job twice, and once with 2 NCCL channels.
      run whatif ddp-a 4 train.py --workload ddp --steps 8
      run whatif ddp-b 4 train.py --workload ddp --steps 8
      NCCL_MAX_NCHANNELS=2 run whatif ddp-2ch 4 train.py --workload ddp --steps 8
      ;;
    nsys)
      export LD_LIBRARY_PATH="$ROOT/.nsysdeps/root/usr/lib/x86_64-linux-gnu:$LD_LIBRARY_PATH"
      nsys_run megatron-1f1b 4 pipeline.py --schedule megatron
      nsys_run torch-interleaved 4 pipeline.py --schedule interleaved --stages-per-rank 2
      nsys_run megatron-2r 2 pipeline.py --schedule megatron --layers 2 --dim 2048
      ;;
  esac
  # One tarball per set, in 15 MiB parts when larger (what comes back is 16 MiB a file):
  # cat SET.tar.* | tar x
  [ -d "$OUTDIR/$set" ] && (cd "$OUTDIR" && tar cf - "$set" | split -b 15M -d - "$set.tar." && rm -rf "$set" &&
    echo "$set: $(ls $set.tar.* | wc -l) part(s), $(cat $set.tar.* | wc -c) bytes")
done
