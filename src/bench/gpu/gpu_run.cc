// RunOnGpus (driver.h) for builds with CUDA and NCCL, and the run description.

#include <fmt/format.h>

#include "bench/driver.h"
#include "bench/gpu/cuda_check.h"
#include "bench/gpu/gpu_bench.h"
#include "bench/gpu/rank_setup.h"

namespace commlens::bench {

namespace gpu {


Result<RunInfo> GpuBench::Describe(const LaunchInfo& launch) {
  std::vector<std::pair<int, int>> mine;
  for (const LocalRank& r : ranks_) mine.push_back({r.rank, r.device});
  return DescribeRun(boot_, launch, mine, nranks_, gpus_per_process_);
}

}  // namespace gpu

Status GpuSupport() { return OkStatus(); }

int VisibleGpuCount() {
  int n = 0;
  return cudaGetDeviceCount(&n) == cudaSuccess ? n : 0;
}

Status RunOnGpus(const BenchConfig& config, const LaunchInfo& launch, const RunInfo& base,
                 Bootstrap& bootstrap, Watchdog& watchdog, Reporter& reporter) {
  gpu::GpuBench bench(config, bootstrap, watchdog);
  COMMLENS_RETURN_IF_ERROR(bench.Init(launch));
  COMMLENS_ASSIGN_OR_RETURN(RunInfo run, bench.Describe(launch));
  run.tool_version = base.tool_version;
  run.start_time = base.start_time;
  reporter.BeginRun(run, config);
  for (model::CommOp op : config.collectives) {
    const CollectiveSpec* spec = FindCollective(op);
    if (!spec) return Error(fmt::format("'{}' is not a benchmarkable collective",
                                        model::CommOpName(op)));
    for (Backend backend : config.backends)
      COMMLENS_RETURN_IF_ERROR(bench.RunCollective(*spec, reporter, backend));
  }
  return OkStatus();
}

}  // namespace commlens::bench
