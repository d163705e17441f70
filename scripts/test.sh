#!/usr/bin/env bash
# Sets up what is missing, builds, and runs the whole test suite: the CTest suite (unit,
# golden and CLI tests; tests that need a GPU are labelled "gpu" and report "skipped" on
# a machine without one; `analyze --mpi` under mpirun, labelled "mpi", runs wherever
# setup's Open MPI is installed), the HTML report in a real browser (headless chromium;
# its screenshots land in BUILD_DIR/browser-test), then a short run of each trace-reader
# fuzzer (clang, libFuzzer + sanitizers; FUZZ_SECONDS, default 20, 0 to skip).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
(cd "${BUILD_DIR:-build}" && ctest --output-on-failure -j"$(nproc)" -LE browser "$@")
(cd "${BUILD_DIR:-build}" && ctest --output-on-failure -L browser)  # the HTML report in chromium
scripts/tsan.sh  # the recorder plugin's threaded tests under ThreadSanitizer
if [ "${FUZZ_SECONDS:-20}" -gt 0 ]; then
  scripts/fuzz.sh "${FUZZ_SECONDS:-20}"
fi
