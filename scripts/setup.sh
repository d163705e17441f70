#!/usr/bin/env bash
# Installs what a fresh Debian 12 machine lacks to build commlens, then configures and
# builds it in build/. Safe to run again: it installs only missing packages and
# rebuilds only what changed.
#
#   scripts/setup.sh            # packages + Release build in build/
#   BUILD_DIR=out scripts/setup.sh
set -euo pipefail
cd "$(dirname "$0")/.."

BUILD_DIR=${BUILD_DIR:-build}
PACKAGES=(build-essential cmake ninja-build pkg-config git
  libsimdjson-dev libcli11-dev libfmt-dev nlohmann-json3-dev
  libsqlite3-dev zlib1g-dev libisal-dev libzstd-dev libhwloc-dev libopenmpi-dev openmpi-bin
  libgtest-dev libgmock-dev libbenchmark-dev clang libclang-rt-14-dev
  chromium)  # the HTML report's browser test
# Node.js and npm (the HTML report's chart library comes from npm): Debian's packages
# unless the machine already has both commands (a Node.js from elsewhere, such as
# NodeSource's, conflicts with Debian's npm package and has its own npm).
NODE_PACKAGES=(nodejs npm)

missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
  missing+=("${NODE_PACKAGES[@]}")
fi
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  SUDO=""
  [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# From npm, pinned by src/report/html/package-lock.json, into the (ignored) build folder:
# echarts, which the build embeds into every HTML report, and playwright-core, which the
# browser test uses to drive Debian's chromium. Reinstalled when the lock file changes.
NPM_DIR="$BUILD_DIR/npm"
LOCK=src/report/html/package-lock.json
if ! cmp -s "$LOCK" "$NPM_DIR/package-lock.json" || [ ! -f "$NPM_DIR/node_modules/echarts/dist/echarts.min.js" ]; then
  echo "setup: installing the HTML report's npm packages into $NPM_DIR"
  mkdir -p "$NPM_DIR"
  cp src/report/html/package.json "$LOCK" "$NPM_DIR/"
  (cd "$NPM_DIR" && npm ci --no-audit --no-fund --loglevel=error >/dev/null)
  [ -f "$BUILD_DIR/build.ninja" ] && cmake -S . -B "$BUILD_DIR" >/dev/null  # embed the library
fi

if [ ! -f "$BUILD_DIR/build.ninja" ]; then
  cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=Release ${CMAKE_ARGS:-} >/dev/null
fi
cmake --build "$BUILD_DIR" -j"$(nproc)"
