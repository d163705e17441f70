// The MPI transport. ctest runs it alone (an MPI singleton) and as
// `mpirun -np 2` (bench_mpi_np2), where the two processes really exchange data.
#include "bench/mpi_bootstrap.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>

namespace commlens::bench {
namespace {

int ExpectedWorld() {
  const char* size = std::getenv("OMPI_COMM_WORLD_SIZE");
  return size ? std::atoi(size) : 1;
}

// One test only: MPI can be initialized once per process.
TEST(MpiBootstrap, BroadcastsRankZerosIdAndCombinesResults) {
  ASSERT_TRUE(MpiSupportCompiled());
  auto boot = CreateMpiBootstrap();
  ASSERT_TRUE(boot.ok()) << boot.status().message();
  Bootstrap& b = **boot;
  EXPECT_EQ(b.size(), ExpectedWorld());
  EXPECT_EQ(b.transport(), "mpi");

  // As with the NCCL unique id: rank 0 fills 128 bytes (here with its pid), the others
  // receive them.
  const int64_t pid = getpid();
  std::vector<std::byte> id(128, std::byte{0});
  if (b.rank() == 0) std::memcpy(id.data(), &pid, sizeof pid);
  ASSERT_TRUE(b.Broadcast(id).ok());
  Result<std::vector<double>> pids = AllGatherDoubles(b, std::vector<double>{double(pid)});
  ASSERT_TRUE(pids.ok());
  int64_t root_pid = 0;
  std::memcpy(&root_pid, id.data(), sizeof root_pid);
  EXPECT_EQ(root_pid, static_cast<int64_t>((*pids)[0]));
  if (b.size() > 1) {
    EXPECT_NE((*pids)[0], (*pids)[1]);  // really separate processes
  }

  Result<int64_t> wrong = AllReduceSum(b, int64_t{b.rank() + 1});
  ASSERT_TRUE(wrong.ok());
  EXPECT_EQ(*wrong, int64_t{b.size()} * (b.size() + 1) / 2);
  Result<std::vector<std::string>> hosts = AllGatherStrings(b, std::string(b.rank() + 1, 'h'));
  ASSERT_TRUE(hosts.ok());
  ASSERT_EQ(hosts->size(), static_cast<size_t>(b.size()));
  EXPECT_EQ(hosts->back(), std::string(b.size(), 'h'));
  EXPECT_TRUE(b.Barrier().ok());
}

}  // namespace
}  // namespace commlens::bench
