#!/usr/bin/env bash
# Parity run of `commlens bench` against nccl-tests 2.19.6 on the GPU machine (4 GPUs),
# run by the lead from the repository root:   scripts/device/bench.sh [--dry-run]
#
# Needs: build-portable/ (the COMMLENS_PORTABLE build, with tests) and
# .device/nccl-tests/nccl-tests-sm90.tar.xz (nccl-tests v2.19.6 built for sm_90, ~1 MB).
# NCCL comes from the pip package (LD_LIBRARY_PATH), the same library for both tools.
#
# Steps, each bounded by a timeout:
#   1. for each collective, the parity sweeps, each repeated with the two tools interleaved
#      (nccl-tests <coll>_perf ... -g 4 -c 1, then commlens bench <coll> ... --json):
#        small  -b 8   -e 16M -n 1000 -w 20   x 5   (BENCH_SMALL_ITERS, BENCH_SMALL_REPS)
#        large  -b 32M -e 1G  -n 100  -w 10   x 3   (BENCH_LARGE_ITERS, BENCH_LARGE_REPS)
#        focus  -b 256K -e 16M -n 2000 -w 20  x 7   (BENCH_FOCUS_ITERS, BENCH_FOCUS_REPS)
#      "focus" adds runs where the operations last 22-45 us and the machine's run-to-run
#      noise is largest (1-4 MiB; the two sizes below it absorb the start-of-run slowdown);
#      it uses the small sweep's -e, so the buffers rotate the same way and runs pool.
#      A 1 MiB operation takes ~25 us here, so 100 iterations are a 2.5 ms window that one
#      host hiccup moves by several percent; 1000 iterations make it 25 ms. BENCH_SWEEPS
#      picks the sweeps ("small large" by default) so the two can go in separate calls;
#   2. all_reduce in 4 processes (torchrun-style variables, TCP rendezvous), and the same
#      under mpirun when it works;
#   3. the bench GPU tests (bench_gpu_test);
#   4. all_reduce with CUDA graphs (nccl-tests -G 1 against commlens --graph), if time is left;
#   5. tests/bench/parity/compare_parity.py writes $OUT/bench/parity.md; the raw outputs go
#      to $OUT/bench/raw.tar.gz. Raw folders of separate calls can be merged and compared
#      again: compare_parity.py RAW_DIR...
# BENCH_PARITY_ONLY=1 skips steps 2-4, BENCH_EXTRAS_ONLY=1 skips step 1; BENCH_BUDGET_S
# (default 560) bounds the whole script.
# --dry-run runs no GPU program: it prints the commands and feeds synthetic outputs to the
# comparer, to test the script anywhere.
set -u -o pipefail

cd "$(dirname "$0")/../.." || exit 1
DRY_RUN=0
[ "${1:-}" = "--dry-run" ] && DRY_RUN=1

BUILD=${COMMLENS_BUILD:-build-portable}
COMMLENS=$BUILD/src/cli/commlens
GPU_TEST=$BUILD/tests/bench/bench_gpu_test
NCCL_TESTS_TAR=.device/nccl-tests/nccl-tests-sm90.tar.xz
OUTDIR=${OUT:-/tmp/commlens-bench-out}/bench
WORK=$(mktemp -d /tmp/commlens-bench.XXXXXX)
RAW=$WORK/raw
NGPUS=4
SMALL_SWEEP=(-b 8 -e 16M -f 2 -n "${BENCH_SMALL_ITERS:-1000}" -w 20)
SMALL_REPS=${BENCH_SMALL_REPS:-5}
LARGE_SWEEP=(-b 32M -e 1G -f 2 -n "${BENCH_LARGE_ITERS:-100}" -w 10)
LARGE_REPS=${BENCH_LARGE_REPS:-3}
FOCUS_SWEEP=(-b 256K -e 16M -f 2 -n "${BENCH_FOCUS_ITERS:-2000}" -w 20)
FOCUS_REPS=${BENCH_FOCUS_REPS:-7}
SWEEPS=${BENCH_SWEEPS:-small large}
SWEEP=(-b 8 -e 1G -f 2 -n 50 -w 10)  # the graph-mode comparison
PARITY_ONLY=${BENCH_PARITY_ONLY:-0}  # 1: only the parity sweeps (no multi-process, tests, graphs)
EXTRAS_ONLY=${BENCH_EXTRAS_ONLY:-0}  # 1: skip the parity sweeps
COLLECTIVES=(${BENCH_COLLECTIVES:-all_reduce all_gather reduce_scatter alltoall broadcast reduce sendrecv})
BUDGET_S=${BENCH_BUDGET_S:-560}
START=$(date +%s)
mkdir -p "$OUTDIR" "$RAW"

# Every multi-GPU run: no NVLink multicast (NVLS) on this machine.
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1

