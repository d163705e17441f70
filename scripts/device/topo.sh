#!/usr/bin/env bash
# commlens topo on the GPU machine, checked against nvidia-smi. Budget: 60 s (it needs
# about 10: one NVML/CUDA start-up and four nvidia-smi calls; the timeouts add up to 57).
#
#   scripts/device/topo.sh          # from the repository root; needs build-portable
#
# 1. build-portable/src/cli/commlens topo --check --json topo.json (text report too);
# 2. nvidia-smi topo -m, topo -p2p r, topo -p2p w and the GPU PCI bus ids, in this call;
# 3. tests/topo/nvsmi_compare.py: MATCH or MISMATCH per matrix;
# 4. a snapshot of the sysfs files commlens reads (tests/topo/sysfs_snapshot.py: the PCI
#    devices, class/infiniband, class/net, devices/system/node), checked by rebuilding the
#    report from it: `commlens topo --sysfs-root sysfs --gpu-facts topo.json` gives the same
#    matrices anywhere, so the snapshot can become a third golden.
# Writes $OUT/topo/topo_summary.txt and $OUT/topo/topo_details.tar.gz (all raw outputs and
# the snapshot). Exit status: 0 when everything matches, 1 otherwise.
#
# Dry run without a GPU (tests/topo/tools_test.py does this):
#   OUT=/tmp/o COMMLENS_TOPO_SYSFS_ROOT=<fake tree> COMMLENS_TOPO_GPU_FACTS=<topo.json> \
#   NVIDIA_SMI="<command printing saved outputs>" scripts/device/topo.sh
set -u

: "${OUT:?OUT must name the output folder}"
# Paths given in the environment are relative to where the script was started.
[ -n "${COMMLENS_BIN:-}" ] && COMMLENS_BIN=$(realpath -m "$COMMLENS_BIN")
OUT=$(realpath -m "$OUT")
cd "$(dirname "$0")/../.." || exit 1
DEST="$OUT/topo"
BIN=${COMMLENS_BIN:-build-portable/src/cli/commlens}
SYSFS_ROOT=${COMMLENS_TOPO_SYSFS_ROOT:-/}
read -r -a NVSMI <<< "${NVIDIA_SMI:-nvidia-smi}"
# No collective runs here, but keep the rule for every multi-GPU process.
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1

mkdir -p "$DEST" || exit 1
WORK=$(mktemp -d) || exit 1
trap 'rm -rf "$WORK"' EXIT
SUMMARY="$DEST/topo_summary.txt"
: > "$SUMMARY"
failed=0
say() { echo "$*" | tee -a "$SUMMARY"; }
fail() { say "FAIL: $*"; failed=1; }

PY=$(command -v python3 || true)
[ -z "$PY" ] && [ -x /opt/torch/.venv/bin/python3 ] && PY=/opt/torch/.venv/bin/python3
if [ -z "$PY" ]; then
  fail "no python3: cannot compare with nvidia-smi or take the sysfs snapshot"
fi
if [ ! -x "$BIN" ]; then
  fail "$BIN missing: build build-portable and carry it"
fi

extra=()
[ "$SYSFS_ROOT" != "/" ] && extra+=(--sysfs-root "$SYSFS_ROOT")
[ -n "${COMMLENS_TOPO_GPU_FACTS:-}" ] && extra+=(--gpu-facts "$COMMLENS_TOPO_GPU_FACTS")

say "== commlens topo --check ($(date -u +%FT%TZ), $(hostname))"
if [ -x "$BIN" ]; then
  start=$(date +%s%N)
  timeout 15 "$BIN" topo --check --json "$WORK/topo.json" "${extra[@]}" > "$WORK/topo.txt" 2> "$WORK/topo.err"
  rc=$?
  end=$(date +%s%N)
  say "commlens topo exit $rc (0 healthy, 1 findings) in $(( (end - start) / 1000000 )) ms"
  case $rc in
    0|1) ;;
    124) fail "commlens topo timed out after 15 s" ;;
    *) fail "commlens topo failed: $(head -c 2000 "$WORK/topo.err")" ;;
  esac
fi

