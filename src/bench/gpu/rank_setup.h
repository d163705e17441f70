// Setup shared by every GPU mode of `commlens bench` (collectives, moe, jacobi): agree
// on a step's outcome across processes, find the local rank, create NCCL communicators,
// wait for a stream without hanging, and describe the run (machine, GPUs, versions).
#pragma once

#include <cuda_runtime.h>
#include <nccl.h>

#include <chrono>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "bench/bootstrap.h"
#include "bench/gpu/cuda_handles.h"
#include "bench/launch.h"
#include "bench/result.h"
#include "bench/bench_session.h"
#include "bench/watchdog.h"
#include "common/status.h"

namespace commlens::bench::gpu {

// All processes learn whether every one got |local| right; a failed process returns its
// own error, the others a short pointer to it. Collective.
Status Agree(Bootstrap& boot, const Status& local, const char* stage);

// This process's index among the processes of its host: the launcher's, or counted from
// the host names of the lower processes. Collective.
Result<int> LocalRankOf(const LaunchInfo& launch, Bootstrap& boot);

// One GPU per process: the device of local rank |local_rank|, or device 0 when the
// launcher restricted the process to its own GPU (CUDA_VISIBLE_DEVICES).
Result<int> DeviceForLocalRank(int local_rank);

// One communicator per process over |nranks| = boot.size() ranks (rank = process),
// on |device|, bounded by the watchdog. Collective.
Result<Comm> InitComm(Bootstrap& boot, int device, std::chrono::milliseconds timeout,
                      Watchdog& watchdog);

// The start of every one-GPU-per-process mode (moe, jacobi): the process's GPU in
// |device| and a communicator over all processes in |comm|, which the watchdog aborts
// if a step hangs (|comm| must outlive the watchdog's hooks: clear them first). |valid|
// is this process's verdict on the configuration for this many ranks (a usage error
// ends every process). Collective.
Status OpenOneGpu(Bootstrap& boot, const LaunchInfo& launch, const Status& valid,
                  std::chrono::milliseconds timeout, Watchdog& watchdog, int* device, Comm* comm);

// Waits for |stream| like nccl-tests (stream query plus NCCL's asynchronous error when
// |comm| is set), failing after |timeout| instead of hanging; |on_failure| runs first
// (abort the communicator, say).
Status WaitForStream(cudaStream_t stream, ncclComm_t comm, std::chrono::milliseconds timeout,
                     const std::string& what, const std::function<void()>& on_failure = {});

// Machine, GPUs and versions, gathered from every process; |rank_devices| holds this
// process's (rank, device) pairs. Collective.
Result<RunInfo> DescribeRun(Bootstrap& boot, const LaunchInfo& launch,
                            const std::vector<std::pair<int, int>>& rank_devices, int nranks,
                            int gpus_per_process);

// Tells a single process on a machine with |visible| > 1 GPUs that it uses one of them
// (stderr), and how to start one process per GPU instead.
void NoteOneGpuPerProcess(int visible);

// DescribeRun for a one-GPU-per-process mode, with the session's tool version and start.
Result<RunInfo> DescribeOneGpuRun(Session& session, int rank, int device, int nranks);

}  // namespace commlens::bench::gpu
