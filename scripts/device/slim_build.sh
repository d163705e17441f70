#!/usr/bin/env bash
# Copies a build folder without what the GPU machine does not need (object files, static
# archives, CMake's compiler probes) and strips the executables, so that it fits the
# device tool's 64 MiB carry limit:   scripts/device/slim_build.sh build-portable .device/build
set -euo pipefail
src=${1:?usage: slim_build.sh BUILD_DIR DEST_DIR}
dst=${2:?usage: slim_build.sh BUILD_DIR DEST_DIR}
rm -rf "$dst"
mkdir -p "$dst"
tar -C "$src" --exclude='*.o' --exclude='*.a' --exclude='CompilerIdC*' --exclude='CheckCUDA' \
  --exclude='.ninja_log' --exclude='.ninja_deps' -cf - . | tar -C "$dst" -xf -
find "$dst" -type f -perm -u+x -exec sh -c 'file -b "$1" | grep -q ELF && strip "$1"' _ {} \;
du -sh "$dst"
