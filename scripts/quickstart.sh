#!/usr/bin/env bash
# Quick start: set up what is missing, build, and analyze the sample traces shipped in
# examples/traces/ (real 4-GPU PyTorch DDP runs, one Kineto trace per rank).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
exec build/src/cli/commlens analyze "${@:-examples/traces/ddp}"
