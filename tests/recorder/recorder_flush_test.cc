// The flusher writes the trace without holding what init and finalize need. The trace
// goes into a pipe that nobody reads, a disk that stopped answering: the flusher is stuck
// in write(2), and still a second communicator's init and the first one's finalize
// return at once. Then the pipe is read, and the trace that comes out of it is whole.
//
// Its own executable: the first recording session of a process writes to COMMLENS_OUT
// itself (later ones add "-sN" to the name), and this test needs it to be the pipe.
#include <fcntl.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <fstream>
#include <future>
#include <thread>
#include <vector>

#include "importers/native/native_importer.h"
#include "recorder/fake_nccl.h"
#include "recorder/recorder_test_util.h"

namespace commlens::testing {
namespace {

using namespace std::chrono_literals;

int g_mask = 0;  // NCCL's process-wide activation mask

// True once the pipe is full, so that a writer with more to write is blocked. A pipe
// holds pages; only its first one may be partly filled (a write that does not fit merges
// only its tail into the last page).
bool WaitUntilFull(int fd, int capacity) {
  const int page = static_cast<int>(sysconf(_SC_PAGESIZE));
  for (int i = 0; i < 2000; ++i) {
    int queued = 0;
    if (ioctl(fd, FIONREAD, &queued) == 0 && queued > capacity - page) return true;
    usleep(5'000);
  }
  return false;
}

// Reads |fd| until the plugin closes its end.
void ReadToEnd(int fd, std::vector<char>* out) {
  fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
  char buf[65536];
  for (ssize_t n; (n = read(fd, buf, sizeof(buf))) != 0;) {
    if (n > 0) out->insert(out->end(), buf, buf + n);
    else if (errno != EINTR) break;
  }
}

TEST(RecorderFlushTest, AStuckDiskHoldsUpNeitherInitNorFinalize) {
  const std::string dir = FreshDir("stuck_disk");
  const std::string pipe_path = dir + "/stuck.cltrace";
  ASSERT_EQ(mkfifo(pipe_path.c_str(), 0600), 0);
  const int reader = open(pipe_path.c_str(), O_RDONLY | O_NONBLOCK);  // the plugin's open won't wait
  ASSERT_GE(reader, 0);
  const int capacity = fcntl(reader, F_SETPIPE_SZ, 2 * sysconf(_SC_PAGESIZE));  // full after a few ops
  ASSERT_GT(capacity, 0);

  RecorderEnv env{{"COMMLENS_OUT", pipe_path}, {"COMMLENS_FLUSH_INTERVAL_MS", "1"}};
  FakeNccl<5> first, second;
  ASSERT_EQ(first.Init(0xA1, "first", 1, 2, 0, &g_mask), 0);
  constexpr int kOps = 200;
  for (int i = 0; i < kOps; ++i) first.Collective(FakeCollective{});
  const bool full = WaitUntilFull(reader, capacity);

  // No assertion may end the test from here until the pipe is read: the plugin's exit
  // handler would wait for the blocked flusher forever.
  auto init = std::async(std::launch::async, [&] { return second.Init(0xA2, "second", 1, 2, 0, &g_mask); });
  const bool init_returned = init.wait_for(5s) == std::future_status::ready;
  auto finalize = std::async(std::launch::async, [&] { return first.Finalize(); });
  const bool finalize_returned = finalize.wait_for(5s) == std::future_status::ready;
  std::vector<char> bytes;
  std::thread drain(ReadToEnd, reader, &bytes);  // the disk answers again
  EXPECT_TRUE(full) << "the flusher never filled the pipe";
  EXPECT_TRUE(init_returned) << "init waited for the flusher's write";
  EXPECT_TRUE(finalize_returned) << "finalize waited for the flusher's write";
  const int init_result = init.get();
  EXPECT_EQ(init_result, 0);
  EXPECT_EQ(finalize.get(), 0);
  if (init_result == 0) {
    second.Collective(FakeCollective{});
    EXPECT_EQ(second.Finalize(), 0);  // the last one: writes the rest and closes the file
  }
  drain.join();
  close(reader);

  const std::string copy = dir + "/read.cltrace";
  std::ofstream(copy, std::ios::binary).write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  auto t = importers::ImportNativeTrace(copy);
  ASSERT_TRUE(t.ok()) << t.status().message();
  EXPECT_EQ(t->comms.size(), static_cast<size_t>(kOps + 1));
  EXPECT_EQ(t->groups.size(), 2u);
  EXPECT_EQ(t->stats.total(), 0u);
  EXPECT_FALSE(std::any_of(t->notes.begin(), t->notes.end(),
                           [](const std::string& n) { return n.find("no end record") != std::string::npos; }));
}

}  // namespace
}  // namespace commlens::testing
