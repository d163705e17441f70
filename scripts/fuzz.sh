#!/usr/bin/env bash
# Builds the trace-reader fuzzers with clang (libFuzzer + AddressSanitizer + UBSan) in
# build-fuzz/ and runs each for SECONDS (default 60) on a copy of its seed corpus.
# A crash leaves its input in build-fuzz/crashes/<target>/ and fails the script: add the
# input to fuzz/corpus/<target>/ once fixed, so the replay tests keep it. Each target
# prints its executions, peak memory and final coverage (libFuzzer's cov/ft/corp).
#   scripts/fuzz.sh [SECONDS]      # CI: 20; the recorded campaign: 1800 (docs/reliability.md)
#   FUZZ_TARGETS="kineto_fuzzer" scripts/fuzz.sh 1800   # only these targets
#   FUZZ_RUNS=10000000 scripts/fuzz.sh 86400           # stop each at 10 M executions (the campaign)
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-60}
if [ ! -f build-fuzz/build.ninja ]; then
  CC=clang CXX=clang++ cmake -S . -B build-fuzz -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCOMMLENS_BUILD_FUZZERS=ON -DCOMMLENS_BUILD_TESTS=OFF -DCOMMLENS_BUILD_BENCHMARKS=OFF \
    -DCOMMLENS_WITH_CUDA=OFF >/dev/null
fi
targets=${FUZZ_TARGETS:-$(cd fuzz && ls *_fuzzer.cc | sed 's/\.cc$//')}
for t in $targets; do
  ninja -C build-fuzz "$t" >/dev/null || { echo "fuzz: building $t failed"; exit 1; }
done
status=0
for t in $targets; do
  name=${t%_fuzzer}
  work=build-fuzz/corpus/$name; crashes=build-fuzz/crashes/$name
  mkdir -p "$work" "$crashes"
  cp -n fuzz/corpus/"$name"/* "$work"/ 2>/dev/null || true
  echo "fuzz: $t for ${seconds}s"
  if ! build-fuzz/fuzz/"$t" "$work" -max_total_time="$seconds" ${FUZZ_RUNS:+-runs=$FUZZ_RUNS} -max_len=65536 -timeout=10 \
      -rss_limit_mb=2048 -artifact_prefix="$crashes/" -print_final_stats=1 \
      > "build-fuzz/$t.log" 2>&1; then
    echo "fuzz: $t FAILED; see build-fuzz/$t.log and $crashes/"
    tail -30 "build-fuzz/$t.log"
    status=1
  else
    grep -E "stat::number_of_executed_units|stat::peak_rss_mb" "build-fuzz/$t.log" | sed "s/^/  /"
    { grep -E "^#[0-9]+[[:space:]]+DONE" "build-fuzz/$t.log" || true; } | tail -1 | sed "s/^/  coverage: /"
  fi
done
exit $status
