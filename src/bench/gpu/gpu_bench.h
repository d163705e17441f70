// The GPU driver: one object owns this process's GPUs (a stream, send/receive buffers,
// events and an NCCL communicator each) and runs the collective table over the size
// sweep. Before each collective it runs the largest size for --spin-up and then the
// warm-up iterations of every size; for each size and placement (out-of-place, then
// in-place) it:
//   1. fills the inputs (when checking), runs one untimed op, waits, and barriers;
//   2. times |iters| back-to-back enqueues with the host clock and divides (nccl-tests'
//      method, reference/nccl.md §5.4), averaging over processes; with --graph the
//      enqueues are captured into one CUDA graph per GPU and the graph launch is timed;
//   3. runs a separate pass with CUDA events around each iteration for p50/p99, so the
//      events cannot perturb step 2;
//   4. refills the inputs, runs one op, and counts wrong elements on the GPU.
// Buffers rotate through the allocation like nccl-tests (iteration i uses offset
// (i mod max/size) * size) to avoid cache effects on small sizes.
//
// GPU-initiated backends (--backend nccl-device|nvshmem, alltoall only): the same steps
// with the exchange done by gpu/exchanger.h on its own buffers, out-of-place only (a
// kernel storing into a peer's buffer while that peer still reads it in place would race).
//
// Threading: one thread drives all local GPUs, grouping their NCCL calls
// (ncclGroupStart/End) as nccl-tests -g does. The watchdog may call AbortComms from its
// own thread.
#pragma once

#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "bench/bench_config.h"
#include "bench/bootstrap.h"
#include "bench/collective_table.h"
#include "bench/gpu/cuda_handles.h"
#include "bench/gpu/exchanger.h"
#include "bench/gpu/nvshmem_session.h"
#include "bench/gpu/nccl_ops.h"
#include "bench/launch.h"
#include "bench/reporter.h"
#include "bench/stats.h"
#include "bench/watchdog.h"

namespace commlens::bench::gpu {

// One GPU driven by this process. Members are destroyed bottom-up: the communicator
// goes before the buffers it may still reference.
struct LocalRank {
  int device = 0;
  int rank = 0;
  Stream stream;
  NcclBuffer send;
  NcclBuffer recv;
  DeviceMem wrong;             // one unsigned long long, the check's counter
  std::vector<Event> events;   // iters + 1, for the per-iteration pass
  Comm comm;
};

// One size of one collective in one placement.
struct Step {
  const CollectiveSpec* spec = nullptr;
  RunFn run = nullptr;
  CollCounts counts;
  int64_t size_bytes = 0;
  bool in_place = false;
};

class GpuBench {
 public:
  GpuBench(const BenchConfig& config, Bootstrap& bootstrap, Watchdog& watchdog);
  ~GpuBench();
  GpuBench(const GpuBench&) = delete;
  GpuBench& operator=(const GpuBench&) = delete;

  // Picks devices, creates the streams and communicators, then allocates the buffers
  // (all ranks agree on success before NCCL is touched, so one rank's failure ends
  // every rank quickly).
  Status Init(const LaunchInfo& launch);
  // Machine, GPUs and versions, gathered from every process.
  Result<RunInfo> Describe(const LaunchInfo& launch);
  // |backend| other than nccl: alltoall only, out-of-place only, one GPU per process.
  Status RunCollective(const CollectiveSpec& spec, Reporter& reporter,
                       Backend backend = Backend::kNccl);

  int nranks() const { return nranks_; }

 private:
  Status SelectDevices(const LaunchInfo& launch);
  Status CreateStreams();
  Status InitComms();
  Status AllocateBuffers();
  Status SpinUp(const CollectiveSpec& spec, RunFn run);
  Status Warmup(const CollectiveSpec& spec, RunFn run);
  Result<PlacementResult> Measure(const Step& step);

  Status Enqueue(const Step& step, int iter);
  Status RunOnce(const Step& step);
  Status Sync(const std::string& what);
  Result<double> TimedPass(const Step& step);
  Result<IterationStats> EventPass(const Step& step);
  Result<std::optional<int64_t>> CheckPass(const Step& step);
  Status FillInputs(const Step& step, const ValueGen& gen);
  Status Capture(const Step& step, int iters, std::vector<GraphExec>* graphs);
  Status Launch(const std::vector<GraphExec>& graphs);

  // The step of one sweep size (nccl-tests' counts for it), out-of-place.
  Step StepFor(const CollectiveSpec& spec, RunFn run, int64_t sweep_size) const;
  ValueGen GenFor(const Step& step, uint32_t seed) const;
  std::string Phase(const Step& step, const char* pass) const;
  void AbortComms();
  // The buffers of the backend being run: the exchanger's for GPU-initiated backends.
  char* SendOf(const LocalRank& r) const;
  char* RecvOf(const LocalRank& r) const;
  Status StartBackend(Backend backend);

  const BenchConfig& config_;
  Bootstrap& boot_;
  Watchdog& watchdog_;
  int gpus_per_process_ = 1;
  int first_device_ = 0;
  int local_rank_ = 0;
  int nranks_ = 1;
  int elt_size_ = 4;
  int64_t buffer_bytes_ = 0;
  uint32_t check_runs_ = 0;
  std::vector<LocalRank> ranks_;
  Backend backend_ = Backend::kNccl;
  std::unique_ptr<NvshmemSession> shmem_;  // while an nvshmem backend runs
  std::unique_ptr<Exchanger> exchanger_;   // while a GPU-initiated backend runs
  std::mutex abort_mu_;
  bool comms_live_ = false;
};

}  // namespace commlens::bench::gpu
