#!/usr/bin/env bash
# On a GPU machine: the MoE workload under Nsight Systems with GPU metrics sampled at
# 1 kHz, for the importer's counter series (the GPU_METRICS table).
#   scripts/device/nsys_metrics.sh     # results in $OUT/nsys-metrics/
# Needs .nsysdeps/ carried (see nsys_samples.sh).
set -u
ROOT=$(pwd)
NSYS=${NSYS:-/opt/nvidia/nsight-compute/2025.3.1/host/target-linux-x64/nsys}
export LD_LIBRARY_PATH="$ROOT/.nsysdeps/root/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}"
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 OMP_NUM_THREADS=4
DEST="${OUT:-$ROOT/device-out}/nsys-metrics"
mkdir -p "$DEST"
work=/tmp/nsys-metrics && rm -rf "$work" && mkdir -p "$work"
"$NSYS" profile --help > "$work/profile-help.txt" 2>&1

NGPU=$(nvidia-smi -L | grep -c '^GPU')
[ "$NGPU" -gt 4 ] && NGPU=4
NSYS="$NSYS" work="$work" torchrun --standalone --nproc_per_node "$NGPU" --no-python \
  bash -c '"$NSYS" profile -t cuda,nvtx --gpu-metrics-devices=all --gpu-metrics-frequency=1000 --force-overwrite true -o "$work/rank$RANK" python "$0" "$@"' \
  "$ROOT/examples/workloads/train.py" --workload moe --no-profile --steps 3 --out "$work/unused" \
  > "$DEST/profile.log" 2>&1
echo "profile rc=$?"
tail -5 "$DEST/profile.log"
for rep in "$work"/*.nsys-rep; do
  base=$(basename "$rep" .nsys-rep)
  "$NSYS" export --type sqlite --include-blobs=true --force-overwrite true -o "$work/$base.sqlite" "$rep" >> "$DEST/export.log" 2>&1
  gzip -c "$work/$base.sqlite" > "$DEST/$base.sqlite.gz"
  python3 -c "
import sqlite3,sys
c=sqlite3.connect('$work/$base.sqlite')
for (t,) in c.execute(\"select name from sqlite_master where type='table' and (name like '%METRIC%' or name like 'GENERIC%' or name like '%NIC%')\"):
    print(t, c.execute('select count(*) from '+t).fetchone()[0])
"
done
ls -la "$DEST"
