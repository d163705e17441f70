// The plugin as CUDA's injection library (COMMLENS_CUPTI=1, CUDA_INJECTION64_PATH): CUDA
// calls InitializeInjection from cuInit, which starts the process's recording session.
// Here a child process calls it as CUDA would (no GPU: CUPTI is absent, so the tracer
// cannot start), then plays NCCL or not, and exits; the parent reads what is left. The
// kernels themselves need the GPU machine (cuda_injection_gpu_test).
#include <dlfcn.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <future>
#include <iterator>

#include "importers/native/native_importer.h"
#include "native_format/format.h"
#include "native_format/record_reader.h"
#include "recorder/fake_nccl.h"
#include "recorder/recorder_test_util.h"

namespace commlens::testing {
namespace {

void InitializeInjectionAsCudaDoes() {
  auto entry = reinterpret_cast<int (*)()>(dlsym(PluginLibrary(), "InitializeInjection"));
  if (entry == nullptr || entry() != 1) _exit(5);
}

// In a child: the environment of rank 2 of 4 under `record`, with the tracer asked for
// or not (and no CUPTI to load), then CUDA's init.
void InitAsAnInjectedRank(const std::string& out, const char* flush_ms, bool cupti) {
  setenv("COMMLENS_OUT", out.c_str(), 1);
  setenv("COMMLENS_FLUSH_INTERVAL_MS", flush_ms, 1);
  setenv("RANK", "2", 1);
  setenv("WORLD_SIZE", "4", 1);
  if (cupti) {
    setenv("COMMLENS_CUPTI", "1", 1);
    setenv("COMMLENS_CUPTI_LIBRARY", "/nonexistent/libcupti.so.13", 1);
  }
  InitializeInjectionAsCudaDoes();
}

// Runs |body| in such a child, then exit().
template <typename Body>
void RunChild(const std::string& dir, bool cupti, Body body) {
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    InitAsAnInjectedRank(dir, "20", cupti);
    body();
    std::exit(0);
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  ASSERT_EQ(WEXITSTATUS(status), 0);
}

bool HasNote(const model::RankTrace& t, std::string_view text) {
  return std::any_of(t.notes.begin(), t.notes.end(), [&](const std::string& n) { return n.find(text) != n.npos; });
}

// A process that initializes CUDA and never runs a kernel or NCCL (a compile worker, a
// tool probing the GPU) writes nothing, though its session ran until exit.
TEST(CudaInjectionTest, AProcessThatRanNothingLeavesNoFile) {
  const std::string dir = FreshDir("inject_nothing");
  RunChild(dir, true, [] { usleep(100'000); });  // several flushes
  EXPECT_TRUE(TracesIn(dir).empty());
}

// NCCL's inits join the session CUDA started: one file for the process, whatever the
// number of communicators and finalizes, which says the ABI NCCL loaded it through; the
// session goes on after the last finalize and ends at exit.
TEST(CudaInjectionTest, NcclJoinsTheSessionCudaStarted) {
  const std::string dir = FreshDir("inject_nccl");
  RunChild(dir, true, [] {
    usleep(50'000);
    static int mask = 0;
    for (uint64_t hash : {0xA1u, 0xA2u}) {
      FakeNccl<5> nccl;
      if (nccl.Init(hash, "joined", 1, 4, 2, &mask) != 0) _exit(2);
      for (int i = 0; i < 3; ++i) nccl.Collective(FakeCollective{});
      if (nccl.Finalize() != 0) _exit(3);
    }
    usleep(50'000);
  });
  const std::vector<std::string> files = TracesIn(dir);
  ASSERT_EQ(files.size(), 1u);
  auto t = importers::ImportNativeTrace(files[0]);
  ASSERT_TRUE(t.ok()) << t.status().message();
  EXPECT_EQ(t->rank, 2);
  EXPECT_EQ(t->comms.size(), 6u);
  EXPECT_EQ(t->groups.size(), 2u);
  EXPECT_TRUE(HasNote(*t, "NCCL profiler ABI v5")) << ::testing::PrintToString(t->notes);
  EXPECT_TRUE(HasNote(*t, "the CUPTI tracer could not start"));
  EXPECT_FALSE(HasNote(*t, "no end record"));
  // Timed by NCCL's kernel events, put back as neither CUPTI nor a CUDA driver times them.
  for (uint8_t flags : t->comms.flags) EXPECT_FALSE(flags & model::kCommNoGpuTiming);
}

// Who the process is comes from the launcher's variables when NCCL joins: a program that
// sets them after initializing CUDA gets its rank in the record and, when the file is not
// made yet, in its name.
TEST(CudaInjectionTest, TheRankIsReadAgainWhenNcclJoins) {
  const std::string dir = FreshDir("inject_rank_later");
  RunChild(dir, true, [] {
    setenv("RANK", "3", 1);  // was 2 at CUDA's init
    static int mask = 0;
    FakeNccl<5> nccl;
    if (nccl.Init(0xF1, "later", 1, 4, 3, &mask) != 0) _exit(2);
    nccl.Collective(FakeCollective{});
    if (nccl.Finalize() != 0) _exit(3);
  });
  const std::vector<std::string> files = TracesIn(dir);
  ASSERT_EQ(files.size(), 1u);
  EXPECT_NE(files[0].find("rank3."), std::string::npos) << files[0];
  auto t = importers::ImportNativeTrace(files[0]);
  ASSERT_TRUE(t.ok()) << t.status().message();
  EXPECT_EQ(t->rank, 3);
  EXPECT_EQ(t->comms.size(), 1u);
}

// The capture window counts from NCCL's first init, as in a session NCCL starts: a
// window of 0.3 s that would have closed while the process loaded still records NCCL's ops.
TEST(CudaInjectionTest, TheCaptureWindowCountsFromNcclsFirstInit) {
  const std::string dir = FreshDir("inject_window");
  setenv("COMMLENS_CAPTURE_DURATION_S", "0.3", 1);
  RunChild(dir, true, [] {
    usleep(500'000);  // loading, past the window as counted from CUDA's init
    static int mask = 0;
    FakeNccl<5> nccl;
    if (nccl.Init(0xC1, "late", 1, 4, 2, &mask) != 0) _exit(2);
    for (int i = 0; i < 3; ++i) nccl.Collective(FakeCollective{});
    if (nccl.Finalize() != 0) _exit(3);
  });
  unsetenv("COMMLENS_CAPTURE_DURATION_S");
  const std::vector<std::string> files = TracesIn(dir);
  ASSERT_EQ(files.size(), 1u);
  auto t = importers::ImportNativeTrace(files[0]);
  ASSERT_TRUE(t.ok()) << t.status().message();
  EXPECT_EQ(t->comms.size(), 3u);
}

// Alive marks say when the process's collectives last progressed (what `record
// --prometheus` ages): while a communicator lives; after the last finalize, with no
// collective to wait for, they carry no progress, so a process that goes on running
// kernels is not taken for a stuck rank.
TEST(CudaInjectionTest, AliveMarksCarryNoProgressAfterTheLastFinalize) {
  const std::string dir = FreshDir("inject_alive");
  RunChild(dir, true, [] {
    static int mask = 0;
    FakeNccl<5> nccl;
    if (nccl.Init(0xD1, "alive", 1, 4, 2, &mask) != 0) _exit(2);
    nccl.Collective(FakeCollective{});
    usleep(100'000);  // flushes at 20 ms: marks with progress
    if (nccl.Finalize() != 0) _exit(3);
    usleep(100'000);  // marks without
  });
  const std::vector<std::string> files = TracesIn(dir);
  ASSERT_EQ(files.size(), 1u);
  std::ifstream in(files[0], std::ios::binary);
  const std::vector<uint8_t> bytes{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  namespace nf = native_format;
  nf::RecordReader reader(bytes, sizeof(nf::FileHeader));
  nf::RecordView r;
  std::vector<int64_t> progress;  // each alive mark's, in order
  while (reader.Next(&r) == nf::ReadStatus::kRecord) {
    nf::MarkRecord m;
    if (r.type == static_cast<uint16_t>(nf::RecordType::kMark) && nf::DecodePayload(r, &m) &&
        m.what == static_cast<uint32_t>(nf::MarkKind::kAlive))
      progress.push_back(m.last_progress_ns);
  }
  ASSERT_GE(progress.size(), 4u);
  EXPECT_GT(progress.front(), 0);
  EXPECT_EQ(progress.back(), 0);
  EXPECT_TRUE(std::is_partitioned(progress.begin(), progress.end(), [](int64_t p) { return p > 0; }));
}

// NCCL's init never waits for the disk in a session CUDA started either: joining it only
// queues, and the flusher makes the file. Here the file is a pipe nobody opens yet (a disk
// that stopped answering), so the flusher is stuck making it; the inits still return at
// once, and once the pipe is read the trace is whole.
TEST(CudaInjectionTest, AStuckDiskHoldsUpNoInitThatJoins) {
  const std::string dir = FreshDir("inject_stuck_disk");
  const std::string pipe_path = dir + "/stuck.cltrace";
  ASSERT_EQ(mkfifo(pipe_path.c_str(), 0600), 0);
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    InitAsAnInjectedRank(pipe_path, "5", true);
    static int mask = 0;
    static FakeNccl<5> first, second;
    using namespace std::chrono_literals;
    auto join = std::async(std::launch::async, [] { return first.Init(0xE1, "first", 1, 2, 0, &mask); });
    if (join.wait_for(1s) != std::future_status::ready || join.get() != 0) _exit(10);
    for (int i = 0; i < 5; ++i) first.Collective(FakeCollective{});
    usleep(100'000);  // the flusher is stuck opening the pipe
    auto again = std::async(std::launch::async, [] { return second.Init(0xE2, "second", 1, 2, 0, &mask); });
    if (again.wait_for(1s) != std::future_status::ready || again.get() != 0) _exit(11);
    second.Collective(FakeCollective{});
    std::exit(0);  // the exit handler waits for the flusher: until the pipe is opened
  }
  usleep(3'000'000);  // past the child's checks
  // The disk answers again: the flusher's open returns, and the trace (a few KiB) fits the
  // pipe, so the child ends before it is read.
  const int reader = open(pipe_path.c_str(), O_RDONLY | O_NONBLOCK);
  ASSERT_GE(reader, 0);
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  std::vector<char> bytes;
  char buf[65536];
  for (ssize_t n; (n = read(reader, buf, sizeof(buf))) > 0;) bytes.insert(bytes.end(), buf, buf + n);
  close(reader);
  ASSERT_TRUE(WIFEXITED(status));
  ASSERT_EQ(WEXITSTATUS(status), 0) << "10: the joining init waited for the disk; 11: the next init did";
  const std::string copy = dir + "/read.cltrace";
  std::ofstream(copy, std::ios::binary).write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  auto t = importers::ImportNativeTrace(copy);
  ASSERT_TRUE(t.ok()) << t.status().message();
  EXPECT_EQ(t->comms.size(), 6u);
  EXPECT_EQ(t->groups.size(), 2u);
  EXPECT_FALSE(HasNote(*t, "no end record"));
}

// Without the tracer asked for, the injection does nothing: NCCL's init starts the
// session, and its last finalize ends it, as without the injection.
TEST(CudaInjectionTest, WithoutTheTracerNcclStartsTheSessionAsEver) {
  const std::string dir = FreshDir("inject_no_cupti");
  RunChild(dir, false, [] {
    static int mask = 0;
    for (uint64_t hash : {0xB1u, 0xB2u}) {
      FakeNccl<5> nccl;
      if (nccl.Init(hash, "alone", 1, 4, 2, &mask) != 0) _exit(2);
      nccl.Collective(FakeCollective{});
      if (nccl.Finalize() != 0) _exit(3);
    }
  });
  EXPECT_EQ(TracesIn(dir).size(), 2u);  // a session per init: .s1 for the second
}

}  // namespace
}  // namespace commlens::testing
