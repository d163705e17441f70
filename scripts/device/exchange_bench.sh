#!/usr/bin/env bash
# Issue 15 on the GPU machine (2 GPUs): alltoall on every backend beside today's NCCL
# alltoall, MoE dispatch/combine, the Jacobi variants, the GPU tests and the error paths.
# Run from the repository root with a slim portable build carried (default .device/ab,
# built with -DNVSHMEM_HOME so libcommlens_nvshmem.so sits beside commlens):
#     scripts/device/exchange_bench.sh          (ONLY="tests a2a moe jacobi errors" picks steps)
# "tune", "profile" and "launchers" (the CTA count, an Nsight Systems kernel summary, CUDA
# graphs on every backend and an mpirun launch) run only when named. Everything lands in $OUT/exchange/ (one .txt per step, JSON files, steps.txt).
set -u -o pipefail
cd "$(dirname "$0")/../.." || exit 1
BUILD=${COMMLENS_BUILD:-.device/ab}
C=$BUILD/src/cli/commlens
ONLY=${ONLY:-tests a2a moe jacobi errors}
R=${OUT:-/tmp/commlens-exchange}/exchange
mkdir -p "$R"
source scripts/device/torch_env.sh
NVSHMEM_LIB=$("$PY" -c "import nvidia.nvshmem, os; print(os.path.join(list(nvidia.nvshmem.__path__)[0], 'lib'))" 2>/dev/null)
export LD_LIBRARY_PATH="$NVSHMEM_LIB:$LD_LIBRARY_PATH"
START=$(date +%s)
STEPS=$R/steps.txt
: > "$STEPS"
wants() { [[ " $ONLY " == *" $1 "* ]]; }
# step NAME TIMEOUT CMD...: output to $R/NAME.txt, status to steps.txt
step() {
  local name=$1 limit=$2
  shift 2
  local t0=$(date +%s)
  timeout -k 5 "$limit" "$@" > "$R/$name.txt" 2>&1
  local rc=$?
  echo "$name rc=$rc $(( $(date +%s) - t0 ))s: $*" | tee -a "$STEPS"
  [ $rc -ne 0 ] && tail -n 8 "$R/$name.txt"
  return 0
}
port=29600
# two NAME TIMEOUT ARGS...: `commlens bench ARGS` as one process per GPU under torchrun
two() {
  local name=$1 limit=$2
  shift 2
  port=$((port + 7))
  step "$name" "$limit" "$TORCHRUN" --no-python --nproc-per-node 2 --master-port $port "$C" bench "$@"
}
export COMMLENS_NVSHMEM_PLUGIN=$PWD/$BUILD/src/cli/libcommlens_nvshmem.so
{ nvidia-smi -L; echo "NCCL $NCCL_LIB"; echo "NVSHMEM $NVSHMEM_LIB"; ls "$BUILD/src/cli"; } > "$R/machine.txt" 2>&1

if wants tests; then
  T=$BUILD/tests/bench
  for t in AlltoallOnEveryBackendIsCorrect AlltoallCheckCatchesCorruptionOnTheDeviceApi \
           MoeOnEveryBackendIsCorrect JacobiEveryVariantMatchesTheCpuReference \
           AlltoallOnNvshmemIsCorrect MoeOnNvshmemIsCorrect JacobiOnNvshmemMatchesTheCpuReference; do
    step "test_$t" 120 "$T/exchange_gpu_test" --gtest_filter="ExchangeGpu.$t"
  done
  step test_bench_gpu 200 "$T/bench_gpu_test"
fi
if wants a2a; then
  SWEEP=(-b 8 -e 1G -f 2 -n ${A2A_ITERS:-50} -w 10)
  two a2a_today_1 150 alltoall "${SWEEP[@]}" --json "$R/a2a_today_1.json"
  two a2a_all 300 alltoall "${SWEEP[@]}" --backend all --json "$R/a2a_all.json"
  two a2a_today_2 150 alltoall "${SWEEP[@]}" --json "$R/a2a_today_2.json"
fi
if wants moe; then
  two moe_prefill 120 moe --backend all --json "$R/moe_prefill.json"
  two moe_prefill_skew 120 moe --backend all --imbalance 1 --json "$R/moe_prefill_skew.json"
  two moe_decode 120 moe --backend all --tokens 128 -n 100 --json "$R/moe_decode.json"
fi
if wants jacobi; then
  two jacobi 200 jacobi --variant all --json "$R/jacobi.json"
  two jacobi_small 120 jacobi --variant all --nx 4096 --ny 4096 -n 2000 --json "$R/jacobi_small.json"
fi
if wants launchers; then  # CUDA graphs on every backend; mpirun instead of torchrun
  two a2a_graph 120 alltoall --backend all --graph -b 1K -e 16M -f 4 -n 20 -w 2
  step moe_mpirun 120 mpirun --allow-run-as-root -np 2 -x LD_LIBRARY_PATH -x NCCL_NVLS_ENABLE \
    -x NVSHMEM_DISABLE_NVLS -x COMMLENS_NVSHMEM_PLUGIN -x MASTER_ADDR=127.0.0.1 \
    -x MASTER_PORT=29711 "$C" bench moe --backend all --tokens 512 -n 10
fi
if wants tune; then  # the GPU-initiated kernels' CTA count against NCCL at the large sizes
  for ctas in 64 128; do
    two a2a_ctas$ctas 200 alltoall -b 16M -e 1G -f 2 -n 50 -w 10 --backend all --ctas $ctas --json "$R/a2a_ctas$ctas.json"
    two moe_ctas$ctas 120 moe --backend all --ctas $ctas --json "$R/moe_ctas$ctas.json"
  done
fi
if wants profile; then  # kernel times of the Jacobi variants, one GPU, under Nsight Systems
  NSYS=${NSYS:-/opt/nvidia/nsight-compute/2025.3.1/host/target-linux-x64/nsys}
  export LD_LIBRARY_PATH="$PWD/.nsysdeps/root/usr/lib/x86_64-linux-gnu:$LD_LIBRARY_PATH"
  step jacobi_nsys 200 "$NSYS" profile -t cuda -o "$R/jacobi" --force-overwrite true --stats=true \
    "$C" bench jacobi --variant nccl,nvshmem --nx 16384 --ny 16384 -n 200 --no-check --no-single-gpu
  # The same with the NCCL variant's grid on NVSHMEM's symmetric heap too.
  step jacobi_nsys_symmetric 200 env COMMLENS_BENCH_JACOBI_SYMMETRIC=1 "$NSYS" profile -t cuda \
    -o "$R/jacobi_symmetric" --force-overwrite true --stats=true \
    "$C" bench jacobi --variant nccl,nvshmem --nx 16384 --ny 16384 -n 200 --no-check --no-single-gpu
fi
if wants errors; then
  # NVSHMEM missing at run time: a clear message and exit code 3, no crash.
  step err_no_nvshmem 60 env LD_LIBRARY_PATH="$NCCL_LIB:$CU13_LIB" "$C" bench alltoall --backend nvshmem -e 1M
  # A peer that never joins: every rank ends within the timeout (exit code 5).
  step err_peer_missing 60 env RANK=0 WORLD_SIZE=2 LOCAL_RANK=0 MASTER_ADDR=127.0.0.1 MASTER_PORT=29999 "$C" bench moe --timeout 5s
  two err_jacobi_ranks 60 jacobi --ny 1 --no-single-gpu
fi
echo "total $(( $(date +%s) - START ))s" >> "$STEPS"
