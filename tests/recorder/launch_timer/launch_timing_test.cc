// Every NCCL op timed by CUDA events around its kernel's launch (recorder/launch_timer),
// through the built plugin driven as NCCL drives it (fake_nccl.h) and a stand-in for
// CUDA's driver library (fake_cuda_driver.cc: a GPU 100 s ahead of the host clock whose
// kernels run 40 us), read back by the native importer.
#include <dlfcn.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <string>

#include "importers/native/native_importer.h"
#include "recorder/fake_nccl.h"
#include "recorder/recorded_trace.h"
#include "recorder/recorder_test_util.h"

namespace commlens::testing {
namespace {

using model::CommOp;

int g_mask = -1;
constexpr int kKernelCh = 64;
constexpr int kKernelLaunch = 2048;

int64_t NowNs() {
  timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return ts.tv_sec * 1'000'000'000ll + ts.tv_nsec;
}

int WaitForMask(int want) {
  for (int i = 0; i < 300 && LoadMask(&g_mask) != want; ++i) usleep(10'000);
  return LoadMask(&g_mask);
}

// How many times the plugin asked the stand-in driver whether a stream is capturing.
int CaptureChecks() {
  void* lib = dlopen(COMMLENS_FAKE_CUDA_DRIVER, RTLD_NOW | RTLD_NOLOAD);
  auto* count = lib ? reinterpret_cast<int (*)()>(dlsym(lib, "FakeCudaCaptureChecks")) : nullptr;
  return count ? count() : -1;
}

// Collectives with GPU channel timings the fake NCCL makes up (1 us kernels at 1 ms on
// its GPU clock): an op whose time is not those was timed by the launch events.
void RunCollectives(FakeNccl<5>& nccl, int n, uint64_t first_seq = 0) {
  for (int i = 0; i < n; ++i) {
    FakeCollective c;
    c.seq = first_seq + static_cast<uint64_t>(i);
    nccl.Collective(c);
  }
}

TEST(LaunchTiming, TimesEveryOpByTheEventsAroundItsLaunch) {
  const std::string dir = FreshDir("launch_timing_events");
  RecorderEnv env{{"COMMLENS_OUT", dir}, {"RANK", "0"}, {"WORLD_SIZE", "2"},
                  {"COMMLENS_CUDA_DRIVER", COMMLENS_FAKE_CUDA_DRIVER}};
  FakeNccl<5> nccl;
  ASSERT_TRUE(nccl.loaded());
  const int64_t before = NowNs();
  ASSERT_EQ(nccl.Init(0xC0DE, "world", 1, 2, 0, &g_mask), 0);
  // NCCL's kernel-channel events are not asked for: the launches are.
  EXPECT_EQ(LoadMask(&g_mask) & kKernelCh, 0);
  EXPECT_NE(LoadMask(&g_mask) & kKernelLaunch, 0);
  const int checks = CaptureChecks();
  ASSERT_GE(checks, 0);
  RunCollectives(nccl, 5);
  // NCCL said of each call's group that it was not being captured: the driver was not asked.
  EXPECT_EQ(CaptureChecks(), checks);
  usleep(50'000);  // the last kernel has run on the stand-in GPU
  ASSERT_EQ(nccl.Finalize(), 0);
  const int64_t after = NowNs();

  model::RankTrace t = ImportOnly(dir);
  ASSERT_EQ(t.comms.size(), 5u);
  for (uint32_t r = 0; r < t.comms.size(); ++r) {
    SCOPED_TRACE(r);
    EXPECT_EQ(t.comms.flags[r] & model::kCommNoGpuTiming, 0);
    // The kernel's 40 us, plus the host time between the two records (the launch).
    const int64_t length = t.comms.end[r] - t.comms.start[r];
    EXPECT_GE(length, 40'000 - 2'000);
    EXPECT_LT(length, 40'000 + 5'000'000);
    // On the host clock (the GPU's is 100 s ahead), after its API call began.
    EXPECT_GE(t.comms.start[r], t.comms.enqueue[r] - 100'000);
    EXPECT_GT(t.comms.start[r], before);
    EXPECT_LT(t.comms.end[r], after);
  }
  EXPECT_TRUE(HasNote(t, "5 ops timed by CUDA events around their kernels' launches; their CUDA calls held the "
                         "launching thread "));
  EXPECT_TRUE(HasNote(t, " us a launch (the mean over 5 launches), "));
  EXPECT_TRUE(HasNote(t, " s the file spans"));
  EXPECT_EQ(t.stats.total(), 0u);
}

// A launch-dense job launches more kernels between two file writes than the timer has
// slots: the flusher collects finished launches in between (every 100 ms), so every one
// is timed.
TEST(LaunchTiming, MoreLaunchesBetweenFileWritesThanSlotsAreAllTimed) {
  const std::string dir = FreshDir("launch_timing_dense");
  RecorderEnv env{{"COMMLENS_OUT", dir}, {"RANK", "0"}, {"WORLD_SIZE", "2"}, {"COMMLENS_FLUSH_INTERVAL_MS", "3000"}, {"COMMLENS_BUFFER_EVENTS", "65536"},
                  {"COMMLENS_CUDA_DRIVER", COMMLENS_FAKE_CUDA_DRIVER}};
  FakeNccl<5> nccl;
  ASSERT_TRUE(nccl.loaded());
  ASSERT_EQ(nccl.Init(0xDE45, "world", 1, 2, 0, &g_mask), 0);
  constexpr int kRounds = 4, kPerRound = 3000;  // 12,000 launches, 4,096 slots, one file write
  for (int round = 0; round < kRounds; ++round) {
    RunCollectives(nccl, kPerRound, static_cast<uint64_t>(round) * kPerRound);
    usleep(250'000);  // past a collection
  }
  ASSERT_EQ(nccl.Finalize(), 0);
  model::RankTrace t = ImportOnly(dir);
  ASSERT_EQ(t.comms.size(), size_t{kRounds} * kPerRound);
  EXPECT_EQ(std::count_if(t.comms.flags.begin(), t.comms.flags.end(),
                          [](uint8_t f) { return (f & model::kCommNoGpuTiming) != 0; }),
            0);
  EXPECT_TRUE(HasNote(t, "12000 ops timed by CUDA events around their kernels' launches"));
  EXPECT_FALSE(HasNote(t, "not timed"));
}

// The control file at `h` records with host times only: the launches between are not
// timed (on purpose: not counted as untimed), nor, with NCCL's kernel events timing the
// ops instead, are the kernels; `1` brings GPU timing back.
TEST(LaunchTiming, HostTimesOnlyWhileTheControlFileSaysH) {
  const std::string dir = FreshDir("launch_timing_host_only");
  const std::string control = dir + "/control";
  auto set_control = [&](char c) {
    WriteControl(control, c);
    usleep(100'000);  // polled every 2 ms
  };
  set_control('1');
  {
    RecorderEnv env{{"COMMLENS_OUT", dir},           {"RANK", "0"},
                    {"WORLD_SIZE", "2"},             {"COMMLENS_CONTROL", control},
                    {"COMMLENS_CONTROL_POLL_MS", "2"}, {"COMMLENS_FLUSH_INTERVAL_MS", "20"},  // a mark per state
                    {"COMMLENS_CUDA_DRIVER", COMMLENS_FAKE_CUDA_DRIVER}};
    FakeNccl<5> nccl;
    ASSERT_EQ(nccl.Init(0xC0E7, "world", 1, 2, 0, &g_mask), 0);
    RunCollectives(nccl, 2, 0);
    set_control('h');
    RunCollectives(nccl, 2, 2);
    set_control('1');
    RunCollectives(nccl, 2, 4);
    usleep(50'000);  // the last kernel has run on the stand-in GPU
    ASSERT_EQ(nccl.Finalize(), 0);
  }
  model::RankTrace t = ImportOnly(dir);
  ASSERT_EQ(t.comms.size(), 6u);
  for (uint32_t r = 0; r < 6; ++r)
    EXPECT_EQ((t.comms.flags[r] & model::kCommNoGpuTiming) != 0, r == 2 || r == 3) << r;
  EXPECT_TRUE(HasNote(t, "4 ops timed by CUDA events around their kernels' launches"));
  EXPECT_TRUE(HasNote(t, "control: host times only (no GPU timing)"));
  EXPECT_FALSE(HasNote(t, "were not timed by CUDA events"));

  // NCCL's kernel events timing the ops (the launch timer off): `h` takes their bit out
  // of NCCL's mask.
  const std::string dir2 = FreshDir("launch_timing_host_only_kernel_events");
  RecorderEnv env{{"COMMLENS_OUT", dir2}, {"RANK", "0"}, {"WORLD_SIZE", "2"}, {"COMMLENS_CONTROL", control},
                  {"COMMLENS_CONTROL_POLL_MS", "2"}, {"COMMLENS_LAUNCH_TIMING", "off"}};
  set_control('1');
  FakeNccl<5> nccl;
  ASSERT_EQ(nccl.Init(0xC0E8, "world", 1, 2, 0, &g_mask), 0);
  EXPECT_NE(LoadMask(&g_mask) & kKernelCh, 0);
  set_control('h');
  EXPECT_EQ(LoadMask(&g_mask) & kKernelCh, 0);
  EXPECT_NE(LoadMask(&g_mask), 0);  // still recording
  set_control('1');
  EXPECT_NE(LoadMask(&g_mask) & kKernelCh, 0);
  ASSERT_EQ(nccl.Finalize(), 0);
}

// Without a driver the kernel-channel events come back, and the file says why.
TEST(LaunchTiming, PutsNcclsKernelEventsBackWithoutADriver) {
  const std::string dir = FreshDir("launch_timing_no_driver");
  RecorderEnv env{{"COMMLENS_OUT", dir}, {"RANK", "0"}, {"WORLD_SIZE", "2"},
                  {"COMMLENS_CUDA_DRIVER", "/nonexistent/libcuda.so.1"}};
  FakeNccl<5> nccl;
  ASSERT_EQ(nccl.Init(0xC0DF, "world", 1, 2, 0, &g_mask), 0);
  EXPECT_NE(LoadMask(&g_mask) & kKernelCh, 0);
  RunCollectives(nccl, 3);
  ASSERT_EQ(nccl.Finalize(), 0);
  model::RankTrace t = ImportOnly(dir);
  ASSERT_EQ(t.comms.size(), 3u);
  for (uint32_t r = 0; r < t.comms.size(); ++r) EXPECT_EQ(t.comms.end[r] - t.comms.start[r], 1000);  // the channels'
  EXPECT_TRUE(HasNote(t, "the launch timer could not time NCCL's kernels (CUDA's driver library could not be loaded"));
}

// A driver that refuses every event: after kGiveUpAfter launches the timer gives up at a
// flush, and the kernel events time what follows.
TEST(LaunchTiming, GivesUpWhenCudaRefusesItsEvents) {
  const std::string dir = FreshDir("launch_timing_refused");
  RecorderEnv env{{"COMMLENS_OUT", dir}, {"RANK", "0"}, {"WORLD_SIZE", "2"},
                  {"COMMLENS_CUDA_DRIVER", COMMLENS_FAKE_CUDA_DRIVER}, {"FAKE_CUDA_REFUSE", "1"},
                  {"COMMLENS_FLUSH_INTERVAL_MS", "20"}};
  FakeNccl<5> nccl;
  ASSERT_EQ(nccl.Init(0xC0E0, "world", 1, 2, 0, &g_mask), 0);
  EXPECT_EQ(LoadMask(&g_mask) & kKernelCh, 0);
  RunCollectives(nccl, 20);
  EXPECT_NE(WaitForMask(LoadMask(&g_mask) | kKernelCh) & kKernelCh, 0);
  RunCollectives(nccl, 2, 20);
  ASSERT_EQ(nccl.Finalize(), 0);
  model::RankTrace t = ImportOnly(dir);
  ASSERT_EQ(t.comms.size(), 22u);
  size_t by_channels = 0;
  for (uint32_t r = 0; r < t.comms.size(); ++r) by_channels += t.comms.end[r] - t.comms.start[r] == 1000;
  EXPECT_EQ(by_channels, 2u);
  EXPECT_TRUE(HasNote(t, "CUDA refused the events on NCCL's launch streams 16 times"));
}

// Launches captured into a CUDA graph run later: not timed, and counted. NCCL says of
// each call's group whether it is captured, so the launch needs no driver call to know.
TEST(LaunchTiming, LeavesGraphCapturedLaunchesUntimed) {
  const std::string dir = FreshDir("launch_timing_captured");
  RecorderEnv env{{"COMMLENS_OUT", dir}, {"RANK", "0"}, {"WORLD_SIZE", "2"},
                  {"COMMLENS_CUDA_DRIVER", COMMLENS_FAKE_CUDA_DRIVER}, {"FAKE_CUDA_CAPTURING", "1"}};
  FakeNccl<5> nccl;
  ASSERT_EQ(nccl.Init(0xC0E1, "world", 1, 2, 0, &g_mask), 0);
  const int checks = CaptureChecks();
  ASSERT_GE(checks, 0);
  for (int i = 0; i < 3; ++i) {
    FakeCollective c;
    c.seq = static_cast<uint64_t>(i);
    c.graph_captured = true;
    nccl.Collective(c);
  }
  EXPECT_EQ(CaptureChecks(), checks);
  // A group whose calls disagree (communicators whose streams differ): the launch's state
  // is not known, so the driver is asked, once a launch.
  for (int i = 3; i < 5; ++i) {
    FakeCollective c;
    c.seq = static_cast<uint64_t>(i);
    c.call_capture_differs = true;
    nccl.Collective(c);
  }
  EXPECT_EQ(CaptureChecks(), checks + 2);
  ASSERT_EQ(nccl.Finalize(), 0);
  model::RankTrace t = ImportOnly(dir);
  ASSERT_EQ(t.comms.size(), 5u);
  for (uint32_t r = 0; r < t.comms.size(); ++r) EXPECT_NE(t.comms.flags[r] & model::kCommNoGpuTiming, 0);
  EXPECT_TRUE(HasNote(t, "5 of NCCL's kernel launches were not timed by CUDA events"));
}

// Asked off, or on an ABI without KernelLaunch events (v4), the kernel events time the ops.
TEST(LaunchTiming, OffOrWithoutLaunchEventsTheKernelEventsTimeTheOps) {
  {
    const std::string dir = FreshDir("launch_timing_off");
    RecorderEnv env{{"COMMLENS_OUT", dir}, {"RANK", "0"}, {"WORLD_SIZE", "2"},
                    {"COMMLENS_CUDA_DRIVER", COMMLENS_FAKE_CUDA_DRIVER}, {"COMMLENS_LAUNCH_TIMING", "off"}};
    FakeNccl<5> nccl;
    ASSERT_EQ(nccl.Init(0xC0E2, "world", 1, 2, 0, &g_mask), 0);
    EXPECT_NE(LoadMask(&g_mask) & kKernelCh, 0);
    ASSERT_EQ(nccl.Finalize(), 0);
  }
  {
    const std::string dir = FreshDir("launch_timing_v4");
    RecorderEnv env{{"COMMLENS_OUT", dir}, {"RANK", "0"}, {"WORLD_SIZE", "2"},
                    {"COMMLENS_CUDA_DRIVER", COMMLENS_FAKE_CUDA_DRIVER}};
    FakeNccl<4> nccl;
    ASSERT_EQ(nccl.Init(0xC0E3, "world", 1, 2, 0, &g_mask), 0);
    EXPECT_NE(LoadMask(&g_mask) & kKernelCh, 0);
    ASSERT_EQ(nccl.Finalize(), 0);
  }
}

}  // namespace
}  // namespace commlens::testing
