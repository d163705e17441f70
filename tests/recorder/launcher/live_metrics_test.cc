// Live metrics: a samples file followed while it grows (records cut in the middle wait
// for the rest), rates over the last second of samples by the analysis rules, gauges,
// stale devices left out, the age of each rank's last collective from the last progress
// its trace's newest alive mark carries (not from the file's times: the plugin writes a
// mark every second, stuck or not), and the text file written whole and removed at the
// end.
#include "recorder/launcher/live_metrics.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "recorder/launcher/output_names.h"
#include "recorder/launcher/samples_tail.h"
#include "native_format/record_writer.h"
#include "topo/fake_machine.h"

namespace commlens::recorder::launcher {
namespace {

namespace fs = std::filesystem;
namespace nf = native_format;
using topo::testing::TempDir;

constexpr int64_t kT0 = 1'700'000'000'000'000'000;
constexpr int64_t kTick = 100'000'000;  // 10 Hz

// A sampler file as the sampler writes it, built record by record.
class SamplesFile {
 public:
  SamplesFile() {
    w_.AppendFileHeader();
    nf::ProcessRecord p{};
    p.global_rank = -1;
    p.hostname = Str("node1");
    p.writer = static_cast<uint32_t>(nf::Writer::kSampler);
    w_.Append(nf::RecordType::kProcess, p);
  }
  uint32_t Str(const std::string& s) {
    w_.AppendString(next_, s);
    return next_++;
  }
  void Def(uint32_t id, const std::string& name, const std::string& unit, const std::string& device,
           nf::DeviceKind kind, bool cumulative) {
    nf::CounterDefRecord d{};
    d.series = id;
    d.name = Str(name);
    d.unit = Str(unit);
    d.device = Str(device);
    d.host = Str("node1");
    d.owner = static_cast<uint8_t>(kind == nf::DeviceKind::kGpu ? nf::CounterOwnerCode::kGpu
                                                                : nf::CounterOwnerCode::kNic);
    d.device_kind = static_cast<uint8_t>(kind);
    d.width_bits = cumulative ? 64 : 0;
    d.flags = cumulative ? nf::kCounterFlagCumulative : 0;
    w_.Append(nf::RecordType::kCounterDef, d);
  }
  void Samples(int64_t t, uint32_t first, std::vector<uint64_t> v) {
    nf::CounterSamplesRecord h{t, first, static_cast<uint32_t>(v.size())};
    w_.Append(nf::RecordType::kCounterSamples, &h, sizeof(h), v.data(),
              static_cast<uint32_t>(8 * v.size()));
  }
  const std::vector<uint8_t>& bytes() const { return w_.bytes(); }

