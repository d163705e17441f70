#!/usr/bin/env bash
# Runs the GPU test suite (ctest -L gpu) of a portable build on the GPU machine, where CI
# cannot: the NCCL, NVML, CUPTI and NVSHMEM paths. ctest's files name the build's absolute
# paths, so the build and the source tree are put back at the paths they had here.
#   scripts/device/slim_build.sh build-portable .device/build          # here, then carry .device
#   BUILT_AT=$PWD/build-portable SOURCE_AT=$PWD scripts/device/gpu_tests.sh   # there (the two
#                                  paths as they were here); the log in $OUT/gpu_tests.txt
#   GPU_TESTS_FILTER=REGEX   only the GPU tests whose names match (ctest -R)
set -u
ROOT=$(pwd)
BUILT_AT=${BUILT_AT:?the build folder's path where it was built}
SOURCE_AT=${SOURCE_AT:?the source tree's path where it was built}
. "$(dirname "$0")/torch_env.sh"
NVSHMEM_HOME=${NVSHMEM_HOME:-$("$PY" -c "import nvidia.nvshmem, os; print(list(nvidia.nvshmem.__path__)[0])" 2>/dev/null)}
export NVSHMEM_HOME
[ -n "$NVSHMEM_HOME" ] && export LD_LIBRARY_PATH="$NVSHMEM_HOME/lib:$LD_LIBRARY_PATH"
if [ "$SOURCE_AT" != "$ROOT" ]; then
  mkdir -p "$(dirname "$SOURCE_AT")"
  [ -e "$SOURCE_AT" ] || ln -s "$ROOT" "$SOURCE_AT"
fi
[ -e "$BUILT_AT" ] || ln -s "$ROOT/.device/build" "$BUILT_AT"
LOG="${OUT:-$ROOT/device-out}/gpu_tests.txt"
mkdir -p "$(dirname "$LOG")"
nvidia-smi -L > "$LOG"
(cd "$BUILT_AT" && timeout "${GPU_TESTS_TIMEOUT:-420}" ctest -L gpu ${GPU_TESTS_FILTER:+-R "$GPU_TESTS_FILTER"} --output-on-failure --timeout 200) >> "$LOG" 2>&1
rc=$?
grep -E "tests passed|Passed|Failed|Not Run|\*\*\*" "$LOG" | tail -40
exit $rc
