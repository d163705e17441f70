#!/usr/bin/env bash
# Builds the NCCL profiler plugin and its threaded tests with ThreadSanitizer (clang) in
# build-tsan/ and runs them: the ABI test (enqueue thread, proxy thread and flusher at
# once), the slot pool under contention, the exit tests (NCCL threads still calling in
# while the process exits), NCCL joining the session CUDA started while its flusher runs,
# and the stuck-disk test. Any ThreadSanitizer report fails.
#   scripts/tsan.sh
set -euo pipefail
cd "$(dirname "$0")/.."
tests=(plugin_abi_test recorder_crash_test recorder_flush_test slot_pool_test sampler_test cupti_tracer_test
       launch_timing_test launch_timer_test cuda_injection_test)
if [ ! -f build-tsan/build.ninja ]; then
  CC=clang CXX=clang++ cmake -S . -B build-tsan -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCOMMLENS_SANITIZE=thread -DCOMMLENS_BUILD_BENCHMARKS=OFF -DCOMMLENS_WITH_CUDA=OFF >/dev/null
fi
if ! ninja -C build-tsan -j"$(nproc)" "${tests[@]}" > build-tsan/build.log 2>&1; then
  echo "tsan: building failed; see build-tsan/build.log"
  tail -30 build-tsan/build.log
  exit 1
fi
status=0
for t in "${tests[@]}"; do
  log=build-tsan/$t.log
  # The tests fork children that load the plugin too: their reports land in the same log.
  bin=$(find build-tsan/tests/recorder -name "$t" -type f | head -1)
  if TSAN_OPTIONS=halt_on_error=1 timeout 600 "$bin" > "$log" 2>&1 &&
      ! grep -q ThreadSanitizer "$log"; then
    echo "tsan: $t clean ($(grep -c '^\[       OK' "$log") tests)"
  else
    echo "tsan: $t FAILED; see $log"
    grep -A30 -m1 ThreadSanitizer "$log" || tail -30 "$log"
    status=1
  fi
done
exit $status
