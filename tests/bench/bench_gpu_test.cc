// The benchmark on real GPUs (label "gpu"; exits 77, skipped, without one). Runs in one
// process over every visible GPU.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>

#include "bench/bench_json.h"
#include "bench/driver.h"
#include "bench/errors.h"
#include "bench/run_bench.h"
#include "bench/needs_gpu.h"

namespace commlens::bench {
namespace {

const auto* const kNeedsGpu =
    ::testing::AddGlobalTestEnvironment(new NeedsGpu("bench_gpu_test"));

BenchConfig Small(std::vector<model::CommOp> ops) {
  BenchConfig c;
  c.collectives = std::move(ops);
  c.min_bytes = 1024;
  c.max_bytes = 4 << 20;
  c.step_factor = 4;
  c.iters = 5;
  c.warmup = 1;
  c.timeout = std::chrono::milliseconds(120000);
  return c;
}

std::vector<model::CommOp> AllOps() {
  std::vector<model::CommOp> ops;
  for (const CollectiveSpec& s : Collectives()) ops.push_back(s.op);
  return ops;
}

// Every checked placement of every row has 0 wrong elements and sane timings.
void ExpectCorrect(const BenchReport& report) {
  for (const CollectiveResult& c : report.collectives) {
    const CollectiveSpec* spec = FindCollective(c.name);
    ASSERT_NE(spec, nullptr);
    EXPECT_FALSE(c.rows.empty()) << c.name;
    for (const SizeResult& r : c.rows) {
      ASSERT_TRUE(r.out_of_place.wrong.has_value()) << c.name;
      EXPECT_EQ(*r.out_of_place.wrong, 0) << c.name << " " << r.size_bytes;
      EXPECT_EQ(r.in_place.wrong.has_value(), spec->in_place_verifiable) << c.name;
      EXPECT_EQ(r.in_place.wrong.value_or(0), 0) << c.name << " " << r.size_bytes;
      EXPECT_GT(r.out_of_place.time_us, 0) << c.name;
      EXPECT_GT(r.out_of_place.p50_us, 0) << c.name;
      EXPECT_LE(r.out_of_place.p50_us, r.out_of_place.p99_us) << c.name;
      if (r.size_bytes > 0) {
        EXPECT_GT(r.out_of_place.algbw_gbps, 0) << c.name;
      }
    }
  }
}

TEST(BenchGpu, EveryCollectiveIsCorrect) {
  Result<BenchReport> r = RunBench(Small(AllOps()), "test", stdout);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->collectives.size(), 7u);
  EXPECT_EQ(r->run.nranks, VisibleGpuCount());
  ExpectCorrect(*r);
}

TEST(BenchGpu, ACorruptedResultIsCounted) {
  BenchConfig c = Small({model::CommOp::kAllReduce, model::CommOp::kAllGather,
                         model::CommOp::kReduceScatter});
  c.corrupt_element_for_test = 3;  // rank 0, element 3, after each check op
  Result<BenchReport> r = RunBench(c, "test", stdout);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_GT(r->WrongTotal(), 0);
  for (const CollectiveResult& col : r->collectives) {
    for (const SizeResult& row : col.rows) {
      if (row.recv_bytes / 4 <= 3) continue;  // too small to hold element 3
      EXPECT_EQ(row.out_of_place.wrong, 1) << col.name << " " << row.size_bytes;
      EXPECT_EQ(row.in_place.wrong, 1) << col.name << " " << row.size_bytes;
    }
  }
}

TEST(BenchGpu, DatatypesAndOperatorsAreExact) {
  struct Case {
    DataType type;
    RedOp op;
  };
  // One NCCL setup per case, so a few cases that cover the narrow floats, the integers
  // and every operator.
  for (Case k : {Case{DataType::kBfloat16, RedOp::kSum}, Case{DataType::kHalf, RedOp::kProd},
                 Case{DataType::kInt8, RedOp::kMin}, Case{DataType::kFp8E4M3, RedOp::kSum},
                 Case{DataType::kUint64, RedOp::kMax}}) {
    BenchConfig c = Small({model::CommOp::kAllReduce, model::CommOp::kReduceScatter,
                           model::CommOp::kReduce, model::CommOp::kAllGather});
    c.max_bytes = 256 << 10;
    c.dtype = k.type;
    c.op = k.op;
    Result<BenchReport> r = RunBench(c, "test", nullptr);
    ASSERT_TRUE(r.ok()) << Info(k.type).name << ": " << r.status().message();
    SCOPED_TRACE(std::string(Info(k.type).name) + " " + std::string(RedOpName(k.op)));
    ExpectCorrect(*r);
  }
}

TEST(BenchGpu, GraphModeIsCorrect) {
  BenchConfig c = Small({model::CommOp::kAllReduce, model::CommOp::kSendRecv,
                         model::CommOp::kAllToAll});
  c.graph = true;
  Result<BenchReport> r = RunBench(c, "test", stdout);
  ASSERT_TRUE(r.ok()) << r.status().message();
  ExpectCorrect(*r);
}

TEST(BenchGpu, WritesTheJsonItReports) {
  BenchConfig c = Small({model::CommOp::kBroadcast});
  c.root = VisibleGpuCount() - 1;
  c.json_path = (std::filesystem::temp_directory_path() / "commlens_bench_gpu_test.json");
  Result<BenchReport> r = RunBench(c, "test", nullptr);
  ASSERT_TRUE(r.ok()) << r.status().message();
  Result<BenchReport> back = ReadBenchReport(c.json_path);
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(back->collectives, r->collectives);
  EXPECT_EQ(back->run.gpus.size(), static_cast<size_t>(VisibleGpuCount()));
  EXPECT_FALSE(back->run.nccl_version.empty());
  EXPECT_EQ(back->collectives[0].root, c.root);
  std::filesystem::remove(c.json_path);
}

TEST(BenchGpu, MoreGpusThanVisibleIsAClearError) {
  BenchConfig c = Small({model::CommOp::kAllReduce});
  c.gpus_per_process = VisibleGpuCount() + 1;
  Result<BenchReport> r = RunBench(c, "test", nullptr);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(ExitCodeFor(r.status()), ExitCode::kNoGpu);
  EXPECT_NE(r.status().message().find("asked for"), std::string::npos) << r.status().message();
}

TEST(BenchGpu, RootOutsideTheRunIsAUsageError) {
  BenchConfig c = Small({model::CommOp::kBroadcast});
  c.root = VisibleGpuCount();
  Result<BenchReport> r = RunBench(c, "test", nullptr);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(ExitCodeFor(r.status()), ExitCode::kUsage) << r.status().message();
}

}  // namespace
}  // namespace commlens::bench
