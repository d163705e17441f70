// Loads the built libnccl-profiler-commlens.so with dlopen and drives each exported ABI
// version the way NCCL does (fake_nccl.h), then reads the trace back with the native
// importer and checks what was recorded.
#include <dlfcn.h>
#include <time.h>

#include <algorithm>
#include <condition_variable>
#include <deque>
#include <fstream>
#include <iterator>
#include <mutex>
#include <string>
#include <thread>

#include "importers/native/native_importer.h"
#include "recorder/fake_nccl.h"
#include "native_format/record_reader.h"
#include "recorder/recorded_trace.h"
#include "recorder/recorder_test_util.h"

namespace commlens::testing {
namespace {

using model::CommOp;
using model::ImportIssue;

int64_t NowNs() {
  timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return ts.tv_sec * 1'000'000'000ll + ts.tv_nsec;
}

// NCCL's process-wide activation mask. It outlives every session, as NCCL's does.
int g_mask = -1;

constexpr int kMaskV4 = 2 | 4 | 8 | 16 | 64;  // Coll P2p ProxyOp ProxyStep KernelCh
constexpr int kMaskV5 = kMaskV4 | 256 | 512 | 1024 | 2048;  // + the API events
constexpr int kMaskV6 = kMaskV5 | 4096;  // + CeColl
constexpr int kMaskV7 = kMaskV6;         // KernelPhase is not asked for
constexpr int kCountOnlyMask = 2 | 4;

template <int V>
constexpr int FullMask() {
  return V == 4 ? kMaskV4 : V == 5 ? kMaskV5 : V == 6 ? kMaskV6 : kMaskV7;
}

std::vector<uint32_t> RowsOf(const model::RankTrace& t, CommOp op) {
  std::vector<uint32_t> rows;
  for (uint32_t r = 0; r < t.comms.size(); ++r)
    if (t.comms.op[r] == op) rows.push_back(r);
  return rows;
}

template <typename T>
class PluginAbiTest : public ::testing::Test {};
template <int V>
struct Version {
  static constexpr int value = V;
};
using Versions = ::testing::Types<Version<4>, Version<5>, Version<6>, Version<7>>;
TYPED_TEST_SUITE(PluginAbiTest, Versions);

TYPED_TEST(PluginAbiTest, RecordsOpsWithGpuTimingAndCommunicatorInfo) {
  constexpr int V = TypeParam::value;
  const std::string dir = FreshDir("abi_v" + std::to_string(V));
  RecorderEnv env{{"COMMLENS_OUT", dir}, {"RANK", "1"}, {"WORLD_SIZE", "4"}};
  FakeNccl<V> nccl;
  ASSERT_TRUE(nccl.loaded());
  EXPECT_STREQ(nccl.name(), "commlens");
  ASSERT_EQ(nccl.Init(0xC0FFEE, "world", 1, 4, 1, &g_mask), 0);
  EXPECT_EQ(LoadMask(&g_mask), FullMask<V>());

  FakeCollective all_reduce;
  all_reduce.count = 1 << 20;
  all_reduce.channels = 4;
  all_reduce.gpu_start = 5'000'000;
  all_reduce.gpu_duration = 50'000;
  all_reduce.proxy_steps = 3;
  all_reduce.step_bytes = 8192;
  nccl.Collective(all_reduce);
  FakeCollective all_gather{"AllGather", "ncclBfloat16", "RING", "LL", 1000, 0, 0, 2, 6'000'000, 20'000};
  nccl.Collective(all_gather);
  FakeCollective broadcast{"Broadcast", "ncclInt64", "TREE", "LL128", 10, 2, 0, 1, 7'000'000, 3'000};
  nccl.Collective(broadcast);
  nccl.P2p(FakeP2p{"Send", "ncclInt8", 4096, 3, 1, 8'000'000, 7'000});
  all_reduce.seq = 1;
  all_reduce.gpu_start = 9'000'000;
  all_reduce.proxy_steps = 0;
  nccl.Collective(all_reduce);
  ASSERT_EQ(nccl.Finalize(), 0);

  std::vector<std::string> files = TracesIn(dir);
  ASSERT_EQ(files.size(), 1u);
  EXPECT_NE(files[0].find("rank1."), std::string::npos) << files[0];
  model::RankTrace t = ImportOnly(dir);
  EXPECT_EQ(t.rank, 1);
  EXPECT_EQ(t.world_size, 4);
  EXPECT_EQ(t.format, "native");
  ASSERT_EQ(t.groups.size(), 1u);
  EXPECT_EQ(t.groups[0].name, "world");
  EXPECT_EQ(t.groups[0].comm_hash, 0xC0FFEEu);
  EXPECT_EQ(t.groups[0].size, 4);
  // A communicator of the whole job in which rank 1 is rank 1: the world group.
  EXPECT_EQ(t.groups[0].ranks, (std::vector<int>{0, 1, 2, 3}));
  ASSERT_EQ(t.comms.size(), 5u);

  auto all_reduces = RowsOf(t, CommOp::kAllReduce);
  ASSERT_EQ(all_reduces.size(), 2u);
  for (uint32_t r : all_reduces) {
    EXPECT_EQ(t.comms.end[r] - t.comms.start[r], 50'000);  // earliest start to latest stop
    EXPECT_EQ(t.comms.bytes[r], (1 << 20) * 4);
    EXPECT_EQ(t.comms.in_elems[r], 1 << 20);
    EXPECT_EQ(t.strings.Get(t.comms.algorithm[r]), "RING");
    EXPECT_EQ(t.strings.Get(t.comms.protocol[r]), "SIMPLE");
    EXPECT_EQ(t.comms.channels[r], 4);
    EXPECT_EQ(t.comms.group[r], 0u);
    EXPECT_EQ(t.comms.peer[r], -1);
    EXPECT_GT(t.comms.enqueue[r], 0);
  }
  // Ordinals over all collective types of the communicator, in call order.
  EXPECT_EQ(t.comms.seq[all_reduces[0]], 0);
  EXPECT_EQ(t.comms.seq[all_reduces[1]], 3);
  // The two all-reduces started 4 ms apart on the GPU, and so they do on the host clock.
  EXPECT_EQ(t.comms.start[all_reduces[1]] - t.comms.start[all_reduces[0]], 4'000'000);

  auto gathers = RowsOf(t, CommOp::kAllGather);
  ASSERT_EQ(gathers.size(), 1u);
  EXPECT_EQ(t.comms.out_elems[gathers[0]], 4000);
  EXPECT_EQ(t.comms.bytes[gathers[0]], 8000);
  EXPECT_EQ(t.comms.seq[gathers[0]], 1);
  EXPECT_EQ(t.strings.Get(t.comms.dtype[gathers[0]]), "ncclBfloat16");
  EXPECT_EQ(t.comms.end[gathers[0]] - t.comms.start[gathers[0]], 20'000);

  auto broadcasts = RowsOf(t, CommOp::kBroadcast);
  ASSERT_EQ(broadcasts.size(), 1u);
  EXPECT_EQ(t.comms.peer[broadcasts[0]], 2);
  EXPECT_EQ(t.comms.bytes[broadcasts[0]], 80);

  auto sends = RowsOf(t, CommOp::kSend);
  ASSERT_EQ(sends.size(), 1u);
  EXPECT_EQ(t.comms.peer[sends[0]], 3);
  EXPECT_EQ(t.comms.bytes[sends[0]], 4096);
  // p2p: the first message from comm rank 1 to comm rank 3 (the op is the direction).
  EXPECT_EQ(t.comms.seq[sends[0]], 0);
  EXPECT_EQ(t.comms.end[sends[0]] - t.comms.start[sends[0]], 7'000);

  // Network proxy activity of the first all-reduce: 3 steps of 8 KiB.
  ASSERT_EQ(t.counters.size(), 1u);
  EXPECT_EQ(t.counters[0].name, "nccl.proxy.send_bytes");
  ASSERT_EQ(t.counters[0].value.size(), 1u);
  EXPECT_EQ(t.counters[0].value[0], 3 * 8192);

  // API-level events exist from v5 on.
  bool has_api = false;
  for (size_t i = 0; i < t.host.size(); ++i) has_api |= t.strings.Get(t.host.name[i]) == "ncclAllReduce";
  EXPECT_EQ(has_api, V >= 5);

  EXPECT_EQ(t.stats.total(), 0u);
  EXPECT_FALSE(HasNote(t, "no end record"));
  EXPECT_TRUE(HasNote(t, "NCCL profiler ABI v" + std::to_string(V)));
}

TYPED_TEST(PluginAbiTest, DropsAndCountsWhenBuffersAreFull) {
  constexpr int V = TypeParam::value;
  const std::string dir = FreshDir("drops_v" + std::to_string(V));
  // Four slots per pool and no flush before finalize: the fifth op finds its pool full.
  RecorderEnv env{{"COMMLENS_OUT", dir}, {"COMMLENS_BUFFER_EVENTS", "4"},
                  {"COMMLENS_FLUSH_INTERVAL_MS", "3600000"}};
  FakeNccl<V> nccl;
  ASSERT_EQ(nccl.Init(0x1, "tiny", 1, 2, 0, &g_mask), 0);
  for (int i = 0; i < 20; ++i) {
    FakeCollective c;
    c.seq = static_cast<uint64_t>(i);
    c.gpu_start = 1'000'000 + 100'000 * static_cast<uint64_t>(i);
    nccl.Collective(c);
  }
  ASSERT_EQ(nccl.Finalize(), 0);

  model::RankTrace t = ImportOnly(dir);
  ASSERT_EQ(t.comms.size(), 4u);
  for (uint32_t r = 0; r < 4; ++r) {
    EXPECT_EQ(t.comms.seq[r], r);
    EXPECT_EQ(t.comms.end[r] - t.comms.start[r], 1000);  // their kernel timing was kept
  }
  // 16 collectives dropped; from v5 on also 60 - 4 API events (GroupApi, CollApi and
  // KernelLaunch per call).
  const uint64_t expected_drops = V == 4 ? 16 : 16 + 56;
  EXPECT_EQ(t.stats.count(ImportIssue::kDroppedByRecorder), expected_drops);
  EXPECT_TRUE(HasNote(t, "32 child events"));  // the dropped ops' kernel channels
}

TYPED_TEST(PluginAbiTest, CaptureWindowAfterCollectives) {
  constexpr int V = TypeParam::value;
  const std::string dir = FreshDir("window_v" + std::to_string(V));
  RecorderEnv env{{"COMMLENS_OUT", dir}, {"COMMLENS_CAPTURE_AFTER_COLLS", "5"}};
  FakeNccl<V> nccl;
  ASSERT_EQ(nccl.Init(0x2, "", 1, 2, 0, &g_mask), 0);
  EXPECT_EQ(LoadMask(&g_mask), kCountOnlyMask);  // before the window: count, do not record
  for (int i = 0; i < 5; ++i) nccl.Collective(FakeCollective{});
  EXPECT_EQ(LoadMask(&g_mask), FullMask<V>());  // the fifth opened it
  for (int i = 0; i < 5; ++i) nccl.Collective(FakeCollective{});
  ASSERT_EQ(nccl.Finalize(), 0);

  model::RankTrace t = ImportOnly(dir);
  ASSERT_EQ(t.comms.size(), 5u);
  for (uint32_t r = 0; r < 5; ++r) EXPECT_EQ(t.comms.seq[r], 5 + r);  // numbering went on outside
  EXPECT_EQ(t.groups[0].name, "comm-0000000000000002");
  EXPECT_TRUE(HasNote(t, "capture window opened"));
}

// COMMLENS_KERNEL_SAMPLE=4: the plugin switches NCCL's KernelCh bit so that 1 op in 4
// gets kernel timing; the others are imported with host times and flagged, and the
// collective analysis leaves them out of durations and busbw.
TEST(PluginTest, KernelSamplingTimesOneOpInN) {
  const std::string dir = FreshDir("kernel_sample");
  RecorderEnv env{{"COMMLENS_OUT", dir}, {"COMMLENS_KERNEL_SAMPLE", "4"}};
  FakeNccl<5> nccl;
  ASSERT_EQ(nccl.Init(0x5A, "s", 1, 2, 0, &g_mask), 0);
  EXPECT_EQ(LoadMask(&g_mask), kMaskV5 & ~64);  // starts without kernel timing
  for (int i = 0; i < 16; ++i) nccl.Collective(FakeCollective{});
  ASSERT_EQ(nccl.Finalize(), 0);
  model::RankTrace t = ImportOnly(dir);
  ASSERT_EQ(t.comms.size(), 16u);
  int timed = 0;
  for (uint32_t r = 0; r < 16; ++r) {
    const bool untimed = (t.comms.flags[r] & model::kCommNoGpuTiming) != 0;
    // The 4th op's start turns timing on for the 5th, and so on: ops 4, 8, 12 (0-based).
    const int64_t seq = t.comms.seq[r];  // rows are in time order; seq is the op's number
    EXPECT_EQ(!untimed, seq % 4 == 0 && seq > 0) << seq;
    if (!untimed) {
      ++timed;
      EXPECT_EQ(t.comms.end[r] - t.comms.start[r], 1000);  // the kernel's timing
    }
  }
  EXPECT_EQ(timed, 3);
}

// COMMLENS_CUPTI=1 without CUPTI to load: the tracer says in the file why it records
// nothing of the GPU, and NCCL's operations are recorded as ever: the kernel-channel
// events, left out for the tracer's kernels to time the ops, are asked for again.
TEST(PluginTest, TheCuptiTracerSaysWhyItCannotStart) {
  const std::string dir = FreshDir("cupti_absent");
  RecorderEnv env{{"COMMLENS_OUT", dir}, {"COMMLENS_CUPTI", "1"}, {"COMMLENS_CUPTI_LIBRARY", "/nonexistent/libcupti.so.13"}};
  FakeNccl<5> nccl;
  ASSERT_EQ(nccl.Init(0x5B, "s", 1, 2, 0, &g_mask), 0);
  for (int i = 0; i < 200 && LoadMask(&g_mask) != kMaskV5; ++i) usleep(10'000);
  EXPECT_EQ(LoadMask(&g_mask), kMaskV5);
  for (int i = 0; i < 4; ++i) nccl.Collective(FakeCollective{});
  ASSERT_EQ(nccl.Finalize(), 0);
  model::RankTrace t = ImportOnly(dir);
  EXPECT_EQ(t.comms.size(), 4u);
  EXPECT_EQ(t.gpu.size(), 0u);
  EXPECT_TRUE(HasNote(t, "the CUPTI tracer could not start"));
}

TEST(PluginTest, CaptureWindowDurationClosesIt) {
  const std::string dir = FreshDir("duration");
  RecorderEnv env{{"COMMLENS_OUT", dir}, {"COMMLENS_CAPTURE_DURATION_S", "0.1"}};
  FakeNccl<5> nccl;
  ASSERT_EQ(nccl.Init(0x3, "d", 1, 2, 0, &g_mask), 0);
  nccl.Collective(FakeCollective{});
  for (int i = 0; i < 200 && LoadMask(&g_mask) != kCountOnlyMask; ++i) usleep(10'000);
  EXPECT_EQ(LoadMask(&g_mask), kCountOnlyMask);
  nccl.Collective(FakeCollective{});
  ASSERT_EQ(nccl.Finalize(), 0);
  model::RankTrace t = ImportOnly(dir);
  EXPECT_EQ(t.comms.size(), 1u);
  EXPECT_TRUE(HasNote(t, "capture window closed"));
}

TEST(PluginTest, CaptureWindowAfterSeconds) {
  const std::string dir = FreshDir("after_seconds");
  RecorderEnv env{{"COMMLENS_OUT", dir}, {"COMMLENS_CAPTURE_AFTER_S", "0.2"}};
  FakeNccl<5> nccl;
  ASSERT_EQ(nccl.Init(0x9, "s", 1, 2, 0, &g_mask), 0);
  EXPECT_EQ(LoadMask(&g_mask), kCountOnlyMask);
  nccl.Collective(FakeCollective{});  // before the window: counted only
  for (int i = 0; i < 200 && LoadMask(&g_mask) != kMaskV5; ++i) usleep(10'000);
  EXPECT_EQ(LoadMask(&g_mask), kMaskV5);
  nccl.Collective(FakeCollective{});
  ASSERT_EQ(nccl.Finalize(), 0);
  model::RankTrace t = ImportOnly(dir);
  ASSERT_EQ(t.comms.size(), 1u);
  EXPECT_EQ(t.comms.seq[0], 1);
}

TEST(PluginTest, ControlFileSwitchesRecordingAtRuntime) {
  const std::string dir = FreshDir("control");
  const std::string control = dir + "/control";
  auto set_control = [&](char c) { WriteControl(control, c); };
  auto wait_for_mask = [](int want) {
    for (int i = 0; i < 400 && LoadMask(&g_mask) != want; ++i) usleep(5'000);
    return LoadMask(&g_mask);
  };
  set_control('0');
  RecorderEnv env{{"COMMLENS_OUT", dir}, {"COMMLENS_CONTROL", control}, {"COMMLENS_CONTROL_POLL_MS", "2"}};
  FakeNccl<5> nccl;
  ASSERT_EQ(nccl.Init(0x4, "ctl", 1, 2, 0, &g_mask), 0);
  EXPECT_EQ(LoadMask(&g_mask), 0);  // off: NCCL makes no profiler call at all
  FakeCollective c;
  nccl.Collective(c);  // not seen
  set_control('1');
  EXPECT_EQ(wait_for_mask(kMaskV5), kMaskV5);
  c.seq = 1;
  nccl.Collective(c);
  set_control('c');
  EXPECT_EQ(wait_for_mask(kCountOnlyMask), kCountOnlyMask);
  c.seq = 2;
  nccl.Collective(c);  // counted, not recorded
  set_control('1');
  EXPECT_EQ(wait_for_mask(kMaskV5), kMaskV5);
  c.seq = 3;
  nccl.Collective(c);
  ASSERT_EQ(nccl.Finalize(), 0);

  model::RankTrace t = ImportOnly(dir);
  ASSERT_EQ(t.comms.size(), 2u);
  // The recorder was off at start, so the comm ordinal is not trusted: NCCL's sequence
  // (x16, plus the op) is the key.
  EXPECT_EQ(t.comms.seq[0], 1 * 16 + static_cast<int>(CommOp::kAllReduce));
  EXPECT_EQ(t.comms.seq[1], 3 * 16 + static_cast<int>(CommOp::kAllReduce));
  EXPECT_TRUE(HasNote(t, "switched off 1 times"));
  EXPECT_TRUE(HasNote(t, "control: on"));
}

TEST(PluginTest, GpuTimesAreConvertedToTheHostClock) {
  const std::string dir = FreshDir("clock");
  RecorderEnv env{{"COMMLENS_OUT", dir}};
  FakeNccl<5> nccl;
  ASSERT_EQ(nccl.Init(0x5, "clock", 1, 2, 0, &g_mask), 0);
  // A GPU clock one second behind the host's; the kernel ran in the last 100 us.
  const int64_t before = NowNs();
  FakeCollective c;
  c.gpu_start = static_cast<uint64_t>(before - 1'000'000'000 - 100'000);
  c.gpu_duration = 50'000;
  nccl.Collective(c);
  const int64_t after = NowNs();
  ASSERT_EQ(nccl.Finalize(), 0);
  model::RankTrace t = ImportOnly(dir);
  ASSERT_EQ(t.comms.size(), 1u);
  // True start: before - 100 us. The estimate is never early and late by at most the
  // time between the fake GPU's stop and the plugin seeing it.
  EXPECT_GE(t.comms.start[0], before - 100'000);
  EXPECT_LE(t.comms.start[0], after);
  EXPECT_EQ(t.comms.end[0] - t.comms.start[0], 50'000);
  EXPECT_TRUE(HasNote(t, "GPU clock to host clock offset"));
}

// The file's last record once a flush is written: its alive mark, whose progress is the
// last op start or kernel end, also outside the capture window, and not its own time.
// Waits (up to 2 s) for a flush whose mark satisfies |ok|; returns the last mark seen.
template <typename Ok>
native_format::MarkRecord WaitForAliveMark(const std::string& dir, Ok ok) {
  namespace nf = native_format;
  nf::MarkRecord last{};
  for (int i = 0; i < 400; ++i) {
    std::vector<std::string> files = TracesIn(dir);
    std::ifstream in(files.empty() ? "" : files[0], std::ios::binary);
    const std::vector<uint8_t> bytes{std::istreambuf_iterator<char>(in), {}};
    nf::RecordReader reader(bytes, sizeof(nf::FileHeader));
    nf::RecordView r, end;
    while (reader.Next(&r) == nf::ReadStatus::kRecord) end = r;
    if (reader.offset() == bytes.size() && end.type == static_cast<uint16_t>(nf::RecordType::kMark) &&
        nf::DecodePayload(end, &last) && last.what == static_cast<uint32_t>(nf::MarkKind::kAlive) && ok(last))
      return last;
    usleep(5'000);
  }
  ADD_FAILURE() << "no flush in " << dir << " ended with the alive mark wanted";
  return last;
}

TEST(PluginTest, AliveMarksEndEachFlushWithTheLastProgress) {
  const std::string dir = FreshDir("progress");
  RecorderEnv env{{"COMMLENS_OUT", dir}, {"COMMLENS_FLUSH_INTERVAL_MS", "5"}, {"COMMLENS_CAPTURE_DURATION_S", "0.2"}};
  FakeNccl<5> nccl;
  const int64_t t0 = NowNs();
  ASSERT_EQ(nccl.Init(0x7A, "p", 1, 2, 0, &g_mask), 0);
  const int64_t t1 = NowNs();
  auto in = [](int64_t lo, int64_t hi) {
    return [lo, hi](const native_format::MarkRecord& m) { return m.last_progress_ns >= lo && m.last_progress_ns <= hi; };
  };
  // No op yet: the communicator's init.
  native_format::MarkRecord m = WaitForAliveMark(dir, in(t0, t1));
  EXPECT_GE(m.time_ns, m.last_progress_ns);
  nccl.Collective(FakeCollective{});
  const int64_t t2 = NowNs();
  m = WaitForAliveMark(dir, in(t1, t2));
  // Later flushes of a rank that does nothing: the mark's time moves, its progress not.
  const int64_t waited = NowNs() + 50'000'000;
  m = WaitForAliveMark(dir, [&](const native_format::MarkRecord& later) { return later.time_ns > waited; });
  EXPECT_GE(m.last_progress_ns, t1);
  EXPECT_LE(m.last_progress_ns, t2);
  // After the capture window an op is counted, not recorded, and still progress.
  for (int i = 0; i < 200 && LoadMask(&g_mask) != kCountOnlyMask; ++i) usleep(10'000);
  ASSERT_EQ(LoadMask(&g_mask), kCountOnlyMask);
  const int64_t t3 = NowNs();
  nccl.Collective(FakeCollective{});
  WaitForAliveMark(dir, in(t3, NowNs()));
  ASSERT_EQ(nccl.Finalize(), 0);
}

TEST(PluginTest, ForeignAndStaleHandlesAreIgnored) {
  const std::string dir = FreshDir("handles");
  RecorderEnv env{{"COMMLENS_OUT", dir}, {"COMMLENS_FLUSH_INTERVAL_MS", "5"}};
  FakeNccl<5> nccl;
  ASSERT_EQ(nccl.Init(0x6, "h", 1, 2, 0, &g_mask), 0);
  for (uint64_t v : {uint64_t{0x1234}, ~uint64_t{0}, uint64_t{0x5a5a5a5a5a5a5a5a}, uint64_t{6} << 54}) {
    void* h = reinterpret_cast<void*>(v);
    abi::StateArgs a{};
    nccl.Record(h, abi::kKernelChStop, &a);
    nccl.Stop(h);
    void* child = nccl.Start(abi::kKernelCh, h, [](auto& d) { d.kernelCh.pTimer = 1; });
    EXPECT_EQ(child, nullptr);  // a parent that is not ours: orphan, not recorded
  }
  // A handle stopped twice, and again after the flusher recycled its slot.
  void* api = nccl.Start(abi::kCollApi, nullptr, [](auto& d) { d.collApi.func = "AllReduce"; });
  ASSERT_NE(api, nullptr);
  nccl.Stop(api);
  nccl.Stop(api);
  usleep(50'000);
  nccl.Stop(api);
  nccl.Collective(FakeCollective{});
  ASSERT_EQ(nccl.Finalize(), 0);
  model::RankTrace t = ImportOnly(dir);
  EXPECT_EQ(t.comms.size(), 1u);
  EXPECT_TRUE(HasNote(t, "4 child events"));
}

TEST(PluginTest, InitFailsOnlyWhenTheTraceCannotBeWritten) {
  {
    RecorderEnv env{{"COMMLENS_OUT", "/proc/commlens-no-such-dir/out"}};
    FakeNccl<5> nccl;
    int mask = 0;
    EXPECT_NE(nccl.Init(0x7, "x", 1, 2, 0, &mask), 0);  // NCCL then runs without the plugin
  }
  const std::string dir = FreshDir("after_failure");
  RecorderEnv env{{"COMMLENS_OUT", dir}};
  FakeNccl<5> nccl;
  ASSERT_EQ(nccl.Init(0x8, "y", 1, 2, 0, &g_mask), 0);
  nccl.Collective(FakeCollective{});
  ASSERT_EQ(nccl.Finalize(), 0);
  EXPECT_EQ(ImportOnly(dir).comms.size(), 1u);
}

TEST(PluginTest, CommunicatorsShareOneFileAndSessionsGetNewOnes) {
  const std::string dir = FreshDir("sessions");
  RecorderEnv env{{"COMMLENS_OUT", dir}};
  FakeNccl<5> world, pair;
  ASSERT_EQ(world.Init(0xA, "world", 1, 4, 0, &g_mask), 0);
  ASSERT_EQ(pair.Init(0xB, "pair", 1, 2, 0, &g_mask), 0);
  world.Collective(FakeCollective{});
  ASSERT_EQ(world.Finalize(), 0);  // the other communicator keeps recording
  pair.Collective(FakeCollective{});
  ASSERT_EQ(pair.Finalize(), 0);   // the last one ends the session
  ASSERT_EQ(world.Init(0xA, "world", 1, 4, 0, &g_mask), 0);
  world.Collective(FakeCollective{});
  ASSERT_EQ(world.Finalize(), 0);

  std::vector<std::string> files = TracesIn(dir);
  ASSERT_EQ(files.size(), 2u);
  auto first = importers::ImportNativeTrace(files[0]);
  auto second = importers::ImportNativeTrace(files[1]);
  ASSERT_TRUE(first.ok() && second.ok());
  const model::RankTrace& both = first->groups.size() == 2 ? *first : *second;
  const model::RankTrace& again = first->groups.size() == 2 ? *second : *first;
  ASSERT_EQ(both.groups.size(), 2u);
  EXPECT_EQ(both.comms.size(), 2u);
  EXPECT_NE(both.comms.group[0], both.comms.group[1]);
  EXPECT_EQ(again.comms.size(), 1u);
}

// A job that keeps one communicator and makes and frees others (subgroups made per
// evaluation, a communicator rebuilt after a fault) never ends its session: past the
// token space's 1,023 registry indexes, finalized communicators' indexes are given to new
// ones. Every communicator is recorded with an id of its own in the file, every op keeps
// its own kernel timing (op ids stay unique: a reused index's generations start above the
// old ones'), and a handle left over from an index's earlier communicator does not touch
// the new one's open event.
TEST(PluginTest, CommunicatorsThatComeAndGoAreAllRecorded) {
  namespace nf = native_format;
  const std::string dir = FreshDir("churn");
  RecorderEnv env{{"COMMLENS_OUT", dir}, {"COMMLENS_BUFFER_EVENTS", "64"}};
  FakeNccl<5> world;
  ASSERT_EQ(world.Init(0x1, "world", 1, 2, 0, &g_mask), 0);
  constexpr int kChurned = 1100;  // indexes 1..1022 fresh, then reused
  void* left_over = nullptr;      // an API event of the first churned communicator, never stopped
  int64_t reused_api_start = 0;
  for (int i = 0; i < kChurned; ++i) {
    FakeNccl<5> sub;
    ASSERT_EQ(sub.Init(0x1000 + i, "sub", 1, 2, 0, &g_mask), 0) << i;
    if (i == 0) left_over = sub.Start(abi::kCollApi, nullptr, [](auto& d) { d.collApi.func = "Broadcast"; });
    if (i == 1022) {  // the first communicator on a reused index (the first churned one's)
      reused_api_start = NowNs();
      void* api = sub.Start(abi::kCollApi, nullptr, [](auto& d) { d.collApi.func = "Reduce"; });
      ASSERT_NE(api, nullptr);
      sub.Stop(left_over);  // must not end |api|
      usleep(20'000);
      sub.Stop(api);
    }
    FakeCollective c;
    c.gpu_duration = 1000 + i;
    sub.Collective(c);
    ASSERT_EQ(sub.Finalize(), 0) << i;
  }
  world.Collective(FakeCollective{});
  ASSERT_EQ(world.Finalize(), 0);

  model::RankTrace t = ImportOnly(dir);
  EXPECT_EQ(t.groups.size(), static_cast<size_t>(kChurned + 1));
  ASSERT_EQ(t.comms.size(), static_cast<size_t>(kChurned + 1));
  std::vector<int64_t> durations, expected{1000};  // the world's op, then each churned one's
  for (size_t i = 0; i < t.comms.size(); ++i) durations.push_back(t.comms.end[i] - t.comms.start[i]);
  for (int i = 0; i < kChurned; ++i) expected.push_back(1000 + i);
  std::sort(durations.begin(), durations.end());
  EXPECT_EQ(durations, expected);
  // The Reduce call's API event (the only one without a parent group since) spans the
  // sleep: the left-over handle did not end it.
  std::ifstream in(TracesIn(dir)[0], std::ios::binary);
  const std::vector<uint8_t> bytes{std::istreambuf_iterator<char>(in), {}};
  nf::RecordReader reader(bytes, sizeof(nf::FileHeader));
  nf::RecordView r;
  int apis = 0;
  std::vector<uint32_t> comm_ids;
  while (reader.Next(&r) == nf::ReadStatus::kRecord) {
    nf::ApiRecord a;
    nf::CommRecord c;
    if (r.type == static_cast<uint16_t>(nf::RecordType::kComm) && nf::DecodePayload(r, &c)) comm_ids.push_back(c.comm);
    if (r.type != static_cast<uint16_t>(nf::RecordType::kApi) || !nf::DecodePayload(r, &a) ||
        a.kind != static_cast<uint8_t>(nf::ApiKind::kCollApi) || a.parent_id != 0 || a.host_start_ns < reused_api_start)
      continue;
    ++apis;
    EXPECT_GE(a.host_stop_ns - a.host_start_ns, 20'000'000);
  }
  EXPECT_EQ(apis, 1);
  std::sort(comm_ids.begin(), comm_ids.end());
  comm_ids.erase(std::unique(comm_ids.begin(), comm_ids.end()), comm_ids.end());
  EXPECT_EQ(comm_ids.size(), static_cast<size_t>(kChurned + 1));  // an id each, none reused
}

// A finalized communicator's pools go back at once: a job that makes and frees
// communicators for hours does not keep every one's memory (some 21 MB of address space
// each at the default pool sizes).
TEST(PluginTest, AFinalizedCommunicatorsPoolsGoBack) {
  auto address_space_kb = [] {  // VmSize
    std::ifstream status("/proc/self/status");
    std::string line;
    while (std::getline(status, line))
      if (line.rfind("VmSize:", 0) == 0) return std::stoll(line.substr(7));
    return 0LL;
  };
  const std::string dir = FreshDir("pools_back");
  RecorderEnv env{{"COMMLENS_OUT", dir}};  // the default pool sizes
  FakeNccl<5> world;
  ASSERT_EQ(world.Init(0x1, "world", 1, 2, 0, &g_mask), 0);
  const long long before = address_space_kb();
  for (int i = 0; i < 100; ++i) {
    FakeNccl<5> sub;
    ASSERT_EQ(sub.Init(0x2000 + i, "sub", 1, 2, 0, &g_mask), 0);
    sub.Collective(FakeCollective{});
    ASSERT_EQ(sub.Finalize(), 0);
  }
  const long long grown = address_space_kb() - before;
  EXPECT_LT(grown, 200 * 1024) << "100 communicators made and freed kept " << grown << " kB";
  world.Collective(FakeCollective{});
  ASSERT_EQ(world.Finalize(), 0);
  EXPECT_EQ(ImportOnly(dir).comms.size(), 101u);
}

// NCCL's threading: ops are enqueued on the application's thread, their kernel channels
// reported by the proxy thread, while the flusher drains both.
TEST(PluginTest, EnqueueThreadProxyThreadAndFlusherTogether) {
  const std::string dir = FreshDir("threads");
  RecorderEnv env{{"COMMLENS_OUT", dir}, {"COMMLENS_FLUSH_INTERVAL_MS", "1"}};
  FakeNccl<5> nccl;
  ASSERT_EQ(nccl.Init(0x10, "threads", 1, 2, 0, &g_mask), 0);
  constexpr int kOps = 3000;
  std::mutex mu;
  std::condition_variable cv;
  std::deque<void*> enqueued;
  std::thread proxy([&] {
    for (int i = 0; i < kOps; ++i) {
      void* op;
      {
        std::unique_lock<std::mutex> lk(mu);
        cv.wait(lk, [&] { return !enqueued.empty(); });
        op = enqueued.front();
        enqueued.pop_front();
      }
      for (uint8_t ch = 0; ch < 4; ++ch) {
        uint64_t start = 1'000'000 + 10'000 * static_cast<uint64_t>(i) + ch;
        void* k = nccl.Start(abi::kKernelCh, op, [&](auto& d) {
          d.kernelCh.channelId = ch;
          d.kernelCh.pTimer = start;
        });
        abi::StateArgs a{};
        a.kernelCh.pTimer = start + 2'000 - 2 * ch;
        nccl.Record(k, abi::kKernelChStop, &a);
        nccl.Stop(k);
      }
    }
  });
  for (int i = 0; i < kOps; ++i) {
    void* op = nccl.Start(abi::kColl, nullptr, [&](auto& d) {
      d.coll.func = "AllReduce";
      d.coll.datatype = "ncclFloat32";
      d.coll.count = 1;
      d.coll.seqNumber = static_cast<uint64_t>(i);
    });
    nccl.Stop(op);
    std::lock_guard<std::mutex> lk(mu);
    enqueued.push_back(op);
    cv.notify_one();
  }
  proxy.join();
  ASSERT_EQ(nccl.Finalize(), 0);
  model::RankTrace t = ImportOnly(dir);
  ASSERT_EQ(t.comms.size(), static_cast<size_t>(kOps));
  for (size_t r = 0; r < t.comms.size(); ++r) {
    ASSERT_EQ(t.comms.seq[r], static_cast<int64_t>(r));
    ASSERT_EQ(t.comms.end[r] - t.comms.start[r], 2'000);
  }
  EXPECT_EQ(t.stats.total(), 0u);
}

// ABI v7: each call's user tag reaches the op (OpDetail record, native format 1.2), with
// the kernel variant and the symmetric-kernel flag; untagged ops get no detail record.
TEST(PluginTest, V7UserTagsAndKernelVariantReachTheModel) {
  const std::string dir = FreshDir("abi_v7_tags");
  RecorderEnv env{{"COMMLENS_OUT", dir}, {"RANK", "0"}, {"WORLD_SIZE", "2"}};
  FakeNccl<7> nccl;
  ASSERT_TRUE(nccl.loaded());
  ASSERT_EQ(nccl.Init(0xBEEF, "world", 1, 2, 0, &g_mask), 0);
  FakeCollective tagged;
  tagged.user_tag = 0x7a6000000000003ull;  // all 64 bits carried
  tagged.kernel_variant = "AllReduce_Sum_f32_RING_SIMPLE_sym";
  tagged.symmetric = true;
  nccl.Collective(tagged);
  FakeCollective plain;
  plain.seq = 1;
  plain.gpu_start = 2'000'000;
  nccl.Collective(plain);
  FakeP2p send;
  send.user_tag = 42;
  nccl.P2p(send);
  ASSERT_EQ(nccl.Finalize(), 0);

  model::RankTrace t = ImportOnly(dir);
  ASSERT_EQ(t.comms.size(), 3u);
  auto all_reduces = RowsOf(t, CommOp::kAllReduce);
  ASSERT_EQ(all_reduces.size(), 2u);
  EXPECT_EQ(t.comms.user_tag[all_reduces[0]], 0x7a6000000000003ull);
  EXPECT_NE(t.comms.flags[all_reduces[0]] & model::kCommSymmetric, 0);
  EXPECT_EQ(t.comms.user_tag[all_reduces[1]], 0u);
  EXPECT_EQ(t.comms.flags[all_reduces[1]] & model::kCommSymmetric, 0);
  auto sends = RowsOf(t, CommOp::kSend);
  ASSERT_EQ(sends.size(), 1u);
  EXPECT_EQ(t.comms.user_tag[sends[0]], 42u);
  EXPECT_EQ(t.stats.total(), 0u);
}

// ABI v7's kernel barrier phases (NCCL 2.31+), asked for with the mask word `phases`
// (which brings the kernel channels they belong to): each symmetric kernel's op gets its
// initial sync, the mean of its channels, on the GPU's own clock; a regular kernel has no
// phases (NCCL emits them for symmetric kernels only). Not asked for (the kernel channels
// alone), none are recorded.
TEST(PluginTest, V7KernelPhasesGiveEachSymmetricOpItsInitialSync) {
  for (bool asked : {true, false}) {
    SCOPED_TRACE(asked);
    const std::string dir = FreshDir(asked ? "abi_v7_phases" : "abi_v7_no_phases");
    RecorderEnv env{{"COMMLENS_OUT", dir}, {"RANK", "0"}, {"WORLD_SIZE", "2"},
                    {"COMMLENS_EVENT_MASK", asked ? "default,phases" : "default,kernel"}};
    FakeNccl<7> nccl;
    ASSERT_TRUE(nccl.loaded());
    ASSERT_EQ(nccl.Init(0xFACE, "world", 1, 2, 0, &g_mask), 0);
    EXPECT_EQ((LoadMask(&g_mask) & (1 << 15)) != 0, asked);
    FakeCollective symmetric;
    symmetric.symmetric = true;
    symmetric.channels = 4;
    symmetric.gpu_duration = 50'000;
    symmetric.initial_sync = 30'000;  // waited 30 us for the peers
    nccl.Collective(symmetric);
    FakeCollective regular;
    regular.seq = 1;
    regular.gpu_start = 2'000'000;
    nccl.Collective(regular);
    ASSERT_EQ(nccl.Finalize(), 0);

    model::RankTrace t = ImportOnly(dir);
    auto all_reduces = RowsOf(t, CommOp::kAllReduce);
    ASSERT_EQ(all_reduces.size(), 2u);
    // Channels of 30, 31, 32 and 33 us: their mean.
    EXPECT_EQ(t.comms.initial_sync[all_reduces[0]], asked ? 31'500 : model::kNoTime);
    EXPECT_EQ(t.comms.initial_sync[all_reduces[1]], model::kNoTime);
    EXPECT_EQ(t.comms.end[all_reduces[0]] - t.comms.start[all_reduces[0]], 50'000);  // the kernel's own timing
    EXPECT_EQ(t.stats.total(), 0u);
  }
}

TEST(PluginTest, ExportsOnlyTheFourAbiTablesAndCudasInjectionEntry) {
  void* lib = PluginLibrary();
  for (const char* sym : {"ncclProfiler_v4", "ncclProfiler_v5", "ncclProfiler_v6", "ncclProfiler_v7", "InitializeInjection"})
    EXPECT_NE(dlsym(lib, sym), nullptr) << sym;
  for (const char* sym : {"ncclProfiler_v3", "ncclProfiler_v8", "_ZN8commlens8recorder9g_sessionE"})
    EXPECT_EQ(dlsym(lib, sym), nullptr) << sym;
}

}  // namespace
}  // namespace commlens::testing
