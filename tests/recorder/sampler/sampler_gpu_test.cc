// The sampler with NVML on a GPU machine (label "gpu"; exits 77, skipped, where NVML
// cannot be loaded or sees no GPU): every GPU gets its series, the values make sense,
// the file imports, and the cost at 100 Hz and 1 kHz is printed. The machine's own NICs
// (live sysfs) are sampled alongside.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <map>
#include <thread>

#include "model/counter_rates.h"
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
// decides what the sampler reads at every tick. Every call must succeed (each of the 50,
// not just the last): the ones the sampler needs with NVML_SUCCESS, the optional ones
// (power, energy, NVLink counters: absent on some GPUs and VMs) with NVML_SUCCESS or
// NVML_ERROR_NOT_SUPPORTED. Any other code fails the test, naming the call.
TEST(SamplerWithNvml, CostOfEachCall) {
  std::string error;
  auto lib = topo::DynamicLibrary::Open(topo::kNvmlLibrary, &error);
  ASSERT_TRUE(lib) << error;
  topo::NvmlApi api = topo::BindNvml(*lib);
  ASSERT_TRUE(api.init && api.shutdown && api.by_index && api.utilization && api.memory && api.clock_mhz);
  ASSERT_EQ(api.init(), topo::kNvmlSuccess);
  topo::NvmlDevice d = nullptr;
  ASSERT_EQ(api.by_index(0, &d), topo::kNvmlSuccess);
  enum Need { kRequired, kOptional };
  // |call| is null when the library lacks the entry point (an optional one only).
  auto cost = [&](const char* what, Need need, bool present, auto&& call) {
    if (!present) {
      EXPECT_EQ(need, kOptional) << what << ": not in " << topo::kNvmlLibrary;
      std::printf("%-42s absent\n", what);
      return;
    }
    constexpr int kCalls = 50;
    const int64_t cpu0 = ReadClockNs(CLOCK_THREAD_CPUTIME_ID), wall0 = MonotonicNs();
    int bad = topo::kNvmlSuccess;  // the first code other than success
    for (int i = 0; i < kCalls; ++i)
      if (int rc = call(); rc != topo::kNvmlSuccess && bad == topo::kNvmlSuccess) bad = rc;
    std::printf("%-42s rc %2d: %8.1f us CPU, %8.1f us wall per call\n", what, bad,
                (ReadClockNs(CLOCK_THREAD_CPUTIME_ID) - cpu0) / 1e3 / kCalls, (MonotonicNs() - wall0) / 1e3 / kCalls);
    if (need == kOptional && bad == topo::kNvmlErrorNotSupported) return;
    EXPECT_EQ(bad, topo::kNvmlSuccess) << what << " returned NVML code " << bad << " ("
                                       << (api.error_string ? api.error_string(bad) : "?") << ")";
  };
  topo::NvmlUtilization u{};
  topo::NvmlMemory m{};
  unsigned v = 0;
  unsigned long long e = 0;
  cost("nvmlDeviceGetUtilizationRates", kRequired, true, [&] { return api.utilization(d, &u); });
  cost("nvmlDeviceGetMemoryInfo", kRequired, true, [&] { return api.memory(d, &m); });
  cost("nvmlDeviceGetPowerUsage", kOptional, api.power_mw, [&] { return api.power_mw(d, &v); });
  cost("nvmlDeviceGetTotalEnergyConsumption", kOptional, api.energy_mj,  // not sampled: slow
       [&] { return api.energy_mj(d, &e); });
  cost("nvmlDeviceGetClockInfo(SM)", kRequired, true, [&] { return api.clock_mhz(d, topo::kNvmlClockSm, &v); });
  cost("nvmlDeviceGetClockInfo(MEM)", kRequired, true, [&] { return api.clock_mhz(d, topo::kNvmlClockMem, &v); });
  topo::NvmlFieldValue f[2]{};
  cost("nvmlDeviceGetFieldValues(NVLink tx, rx)", kOptional, api.field_values, [&] {
    f[0] = f[1] = topo::NvmlFieldValue{};
    f[0].field_id = topo::kFieldNvLinkThroughputDataTx;
    f[1].field_id = topo::kFieldNvLinkThroughputDataRx;
    f[0].scope_id = f[1].scope_id = topo::kNvmlAllLinks;
    int rc = api.field_values(d, 2, f);
    return rc != topo::kNvmlSuccess ? rc : f[0].nvml_return != topo::kNvmlSuccess ? f[0].nvml_return : f[1].nvml_return;
  });
  // What the calls gave is a GPU's: memory in use below its total, clocks running.
  EXPECT_GT(m.total, 0u);
  EXPECT_LE(m.used, m.total);
  EXPECT_LE(u.gpu, 100u);
  EXPECT_EQ(api.shutdown(), topo::kNvmlSuccess);
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

// The GPUs alone (no NICs): every NVML call the sampler made while it ran succeeded (it
// counts a failed one as a read error), and every GPU NVML counts has the series of the
// calls every GPU answers (a call that fails from the start leaves its series out).
TEST(SamplerWithNvml, EveryNvmlReadSucceeds) {
  std::string error;
  auto lib = topo::DynamicLibrary::Open(topo::kNvmlLibrary, &error);
  ASSERT_TRUE(lib) << error;
  topo::NvmlApi api = topo::BindNvml(*lib);
  ASSERT_TRUE(api.init && api.count && api.shutdown);
  ASSERT_EQ(api.init(), topo::kNvmlSuccess);
  unsigned gpus = 0;
  ASSERT_EQ(api.count(&gpus), topo::kNvmlSuccess);
  ASSERT_EQ(api.shutdown(), topo::kNvmlSuccess);

  topo::testing::TempDir out;
  SamplerOptions o;
  o.output_path = (out.path() / "gpu.cltrace").string();
  o.hz = 100;
  o.nics = false;
  auto sampler = Sampler::Create(o);
  ASSERT_TRUE(sampler.ok()) << sampler.status().message();
  (*sampler)->Start();
  std::this_thread::sleep_for(std::chrono::milliseconds(1000));
  SamplerReport r = (*sampler)->Stop();
  EXPECT_EQ(r.read_errors, 0u);
  EXPECT_EQ(r.devices, gpus);
  auto t = importers::ImportNativeTrace(o.output_path);
  ASSERT_TRUE(t.ok()) << t.status().message();
  std::map<std::string, std::map<std::string, size_t>> samples;  // by GPU, by series
  for (const model::CounterSeries& c : t->counters)
    if (c.owner == model::CounterOwner::kDevice) samples[c.device][c.name] = c.time.size();
  EXPECT_EQ(samples.size(), gpus);
  for (const auto& [gpu, series] : samples)
    for (const char* name : {"gpu.utilization", "gpu.memory_used", "gpu.sm_clock", "gpu.memory_clock"}) {
      ASSERT_TRUE(series.count(name)) << "GPU " << gpu << " has no " << name;
      EXPECT_GE(series.at(name), 5u) << "GPU " << gpu << " " << name;  // 10 Hz for 1 s
    }
}

}  // namespace
}  // namespace commlens::recorder::sampler
