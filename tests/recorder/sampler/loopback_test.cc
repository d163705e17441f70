// The one check on a real device: the sampler reads the live /sys/class/net/lo at 100 Hz
// while this test sends 200 MB over a loopback TCP connection between two threads; the
// sampled tx_bytes must account for the bytes sent within 1%.
//
// Why the sampled count is a little higher than what was sent: lo counts every packet it
// carries with its IP and TCP headers (20 + 32 bytes with timestamps; not the Ethernet
// header, which eth_type_trans strips before lo counts), data segments and ACKs alike,
// and on lo a segment carries up to 64 KB (MTU 65536 and segmentation offload), so the
// headers add about 0.1%. Other processes' loopback traffic inside the sampled window
// adds the rest, and that is outside the test's reach: CI once counted 2.8 MB more in a
// 0.06 s window (+1.4%). So the check measures that traffic too, in the quiet 100 ms
// before and after the transfer, and allows the window as much again at the busier of the
// two rates. That noise only ever adds: every attempt must count at least what was sent,
// and the best of up to three attempts must be within 1% plus the ambient allowance.
//
// Also here: the sampler's cost on real sysfs files at 10 Hz and 1 kHz, printed, with a
// check of what it read there.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "model/counter_rates.h"
#include "importers/native/native_importer.h"
#include "recorder/nccl_profiler/clock.h"
#include "recorder/sampler/sampler.h"
#include "topo/fake_machine.h"

