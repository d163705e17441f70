#!/usr/bin/env bash
# Checks the commlens NCCL profiler plugin on a GPU machine (budget: about 4 minutes on
# 4 GPUs). Run from the repository root with build-portable/ built and carried:
#
#   scripts/device/recorder.sh            # the check; results in $OUT/recorder/
#   scripts/device/recorder.sh --dry-run  # no GPU: checks the plugin file and the scripts
#
# One torchrun job (examples/workloads/ddp_plugin_check.py, DDP on up to 4 GPUs) runs with
# NCCL_PROFILER_PLUGIN set. In that same job: step times with recording on and off in
# alternating blocks, a PyTorch-profiler window to compare against, then each rank kills
# itself with SIGKILL after its last flush. examples/workloads/ddp_plugin_compare.py then
# checks counts, ops, GPU durations (<= 5% median), overhead (<= 1% median) and that the
# killed job's traces read. If time is left, a short run without the plugin gives a
# cross-run step-time reference.
#
# Output: $OUT/recorder/summary.txt and $OUT/recorder/recorder_details.tar.gz (native
# traces, Kineto traces, step times, metadata, logs).
set -u

DRY_RUN=0
[ "${1:-}" = "--dry-run" ] && DRY_RUN=1
ROOT=$(pwd)
PLUGIN="${COMMLENS_PLUGIN:-$ROOT/build-portable/src/recorder/nccl_profiler/libnccl-profiler-commlens.so}"
WORKLOADS="$ROOT/examples/workloads"
DEST="${OUT:-$ROOT/device-out}/recorder"
PY="${PYTHON:-/opt/torch/.venv/bin/python3}"
[ -x "$PY" ] || PY=$(command -v python3)
mkdir -p "$DEST"
SUMMARY="$DEST/summary.txt"
: > "$SUMMARY"

say() { echo "recorder: $*" | tee -a "$SUMMARY"; }
die() { say "FAIL: $*"; exit 1; }

# --- what needs no GPU ---------------------------------------------------------------
[ -f "$WORKLOADS/ddp_plugin_check.py" ] || die "run from the repository root (no examples/workloads here)"
[ -f "$PLUGIN" ] || die "plugin not built: $PLUGIN (build build-portable first)"
[ -n "$PY" ] || die "no python3"
if command -v readelf > /dev/null; then
  needed=$(readelf -dW "$PLUGIN" | sed -n 's/.*Shared library: \[\(.*\)\]/\1/p' | tr '\n' ' ')
  say "plugin $PLUGIN needs: $needed"
fi
"$PY" - "$PLUGIN" <<'EOF' || die "the plugin does not load or lacks its ABI tables"
import ctypes, sys
lib = ctypes.CDLL(sys.argv[1])
for sym in ("ncclProfiler_v4", "ncclProfiler_v5", "ncclProfiler_v6"):
    getattr(lib, sym)
EOF
"$PY" -m py_compile "$WORKLOADS/ddp_plugin_check.py" "$WORKLOADS/ddp_plugin_compare.py" \
  "$WORKLOADS/native_trace.py" || die "python scripts do not compile"
if [ $DRY_RUN = 1 ]; then
  say "dry run OK: plugin loads with its three ABI tables, scripts compile ($("$PY" --version 2>&1))"
  exit 0
fi

# --- the GPU run ----------------------------------------------------------------------
command -v nvidia-smi > /dev/null || die "nvidia-smi not found"
NGPU=$(nvidia-smi -L 2> /dev/null | grep -c '^GPU')
[ "$NGPU" -ge 2 ] || die "need at least 2 GPUs, found $NGPU"
[ "$NGPU" -gt 4 ] && NGPU=4
"$PY" -c "import torch; assert torch.cuda.is_available()" 2> /dev/null || die "$PY has no CUDA-enabled torch"
say "$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1) x $NGPU, $("$PY" -c 'import torch; print("torch", torch.__version__, "nccl", ".".join(map(str, torch.cuda.nccl.version())))')"

WORK=$(mktemp -d /tmp/commlens-recorder.XXXXXX)
RUN="$WORK/run"
mkdir -p "$RUN/native" "$RUN/logs"
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
export OMP_NUM_THREADS=4
TORCHRUN=("$PY" -m torch.distributed.run --standalone --nproc_per_node "$NGPU")

t0=$SECONDS
NCCL_PROFILER_PLUGIN="$PLUGIN" COMMLENS_OUT="$RUN/native" COMMLENS_CONTROL="$RUN/control" \
  COMMLENS_CONTROL_POLL_MS=5 COMMLENS_FLUSH_INTERVAL_MS=200 \
  NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,PROFILE \
  timeout 170 "${TORCHRUN[@]}" "$WORKLOADS/ddp_plugin_check.py" --out "$RUN" > "$RUN/logs/torchrun.log" 2>&1
