// alltoall on every backend, `bench moe` and `bench jacobi` on a real GPU, in one process
// (label "gpu"; exits 77, skipped, without a GPU). One rank, so every exchange goes to
// itself through the backend's real path (NCCL, NVLink load/store windows, NVSHMEM puts);
// the multi-rank runs are scripts/device/exchange_bench.sh's. NVSHMEM cannot start twice
// in one process, so CMake runs each test in a process of its own (--gtest_filter), and
// the NVSHMEM backend has tests of its own (*OnNvshmem*), which exit 77 too, saying why,
// where NVSHMEM or this build's NVSHMEM plugin cannot be loaded.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>

#include "bench/driver.h"
#include "bench/gpu/nvshmem_library.h"
#include "bench/run_bench.h"
#include "bench/bench_session.h"
#include "bench/needs_gpu.h"

namespace commlens::bench {
namespace {

const auto* const kNeedsGpu =
    ::testing::AddGlobalTestEnvironment(new NeedsGpu("exchange_gpu_test"));

// Ends the test program as skipped (exit 77) unless the NVSHMEM backend loads.
void NeedsNvshmem() {
  Result<const commlens_nvshmem_api*> api = gpu::LoadNvshmem();
  if (api.ok()) return;
  std::fprintf(stderr, "exchange_gpu_test: %s; skipped\n", api.status().message().c_str());
  std::fflush(stderr);
  std::_Exit(77);
}

const std::vector<Backend> kNcclBackends = {Backend::kNccl, Backend::kNcclDevice};

std::unique_ptr<Session> Local() {
  Result<std::unique_ptr<Session>> s =
      StartSession(Launcher::kLocal, 0, std::chrono::milliseconds(60000), "test");
  EXPECT_TRUE(s.ok()) << s.status().message();
  return std::move(*s);
}

void ExpectAlltoallCorrect(const std::vector<Backend>& backends) {
  BenchConfig c;
  c.collectives = {model::CommOp::kAllToAll};
  c.backends = backends;
  c.min_bytes = 64;
  c.max_bytes = 8 << 20;
  c.step_factor = 8;
  c.iters = 5;
  c.warmup = 1;
  c.spin_up = std::chrono::milliseconds(0);
  Result<BenchReport> r = RunBench(c, "test", stdout);
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_EQ(r->collectives.size(), c.backends.size());
  for (const CollectiveResult& col : r->collectives) {
    EXPECT_EQ(col.in_place, col.backend == "nccl");
    ASSERT_FALSE(col.rows.empty()) << col.backend;
    for (const SizeResult& row : col.rows) {
      ASSERT_TRUE(row.out_of_place.wrong.has_value()) << col.backend;
      EXPECT_EQ(*row.out_of_place.wrong, 0) << col.backend << " " << row.size_bytes;
      EXPECT_GT(row.out_of_place.p50_us, 0) << col.backend;
    }
  }
}

TEST(ExchangeGpu, AlltoallOnEveryBackendIsCorrect) { ExpectAlltoallCorrect(kNcclBackends); }

TEST(ExchangeGpu, AlltoallOnNvshmemIsCorrect) {
  NeedsNvshmem();
  ExpectAlltoallCorrect({Backend::kNvshmem});
}

// The check catches a wrong exchange: with the corruption hook, rank 0's output has one
// wrong element per checked row on the device backends too.
TEST(ExchangeGpu, AlltoallCheckCatchesCorruptionOnTheDeviceApi) {
  BenchConfig c;
  c.collectives = {model::CommOp::kAllToAll};
  c.backends = {Backend::kNcclDevice};
  c.min_bytes = 1024;
  c.max_bytes = 1024;
  c.iters = 2;
  c.warmup = 0;
  c.spin_up = std::chrono::milliseconds(0);
  c.corrupt_element_for_test = 3;
  Result<BenchReport> r = RunBench(c, "test", nullptr);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->WrongTotal(), 1);
}

void ExpectMoeCorrect(const std::vector<Backend>& backends) {
  MoeConfig c;
  c.tokens = 512;
  c.hidden = 1024;
  c.experts = 32;
  c.topk = 4;
  c.imbalance = 0.5;
  c.iters = 5;
  c.warmup = 1;
  c.backends = backends;
  auto session = Local();
  Result<MoeReport> r = RunMoeOnGpus(c, *session);
  ASSERT_TRUE(r.ok()) << r.status().message();
  std::fputs(FormatMoeReport(*r).c_str(), stdout);
  ASSERT_EQ(r->backends.size(), c.backends.size());
  for (const MoeBackendResult& b : r->backends) {
    EXPECT_EQ(b.dispatch.wrong, std::optional<int64_t>(0)) << b.backend;
    EXPECT_EQ(b.combine.wrong, std::optional<int64_t>(0)) << b.backend;
    EXPECT_GT(b.dispatch.p50_us, 0);
    EXPECT_GT(b.combine.gbps, 0);
  }
  EXPECT_EQ(r->traffic.max_recv_tokens, 512);  // one rank: every token comes to itself once
}

TEST(ExchangeGpu, MoeOnEveryBackendIsCorrect) { ExpectMoeCorrect(kNcclBackends); }

TEST(ExchangeGpu, MoeOnNvshmemIsCorrect) {
  NeedsNvshmem();
  ExpectMoeCorrect({Backend::kNvshmem});
}

void ExpectJacobiMatchesTheCpuReference(const std::vector<JacobiVariant>& variants) {
  JacobiConfig c;
  c.nx = 1024;
  c.ny = 1024;
  c.iters = 50;
  c.warmup = 4;
  c.check_nx = 67;  // not a multiple of the 32-column segments
  c.check_ny = 45;
  c.check_iters = 31;  // odd: the graph variant runs 32 and is compared with 32
  c.variants = variants;
  auto session = Local();
  Result<JacobiReport> r = RunJacobiOnGpus(c, *session);
  ASSERT_TRUE(r.ok()) << r.status().message();
  std::fputs(FormatJacobiReport(*r).c_str(), stdout);
  EXPECT_GT(r->single_gpu_iteration_us, 0);
  ASSERT_EQ(r->variants.size(), variants.size());
  for (const JacobiVariantResult& v : r->variants) {
    EXPECT_EQ(v.wrong, std::optional<int64_t>(0)) << v.variant;
    EXPECT_EQ(v.max_abs_diff, 0) << v.variant;
    EXPECT_GT(v.efficiency, 0.3) << v.variant;  // one rank: the same work as one GPU
  }
}

TEST(ExchangeGpu, JacobiEveryVariantMatchesTheCpuReference) {
  ExpectJacobiMatchesTheCpuReference({JacobiVariant::kNccl, JacobiVariant::kNcclOverlap, JacobiVariant::kNcclGraph});
}

TEST(ExchangeGpu, JacobiOnNvshmemMatchesTheCpuReference) {
  NeedsNvshmem();
  ExpectJacobiMatchesTheCpuReference({JacobiVariant::kNvshmem, JacobiVariant::kNvshmemNb});
}

}  // namespace
}  // namespace commlens::bench
