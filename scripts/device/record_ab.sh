#!/usr/bin/env bash
# The recorder's step-time cost measured inside one run (issue 13): a DDP job under
# `commlens record` (plugin + samplers) whose rank 0 switches the plugin on and off every
# BLOCK steps through its control file (examples/workloads/train.py --control), so on- and
# off-steps share one process, one GPU state and one machine load; run-to-run spread
# (16-23 % here) does not enter. Prints the median step time of each state and the
# difference, per rank; the samplers run throughout (their cost is their own CPU, also
# reported in the samples file).
#   scripts/device/slim_build.sh build-portable .device/build   # here, then carry .device
#   scripts/device/record_ab.sh                                 # there; results in $OUT/record_ab/
set -u
ROOT=$(pwd)
BUILD=${COMMLENS_BUILD:-$ROOT/.device/build}
COMMLENS="$BUILD/src/cli/commlens"
. "$(dirname "$0")/torch_env.sh"
TAG=${TAG:-}        # a name for this run's folder (record_ab-TAG)
EVENTS=${EVENTS:-}  # record's --events (COMMLENS_EVENT_MASK words); the default mask when empty
KSAMPLE=${KSAMPLE:-}  # record's --kernel-sample N: kernel timing for 1 op in N (empty: every op)
LAUNCH_TIMING=${LAUNCH_TIMING:-}  # record's --launch-timing (events or off; the plugin's default when empty)
CUPTI=${CUPTI:-}    # 1 (or libcupti's path): record --cupti too (the CUPTI tracer pauses in the off blocks as the plugin does)
CUPTI_KINDS=${CUPTI_KINDS:-}  # record's --cupti-kinds (its default when empty)
TRAIN_ARGS=${TRAIN_ARGS:-}    # more train.py arguments (a larger model: --batch 32 --seq 1024)
STATES=${STATES:-1,0}         # the control file's states, a block each in turn: 1,0,h,0 adds host-times-only blocks
if ! [[ "$STATES" =~ ^([1hc],0,)*[1hc],0$ ]]; then
  echo "record_ab.sh: STATES=$STATES: each state must come before an off block (1,0 or 1,0,h,0)" >&2
  exit 2
fi
DEST="${OUT:-$ROOT/device-out}/record_ab${TAG:+-$TAG}"
mkdir -p "$DEST"
STEPS=${STEPS:-600}
BLOCK=${BLOCK:-20}
HZ=${HZ:-100}
CONTROL="$DEST/control"
echo 1 > "$CONTROL"
"$COMMLENS" record -o "$DEST/trace" --sample-hz "$HZ" --control "$CONTROL" ${EVENTS:+--events "$EVENTS"} \
  ${KSAMPLE:+--kernel-sample "$KSAMPLE"} ${LAUNCH_TIMING:+--launch-timing "$LAUNCH_TIMING"} ${CUPTI:+--cupti$([ "$CUPTI" = 1 ] || echo "=$CUPTI")} ${CUPTI_KINDS:+--cupti-kinds "$CUPTI_KINDS"} -- \
  "$TORCHRUN" --standalone --nproc_per_node "$NGPU" "$ROOT/examples/workloads/train.py" \
  --workload ddp --no-profile --steps "$STEPS" --out "$DEST/steps" $TRAIN_ARGS \
  --control "$CONTROL" --control-block "$BLOCK" --control-states "$STATES" > "$DEST/run.log" 2>&1
