// `commlens bench moe` on GPUs (driver.h): one GPU per process. For each backend, every
// iteration is
//   dispatch: pack the tokens by destination rank, exchange (moe_plan.h's layout)
//   combine:  exchange the received tokens back, sum each token's copies
// with CUDA events around both phases. The check runs once per backend after the timing,
// on freshly poisoned buffers: every received element, then every combined element.
#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "bench/driver.h"
#include "bench/errors.h"
#include "bench/gpu/cuda_check.h"
#include "bench/gpu/exchanger.h"
#include "bench/gpu/moe_kernels.h"
#include "bench/gpu/rank_setup.h"
#include "bench/moe/moe_plan.h"
#include "bench/stats.h"

namespace commlens::bench {

namespace gpu {

namespace {

constexpr std::chrono::seconds kWatchdogSlack{10};
constexpr int kBufferPacked = 0;    // dispatch source: tokens packed by destination
constexpr int kBufferReceived = 1;  // dispatch destination, combine source
constexpr int kBufferReturned = 2;  // combine destination (laid out like kBufferPacked)

class MoeBench {
 public:
  MoeBench(const MoeConfig& config, Session& session) : c_(config), s_(session) {}
  ~MoeBench() {
    s_.watchdog.ClearAbortHooks();
    exchanger_.reset();
    shmem_.reset();
  }

  Status Init();
  Result<RunInfo> Describe() { return DescribeOneGpuRun(s_, rank_, device_, nranks_); }
  // What the routing means for the traffic; computed once by Init (collective).
  const MoeTraffic& traffic() const { return traffic_; }
  Result<MoeBackendResult> Run(Backend backend);

 private:
  Status Iteration(bool time_it, int index);
  Status Wait(const std::string& what) {
    return WaitForStream(stream_.get(), comm_.get(), c_.timeout, what,
                         [this] { ncclCommAbort(comm_.release()); });
  }
  Result<int64_t> CountWrong(bool dispatch);
  Result<MoeTraffic> ComputeTraffic();
  MoePhaseResult Phase(const std::vector<double>& us, int64_t bytes, int64_t remote_bytes);

