#include "bench/gpu/gpu_bench.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>

#include <fmt/format.h>

#include "bench/errors.h"
#include "bench/gpu/cuda_check.h"
#include "bench/gpu/kernels.h"
#include "bench/gpu/rank_setup.h"

namespace commlens::bench::gpu {

namespace {

using Clock = std::chrono::steady_clock;

// The watchdog is a backstop behind Sync's own deadline, so it fires later.
constexpr std::chrono::seconds kWatchdogSlack{10};
constexpr uint32_t kTimedSeed = 99;  // inputs of the timed passes (their values do not matter)

}  // namespace

GpuBench::GpuBench(const BenchConfig& config, Bootstrap& bootstrap, Watchdog& watchdog)
    : config_(config), boot_(bootstrap), watchdog_(watchdog) {
  watchdog_.AddAbortHook([this] {
    std::lock_guard<std::mutex> lock(abort_mu_);
    if (!comms_live_) return;
    for (LocalRank& r : ranks_)
      if (r.comm) ncclCommAbort(r.comm.get());
  });
}

GpuBench::~GpuBench() {
  Watchdog::Guard guard(watchdog_, "destroying the NCCL communicators",
                        config_.timeout + kWatchdogSlack);
  exchanger_.reset();  // its windows belong to the communicators
  shmem_.reset();
  {
    std::lock_guard<std::mutex> lock(abort_mu_);
    comms_live_ = false;
  }
  for (LocalRank& r : ranks_) r.comm.Reset();
  watchdog_.ClearAbortHooks();
}

Status GpuBench::Init(const LaunchInfo& launch) {
  elt_size_ = Info(config_.dtype).size;
  Status local = SelectDevices(launch);
  if (local.ok()) local = CreateStreams();
  COMMLENS_RETURN_IF_ERROR(Agree(boot_, local, "GPU setup"));
  COMMLENS_RETURN_IF_ERROR(InitComms());
  // The buffers come after the communicators, in nccl-tests' order, so that NCCL's own
  // allocations and the benchmark's land at the same places in GPU memory for both tools.
  return Agree(boot_, AllocateBuffers(), "buffer allocation");
}

Status GpuBench::SelectDevices(const LaunchInfo& launch) {
  // First, so every process makes this collective call whatever fails next.
  COMMLENS_ASSIGN_OR_RETURN(local_rank_, LocalRankOf(launch, boot_));
  int visible = 0;
  cudaError_t e = cudaGetDeviceCount(&visible);
  if (e != cudaSuccess || visible == 0)
    return NoGpuError(fmt::format("no CUDA GPU is visible to this process ({})",
                                  e != cudaSuccess ? cudaGetErrorString(e) : "0 devices"));
  // GPU-initiated backends drive one GPU per process (NVSHMEM has one PE per process).
  const bool one_gpu = config_.backends != std::vector<Backend>{Backend::kNccl};
  gpus_per_process_ = config_.gpus_per_process > 0
                          ? config_.gpus_per_process
                          : (launch.launcher == Launcher::kLocal && !one_gpu ? visible : 1);
  if (one_gpu && launch.launcher == Launcher::kLocal) NoteOneGpuPerProcess(visible);
  first_device_ = local_rank_ * gpus_per_process_;
  if (first_device_ + gpus_per_process_ > visible) {
    if (visible != gpus_per_process_)
      return NoGpuError(fmt::format(
          "asked for {} GPU(s) per process; local rank {} needs devices {}..{} but {} "
          "visible",
          gpus_per_process_, local_rank_, first_device_, first_device_ + gpus_per_process_ - 1,
          visible == 1 ? "only 1 is" : fmt::format("only {} are", visible)));
    first_device_ = 0;  // the launcher restricted each process to its own GPUs
  }
  nranks_ = boot_.size() * gpus_per_process_;
  for (model::CommOp op : config_.collectives) {
    const CollectiveSpec* spec = FindCollective(op);
    if (spec && spec->rooted && config_.root >= nranks_)
      return UsageError(fmt::format("-r/--root {} is not a rank of this {}-rank run",
                                    config_.root, nranks_));
  }
  return OkStatus();
}

Status GpuBench::CreateStreams() {
  for (int i = 0; i < gpus_per_process_; ++i) {
    LocalRank r;
    r.device = first_device_ + i;
    r.rank = boot_.rank() * gpus_per_process_ + i;
    COMMLENS_ASSIGN_OR_RETURN(r.stream, CreateStream(r.device));
    ranks_.push_back(std::move(r));
  }
  return OkStatus();
}

Status GpuBench::AllocateBuffers() {
  // nccl-tests allocates -e bytes for both buffers; every size's send and receive
  // extents (with in-place offsets and the rotation) fit inside.
  buffer_bytes_ = std::max<int64_t>(config_.max_bytes, 256);
  for (LocalRank& r : ranks_) {
    COMMLENS_ASSIGN_OR_RETURN(r.send, AllocateNccl(r.device, buffer_bytes_));
    COMMLENS_ASSIGN_OR_RETURN(r.recv, AllocateNccl(r.device, buffer_bytes_));
    COMMLENS_ASSIGN_OR_RETURN(r.wrong, AllocateDevice(r.device, sizeof(unsigned long long)));
    for (int k = 0; k <= config_.iters; ++k) {
      COMMLENS_ASSIGN_OR_RETURN(Event ev, CreateEvent(r.device));
      r.events.push_back(std::move(ev));
    }
  }
  return OkStatus();
}

Status GpuBench::InitComms() {
  ncclUniqueId id{};
  Status local = boot_.rank() == 0 ? NcclStatus(ncclGetUniqueId(&id), "ncclGetUniqueId",
                                                __FILE__, __LINE__)
                                   : OkStatus();
  COMMLENS_RETURN_IF_ERROR(Agree(boot_, local, "ncclGetUniqueId"));
  COMMLENS_RETURN_IF_ERROR(
      boot_.Broadcast(std::as_writable_bytes(std::span<ncclUniqueId>(&id, 1))));

  ncclConfig_t cfg = NCCL_CONFIG_INITIALIZER;
#if NCCL_VERSION_CODE >= NCCL_VERSION(2, 28, 0)
  cfg.nvlinkCentricSched = 1;  // as nccl-tests 2.19.6 sets for NCCL >= 2.28
#endif
  Watchdog::Guard guard(watchdog_, fmt::format("NCCL communicator setup ({} ranks)", nranks_),
                        config_.timeout);
  std::vector<ncclComm_t> comms(ranks_.size(), nullptr);
  COMMLENS_NCCL(ncclGroupStart());
  Status queued = OkStatus();
  for (size_t i = 0; i < ranks_.size() && queued.ok(); ++i) {
    queued = CudaStatus(cudaSetDevice(ranks_[i].device), "cudaSetDevice", __FILE__, __LINE__);
    if (queued.ok())
      queued = NcclStatus(ncclCommInitRankConfig(&comms[i], nranks_, id, ranks_[i].rank, &cfg),
                          "ncclCommInitRankConfig", __FILE__, __LINE__);
  }
  ncclResult_t end = ncclGroupEnd();
  std::lock_guard<std::mutex> lock(abort_mu_);
  for (size_t i = 0; i < ranks_.size(); ++i)
    if (comms[i]) ranks_[i].comm = Comm(ranks_[i].device, comms[i]);
  comms_live_ = true;
  COMMLENS_RETURN_IF_ERROR(queued);
  if (end != ncclSuccess)
    return Error(fmt::format("NCCL communicator setup failed for {} ranks: {}", nranks_,
                             NcclStatus(end, "ncclGroupEnd", __FILE__, __LINE__).message()));
  return OkStatus();
}

void GpuBench::AbortComms() {
  std::lock_guard<std::mutex> lock(abort_mu_);
  comms_live_ = false;
  for (LocalRank& r : ranks_)
    if (r.comm) ncclCommAbort(r.comm.release());
}

std::string GpuBench::Phase(const Step& s, const char* pass) const {
  return fmt::format("{} {} bytes {} ({})", s.spec->name, s.size_bytes,
                     s.in_place ? "in-place" : "out-of-place", pass);
}

Step GpuBench::StepFor(const CollectiveSpec& spec, RunFn run, int64_t sweep_size) const {
  Step s{&spec, run, spec.counts(sweep_size / elt_size_, elt_size_, nranks_), 0, false};
  s.size_bytes = s.counts.SizeBytes(elt_size_);
  return s;
}

ValueGen GpuBench::GenFor(const Step& s, uint32_t seed) const {
  return MakeValueGen(config_.dtype, config_.op, s.spec->reduces, nranks_, seed);
}

char* GpuBench::SendOf(const LocalRank& r) const {
  return static_cast<char*>(exchanger_ ? exchanger_->buffer(0) : r.send.get());
}

char* GpuBench::RecvOf(const LocalRank& r) const {
  return static_cast<char*>(exchanger_ ? exchanger_->buffer(1) : r.recv.get());
}

Status GpuBench::StartBackend(Backend backend) {
  exchanger_.reset();
  backend_ = backend;
  if (backend == Backend::kNccl) return OkStatus();
  if (ranks_.size() != 1)
    return UsageError(fmt::format("--backend {} drives one GPU per process; start one process "
                                  "per GPU (torchrun, mpirun, srun)",
                                  BackendName(backend)));
  LocalRank& r = ranks_.front();
  Status local = OkStatus();
  if (backend == Backend::kNvshmem && !shmem_) {
    // The symmetric heap must hold both buffers; NVSHMEM's default is 1 GiB.
    const size_t heap = 2 * static_cast<size_t>(buffer_bytes_) + (64u << 20);
    setenv("NVSHMEM_SYMMETRIC_SIZE", std::to_string(heap).c_str(), /*overwrite=*/0);
    Result<std::unique_ptr<NvshmemSession>> session =
        NvshmemSession::Start(boot_, r.device, config_.timeout, watchdog_);
    if (!session.ok()) return session.status();
    shmem_ = std::move(*session);
  }
  Watchdog::Guard guard(watchdog_, fmt::format("{} backend setup", BackendName(backend)),
                        config_.timeout + kWatchdogSlack);
  Result<std::unique_ptr<Exchanger>> x = Exchanger::Create(
      backend, r.comm.get(), shmem_.get(), r.device,
      {static_cast<size_t>(buffer_bytes_), static_cast<size_t>(buffer_bytes_)}, config_.ctas);
  if (x.ok()) exchanger_ = std::move(*x);
  return Agree(boot_, x.status(), "backend setup");
}

Status GpuBench::Enqueue(const Step& s, int iter) {
  const int64_t total = s.size_bytes;
  const int64_t steps = total > 0 ? std::max<int64_t>(config_.max_bytes / total, 1) : 1;
  const int64_t shift = total * (iter % steps);
  if (exchanger_)
    return exchanger_->AllToAll(0, 1, static_cast<size_t>(shift),
                                static_cast<size_t>(s.counts.param * elt_size_),
                                ranks_.front().stream.get());
  const bool grouped = ranks_.size() > 1;
  if (grouped) COMMLENS_NCCL(ncclGroupStart());
  for (LocalRank& r : ranks_) {
    char* recv = RecvOf(r) + shift;
    char* send = SendOf(r) + shift;
    OpArgs a;
    a.send = s.in_place ? recv + s.counts.send_inplace_offset * r.rank * elt_size_ : send;
    a.recv = recv + (s.in_place ? s.counts.recv_inplace_offset * r.rank * elt_size_ : 0);
    a.count = static_cast<size_t>(s.counts.param);
    a.type = ToNccl(config_.dtype);
    a.op = ToNccl(config_.op);
    a.root = config_.root;
    a.rank = r.rank;
    a.nranks = nranks_;
    a.comm = r.comm.get();
    a.stream = r.stream.get();
    ncclResult_t res = s.run(a);
    if (res != ncclSuccess) {
      if (grouped) ncclGroupEnd();
      return NcclStatus(res, s.spec->name.data(), __FILE__, __LINE__);
    }
  }
  if (grouped) COMMLENS_NCCL(ncclGroupEnd());
  return OkStatus();
}

Status GpuBench::Sync(const std::string& what) {
  // Polls like nccl-tests (cudaStreamQuery plus NCCL's asynchronous error) so a failed
  // or vanished peer ends in an error after --timeout instead of a hang.
  const auto deadline = Clock::now() + config_.timeout;
  std::vector<bool> done(ranks_.size(), false);
  size_t remaining = ranks_.size();
  while (remaining > 0) {
    bool idle = true;
    for (size_t i = 0; i < ranks_.size(); ++i) {
      if (done[i]) continue;
      cudaError_t e = cudaStreamQuery(ranks_[i].stream.get());
      if (e == cudaSuccess) {
        done[i] = true;
        --remaining;
        idle = false;
        continue;
      }
      if (e != cudaErrorNotReady) return CudaStatus(e, what.c_str(), __FILE__, __LINE__);
      ncclResult_t async = ncclSuccess;
      ncclCommGetAsyncError(ranks_[i].comm.get(), &async);
      if (async != ncclSuccess && async != ncclInProgress) {
        AbortComms();
        return Error(fmt::format("NCCL reported an asynchronous error during {}: {}", what,
                                 ncclGetErrorString(async)));
      }
    }
    if (remaining > 0 && Clock::now() > deadline) {
      AbortComms();
      return TimeoutError(fmt::format("{} did not complete within {:g} s (--timeout); a peer "
                                      "may have failed",
                                      what, config_.timeout.count() / 1000.0));
    }
    if (idle) std::this_thread::yield();
  }
  return OkStatus();
}

Status GpuBench::RunOnce(const Step& s) {
  if (!config_.graph) return Enqueue(s, 0);
  std::vector<GraphExec> graphs;
  COMMLENS_RETURN_IF_ERROR(Capture(s, 1, &graphs));
  COMMLENS_RETURN_IF_ERROR(Launch(graphs));
  return Sync(Phase(s, "single op"));  // graphs must finish before they are destroyed
}

Status GpuBench::Capture(const Step& s, int iters, std::vector<GraphExec>* graphs) {
  for (LocalRank& r : ranks_)
    COMMLENS_CUDA(cudaStreamBeginCapture(r.stream.get(), cudaStreamCaptureModeThreadLocal));
  Status captured = OkStatus();
  for (int i = 0; i < iters && captured.ok(); ++i) captured = Enqueue(s, i);
  // End every capture before instantiating any graph: while one of this thread's streams
  // is still capturing, cudaGraphInstantiate is refused (cudaErrorStreamCaptureUnsupported).
  std::vector<cudaGraph_t> captured_graphs(ranks_.size(), nullptr);
  for (size_t i = 0; i < ranks_.size(); ++i) {  // always end every capture, even after an error
    cudaError_t e = cudaStreamEndCapture(ranks_[i].stream.get(), &captured_graphs[i]);
    if (captured.ok()) captured = CudaStatus(e, "cudaStreamEndCapture", __FILE__, __LINE__);
  }
  for (size_t i = 0; i < ranks_.size(); ++i) {
    cudaGraph_t graph = captured_graphs[i];
    if (graph && captured.ok()) {
      DeviceGuard device(ranks_[i].device);
      cudaGraphExec_t exec = nullptr;
      captured = CudaStatus(cudaGraphInstantiate(&exec, graph, 0), "cudaGraphInstantiate",
                            __FILE__, __LINE__);
      if (exec) graphs->emplace_back(ranks_[i].device, exec);
    }
    if (graph) cudaGraphDestroy(graph);
  }
  return captured;
}

Status GpuBench::Launch(const std::vector<GraphExec>& graphs) {
  for (size_t i = 0; i < graphs.size(); ++i)
    COMMLENS_CUDA(cudaGraphLaunch(graphs[i].get(), ranks_[i].stream.get()));
  return OkStatus();
}

Result<double> GpuBench::TimedPass(const Step& s) {
  const int iters = config_.iters;
  if (config_.graph) {
    std::vector<GraphExec> graphs;
    COMMLENS_RETURN_IF_ERROR(Capture(s, iters, &graphs));
    COMMLENS_RETURN_IF_ERROR(boot_.Barrier());
    auto t0 = Clock::now();
    COMMLENS_RETURN_IF_ERROR(Launch(graphs));
    COMMLENS_RETURN_IF_ERROR(Sync(Phase(s, "timed graph")));
    return std::chrono::duration<double>(Clock::now() - t0).count() / iters;
  }
  auto t0 = Clock::now();
  for (int i = 0; i < iters; ++i) COMMLENS_RETURN_IF_ERROR(Enqueue(s, i));
  COMMLENS_RETURN_IF_ERROR(Sync(Phase(s, "timed")));
  return std::chrono::duration<double>(Clock::now() - t0).count() / iters;
}

Result<IterationStats> GpuBench::EventPass(const Step& s) {
  const int iters = config_.iters;
  std::vector<GraphExec> graphs;
  if (config_.graph) COMMLENS_RETURN_IF_ERROR(Capture(s, 1, &graphs));
  for (int i = 0; i <= iters; ++i) {
    for (LocalRank& r : ranks_) {
      COMMLENS_CUDA(cudaSetDevice(r.device));
      COMMLENS_CUDA(cudaEventRecord(r.events[i].get(), r.stream.get()));
    }
    if (i == iters) break;
    COMMLENS_RETURN_IF_ERROR(config_.graph ? Launch(graphs) : Enqueue(s, i));
  }
  COMMLENS_RETURN_IF_ERROR(Sync(Phase(s, "per-iteration")));
  std::vector<double> per_iter(iters, 0.0);  // max over local GPUs, microseconds
  for (LocalRank& r : ranks_) {
    for (int i = 0; i < iters; ++i) {
      float ms = 0;
      COMMLENS_CUDA(cudaEventElapsedTime(&ms, r.events[i].get(), r.events[i + 1].get()));
      per_iter[i] = std::max(per_iter[i], ms * 1e3);
    }
  }
  COMMLENS_ASSIGN_OR_RETURN(std::vector<double> global, AllReduceMax(boot_, per_iter));
  return SummarizeIterations(global);
}

Status GpuBench::FillInputs(const Step& s, const ValueGen& gen) {
  const CollCounts& c = s.counts;
  for (LocalRank& r : ranks_) {
    DeviceGuard device(r.device);
    char* recv = RecvOf(r);
    int64_t send_at = s.in_place ? c.send_inplace_offset * r.rank : 0;
    int64_t recv_at = s.in_place ? c.recv_inplace_offset * r.rank : 0;
    int64_t extent = s.in_place ? std::max(send_at + c.send, recv_at + c.recv) : c.recv;
    // 0xFF bytes are NaN in every floating type and out of the inputs' range in every
    // integer type, so an element the collective fails to write is counted wrong.
    COMMLENS_CUDA(cudaMemsetAsync(recv, 0xFF, extent * elt_size_, r.stream.get()));
    void* input = s.in_place ? recv + send_at * elt_size_ : SendOf(r);
    COMMLENS_RETURN_IF_ERROR(
        LaunchFillInput(config_.dtype, input, c.send, gen, r.rank, r.stream.get()));
  }
  return OkStatus();
}

Result<std::optional<int64_t>> GpuBench::CheckPass(const Step& s) {
  if (!config_.check || (s.in_place && !s.spec->in_place_verifiable))
    return std::optional<int64_t>();
  const ValueGen gen = GenFor(s, ++check_runs_);
  COMMLENS_RETURN_IF_ERROR(FillInputs(s, gen));
  COMMLENS_RETURN_IF_ERROR(RunOnce(s));
  COMMLENS_RETURN_IF_ERROR(Sync(Phase(s, "check op")));
  const CollCounts& c = s.counts;
  for (LocalRank& r : ranks_) {
    DeviceGuard device(r.device);
    char* out = RecvOf(r) +
                (s.in_place ? c.recv_inplace_offset * r.rank * elt_size_ : 0);
    int64_t bad = config_.corrupt_element_for_test;
    if (r.rank == 0 && bad >= 0 && bad < c.recv)  // the test hook (bench_config.h)
      COMMLENS_CUDA(cudaMemsetAsync(out + bad * elt_size_, 0xFF, elt_size_, r.stream.get()));
    COMMLENS_CUDA(cudaMemsetAsync(r.wrong.get(), 0, sizeof(unsigned long long), r.stream.get()));
    ExpectPlan plan = s.spec->expect(c, r.rank, nranks_, config_.root);
    COMMLENS_RETURN_IF_ERROR(LaunchCountWrong(config_.dtype, out, c.recv, gen, plan, config_.op,
                                              static_cast<unsigned long long*>(r.wrong.get()),
                                              r.stream.get()));
  }
  COMMLENS_RETURN_IF_ERROR(Sync(Phase(s, "check")));
  int64_t wrong = 0;
  for (LocalRank& r : ranks_) {
    unsigned long long n = 0;
    COMMLENS_CUDA(cudaMemcpy(&n, r.wrong.get(), sizeof n, cudaMemcpyDeviceToHost));
    wrong += static_cast<int64_t>(n);
  }
  COMMLENS_ASSIGN_OR_RETURN(int64_t total, AllReduceSum(boot_, wrong));
  return std::optional<int64_t>(total);
}

Result<PlacementResult> GpuBench::Measure(const Step& s) {
  const auto limit = config_.timeout + kWatchdogSlack;
  PlacementResult p;
  {
    Watchdog::Guard guard(watchdog_, Phase(s, "first op"), limit);
    if (config_.check) COMMLENS_RETURN_IF_ERROR(FillInputs(s, GenFor(s, kTimedSeed)));
    COMMLENS_RETURN_IF_ERROR(Enqueue(s, 0));
    COMMLENS_RETURN_IF_ERROR(Sync(Phase(s, "first op")));
    COMMLENS_RETURN_IF_ERROR(boot_.Barrier());
  }
  {
    Watchdog::Guard guard(watchdog_, Phase(s, "timed"), limit);
    COMMLENS_ASSIGN_OR_RETURN(double seconds, TimedPass(s));
    COMMLENS_ASSIGN_OR_RETURN(double sum, AllReduceSum(boot_, seconds));
    p.time_us = sum / boot_.size() * 1e6;
  }
  Bandwidth bw = ComputeBandwidth(s.size_bytes, p.time_us, s.spec->BusBwFactor(nranks_));
  p.algbw_gbps = bw.algbw_gbps;
  p.busbw_gbps = bw.busbw_gbps;
  {
    Watchdog::Guard guard(watchdog_, Phase(s, "per-iteration"), limit);
    COMMLENS_ASSIGN_OR_RETURN(IterationStats st, EventPass(s));
    p.p50_us = st.p50_us;
    p.p99_us = st.p99_us;
    p.min_us = st.min_us;
    p.max_us = st.max_us;
  }
  {
    Watchdog::Guard guard(watchdog_, Phase(s, "check"), limit);
    COMMLENS_RETURN_IF_ERROR(boot_.Barrier());
    COMMLENS_ASSIGN_OR_RETURN(p.wrong, CheckPass(s));
  }
  return p;
}

Status GpuBench::SpinUp(const CollectiveSpec& spec, RunFn run) {
  // Communicator setup leaves the GPUs and the CPU idle for seconds, and a few
  // milliseconds of warm-up do not bring their clocks back: on the 4 x H200 machine the
  // first sizes timed were 30-50% slow in a quarter of the runs (docs/bench.md). So the
  // collective runs at the largest size for about --spin-up first. Every rank must make
  // the same calls, so the count comes from a short calibration whose slowest time all
  // ranks agree on, not from each rank's own clock.
  if (config_.spin_up.count() == 0) return OkStatus();
  constexpr int kCalibrationOps = 4;
  constexpr int64_t kMaxOps = 1'000'000;
  Watchdog::Guard guard(watchdog_, fmt::format("{} spin-up", spec.name),
                        config_.timeout + config_.spin_up + kWatchdogSlack);
  const int64_t size = SizeSweep(config_).back();
  const Step s = StepFor(spec, run, size);
  const std::string what = fmt::format("{} spin-up at {} bytes", spec.name, size);
  auto t0 = Clock::now();
  for (int i = 0; i < kCalibrationOps; ++i) COMMLENS_RETURN_IF_ERROR(Enqueue(s, i));
  COMMLENS_RETURN_IF_ERROR(Sync(what));
  const double mine = std::chrono::duration<double>(Clock::now() - t0).count() / kCalibrationOps;
  COMMLENS_ASSIGN_OR_RETURN(std::vector<double> per_op,
                            AllReduceMax(boot_, std::span<const double>(&mine, 1)));
  const double target = std::chrono::duration<double>(config_.spin_up).count();
  const int64_t ops = std::clamp<int64_t>(
      static_cast<int64_t>(target / std::max(per_op[0], 1e-9)) - kCalibrationOps, 0, kMaxOps);
  for (int64_t i = 0; i < ops; ++i)
    COMMLENS_RETURN_IF_ERROR(Enqueue(s, static_cast<int>(i % (1 << 30))));
  return Sync(what);
}

Status GpuBench::Warmup(const CollectiveSpec& spec, RunFn run) {
  // nccl-tests warms up every size of a x2 sweep before measuring any.
  Watchdog::Guard guard(watchdog_, fmt::format("{} warm-up", spec.name),
                        config_.timeout + kWatchdogSlack);
  for (int64_t size : SizeSweep(config_.min_bytes, config_.max_bytes, 2, config_.step_bytes)) {
    const Step s = StepFor(spec, run, size);
    for (int i = 0; i < config_.warmup; ++i) COMMLENS_RETURN_IF_ERROR(Enqueue(s, i));
    COMMLENS_RETURN_IF_ERROR(Sync(fmt::format("{} warm-up at {} bytes", spec.name, size)));
  }
  return OkStatus();
}

Status GpuBench::RunCollective(const CollectiveSpec& spec, Reporter& reporter, Backend backend) {
  RunFn run = RunnerFor(spec.op);
  if (!run) return Error(fmt::format("no run function for {}", spec.name));
  COMMLENS_RETURN_IF_ERROR(StartBackend(backend));
  reporter.BeginCollective(spec, config_, nranks_, backend);
  COMMLENS_RETURN_IF_ERROR(SpinUp(spec, run));
  COMMLENS_RETURN_IF_ERROR(Warmup(spec, run));
  for (int64_t size : SizeSweep(config_)) {
    Step s = StepFor(spec, run, size);
    SizeResult row;
    row.size_bytes = s.size_bytes;
    row.count = s.counts.param;
    row.send_bytes = s.counts.send * elt_size_;
    row.recv_bytes = s.counts.recv * elt_size_;
    COMMLENS_ASSIGN_OR_RETURN(row.out_of_place, Measure(s));
    if (backend == Backend::kNccl) {
      s.in_place = true;
      COMMLENS_ASSIGN_OR_RETURN(row.in_place, Measure(s));
    }
    reporter.AddRow(row);
  }
  reporter.EndCollective();
  exchanger_.reset();
  return OkStatus();
}

}  // namespace commlens::bench::gpu
