#!/usr/bin/env bash
# The reader fuzzers' campaign on a machine with many cores, from .device/fuzz/
# (scripts/device/pack_fuzzers.sh: the fuzzers, their libraries, the corpora): each target runs in libFuzzer's fork mode, the given
# number of jobs at once, for SECONDS, with the options scripts/fuzz.sh uses. Logs and any
# crashing input land in $OUT (fuzz-<target>.log, crashes-<target>.tar); the last line of
# each log is its totals.
#   scripts/device/fuzz_campaign.sh SECONDS target:jobs ...
#   e.g. scripts/device/fuzz_campaign.sh 540 kineto:14 native:10 summary:16 bench:6 nsys:16
set -uo pipefail
cd "$(dirname "$0")/../.."
seconds=$1; shift
out=${OUT:-/tmp/fuzz-out}
work=/tmp/fuzz-work
rm -rf "$work"; mkdir -p "$work" "$out"
xz -d -T0 -c .device/fuzz/fuzz.tar.xz | tar -C "$work" -x
export LD_LIBRARY_PATH=$work/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
echo "fuzz: $(nproc) cores; $*; ${seconds}s"
for spec in "$@"; do
  name=${spec%%:*}; jobs=${spec##*:}
  mkdir -p "$work/corpus/$name" "$work/crashes/$name"
  cp -n fuzz/corpus/"$name"/* "$work/corpus/$name/" 2>/dev/null || true
  ( cd "$work" && "bin/${name}_fuzzer" "corpus/$name" -fork="$jobs" \
      -max_total_time="$seconds" -max_len=65536 -timeout=10 -rss_limit_mb=2048 \
      -artifact_prefix="crashes/$name/" -print_final_stats=1 > "$out/fuzz-$name.log" 2>&1
    echo "fuzz: $name exit $?" >> "$out/fuzz-$name.log" ) &
done
wait
status=0
for spec in "$@"; do
  name=${spec%%:*}
  log=$out/fuzz-$name.log
  # fork mode's progress lines: "#EXECS: cov: C ft: F corp: N exec/s: R oom/timeout/crash: a/b/c time: Ts ..."
  echo "$name: $(grep -E '^#[0-9]+: cov' "$log" | tail -1)"
  tail -1 "$log"
  if [ -n "$(ls -A "$work/crashes/$name")" ]; then
    tar -C "$work/crashes" -cf "$out/crashes-$name.tar" "$name"; status=1
  fi
done
exit $status
