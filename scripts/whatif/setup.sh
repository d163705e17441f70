#!/usr/bin/env bash
# Installs what bytedance_to_kineto.mjs reads Parquet with (package.json, pinned by
# package-lock.json) into scripts/whatif/node_modules (ignored by git).
set -euo pipefail
cd "$(dirname "$0")"
command -v npm > /dev/null || { echo "whatif setup: npm is missing (sudo apt-get install npm)"; exit 1; }
[ -d node_modules/hyparquet ] || npm ci --silent --no-audit --no-fund
