// The native importer on sampler records (format 1.1), built record by record: series,
// their redefinition, events and stats as notes, dropped values, and bad records.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "importers/native/native_importer.h"
#include "native_format/format.h"
#include "native_format/record_writer.h"

namespace commlens::importers {
namespace {

namespace nf = native_format;
using model::ImportIssue;

class SamplesBuilder {
 public:
  explicit SamplesBuilder(nf::Writer writer = nf::Writer::kSampler) {
    w_.AppendFileHeader();
    nf::ProcessRecord p{};
    p.global_rank = writer == nf::Writer::kSampler ? -1 : 3;
    p.hostname = Str("nodeA");
    p.plugin_version = Str("commlens test sampler");
    p.writer = static_cast<uint32_t>(writer);
    w_.Append(nf::RecordType::kProcess, p);
  }
  uint32_t Str(const std::string& s) {
    w_.AppendString(next_, s);
    return next_++;
  }
  void Def(uint32_t id, const std::string& name, const std::string& unit, uint8_t width, uint8_t flags,
           nf::CounterOwnerCode owner = nf::CounterOwnerCode::kNic) {
    nf::CounterDefRecord d{};
    d.series = id;
    d.name = Str(name);
    d.unit = Str(unit);
    d.device = Str("mlx5_0:1");
    d.host = Str("nodeA");
    d.owner = static_cast<uint8_t>(owner);
    d.device_kind = static_cast<uint8_t>(nf::DeviceKind::kInfiniBand);
    d.width_bits = width;
    d.flags = flags;
    w_.Append(nf::RecordType::kCounterDef, d);
  }
  void Samples(int64_t t, uint32_t first, std::vector<uint64_t> v, int extra_bytes = 0) {
    nf::CounterSamplesRecord h{t, first, static_cast<uint32_t>(v.size())};
    v.resize(v.size() + static_cast<size_t>(extra_bytes) / 8 + 1);
    w_.Append(nf::RecordType::kCounterSamples, &h, sizeof(h), v.data(), static_cast<uint32_t>(8 * h.count + extra_bytes));
  }
  void Event(nf::SamplerEventKind what, const std::string& text) {
    nf::SamplerEventRecord e{};
    e.time_ns = 5;
    e.what = static_cast<uint32_t>(what);
    e.text = Str(text);
    w_.Append(nf::RecordType::kSamplerEvent, e);
  }
  template <typename T>
  void Raw(nf::RecordType type, const T& payload) { w_.Append(type, payload); }
  std::string Write() {
    const std::string path = (std::filesystem::temp_directory_path() /
                              ("sampler_records_test_" + std::to_string(::getpid()) + "_" + std::to_string(files_++) + ".cltrace"))
                                 .string();
    std::ofstream(path, std::ios::binary).write(reinterpret_cast<const char*>(w_.bytes().data()),
                                                static_cast<std::streamsize>(w_.size()));
    return path;
  }

