#include "bench/gpu/rank_setup.h"

#include <algorithm>
#include <cstdio>
#include <sstream>
#include <thread>

#include <fmt/format.h>

#include "bench/errors.h"
#include "bench/gpu/cuda_check.h"

namespace commlens::bench::gpu {

namespace {

using Clock = std::chrono::steady_clock;

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

Status Agree(Bootstrap& boot, const Status& local, const char* stage) {
  std::byte ok{static_cast<unsigned char>(local.ok() ? 1 : 0)};
  std::vector<std::byte> all;
  Status gathered = boot.AllGather(std::span<const std::byte>(&ok, 1), &all);
  if (!local.ok()) return local;
  COMMLENS_RETURN_IF_ERROR(gathered);
  std::vector<int> failed;
  for (size_t r = 0; r < all.size(); ++r)
    if (all[r] == std::byte{0}) failed.push_back(static_cast<int>(r));
  if (failed.empty()) return OkStatus();
  return Error(fmt::format("process(es) {} failed during {}; see their messages",
                           fmt::join(failed, ", "), stage));
}

Result<int> LocalRankOf(const LaunchInfo& launch, Bootstrap& boot) {
  if (launch.local_rank >= 0) return launch.local_rank;
  COMMLENS_ASSIGN_OR_RETURN(auto hosts, AllGatherStrings(boot, LocalHostName()));
  return static_cast<int>(
      std::count(hosts.begin(), hosts.begin() + boot.rank(), hosts[boot.rank()]));
}

Result<int> DeviceForLocalRank(int local_rank) {
  int visible = 0;
  cudaError_t e = cudaGetDeviceCount(&visible);
  if (e != cudaSuccess || visible == 0)
    return NoGpuError(fmt::format("no CUDA GPU is visible to this process ({})",
                                  e != cudaSuccess ? cudaGetErrorString(e) : "0 devices"));
  if (local_rank < visible) return local_rank;
  if (visible == 1) return 0;  // the launcher gave each process its own GPU
  return NoGpuError(fmt::format("local rank {} needs its own GPU but only {} are visible",
                                local_rank, visible));
}

Result<Comm> InitComm(Bootstrap& boot, int device, std::chrono::milliseconds timeout,
                      Watchdog& watchdog) {
  ncclUniqueId id{};
  Status local = boot.rank() == 0 ? NcclStatus(ncclGetUniqueId(&id), "ncclGetUniqueId",
                                               __FILE__, __LINE__)
                                  : OkStatus();
  COMMLENS_RETURN_IF_ERROR(Agree(boot, local, "ncclGetUniqueId"));
  COMMLENS_RETURN_IF_ERROR(boot.Broadcast(std::as_writable_bytes(std::span<ncclUniqueId>(&id, 1))));
  COMMLENS_CUDA(cudaSetDevice(device));
  ncclConfig_t cfg = NCCL_CONFIG_INITIALIZER;
  Watchdog::Guard guard(watchdog, fmt::format("NCCL communicator setup ({} ranks)", boot.size()),
                        timeout);
  ncclComm_t comm = nullptr;
  COMMLENS_NCCL(ncclCommInitRankConfig(&comm, boot.size(), id, boot.rank(), &cfg));
  return Comm(device, comm);
}

Status OpenOneGpu(Bootstrap& boot, const LaunchInfo& launch, const Status& valid,
                  std::chrono::milliseconds timeout, Watchdog& watchdog, int* device, Comm* comm) {
  COMMLENS_ASSIGN_OR_RETURN(int local_rank, LocalRankOf(launch, boot));
  Result<int> picked =
      valid.ok() ? DeviceForLocalRank(local_rank) : Result<int>(UsageError(valid.message()));
  COMMLENS_RETURN_IF_ERROR(Agree(boot, picked.status(), "GPU setup"));
  *device = *picked;
  int visible = 0;
  if (launch.launcher == Launcher::kLocal && cudaGetDeviceCount(&visible) == cudaSuccess)
    NoteOneGpuPerProcess(visible);
  COMMLENS_ASSIGN_OR_RETURN(*comm, InitComm(boot, *device, timeout, watchdog));
  watchdog.AddAbortHook([comm] {
    if (*comm) ncclCommAbort(comm->get());
  });
  return OkStatus();
}

Status WaitForStream(cudaStream_t stream, ncclComm_t comm, std::chrono::milliseconds timeout,
                     const std::string& what, const std::function<void()>& on_failure) {
  const auto deadline = Clock::now() + timeout;
  for (;;) {
    cudaError_t e = cudaStreamQuery(stream);
    if (e == cudaSuccess) return OkStatus();
    if (e != cudaErrorNotReady) return CudaStatus(e, what.c_str(), __FILE__, __LINE__);
    if (comm) {
      ncclResult_t async = ncclSuccess;
      ncclCommGetAsyncError(comm, &async);
      if (async != ncclSuccess && async != ncclInProgress) {
        if (on_failure) on_failure();
        return Error(fmt::format("NCCL reported an asynchronous error during {}: {}", what,
                                 ncclGetErrorString(async)));
      }
    }
    if (Clock::now() > deadline) {
      if (on_failure) on_failure();
      return TimeoutError(fmt::format("{} did not complete within {:g} s (--timeout); a peer "
                                      "may have failed",
                                      what, timeout.count() / 1000.0));
    }
    std::this_thread::yield();
  }
}

Result<RunInfo> DescribeRun(Bootstrap& boot, const LaunchInfo& launch,
                            const std::vector<std::pair<int, int>>& rank_devices, int nranks,
                            int gpus_per_process) {
  RunInfo run;
  run.launcher = std::string(LauncherName(launch.launcher));
  run.nprocs = boot.size();
  run.nranks = nranks;
  run.gpus_per_process = gpus_per_process;
  ncclGetVersion(&run.nccl_version_code);
  int v = run.nccl_version_code;
  run.nccl_version = fmt::format("{}.{}.{}", v / 10000, v % 10000 / 100, v % 100);
  cudaRuntimeGetVersion(&run.cuda_runtime_version);
  cudaDriverGetVersion(&run.cuda_driver_version);
  std::string mine;
  const std::string host = LocalHostName();
  for (auto [rank, device] : rank_devices) {
    cudaDeviceProp prop{};
    COMMLENS_CUDA(cudaGetDeviceProperties(&prop, device));
    char bus[32] = {};
    cudaDeviceGetPCIBusId(bus, sizeof bus, device);
    mine += Serialize({rank, host, device, prop.name, bus,
                       static_cast<int64_t>(prop.totalGlobalMem), prop.major, prop.minor});
  }
  COMMLENS_ASSIGN_OR_RETURN(std::vector<std::string> all, AllGatherStrings(boot, mine));
  for (const std::string& text : all) ParseInto(text, &run.gpus);
  for (const GpuInfo& g : run.gpus)
    if (std::find(run.hosts.begin(), run.hosts.end(), g.host) == run.hosts.end())
      run.hosts.push_back(g.host);
  return run;
}

void NoteOneGpuPerProcess(int visible) {
  if (visible <= 1) return;
  std::fprintf(stderr,
               "commlens bench: note: this mode drives one GPU per process, so this single "
               "process uses 1 of the %d visible GPUs; start one process per GPU (torchrun "
               "--no-python --nproc-per-node %d commlens bench ...) to run across them\n",
               visible, visible);
}

Result<RunInfo> DescribeOneGpuRun(Session& session, int rank, int device, int nranks) {
  COMMLENS_ASSIGN_OR_RETURN(RunInfo run,
                            DescribeRun(*session.boot, session.launch, {{rank, device}}, nranks, 1));
  run.tool_version = session.base.tool_version;
  run.start_time = session.base.start_time;
  return run;
}

}  // namespace commlens::bench::gpu