namespace commlens::recorder::sampler {
namespace {

constexpr uint64_t kBytes = 200ull << 20;

bool HaveLo() { return std::filesystem::exists("/sys/class/net/lo/statistics/tx_bytes"); }

SamplerOptions LoOptions(const std::string& path, double hz) {
  SamplerOptions o;
  o.output_path = path;
  o.hostname = "loopback-check";
  o.hz = hz;
  o.nic.rdma = false;
  o.nic.include_loopback = true;
  o.nic.only = {"lo"};
  o.gpus = false;
  return o;
}

// Sends |bytes| from one thread to another over 127.0.0.1; returns the bytes written
// (counted from write's results) or 0 on failure.
uint64_t SendOverLoopback(uint64_t bytes) {
  int listener = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof(addr);
  if (bind(listener, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 || listen(listener, 1) != 0 ||
      getsockname(listener, reinterpret_cast<sockaddr*>(&addr), &len) != 0)
    return 0;
  uint64_t received = 0;
  std::thread receiver([&] {
    int c = accept(listener, nullptr, nullptr);
    std::vector<char> buf(1 << 20);
    for (ssize_t n; received < bytes && (n = read(c, buf.data(), buf.size())) > 0;) received += static_cast<uint64_t>(n);
    close(c);
  });
  int s = socket(AF_INET, SOCK_STREAM, 0);
  uint64_t sent = 0;
  if (connect(s, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0) {
    std::vector<char> chunk(1 << 20, 'x');
    while (sent < bytes) {
      ssize_t n = write(s, chunk.data(), std::min<uint64_t>(chunk.size(), bytes - sent));
      if (n <= 0) break;
      sent += static_cast<uint64_t>(n);
    }
  }
  receiver.join();  // every byte has crossed lo when the receiver has read it
  close(s);
  close(listener);
  return received == sent ? sent : 0;
}

// One transfer under a fresh sampler: the bytes sent and what lo counted between the last
// reading before the transfer and the first after it.
struct LoopbackWindow {
  uint64_t sent = 0;
  double counted = 0;
  double ambient = 0;       // what other traffic would add over the window, from the quiet ones
  model::CounterSeries tx;  // lo's tx_bytes over exactly that window
  double Excess() const { return (counted - ambient) / static_cast<double>(sent) - 1; }
};

// lo's byte rate between readings a and b (bytes per ns).
double RateBetween(const model::CounterSeries& tx, size_t a, size_t b) {
  return b > a ? (tx.value[b] - tx.value[a]) / static_cast<double>(tx.time[b] - tx.time[a]) : 0;
}

void MeasureOneTransfer(LoopbackWindow& w) {
  topo::testing::TempDir out;
  const std::string path = (out.path() / "lo.cltrace").string();
  auto sampler = Sampler::Create(LoOptions(path, 100));
  ASSERT_TRUE(sampler.ok()) << sampler.status().message();
  ASSERT_EQ((*sampler)->devices(), 1u);
  (*sampler)->Start();
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  const int64_t before = RealtimeNs();
  w.sent = SendOverLoopback(kBytes);
  const int64_t after = RealtimeNs();
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  SamplerReport report = (*sampler)->Stop();
  ASSERT_EQ(w.sent, kBytes);

  auto t = importers::ImportNativeTrace(path);
  ASSERT_TRUE(t.ok()) << t.status().message();
  const model::CounterSeries* tx = nullptr;
  for (const model::CounterSeries& s : t->counters)
    if (s.name == "net.tx_bytes" && s.device == "lo") tx = &s;
  ASSERT_TRUE(tx);
  // The last reading before the transfer and the first after it.
  size_t first = 0, last = tx->time.size() - 1;
  for (size_t i = 0; i < tx->time.size(); ++i) {
    if (tx->time[i] <= before) first = i;
    if (tx->time[i] >= after) {
      last = i;
      break;
    }
  }
  ASSERT_LT(first, last);
  w.counted = tx->value[last] - tx->value[first];
  const double quiet_rate = std::max(RateBetween(*tx, 0, first), RateBetween(*tx, last, tx->time.size() - 1));
  w.ambient = quiet_rate * static_cast<double>(tx->time[last] - tx->time[first]);
  w.tx = *tx;
  w.tx.time.assign(tx->time.begin() + static_cast<ptrdiff_t>(first), tx->time.begin() + static_cast<ptrdiff_t>(last) + 1);
  w.tx.value.assign(tx->value.begin() + static_cast<ptrdiff_t>(first), tx->value.begin() + static_cast<ptrdiff_t>(last) + 1);
  std::printf("sent %llu bytes in %.3f s; lo counted %.0f over %zu samples at 100 Hz, other traffic at the quiet "
              "windows' rate %.0f: %+.3f%%; sampler %.1f us CPU per tick\n",
              static_cast<unsigned long long>(w.sent), (after - before) / 1e9, w.counted, last - first, w.ambient,
              100.0 * w.Excess(), report.CpuNsPerTick() / 1e3);
}

TEST(LoopbackCheck, SampledTxBytesAccountForTheBytesSent) {
  if (!HaveLo()) GTEST_SKIP() << "no /sys/class/net/lo/statistics";
  constexpr int kAttempts = 3;
  LoopbackWindow best;
  for (int attempt = 0; attempt < kAttempts; ++attempt) {
    LoopbackWindow w;
    ASSERT_NO_FATAL_FAILURE(MeasureOneTransfer(w));
    EXPECT_GE(w.counted, static_cast<double>(w.sent)) << "attempt " << attempt;  // never fewer than sent
    if (attempt == 0 || w.Excess() < best.Excess()) best = std::move(w);
    if (best.Excess() <= 0.01) break;
  }
  EXPECT_LE(best.counted, static_cast<double>(best.sent) * 1.01 + best.ambient)
      << "every one of " << kAttempts << " attempts counted more than 1% over what was sent and other traffic";

  // The rates of the same window add up to the same bytes.
  model::RateOptions no_gaps;
  no_gaps.max_gap = 10'000'000'000;
  EXPECT_EQ(model::RatesOf(best.tx, no_gaps).total, best.counted);
}

// What the sampler costs reading real sysfs files (every interface of this machine, lo
// included), at the default 10 Hz and at the 1 kHz maximum; and that it read them: every
// interface's byte counters have a sample at every tick, none failed, and lo's moved by
// at least what this test sent over it meanwhile.
TEST(LoopbackCheck, CostOnRealSysfs) {
  if (!HaveLo()) GTEST_SKIP() << "no /sys/class/net/lo/statistics";
  constexpr uint64_t kSent = 16ull << 20;
  for (double hz : {10.0, 1000.0}) {
    SCOPED_TRACE(hz);
    topo::testing::TempDir out;
    SamplerOptions o = LoOptions((out.path() / "cost.cltrace").string(), hz);
    o.nic.only.clear();
    o.nic.include_virtual = true;
    auto sampler = Sampler::Create(o);
    ASSERT_TRUE(sampler.ok()) << sampler.status().message();
    (*sampler)->Start();
    const auto run = std::chrono::milliseconds(hz < 100 ? 2000 : 1000);
    const auto started = std::chrono::steady_clock::now();
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    const uint64_t sent = SendOverLoopback(kSent);
    std::this_thread::sleep_until(started + run);
    SamplerReport r = (*sampler)->Stop();
    std::printf("%.0f Hz, %u interfaces, %u series: %llu ticks (%llu missed), %.1f us CPU per tick "
                "(sampling thread %.1f, writer %.1f), %.3f%% of one core; longest tick %.1f us, latest start %.1f us\n",
                hz, r.devices, r.series, static_cast<unsigned long long>(r.ticks),
                static_cast<unsigned long long>(r.missed_ticks), r.CpuNsPerTick() / 1e3,
                r.sampler_cpu_ns / 1e3 / r.ticks, r.writer_cpu_ns / 1e3 / r.ticks, 100 * r.CpuShare(),
                r.max_tick_ns / 1e3, r.max_late_ns / 1e3);
    RecordProperty(hz < 100 ? "cpu_ns_per_tick_10hz" : "cpu_ns_per_tick_1khz", static_cast<int>(r.CpuNsPerTick()));
    ASSERT_EQ(sent, kSent);
    ASSERT_GT(r.ticks, 0u);
    EXPECT_EQ(r.read_errors, 0u);
    EXPECT_EQ(r.dropped_values, 0u);

    auto t = importers::ImportNativeTrace(o.output_path);
    ASSERT_TRUE(t.ok()) << t.status().message();
    std::set<std::string> interfaces;
    const model::CounterSeries* lo_tx = nullptr;
    const model::CounterSeries* lo_rx = nullptr;
    for (const model::CounterSeries& c : t->counters) {
      if (c.name != "net.tx_bytes" && c.name != "net.rx_bytes") continue;
      interfaces.insert(c.device);
      EXPECT_EQ(c.time.size(), r.ticks) << c.device << " " << c.name;
      if (c.device == "lo") (c.name == "net.tx_bytes" ? lo_tx : lo_rx) = &c;
    }
    EXPECT_EQ(interfaces.size(), r.devices);
    ASSERT_TRUE(lo_tx && lo_rx && !lo_tx->value.empty() && !lo_rx->value.empty());
    EXPECT_GE(lo_tx->value.back() - lo_tx->value.front(), static_cast<double>(sent));
    EXPECT_GE(lo_rx->value.back() - lo_rx->value.front(), static_cast<double>(sent));
  }
}

}  // namespace
}  // namespace commlens::recorder::sampler