 private:
  nf::RecordWriter w_;
  uint32_t next_ = 1;
};

// Five seconds at 10 Hz: an InfiniBand port sending 1 MB/s (port_xmit_data counts 4-byte
// units), an interface receiving 10 MB/s, a GPU at 55% drawing 300 W and sending 10 MiB/s
// over NVLink, and a RoCE port that went away after the first second.
SamplesFile FiveSeconds() {
  SamplesFile f;
  f.Def(0, "ib.port_xmit_data", "4 bytes", "mlx5_0:1", nf::DeviceKind::kInfiniBand, true);
  f.Def(1, "net.rx_bytes", "bytes", "eth0", nf::DeviceKind::kNetdev, true);
  f.Def(2, "gpu.utilization", "percent", "0", nf::DeviceKind::kGpu, false);
  f.Def(3, "gpu.power", "mW", "0", nf::DeviceKind::kGpu, false);
  f.Def(4, "gpu.nvlink_tx", "KiB", "0", nf::DeviceKind::kGpu, true);
  f.Def(5, "roce.port_rcv_data", "4 bytes", "mlx5_1:1", nf::DeviceKind::kRoce, true);
  for (uint64_t k = 0; k <= 50; ++k) {
    const int64_t t = kT0 + static_cast<int64_t>(k) * kTick;
    f.Samples(t, 0, {25'000 * k, 1'000'000 * k});
    f.Samples(t, 2, {55, 300'000, 1024 * k});
    if (k <= 10) f.Samples(t, 5, {k});
  }
  return f;
}

void Write(const fs::path& p, const uint8_t* data, size_t n, bool append) {
  std::ofstream out(p, std::ios::binary | (append ? std::ios::app : std::ios::trunc));
  out.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(n));
}

std::vector<std::string> Lines(const std::string& text, const std::string& prefix) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);)
    if (line.rfind(prefix, 0) == 0) out.push_back(line);
  return out;
}

TEST(SamplesTail, FollowsAFileThatGrowsInPieces) {
  TempDir dir;
  const fs::path path = dir.path() / "j.node1.samples.cltrace";
  SamplesFile f = FiveSeconds();
  SamplesTail tail(path.string(), 1'000'000'000);
  ASSERT_TRUE(tail.Poll().ok());  // no file yet: nothing, no error
  EXPECT_TRUE(tail.series().empty());
  // The file appears in three pieces, cut inside the header and inside a record.
  const auto& b = f.bytes();
  const size_t cuts[] = {20, b.size() / 2 + 7, b.size()};
  size_t done = 0;
  for (size_t cut : cuts) {
    Write(path, b.data() + done, cut - done, done > 0);
    done = cut;
    ASSERT_TRUE(tail.Poll().ok());
  }
  ASSERT_EQ(tail.series().size(), 6u);
  const SamplesTail::Series& ib = tail.series().at(0);
  EXPECT_EQ(ib.name, "ib.port_xmit_data");
  EXPECT_EQ(ib.unit, "4 bytes");
  EXPECT_EQ(ib.device, "mlx5_0:1");
  EXPECT_TRUE(ib.cumulative);
  // One second of history and the sample before it.
  ASSERT_EQ(ib.samples.size(), 11u);
  EXPECT_EQ(ib.samples.front().first, kT0 + 40 * kTick);
  EXPECT_EQ(ib.samples.back().first, kT0 + 50 * kTick);
  EXPECT_EQ(tail.last_sample_ns(), kT0 + 50 * kTick);
  EXPECT_EQ(tail.series().at(5).samples.back().first, kT0 + 10 * kTick);

  // A file that is not a native trace stops the tail with an error.
  const fs::path junk = dir.path() / "junk";
  std::ofstream(junk) << std::string(64, 'x');
  SamplesTail bad(junk.string(), 1'000'000'000);
  EXPECT_FALSE(bad.Poll().ok());
  EXPECT_FALSE(bad.Poll().ok());
}

class LiveMetricsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    samples_ = dir_.path() / "run" / "4242.3.node1.samples.cltrace";
    fs::create_directories(samples_.parent_path());
    SamplesFile f = FiveSeconds();
    Write(samples_, f.bytes().data(), f.bytes().size(), false);
  }
  LiveMetricsOptions Options() {
    LiveMetricsOptions o;
    o.textfile = (dir_.path() / "commlens.prom").string();
    o.samples_path = samples_.string();
    o.trace_dir = samples_.parent_path().string();
    o.job_id = "4242.3";
    o.host = "node1";
    o.start_realtime_ns = kT0;
    return o;
  }
  // A plugin trace as the plugin leaves it after a flush at |flush_ns|, whose alive mark
  // says the rank last progressed at |progress_ns|, then |tail| (the bytes of what came
  // after: an End record, a write under way).
  fs::path Trace(const std::string& name, int64_t flush_ns, int64_t progress_ns,
                 const std::vector<uint8_t>& tail = {}) {
    const fs::path p = samples_.parent_path() / name;
    nf::RecordWriter w;
    w.AppendFileHeader();
    w.Append(nf::RecordType::kProcess, nf::ProcessRecord{});
    w.Append(nf::RecordType::kOp, nf::OpRecord{});
    w.Append(nf::RecordType::kMark, nf::MarkRecord{flush_ns, static_cast<uint32_t>(nf::MarkKind::kAlive), 0,
                                                   progress_ns});
    Write(p, w.bytes().data(), w.size(), false);
    Write(p, tail.data(), tail.size(), true);
    Touch(p, flush_ns);
    return p;
  }
  static void Touch(const fs::path& p, int64_t mtime_ns) {
    timespec times[2] = {{mtime_ns / 1'000'000'000, mtime_ns % 1'000'000'000},
                         {mtime_ns / 1'000'000'000, mtime_ns % 1'000'000'000}};
    ASSERT_EQ(utimensat(AT_FDCWD, p.c_str(), times, 0), 0);
  }
  static std::vector<uint8_t> EndRecord(int64_t t) {
    nf::RecordWriter w;
    w.Append(nf::RecordType::kEnd, nf::EndRecord{t, 0, 0});
    return w.bytes();
  }

  TempDir dir_;
  fs::path samples_;
};

TEST_F(LiveMetricsTest, RatesGaugesAndAges) {
  const int64_t now = kT0 + 60'000'000'000;
  const int64_t flushed = now - 300'000'000;  // every live file's last flush
  // Stuck for 7.25 s: its flushes go on, their marks say when it last progressed.
  Trace(PluginTraceFileName("4242.3", 0, "node1", 100, 0), flushed, now - 7'250'000'000);
  Trace(PluginTraceFileName("4242.3", 1, "node1", 101, 0), now - 30'000'000'000, now - 30'000'000'000);
  Trace(PluginTraceFileName("4242.3", 1, "node1", 101, 1), flushed,
        now - 500'000'000);  // its second session: newest counts
  Trace(PluginTraceFileName("4242.3", 2, "node2", 102, 0), flushed, now - 1);  // another host's
  Trace(PluginTraceFileName("4242.2", 3, "node1", 103, 0), flushed, now - 1);  // another step's
  Trace(PluginTraceFileName("4242.3", 4, "node1", 104, 0), kT0 - 10'000'000'000,
        kT0 - 10'000'000'000);  // before the start
  // Finalized: nothing left to wait for, no age.
  Trace(PluginTraceFileName("4242.3", 5, "node1", 105, 0), flushed, now - 20'000'000'000, EndRecord(flushed));
  // With the CUPTI tracer, files whose process has no communicator (marks without
  // progress): a helper of rank 6 beside the rank's own, newer than it; rank 7, a gloo
  // rank (or one past its last finalize): no age.
  Trace(PluginTraceFileName("4242.3", 6, "node1", 106, 0), flushed - 100'000'000, now - 2'000'000'000);
  Trace(PluginTraceFileName("4242.3", 6, "node1", 116, 0), flushed, 0);
  Trace(PluginTraceFileName("4242.3", 7, "node1", 107, 0), flushed, 0);

  LiveMetrics metrics(Options());
  const std::string text = metrics.Render(now);
  const std::string labels = "job=\"4242.3\",host=\"node1\"";
  EXPECT_EQ(Lines(text, "commlens_nic_transmit_bytes_per_second"),
            (std::vector<std::string>{"commlens_nic_transmit_bytes_per_second{" + labels +
                                      ",device=\"mlx5_0:1\",kind=\"ib\"} 1000000"}))
      << text;
  EXPECT_EQ(Lines(text, "commlens_nic_receive_bytes_per_second"),
            (std::vector<std::string>{
                "commlens_nic_receive_bytes_per_second{" + labels +
                ",device=\"eth0\",kind=\"net\"} 10000000"}));  // mlx5_1 is gone: left out
  EXPECT_EQ(
      Lines(text, "commlens_gpu_utilization_ratio"),
      (std::vector<std::string>{"commlens_gpu_utilization_ratio{" + labels + ",gpu=\"0\"} 0.55"}));
  EXPECT_EQ(Lines(text, "commlens_gpu_power_watts"),
            (std::vector<std::string>{"commlens_gpu_power_watts{" + labels + ",gpu=\"0\"} 300"}));
  EXPECT_EQ(Lines(text, "commlens_gpu_nvlink_transmit_bytes_per_second"),
            (std::vector<std::string>{"commlens_gpu_nvlink_transmit_bytes_per_second{" + labels +
                                      ",gpu=\"0\"} 10485760"}));
  EXPECT_EQ(Lines(text, "commlens_sampler_last_sample_timestamp_seconds"),
            (std::vector<std::string>{"commlens_sampler_last_sample_timestamp_seconds{" + labels +
                                      "} 1700000005"}));
  EXPECT_EQ(Lines(text, "commlens_last_collective_age_seconds"),
            (std::vector<std::string>{
                "commlens_last_collective_age_seconds{" + labels + ",rank=\"0\"} 7.25",
                "commlens_last_collective_age_seconds{" + labels + ",rank=\"1\"} 0.5",
                "commlens_last_collective_age_seconds{" + labels + ",rank=\"6\"} 2"}));
  EXPECT_NE(text.find("# TYPE commlens_last_collective_age_seconds gauge\n"), std::string::npos);
  EXPECT_NE(text.find("# HELP commlens_nic_transmit_bytes_per_second "), std::string::npos);
  EXPECT_EQ(text.find("commlens_gpu_memory_utilization_ratio"),
            std::string::npos);  // no such series: no family
}

// Between two flushes the file may end in a write under way: the last mark read holds.
// A file with no flush yet, or from a plugin before format 1.3 (no progress in its
// marks), gives no age rather than a wrong one.
TEST_F(LiveMetricsTest, AgesBetweenFlushesAndWithoutProgress) {
  const int64_t now = kT0 + 60'000'000'000;
  nf::RecordWriter next;
  next.Append(nf::RecordType::kOp, nf::OpRecord{});
  next.Append(nf::RecordType::kMark,
              nf::MarkRecord{now + 900'000'000, static_cast<uint32_t>(nf::MarkKind::kAlive), 0, now + 500'000'000});
  const size_t half = next.size() / 2;
  const fs::path rank0 = Trace(PluginTraceFileName("4242.3", 0, "node1", 100, 0), now, now - 3'000'000'000);

  nf::RecordWriter started;  // header and process record: no flush yet
  started.AppendFileHeader();
  started.Append(nf::RecordType::kProcess, nf::ProcessRecord{});
  Write(samples_.parent_path() / PluginTraceFileName("4242.3", 1, "node1", 101, 0), started.bytes().data(),
        started.size(), false);
  nf::RecordWriter old = started;  // a 1.2 plugin's alive mark: 16 bytes, no progress
  const nf::MarkRecord mark{now, static_cast<uint32_t>(nf::MarkKind::kAlive), 0, 0};
  old.Append(nf::RecordType::kMark, &mark, nf::kMarkRecordSize10);
  Write(samples_.parent_path() / PluginTraceFileName("4242.3", 2, "node1", 102, 0), old.bytes().data(), old.size(),
        false);

  LiveMetrics metrics(Options());
  const std::string age = "commlens_last_collective_age_seconds{job=\"4242.3\",host=\"node1\",rank=";
  EXPECT_EQ(Lines(metrics.Render(now), "commlens_last_collective_age_seconds"),
            (std::vector<std::string>{age + "\"0\"} 3"}));
  Write(rank0, next.bytes().data(), half, true);  // the next flush, half written
  EXPECT_EQ(Lines(metrics.Render(now + 1'000'000'000), "commlens_last_collective_age_seconds"),
            (std::vector<std::string>{age + "\"0\"} 4"}));
  Write(rank0, next.bytes().data() + half, next.size() - half, true);
  EXPECT_EQ(Lines(metrics.Render(now + 1'000'000'000), "commlens_last_collective_age_seconds"),
            (std::vector<std::string>{age + "\"0\"} 0.5"}));
}

TEST_F(LiveMetricsTest, TheFileIsReplacedWholeAndRemovedAtTheEnd) {
  LiveMetricsOptions o = Options();
  LiveMetrics once(o);
  ASSERT_TRUE(once.Update(kT0 + 6'000'000'000).ok());
  std::ifstream in(o.textfile);
  std::stringstream written;
  written << in.rdbuf();
  EXPECT_NE(written.str().find("commlens_nic_transmit_bytes_per_second{"), std::string::npos);
  for (const auto& e : fs::directory_iterator(dir_.path()))
    EXPECT_EQ(e.path().extension(), e.is_directory() ? "" : ".prom")
        << e.path();  // no temporary file left

  o.interval_ms = 20;
  LiveMetrics running(o);
  running.Start();
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  EXPECT_TRUE(fs::exists(o.textfile));
  running.Stop();
  EXPECT_FALSE(fs::exists(o.textfile));
  EXPECT_EQ(running.first_error(), "");

  o.textfile = (dir_.path() / "no-such-folder" / "x.prom").string();
  LiveMetrics nowhere(o);
  Status s = nowhere.Update(kT0);
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("no-such-folder"), std::string::npos);
}

TEST(Prometheus, LabelsAreEscaped) {
  EXPECT_EQ(PrometheusLabel("a\"b\\c\nd"), "a\\\"b\\\\c\\nd");
  EXPECT_EQ(PrometheusLabel("mlx5_0:1"), "mlx5_0:1");
}

}  // namespace
}  // namespace commlens::recorder::launcher