 private:
  nf::RecordWriter w_;
  uint32_t next_ = 1;
  static inline int files_ = 0;
};

TEST(SamplerRecords, BecomeHostCounterSeriesWithNotes) {
  SamplesBuilder b;
  b.Def(0, "ib.port_xmit_data", "4 bytes", 32, nf::kCounterFlagCumulative | nf::kCounterFlagSaturates);
  b.Def(1, "ib.link_rate", "bits/s", 0, 0);
  b.Samples(1000, 0, {10, 400'000'000'000});
  b.Samples(2000, 0, {20});
  // The width turned out wrong: redefined as 64 bits.
  b.Def(0, "ib.port_xmit_data", "4 bytes", 64, nf::kCounterFlagCumulative);
  b.Samples(3000, 0, {5'000'000'000, 400'000'000'000});
  b.Event(nf::SamplerEventKind::kDeviceGone, "mlx5_0:1 went away");
  nf::SamplerStatsRecord s{};
  s.time_ns = 2'000'000'000;
  s.start_ns = 1'000'000'000;
  s.period_ns = 100'000'000;
  s.ticks = 10;
  s.values = 30;
  s.dropped_values = 7;
  s.sampler_cpu_ns = 500'000;
  b.Raw(nf::RecordType::kSamplerStats, s);
  nf::EndRecord end{4000, 0, 0};
  b.Raw(nf::RecordType::kEnd, end);

  auto t = ImportNativeTrace(b.Write());
  ASSERT_TRUE(t.ok()) << t.status().message();
  EXPECT_TRUE(t->host_counters_only);
  EXPECT_EQ(t->rank, -1);
  EXPECT_EQ(t->hostname, "nodeA");
  EXPECT_EQ(t->comms.size(), 0u);
  ASSERT_EQ(t->counters.size(), 2u);
  const model::CounterSeries& data = t->counters[0];
  EXPECT_EQ(data.name, "ib.port_xmit_data");
  EXPECT_EQ(data.unit, "4 bytes");
  EXPECT_EQ(data.owner, model::CounterOwner::kNic);
  EXPECT_EQ(data.device, "mlx5_0:1");
  EXPECT_EQ(data.host, "nodeA");
  EXPECT_TRUE(data.cumulative);
  EXPECT_EQ(data.width_bits, 64);
  EXPECT_FALSE(data.saturates);
  EXPECT_EQ(data.time, (std::vector<model::TimeNs>{1000, 2000, 3000}));
  EXPECT_EQ(data.value, (std::vector<double>{10, 20, 5e9}));
  const model::CounterSeries& rate = t->counters[1];
  EXPECT_FALSE(rate.cumulative);
  EXPECT_EQ(rate.value, (std::vector<double>{4e11, 4e11}));
  EXPECT_EQ(t->stats.count(ImportIssue::kDroppedByRecorder), 7u);
  EXPECT_EQ(t->stats.count(ImportIssue::kBadRecord), 0u);
  auto has = [&](const std::string& text) {
    for (const std::string& n : t->notes)
      if (n.find(text) != std::string::npos) return true;
    return false;
  };
  EXPECT_TRUE(has("device gone at 5 ns: mlx5_0:1 went away"));
  EXPECT_TRUE(has("sampler: 10 ticks at 10 Hz"));
  EXPECT_TRUE(has("50.0 us CPU per tick"));
  EXPECT_FALSE(has("no end record"));
}

TEST(SamplerRecords, BadRecordsAreCountedAndSkipped) {
  SamplesBuilder b;
  b.Def(0, "net.tx_bytes", "bytes", 64, nf::kCounterFlagCumulative);
  b.Samples(1000, 0, {1});
  b.Samples(2000, 0, {2}, 8);     // a payload longer than its count says
  b.Samples(3000, 0, {3, 4});     // series 1 was never defined: nothing of it is kept
  b.Samples(4000, 7, {9});        // undefined
  b.Raw(nf::RecordType::kCounterDef, uint32_t{5});  // shorter than a definition
  b.Samples(5000, 0, {5});
  auto t = ImportNativeTrace(b.Write());
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(t->stats.count(ImportIssue::kBadRecord), 4u);
  ASSERT_EQ(t->counters.size(), 1u);
  EXPECT_EQ(t->counters[0].value, (std::vector<double>{1, 5}));
  bool no_end = false;
  for (const std::string& n : t->notes) no_end = no_end || n.find("the sampler was stopped without finishing") != std::string::npos;
  EXPECT_TRUE(no_end);
}

TEST(SamplerRecords, InAPluginTraceTheCountersBelongToTheRank) {
  SamplesBuilder b(nf::Writer::kNcclPlugin);
  b.Def(0, "gpu.power", "mW", 0, 0, nf::CounterOwnerCode::kGpu);
  b.Samples(1000, 0, {250'000});
  auto t = ImportNativeTrace(b.Write());
  ASSERT_TRUE(t.ok());
  EXPECT_FALSE(t->host_counters_only);
  EXPECT_EQ(t->rank, 3);
  ASSERT_EQ(t->counters.size(), 1u);
  EXPECT_EQ(t->counters[0].owner, model::CounterOwner::kDevice);
}

}  // namespace
}  // namespace commlens::importers