log() { echo "[bench.sh +$(( $(date +%s) - START ))s] $*"; }
left() { echo $(( BUDGET_S - ($(date +%s) - START) )); }
STEPS=$RAW/steps.txt
: > "$STEPS"

# run NAME TIMEOUT_S CMD...: output to $RAW/NAME.txt, status to steps.txt; never aborts.
run() {
  local name=$1 limit=$2
  shift 2
  if [ "$DRY_RUN" = 1 ]; then
    echo "would run ($limit s): $*" | tee -a "$STEPS"
    return 0
  fi
  if [ "$(left)" -lt 20 ]; then
    log "skip $name: time budget spent"
    echo "$name skipped (budget)" >> "$STEPS"
    return 0
  fi
  (( limit > $(left) )) && limit=$(left)
  local t0=$(date +%s)
  timeout -k 5 "$limit" "$@" > "$RAW/$name.txt" 2>&1
  local rc=$?
  echo "$name rc=$rc $(( $(date +%s) - t0 ))s: $*" >> "$STEPS"
  log "$name: rc=$rc ($(( $(date +%s) - t0 )) s)"
  [ $rc -ne 0 ] && tail -n 5 "$RAW/$name.txt" | sed 's/^/    /'
  return 0
}

# --- environment --------------------------------------------------------------------
if [ "$DRY_RUN" = 0 ]; then
  PY=/opt/torch/.venv/bin/python3
  [ -x "$PY" ] || PY=python3
  NCCL_DIR=$("$PY" -c "import nvidia.nccl as m; print(m.__path__[0])" 2>/dev/null)
  if [ -z "$NCCL_DIR" ] || [ ! -e "$NCCL_DIR/lib/libnccl.so.2" ]; then
    log "ERROR: NCCL pip package not found (python: $PY)"; exit 1
  fi
  export LD_LIBRARY_PATH=$NCCL_DIR/lib:${LD_LIBRARY_PATH:-}
  for f in "$COMMLENS" "$NCCL_TESTS_TAR"; do
    [ -e "$f" ] || { log "ERROR: $f is missing (carry build-portable and .device)"; exit 1; }
  done
  visible=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU')
  if [ "$visible" -lt "$NGPUS" ]; then
    log "ERROR: $NGPUS GPUs needed, $visible visible"; exit 1
  fi
  "$PY" - "$NCCL_TESTS_TAR" "$WORK" <<'PYEOF' || { log "ERROR: cannot unpack nccl-tests"; exit 1; }
import sys, tarfile
tarfile.open(sys.argv[1]).extractall(sys.argv[2])
PYEOF
  NT=$WORK/nccl-tests
  { nvidia-smi -L; nvidia-smi topo -m; echo "NCCL: $NCCL_DIR"; ls "$NCCL_DIR/lib";
    cat "$NT/COMMIT"; ldd "$COMMLENS"; } > "$RAW/machine.txt" 2>&1
  log "NCCL from $NCCL_DIR; nccl-tests $(cat "$NT/COMMIT")"
else
  NT=/nonexistent/nccl-tests
  log "dry run: no GPU program runs"
fi

# --- 1. single process, 4 GPUs: nccl-tests then commlens, per collective ----------------
# Repetitions interleave the two tools (A B A B ...) so drift hits both alike. Raw files
# are named <tool>_<coll>.<sweep><k>.<ext>; the comparer takes the median of each size
# over the runs that cover it.
# BENCH_TASKSET=LIST pins both tools to the same CPUs (taskset -c LIST).
PIN=()
[ -n "${BENCH_TASKSET:-}" ] && PIN=(taskset -c "$BENCH_TASKSET")
parity_sweep() {  # NAME REPS SWEEP...
  local sweep=$1 reps=$2
  shift 2
  # Repetition-major, so a budget cut costs every collective the same repetitions.
  for k in $(seq 1 "$reps"); do
    for c in "${COLLECTIVES[@]}"; do
      run "nccl-tests_$c.$sweep$k" 90 "${PIN[@]}" "$NT/${c}_perf" "$@" -g $NGPUS -c 1
      run "commlens_$c.$sweep$k" 90 "${PIN[@]}" "$COMMLENS" bench "$c" "$@" -g $NGPUS \
        --timeout 60s --json "$RAW/commlens_$c.$sweep$k.json"
    done
  done
}
if [ "$EXTRAS_ONLY" != 1 ]; then
  for sweep in $SWEEPS; do
    case $sweep in
      small) parity_sweep small "$SMALL_REPS" "${SMALL_SWEEP[@]}" ;;
      large) parity_sweep large "$LARGE_REPS" "${LARGE_SWEEP[@]}" ;;
      focus) parity_sweep focus "$FOCUS_REPS" "${FOCUS_SWEEP[@]}" ;;
      *) log "ERROR: unknown sweep $sweep (small, large, focus)"; exit 1 ;;
    esac
  done