  const MoeConfig& c_;
  Session& s_;
  int rank_ = 0;
  int nranks_ = 1;
  int device_ = 0;
  MoePlan plan_;
  Stream stream_;
  Comm comm_;
  DeviceMem tokens_, out_, wrong_;
  DeviceMem send_ids_, recv_src_, recv_ids_, combine_begin_, combine_rows_, combine_weight_;
  ExchangePlan dispatch_, combine_;
  std::vector<Event> events_;  // 3 per timed iteration
  std::unique_ptr<NvshmemSession> shmem_;
  std::unique_ptr<Exchanger> exchanger_;
  MoeTraffic traffic_;
};

Status MoeBench::Init() {
  Bootstrap& boot = *s_.boot;
  rank_ = boot.rank();
  nranks_ = boot.size();
  COMMLENS_RETURN_IF_ERROR(OpenOneGpu(boot, s_.launch, ValidateForRanks(c_, nranks_), c_.timeout,
                                      s_.watchdog, &device_, &comm_));
  plan_ = PlanMoe(c_, rank_, nranks_);
  const int64_t tb = c_.token_bytes();
  dispatch_.sends = DispatchCopies(plan_, tb);
  combine_.sends = CombineCopies(plan_, tb);
  for (int q = 0; q < nranks_; ++q) {
    const int64_t recv_rows = plan_.recv_begin[q + 1] - plan_.recv_begin[q];
    const int64_t sent_rows = plan_.send_begin[q + 1] - plan_.send_begin[q];
    dispatch_.receives.push_back({0, plan_.recv_begin[q] * tb, recv_rows * tb});
    combine_.receives.push_back({0, plan_.send_begin[q] * tb, sent_rows * tb});
  }
  std::vector<int> recv_src(plan_.recv_rows());
  for (int q = 0; q < nranks_; ++q)
    std::fill(recv_src.begin() + plan_.recv_begin[q], recv_src.begin() + plan_.recv_begin[q + 1], q);
  Status alloc = [&]() -> Status {
    COMMLENS_ASSIGN_OR_RETURN(stream_, CreateStream(device_));
    COMMLENS_ASSIGN_OR_RETURN(tokens_, AllocateDevice(device_, c_.tokens * tb));
    COMMLENS_ASSIGN_OR_RETURN(out_, AllocateDevice(device_, c_.tokens * tb));
    COMMLENS_ASSIGN_OR_RETURN(wrong_, AllocateDevice(device_, sizeof(unsigned long long)));
    COMMLENS_ASSIGN_OR_RETURN(send_ids_, CopyToDevice(device_, plan_.send_tokens));
    COMMLENS_ASSIGN_OR_RETURN(recv_src_, CopyToDevice(device_, recv_src));
    COMMLENS_ASSIGN_OR_RETURN(recv_ids_, CopyToDevice(device_, plan_.recv_from_token));
    COMMLENS_ASSIGN_OR_RETURN(combine_begin_, CopyToDevice(device_, plan_.combine_begin));
    COMMLENS_ASSIGN_OR_RETURN(combine_rows_, CopyToDevice(device_, plan_.combine_rows));
    COMMLENS_ASSIGN_OR_RETURN(combine_weight_, CopyToDevice(device_, plan_.combine_weight));
    COMMLENS_RETURN_IF_ERROR(Exchanger::Upload(device_, &dispatch_));
    COMMLENS_RETURN_IF_ERROR(Exchanger::Upload(device_, &combine_));
    for (int i = 0; i < 3 * c_.iters; ++i) {
      COMMLENS_ASSIGN_OR_RETURN(Event e, CreateEvent(device_));
      events_.push_back(std::move(e));
    }
    COMMLENS_RETURN_IF_ERROR(LaunchMoeFill(tokens_.get(), c_.tokens, c_.hidden, rank_, stream_.get()));
    return Wait("filling the tokens");
  }();
  COMMLENS_RETURN_IF_ERROR(Agree(boot, alloc, "buffer allocation"));
  COMMLENS_ASSIGN_OR_RETURN(traffic_, ComputeTraffic());
  return OkStatus();
}

Result<MoeTraffic> MoeBench::ComputeTraffic() {
  MoeTraffic t;
  t.token_bytes = c_.token_bytes();
  const double mine[] = {static_cast<double>(plan_.recv_rows()),
                         static_cast<double>(plan_.remote_recv_rows())};
  COMMLENS_ASSIGN_OR_RETURN(std::vector<double> max, AllReduceMax(*s_.boot, mine));
  COMMLENS_ASSIGN_OR_RETURN(double total,
                            AllReduceSum(*s_.boot, static_cast<double>(plan_.send_rows())));
  t.max_recv_tokens = static_cast<int64_t>(max[0]);
  t.max_remote_recv_tokens = static_cast<int64_t>(max[1]);
  t.total_token_copies = static_cast<int64_t>(total);
  t.mean_ranks_per_token = total / (static_cast<double>(c_.tokens) * nranks_);
  return t;
}

Status MoeBench::Iteration(bool time_it, int index) {
  cudaStream_t st = stream_.get();
  auto mark = [&](int k) -> Status {
    if (time_it) COMMLENS_CUDA(cudaEventRecord(events_[3 * index + k].get(), st));
    return OkStatus();
  };
  COMMLENS_RETURN_IF_ERROR(mark(0));
  COMMLENS_RETURN_IF_ERROR(LaunchMoePack(tokens_.get(), static_cast<const int*>(send_ids_.get()),
                                         plan_.send_rows(), c_.hidden,
                                         exchanger_->buffer(kBufferPacked), st));
  COMMLENS_RETURN_IF_ERROR(exchanger_->Exchange(kBufferPacked, kBufferReceived, dispatch_, st));
  COMMLENS_RETURN_IF_ERROR(mark(1));
  COMMLENS_RETURN_IF_ERROR(exchanger_->Exchange(kBufferReceived, kBufferReturned, combine_, st));
  COMMLENS_RETURN_IF_ERROR(LaunchMoeCombine(
      exchanger_->buffer(kBufferReturned), static_cast<const int64_t*>(combine_begin_.get()),
      static_cast<const int*>(combine_rows_.get()), static_cast<const int*>(combine_weight_.get()),
      c_.tokens, c_.hidden, out_.get(), st));
  return mark(2);
}

Result<int64_t> MoeBench::CountWrong(bool dispatch) {
  cudaStream_t st = stream_.get();
  auto* wrong = static_cast<unsigned long long*>(wrong_.get());
  COMMLENS_CUDA(cudaMemsetAsync(wrong, 0, sizeof *wrong, st));
  if (dispatch)
    COMMLENS_RETURN_IF_ERROR(LaunchMoeCheckDispatch(
        exchanger_->buffer(kBufferReceived), static_cast<const int*>(recv_src_.get()),
        static_cast<const int*>(recv_ids_.get()), plan_.recv_rows(), c_.hidden, wrong, st));
  else
    COMMLENS_RETURN_IF_ERROR(
        LaunchMoeCheckCombine(out_.get(), c_.tokens, c_.hidden, rank_, c_.topk, wrong, st));
  COMMLENS_RETURN_IF_ERROR(Wait("the check"));
  unsigned long long n = 0;
  COMMLENS_CUDA(cudaMemcpy(&n, wrong, sizeof n, cudaMemcpyDeviceToHost));
  return AllReduceSum(*s_.boot, static_cast<int64_t>(n));
}

MoePhaseResult MoeBench::Phase(const std::vector<double>& us, int64_t bytes, int64_t remote) {
  MoePhaseResult p;
  IterationStats st = SummarizeIterations(us);
  p.p50_us = st.p50_us;
  p.p99_us = st.p99_us;
  p.min_us = st.min_us;
  p.max_us = st.max_us;
  for (double v : us) p.mean_us += v / us.size();
  p.gbps = p.p50_us > 0 ? bytes / p.p50_us / 1e3 : 0;
  p.remote_gbps = p.p50_us > 0 ? remote / p.p50_us / 1e3 : 0;
  return p;
}

Result<MoeBackendResult> MoeBench::Run(Backend backend) {
  Bootstrap& boot = *s_.boot;
  const int64_t tb = c_.token_bytes();
  const std::vector<size_t> sizes = {static_cast<size_t>(plan_.max_send_rows * tb),
                                     static_cast<size_t>(plan_.max_recv_rows * tb),
                                     static_cast<size_t>(plan_.max_send_rows * tb)};
  const auto limit = c_.timeout + kWatchdogSlack;
  if (backend == Backend::kNvshmem && !shmem_) {
    size_t heap = 0;
    for (size_t b : sizes) heap += b + (2u << 20);
    setenv("NVSHMEM_SYMMETRIC_SIZE", std::to_string(heap + (64u << 20)).c_str(), 0);
    COMMLENS_ASSIGN_OR_RETURN(shmem_, NvshmemSession::Start(boot, device_, c_.timeout, s_.watchdog));
  }
  {
    Watchdog::Guard guard(s_.watchdog, fmt::format("{} backend setup", BackendName(backend)), limit);
    exchanger_.reset();
    Result<std::unique_ptr<Exchanger>> x =
        Exchanger::Create(backend, comm_.get(), shmem_.get(), device_, sizes, c_.ctas);
    if (x.ok()) exchanger_ = std::move(*x);
    COMMLENS_RETURN_IF_ERROR(Agree(boot, x.status(), "backend setup"));
  }
  MoeBackendResult result;
  result.backend = std::string(BackendName(backend));
  {
    Watchdog::Guard guard(s_.watchdog, fmt::format("moe {} warm-up", result.backend), limit);
    for (int i = 0; i < c_.warmup; ++i) COMMLENS_RETURN_IF_ERROR(Iteration(false, 0));
    COMMLENS_RETURN_IF_ERROR(Wait(fmt::format("moe {} warm-up", result.backend)));
    COMMLENS_RETURN_IF_ERROR(boot.Barrier());
  }
  std::vector<double> dispatch(c_.iters), combine(c_.iters);
  {
    Watchdog::Guard guard(s_.watchdog, fmt::format("moe {} timed iterations", result.backend),
                          limit);
    for (int i = 0; i < c_.iters; ++i) COMMLENS_RETURN_IF_ERROR(Iteration(true, i));
    COMMLENS_RETURN_IF_ERROR(Wait(fmt::format("moe {} timed iterations", result.backend)));
    for (int i = 0; i < c_.iters; ++i) {
      float d = 0, k = 0;
      COMMLENS_CUDA(cudaEventElapsedTime(&d, events_[3 * i].get(), events_[3 * i + 1].get()));
      COMMLENS_CUDA(cudaEventElapsedTime(&k, events_[3 * i + 1].get(), events_[3 * i + 2].get()));
      dispatch[i] = d * 1e3;
      combine[i] = k * 1e3;
    }
  }
  COMMLENS_ASSIGN_OR_RETURN(dispatch, AllReduceMax(boot, dispatch));
  COMMLENS_ASSIGN_OR_RETURN(combine, AllReduceMax(boot, combine));
  const MoeTraffic& traffic = traffic_;
  const int64_t bytes = traffic.max_recv_tokens * tb;
  const int64_t remote = traffic.max_remote_recv_tokens * tb;
  result.dispatch = Phase(dispatch, bytes, remote);
  result.combine = Phase(combine, bytes, remote);
  if (c_.check) {
    Watchdog::Guard guard(s_.watchdog, fmt::format("moe {} check", result.backend), limit);
    for (int b : {kBufferReceived, kBufferReturned})
      COMMLENS_CUDA(cudaMemsetAsync(exchanger_->buffer(b), 0xFF, sizes[b], stream_.get()));
    COMMLENS_CUDA(cudaMemsetAsync(out_.get(), 0xFF, c_.tokens * tb, stream_.get()));
    COMMLENS_RETURN_IF_ERROR(Wait("poisoning the buffers"));
    COMMLENS_RETURN_IF_ERROR(boot.Barrier());
    COMMLENS_RETURN_IF_ERROR(Iteration(false, 0));
    COMMLENS_RETURN_IF_ERROR(Wait(fmt::format("moe {} check iteration", result.backend)));
    COMMLENS_RETURN_IF_ERROR(boot.Barrier());
    COMMLENS_ASSIGN_OR_RETURN(result.dispatch.wrong, CountWrong(true));
    COMMLENS_ASSIGN_OR_RETURN(result.combine.wrong, CountWrong(false));
  }
  exchanger_.reset();
  return result;
}

}  // namespace

}  // namespace gpu

Result<MoeReport> RunMoeOnGpus(const MoeConfig& config, Session& session) {
  gpu::MoeBench bench(config, session);
  COMMLENS_RETURN_IF_ERROR(bench.Init());
  MoeReport report;
  COMMLENS_ASSIGN_OR_RETURN(report.run, bench.Describe());
  report.config = config;
  report.traffic = bench.traffic();
  for (Backend backend : config.backends) {
    COMMLENS_ASSIGN_OR_RETURN(MoeBackendResult r, bench.Run(backend));
    report.backends.push_back(std::move(r));
  }
  return report;
}

}  // namespace commlens::bench
