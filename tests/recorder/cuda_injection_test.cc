// The plugin as CUDA's injection library (COMMLENS_CUPTI=1, CUDA_INJECTION64_PATH): CUDA
// calls InitializeInjection from cuInit, which starts the process's recording session.
// Here a child process calls it as CUDA would (no GPU: CUPTI is absent, so the tracer
// cannot start), then plays NCCL or not, and exits; the parent reads what is left. The
// kernels themselves need the GPU machine (cuda_injection_gpu_test).
#include <dlfcn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>

#include "importers/native/native_importer.h"
#include "recorder/fake_nccl.h"
#include "recorder/recorder_test_util.h"

namespace commlens::testing {
namespace {

void InitializeInjectionAsCudaDoes() {
  auto entry = reinterpret_cast<int (*)()>(dlsym(PluginLibrary(), "InitializeInjection"));
  if (entry == nullptr || entry() != 1) _exit(5);
}

// Runs |body| in a child with the tracer asked for (and no CUPTI to load), then exit().
template <typename Body>
void RunChild(const std::string& dir, bool cupti, Body body) {
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    setenv("COMMLENS_OUT", dir.c_str(), 1);
    setenv("COMMLENS_FLUSH_INTERVAL_MS", "20", 1);
    setenv("RANK", "2", 1);
    setenv("WORLD_SIZE", "4", 1);
    if (cupti) {
      setenv("COMMLENS_CUPTI", "1", 1);
      setenv("COMMLENS_CUPTI_LIBRARY", "/nonexistent/libcupti.so.13", 1);
    }
    InitializeInjectionAsCudaDoes();
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
