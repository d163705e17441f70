#!/usr/bin/env bash
# Regenerates the analyze goldens in tests/golden/ from the shipped sample traces with the
# built commlens (run from anywhere; uses build/ unless BUILD_DIR says otherwise). Review
# the diff before committing: a golden changes only with an intended change of output.
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${BUILD_DIR:-build}/src/cli/commlens
for w in ddp fsdp moe native; do
  "$bin" analyze "examples/traces/$w" --json "tests/golden/$w.analyze.json" --quiet
  # the text golden omits the final timing line, which varies run to run
  "$bin" analyze "examples/traces/$w" | sed '$d' | sed '$d' > "tests/golden/$w.analyze.txt"
done
echo "goldens written to tests/golden/"
