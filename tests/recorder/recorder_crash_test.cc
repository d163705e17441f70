// A job killed with SIGKILL keeps its trace up to the last flush: a child process loads
// the plugin, records collectives, waits past a flush, tells the parent, records more,
// and is killed; the parent reads what the file holds. A job that exits without
// destroying its communicators (common with PyTorch) loses nothing.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>

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

TEST(RecorderCrashTest, SigkillLeavesAReadableTraceUpToTheLastFlush) {
  const std::string dir = FreshDir("crash");
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    close(fds[0]);
    RunChild(dir, fds[1]);
  }
  close(fds[1]);
  char ok = 0;
  ASSERT_EQ(read(fds[0], &ok, 1), 1) << "child failed before recording";
  close(fds[0]);
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

}  // namespace
}  // namespace commlens::testing
