// A stand-in NCCL job for the `commlens record` tests: like NCCL, it loads the profiler
// plugin NCCL_PROFILER_PLUGIN names, then runs one communicator through the plugin's ABI
// (tests/recorder/fake_nccl.h) with a few all-reduces, and finalizes it.
//
//   fake_nccl_job [COLLECTIVES] [--gap-ms MS] [--late-at K MS] [--wait-at K MS]
//
// COLLECTIVES: how many (default 3); rank and size come from Open MPI's variables when
// set. --gap-ms: a pause outside NCCL between collectives. A hang, on one rank each:
// --late-at: the rank stops MS before collective K, outside NCCL (the rank that is late);
// --wait-at: collective K's kernel waits MS for it (a rank waiting in the collective).
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

#define COMMLENS_PLUGIN_PATH std::getenv("NCCL_PROFILER_PLUGIN")
#include "recorder/fake_nccl.h"

namespace {

struct Hang {
  int at = -1;  // the collective, -1: none
  long ms = 0;
};

}  // namespace

int main(int argc, char** argv) {
  if (std::getenv("NCCL_PROFILER_PLUGIN") == nullptr) {
    std::fprintf(stderr, "fake_nccl_job: NCCL_PROFILER_PLUGIN is not set\n");
    return 2;
  }
  int collectives = 3;
  long gap_ms = 0;
  Hang late, wait;
  for (int i = 1; i < argc; ++i) {
    const bool two = i + 2 < argc;
    if (std::strcmp(argv[i], "--gap-ms") == 0 && i + 1 < argc) {
      gap_ms = std::atol(argv[++i]);
    } else if ((std::strcmp(argv[i], "--late-at") == 0 || std::strcmp(argv[i], "--wait-at") == 0) && two) {
      Hang& h = argv[i][2] == 'l' ? late : wait;
      h.at = std::atoi(argv[i + 1]);
      h.ms = std::atol(argv[i + 2]);
      i += 2;
    } else if (i == 1 && argv[i][0] != '-') {
      collectives = std::atoi(argv[i]);
    } else {
      std::fprintf(stderr, "fake_nccl_job: unknown argument %s\n", argv[i]);
      return 2;
    }
  }
  const char* rank_text = std::getenv("OMPI_COMM_WORLD_RANK");
  const char* size_text = std::getenv("OMPI_COMM_WORLD_SIZE");
  const int rank = rank_text ? std::atoi(rank_text) : 0;
  const int size = size_text ? std::atoi(size_text) : 1;
  static int mask = 0;  // NCCL's process-wide event mask
  commlens::testing::FakeNccl<5> nccl;
  if (!nccl.loaded() || nccl.Init(0xC0FFEE, "world", 1, size, rank, &mask) != 0) {
    std::fprintf(stderr, "fake_nccl_job: the plugin did not start\n");
    return 3;
  }
  for (int i = 0; i < collectives; ++i) {
    if (i > 0 && gap_ms > 0) usleep(static_cast<useconds_t>(gap_ms * 1000));
    if (i == late.at) usleep(static_cast<useconds_t>(late.ms * 1000));
    commlens::testing::FakeCollective c;
    c.seq = static_cast<uint64_t>(i);
    c.gpu_start = 1'000'000 + 100'000 * static_cast<uint64_t>(i);
    if (i == wait.at) c.wait_us = wait.ms * 1000;
    nccl.Collective(c);
  }
  return nccl.Finalize() == 0 ? 0 : 4;
}
