// The floor under any sampler that sleeps between readings: the CPU a thread spends
// being woken once per period, reading nothing. The "CPU" column is that cost per
// wake-up (the thread's own CPU time); at 1 kHz, CPU per wake-up in µs / 10 is the share
// of a core a sampler pays before its first read (docs/performance.md, "Where the
// sampler's cost went"). On VMs the hypervisor's timer and wake-up path sets it.
#include <benchmark/benchmark.h>
#include <time.h>

namespace {

// clock_nanosleep to absolute deadlines |period| apart, as the sampler's loop does.
void BM_WakeUpEveryPeriod(benchmark::State& state) {
  const long period_ns = state.range(0) * 1000;
  timespec next{};
  clock_gettime(CLOCK_MONOTONIC, &next);
  for (auto _ : state) {
    next.tv_nsec += period_ns;
    while (next.tv_nsec >= 1'000'000'000) {
      next.tv_nsec -= 1'000'000'000;
      ++next.tv_sec;
    }
    clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next, nullptr);
  }
}
// 1 ms (1 kHz, 3 s) and 10 ms (100 Hz, 5 s).
BENCHMARK(BM_WakeUpEveryPeriod)->Arg(1000)->Unit(benchmark::kMicrosecond)->Iterations(3000);
BENCHMARK(BM_WakeUpEveryPeriod)->Arg(10000)->Unit(benchmark::kMicrosecond)->Iterations(500);

}  // namespace

BENCHMARK_MAIN();
