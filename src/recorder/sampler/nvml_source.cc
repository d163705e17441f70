#include "recorder/sampler/nvml_source.h"

#include <array>
#include <cstring>

#include "recorder/nccl_profiler/clock.h"
#include "topo/dynamic_library.h"
#include "topo/nvml_api.h"

namespace commlens::recorder::sampler {

namespace nf = native_format;
using topo::NvmlApi;
using topo::NvmlDevice;

namespace {

// The library and its bound entry points, shared by the GPU sources; NVML is shut down
// when the last source goes.
struct NvmlSession {
  std::unique_ptr<topo::DynamicLibrary> lib;
  NvmlApi api;
  ~NvmlSession() {
    if (api.shutdown) api.shutdown();
  }
};

enum Metric : size_t {
  kUtilization,
  kMemoryUtilization,
  kMemoryUsed,
  kPower,
  kSmClock,
  kMemoryClock,
  kNvLinkTx,
  kNvLinkRx,
  kMetricCount
};

struct MetricInfo {
  const char* name;
  const char* unit;
  bool cumulative;
  const char* call;  // the NVML entry point, for the series' source
};
constexpr std::array<MetricInfo, kMetricCount> kMetrics{{
    {"gpu.utilization", "percent", false, "nvmlDeviceGetUtilizationRates.gpu"},
    {"gpu.memory_utilization", "percent", false, "nvmlDeviceGetUtilizationRates.memory"},
    {"gpu.memory_used", "MiB", false, "nvmlDeviceGetMemoryInfo.used"},
    {"gpu.power", "mW", false, "nvmlDeviceGetPowerUsage"},
    {"gpu.sm_clock", "MHz", false, "nvmlDeviceGetClockInfo(SM)"},
    {"gpu.memory_clock", "MHz", false, "nvmlDeviceGetClockInfo(MEM)"},
    {"gpu.nvlink_tx", "KiB", true, "nvmlDeviceGetFieldValues(NVLINK_THROUGHPUT_DATA_TX, all links)"},
    {"gpu.nvlink_rx", "KiB", true, "nvmlDeviceGetFieldValues(NVLINK_THROUGHPUT_DATA_RX, all links)"},
}};

// The NVML calls a reading makes; each fills one or two metrics.
enum Call : size_t { kCallUtilization, kCallMemory, kCallPower, kCallSmClock, kCallMemoryClock, kCallNvLink, kCallCount };
constexpr std::array<Call, kMetricCount> kCallOf{kCallUtilization, kCallUtilization, kCallMemory,     kCallPower,
                                                 kCallSmClock,     kCallMemoryClock, kCallNvLink, kCallNvLink};
constexpr std::array<const char*, kCallCount> kCallName{"utilization", "memory", "power", "SM clock", "memory clock",
                                                        "NVLink throughput"};

// A call that takes longer than this on average (over its first kProbeReadings) is read
// at the events rate (1 Hz by default) from then on: on some machines one
// nvmlDeviceGetUtilizationRates takes milliseconds, and at 10 Hz on 8 GPUs that alone
// would be a quarter of a core.
constexpr int64_t kSlowCallNs = 1'000'000;
constexpr uint64_t kProbeReadings = 5;

class GpuSource : public SampleSource {
 public:
  GpuSource(std::shared_ptr<NvmlSession> session, NvmlDevice device, unsigned index, std::string bus_id)
      : s_(std::move(session)), device_(device), index_(std::to_string(index)), name_("GPU " + index_),
        bus_id_(std::move(bus_id)) {
    std::array<uint64_t, kMetricCount> values{};
    std::array<uint8_t, kMetricCount> ok{};
    int lost = 0;
    want_.fill(1);
    std::array<uint8_t, kCallCount> due;
    due.fill(1);
    ReadAll(due, &values, &ok, &lost);
    for (size_t m = 0; m < kMetricCount; ++m) {
      want_[m] = ok[m];  // what NVML did not answer now is not asked again
      if (ok[m]) metrics_.push_back(static_cast<Metric>(m));
    }
    values_.resize(metrics_.size());
    ok_.resize(metrics_.size());
  }

  size_t metric_count() const { return metrics_.size(); }

  void Define(SampleBuffer* out) override {
    for (size_t i = 0; i < metrics_.size(); ++i) {
      const MetricInfo& m = kMetrics[metrics_[i]];
      SeriesDef def;
      def.name = m.name;
      def.unit = m.unit;
      def.device = index_;
      def.source = std::string("nvml:") + m.call + " " + bus_id_;
      def.owner = nf::CounterOwnerCode::kGpu;
      def.kind = nf::DeviceKind::kGpu;
      def.cumulative = m.cumulative;
      def.width_bits = m.cumulative ? 64 : 0;
      const uint32_t id = out->Define(def);
      if (i == 0) first_series_ = id;
    }
  }

