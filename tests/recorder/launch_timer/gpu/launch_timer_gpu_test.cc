// The launch timer on a real GPU (label "gpu"; exits 77, skipped, without one): CUDA's
// driver events around kernel launches, against CUPTI's records of the same kernels
// (the tracer's backend, kernels only), both on CLOCK_REALTIME. Each timed launch must
// span its kernel: the events' start at most a few microseconds before the kernel's, their
// end at most a few after. A launch made while the stream is captured into a graph is not
// timed. Prints the differences (the closing note's figures).
//
//   COMMLENS_CUPTI_LIBRARY=/path/libcupti.so.13   (else the loader's search)
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <string>
#include <vector>

#include "recorder/cupti_tracer/backend_factory.h"
#include "recorder/cupti_tracer/cupti_kinds.h"
#include "recorder/launch_timer/driver_events.h"
#include "recorder/launch_timer/launch_timer.h"
#include "recorder/cupti_gpu/small_cuda_program.h"
#include "recorder/launch_timer/launch_records.h"
#include "recorder/needs_gpu.h"
#include "spin_kernel.h"

namespace commlens::recorder::launch_timer {
namespace {

namespace nf = native_format;

const auto* const kNeedsGpu =
    ::testing::AddGlobalTestEnvironment(new commlens::testing::NeedsGpu(&cupti::testing::CudaDevices, "launch_timer_gpu_test"));

class KernelSink final : public cupti::ActivitySink {
 public:
  void OnGpuActivity(const nf::GpuActivityRecord& r, std::string_view name) override {
    std::lock_guard<std::mutex> lock(mu);
    if (name.find("commlens_test_spin") != std::string_view::npos) spins.push_back(r);
  }
  void OnCudaApi(const nf::CudaApiRecord&, std::string_view) override {}
  void OnRange(const nf::RangeRecord&, std::string_view, std::string_view) override {}
  void OnDropped(uint64_t) override {}
  std::mutex mu;
  std::vector<nf::GpuActivityRecord> spins;
};

int64_t Median(std::vector<int64_t> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

TEST(LaunchTimerGpu, EventsSpanEachKernelAsCuptiSeesIt) {
  ASSERT_EQ(cupti::testing::InitCuda(), "");
  // The kernel's first launch loads its module (lazily: 20 ms on the H200): between a start
  // event and that kernel the GPU would wait for the host, as for NCCL's first launch.
  // Done before CUPTI traces, so that it sees the timed kernels only.
  const uint64_t warm = testing::NewStream();
  testing::LaunchSpin(warm, 1000);
  ASSERT_TRUE(testing::Synchronize(warm));
  const char* lib = std::getenv("COMMLENS_CUPTI_LIBRARY");
  cupti::ActivityBackend* backend = cupti::NewCuptiBackend(lib ? lib : "", cupti::kCuptiKernels);
  KernelSink sink;
  std::string why;
  ASSERT_EQ(backend->Start(&sink, &why), cupti::StartResult::kTracing) << why;

  DriverEvents driver;
  LaunchTimer timer(&driver);
  ASSERT_TRUE(timer.Start(&why)) << why;
  const uint64_t stream = testing::NewStream();
  ASSERT_NE(stream, 0u);
  constexpr int kLaunches = 40;
  nf::RecordWriter w;
  for (int i = 0; i < kLaunches; ++i) {
    const uint32_t slot = timer.Begin(stream);
    ASSERT_NE(slot, LaunchTimer::kNone);
    testing::LaunchSpin(stream, 20'000 + 5'000 * (i % 8));
    timer.End(slot, static_cast<uint64_t>(i + 1));
    if (i % 10 == 9) timer.Collect(0, &w);  // some while others still run, as the flusher does
  }
  ASSERT_TRUE(testing::Synchronize(stream));
  timer.Finish(0, &w, 1'000'000'000);
  backend->Stop();

  // Captured into a graph: not timed, counted.
  LaunchTimer captured(&driver);
  ASSERT_TRUE(captured.Start(&why));
  struct Arg {
    LaunchTimer* timer;
    uint64_t stream;
    uint32_t slot;
  } arg{&captured, stream, 0};
  ASSERT_TRUE(testing::WhileCapturing(
      stream,
      [](void* p) {
        auto* a = static_cast<Arg*>(p);
        a->slot = a->timer->Begin(a->stream);
        testing::LaunchSpin(a->stream, 1000);
      },
      &arg));
  EXPECT_EQ(arg.slot, LaunchTimer::kNone);
  EXPECT_EQ(captured.untimed(), 1u);

  nf::LaunchTimerRecord state{};
  std::vector<nf::LaunchTimingRecord> timed = LaunchRecords(w, &state);
  ASSERT_EQ(timed.size(), static_cast<size_t>(kLaunches));
  EXPECT_EQ(state.timed, static_cast<uint64_t>(kLaunches));
  EXPECT_EQ(state.untimed, 0u);
  std::sort(timed.begin(), timed.end(), [](const auto& a, const auto& b) { return a.api_id < b.api_id; });
  std::vector<nf::GpuActivityRecord> spins = sink.spins;
  ASSERT_EQ(spins.size(), static_cast<size_t>(kLaunches));
  std::sort(spins.begin(), spins.end(), [](const auto& a, const auto& b) { return a.start_ns < b.start_ns; });
  std::vector<int64_t> early, late, anchor, stretch;
  for (int i = 0; i < kLaunches; ++i) {
    SCOPED_TRACE(i);
    const nf::LaunchTimingRecord& e = timed[static_cast<size_t>(i)];
    const nf::GpuActivityRecord& k = spins[static_cast<size_t>(i)];
    early.push_back(k.start_ns - e.gpu_start_ns);
    late.push_back(e.gpu_end_ns - k.end_ns);
    anchor.push_back(e.anchor_error_ns);
    stretch.push_back((e.gpu_end_ns - e.gpu_start_ns) - (k.end_ns - k.start_ns));
    // The events span the kernel, within the two clock conversions (CUPTI's and the
    // anchor's: microseconds). The start event fires when the stream reaches it, the
    // kernel when the host has launched it too: the gap is the host's time between the two
    // calls, a couple of microseconds unless the thread was held up (seen once: 31 us).
    EXPECT_GE(early.back(), -10'000);
    EXPECT_LT(early.back(), 1'000'000);
    EXPECT_GE(late.back(), -10'000);
    EXPECT_LT(late.back(), 25'000);
  }
  EXPECT_LT(std::abs(Median(early)), 10'000);
  EXPECT_LT(std::abs(Median(late)), 10'000);
  EXPECT_LT(std::abs(Median(stretch)), 10'000);  // durations: the kernel's, plus a few us
  std::printf("launch_timer_gpu_test: %d kernels of 20-55 us; events' start before CUPTI's by %lld ns (median; "
              "range %lld .. %lld), end after by %lld ns (%lld .. %lld); anchor bound %lld ns (median)\n",
              kLaunches, static_cast<long long>(Median(early)),
              static_cast<long long>(*std::min_element(early.begin(), early.end())),
              static_cast<long long>(*std::max_element(early.begin(), early.end())),
              static_cast<long long>(Median(late)), static_cast<long long>(*std::min_element(late.begin(), late.end())),
              static_cast<long long>(*std::max_element(late.begin(), late.end())),
              static_cast<long long>(Median(anchor)));
  std::printf("launch_timer_gpu_test: durations longer than CUPTI's by %lld ns (median)\n",
              static_cast<long long>(Median(stretch)));
}

}  // namespace
}  // namespace commlens::recorder::launch_timer
