#!/usr/bin/env bash
# On a GPU machine: the example workloads under Nsight Systems, exported to SQLite, for
# the Nsight importer's samples and golden tests (issue 10), and the same workloads under
# the PyTorch profiler (one CUPTI subscriber per process: two runs) for comparison.
#   scripts/device/nsys_samples.sh            # results in $OUT/nsys/
#   LAUNCH=wrap      nsys around torchrun: one report holding every rank's process
#   LAUNCH=per-rank  torchrun --no-python around nsys: one report per rank (default)
#   WORKLOADS="ddp fsdp moe"  STEPS=4  TRACE=cuda,nvtx
# Needs libdw.so.1 and libelf.so.1 for nsys's importer: carry .nsysdeps/ made here with
#   mkdir .nsysdeps && cd .nsysdeps && apt-get download libdw1 libelf1 && for f in *.deb; do dpkg -x $f root; done
set -u
ROOT=$(pwd)
NSYS=${NSYS:-/opt/nvidia/nsight-compute/2025.3.1/host/target-linux-x64/nsys}
export LD_LIBRARY_PATH="$ROOT/.nsysdeps/root/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}"
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 OMP_NUM_THREADS=4
DEST="${OUT:-$ROOT/device-out}/nsys"
LAUNCH=${LAUNCH:-per-rank}
STEPS=${STEPS:-4}
TRACE=${TRACE:-cuda,nvtx}
mkdir -p "$DEST"
NGPU=$(nvidia-smi -L | grep -c '^GPU')
[ "$NGPU" -gt 4 ] && NGPU=4
"$NSYS" --version
# NVTX extended payloads (NCCL's sizes and communicators) are blobs in the export.
EXPORT_FLAGS=""
"$NSYS" export --help > "$DEST/export-help.txt" 2>&1
grep -q -- '--include-blobs' "$DEST/export-help.txt" && EXPORT_FLAGS="--include-blobs=true"
echo "export flags: ${EXPORT_FLAGS:-none}"
TRAIN="$ROOT/examples/workloads/train.py"
for w in ${WORKLOADS:-ddp fsdp moe}; do
  t0=$SECONDS
  work=/tmp/nsys-$w
  rm -rf "$work" && mkdir -p "$work"
  if [ "$LAUNCH" = wrap ]; then
    "$NSYS" profile -t "$TRACE" --force-overwrite true -o "$work/job" \
      torchrun --standalone --nproc_per_node "$NGPU" "$TRAIN" --workload "$w" \
      --no-profile --steps "$STEPS" --out "$work/unused" > "$DEST/$w.profile.log" 2>&1
  else
    NSYS="$NSYS" TRACE="$TRACE" work="$work" torchrun --standalone --nproc_per_node "$NGPU" --no-python \
      bash -c '"$NSYS" profile -t "$TRACE" --force-overwrite true -o "$work/rank$RANK" python "$0" "$@"' \
      "$TRAIN" --workload "$w" --no-profile --steps "$STEPS" --out "$work/unused" \
      > "$DEST/$w.profile.log" 2>&1
  fi
  rc=$?
  [ $rc -ne 0 ] && tail -20 "$DEST/$w.profile.log"
  mkdir -p "$DEST/nsys-$w-${NGPU}gpu"
  for rep in "$work"/*.nsys-rep; do
    base=$(basename "$rep" .nsys-rep)
    "$NSYS" export --type sqlite $EXPORT_FLAGS --force-overwrite true -o "$work/$base.sqlite" "$rep" \
      >> "$DEST/$w.export.log" 2>&1 || echo "export of $rep failed"
    gzip -c "$work/$base.sqlite" > "$DEST/nsys-$w-${NGPU}gpu/$base.sqlite.gz"
  done
  # The same job under the PyTorch profiler, for the side-by-side comparison.
  torchrun --standalone --nproc_per_node "$NGPU" "$TRAIN" --workload "$w" --steps "$STEPS" \
    --out "$DEST/kineto-$w-${NGPU}gpu" > "$DEST/$w.kineto.log" 2>&1 || echo "kineto run of $w failed"
  echo "$w: profile rc=$rc $((SECONDS - t0)) s; $(du -sh "$DEST/nsys-$w-${NGPU}gpu" | cut -f1) of exports"
done
