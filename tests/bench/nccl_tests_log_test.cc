#include "bench/nccl_tests_log.h"

#include <gtest/gtest.h>

namespace commlens::bench {
namespace {

std::string Data(const std::string& name) {
  return std::string(COMMLENS_BENCH_DATA) + "/" + name;
}

TEST(NcclTestsLog, ReadsARealAllReduceLog) {
  // nccl-tests 2.19.6 all_reduce_perf on 4 x H200 (the parity run's first repetition).
  Result<BenchReport> r = ReadBenchOrNcclTests(Data("h200x4_nccl_tests_all_reduce.txt"));
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->run.tool_version, "nccl-tests 2.19.6");
  EXPECT_EQ(r->run.nccl_version, "2.28.9");
  EXPECT_EQ(r->run.nranks, 4);
  EXPECT_EQ(r->run.nprocs, 1);
  EXPECT_EQ(r->run.gpus_per_process, 4);
  EXPECT_EQ(r->run.hosts, std::vector<std::string>{"vm"});
  EXPECT_EQ(r->run.gpus[3].name, "NVIDIA H200");
  EXPECT_EQ(r->run.gpus[3].pci_bus_id, "0000:00:09");
  EXPECT_EQ(r->config.iters, 1000);
  EXPECT_EQ(r->config.warmup, 20);
  EXPECT_FALSE(r->config.graph);
  ASSERT_EQ(r->collectives.size(), 1u);
  const CollectiveResult& c = r->collectives[0];
  EXPECT_EQ(c.name, "all_reduce");
  EXPECT_EQ(c.dtype, "float");
  EXPECT_EQ(c.redop, "sum");
  EXPECT_DOUBLE_EQ(c.busbw_factor, 1.5);
  ASSERT_EQ(c.rows.size(), 22u);
  EXPECT_EQ(c.rows[0].size_bytes, 8);
  EXPECT_DOUBLE_EQ(c.rows[0].out_of_place.time_us, 22.28);
  EXPECT_EQ(c.rows.back().size_bytes, 16777216);
  EXPECT_EQ(c.rows.back().count, 4194304);
  EXPECT_DOUBLE_EQ(c.rows.back().out_of_place.busbw_gbps, 256.79);
  EXPECT_DOUBLE_EQ(c.rows.back().in_place.busbw_gbps, 265.67);
  EXPECT_EQ(c.rows.back().in_place.wrong, 0);
  EXPECT_DOUBLE_EQ(c.summary.peak_busbw_gbps, 256.79);
}

constexpr char kTwoLogs[] =
    "# nccl-tests version 2.19.6 nccl-headers=22809 nccl-library=22809\n"
    "# Collective test starting: alltoall_perf\n"
    "#  Rank  0 Group  0 Pid 10 on a device  0 [0000:01:00] NVIDIA H100 80GB HBM3\n"
    "#  Rank  1 Group  0 Pid 11 on b device  0 [0000:01:00] NVIDIA H100 80GB HBM3\n"
    "node-a:10:10 [0] NCCL INFO Bootstrap: Using eth0\n"
    "     1048576        131072     float    none      -1    30.59   34.28   17.14       0"
    "    30.87   33.97   16.98     N/A\n"
    "# Collective test concluded: alltoall_perf\n"
    "# Collective test starting: sendrecv_perf\n"
    "#  Rank  0 Group  0 Pid 10 on a device  0 [0000:01:00] NVIDIA H100 80GB HBM3\n"
    "     1048576        262144     float     sum      -1    24.45   42.89   42.89       0"
    "    23.96   43.76   43.76     N/A\n";

TEST(NcclTestsLog, ConcatenatedLogsAndForeignLines) {
  Result<BenchReport> r = ParseNcclTestsLog(kTwoLogs, "logs.txt");
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_EQ(r->collectives.size(), 2u);
  EXPECT_EQ(r->run.nranks, 2);  // rank lines of the first section only
  EXPECT_EQ(r->run.nprocs, 2);
  EXPECT_EQ(r->run.hosts, (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(r->run.gpus[0].name, "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(r->collectives[0].name, "alltoall");
  EXPECT_FALSE(r->collectives[0].rows[0].in_place.wrong.has_value());  // N/A
  EXPECT_DOUBLE_EQ(r->collectives[0].busbw_factor, 0.5);
  EXPECT_EQ(r->collectives[1].name, "sendrecv");
  EXPECT_EQ(r->collectives[1].rows.size(), 1u);
}

TEST(NcclTestsLog, ErrorsNameTheSourceAndLine) {
  std::string bad = kTwoLogs;
  bad.replace(bad.find("34.28"), 5, "fast!");
  Result<BenchReport> r = ParseNcclTestsLog(bad, "logs.txt");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("logs.txt:6:"), std::string::npos) << r.status().message();

  r = ParseNcclTestsLog("hello\n", "notes.txt");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("notes.txt: no \"# Collective test starting\""),
            std::string::npos)
      << r.status().message();
  r = ParseNcclTestsLog("# Collective test starting: hypercube_perf\n", "h.txt");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("hypercube_perf"), std::string::npos);
  EXPECT_FALSE(ReadBenchOrNcclTests(Data("no-such-file")).ok());
}

}  // namespace
}  // namespace commlens::bench
