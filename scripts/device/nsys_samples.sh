#!/usr/bin/env bash
# On a GPU machine: the example workloads under Nsight Systems, exported to SQLite, for
# the Nsight importer's samples and golden tests (issue 10). One report per workload,
# with every rank's process in it (nsys around torchrun), NCCL's NVTX ranges and PyTorch's
# autograd NVTX ranges; then each exported with `nsys export --type sqlite` and gzipped.
#   scripts/device/nsys_samples.sh            # results in $OUT/nsys/
# Needs libdw.so.1 and libelf.so.1 for nsys's importer: carry .nsysdeps/ made here with
#   mkdir .nsysdeps && cd .nsysdeps && apt-get download libdw1 libelf1 && for f in *.deb; do dpkg -x $f root; done
set -u
ROOT=$(pwd)
NSYS=${NSYS:-/opt/nvidia/nsight-compute/2025.3.1/host/target-linux-x64/nsys}
export LD_LIBRARY_PATH="$ROOT/.nsysdeps/root/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}"
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 OMP_NUM_THREADS=4
DEST="${OUT:-$ROOT/device-out}/nsys"
mkdir -p "$DEST"
NGPU=$(nvidia-smi -L | grep -c '^GPU')
[ "$NGPU" -gt 4 ] && NGPU=4
"$NSYS" --version
for w in ${WORKLOADS:-ddp fsdp moe}; do
  t0=$SECONDS
  "$NSYS" profile -t cuda,nvtx,osrt --pytorch=autograd-nvtx --force-overwrite true -o "/tmp/nsys-$w" \
    torchrun --standalone --nproc_per_node "$NGPU" "$ROOT/examples/workloads/train.py" --workload "$w" \
    --no-profile --steps 4 --out "/tmp/unused-$w" > "$DEST/$w.profile.log" 2>&1
  rc=$?
  "$NSYS" export --type sqlite --force-overwrite true -o "/tmp/nsys-$w.sqlite" "/tmp/nsys-$w.nsys-rep" \
    > "$DEST/$w.export.log" 2>&1
  erc=$?
  gzip -c "/tmp/nsys-$w.sqlite" > "$DEST/nsys-$w-${NGPU}gpu.sqlite.gz"
  echo "$w: profile rc=$rc export rc=$erc $((SECONDS - t0)) s $(du -h "/tmp/nsys-$w.sqlite" | cut -f1) sqlite, $(du -h "$DEST/nsys-$w-${NGPU}gpu.sqlite.gz" | cut -f1) gz"
  [ $rc -ne 0 ] && tail -5 "$DEST/$w.profile.log"
done
