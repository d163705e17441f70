// The launch timer's own rules, on a stand-in GPU the test drives by hand: GPU times put on
// the host clock through the anchor, launches in flight waited for, what is not timed
// counted, and the LaunchTimer record.
#include "recorder/launch_timer/launch_timer.h"

#include <gtest/gtest.h>
#include <unistd.h>
#include <time.h>

#include <map>

#include "recorder/launch_timer/launch_records.h"

namespace commlens::recorder::launch_timer {
namespace {

namespace nf = native_format;

int64_t HostNs() {
  timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

// A GPU whose clock is the host's plus |ahead|. A launch stream's events take the GPU
// times the test queues for them (kernels finish when the test says); the timer's own
// stream runs at once.
class StandInGpu final : public GpuEvents {
 public:
  int64_t ahead = 5'000'000'000;
  bool capturing = false;
  std::vector<int64_t> next_times;  // GPU times of the next launch-stream records, in order
  std::map<Handle, int64_t> time;   // 0: recorded, not yet run
  Handle next = 100;
  Handle own_stream = 0;

  bool Load(std::string*) override { return true; }
  Handle StreamContext(uint64_t) override { return 7; }
  bool Capturing(uint64_t) override { return ++capture_checks, capturing; }
  int capture_checks = 0;
  Handle NewEvent(Handle) override { return time[next] = -1, next++; }
  Handle NewStream(Handle) override { return own_stream = next++; }
  void DestroyEvent(Handle e) override { time.erase(e); }
  void DestroyStream(Handle) override {}
  int64_t record_cost_ns = 0;  // how long a launch stream's record holds the caller
  bool Record(Handle e, uint64_t stream) override {
    if (stream != own_stream && record_cost_ns > 0)
      for (const int64_t until = HostNs() + record_cost_ns; HostNs() < until;) {
      }
    if (stream == own_stream) {
      time[e] = HostNs() + ahead;
      return true;
    }
    if (next_times.empty()) return false;
    time[e] = next_times.front();
    next_times.erase(next_times.begin());
    return true;
  }
  Done Query(Handle e) override {
    auto it = time.find(e);
    if (it == time.end() || it->second < 0) return Done::kError;
    return it->second == 0 ? Done::kNotYet : Done::kYes;
  }
  bool ElapsedNs(Handle from, Handle to, int64_t* ns) override {
    *ns = time.at(to) - time.at(from);
    return true;
  }
  int RelaxCapture() override { return ++relaxed, 1; }
  void RestoreCapture(int mode) override { restored += mode; }
  int relaxed = 0, restored = 0;
};

TEST(LaunchTimer, PutsGpuTimesOnTheHostClockThroughTheAnchor) {
  StandInGpu gpu;
  LaunchTimer timer(&gpu);
  std::string why;
  ASSERT_TRUE(timer.Start(&why));
  const int64_t host = HostNs();
  // A kernel 3 ms ago that ran 250 us, and one still running.
  gpu.next_times = {host - 3'000'000 + gpu.ahead, host - 2'750'000 + gpu.ahead, host + gpu.ahead, 0};
  const uint32_t a = timer.Begin(11);
  timer.End(a, 1001);
  const uint32_t b = timer.Begin(11);
  timer.End(b, 1002);
  ASSERT_NE(a, LaunchTimer::kNone);
  ASSERT_NE(b, LaunchTimer::kNone);

  nf::RecordWriter w;
  timer.Collect(HostNs(), &w);
  nf::LaunchTimerRecord state{};
  std::vector<nf::LaunchTimingRecord> got = LaunchRecords(w, &state);
  ASSERT_EQ(got.size(), 1u);  // the second waits for its kernel
  EXPECT_EQ(got[0].api_id, 1001u);
  EXPECT_EQ(got[0].gpu_end_ns - got[0].gpu_start_ns, 250'000);
  EXPECT_NEAR(static_cast<double>(got[0].gpu_start_ns), static_cast<double>(host - 3'000'000),
              1'000.0 + got[0].anchor_error_ns);
  EXPECT_EQ(state.state, static_cast<uint32_t>(nf::LaunchTimerState::kTiming));
  EXPECT_EQ(state.timed, 1u);
  // The flusher's CUDA calls do not count against another thread's graph capture.
  EXPECT_EQ(gpu.relaxed, 1);
  EXPECT_EQ(gpu.restored, 1);

  // The kernel ends; the next collect has it.
  for (auto& [e, t] : gpu.time)
    if (t == 0) t = HostNs() + gpu.ahead;
  nf::RecordWriter w2;
  timer.Finish(HostNs(), &w2, 100'000'000);
  got = LaunchRecords(w2, &state);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].api_id, 1002u);
  EXPECT_EQ(state.timed, 2u);
  EXPECT_FALSE(timer.timing());
}

// What timing costs the launching thread is measured around its CUDA calls and written
// with the counters: here each record holds it 30 us, so a launch's two 60 us or more
// (and not the time NCCL's launch takes between them).
TEST(LaunchTimer, SaysWhatItsCudaCallsCostTheLaunchingThread) {
  StandInGpu gpu;
  gpu.record_cost_ns = 30'000;
  LaunchTimer timer(&gpu);
  std::string why;
  ASSERT_TRUE(timer.Start(&why));
  const int64_t host = HostNs();
  for (int i = 0; i < 3; ++i) {
    gpu.next_times = {host + gpu.ahead - 1000, host + gpu.ahead - 500};
    const uint32_t slot = timer.Begin(11, LaunchTimer::Capture::kNo);
    ASSERT_NE(slot, LaunchTimer::kNone);
    usleep(20'000);  // NCCL's launch
    timer.End(slot, 1 + i);
  }
  nf::RecordWriter w;
  timer.Finish(HostNs(), &w, 100'000'000);
  nf::LaunchTimerRecord state{};
  EXPECT_EQ(LaunchRecords(w, &state).size(), 3u);
  EXPECT_EQ(state.host_launches, 3u);
  EXPECT_GE(state.host_ns, 3u * 60'000);
  EXPECT_LT(state.host_ns, 3u * 20'000'000);  // the launch between is not counted
  // A new file counts afresh.
  ASSERT_TRUE(timer.Start(&why));
  EXPECT_EQ(timer.host_launches(), 0u);
  EXPECT_EQ(timer.host_ns(), 0u);
}

// What the caller knows of a launch's capture (NCCL says it of the launch's group) spares
// the driver call; only an unknown state is asked.
TEST(LaunchTimer, AsksTheDriverAboutCaptureOnlyWhenTheCallerDoesNotKnow) {
  StandInGpu gpu;
  LaunchTimer timer(&gpu);
  std::string why;
  ASSERT_TRUE(timer.Start(&why));
  EXPECT_EQ(timer.Begin(11, LaunchTimer::Capture::kYes), LaunchTimer::kNone);
  EXPECT_EQ(timer.untimed(), 1u);
  gpu.next_times = {1, 0};
  const uint32_t slot = timer.Begin(11, LaunchTimer::Capture::kNo);
  ASSERT_NE(slot, LaunchTimer::kNone);
  timer.End(slot, 1);
  EXPECT_EQ(gpu.capture_checks, 0);
  gpu.capturing = true;
  EXPECT_EQ(timer.Begin(11), LaunchTimer::kNone);
  EXPECT_EQ(gpu.capture_checks, 1);
  EXPECT_EQ(timer.untimed(), 2u);
}

TEST(LaunchTimer, CountsWhatItCannotTime) {
  StandInGpu gpu;
  LaunchTimer timer(&gpu);
  std::string why;
  ASSERT_TRUE(timer.Start(&why));
  gpu.capturing = true;
  EXPECT_EQ(timer.Begin(11), LaunchTimer::kNone);  // a graph's
  gpu.capturing = false;
  // Every slot in flight (kernels that never end): the next launch is not timed. From a
  // quarter of them in use, the timer asks to be collected before the next file write.
  for (uint32_t i = 0; i < LaunchTimer::kSlots; ++i) {
    EXPECT_EQ(timer.Crowded(), i >= LaunchTimer::kSlots / 4) << i;
    gpu.next_times = {1, 0};
    const uint32_t s = timer.Begin(11);
    ASSERT_NE(s, LaunchTimer::kNone);
    timer.End(s, i + 1);
  }
  gpu.next_times = {1, 0};
  EXPECT_EQ(timer.Begin(11), LaunchTimer::kNone);
  EXPECT_EQ(timer.untimed(), 2u);
  std::string gave_up;
  EXPECT_FALSE(timer.GaveUp(&gave_up));  // nothing refused: no reason to give up

  // A driver refusing every record gives up after kGiveUpAfter.
  StandInGpu refusing;
  LaunchTimer second(&refusing);
  ASSERT_TRUE(second.Start(&why));
  for (uint64_t i = 0; i < LaunchTimer::kGiveUpAfter; ++i) EXPECT_EQ(second.Begin(11), LaunchTimer::kNone);
  EXPECT_TRUE(second.GaveUp(&gave_up));
  EXPECT_FALSE(second.timing());
  nf::RecordWriter w;
  second.Collect(HostNs(), &w);
  nf::LaunchTimerRecord state{};
  LaunchRecords(w, &state);
  EXPECT_EQ(state.state, static_cast<uint32_t>(nf::LaunchTimerState::kFailed));
  EXPECT_EQ(state.untimed, LaunchTimer::kGiveUpAfter);
}

// COMMLENS_KERNEL_SAMPLE=N times 1 launch in N; the others are untimed on purpose, not
// counted as launches the timer could not time.
TEST(LaunchTimer, TimesOneLaunchInNWhenSampling) {
  StandInGpu gpu;
  LaunchTimer timer(&gpu);
  timer.SetSample(4);
  std::string why;
  ASSERT_TRUE(timer.Start(&why));
  int timed = 0;
  for (int i = 0; i < 12; ++i) {
    gpu.next_times = {1, 2};
    const uint32_t s = timer.Begin(11);
    if (s != LaunchTimer::kNone) ++timed;
    timer.End(s, static_cast<uint64_t>(i) + 1);
  }
  EXPECT_EQ(timed, 3);
  EXPECT_EQ(timer.untimed(), 0u);
}

// CUDA refused a slot's event (its context gone, a stream handle reused): the slot's events
// are made again at its next use. A launch of an earlier file is not written in the next.
TEST(LaunchTimer, RecoversFromRefusedEventsAndKeepsFilesApart) {
  StandInGpu gpu;
  LaunchTimer timer(&gpu);
  std::string why;
  ASSERT_TRUE(timer.Start(&why));
  gpu.next_times = {};  // the start event refused
  EXPECT_EQ(timer.Begin(11), LaunchTimer::kNone);
  const size_t events = gpu.time.size();
  gpu.next_times = {HostNs() + gpu.ahead - 2'000'000, HostNs() + gpu.ahead - 1'000'000};
  const uint32_t slot = timer.Begin(11);
  ASSERT_NE(slot, LaunchTimer::kNone);
  EXPECT_EQ(gpu.time.size(), events + 2);  // made again
  timer.End(slot, 7);
  ASSERT_TRUE(timer.Start(&why));  // a new file before the flusher saw it
  nf::RecordWriter w;
  timer.Collect(HostNs(), &w);
  nf::LaunchTimerRecord state{};
  EXPECT_TRUE(LaunchRecords(w, &state).empty());
  EXPECT_EQ(state.timed, 0u);
}

}  // namespace
}  // namespace commlens::recorder::launch_timer
