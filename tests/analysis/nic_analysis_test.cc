// NIC counters and GPU metrics in `commlens analyze`: a job folder with a real rank trace
// and a samples file made on a fake EFA device, hand-made series for wraps and for the
// interpolation beside collectives, and the Nsight GPU-metrics sample.
#include "analysis/nic_analysis.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <thread>

#include "analysis/analyze.h"
#include "importers/trace_loader.h"
#include "recorder/sampler/fake_nics.h"
#include "recorder/sampler/sampler.h"
#include "report/json_report.h"
#include "report/text_report.h"

namespace commlens::analysis {
namespace {

using nlohmann::json;
using recorder::sampler::testing::FakeNics;

const std::string kSource = COMMLENS_SOURCE_DIR;

AnalyzeOptions AllEvents() {
  AnalyzeOptions o;
  o.window.all_events = true;
  o.threads = 1;
  return o;
}

const NicPort* FindPort(const CounterAnalysis& c, const std::string& device) {
  for (const NicPort& p : c.nics)
    if (p.device == device) return &p;
  return nullptr;
}

// Five readings of the fake EFA port with known increments (the sampler's first reading
// is the base), then Stop's last reading: the totals are the increments, exactly.
TEST(NicAnalysis, EfaSamplesBesideARankTraceGiveExactTotals) {
  FakeNics fake;
  topo::testing::TempDir out;
  std::filesystem::copy_file(kSource + "/examples/traces/native/rank0.cltrace",
                             out.path() / "rank0.cltrace");
  recorder::sampler::SamplerOptions o;
  o.output_path = (out.path() / "job1.node1.samples.cltrace").string();
  o.hostname = "node1";
  o.job_id = "42";
  o.nic.sysfs_root = fake.root();
  o.gpus = false;
  auto sampler = recorder::sampler::Sampler::Create(o);
  ASSERT_TRUE(sampler.ok()) << sampler.status().message();
  const uint64_t base = 10'000'000'000ull;
  for (uint64_t k = 0; k <= 4; ++k) {
    fake.Set(FakeNics::Efa("tx_bytes"), base + k * 1'234'567);
    fake.Set(FakeNics::Efa("rx_bytes"), base + k * 1'000);
    fake.Set(FakeNics::Efa("rx_drops"), k);                       // 4 drops
    fake.Set(FakeNics::Efa("rdma_read_wr_err"), k == 4 ? 2 : 0);  // 2 errors
    fake.Set(FakeNics::Efa("retrans_pkts"), 3 * k);               // 12 retransmits
    fake.Set(FakeNics::Efa("retrans_bytes"), 4096 * k);           // bytes: not an error count
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    (*sampler)->TickNow();
  }
  (*sampler)->Stop();

  auto trace = importers::LoadTrace({out.path().string()}, {});
  ASSERT_TRUE(trace.ok()) << trace.status().message();
  const JobAnalysis job = Analyze(*trace, AllEvents());
  const NicPort* efa = FindPort(job.counters, "rdmap16s27:1");
  ASSERT_NE(efa, nullptr);
  EXPECT_EQ(efa->host, "node1");
  EXPECT_EQ(efa->kind, "efa");
  EXPECT_DOUBLE_EQ(efa->tx_bytes, 4 * 1'234'567.0);
  EXPECT_DOUBLE_EQ(efa->rx_bytes, 4'000.0);
  EXPECT_DOUBLE_EQ(efa->errors, 4 + 2 + 12);
  EXPECT_DOUBLE_EQ(efa->line_rate_bits_per_s, 100e9);
  EXPECT_EQ(efa->gaps, 0u);
  size_t readings = 0;
  for (const model::CounterSeries& s : trace->counters)
    if (s.name == "efa.tx_bytes") readings = s.time.size();
  EXPECT_GE(readings, 5u);
  EXPECT_EQ(efa->samples, readings);
  EXPECT_GT(efa->peak_tx_bytes_per_s, efa->mean_tx_bytes_per_s * 0.99);
  EXPECT_TRUE(job.counters.gpu_metrics.empty());

  // The JSON parses back with the port's totals; no GPU metrics, no gpu_metrics key.
  const json doc = json::parse(report::AnalyzeToJson(*trace, job).dump());
  ASSERT_TRUE(doc.contains("nics"));
  EXPECT_FALSE(doc.contains("gpu_metrics"));
  bool found = false;
  for (const json& n : doc["nics"]) {
    if (n["device"] != "rdmap16s27:1") continue;
    found = true;
    EXPECT_EQ(n["host"], "node1");
    EXPECT_EQ(n["kind"], "efa");
    EXPECT_DOUBLE_EQ(n["tx_bytes"].get<double>(), 4 * 1'234'567.0);
    EXPECT_DOUBLE_EQ(n["rx_bytes"].get<double>(), 4'000.0);
    EXPECT_EQ(n["samples"].get<size_t>(), readings);
    EXPECT_DOUBLE_EQ(n["errors"].get<double>(), 18.0);
    EXPECT_DOUBLE_EQ(n["line_rate_gbps"].get<double>(), 100.0);
    EXPECT_TRUE(n["peak_tx_gbps"].is_number());
    EXPECT_TRUE(n["peak_line_pct"].is_number());
  }
  EXPECT_TRUE(found);
  const std::string text = report::AnalyzeToText(*trace, job, {});
  EXPECT_NE(text.find("Network and GPU counters"), std::string::npos);
  EXPECT_NE(text.find("rdmap16s27:1"), std::string::npos);
}

model::CounterSeries NicSeries(const std::string& name, const std::string& unit, uint8_t width,
                               std::vector<double> values) {
  model::CounterSeries s;
  s.name = name;
  s.unit = unit;
  s.owner = model::CounterOwner::kNic;
  s.host = "h";
  s.device = "eth0";
  s.cumulative = true;
  s.width_bits = width;
  for (size_t i = 0; i < values.size(); ++i)
    s.time.push_back(static_cast<model::TimeNs>(i) * 1'000'000);
  s.value = std::move(values);
  return s;
}

CounterAnalysis AnalyzeAlone(const model::Trace& trace) {
  std::vector<ActivityWindow> windows(trace.ranks.size());
  std::vector<const ActivityWindow*> ptrs;
  std::vector<std::vector<uint8_t>> in_window;
  for (size_t i = 0; i < trace.ranks.size(); ++i) {
    windows[i] = SelectActivities(trace.ranks[i], {});
    in_window.push_back(std::vector<uint8_t>(trace.ranks[i].comms.size(), 1));
  }
  for (const ActivityWindow& w : windows) ptrs.push_back(&w);
  return AnalyzeCounters(trace, ptrs, in_window);
}

// A 32-bit byte counter that wraps once: 2^32 - old + new, not a reset.
TEST(NicAnalysis, ThirtyTwoBitWrapIsCounted) {
  model::Trace trace;
  trace.counters.push_back(
      NicSeries("net.tx_bytes", "bytes", 32, {4294967000.0, 4294967200.0, 100.0, 300.0}));
  trace.counters.push_back(NicSeries("net.rx_bytes", "bytes", 64, {0, 10, 30}));
  const CounterAnalysis c = AnalyzeAlone(trace);
  ASSERT_EQ(c.nics.size(), 1u);
  EXPECT_EQ(c.nics[0].kind, "ethernet");
  EXPECT_DOUBLE_EQ(c.nics[0].tx_bytes, 200 + 196 + 200);
  EXPECT_EQ(c.nics[0].wraps, 1u);
  EXPECT_EQ(c.nics[0].resets, 0u);
  EXPECT_DOUBLE_EQ(c.nics[0].rx_bytes, 30);
  EXPECT_EQ(c.nics[0].samples, 4u);
  EXPECT_DOUBLE_EQ(c.nics[0].line_rate_bits_per_s, 0);
}

// InfiniBand data counters count 4-byte words; a collective's NIC bytes are the counter
// interpolated linearly at its start and end.
TEST(NicAnalysis, CollectiveWireBytesInterpolateBetweenSamples) {
  model::Trace trace;
  model::CounterSeries ib = NicSeries("ib.port_xmit_data", "4 bytes", 64, {0, 250, 750, 1500});
  ib.device = "mlx5_0:1";
  trace.counters.push_back(ib);
  model::RankTrace& r = trace.ranks.emplace_back();
  r.rank = 0;
  r.hostname = "h";
  // [0.5 ms, 2.5 ms): half of 1000, all of 2000, half of 3000 bytes.
  r.comms.Append(500'000, 2'500'000, model::CommOp::kAllReduce, r.strings.Intern("float"), 500, 500,
                 2000, model::kNoIndex, 0, -1, model::kNoIndex);
  // After the last reading: its NIC bytes are unknown, so it is left out.
  r.comms.Append(5'000'000, 6'000'000, model::CommOp::kAllReduce, r.strings.Intern("float"), 500,
                 500, 2000, model::kNoIndex, 1, -1, model::kNoIndex);
  const CounterAnalysis c = AnalyzeAlone(trace);
  ASSERT_EQ(c.nics.size(), 1u);
  EXPECT_EQ(c.nics[0].kind, "infiniband");
  EXPECT_DOUBLE_EQ(c.nics[0].tx_bytes, 6000);
  ASSERT_EQ(c.wire.size(), 1u);
  EXPECT_EQ(c.wire[0].count, 1u);
  EXPECT_DOUBLE_EQ(c.wire[0].wire_bytes, 500 + 2000 + 1500);
  EXPECT_DOUBLE_EQ(c.wire[0].claimed_bytes, 2000);
  EXPECT_DOUBLE_EQ(c.wire[0].ratio(), 2.0);
}

// Nsight GPU metrics: each gauge's mean, min and max are those of its samples.
TEST(NicAnalysis, NsightGpuMetricsMatchTheSeries) {
  auto trace = importers::LoadTrace({kSource + "/examples/traces/nsys-1gpu/moe-gpu-metrics"}, {});
  ASSERT_TRUE(trace.ok()) << trace.status().message();
  ASSERT_EQ(trace->ranks.size(), 1u);
  const model::CounterSeries* sms = nullptr;
  for (const model::CounterSeries& s : trace->ranks[0].counters)
    if (s.name == "gpu.SMs Active") sms = &s;
  ASSERT_NE(sms, nullptr);
  ASSERT_FALSE(sms->value.empty());
  double sum = 0;
  for (double v : sms->value) sum += v;
  const double mean = sum / static_cast<double>(sms->value.size());
  const double lo = *std::min_element(sms->value.begin(), sms->value.end());
  const double hi = *std::max_element(sms->value.begin(), sms->value.end());

  const JobAnalysis job = Analyze(*trace, AllEvents());
  EXPECT_TRUE(job.counters.nics.empty());
  const GpuMetric* m = nullptr;
  for (const GpuMetric& g : job.counters.gpu_metrics)
    if (g.name == "gpu.SMs Active") m = &g;
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(m->rank, trace->ranks[0].rank);
  EXPECT_EQ(m->device, "0");
  EXPECT_EQ(m->unit, "%");
  EXPECT_EQ(m->samples, sms->value.size());
  EXPECT_DOUBLE_EQ(m->mean, mean);
  EXPECT_DOUBLE_EQ(m->min, lo);
  EXPECT_DOUBLE_EQ(m->max, hi);

  const json doc = json::parse(report::AnalyzeToJson(*trace, job).dump());
  EXPECT_FALSE(doc.contains("nics"));
  ASSERT_TRUE(doc.contains("gpu_metrics"));
  bool found = false;
  for (const json& g : doc["gpu_metrics"]) {
    if (g["name"] != "gpu.SMs Active") continue;
    found = true;
    EXPECT_EQ(g["rank"].get<int>(), trace->ranks[0].rank);
    EXPECT_EQ(g["device"], "0");
    EXPECT_EQ(g["unit"], "%");
    EXPECT_EQ(g["samples"].get<size_t>(), sms->value.size());
    EXPECT_DOUBLE_EQ(g["mean"].get<double>(), mean);
    EXPECT_DOUBLE_EQ(g["min"].get<double>(), lo);
    EXPECT_DOUBLE_EQ(g["max"].get<double>(), hi);
    EXPECT_TRUE(g["host"].is_string());
  }
  EXPECT_TRUE(found);

  // With the default window (ProfilerStep) the samples are a subset of the series.
  const JobAnalysis windowed = Analyze(*trace, AnalyzeOptions{});
  for (const GpuMetric& g : windowed.counters.gpu_metrics)
    if (g.name == "gpu.SMs Active") {
      EXPECT_LE(g.samples, sms->value.size());
      EXPECT_GE(g.min, lo);
      EXPECT_LE(g.max, hi);
    }
}

}  // namespace
}  // namespace commlens::analysis
