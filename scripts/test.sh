#!/usr/bin/env bash
# Sets up what is missing, builds, and runs the whole test suite: the CTest suite (unit,
# golden and CLI tests; tests that need a GPU are labelled "gpu" and report "skipped" on
# a machine without one), then a short run of each trace-reader fuzzer (clang,
# libFuzzer + sanitizers; FUZZ_SECONDS, default 20, 0 to skip).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
(cd "${BUILD_DIR:-build}" && ctest --output-on-failure -j"$(nproc)" "$@")
scripts/tsan.sh  # the recorder plugin's threaded tests under ThreadSanitizer
if [ "${FUZZ_SECONDS:-20}" -gt 0 ]; then
  scripts/fuzz.sh "${FUZZ_SECONDS:-20}"
fi
