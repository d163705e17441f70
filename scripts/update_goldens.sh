#!/usr/bin/env bash
# Regenerates the analyze goldens in tests/golden/ from the shipped sample traces with the
# built commlens (run from anywhere; uses build/ unless BUILD_DIR says otherwise). Review
# the diff before committing: a golden changes only with an intended change of output.
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${BUILD_DIR:-build}/src/cli/commlens
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
