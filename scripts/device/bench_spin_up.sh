#!/usr/bin/env bash
# The --spin-up comparison of docs/performance.md, run on the 4 x H200 machine from the
# repository root:   COMMLENS_BUILD=build-slim scripts/device/bench_spin_up.sh
# For broadcast, all_reduce and sendrecv, 4 times: nccl-tests, commlens (default spin-up),
# commlens --spin-up 0, all with -b 8 -e 16M -n 1000 -w 20 -g 4; then the bench GPU tests.
# Output: $OUT/spin.tgz (nccl-tests_<c>.spin<k>.txt, commlens_<c>.spin<k>.json,
# nospin_<c>.<k>.json, gpu_tests.txt).
set -u
cd "$(dirname "$0")/../.." || exit 1
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
BUILD=${COMMLENS_BUILD:-build-portable}
PY=/opt/torch/.venv/bin/python3
NCCL_DIR=$("$PY" -c "import nvidia.nccl as m; print(m.__path__[0])") || exit 1
export LD_LIBRARY_PATH=$NCCL_DIR/lib:${LD_LIBRARY_PATH:-}
WORK=$(mktemp -d)
"$PY" -c "import tarfile, sys; tarfile.open(sys.argv[1]).extractall(sys.argv[2])" \
  .device/nccl-tests/nccl-tests-sm90.tar.xz "$WORK" || exit 1
NT=$WORK/nccl-tests
CL=$BUILD/src/cli/commlens
R=${OUT:-/tmp}/spin
mkdir -p "$R"
timeout 120 "$BUILD/tests/bench/bench_gpu_test" --gtest_color=no > "$R/gpu_tests.txt" 2>&1
echo "gpu tests rc=$?"
S=(-b 8 -e 16M -f 2 -n 1000 -w 20 -g 4)
for c in broadcast all_reduce sendrecv; do
  for k in 1 2 3 4; do
    timeout 60 "$NT/${c}_perf" "${S[@]}" -c 1 > "$R/nccl-tests_$c.spin$k.txt" 2>&1
    timeout 60 "$CL" bench "$c" "${S[@]}" --json "$R/commlens_$c.spin$k.json" \
      > "$R/commlens_$c.spin$k.txt" 2>&1
    timeout 60 "$CL" bench "$c" "${S[@]}" --spin-up 0 --json "$R/nospin_$c.$k.json" \
      > "$R/nospin_$c.$k.txt" 2>&1
    echo "$c $k done"
  done
done
tar -czf "${OUT:-/tmp}/spin.tgz" -C "$(dirname "$R")" spin && rm -rf "$R" "$WORK"