echo "record: rc=$?"
# Per rank: each recorder-on block against the mean of the off blocks beside it (steps 3..
# of a block: the plugin polls the control file every 20 ms; after the first 60 steps),
# so slow drift over the run (clocks, temperature) cancels; the median of those paired
# differences, with a 95 % bootstrap interval, and the same estimator on off blocks
# against their off neighbours (a null: what the noise alone gives). With STATES=1,0,h,0
# the same for the blocks recorded with host times only (h), and the difference: what
# GPU timing itself costs, measured inside one run.
"$PY" - "$DEST/steps" "$BLOCK" <<'PYEOF'
import glob, random, statistics, sys
folder, block = sys.argv[1], int(sys.argv[2])
NAMES = {"1": "recorder on", "h": "host times only", "c": "count only"}
def paired(meds, state, gap):
    out = []
    for b, (s, m) in sorted(meds.items()):
        if s == state and meds.get(b - gap, ("",))[0] == "0" and meds.get(b + gap, ("",))[0] == "0":
            ref = (meds[b - gap][1] + meds[b + gap][1]) / 2
            out.append((m - ref) / ref * 100)
    return out
def interval(stat, *samples):
    rnd = random.Random(1)
    boots = sorted(stat(*(rnd.choices(d, k=len(d)) for d in samples)) for _ in range(2000))
    return boots[50], boots[1949]
median = statistics.median
for path in sorted(glob.glob(folder + "/rank*.steps.txt")):
    rows = [l.split() for l in open(path) if l.strip()]
    blocks = {}
    for i, (t, state) in enumerate(rows):
        if i >= 60 and i % block >= 3:
            blocks.setdefault(i // block, (state, []))[1].append(float(t))
    meds = {b: (s, median(v)) for b, (s, v) in blocks.items()}
    null = paired(meds, "0", 2)
    steps = sorted(float(t) for t, _ in rows[60:])
    name = path.split("/")[-1]
    if not null:
        print(f"{name}: too few blocks to compare ({len(rows)} steps of {block})")
        continue
    nlo, nhi = interval(median, null)
    print(f"{name}: null (off vs off) {median(null):+.2f} % ({nlo:+.2f} .. {nhi:+.2f}); median step "
          f"{steps[len(steps) // 2] * 1e3:.3f} ms")
    diffs = {}
    for state in sorted({s for s, _ in meds.values()} - {"0"}, key=lambda s: "1hc".find(s)):
        d = paired(meds, state, 1)
        if not d:
            continue
        diffs[state] = d
        lo, hi = interval(median, d)
        print(f"  {NAMES.get(state, state)} vs off {median(d):+.2f} % (95 % interval {lo:+.2f} .. {hi:+.2f}, "
              f"{len(d)} block pairs)")
        # Where the cost lies in the distribution: a cost paid every step moves every
        # quantile, a stall now and then only the upper ones.
        on = sorted(v for s, vs in blocks.values() if s == state for v in vs)
        off = sorted(v for s, vs in blocks.values() if s == "0" for v in vs)
        q = lambda v, p: v[int(p * (len(v) - 1))]
        print("    minus off, ms: " + ", ".join(f"p{int(p * 100)} {(q(on, p) - q(off, p)) * 1e3:+.3f}"
                                              for p in (0.1, 0.25, 0.5, 0.75, 0.9)))
    if "1" in diffs and "h" in diffs:
        share = lambda a, b: median(a) - median(b)
        lo, hi = interval(share, diffs["1"], diffs["h"])
        print(f"  GPU timing's share (on minus host times only) {share(diffs['1'], diffs['h']):+.2f} points "
              f"(95 % interval {lo:+.2f} .. {hi:+.2f})")
PYEOF
grep -h "commlens record" "$DEST/run.log" | head -3
ls "$DEST/trace" | head
# What the recording holds: ops, GPU-timed ones, and the launch timer's launches timed and not.
"$PY" "$ROOT/examples/workloads/native_trace.py" "$DEST"/trace/*.rank*.cltrace 2>&1 | sed "s|$DEST/trace/||"
# The recordings of a long run are large: kept there unless TAR_TRACES=1.
cd "$DEST" && tar czf "${OUT:-$ROOT/device-out}/record_ab${TAG:+-$TAG}.tgz" $([ "${TAR_TRACES:-0}" = 1 ] || echo --exclude='*.cltrace') . &&
  echo "record_ab.tgz written"