fi

if [ "$PARITY_ONLY" = 1 ]; then
  log "parity sweeps only (BENCH_PARITY_ONLY=1)"
else
# --- 2. multi-process all_reduce ---------------------------------------------------------
MP_ARGS=(bench all_reduce -b 8 -e 1G -f 8 -n 20 -w 5 --timeout 45s)
# torchrun-style: one process per GPU, RANK/WORLD_SIZE/LOCAL_RANK/MASTER_ADDR/MASTER_PORT.
multi_process_env() {
  local port=$(( 29500 + RANDOM % 2000 )) pids=() rc=0 t0=$(date +%s)
  if [ "$DRY_RUN" = 1 ]; then
    echo "would run: RANK=0..$((NGPUS - 1)) WORLD_SIZE=$NGPUS $COMMLENS ${MP_ARGS[*]}" \
      | tee -a "$STEPS"
    return 0
  fi
  local limit=60
  [ "$(left)" -lt 30 ] && { log "skip multi-process run: budget"; return 0; }
  (( limit > $(left) )) && limit=$(left)
  for r in $(seq 0 $((NGPUS - 1))); do
    RANK=$r WORLD_SIZE=$NGPUS LOCAL_RANK=$r MASTER_ADDR=127.0.0.1 MASTER_PORT=$port \
      timeout -k 5 "$limit" "$COMMLENS" "${MP_ARGS[@]}" --json "$RAW/commlens_mp_all_reduce.json" \
      > "$RAW/mp_rank$r.txt" 2>&1 &
    pids+=($!)
  done
  for p in "${pids[@]}"; do wait "$p" || rc=$?; done
  echo "multi_process_env rc=$rc $(( $(date +%s) - t0 ))s: RANK=0..3 $COMMLENS ${MP_ARGS[*]}" \
    >> "$STEPS"
  log "multi_process_env: rc=$rc ($(( $(date +%s) - t0 )) s)"
  [ $rc -ne 0 ] && tail -n 3 "$RAW"/mp_rank*.txt | sed 's/^/    /'
  return 0
}
multi_process_env
if [ "$DRY_RUN" = 1 ] || command -v mpirun > /dev/null; then
  # The portable build has no MPI: --launcher env reads OMPI_COMM_WORLD_* and MASTER_*.
  run multi_process_mpirun 45 env OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 \
    mpirun --allow-run-as-root -np $NGPUS \
    -x MASTER_ADDR=127.0.0.1 -x MASTER_PORT=$(( 31500 + RANDOM % 2000 )) \
    -x LD_LIBRARY_PATH -x NCCL_NVLS_ENABLE -x TORCH_SYMM_MEM_DISABLE_MULTICAST \
    -x NVSHMEM_DISABLE_NVLS \
    "$COMMLENS" "${MP_ARGS[@]}" --launcher env --json "$RAW/commlens_mpirun_all_reduce.json"
fi

# --- 3. GPU tests ------------------------------------------------------------------------
run gpu_tests 150 "$GPU_TEST" --gtest_color=no

# --- 4. CUDA graphs, if time is left ------------------------------------------------------
if [ "$DRY_RUN" = 1 ] || [ "$(left)" -gt 60 ]; then
  run nccl-tests_graph_all_reduce 40 "$NT/all_reduce_perf" "${SWEEP[@]}" -g $NGPUS -c 1 -G 1
  run commlens_graph_all_reduce 40 "$COMMLENS" bench all_reduce "${SWEEP[@]}" -g $NGPUS \
    --graph --timeout 30s --json "$RAW/commlens_graph_all_reduce.json"
else
  log "skip graph runs: $(left) s left"
fi
fi  # PARITY_ONLY

# --- 5. comparison -----------------------------------------------------------------------
if [ "$DRY_RUN" = 1 ]; then
  python3 tests/bench/parity/make_fixture.py "$RAW"
fi
python3 tests/bench/parity/compare_parity.py "$RAW" --out "$OUTDIR/parity.md" > /dev/null
status=$?
tar -czf "$OUTDIR/raw.tar.gz" -C "$WORK" raw
log "wrote $OUTDIR/parity.md and $OUTDIR/raw.tar.gz ($(du -k "$OUTDIR/raw.tar.gz" | cut -f1) KiB); comparer status $status (0 parity, 1 not, 2 missing output)"
echo
sed -n '1,/^## Per collective/p' "$OUTDIR/parity.md" | sed '$d'
sed -n '/^## Multi-process/,/^## GPU tests/p' "$OUTDIR/parity.md" | sed '$d'
sed -n '/^## GPU tests/,$p' "$OUTDIR/parity.md"
echo "steps:"; cat "$STEPS"
rm -rf "$WORK"
exit 0
