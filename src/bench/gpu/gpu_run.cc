// RunOnGpus (driver.h) for builds with CUDA and NCCL, and the run description.
#include <cstdio>
#include <sstream>

#include <fmt/format.h>

#include "bench/driver.h"
#include "bench/gpu/cuda_check.h"
#include "bench/gpu/gpu_bench.h"

namespace commlens::bench {

namespace gpu {

namespace {

// One GPU per line, tab-separated, to cross the bootstrap as a string.
std::string Serialize(const GpuInfo& g) {
  return fmt::format("{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\n", g.rank, g.host, g.device, g.name,
                     g.pci_bus_id, g.memory_bytes, g.cc_major, g.cc_minor);
}

void ParseInto(const std::string& text, std::vector<GpuInfo>* out) {
  std::istringstream lines(text);
  std::string line;
  while (std::getline(lines, line)) {
    std::vector<std::string> f;
    std::istringstream fields(line);
    for (std::string x; std::getline(fields, x, '\t');) f.push_back(x);
    if (f.size() != 8) continue;
    out->push_back({std::stoi(f[0]), f[1], std::stoi(f[2]), f[3], f[4], std::stoll(f[5]),
                    std::stoi(f[6]), std::stoi(f[7])});
  }
}

}  // namespace

Result<RunInfo> GpuBench::Describe(const LaunchInfo& launch) {
  RunInfo run;
  run.launcher = std::string(LauncherName(launch.launcher));
  run.nprocs = boot_.size();
  run.nranks = nranks_;
  run.gpus_per_process = gpus_per_process_;
  ncclGetVersion(&run.nccl_version_code);
  int v = run.nccl_version_code;
  run.nccl_version = fmt::format("{}.{}.{}", v / 10000, v % 10000 / 100, v % 100);
  cudaRuntimeGetVersion(&run.cuda_runtime_version);
  cudaDriverGetVersion(&run.cuda_driver_version);
  std::string mine;
  const std::string host = LocalHostName();
  for (const LocalRank& r : ranks_) {
    cudaDeviceProp prop{};
    COMMLENS_CUDA(cudaGetDeviceProperties(&prop, r.device));
    char bus[32] = {};
    cudaDeviceGetPCIBusId(bus, sizeof bus, r.device);
    mine += Serialize({r.rank, host, r.device, prop.name, bus,
                       static_cast<int64_t>(prop.totalGlobalMem), prop.major, prop.minor});
  }
  COMMLENS_ASSIGN_OR_RETURN(std::vector<std::string> all, AllGatherStrings(boot_, mine));
  for (const std::string& text : all) ParseInto(text, &run.gpus);
  for (const GpuInfo& g : run.gpus)
    if (std::find(run.hosts.begin(), run.hosts.end(), g.host) == run.hosts.end())
      run.hosts.push_back(g.host);
  return run;
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
    COMMLENS_RETURN_IF_ERROR(bench.RunCollective(*spec, reporter));
  }
  return OkStatus();
}

}  // namespace commlens::bench
