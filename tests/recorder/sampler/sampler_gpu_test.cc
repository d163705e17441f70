// The sampler with NVML on a GPU machine (label "gpu"; exits 77, skipped, where NVML
// cannot be loaded or sees no GPU): every GPU gets its series, the values make sense,
// the file imports, and the cost at 100 Hz and 1 kHz is printed. The machine's own NICs
// (live sysfs) are sampled alongside.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <map>
#include <thread>

#include "analysis/counter_rates.h"
#include "importers/native/native_importer.h"
#include "recorder/sampler/nvml_source.h"
#include "recorder/nccl_profiler/clock.h"
#include "recorder/sampler/sampler.h"
#include "topo/nvml_api.h"
#include "topo/fake_machine.h"

namespace commlens::recorder::sampler {
namespace {

class NeedsNvml : public ::testing::Environment {
 public:
  void SetUp() override {
    std::vector<std::string> notes;
    if (OpenGpuSources("", &notes).empty()) {
      std::fprintf(stderr, "sampler_gpu_test: %s; skipped\n", notes.empty() ? "no GPU" : notes.front().c_str());
      std::_Exit(77);
    }
  }
};
const auto* const kNeedsNvml = ::testing::AddGlobalTestEnvironment(new NeedsNvml);

// What each NVML call costs on this machine (CPU time of the calling thread), which
// decides what the sampler reads at every tick.
TEST(SamplerWithNvml, CostOfEachCall) {
  std::string error;
  auto lib = topo::DynamicLibrary::Open(topo::kNvmlLibrary, &error);
  ASSERT_TRUE(lib) << error;
  topo::NvmlApi api = topo::BindNvml(*lib);
  ASSERT_EQ(api.init(), topo::kNvmlSuccess);
  topo::NvmlDevice d = nullptr;
  ASSERT_EQ(api.by_index(0, &d), topo::kNvmlSuccess);
  auto cost = [&](const char* what, auto&& call) {
    constexpr int kCalls = 50;
    const int64_t cpu0 = ReadClockNs(CLOCK_THREAD_CPUTIME_ID), wall0 = MonotonicNs();
    int rc = 0;
    for (int i = 0; i < kCalls; ++i) rc = call();
    std::printf("%-36s rc %2d: %8.1f us CPU, %8.1f us wall per call\n", what, rc,
                (ReadClockNs(CLOCK_THREAD_CPUTIME_ID) - cpu0) / 1e3 / kCalls, (MonotonicNs() - wall0) / 1e3 / kCalls);
  };
  topo::NvmlUtilization u{};
  topo::NvmlMemory m{};
  unsigned v = 0;
  unsigned long long e = 0;
  cost("nvmlDeviceGetUtilizationRates", [&] { return api.utilization(d, &u); });
  cost("nvmlDeviceGetMemoryInfo", [&] { return api.memory(d, &m); });
  cost("nvmlDeviceGetPowerUsage", [&] { return api.power_mw(d, &v); });
  cost("nvmlDeviceGetTotalEnergyConsumption", [&] { return api.energy_mj(d, &e); });  // not sampled: slow
  cost("nvmlDeviceGetClockInfo(SM)", [&] { return api.clock_mhz(d, topo::kNvmlClockSm, &v); });
  cost("nvmlDeviceGetClockInfo(MEM)", [&] { return api.clock_mhz(d, topo::kNvmlClockMem, &v); });
  topo::NvmlFieldValue f[2]{};
  cost("nvmlDeviceGetFieldValues(NVLink tx, rx)", [&] {
    f[0] = f[1] = topo::NvmlFieldValue{};
    f[0].field_id = topo::kFieldNvLinkThroughputDataTx;
    f[1].field_id = topo::kFieldNvLinkThroughputDataRx;
    f[0].scope_id = f[1].scope_id = topo::kNvmlAllLinks;
    int rc = api.field_values(d, 2, f);
    return rc != 0 ? rc : f[0].nvml_return;
  });
  api.shutdown();
}

TEST(SamplerWithNvml, SamplesEveryGpuAndReportsTheCost) {
  for (double hz : {10.0, 100.0, 1000.0}) {
    topo::testing::TempDir out;
    SamplerOptions o;
    o.output_path = (out.path() / "gpu.cltrace").string();
    o.hz = hz;
    auto sampler = Sampler::Create(o);
    ASSERT_TRUE(sampler.ok()) << sampler.status().message();
    for (const std::string& n : (*sampler)->notes()) std::printf("note: %s\n", n.c_str());
    (*sampler)->Start();
    std::this_thread::sleep_for(std::chrono::milliseconds(hz < 100 ? 3000 : 1000));
    SamplerReport r = (*sampler)->Stop();
    std::printf("%.0f Hz, %u devices, %u series: %llu ticks (%llu missed), %.1f us CPU per tick (sampling %.1f, "
                "writer %.1f), %.3f%% of one core; longest tick %.1f us, %llu read errors\n",
                hz, r.devices, r.series, static_cast<unsigned long long>(r.ticks),
                static_cast<unsigned long long>(r.missed_ticks), r.CpuNsPerTick() / 1e3,
                r.sampler_cpu_ns / 1e3 / r.ticks, r.writer_cpu_ns / 1e3 / r.ticks, 100 * r.CpuShare(),
                r.max_tick_ns / 1e3, static_cast<unsigned long long>(r.read_errors));

    auto t = importers::ImportNativeTrace(o.output_path);
    ASSERT_TRUE(t.ok()) << t.status().message();
    std::map<std::string, const model::CounterSeries*> gpu0;
    for (const model::CounterSeries& s : t->counters) {
      if (s.owner == model::CounterOwner::kDevice && s.device == "0") gpu0[s.name] = &s;
      if (hz == 10.0)
        std::printf("  %-28s %-12s %-8s %5zu samples, last %.0f\n", s.name.c_str(), s.device.c_str(), s.unit.c_str(),
                    s.time.size(), s.value.back());
    }
    ASSERT_TRUE(gpu0.count("gpu.memory_used"));
    EXPECT_GT(gpu0["gpu.memory_used"]->value.back(), 0.0);
    ASSERT_TRUE(gpu0.count("gpu.sm_clock"));
    EXPECT_GT(gpu0["gpu.sm_clock"]->value.back(), 0.0);
    if (gpu0.count("gpu.power")) {
      EXPECT_GT(gpu0["gpu.power"]->value.back(), 1000.0);  // mW: above 1 W
    }
    // GPUs are read at gpu_hz (10 by default) whatever the NIC rate.
    const double expected = static_cast<double>(r.wall_ns) * 1e-9 * 10 + 1;
    EXPECT_NEAR(static_cast<double>(gpu0["gpu.memory_used"]->time.size()), expected, 3.0);
  }
}

}  // namespace
}  // namespace commlens::recorder::sampler