  void Sample(const Tick& tick, SampleBuffer* out) override {
    if (gone_ || metrics_.empty() || !tick.gpu) return;
    std::array<uint64_t, kMetricCount> values{};
    std::array<uint8_t, kMetricCount> ok{};
    std::array<uint8_t, kCallCount> due;
    for (size_t c = 0; c < kCallCount; ++c) due[c] = !calls_[c].slow || tick.events;
    int lost = 0;
    const int64_t t0 = RealtimeNs();
    ReadAll(due, &values, &ok, &lost);
    const int64_t t1 = RealtimeNs();
    if (lost) {
      gone_ = true;
      out->Event(t1, nf::SamplerEventKind::kDeviceGone, first_series_, static_cast<uint32_t>(metrics_.size()),
                 name_ + " (" + bus_id_ + "): NVML reports the GPU lost; its series stop");
      return;
    }
    for (size_t i = 0; i < metrics_.size(); ++i) {
      values_[i] = values[metrics_[i]];
      ok_[i] = ok[metrics_[i]];
      if (!ok_[i] && due[kCallOf[metrics_[i]]]) out->CountReadError();
    }
    out->SamplesWhereOk(t0 + (t1 - t0) / 2, first_series_, values_, ok_);
    for (size_t c = 0; c < kCallCount; ++c) {
      CallCost& cost = calls_[c];
      if (cost.slow || cost.count < kProbeReadings || cost.total_ns / static_cast<int64_t>(cost.count) <= kSlowCallNs)
        continue;
      cost.slow = true;
      out->Event(t1, nf::SamplerEventKind::kNote, first_series_, static_cast<uint32_t>(metrics_.size()),
                 name_ + ": NVML's " + kCallName[c] + " call takes " +
                     FormatCostNs(static_cast<uint64_t>(cost.total_ns) / cost.count) +
                     ": read at the events rate from now on");
    }
  }

  // "utilization 2912 us (1 Hz: slow), memory 6.10 us, ...": the mean cost of each call.
  std::string CostDetail() const override {
    std::string out;
    for (size_t c = 0; c < kCallCount; ++c) {
      if (calls_[c].count == 0) continue;
      out += (out.empty() ? "" : ", ") + std::string(kCallName[c]) + " " +
             FormatCostNs(static_cast<uint64_t>(calls_[c].total_ns) / calls_[c].count) +
             (calls_[c].slow ? " (slow: read at the events rate)" : "");
    }
    return out;
  }

  const std::string& name() const override { return name_; }
  bool Due(const Tick& tick) const override { return tick.gpu && !gone_ && !metrics_.empty(); }

 private:
  // One call per NVML entry point whose metrics are wanted and |due| (utilization and the
  // NVLink fields give two values each), each timed into calls_.
  void ReadAll(const std::array<uint8_t, kCallCount>& due, std::array<uint64_t, kMetricCount>* v,
               std::array<uint8_t, kMetricCount>* ok, int* lost) {
    const NvmlApi& api = s_->api;
    auto note = [&](int rc) {
      if (rc == topo::kNvmlErrorGpuIsLost) *lost = 1;
      return rc == topo::kNvmlSuccess;
    };
    auto set = [&](Metric m, uint64_t value) {
      (*v)[m] = value;
      (*ok)[m] = 1;
    };
    auto wanted = [&](Call c) {
      if (!due[c]) return false;
      for (size_t m = 0; m < kMetricCount; ++m)
        if (kCallOf[m] == c && want_[m]) return true;
      return false;
    };
    // Times the call |c| (when wanted and available) into calls_[c].
    auto timed = [&](Call c, bool available, auto&& read) {
      if (!available || !wanted(c)) return;
      const int64_t t0 = MonotonicNs();
      read();
      calls_[c].total_ns += MonotonicNs() - t0;
      ++calls_[c].count;
    };
    timed(kCallUtilization, api.utilization != nullptr, [&] {
      topo::NvmlUtilization u{};
      if (note(api.utilization(device_, &u))) {
        set(kUtilization, u.gpu);
        set(kMemoryUtilization, u.memory);
      }
    });
    timed(kCallMemory, api.memory != nullptr, [&] {
      topo::NvmlMemory m{};
      if (note(api.memory(device_, &m))) set(kMemoryUsed, m.used >> 20);
    });
    unsigned u32 = 0;
    timed(kCallPower, api.power_mw != nullptr, [&] {
      if (note(api.power_mw(device_, &u32))) set(kPower, u32);
    });
    timed(kCallSmClock, api.clock_mhz != nullptr, [&] {
      if (note(api.clock_mhz(device_, topo::kNvmlClockSm, &u32))) set(kSmClock, u32);
    });
    timed(kCallMemoryClock, api.clock_mhz != nullptr, [&] {
      if (note(api.clock_mhz(device_, topo::kNvmlClockMem, &u32))) set(kMemoryClock, u32);
    });
    timed(kCallNvLink, api.field_values != nullptr, [&] {
      topo::NvmlFieldValue f[2]{};
      f[0].field_id = topo::kFieldNvLinkThroughputDataTx;
      f[1].field_id = topo::kFieldNvLinkThroughputDataRx;
      f[0].scope_id = f[1].scope_id = topo::kNvmlAllLinks;
      if (note(api.field_values(device_, 2, f))) {
        for (int i = 0; i < 2; ++i) {
          unsigned long long n = 0;
          if (topo::NvmlFieldToU64(f[i], &n)) set(static_cast<Metric>(kNvLinkTx + i), n);
        }
      }
    });
  }

