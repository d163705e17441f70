// A stand-in NCCL job for the `commlens record` tests: like NCCL, it loads the profiler
// plugin NCCL_PROFILER_PLUGIN names, then runs one communicator through the plugin's ABI
// (tests/recorder/fake_nccl.h) with a few all-reduces, and finalizes it.
//
//   fake_nccl_job [COLLECTIVES]   (default 3; rank and size from Open MPI when under mpirun)
#include <cstdio>
#include <cstdlib>

#define COMMLENS_PLUGIN_PATH std::getenv("NCCL_PROFILER_PLUGIN")
#include "recorder/fake_nccl.h"

int main(int argc, char** argv) {
  if (std::getenv("NCCL_PROFILER_PLUGIN") == nullptr) {
    std::fprintf(stderr, "fake_nccl_job: NCCL_PROFILER_PLUGIN is not set\n");
    return 2;
  }
  const int collectives = argc > 1 ? std::atoi(argv[1]) : 3;
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
    commlens::testing::FakeCollective c;
    c.seq = static_cast<uint64_t>(i);
    c.gpu_start = 1'000'000 + 100'000 * static_cast<uint64_t>(i);
    nccl.Collective(c);
  }
  return nccl.Finalize() == 0 ? 0 : 4;
}
