#!/usr/bin/env bash
# Regenerates the goldens with the built tree (run from anywhere; uses build/ unless
# BUILD_DIR says otherwise): the analyze goldens in tests/golden/ from the shipped sample
# traces, then the goldens the test programs hold their output against (the bench table,
# the topo reports), which rewrite them under COMMLENS_UPDATE_GOLDENS=1 and report
# themselves skipped (tests/testing/golden_file.h); they are then run again to compare.
# Review the diff before committing: a golden changes only with an intended change of output.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${BUILD_DIR:-build}
bin=$build/src/cli/commlens
# workload folder under examples/traces -> golden name (a / becomes a .)
for w in ddp fsdp moe native \
         cross-rank/pipeline-1f1b cross-rank/pipeline-gpipe cross-rank/contention \
         cross-rank/slow-compute cross-rank/slow-host cross-rank/hang cross-rank/hang/native; do
  name=${w//\//.}
  "$bin" analyze "examples/traces/$w" --json "tests/golden/$name.analyze.json" --quiet
  # the text golden omits the final timing line, which varies run to run
  "$bin" analyze "examples/traces/$w" | sed '$d' | sed '$d' > "tests/golden/$name.analyze.txt"
done
echo "goldens written to tests/golden/"
# Test programs with goldens of their own: rewrite, then compare.
for t in "tests/bench/bench_test --gtest_filter=Reporter.TableMatchesGolden" tests/topo/topo_golden_test; do
  COMMLENS_UPDATE_GOLDENS=1 "$build"/$t > /dev/null
  "$build"/$t > /dev/null || { echo "update_goldens: $t does not match what it just wrote"; exit 1; }
done
echo "goldens written to tests/bench/golden/ and tests/topo/data/golden/"
