// What the launch timer (recorder/launch_timer) pays per NCCL launch of its own, apart
// from CUDA's two event records (measured on the GPU: cupti_launch_cost's events setting):
// Begin and End on the launching thread (capture check, the stream's context from the
// cache, a slot from the free list), and the flusher's share per launch (the completion
// query, the anchor, the record), on a GPU that answers at once.
#include <benchmark/benchmark.h>

#include <string>

#include "native_format/record_writer.h"
#include "recorder/launch_timer/launch_timer.h"

namespace {

using namespace commlens::recorder::launch_timer;
namespace nf = commlens::native_format;

// Every call succeeds at once; an event's GPU time is its record's count.
class InstantGpu final : public GpuEvents {
 public:
  bool Load(std::string*) override { return true; }
  Handle StreamContext(uint64_t) override { return 7; }
  bool Capturing(uint64_t) override { return false; }
  Handle NewEvent(Handle) override { return ++next_; }
  Handle NewStream(Handle) override { return ++next_; }
  void DestroyEvent(Handle) override {}
  void DestroyStream(Handle) override {}
  bool Record(Handle, uint64_t) override { return true; }
  Done Query(Handle) override { return Done::kYes; }
  bool ElapsedNs(Handle from, Handle to, int64_t* ns) override {
    *ns = static_cast<int64_t>(to) - static_cast<int64_t>(from);
    return true;
  }

 private:
  Handle next_ = 0;
};

// One launch's Begin and End, on a job's few streams.
// A timer started on the stand-in GPU.
struct StartedTimer {
  InstantGpu gpu;
  LaunchTimer timer{&gpu};
  StartedTimer() {
    std::string why;
    timer.Start(&why);
  }
};

void BM_LaunchBeginEnd(benchmark::State& state) {
  StartedTimer started;
  LaunchTimer& timer = started.timer;
  nf::RecordWriter out;
  uint64_t i = 0;
  for (auto _ : state) {
    const uint32_t slot = timer.Begin(0x7f0000 + (i & 3) * 16);
    timer.End(slot, ++i);
    if ((i & 1023) == 0) {  // the flusher, off the clock
      state.PauseTiming();
      timer.Collect(0, &out);
      out.Clear();
      state.ResumeTiming();
    }
  }
}
BENCHMARK(BM_LaunchBeginEnd);

// The flusher's work per launch: a Collect of 1,000 finished launches.
void BM_LaunchCollect(benchmark::State& state) {
  StartedTimer started;
  LaunchTimer& timer = started.timer;
  nf::RecordWriter out;
  uint64_t id = 0;
  for (auto _ : state) {
    state.PauseTiming();
    for (int k = 0; k < 1000; ++k) timer.End(timer.Begin(0x7f0000), ++id);
    out.Clear();
    state.ResumeTiming();
    timer.Collect(0, &out);
  }
  state.SetItemsProcessed(state.iterations() * 1000);
}
BENCHMARK(BM_LaunchCollect);

}  // namespace

BENCHMARK_MAIN();