  struct CallCost {
    int64_t total_ns = 0;
    uint64_t count = 0;
    bool slow = false;  // read at the events rate
  };

  std::shared_ptr<NvmlSession> s_;
  NvmlDevice device_;
  std::string index_;
  std::string name_;
  std::string bus_id_;
  std::vector<Metric> metrics_;  // those NVML answered when the sampler started
  std::array<uint8_t, kMetricCount> want_{};
  uint32_t first_series_ = 0;
  bool gone_ = false;
  std::vector<uint64_t> values_;
  std::vector<uint8_t> ok_;
  std::array<CallCost, kCallCount> calls_{};
};

}  // namespace

std::vector<std::unique_ptr<SampleSource>> OpenGpuSources(const std::string& library,
                                                          std::vector<std::string>* notes) {
  std::vector<std::unique_ptr<SampleSource>> sources;
  auto session = std::make_shared<NvmlSession>();
  std::string error;
  const std::string name = library.empty() ? topo::kNvmlLibrary : library;
  session->lib = topo::DynamicLibrary::Open(name.c_str(), &error);
  if (!session->lib) {
    notes->push_back("no GPU metrics: NVML cannot be loaded (" + error + ")");
    return sources;
  }
  session->api = topo::BindNvml(*session->lib);
  const NvmlApi& api = session->api;
  if (!api.init || !api.count || !api.by_index) {
    notes->push_back("no GPU metrics: " + name + " lacks nvmlInit_v2 / nvmlDeviceGetCount_v2 / "
                     "nvmlDeviceGetHandleByIndex_v2 (driver too old)");
    session->api.shutdown = nullptr;
    return sources;
  }
  if (int rc = api.init(); rc != topo::kNvmlSuccess) {
    notes->push_back("no GPU metrics: NVML failed to start: " + topo::NvmlErrorText(api, rc));
    session->api.shutdown = nullptr;
    return sources;
  }
  unsigned count = 0;
  if (int rc = api.count(&count); rc != topo::kNvmlSuccess) {
    notes->push_back("no GPU metrics: NVML cannot count the GPUs: " + topo::NvmlErrorText(api, rc));
    return sources;
  }
  if (count == 0) notes->push_back("no GPU metrics: NVML sees no GPU");
  for (unsigned i = 0; i < count; ++i) {
    NvmlDevice device = nullptr;
    if (int rc = api.by_index(i, &device); rc != topo::kNvmlSuccess) {
      notes->push_back("GPU " + std::to_string(i) + " not sampled: " + topo::NvmlErrorText(api, rc));
      continue;
    }
    std::string bus_id;
    topo::NvmlPciInfo pci{};
    if (api.pci_info && api.pci_info(device, &pci) == topo::kNvmlSuccess) bus_id.assign(pci.bus_id, strnlen(pci.bus_id, sizeof(pci.bus_id)));
    auto source = std::make_unique<GpuSource>(session, device, i, bus_id);
    if (source->metric_count() == 0) {
      notes->push_back("GPU " + std::to_string(i) + " not sampled: NVML answers none of the metrics");
      continue;
    }
    sources.push_back(std::move(source));
  }
  return sources;
}

}  // namespace commlens::recorder::sampler
