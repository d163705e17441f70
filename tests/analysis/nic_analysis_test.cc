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
#include "analysis/findings.h"
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

// The fake EFA port through the sampler: retrans_pkts stays flat for two readings, then
// grows by 8 at the third; tx_pkts grows 1000 a reading. One finding, in plain words,
// with the sampling interval of the jump and the share of packets resent.
TEST(NicAnalysis, EfaRetransmitsMidWindowAreAFinding) {
  FakeNics fake;
  topo::testing::TempDir out;
  std::filesystem::copy_file(kSource + "/examples/traces/native/rank0.cltrace", out.path() / "rank0.cltrace");
  auto sampler = recorder::sampler::Sampler::Create(
      recorder::sampler::testing::FakeSamplerOptions(fake, (out.path() / "job1.node1.samples.cltrace").string()));
  ASSERT_TRUE(sampler.ok()) << sampler.status().message();
  for (uint64_t k = 0; k <= 4; ++k) {
    fake.Set(FakeNics::Efa("tx_bytes"), k * 1'000'000);
    fake.Set(FakeNics::Efa("tx_pkts"), k * 1'000);
    fake.Set(FakeNics::Efa("retrans_pkts"), k >= 3 ? 8 : 0);
    fake.Set(FakeNics::Efa("retrans_bytes"), k >= 3 ? 8 * 4096 : 0);
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    (*sampler)->TickNow();
  }
  (*sampler)->Stop();

  auto trace = importers::LoadTrace({out.path().string()}, {});
  ASSERT_TRUE(trace.ok()) << trace.status().message();
  const model::CounterSeries* retrans = nullptr;
  model::TimeNs first_reading = INT64_MAX;
  for (const model::CounterSeries& s : trace->counters) {
    if (s.name == "efa.retrans_pkts") retrans = &s;
    if (s.owner == model::CounterOwner::kNic && !s.time.empty()) first_reading = std::min(first_reading, s.time[0]);
  }
  ASSERT_NE(retrans, nullptr);
  size_t jump = 1;
  while (jump < retrans->value.size() && retrans->value[jump] == retrans->value[jump - 1]) ++jump;
  ASSERT_LT(jump, retrans->value.size());

  const JobAnalysis job = Analyze(*trace, AllEvents());
  const NicPort* efa = FindPort(job.counters, "rdmap16s27:1");
  ASSERT_NE(efa, nullptr);
  ASSERT_EQ(efa->error_counters.size(), 1u);  // retrans_bytes counts bytes: not an error count
  EXPECT_EQ(efa->error_counters[0].name, "retrans_pkts");
  EXPECT_DOUBLE_EQ(efa->error_counters[0].amount, 8);
  EXPECT_DOUBLE_EQ(efa->tx_packets, 4000);
  const NicFinding* f = nullptr;
  for (const NicFinding& x : job.counters.findings)
    if (&job.counters.nics[x.port] == efa) f = &x;
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(job.counters.findings.size(), 1u);
  EXPECT_EQ(f->first_from, retrans->time[jump - 1]);
  EXPECT_EQ(f->first_to, retrans->time[jump]);
  EXPECT_EQ(f->since_first_reading, retrans->time[jump - 1] - first_reading);
  for (const char* part : {"Host node1, NIC port rdmap16s27:1 (EFA)",
                           "retrans_pkts +8 (packets resent, 0.2% of the 4000 sent)",
                           "EFA resends lost packets itself"})
    EXPECT_NE(f->text.find(part), std::string::npos) << part << " in: " << f->text;

  const json doc = json::parse(report::AnalyzeToJson(*trace, job).dump());
  ASSERT_EQ(doc["nic_findings"].size(), 1u);
  EXPECT_EQ(doc["nic_findings"][0]["device"], "rdmap16s27:1");
  EXPECT_EQ(doc["nic_findings"][0]["counters"][0]["name"], "retrans_pkts");
  EXPECT_DOUBLE_EQ(doc["nic_findings"][0]["counters"][0]["amount"].get<double>(), 8.0);
  EXPECT_EQ(doc["nic_findings"][0]["text"], f->text);
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

// A port of host "h" (series every 1 ms from 0, as NicSeries makes them).
model::CounterSeries PortSeries(const std::string& device, const std::string& name, const std::string& unit,
                                std::vector<double> values) {
  model::CounterSeries s = NicSeries(name, unit, 64, std::move(values));
  s.device = device;
  return s;
}

// The link_rate gauge of a port (bits/s), as the sampler records it.
model::CounterSeries LinkRate(const std::string& device, const std::string& prefix, double bits_per_s) {
  model::CounterSeries s = PortSeries(device, prefix + ".link_rate", "bits/s", {bits_per_s, bits_per_s});
  s.cumulative = false;
  return s;
}

// Rank 0 on host "h" with one all_reduce of 2000 bytes on the GPU over [0.5 ms, 2.5 ms).
model::RankTrace& RankWithOneAllReduce(model::Trace* trace) {
  model::RankTrace& r = trace->ranks.emplace_back();
  r.rank = 0;
  r.hostname = "h";
  r.comms.Append(500'000, 2'500'000, model::CommOp::kAllReduce, r.strings.Intern("float"), 500, 500, 2000,
                 model::kNoIndex, 0, -1, model::kNoIndex);
  return r;
}

JobAnalysis CountersOnly(const model::Trace& trace) {
  JobAnalysis job;
  job.counters = AnalyzeAlone(trace);
  return job;
}

// Two InfiniBand ports of known line rate: 2 x 4000 bytes in the collective's 2 ms is
// 32 Mb/s, half of the ports' 2 x 32 Mb/s.
TEST(NicAnalysis, WireRateAgainstTheLineRateOfThePortsCounted) {
  model::Trace trace;
  for (const std::string dev : {"mlx5_0:1", "mlx5_1:1"}) {
    trace.counters.push_back(PortSeries(dev, "ib.port_xmit_data", "4 bytes", {0, 250, 750, 1500}));
    trace.counters.push_back(LinkRate(dev, "ib", 32e6));
  }
  RankWithOneAllReduce(&trace);
  const JobAnalysis job = CountersOnly(trace);
  ASSERT_EQ(job.counters.wire.size(), 1u);
  const WireBytes& w = job.counters.wire[0];
  EXPECT_DOUBLE_EQ(w.wire_bytes, 8000);
  EXPECT_EQ(w.collective_ns, 2'000'000);
  EXPECT_DOUBLE_EQ(w.wire_bytes_per_s(), 4e6);
  EXPECT_DOUBLE_EQ(w.line_rate_bits_per_s(), 64e6);
  EXPECT_DOUBLE_EQ(w.line_share(), 0.5);

  const json doc = json::parse(report::AnalyzeToJson(trace, job).dump());
  ASSERT_EQ(doc["nic_wire_bytes"].size(), 1u);
  const json& row = doc["nic_wire_bytes"][0];
  EXPECT_DOUBLE_EQ(row["collective_us"].get<double>(), 2000.0);
  EXPECT_DOUBLE_EQ(row["wire_gbps"].get<double>(), 0.032);
  EXPECT_DOUBLE_EQ(row["line_rate_gbps"].get<double>(), 0.064);
  EXPECT_DOUBLE_EQ(row["wire_line_pct"].get<double>(), 50.0);
  EXPECT_DOUBLE_EQ(row["wire_to_claimed"].get<double>(), 4.0);
  const std::string text = report::AnalyzeToText(trace, job, {});
  EXPECT_NE(text.find("tx Gb/s"), std::string::npos);
  EXPECT_NE(text.find("50.00%"), std::string::npos) << text;
}

// One port without a link_rate gauge: the summed line rate is unknown, so no share.
TEST(NicAnalysis, WireLineShareIsAbsentWhenAPortsLineRateIsUnknown) {
  model::Trace trace;
  for (const std::string dev : {"mlx5_0:1", "mlx5_1:1"})
    trace.counters.push_back(PortSeries(dev, "ib.port_xmit_data", "4 bytes", {0, 250, 750, 1500}));
  trace.counters.push_back(LinkRate("mlx5_0:1", "ib", 32e6));
  RankWithOneAllReduce(&trace);
  const JobAnalysis job = CountersOnly(trace);
  ASSERT_EQ(job.counters.wire.size(), 1u);
  EXPECT_DOUBLE_EQ(job.counters.wire[0].wire_bytes_per_s(), 4e6);
  EXPECT_FALSE(job.counters.wire[0].line_rate_known());
  EXPECT_DOUBLE_EQ(job.counters.wire[0].line_share(), 0);
  EXPECT_DOUBLE_EQ(job.counters.wire[0].line_rate_bits_per_s(), 0);

  const json doc = json::parse(report::AnalyzeToJson(trace, job).dump());
  const json& row = doc["nic_wire_bytes"][0];
  EXPECT_DOUBLE_EQ(row["wire_gbps"].get<double>(), 0.032);
  EXPECT_TRUE(row["line_rate_gbps"].is_null());
  EXPECT_TRUE(row["wire_line_pct"].is_null());
}

// A port of known line rate that sent nothing during the collective: 0 % of it, not unknown.
TEST(NicAnalysis, IdleNicIsZeroPercentOfAKnownLineRate) {
  model::Trace trace;
  trace.counters.push_back(PortSeries("mlx5_0:1", "ib.port_xmit_data", "4 bytes", {100, 100, 100, 100}));
  trace.counters.push_back(LinkRate("mlx5_0:1", "ib", 400e9));
  RankWithOneAllReduce(&trace);
  const JobAnalysis job = CountersOnly(trace);
  ASSERT_EQ(job.counters.wire.size(), 1u);
  EXPECT_TRUE(job.counters.wire[0].line_rate_known());
  EXPECT_DOUBLE_EQ(job.counters.wire[0].line_rate_bits_per_s(), 400e9);
  const json doc = json::parse(report::AnalyzeToJson(trace, job).dump());
  const json& row = doc["nic_wire_bytes"][0];
  EXPECT_DOUBLE_EQ(row["wire_gbps"].get<double>(), 0.0);
  EXPECT_DOUBLE_EQ(row["line_rate_gbps"].get<double>(), 400.0);
  EXPECT_DOUBLE_EQ(row["wire_line_pct"].get<double>(), 0.0);
}

// An InfiniBand port whose port_rcv_errors grow by 5 from the second interval and whose
// link went down once in the third: one finding naming both, the first increase in
// [1 ms, 2 ms], which overlaps profiler steps 1 and 2 of the host's rank.
TEST(NicAnalysis, ErrorCountersThatGrowMidWindowGiveOneFinding) {
  model::Trace trace;
  const std::string dev = "mlx5_0:1";
  trace.counters.push_back(PortSeries(dev, "ib.port_xmit_data", "4 bytes", {0, 250, 750, 1500, 2000}));
  trace.counters.push_back(PortSeries(dev, "ib.port_rcv_errors", "packets", {7, 7, 10, 10, 12}));
  trace.counters.push_back(PortSeries(dev, "ib.link_downed", "events", {2, 2, 2, 3, 3}));
  trace.counters.push_back(PortSeries(dev, "ib.symbol_error", "events", {9, 9, 9, 9, 9}));  // flat
  trace.counters.push_back(PortSeries(dev, "ib.port_xmit_wait", "ticks", {0, 50, 90, 100, 200}));  // not an error
  trace.counters.push_back(LinkRate(dev, "ib", 400e9));
  // A second port, all flat: no finding.
  trace.counters.push_back(PortSeries("mlx5_1:1", "ib.port_xmit_data", "4 bytes", {0, 1, 2, 3, 4}));
  trace.counters.push_back(PortSeries("mlx5_1:1", "ib.port_rcv_errors", "packets", {4, 4, 4, 4, 4}));
  model::RankTrace& r = RankWithOneAllReduce(&trace);
  r.steps = {{1, 0, 1'500'000}, {2, 1'500'000, 2'500'000}, {3, 2'500'000, 4'000'000}};

  const JobAnalysis job = CountersOnly(trace);
  const CounterAnalysis& c = job.counters;
  ASSERT_EQ(c.nics.size(), 2u);
  const NicPort& p = *FindPort(c, dev);
  EXPECT_DOUBLE_EQ(p.errors, 5 + 1);
  ASSERT_EQ(p.error_counters.size(), 2u);  // by name
  EXPECT_EQ(p.error_counters[0].name, "link_downed");
  EXPECT_DOUBLE_EQ(p.error_counters[0].amount, 1);
  EXPECT_EQ(p.error_counters[0].first_from, 2'000'000);
  EXPECT_EQ(p.error_counters[0].first_to, 3'000'000);
  EXPECT_EQ(p.error_counters[1].name, "port_rcv_errors");
  EXPECT_DOUBLE_EQ(p.error_counters[1].amount, 5);
  EXPECT_EQ(p.error_counters[1].first_from, 1'000'000);
  EXPECT_EQ(p.error_counters[1].first_to, 2'000'000);
  EXPECT_FALSE(p.error_counters[1].lower_bound);
  EXPECT_DOUBLE_EQ(FindPort(c, "mlx5_1:1")->errors, 0);

  ASSERT_EQ(c.findings.size(), 1u);
  const NicFinding& f = c.findings[0];
  EXPECT_EQ(&c.nics[f.port], &p);
  EXPECT_EQ(f.first_from, 1'000'000);
  EXPECT_EQ(f.first_to, 2'000'000);
  EXPECT_EQ(f.since_first_reading, 1'000'000);
  EXPECT_EQ(f.step_first, 1);
  EXPECT_EQ(f.step_last, 2);
  for (const char* part : {"Host h, NIC port mlx5_0:1 (InfiniBand)", "link_downed +1 (the link went down)",
                           "port_rcv_errors +5 (malformed packets received)",
                           "between 0.001 s and 0.002 s after the host's first NIC counter reading",
                           "in profiler steps 1 to 2", "the cable, the transceiver or the switch port"})
    EXPECT_NE(f.text.find(part), std::string::npos) << part << " in: " << f.text;
  EXPECT_EQ(f.text.find("symbol_error"), std::string::npos);
  EXPECT_EQ(f.text.find("port_xmit_wait"), std::string::npos);

  const json doc = json::parse(report::AnalyzeToJson(trace, job).dump());
  ASSERT_EQ(doc["nic_findings"].size(), 1u);
  const json& jf = doc["nic_findings"][0];
  EXPECT_EQ(jf["severity"], "warning");
  EXPECT_EQ(jf["host"], "h");
  EXPECT_EQ(jf["device"], dev);
  EXPECT_EQ(jf["kind"], "infiniband");
  ASSERT_EQ(jf["counters"].size(), 2u);
  EXPECT_EQ(jf["counters"][1]["name"], "port_rcv_errors");
  EXPECT_DOUBLE_EQ(jf["counters"][1]["amount"].get<double>(), 5.0);
  EXPECT_FALSE(jf["counters"][1]["lower_bound"].get<bool>());
  EXPECT_DOUBLE_EQ(jf["counters"][1]["first_from_us"].get<double>(), 1000.0);
  EXPECT_DOUBLE_EQ(jf["first_increase"]["from_us"].get<double>(), 1000.0);
  EXPECT_DOUBLE_EQ(jf["first_increase"]["to_us"].get<double>(), 2000.0);
  EXPECT_DOUBLE_EQ(jf["first_increase"]["since_first_reading_us"].get<double>(), 1000.0);
  EXPECT_EQ(jf["first_increase"]["step_first"].get<int>(), 1);
  EXPECT_EQ(jf["first_increase"]["step_last"].get<int>(), 2);
  EXPECT_EQ(jf["text"], f.text);
  for (const json& n : doc["nics"]) {
    EXPECT_EQ(n["error_counters"].size(), n["device"] == dev ? 2u : 0u);
    EXPECT_DOUBLE_EQ(n["errors"].get<double>(), n["device"] == dev ? 6.0 : 0.0);
  }

  const std::string text = report::AnalyzeToText(trace, job, {});
  EXPECT_NE(text.find("warning: " + f.text + "\n"), std::string::npos) << text;

  // The HTML report's findings carry it, pointing at the counters.
  size_t nic = 0;
  for (const auto& h : analysis::FindFindings(trace, job))
    if (h.rule == "nic_errors") {
      ++nic;
      EXPECT_EQ(h.text, f.text);
      EXPECT_EQ(h.section, "counters");
    }
  EXPECT_EQ(nic, 1u);
}

// Error counters that hold still (whatever they read before) give no finding; the report
// keeps nic_findings, empty.
TEST(NicAnalysis, FlatErrorCountersGiveNoFinding) {
  model::Trace trace;
  trace.counters.push_back(PortSeries("eth0", "net.tx_bytes", "bytes", {0, 100, 200, 300}));
  for (const char* name : {"net.rx_errors", "net.tx_errors", "net.rx_dropped", "net.tx_dropped"})
    trace.counters.push_back(PortSeries("eth0", name, "packets", {3, 3, 3, 3}));
  const JobAnalysis job = CountersOnly(trace);
  ASSERT_EQ(job.counters.nics.size(), 1u);
  EXPECT_DOUBLE_EQ(job.counters.nics[0].errors, 0);
  EXPECT_TRUE(job.counters.nics[0].error_counters.empty());
  EXPECT_TRUE(job.counters.findings.empty());

  const json doc = json::parse(report::AnalyzeToJson(trace, job).dump());
  ASSERT_TRUE(doc["nic_findings"].is_array());
  EXPECT_TRUE(doc["nic_findings"].empty());
  EXPECT_TRUE(doc["nics"][0]["error_counters"].empty());
  EXPECT_EQ(report::AnalyzeToText(trace, job, {}).find("warning:"), std::string::npos);
  for (const auto& h : analysis::FindFindings(trace, job)) EXPECT_NE(h.rule, "nic_errors");
}

// A saturating PMA counter that sits at its maximum: what it shows is a lower bound.
TEST(NicAnalysis, SaturatedErrorCounterIsALowerBound) {
  model::Trace trace;
  trace.counters.push_back(PortSeries("mlx5_0:1", "ib.port_xmit_data", "4 bytes", {0, 1, 2, 3}));
  model::CounterSeries downed = PortSeries("mlx5_0:1", "ib.link_downed", "events", {250, 255, 255, 255});
  downed.width_bits = 8;
  downed.saturates = true;
  trace.counters.push_back(downed);
  const JobAnalysis job = CountersOnly(trace);
  ASSERT_EQ(job.counters.findings.size(), 1u);
  const NicCounterGrowth& g = job.counters.nics[0].error_counters.at(0);
  EXPECT_DOUBLE_EQ(g.amount, 5);
  EXPECT_TRUE(g.lower_bound);
  EXPECT_NE(job.counters.findings[0].text.find("link_downed +5 or more"), std::string::npos)
      << job.counters.findings[0].text;
}

// Past five ports, the HTML findings name the five with the most events and count the rest.
TEST(NicAnalysis, ManyPortsWithErrorsAreOneHtmlLineBeyondFive) {
  model::Trace trace;
  for (int i = 0; i < 8; ++i) {
    const std::string dev = "mlx5_" + std::to_string(i) + ":1";
    trace.counters.push_back(PortSeries(dev, "ib.port_xmit_data", "4 bytes", {0, 1, 2}));
    trace.counters.push_back(PortSeries(dev, "ib.port_rcv_errors", "packets", {0, 0, 1.0 + i}));
  }
  const JobAnalysis job = CountersOnly(trace);
  EXPECT_EQ(job.counters.findings.size(), 8u);
  std::vector<std::string> texts;
  for (const auto& h : analysis::FindFindings(trace, job))
    if (h.rule == "nic_errors") texts.push_back(h.text);
  ASSERT_EQ(texts.size(), 6u);
  EXPECT_NE(texts[0].find("mlx5_7:1"), std::string::npos) << texts[0];  // 8 errors, the most
  EXPECT_NE(texts[5].find("3 more NIC ports"), std::string::npos) << texts[5];
  EXPECT_NE(texts[5].find("on host h;"), std::string::npos) << texts[5];
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
