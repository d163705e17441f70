#!/usr/bin/env bash
# The live hang alarm on GPUs (issue 32, commlens_last_collective_age_seconds): `commlens
# record --prometheus` around a torchrun job of 2 ranks (2 GPUs or more) in which rank 1
# sleeps STALL seconds (default 15) before an all-reduce in the middle of its run, while
# rank 0 waits inside that all-reduce (examples/workloads/stuck_rank.py). The metrics
# file is copied every 0.5 s while the job runs; the script prints each rank's age over
# time and exits non-zero when the job failed or the stuck rank's age never exceeded
# STALL - 5 seconds (10 s by default). Before the fix every age read below 1 s.
#   scripts/device/slim_build.sh build-portable .device/build   # here, then carry .device
#   scripts/device/stuck_rank.sh                                # there; results in $OUT/stuck_rank/
set -u
ROOT=$(pwd)
BUILD=${COMMLENS_BUILD:-$ROOT/.device/build}
COMMLENS="$BUILD/src/cli/commlens"
. "$(dirname "$0")/torch_env.sh"
DEST="${OUT:-$ROOT/device-out}/stuck_rank"
STALL=${STALL:-15}
[ -x "$COMMLENS" ] || { echo "stuck_rank: no $COMMLENS (build it, slim it and carry it: see the top of this script)"; exit 2; }
[ "$NGPU" -ge 2 ] || { echo "stuck_rank: needs 2 GPUs, found $NGPU"; exit 2; }
rm -rf "$DEST"
mkdir -p "$DEST/snaps"
PROM="$DEST/commlens.prom"

"$COMMLENS" record -o "$DEST/trace" --prometheus "$PROM" -- \
  "$TORCHRUN" --standalone --nproc_per_node 2 "$ROOT/examples/workloads/stuck_rank.py" --stall "$STALL" \
  > "$DEST/job.log" 2>&1 &
record=$!
i=1000
while kill -0 "$record" 2> /dev/null; do
  now=$(date +%s.%N)
  cp "$PROM" "$DEST/snaps/$i.prom" 2> /dev/null && echo "$now" > "$DEST/snaps/$i.time"
  i=$((i + 1))
  sleep 0.5
done
wait "$record"
rc=$?
echo "stuck_rank: commlens record exited $rc ($(nvidia-smi --query-gpu=name --format=csv,noheader | head -1) x 2," \
  "$("$PY" -c 'import torch; print("torch", torch.__version__, "nccl", ".".join(map(str, torch.cuda.nccl.version())))'))"
grep -h "stall begins\|stall ends" "$DEST/job.log"

"$PY" - "$DEST" "$STALL" "$rc" << 'PYEOF'
import glob, os, re, sys

dest, stall, rc = sys.argv[1], float(sys.argv[2]), int(sys.argv[3])
begins = [float(t) for t in re.findall(r"stall begins at ([0-9.]+)", open(os.path.join(dest, "job.log")).read())]
t0 = min(begins) if begins else None
rows = []
for prom in sorted(glob.glob(os.path.join(dest, "snaps", "*.prom"))):
    when = float(open(prom[:-5] + ".time").read())
    ages = {}
    for line in open(prom):
        m = re.match(r'commlens_last_collective_age_seconds\{.*rank="(\d+)"\} ([0-9.e+-]+)$', line.strip())
        if m:
            ages[int(m.group(1))] = float(m.group(2))
    rows.append((when, ages))
print("t: seconds since the stall began (the snapshot's time); age of each rank in seconds")
print(f"{'t':>7} {'rank 0':>8} {'rank 1':>8}")
for when, ages in rows:
    t = when - t0 if t0 is not None else when - rows[0][0]
    print(f"{t:7.1f} " + " ".join(f"{ages[r]:8.2f}" if r in ages else f"{'-':>8}" for r in (0, 1)))
stuck = max((a.get(1, 0.0) for _, a in rows), default=0.0)
waiter = max((a.get(0, 0.0) for _, a in rows), default=0.0)
need = stall - 5
print(f"largest age: rank 1 (stuck) {stuck:.2f} s, rank 0 (waiting in the all-reduce) {waiter:.2f} s; "
      f"{len(rows)} snapshots")
ok = rc == 0 and stuck > need
print(("PASS" if ok else "FAIL") + f": the stuck rank's age {'exceeded' if stuck > need else 'never exceeded'} "
      f"{need:g} s" + ("" if rc == 0 else f"; the job exited {rc}"))
sys.exit(0 if ok else 1)
PYEOF
