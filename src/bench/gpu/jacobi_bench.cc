// `commlens bench jacobi` on GPUs (driver.h): one GPU per process, rows split over the
// processes (jacobi_ref.h). Each variant (jacobi_config.h) runs |warmup| iterations, then
// |iters| timed by the host clock after a barrier; then, when checking, |check_iters|
// iterations of the small grid from its initial state, gathered on process 0 and compared
// element by element with the CPU reference (the same float operations, so exactly).
// The one-GPU baseline runs the NCCL variant's kernel on the whole grid on every GPU at
// once, the halos copied locally.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "bench/driver.h"
#include "bench/errors.h"
#include "bench/gpu/cuda_check.h"
#include "bench/gpu/jacobi_kernels.h"
#include "bench/gpu/nvshmem_session.h"
#include "bench/gpu/rank_setup.h"
#include "bench/jacobi/jacobi_ref.h"

namespace commlens::bench {

namespace gpu {

namespace {

using Clock = std::chrono::steady_clock;
constexpr std::chrono::seconds kWatchdogSlack{10};
constexpr int kSegment = COMMLENS_NVSHMEM_JACOBI_SEGMENT;  // columns per NVSHMEM signal

int Segments(int nx) { return (nx - 2 + kSegment - 1) / kSegment; }

// One rank's part of one grid: its rows with a halo row above and below, twice.
struct Grid {
  int nx = 0;
  int ny = 0;
  RowRange mine;
  int top = 0;       // rank holding the rows above
  int bottom = 0;    // rank holding the rows below
  int top_rows = 0;  // its row count
  bool local = false;  // the one-GPU baseline: halos copied, no peers
  float* a = nullptr;
  float* a_new = nullptr;
  int64_t iteration = 0;
  DeviceMem plain[2];
  SymmetricBuffer symmetric[2];
  SymmetricBuffer signals;  // top then bottom, Segments(nx) each (nvshmem-nb)
  GraphExec graph;          // nccl-graph: two iterations
};

class JacobiBench {
 public:
  JacobiBench(const JacobiConfig& config, Session& session) : c_(config), s_(session) {}
  ~JacobiBench() {
    s_.watchdog.ClearAbortHooks();
    grid_.reset();
    shmem_.reset();
  }

  Status Init();
  Result<RunInfo> Describe() { return DescribeOneGpuRun(s_, rank_, device_, nranks_); }
  Result<double> SingleGpu();
  Result<JacobiVariantResult> Run(JacobiVariant variant, double single_us);

 private:
  Status Prepare(int nx, int ny, bool symmetric, bool local);
  Status Step(JacobiVariant v);
  Status Halo(cudaStream_t stream);
  Status OverlapStep();
  Status CaptureGraph();
  Result<double> Time(JacobiVariant v, int iters);
  Status Check(JacobiVariant v, JacobiVariantResult* result);
  Status Wait(const std::string& what) {
    return WaitForStream(main_.get(), comm_.get(), c_.timeout, what,
                         [this] { ncclCommAbort(comm_.release()); });
  }