say "== nvidia-smi"
for spec in "topo_m:topo -m" "p2p_r:topo -p2p r" "p2p_w:topo -p2p w" \
            "bus_ids:--query-gpu=index,pci.bus_id,name --format=csv,noheader"; do
  name=${spec%%:*}
  read -r -a args <<< "${spec#*:}"
  start=$(date +%s%N)
  if timeout 8 "${NVSMI[@]}" "${args[@]}" > "$WORK/nvsmi_$name.txt" 2> "$WORK/nvsmi_$name.err"; then
    end=$(date +%s%N)
    say "nvidia-smi ${args[*]}: $(( (end - start) / 1000000 )) ms"
  else
    fail "nvidia-smi ${args[*]}: $(head -c 500 "$WORK/nvsmi_$name.err")"
  fi
done

if [ -n "$PY" ] && [ -s "$WORK/topo.json" ]; then
  say "== comparison with nvidia-smi"
  "$PY" tests/topo/nvsmi_compare.py --topo-json "$WORK/topo.json" --topo-m "$WORK/nvsmi_topo_m.txt" \
    --p2p-r "$WORK/nvsmi_p2p_r.txt" --p2p-w "$WORK/nvsmi_p2p_w.txt" --bus-ids "$WORK/nvsmi_bus_ids.txt" \
    > "$WORK/compare.txt" 2>&1
  crc=$?
  tee -a "$SUMMARY" < "$WORK/compare.txt"
  [ $crc -eq 0 ] || fail "commlens and nvidia-smi disagree (compare exit $crc)"

  say "== sysfs snapshot"
  if timeout 5 "$PY" tests/topo/sysfs_snapshot.py --root "$SYSFS_ROOT" --out "$WORK/sysfs" > "$WORK/snapshot.txt" 2>&1; then
    tee -a "$SUMMARY" < "$WORK/snapshot.txt"
    # The snapshot must be enough to rebuild the same report elsewhere.
    timeout 5 "$BIN" topo --sysfs-root "$WORK/sysfs" --gpu-facts "$WORK/topo.json" --json "$WORK/replay.json" \
      > /dev/null 2> "$WORK/replay.err"
    "$PY" - "$WORK/topo.json" "$WORK/replay.json" > "$WORK/replay.txt" 2>&1 <<'EOF'
import json, sys
try:
    a, b = (json.load(open(p)) for p in sys.argv[1:3])
except (OSError, ValueError) as e:
    print("MISMATCH replay from the snapshot: %s" % e)
    sys.exit(1)
differ = [k for k in ("matrix", "p2p", "gpus", "nics", "numa_nodes", "net_interfaces") if a.get(k) != b.get(k)]
print("MISMATCH replay from the snapshot: %s differ" % ", ".join(differ) if differ else "MATCH replay from the snapshot")
sys.exit(1 if differ else 0)
EOF
    prc=$?
    tee -a "$SUMMARY" < "$WORK/replay.txt"
    [ $prc -eq 0 ] || fail "the sysfs snapshot does not rebuild the report"
  else
    tee -a "$SUMMARY" < "$WORK/snapshot.txt"
    fail "sysfs snapshot failed"
  fi
fi

{
  echo
  echo "== commlens topo report"
  cat "$WORK/topo.txt" 2>/dev/null
  echo
  echo "== nvidia-smi topo -m"
  cat "$WORK/nvsmi_topo_m.txt" 2>/dev/null
  echo
  echo "== nvidia-smi topo -p2p r / w"
  cat "$WORK/nvsmi_p2p_r.txt" "$WORK/nvsmi_p2p_w.txt" 2>/dev/null
} >> "$SUMMARY"

tar czf "$DEST/topo_details.tar.gz" -C "$WORK" . || fail "cannot write $DEST/topo_details.tar.gz"

echo
echo "topo summary:"
grep -E "^(MATCH|MISMATCH|FAIL|ERROR|commlens topo exit|nvidia-smi topo)" "$SUMMARY"
sed -n '/^Findings (--check)/,/^$/p' "$WORK/topo.txt" 2>/dev/null
echo "files: $SUMMARY $DEST/topo_details.tar.gz"
exit $failed
