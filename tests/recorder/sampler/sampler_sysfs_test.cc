// The sampler on fake sysfs trees laid out like real devices (fake_nics.h): what it finds
// and how it reads each kind of NIC, a 32-bit counter wrapping, a saturating counter,
// a counter wider than assumed, a device removed and put back mid-run; the file written,
// read back by the native importer, and the rates derived from it.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <thread>

#include "model/counter_rates.h"
#include "importers/native/native_importer.h"
#include "recorder/sampler/counter_file_reader.h"
#include "recorder/sampler/fake_nics.h"
#include "recorder/sampler/nic_counter_files.h"
#include "recorder/sampler/sampler.h"

namespace commlens::recorder::sampler {
namespace {

namespace nf = native_format;
using testing::FakeNics;
using testing::FakeSamplerOptions;

const NicSpec* Find(const std::vector<NicSpec>& nics, const std::string& name) {
  for (const NicSpec& n : nics)
    if (n.name == name) return &n;
  return nullptr;
}
const CounterSpec* FindCounter(const NicSpec& nic, const std::string& series) {
  for (const CounterSpec& c : nic.counters)
    if (c.def.name == series) return &c;
  return nullptr;
}
const model::CounterSeries* FindSeries(const model::RankTrace& t, const std::string& name, const std::string& device) {
  for (const model::CounterSeries& s : t.counters)
    if (s.name == name && s.device == device) return &s;
  return nullptr;
}
bool AnyNoteHas(const std::vector<std::string>& notes, const std::string& text) {
  return std::any_of(notes.begin(), notes.end(), [&](const std::string& n) { return n.find(text) != std::string::npos; });
}

TEST(CounterText, ParsesCountersRatesAndSpeeds) {
  EXPECT_EQ(ParseCounterText("123456\n", CounterText::kDecimal), 123456u);
  EXPECT_EQ(ParseCounterText("18446744073709551615\n", CounterText::kDecimal), UINT64_MAX);
  EXPECT_FALSE(ParseCounterText("N/A\n", CounterText::kDecimal));
  EXPECT_FALSE(ParseCounterText("", CounterText::kDecimal));
  EXPECT_FALSE(ParseCounterText("12 34", CounterText::kDecimal));
  EXPECT_EQ(ParseCounterText("100 Gb/sec (4X EDR)\n", CounterText::kIbRate), 100'000'000'000u);
  EXPECT_EQ(ParseCounterText("2.5 Gb/sec (1X SDR)\n", CounterText::kIbRate), 2'500'000'000u);
  EXPECT_FALSE(ParseCounterText("0 Gb/sec\n", CounterText::kIbRate));
  EXPECT_EQ(ParseCounterText("25000\n", CounterText::kMegabits), 25'000'000'000u);
  EXPECT_FALSE(ParseCounterText("-1\n", CounterText::kMegabits));  // a link that is down
}

TEST(NicDiscovery, FindsEachKindWithItsCountersWidthsAndRates) {
  FakeNics fake;
  NicDiscoveryOptions o;
  o.sysfs_root = fake.root();
  std::vector<std::string> notes;
  std::vector<NicSpec> nics = DiscoverNics(o, &notes);
  std::vector<std::string> names;
  for (const NicSpec& n : nics) names.push_back(n.name);
  // RDMA ports first (natural order), then interfaces; lo only when asked.
  EXPECT_EQ(names, (std::vector<std::string>{"mlx4_0:1", "mlx5_0:1", "mlx5_1:1", "rdmap16s27:1", "eth1"}));

  const NicSpec* efa = Find(nics, "rdmap16s27:1");
  ASSERT_TRUE(efa);
  EXPECT_EQ(efa->kind, nf::DeviceKind::kEfa);
  const CounterSpec* tx = FindCounter(*efa, "efa.tx_bytes");
  ASSERT_TRUE(tx);
  EXPECT_EQ(tx->def.unit, "bytes");
  EXPECT_EQ(tx->def.width_bits, 64);
  EXPECT_FALSE(tx->def.saturates);
  EXPECT_EQ(tx->group, CounterGroup::kTraffic);
  EXPECT_EQ(tx->def.source, "/sys/class/infiniband/rdmap16s27/ports/1/hw_counters/tx_bytes");
  EXPECT_EQ(FindCounter(*efa, "efa.retrans_timeout_events")->group, CounterGroup::kEvents);
  EXPECT_EQ(FindCounter(*efa, "efa.rdma_read_resp_bytes")->group, CounterGroup::kTraffic);
  EXPECT_FALSE(FindCounter(*efa, "efa.lifespan"));  // the driver's cache time, not a counter
  ASSERT_TRUE(FindCounter(*efa, "efa.link_rate"));
  EXPECT_FALSE(FindCounter(*efa, "efa.link_rate")->def.cumulative);
  // The traffic group comes first, then the slow one.
  auto first_event = std::find_if(efa->counters.begin(), efa->counters.end(),
                                  [](const CounterSpec& c) { return c.group == CounterGroup::kEvents; });
  EXPECT_TRUE(std::all_of(first_event, efa->counters.end(),
                          [](const CounterSpec& c) { return c.group == CounterGroup::kEvents; }));

  const NicSpec* ib = Find(nics, "mlx5_0:1");
  ASSERT_TRUE(ib);
  EXPECT_EQ(ib->kind, nf::DeviceKind::kInfiniBand);
  const CounterSpec* data = FindCounter(*ib, "ib.port_xmit_data");
  ASSERT_TRUE(data);
  EXPECT_EQ(data->def.unit, "4 bytes");
  EXPECT_EQ(data->def.width_bits, 64);  // extended counters: unicast_xmit_packets exists
  EXPECT_TRUE(data->def.saturates);
  EXPECT_EQ(FindCounter(*ib, "ib.link_downed")->def.width_bits, 8);
  EXPECT_EQ(FindCounter(*ib, "ib.symbol_error")->def.width_bits, 16);
  EXPECT_EQ(FindCounter(*ib, "ib.port_xmit_wait")->def.width_bits, 32);
  EXPECT_EQ(FindCounter(*ib, "ib.rx_write_requests")->def.width_bits, 32);  // mlx5 queue counter: wraps
  EXPECT_FALSE(FindCounter(*ib, "ib.rx_write_requests")->def.saturates);
  EXPECT_EQ(FindCounter(*ib, "ib.np_cnp_sent")->def.width_bits, 64);
  EXPECT_EQ(FindCounter(*ib, "ib.symbol_error")->group, CounterGroup::kEvents);

  const NicSpec* roce = Find(nics, "mlx5_1:1");
  ASSERT_TRUE(roce);
  EXPECT_EQ(roce->kind, nf::DeviceKind::kRoce);
  EXPECT_TRUE(FindCounter(*roce, "roce.port_rcv_data"));

  const NicSpec* old = Find(nics, "mlx4_0:1");
  ASSERT_TRUE(old);
  EXPECT_EQ(FindCounter(*old, "ib.port_xmit_data")->def.width_bits, 32);
  EXPECT_TRUE(FindCounter(*old, "ib.port_xmit_data")->def.saturates);
  EXPECT_TRUE(AnyNoteHas(notes, "mlx4_0:1: no extended port counters"));

  const NicSpec* eth = Find(nics, "eth1");
  ASSERT_TRUE(eth);
  EXPECT_EQ(eth->kind, nf::DeviceKind::kNetdev);
  EXPECT_EQ(eth->counters.size(), 9u);  // 8 statistics and the speed
  EXPECT_EQ(FindCounter(*eth, "net.tx_bytes")->group, CounterGroup::kTraffic);
  EXPECT_EQ(FindCounter(*eth, "net.tx_dropped")->group, CounterGroup::kEvents);

  // lo when asked, and filters.
  o.include_loopback = true;
  o.only = {"lo", "mlx5_0", "mlx9_9"};
  notes.clear();
  nics = DiscoverNics(o, &notes);
  names.clear();
  for (const NicSpec& n : nics) names.push_back(n.name);
  EXPECT_EQ(names, (std::vector<std::string>{"mlx5_0:1", "lo"}));
  EXPECT_FALSE(FindCounter(nics[1], "net.link_rate"));  // lo has no speed
  EXPECT_TRUE(AnyNoteHas(notes, "mlx9_9"));
}

void Tick(Sampler* s) {
  std::this_thread::sleep_for(std::chrono::milliseconds(2));
  s->TickNow();
}

TEST(SamplerOnFakeSysfs, WritesRawCountersThatImportAndGiveTheRightRates) {
  FakeNics fake;
  topo::testing::TempDir out;
  const std::string path = (out.path() / "samples.cltrace").string();
  auto sampler = Sampler::Create(FakeSamplerOptions(fake, path));
  ASSERT_TRUE(sampler.ok()) << sampler.status().message();
  Sampler& s = **sampler;
  EXPECT_EQ(s.devices(), 5u);

  // EFA: 1 MB per tick out. mlx5 IB: port_xmit_data in 4-byte units; its 32-bit queue
  // counter rx_write_requests wraps. The old HCA's 32-bit port_xmit_data saturates, and
  // its port_rcv_data turns out to be wider than assumed.
  const uint64_t near_wrap = 4294967296ull - 300;
  fake.Set(FakeNics::Hw("mlx5_0", "rx_write_requests"), near_wrap);
  fake.Set(FakeNics::Pma("mlx4_0", "port_xmit_data"), 4294967295ull - 1000);
  s.TickNow();
  for (int i = 1; i <= 5; ++i) {
    fake.Set(FakeNics::Efa("tx_bytes"), 1'000'000ull * i);
    fake.Set(FakeNics::Pma("mlx5_0", "port_xmit_data"), 250'000ull * i);  // 1 MB per tick
    fake.Set(FakeNics::Hw("mlx5_0", "rx_write_requests"), (near_wrap + 100ull * i) % 4294967296ull);
    fake.Set(FakeNics::Net("eth1", "tx_bytes"), 5000ull * i);
    if (i == 3) fake.Set(FakeNics::Pma("mlx4_0", "port_xmit_data"), 4294967295ull);
    if (i == 4) fake.Set(FakeNics::Pma("mlx4_0", "port_rcv_data"), 5'000'000'000ull);
    Tick(&s);
  }
  // The RoCE HCA goes away, then comes back with its counters at zero.
  fake.Set(FakeNics::Pma("mlx5_1", "port_rcv_data"), 1000);
  Tick(&s);
  fake.Remove("mlx5_1");
  Tick(&s);
  Tick(&s);
  fake.Restore("mlx5_1");
  std::this_thread::sleep_for(std::chrono::milliseconds(110));  // it is looked for every 100 ms
  fake.Set(FakeNics::Pma("mlx5_1", "port_rcv_data"), 10);
  Tick(&s);
  fake.Set(FakeNics::Pma("mlx5_1", "port_rcv_data"), 30);
  Tick(&s);
  SamplerReport report = s.Stop();
  EXPECT_EQ(report.ticks, 12u);  // 11 TickNow and the last reading at Stop
  EXPECT_EQ(report.dropped_values, 0u);
  EXPECT_EQ(report.read_errors, 0u);
  EXPECT_EQ(report.write_error, 0);
  EXPECT_GT(report.bytes_written, 1000u);

  auto imported = importers::ImportNativeTrace(path);
  ASSERT_TRUE(imported.ok()) << imported.status().message();
  const model::RankTrace& t = *imported;
  EXPECT_TRUE(t.host_counters_only);
  EXPECT_EQ(t.rank, -1);
  EXPECT_EQ(t.hostname, "node1");
  EXPECT_EQ(t.stats.total(), 0u);

  const model::CounterSeries* efa = FindSeries(t, "efa.tx_bytes", "rdmap16s27:1");
  ASSERT_TRUE(efa);
  EXPECT_EQ(efa->owner, model::CounterOwner::kNic);
  EXPECT_EQ(efa->host, "node1");
  EXPECT_TRUE(efa->cumulative);
  EXPECT_EQ(efa->unit, "bytes");
  EXPECT_EQ(efa->time.size(), 12u);
  EXPECT_TRUE(std::is_sorted(efa->time.begin(), efa->time.end()));
  EXPECT_EQ(efa->value.back(), 5'000'000.0);
  // Ticks are about 2 ms apart but a loaded machine can stretch one: no gap detection
  // here, except where the gap is the point.
  model::RateOptions no_gaps;
  no_gaps.max_gap = 1'000'000'000;
  model::CounterRates efa_rates = model::RatesOf(*efa, no_gaps);
  EXPECT_EQ(efa_rates.total, 5'000'000.0);
  EXPECT_EQ(efa_rates.unit, "bytes");
  for (double r : efa_rates.rate) EXPECT_GE(r, 0.0);

  const model::CounterSeries* ib = FindSeries(t, "ib.port_xmit_data", "mlx5_0:1");
  ASSERT_TRUE(ib);
  EXPECT_EQ(ib->unit, "4 bytes");
  EXPECT_EQ(model::RatesOf(*ib, no_gaps).total, 5'000'000.0);  // 1.25 M units of 4 bytes

  const model::CounterSeries* wrap = FindSeries(t, "ib.rx_write_requests", "mlx5_0:1");
  ASSERT_TRUE(wrap);
  EXPECT_EQ(wrap->width_bits, 32);
  EXPECT_LT(wrap->value[3], wrap->value[2]);  // the raw values wrap
  model::CounterRates wrap_rates = model::RatesOf(*wrap, no_gaps);
  EXPECT_EQ(wrap_rates.wraps, 1u);
  EXPECT_EQ(wrap_rates.resets, 0u);
  EXPECT_EQ(wrap_rates.total, 500.0);

  const model::CounterSeries* stuck = FindSeries(t, "ib.port_xmit_data", "mlx4_0:1");
  ASSERT_TRUE(stuck);
  EXPECT_TRUE(stuck->saturates);
  EXPECT_EQ(stuck->width_bits, 32);
  EXPECT_EQ(model::RatesOf(*stuck, no_gaps).stuck, 8u);  // every interval after it saturated
  EXPECT_TRUE(AnyNoteHas(t.notes, "is at its maximum"));

  const model::CounterSeries* wide = FindSeries(t, "ib.port_rcv_data", "mlx4_0:1");
  ASSERT_TRUE(wide);
  EXPECT_EQ(wide->width_bits, 64);  // redefined when 5e9 was read
  EXPECT_FALSE(wide->saturates);
  EXPECT_TRUE(AnyNoteHas(t.notes, "taken as a 64-bit counter"));
  EXPECT_EQ(model::RatesOf(*wide, no_gaps).total, 20'000'000'000.0);

  // The removed RoCE port: samples before and after, a gone and a back event, and the
  // restart from zero seen as a reset.
  const model::CounterSeries* roce = FindSeries(t, "roce.port_rcv_data", "mlx5_1:1");
  ASSERT_TRUE(roce);
  EXPECT_EQ(roce->time.size(), 12u - 2u);  // two ticks while it was away
  EXPECT_TRUE(AnyNoteHas(t.notes, "mlx5_1:1 went away"));
  EXPECT_TRUE(AnyNoteHas(t.notes, "mlx5_1:1 is back"));
  model::CounterRates roce_rates = model::RatesOf(*roce, no_gaps);
  EXPECT_EQ(roce_rates.resets, 1u);
  EXPECT_EQ(roce_rates.total, 1000.0 * 4 + 30.0 * 4);  // before, then 30 counted from zero
  // With a gap limit below the 110+ ms absence, the absence is a gap instead.
  model::RateOptions gaps;
  gaps.max_gap = 60'000'000;
  model::CounterRates roce_gap = model::RatesOf(*roce, gaps);
  EXPECT_EQ(roce_gap.gaps, 1u);
  EXPECT_EQ(roce_gap.total, 1000.0 * 4 + 20.0 * 4);

  const model::CounterSeries* rate = FindSeries(t, "ib.link_rate", "mlx5_0:1");
  ASSERT_TRUE(rate);
  EXPECT_FALSE(rate->cumulative);
  EXPECT_EQ(rate->unit, "bits/s");
  EXPECT_EQ(rate->value.front(), 400e9);
  const model::CounterSeries* eth_rate = FindSeries(t, "net.link_rate", "eth1");
  ASSERT_TRUE(eth_rate);
  EXPECT_EQ(eth_rate->value.front(), 100e9);
  EXPECT_TRUE(AnyNoteHas(t.notes, "sampler: 12 ticks"));
}

TEST(SamplerOnFakeSysfs, ReadsTheSlowGroupAtTheEventsRate) {
  FakeNics fake;
  topo::testing::TempDir out;
  const std::string path = (out.path() / "s.cltrace").string();
  SamplerOptions o = FakeSamplerOptions(fake, path);
  o.nic.only = {"eth1"};
  o.hz = 100;
  o.events_hz = 25;  // every 4th tick
  auto sampler = Sampler::Create(o);
  ASSERT_TRUE(sampler.ok());
  for (int i = 0; i < 8; ++i) (*sampler)->TickNow(i % 4 == 0);
  (*sampler)->Stop();
  auto t = importers::ImportNativeTrace(path);
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(FindSeries(*t, "net.tx_bytes", "eth1")->time.size(), 9u);
  EXPECT_EQ(FindSeries(*t, "net.tx_errors", "eth1")->time.size(), 3u);  // ticks 0, 4 and the last
}

TEST(SamplerOnFakeSysfs, WithoutNvmlThereIsANoteAndNoError) {
  FakeNics fake;
  topo::testing::TempDir out;
  SamplerOptions o = FakeSamplerOptions(fake, (out.path() / "s.cltrace").string());
  o.nics = false;
  o.gpus = true;
  o.nvml_library = "libcommlens-test-no-such-nvml.so.1";
  auto sampler = Sampler::Create(o);
  ASSERT_TRUE(sampler.ok()) << sampler.status().message();
  EXPECT_EQ((*sampler)->devices(), 0u);
  EXPECT_TRUE(AnyNoteHas((*sampler)->notes(), "no GPU metrics: NVML cannot be loaded"));
  SamplerReport report = (*sampler)->Stop();
  EXPECT_EQ(report.values, 0u);
  auto t = importers::ImportNativeTrace(o.output_path);
  ASSERT_TRUE(t.ok());
  EXPECT_TRUE(t->counters.empty());
  EXPECT_TRUE(AnyNoteHas(t->notes, "NVML cannot be loaded"));
}

TEST(SamplerOptionsCheck, RefusesRatesOutOfRangeAndNamesTheFile) {
  SamplerOptions o;
  o.nics = o.gpus = false;
  o.hz = 2000;
  EXPECT_FALSE(Sampler::Create(o).ok());
  o.hz = 0;
  EXPECT_FALSE(Sampler::Create(o).ok());
  EXPECT_EQ(SamplesFileName("1234", "node-7.cluster"), "1234.node-7.cluster.samples.cltrace");
  EXPECT_EQ(SamplesFileName("a/b", "h h"), "a_b.h_h.samples.cltrace");
  topo::testing::TempDir out;
  o.hz = 10;
  o.output_dir = (out.path() / "run1").string();
  o.job_id = "77";
  o.hostname = "hostA";
  auto s = Sampler::Create(o);
  ASSERT_TRUE(s.ok()) << s.status().message();
  EXPECT_EQ((*s)->path(), (out.path() / "run1" / "77.hostA.samples.cltrace").string());
}


}  // namespace
}  // namespace commlens::recorder::sampler