  const JacobiConfig& c_;
  Session& s_;
  int rank_ = 0;
  int nranks_ = 1;
  int device_ = 0;
  Comm comm_;
  Stream main_;
  Stream high_;  // boundary rows and halo exchange of nccl-overlap
  Event start_, boundary_done_;
  std::unique_ptr<NvshmemSession> shmem_;
  std::unique_ptr<Grid> grid_;
};

Status JacobiBench::Init() {
  Bootstrap& boot = *s_.boot;
  rank_ = boot.rank();
  nranks_ = boot.size();
  COMMLENS_RETURN_IF_ERROR(OpenOneGpu(boot, s_.launch, ValidateForRanks(c_, nranks_), c_.timeout,
                                      s_.watchdog, &device_, &comm_));
  Status streams = [&]() -> Status {
    int least = 0, greatest = 0;
    COMMLENS_CUDA(cudaDeviceGetStreamPriorityRange(&least, &greatest));
    COMMLENS_ASSIGN_OR_RETURN(main_, CreateStream(device_));
    COMMLENS_ASSIGN_OR_RETURN(high_, CreateStream(device_, greatest));
    COMMLENS_ASSIGN_OR_RETURN(start_, CreateEvent(device_));
    COMMLENS_ASSIGN_OR_RETURN(boundary_done_, CreateEvent(device_));
    return OkStatus();
  }();
  COMMLENS_RETURN_IF_ERROR(Agree(boot, streams, "stream setup"));
  if (std::any_of(c_.variants.begin(), c_.variants.end(), UsesNvshmem)) {
    // Both grids' buffers and signals must fit the symmetric heap (default 1 GiB).
    const RowRange biggest = SplitRows(c_.ny, nranks_, 0);
    const size_t grid = 2 * size_t(biggest.rows + 2) * c_.nx * sizeof(float);
    setenv("NVSHMEM_SYMMETRIC_SIZE", std::to_string(grid + (256u << 20)).c_str(), 0);
    COMMLENS_ASSIGN_OR_RETURN(shmem_, NvshmemSession::Start(boot, device_, c_.timeout, s_.watchdog));
  }
  return OkStatus();
}

Status JacobiBench::Prepare(int nx, int ny, bool symmetric, bool local) {
  grid_.reset();  // frees the previous grid's memory first (collective for NVSHMEM)
  auto g = std::make_unique<Grid>();
  g->nx = nx;
  g->ny = ny;
  g->local = local;
  const int n = local ? 1 : nranks_;
  const int me = local ? 0 : rank_;
  g->mine = SplitRows(ny, n, me);
  g->top = (me - 1 + n) % n;
  g->bottom = (me + 1) % n;
  g->top_rows = SplitRows(ny, n, g->top).rows;
  // Symmetric buffers have the same size everywhere: the largest rank's (rank 0's).
  const size_t rows = static_cast<size_t>(symmetric ? SplitRows(ny, n, 0).rows : g->mine.rows);
  const size_t bytes = (rows + 2) * nx * sizeof(float);
  for (int k = 0; k < 2; ++k) {
    if (symmetric) {
      COMMLENS_ASSIGN_OR_RETURN(g->symmetric[k], shmem_->Allocate(bytes));
    } else {
      COMMLENS_ASSIGN_OR_RETURN(g->plain[k], AllocateDevice(device_, bytes));
    }
  }
  g->a = static_cast<float*>(symmetric ? g->symmetric[0].get() : g->plain[0].get());
  g->a_new = static_cast<float*>(symmetric ? g->symmetric[1].get() : g->plain[1].get());
  // Boundary columns of every local row, halos included; the rest starts at zero.
  std::vector<float> column(g->mine.rows + 2);
  for (int i = 0; i < g->mine.rows + 2; ++i)
    column[i] = JacobiBoundary((g->mine.first - 1 + i + ny) % ny, ny);
  DeviceGuard guard(device_);
  for (float* buffer : {g->a, g->a_new}) {
    COMMLENS_CUDA(cudaMemsetAsync(buffer, 0, bytes, main_.get()));
    for (int col : {0, nx - 1})
      COMMLENS_CUDA(cudaMemcpy2DAsync(buffer + col, nx * sizeof(float), column.data(),
                                      sizeof(float), sizeof(float), column.size(),
                                      cudaMemcpyHostToDevice, main_.get()));
  }
  if (symmetric) {
    const size_t signal_bytes = 2 * static_cast<size_t>(Segments(nx)) * sizeof(uint64_t);
    COMMLENS_ASSIGN_OR_RETURN(g->signals, shmem_->Allocate(signal_bytes));
    COMMLENS_CUDA(cudaMemsetAsync(g->signals.get(), 0, signal_bytes, main_.get()));
  }
  grid_ = std::move(g);
  COMMLENS_RETURN_IF_ERROR(Wait("preparing the grid"));
  return s_.boot->Barrier();
}

Status JacobiBench::Halo(cudaStream_t stream) {
  Grid& g = *grid_;
  const long long nx = g.nx;
  const int rows = g.mine.rows;
  if (g.local) {  // periodic rows on one GPU: copy the far rows into the halos
    COMMLENS_CUDA(cudaMemcpyAsync(g.a_new, g.a_new + rows * nx, nx * sizeof(float),
                                  cudaMemcpyDeviceToDevice, stream));
    COMMLENS_CUDA(cudaMemcpyAsync(g.a_new + (rows + 1) * nx, g.a_new + nx, nx * sizeof(float),
                                  cudaMemcpyDeviceToDevice, stream));
    return OkStatus();
  }
  // With two ranks top and bottom are the same peer: NCCL matches its two sends with our
  // two receives in order, so the receive from below (its first row) is posted first.
  COMMLENS_NCCL(ncclGroupStart());
  ncclResult_t r = ncclSend(g.a_new + nx, nx, ncclFloat, g.top, comm_.get(), stream);
  if (r == ncclSuccess)
    r = ncclSend(g.a_new + rows * nx, nx, ncclFloat, g.bottom, comm_.get(), stream);
  if (r == ncclSuccess)
    r = ncclRecv(g.a_new + (rows + 1) * nx, nx, ncclFloat, g.bottom, comm_.get(), stream);
  if (r == ncclSuccess) r = ncclRecv(g.a_new, nx, ncclFloat, g.top, comm_.get(), stream);
  ncclResult_t end = ncclGroupEnd();
  COMMLENS_NCCL(r);
  COMMLENS_NCCL(end);
  return OkStatus();
}

Status JacobiBench::OverlapStep() {
  Grid& g = *grid_;
  const int rows = g.mine.rows;
  cudaStream_t main = main_.get(), high = high_.get();
  COMMLENS_CUDA(cudaEventRecord(start_.get(), main));
  COMMLENS_CUDA(cudaStreamWaitEvent(high, start_.get(), 0));
  COMMLENS_RETURN_IF_ERROR(LaunchJacobiRows(g.a, g.a_new, g.nx, 1, 2, high));
  if (rows > 1) COMMLENS_RETURN_IF_ERROR(LaunchJacobiRows(g.a, g.a_new, g.nx, rows, rows + 1, high));
  COMMLENS_RETURN_IF_ERROR(Halo(high));
  COMMLENS_CUDA(cudaEventRecord(boundary_done_.get(), high));
  COMMLENS_RETURN_IF_ERROR(LaunchJacobiRows(g.a, g.a_new, g.nx, 2, rows, main));
  COMMLENS_CUDA(cudaStreamWaitEvent(main, boundary_done_.get(), 0));
  std::swap(g.a, g.a_new);
  ++g.iteration;
  return OkStatus();
}

Status JacobiBench::CaptureGraph() {
  Grid& g = *grid_;
  COMMLENS_CUDA(cudaStreamBeginCapture(main_.get(), cudaStreamCaptureModeThreadLocal));
  Status captured = OverlapStep();
  if (captured.ok()) captured = OverlapStep();
  cudaGraph_t graph = nullptr;
  cudaError_t end = cudaStreamEndCapture(main_.get(), &graph);
  g.iteration -= 2;  // captured, not run
  COMMLENS_RETURN_IF_ERROR(captured);
  COMMLENS_CUDA(end);
  cudaGraphExec_t exec = nullptr;
  cudaError_t inst = cudaGraphInstantiate(&exec, graph, 0);
  cudaGraphDestroy(graph);
  COMMLENS_CUDA(inst);
  g.graph = GraphExec(device_, exec);
  return OkStatus();
}

Status JacobiBench::Step(JacobiVariant v) {
  Grid& g = *grid_;
  switch (v) {
    case JacobiVariant::kNccl:
      COMMLENS_RETURN_IF_ERROR(
          LaunchJacobiRows(g.a, g.a_new, g.nx, 1, g.mine.rows + 1, main_.get()));
      COMMLENS_RETURN_IF_ERROR(Halo(main_.get()));
      std::swap(g.a, g.a_new);
      ++g.iteration;
      return OkStatus();
    case JacobiVariant::kNcclOverlap:
      return OverlapStep();
    case JacobiVariant::kNcclGraph:  // two iterations per launch; the buffers swap twice
      if (!g.graph) COMMLENS_RETURN_IF_ERROR(CaptureGraph());
      COMMLENS_CUDA(cudaGraphLaunch(g.graph.get(), main_.get()));
      g.iteration += 2;
      return OkStatus();
    case JacobiVariant::kNvshmem:
    case JacobiVariant::kNvshmemNb: {
      const int segments = Segments(g.nx);
      auto* signals = static_cast<uint64_t*>(g.signals.get());
      commlens_nvshmem_jacobi step{g.a,
                                   g.a_new,
                                   g.nx,
                                   g.mine.rows,
                                   g.top,
                                   g.bottom,
                                   g.top_rows,
                                   signals,
                                   signals + segments,
                                   g.iteration,
                                   v == JacobiVariant::kNvshmemNb ? 1 : 0};
      // Boundary rows first, so their puts travel while the interior is computed.
      COMMLENS_RETURN_IF_ERROR(shmem_->Check(shmem_->api().jacobi(&step, main_.get()),
                                             "nvshmem jacobi boundary rows"));
      COMMLENS_RETURN_IF_ERROR(LaunchJacobiRows(g.a, g.a_new, g.nx, 2, g.mine.rows, main_.get()));
      if (v == JacobiVariant::kNvshmem)
        COMMLENS_RETURN_IF_ERROR(shmem_->Check(shmem_->api().barrier(main_.get()), "barrier"));
      std::swap(g.a, g.a_new);
      ++g.iteration;
      return OkStatus();
    }
    default:
      return Error("unknown jacobi variant");
  }
}

// Iterations one Step makes.
int StepSize(JacobiVariant v) { return v == JacobiVariant::kNcclGraph ? 2 : 1; }

Result<double> JacobiBench::Time(JacobiVariant v, int iters) {
  const std::string name(JacobiVariantName(v));
  const auto limit = c_.timeout + kWatchdogSlack;
  {
    Watchdog::Guard guard(s_.watchdog, fmt::format("jacobi {} warm-up", name), limit);
    for (int i = 0; i < c_.warmup; i += StepSize(v)) COMMLENS_RETURN_IF_ERROR(Step(v));
    COMMLENS_RETURN_IF_ERROR(Wait(fmt::format("jacobi {} warm-up", name)));
    if (v == JacobiVariant::kNvshmemNb)  // the last signals of the warm-up are in flight
      COMMLENS_RETURN_IF_ERROR(shmem_->Check(shmem_->api().barrier(main_.get()), "barrier"));
    COMMLENS_RETURN_IF_ERROR(Wait("barrier"));
    COMMLENS_RETURN_IF_ERROR(s_.boot->Barrier());
  }
  Watchdog::Guard guard(s_.watchdog, fmt::format("jacobi {} timed iterations", name), limit);
  const auto t0 = Clock::now();
  int done = 0;
  for (; done < iters; done += StepSize(v)) COMMLENS_RETURN_IF_ERROR(Step(v));
  if (v == JacobiVariant::kNvshmemNb)  // completes the outstanding puts, part of the cost
    COMMLENS_RETURN_IF_ERROR(shmem_->Check(shmem_->api().barrier(main_.get()), "barrier"));
  COMMLENS_RETURN_IF_ERROR(Wait(fmt::format("jacobi {} timed iterations", name)));
  const double mine = std::chrono::duration<double, std::micro>(Clock::now() - t0).count() / done;
  COMMLENS_ASSIGN_OR_RETURN(std::vector<double> slowest,
                            AllReduceMax(*s_.boot, std::span<const double>(&mine, 1)));
  return slowest[0];
}

Result<double> JacobiBench::SingleGpu() {
  COMMLENS_RETURN_IF_ERROR(Prepare(c_.nx, c_.ny, /*symmetric=*/false, /*local=*/true));
  COMMLENS_ASSIGN_OR_RETURN(double us, Time(JacobiVariant::kNccl, c_.iters));
  grid_.reset();
  return us;
}

Status JacobiBench::Check(JacobiVariant v, JacobiVariantResult* result) {
  const auto limit = c_.timeout + kWatchdogSlack;
  Watchdog::Guard guard(s_.watchdog, fmt::format("jacobi {} check", JacobiVariantName(v)), limit);
  COMMLENS_RETURN_IF_ERROR(Prepare(c_.check_nx, c_.check_ny, UsesNvshmem(v), false));
  Grid& g = *grid_;
  while (g.iteration < c_.check_iters) COMMLENS_RETURN_IF_ERROR(Step(v));
  if (UsesNvshmem(v))
    COMMLENS_RETURN_IF_ERROR(shmem_->Check(shmem_->api().barrier(main_.get()), "barrier"));
  COMMLENS_RETURN_IF_ERROR(Wait("the check iterations"));
  std::string rows(static_cast<size_t>(g.mine.rows) * g.nx * sizeof(float), '\0');
  COMMLENS_CUDA(cudaMemcpy(rows.data(), g.a + g.nx, rows.size(), cudaMemcpyDeviceToHost));
  const int64_t iterations = g.iteration;
  COMMLENS_ASSIGN_OR_RETURN(std::vector<std::string> all, AllGatherStrings(*s_.boot, rows));
  int64_t wrong = 0;
  double diff = 0;
  if (rank_ == 0) {
    std::vector<float> want = JacobiInitialGrid(c_.check_nx, c_.check_ny);
    JacobiReference(c_.check_nx, c_.check_ny, static_cast<int>(iterations), &want);
    size_t at = 0;
    for (const std::string& part : all) {
      const size_t n = part.size() / sizeof(float);
      for (size_t i = 0; i < n && at + i < want.size(); ++i) {
        float got;
        std::memcpy(&got, part.data() + i * sizeof(float), sizeof got);
        const double d = std::fabs(static_cast<double>(got) - want[at + i]);
        if (!(d == 0)) ++wrong;  // NaN counts too
        diff = std::max(diff, std::isnan(d) ? INFINITY : d);
      }
      at += n;
    }
    if (at != want.size()) wrong += static_cast<int64_t>(want.size()) - static_cast<int64_t>(at);
  }
  COMMLENS_ASSIGN_OR_RETURN(result->wrong, AllReduceSum(*s_.boot, wrong));
  COMMLENS_ASSIGN_OR_RETURN(std::vector<double> d,
                            AllReduceMax(*s_.boot, std::span<const double>(&diff, 1)));
  result->max_abs_diff = d[0];
  grid_.reset();
  return OkStatus();
}

Result<JacobiVariantResult> JacobiBench::Run(JacobiVariant v, double single_us) {
  JacobiVariantResult r;
  r.variant = std::string(JacobiVariantName(v));
  // Diagnostic (docs/bench.md): the NCCL variants on NVSHMEM's symmetric heap too, to
  // tell the heap's cost from the kernels'.
  const bool symmetric =
      UsesNvshmem(v) || (shmem_ && std::getenv("COMMLENS_BENCH_JACOBI_SYMMETRIC") != nullptr);
  COMMLENS_RETURN_IF_ERROR(Prepare(c_.nx, c_.ny, symmetric, false));
  COMMLENS_ASSIGN_OR_RETURN(r.iteration_us, Time(v, c_.iters));
  grid_.reset();
  if (single_us > 0 && r.iteration_us > 0) {
    r.speedup = single_us / r.iteration_us;
    r.efficiency = r.speedup / nranks_;
  }
  if (c_.check) COMMLENS_RETURN_IF_ERROR(Check(v, &r));
  return r;
}

}  // namespace

}  // namespace gpu

Result<JacobiReport> RunJacobiOnGpus(const JacobiConfig& config, Session& session) {
  gpu::JacobiBench bench(config, session);
  COMMLENS_RETURN_IF_ERROR(bench.Init());
  JacobiReport report;
  COMMLENS_ASSIGN_OR_RETURN(report.run, bench.Describe());
  report.config = config;
  if (config.single_gpu) {
    COMMLENS_ASSIGN_OR_RETURN(report.single_gpu_iteration_us, bench.SingleGpu());
  }
  for (JacobiVariant v : config.variants) {
    COMMLENS_ASSIGN_OR_RETURN(JacobiVariantResult r, bench.Run(v, report.single_gpu_iteration_us));
    report.variants.push_back(std::move(r));
  }
  return report;
}

}  // namespace commlens::bench