rc=$?
say "plugin run: exit $rc after $((SECONDS - t0)) s (non-zero is expected: each rank ends with SIGKILL)"
[ $rc -eq 124 ] && say "the run hit its 170 s timeout"
metas=$(ls "$RUN"/meta/rank*.json 2> /dev/null | wc -l)
if [ "$metas" -ne "$NGPU" ]; then
  say "only $metas of $NGPU ranks finished their phases; end of the log:"
  tail -40 "$RUN/logs/torchrun.log" | tee -a "$SUMMARY"
fi
loaded=$(grep -m1 -o "PROFILER/Plugin: Loaded [^ ]* (v[0-9])" "$RUN/logs/torchrun.log")
say "NCCL says: ${loaded:-no 'PROFILER/Plugin: Loaded' line}"
grep -m3 "commlens" "$RUN/logs/torchrun.log" | sed 's/^/recorder:   /' | tee -a "$SUMMARY"
ls -la "$RUN/native" | tail -n +2 | sed 's/^/recorder:   /' | tee -a "$SUMMARY"

"$PY" "$WORKLOADS/native_trace.py" "$RUN"/native/*.cltrace 2>&1 | sed 's/^/recorder: /' | tee -a "$SUMMARY"
"$PY" "$WORKLOADS/ddp_plugin_compare.py" "$RUN" --summary "$RUN/compare.txt" > "$RUN/logs/compare.log" 2>&1
compare_rc=$?
if [ -f "$RUN/compare.txt" ]; then
  sed 's/^/recorder: /' "$RUN/compare.txt" | tee -a "$SUMMARY"
else
  say "FAIL: the comparison script stopped early:"
  tail -20 "$RUN/logs/compare.log" | tee -a "$SUMMARY"
fi

# commlens analyze on the native traces, where this build has the verb.
CLI="$ROOT/build-portable/src/cli/commlens"
if [ -x "$CLI" ] && "$CLI" analyze --help > /dev/null 2>&1; then
  "$CLI" analyze "$RUN/native" > "$RUN/logs/analyze.txt" 2>&1
  say "commlens analyze on the native traces: exit $? (output in the tarball, logs/analyze.txt)"
fi

# A cross-run reference without the plugin, if the budget allows.
if [ $((SECONDS - t0)) -lt 110 ]; then
  t1=$SECONDS
  mkdir -p "$WORK/baseline"
  COMMLENS_FLUSH_INTERVAL_MS=1 timeout 60 "${TORCHRUN[@]}" "$WORKLOADS/ddp_plugin_check.py" \
    --out "$WORK/baseline" --blocks 8 --profile-steps 1 --late-ops 0 --no-kill > "$RUN/logs/baseline.log" 2>&1
  say "baseline run without the plugin: exit $? after $((SECONDS - t1)) s"
  "$PY" - "$WORK/baseline/steps" "$RUN/steps" <<'EOF' 2>&1 | sed 's/^/recorder: /' | tee -a "$SUMMARY"
import glob, os, statistics, sys
def med(d, want):
    xs = []
    for p in glob.glob(os.path.join(d, "rank*.tsv")):
        for line in list(open(p))[1:]:
            ph, on, s = line.split("\t")
            if ph == "overhead" and (want is None or int(on) == want):
                xs.append(float(s))
    return statistics.median(xs) if xs else float("nan"), len(xs)
b, nb = med(sys.argv[1], None)
on, non = med(sys.argv[2], 1)
off, noff = med(sys.argv[2], 0)
print(f"cross-run step time (all ranks): no plugin {b*1e3:.3f} ms ({nb}), plugin recording {on*1e3:.3f} ms ({non}), "
      f"plugin off {off*1e3:.3f} ms ({noff}); recording vs no plugin {(on/b-1)*100:+.2f}% (different runs)")
EOF
fi

# --- results --------------------------------------------------------------------------
tar -C "$RUN" -czf "$DEST/recorder_details.tar.gz" native kineto steps meta logs compare.txt 2> /dev/null
size=$(stat -c %s "$DEST/recorder_details.tar.gz" 2> /dev/null || echo 0)
if [ "$size" -gt 8000000 ]; then
  tar -C "$RUN" -czf "$DEST/recorder_details.tar.gz" native kineto/rank0.json.gz steps meta compare.txt 2> /dev/null
  say "details trimmed to rank 0's Kineto trace to stay under 8 MB"
fi
say "details: $DEST/recorder_details.tar.gz ($(stat -c %s "$DEST/recorder_details.tar.gz") bytes); total $((SECONDS - t0)) s"
rm -rf "$WORK"
[ $compare_rc -eq 0 ] && say "RESULT: PASS" || say "RESULT: FAIL (see the FAIL lines above)"
exit $compare_rc
