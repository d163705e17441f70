// A job killed with SIGKILL keeps its trace up to the last flush: a child process loads
// the plugin, records collectives, waits past a flush, tells the parent, records more,
// and is killed; the parent reads what the file holds. A job that exits without
// destroying its communicators (common with PyTorch) loses nothing, and NCCL's threads
// that go on calling the plugin while the process exits find it intact (the sanitizer
// builds of scripts/tsan.sh are the ones that see a use after free).
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <ctime>
#include <thread>

#include "importers/native/native_importer.h"
#include "recorder/fake_nccl.h"
#include "recorder/recorder_test_util.h"

namespace commlens::testing {
namespace {

constexpr int kFlushedOps = 10;
constexpr int kLateOps = 5;

[[noreturn]] void RunChild(const std::string& dir, int ready_fd) {
  setenv("COMMLENS_OUT", dir.c_str(), 1);
  setenv("COMMLENS_FLUSH_INTERVAL_MS", "50", 1);
  setenv("RANK", "3", 1);
  static int mask = 0;
  FakeNccl<5> nccl;
  if (nccl.Init(0xDEAD, "killed", 1, 4, 3, &mask) != 0) _exit(2);
  FakeCollective c;
  for (int i = 0; i < kFlushedOps; ++i) {
    c.seq = static_cast<uint64_t>(i);
    nccl.Collective(c);
  }
  usleep(300'000);  // several flush intervals
  for (int i = 0; i < kLateOps; ++i) {
    c.seq = static_cast<uint64_t>(kFlushedOps + i);
    nccl.Collective(c);
  }
  char ok = 1;
  if (write(ready_fd, &ok, 1) != 1) _exit(3);
  for (;;) pause();  // never finalizes: the parent kills it
}

// Forks a child that runs |child_body| with the write end of a pipe and never returns;
// returns its pid once it has written its ready byte there, or -1 when it failed first.
template <typename Body>
pid_t StartRecordingChild(Body&& child_body) {
  int fds[2];
  if (pipe(fds) != 0) return -1;
  const pid_t child = fork();
  if (child < 0) return -1;
  if (child == 0) {
    close(fds[0]);
    child_body(fds[1]);
    _exit(4);
  }
  close(fds[1]);
  char ok = 0;
  const bool ready = read(fds[0], &ok, 1) == 1;
  close(fds[0]);
  return ready ? child : -1;
}

TEST(RecorderCrashTest, SigkillLeavesAReadableTraceUpToTheLastFlush) {
  const std::string dir = FreshDir("crash");
  const pid_t child = StartRecordingChild([&](int ready_fd) { RunChild(dir, ready_fd); });
  ASSERT_GT(child, 0) << "child failed before recording";
  ASSERT_EQ(kill(child, SIGKILL), 0);
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFSIGNALED(status));
  EXPECT_EQ(WTERMSIG(status), SIGKILL);

  std::vector<std::string> files = TracesIn(dir);
  ASSERT_EQ(files.size(), 1u);
  auto t = importers::ImportNativeTrace(files[0]);
  ASSERT_TRUE(t.ok()) << t.status().message();
  EXPECT_EQ(t->rank, 3);
  // Everything before the pause was flushed; what came after may or may not have been.
  ASSERT_GE(t->comms.size(), static_cast<size_t>(kFlushedOps));
  EXPECT_LE(t->comms.size(), static_cast<size_t>(kFlushedOps + kLateOps));
  for (int i = 0; i < kFlushedOps; ++i) {
    EXPECT_EQ(t->comms.seq[i], i);
    EXPECT_EQ(t->comms.end[i] - t->comms.start[i], 1000);
  }
  EXPECT_TRUE(std::any_of(t->notes.begin(), t->notes.end(),
                          [](const std::string& n) { return n.find("no end record") != std::string::npos; }));
}

int64_t RealtimeNowNs() {
  timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return int64_t{ts.tv_sec} * 1'000'000'000 + ts.tv_nsec;
}

// A rank stuck outside NCCL (data loading, a host deadlock) records no event, yet its
// flushes go on writing alive marks: the trace shows the process ran until it was killed,
// which tells a hang from a trace that merely ends (analysis/hangs.cc).
TEST(RecorderCrashTest, AStuckProcessStillShowsItRan) {
  const std::string dir = FreshDir("stuck");
  const pid_t child = StartRecordingChild([&](int ready_fd) {
    setenv("COMMLENS_OUT", dir.c_str(), 1);
    setenv("COMMLENS_FLUSH_INTERVAL_MS", "50", 1);
    static int mask = 0;
    FakeNccl<5> nccl;
    if (nccl.Init(0xBEEF, "stuck", 1, 2, 0, &mask) != 0) _exit(2);
    nccl.Collective(FakeCollective{});
    char ok = 1;
    if (write(ready_fd, &ok, 1) != 1) _exit(3);
    for (;;) pause();  // stuck: no NCCL call from here on
  });
  ASSERT_GT(child, 0) << "child failed before recording";
  const int64_t ready = RealtimeNowNs();
  usleep(400'000);  // eight flush intervals
  const int64_t killed = RealtimeNowNs();
  ASSERT_EQ(kill(child, SIGKILL), 0);
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  std::vector<std::string> files = TracesIn(dir);
  ASSERT_EQ(files.size(), 1u);
  auto t = importers::ImportNativeTrace(files[0]);
  ASSERT_TRUE(t.ok()) << t.status().message();
  ASSERT_NE(t->alive_until, model::kNoTime);
  EXPECT_GE(t->alive_until, ready + 250'000'000);  // flushed while stuck
  EXPECT_LE(t->alive_until, killed + 10'000'000);
}

TEST(RecorderCrashTest, ExitWithoutFinalizeFlushesEverything) {
  const std::string dir = FreshDir("exit");
  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    setenv("COMMLENS_OUT", dir.c_str(), 1);
    setenv("COMMLENS_FLUSH_INTERVAL_MS", "3600000", 1);  // only the exit flush writes
    static int mask = 0;
    FakeNccl<5> nccl;
    if (nccl.Init(0xE1, "exit", 1, 2, 0, &mask) != 0) _exit(2);
    for (int i = 0; i < 7; ++i) nccl.Collective(FakeCollective{});
    std::exit(0);  // no finalize: the plugin's exit handler writes the rest
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  ASSERT_EQ(WEXITSTATUS(status), 0);
  std::vector<std::string> files = TracesIn(dir);
  ASSERT_EQ(files.size(), 1u);
  auto t = importers::ImportNativeTrace(files[0]);
  ASSERT_TRUE(t.ok()) << t.status().message();
  EXPECT_EQ(t->comms.size(), 7u);
  EXPECT_FALSE(std::any_of(t->notes.begin(), t->notes.end(),
                           [](const std::string& n) { return n.find("no end record") != std::string::npos; }));
}

// waitpid with a limit, so that a child stuck in exit fails the test instead of hanging
// it; the child is killed then.
bool WaitWithTimeout(pid_t child, int seconds, int* status) {
  for (int i = 0; i < seconds * 100; ++i) {
    pid_t r = waitpid(child, status, WNOHANG);
    if (r == child) return true;
    if (r < 0) return false;
    usleep(10'000);
  }
  kill(child, SIGKILL);
  waitpid(child, status, 0);
  return false;
}

// NCCL's threads with work in flight while the process exits. One enqueues ops (CollApi
// and Coll start and stop) as the application's thread does; the other reports kernel
// channels and proxy steps of the latest op as the proxy thread does. Neither looks at
// the activation mask (NCCL reports what it enqueued before the mask changed), and
// neither stops until the process is gone.
std::atomic<uint64_t> g_enqueued{0};
std::atomic<void*> g_last_op{nullptr};

void EnqueueThread(FakeNccl<5>* nccl) {
  for (uint64_t i = 0;; ++i) {
    void* api = nccl->Start(abi::kCollApi, nullptr, [](auto& d) { d.collApi.func = "AllReduce"; });
    void* op = nccl->Start(abi::kColl, api, [&](auto& d) {
      d.coll.func = "AllReduce";
      d.coll.datatype = "ncclFloat32";
      d.coll.count = 1;
      d.coll.seqNumber = i;
      d.coll.nChannels = 1;
    });
    nccl->Stop(op);
    nccl->Stop(api);
    if (op != nullptr) g_last_op.store(op, std::memory_order_release);
    g_enqueued.fetch_add(1, std::memory_order_relaxed);
  }
}

void ProxyThread(FakeNccl<5>* nccl) {
  for (uint64_t t = 1;; ++t) {
    void* op = g_last_op.load(std::memory_order_acquire);
    void* kernel = nccl->Start(abi::kKernelCh, op, [&](auto& d) { d.kernelCh.pTimer = 1'000'000 + t; });
    void* proxy = nccl->Start(abi::kProxyOp, op, [](auto& d) {
      d.proxyOp.pid = static_cast<int32_t>(getpid());
      d.proxyOp.nSteps = 1;
      d.proxyOp.isSend = 1;
    });
    void* step = nccl->Start(abi::kProxyStep, proxy, [](auto& d) { d.proxyStep.step = 0; });
    abi::StateArgs a{};
    a.proxyStep.transSize = 64;
    nccl->Record(step, abi::kProxyStepSendWait, &a);
    nccl->Stop(step);
    nccl->Stop(proxy);
    a.kernelCh.pTimer = 1'000'100 + t;
    nccl->Record(kernel, abi::kKernelChStop, &a);
    nccl->Stop(kernel);
  }
}

[[noreturn]] void ExitWhileNcclThreadsRun(const std::string& dir) {
  setenv("COMMLENS_OUT", dir.c_str(), 1);
  setenv("COMMLENS_FLUSH_INTERVAL_MS", "5", 1);
  setenv("COMMLENS_BUFFER_EVENTS", "256", 1);  // small pools: a sanitizer sees a freed one
  // Registered before the plugin is loaded, so it runs after the plugin's own exit work
  // (exit runs handlers last-registered first): the process lingers in exit while NCCL's
  // threads go on calling in, as it does while CUDA and other libraries tear down.
  std::atexit([] { usleep(200'000); });
  static int mask = 0;
  static FakeNccl<5>* nccl = new FakeNccl<5>;  // never freed: the threads outlive main
  if (nccl->Init(0xE2, "late", 1, 2, 0, &mask) != 0) _exit(2);
  std::thread(EnqueueThread, nccl).detach();
  std::thread(ProxyThread, nccl).detach();
  while (g_enqueued.load(std::memory_order_relaxed) < 200) usleep(1'000);
  std::exit(0);  // no finalize, threads still running
}

TEST(RecorderCrashTest, ExitWhileNcclThreadsStillCallIn) {
  const std::string dir = FreshDir("exit_race");
  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) ExitWhileNcclThreadsRun(dir);
  int status = 0;
  ASSERT_TRUE(WaitWithTimeout(child, 60, &status)) << "the child hung in exit";
  ASSERT_TRUE(WIFEXITED(status)) << "child ended by signal " << WTERMSIG(status);
  ASSERT_EQ(WEXITSTATUS(status), 0) << "the sanitizer's report is in the test's output";
  std::vector<std::string> files = TracesIn(dir);
  ASSERT_EQ(files.size(), 1u);
  auto t = importers::ImportNativeTrace(files[0]);
  ASSERT_TRUE(t.ok()) << t.status().message();
  EXPECT_GE(t->comms.size(), 1u);
  EXPECT_FALSE(std::any_of(t->notes.begin(), t->notes.end(),
                           [](const std::string& n) { return n.find("no end record") != std::string::npos; }));
}

}  // namespace
}  // namespace commlens::testing
