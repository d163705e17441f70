#!/usr/bin/env bash
# Sets up what is missing, builds, and runs the whole test suite. Tests that need a GPU
# are labelled "gpu" and report "skipped" on a machine without one.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
cd "${BUILD_DIR:-build}"
ctest --output-on-failure -j"$(nproc)" "$@"
