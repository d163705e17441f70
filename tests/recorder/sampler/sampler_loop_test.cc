// The sampling thread: absolute deadlines (no drift), periodic flushes while it runs,
// its measured cost, and the bounded buffer when the disk does not keep up.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <thread>

#include "importers/native/native_importer.h"
#include "recorder/sampler/fake_nics.h"
#include "recorder/sampler/sampler.h"

namespace commlens::recorder::sampler {
namespace {

using testing::FakeNics;

SamplerOptions Options(const FakeNics& fake, const std::string& out, double hz) {
  SamplerOptions o;
  o.output_path = out;
  o.hostname = "node1";
  o.job_id = "loop-test";
  o.nic.sysfs_root = fake.root();
  o.gpus = false;
  o.hz = hz;
  return o;
}

const model::CounterSeries* FindSeries(const model::RankTrace& t, const std::string& name) {
  for (const model::CounterSeries& s : t.counters)
    if (s.name == name) return &s;
  return nullptr;
}

TEST(SamplerLoop, TicksOnAFixedGridAndFlushesWhileRunning) {
  FakeNics fake;
  topo::testing::TempDir out;
  const std::string path = (out.path() / "s.cltrace").string();
  SamplerOptions o = Options(fake, path, 200);
  o.nic.only = {"eth1"};
  o.flush_interval_ms = 100;
  auto sampler = Sampler::Create(o);
  ASSERT_TRUE(sampler.ok()) << sampler.status().message();
  const auto created_size = std::filesystem::file_size(path);
  (*sampler)->Start();
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  EXPECT_GT(std::filesystem::file_size(path), created_size);  // flushed while running
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  SamplerReport r = (*sampler)->Stop();

  // Every deadline of the run was either taken or counted as missed.
  const double periods = static_cast<double>(r.wall_ns) / 5e6;
  EXPECT_NEAR(static_cast<double>(r.ticks - 1 + r.missed_ticks), periods, 3.0)
      << r.ticks << " ticks, " << r.missed_ticks << " missed over " << r.wall_ns << " ns";
  EXPECT_GT(r.sampler_cpu_ns, 0u);
  EXPECT_GT(r.CpuNsPerTick(), 0.0);

  auto t = importers::ImportNativeTrace(path);
  ASSERT_TRUE(t.ok()) << t.status().message();
  const model::CounterSeries* s = FindSeries(*t, "net.tx_bytes");
  ASSERT_TRUE(s);
  ASSERT_GE(s->time.size(), 50u);
  // Readings sit on a grid of 5 ms: their phase on it (the time modulo 5 ms) is the same
  // through the run, in the first half as in the last (no drift). Measured against the
  // readings' own median phase, not the first reading's: under load the first tick may be
  // late, and then every tick is late by the same amount.
  const double period = 5e6;
  const size_t n = s->time.size() - 1;  // the last reading is Stop's, off the grid
  std::vector<double> phase;
  for (size_t i = 0; i < n; ++i) phase.push_back(std::fmod(static_cast<double>(s->time[i] - s->time[0]), period));
  auto median = [](std::vector<double> v) {
    std::nth_element(v.begin(), v.begin() + static_cast<ptrdiff_t>(v.size() / 2), v.end());
    return v[v.size() / 2];
  };
  // The phase most readings share: the one with the smallest median circular distance.
  auto circular = [&](double a, double b) { return std::min(std::abs(a - b), period - std::abs(a - b)); };
  double grid = phase[0], best = 1e18;
  for (double candidate : phase) {
    std::vector<double> d;
    for (double p : phase) d.push_back(circular(p, candidate));
    if (const double m = median(d); m < best) best = m, grid = candidate;
  }
  std::vector<double> off_first, off_last;
  for (size_t i = 0; i < n; ++i) (i < n / 2 ? off_first : off_last).push_back(circular(phase[i], grid));
  EXPECT_LT(median(off_first), 1e6);
  EXPECT_LT(median(off_last), 1e6);
  for (size_t i = 1; i < s->time.size(); ++i) EXPECT_GT(s->time[i], s->time[i - 1]);
}

TEST(SamplerLoop, AtOneKilohertzReportsItsCost) {
  FakeNics fake;
  topo::testing::TempDir out;
  const std::string path = (out.path() / "s.cltrace").string();
  SamplerOptions o = Options(fake, path, 1000);
  auto sampler = Sampler::Create(o);
  ASSERT_TRUE(sampler.ok());
  (*sampler)->Start();
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  SamplerReport r = (*sampler)->Stop();
  EXPECT_NEAR(static_cast<double>(r.ticks - 1 + r.missed_ticks), static_cast<double>(r.wall_ns) / 1e6, 5.0);
  EXPECT_EQ(r.dropped_values, 0u);
  std::printf("1 kHz on the fake tree (%u devices, %u series): %.1f us CPU per tick, %.2f%% of a core, "
              "max tick %.1f us, max late %.1f us, %llu missed\n",
              r.devices, r.series, r.CpuNsPerTick() / 1e3, 100 * r.CpuShare(), r.max_tick_ns / 1e3,
              r.max_late_ns / 1e3, static_cast<unsigned long long>(r.missed_ticks));
  // Where the time went: every device read at every tick, its cost summed; the file says
  // it too, as one note per device.
  ASSERT_EQ(r.sources.size(), r.devices);
  uint64_t read_ns = 0;
  for (const SamplerReport::SourceCost& c : r.sources) {
    EXPECT_EQ(c.readings, r.ticks) << c.name;
    EXPECT_GT(c.total_ns, 0u) << c.name;
    EXPECT_GE(c.total_ns, c.max_ns);
    read_ns += c.total_ns;
  }
  EXPECT_LE(read_ns, static_cast<uint64_t>(r.wall_ns));  // inside the run
  auto t = importers::ImportNativeTrace(path);
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(t->stats.total(), 0u);
  size_t cost_notes = 0;
  for (const std::string& note : t->notes) cost_notes += note.find("on average over") != std::string::npos;
  EXPECT_EQ(cost_notes, r.sources.size());
}

// The file is a pipe that nobody reads for a while: the writer thread blocks, the buffer
// fills to its bound, and samples are dropped and counted, while ticks go on.
TEST(SamplerLoop, DropsAndCountsSamplesWhenTheDiskFallsBehind) {
  FakeNics fake;
  topo::testing::TempDir out;
  const std::string fifo = (out.path() / "pipe").string();
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  int reader = open(fifo.c_str(), O_RDONLY | O_NONBLOCK);
  ASSERT_GE(reader, 0);
  SamplerOptions o = Options(fake, fifo, 1000);
  o.buffer_bytes = 64 << 10;
  o.flush_interval_ms = 5;
  auto sampler = Sampler::Create(o);
  ASSERT_TRUE(sampler.ok()) << sampler.status().message();
  (*sampler)->Start();
  std::this_thread::sleep_for(std::chrono::milliseconds(400));

  // Now drain the pipe to the end and stop.
  fcntl(reader, F_SETFL, fcntl(reader, F_GETFL) & ~O_NONBLOCK);
  std::string bytes;
  std::thread drain([&] {
    char buf[1 << 16];
    for (ssize_t n; (n = read(reader, buf, sizeof(buf))) != 0;)
      if (n > 0) bytes.append(buf, static_cast<size_t>(n));
  });
  SamplerReport r = (*sampler)->Stop();
  drain.join();
  close(reader);
  EXPECT_GT(r.dropped_values, 0u);
  EXPECT_GT(r.ticks, 100u);  // sampling went on regardless

  const std::string copy = (out.path() / "copy.cltrace").string();
  std::ofstream(copy, std::ios::binary) << bytes;
  auto t = importers::ImportNativeTrace(copy);
  ASSERT_TRUE(t.ok()) << t.status().message();
  EXPECT_EQ(t->stats.count(model::ImportIssue::kDroppedByRecorder), r.dropped_values);
  EXPECT_FALSE(t->counters.empty());
}

}  // namespace
}  // namespace commlens::recorder::sampler
