// Per-event host cost of the NCCL profiler plugin, called through its ABI v5 table as
// NCCL calls it (one indirect call per start / record / stop). The trace goes to
// /dev/null with a 10 ms flush interval; every 49152 events (three quarters of a pool)
// the timer pauses for 25 ms so the flusher drains the pools off the clock and no event
// is dropped: what is measured is the recording path, not the drop path nor the
// flusher's competition for a core (in a job it wakes once a second).
//
//   recorder_benchmark --benchmark_repetitions=5 --benchmark_report_aggregates_only=true
#include <benchmark/benchmark.h>
#include <stdlib.h>
#include <unistd.h>

#include <cstdint>
#include <memory>

#include "recorder/fake_nccl.h"

namespace commlens::testing {
namespace {

using Nccl = FakeNccl<5>;
using Descr = Nccl::Descr;
constexpr int kBatch = 49152;

// One session per recording mode; switching mode finalizes the old communicator.
enum class Mode { kRecording, kCountOnly };
int g_mask = 0;

Nccl& SessionFor(Mode mode) {
  static std::unique_ptr<Nccl> nccl;
  static Mode current = Mode::kRecording;
  if (nccl && current == mode) return *nccl;
  if (nccl) nccl->Finalize();
  setenv("COMMLENS_OUT", "/dev/null", 1);
  setenv("COMMLENS_FLUSH_INTERVAL_MS", "10", 1);
  setenv("COMMLENS_BUFFER_EVENTS", "65536", 1);
  if (mode == Mode::kCountOnly) setenv("COMMLENS_CAPTURE_AFTER_COLLS", "1000000000000", 1);
  else unsetenv("COMMLENS_CAPTURE_AFTER_COLLS");
  nccl = std::make_unique<Nccl>();
  if (nccl->Init(0xBE7C, "bench", 1, 8, 0, &g_mask) != 0) std::abort();
  current = mode;
  return *nccl;
}

// Lets the flusher empty the pools between batches, off the clock.
void Drain(benchmark::State& state, int64_t* n) {
  if (++*n % kBatch != 0) return;
  state.PauseTiming();
  usleep(25'000);
  state.ResumeTiming();
}

void FillColl(Descr& d) {
  d.coll.seqNumber = 1;
  d.coll.func = "AllReduce";
  d.coll.count = 1 << 20;
  d.coll.datatype = "ncclFloat32";
  d.coll.nChannels = 16;
  d.coll.nWarps = 16;
  d.coll.algo = "RING";
  d.coll.proto = "SIMPLE";
}

// The pair NCCL makes for every collective on the calling thread.
void BM_CollStartStop(benchmark::State& state) {
  Nccl& nccl = SessionFor(Mode::kRecording);
  int64_t n = 0;
  for (auto _ : state) {
    void* h = nccl.Start(abi::kColl, nullptr, FillColl);
    nccl.Stop(h);
    benchmark::DoNotOptimize(h);
    Drain(state, &n);
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_CollStartStop);

// What NCCL's proxy thread does per channel of a kernel: start (GPU start timer),
// KernelChStop (GPU stop timer), stop.
void BM_KernelChannel(benchmark::State& state) {
  Nccl& nccl = SessionFor(Mode::kRecording);
  void* coll = nccl.Start(abi::kColl, nullptr, FillColl);
  int64_t n = 0;
  uint64_t timer = 1'000'000;
  for (auto _ : state) {
    void* h = nccl.Start(abi::kKernelCh, coll, [&](Descr& d) {
      d.kernelCh.channelId = 3;
      d.kernelCh.pTimer = timer;
    });
    abi::StateArgs a{};
    a.kernelCh.pTimer = timer + 500;
    nccl.Record(h, abi::kKernelChStop, &a);
    nccl.Stop(h);
    timer += 1000;
    Drain(state, &n);
  }
  nccl.Stop(coll);
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_KernelChannel);

// One network step: start, three state changes, stop (folded into its ProxyOp).
void BM_ProxyStep(benchmark::State& state) {
  Nccl& nccl = SessionFor(Mode::kRecording);
  void* coll = nccl.Start(abi::kColl, nullptr, FillColl);
  void* op = nccl.Start(abi::kProxyOp, coll, [](Descr& d) {
    d.proxyOp.pid = static_cast<int32_t>(getpid());
    d.proxyOp.nSteps = 1 << 30;
  });
  for (auto _ : state) {
    void* h = nccl.Start(abi::kProxyStep, op, [](Descr& d) { d.proxyStep.step = 1; });
    abi::StateArgs a{};
    a.proxyStep.transSize = 65536;
    nccl.Record(h, abi::kProxyStepSendGpuWait, &a);
    nccl.Record(h, abi::kProxyStepSendPeerWait, &a);
    nccl.Record(h, abi::kProxyStepSendWait, &a);
    nccl.Stop(h);
  }
  nccl.Stop(op);
  nccl.Stop(coll);
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_ProxyStep);

// An event type the plugin does not record (Group): start returns NULL at once.
void BM_UnrecordedType(benchmark::State& state) {
  Nccl& nccl = SessionFor(Mode::kRecording);
  for (auto _ : state) benchmark::DoNotOptimize(nccl.Start(abi::kGroup, nullptr, [](Descr&) {}));
}
BENCHMARK(BM_UnrecordedType);

// Outside the capture window: the collective is counted (for comm_seq), not recorded.
void BM_CollOutsideCaptureWindow(benchmark::State& state) {
  Nccl& nccl = SessionFor(Mode::kCountOnly);
  for (auto _ : state) {
    void* h = nccl.Start(abi::kColl, nullptr, FillColl);
    nccl.Stop(h);
    benchmark::DoNotOptimize(h);
  }
}
BENCHMARK(BM_CollOutsideCaptureWindow);

}  // namespace
}  // namespace commlens::testing

BENCHMARK_MAIN();
