#include "bench/bench_compare.h"

#include <gtest/gtest.h>

#include "sample_report.h"

namespace commlens::bench {
namespace {

// The sample report with every busbw of one collective scaled by |factor|.
BenchReport Scaled(const std::string& name, double factor) {
  BenchReport r = testing::SampleReport(nullptr);
  for (CollectiveResult& c : r.collectives) {
    if (c.name != name) continue;
    for (SizeResult& row : c.rows) {
      row.out_of_place.busbw_gbps *= factor;
      row.in_place.busbw_gbps *= factor;
    }
  }
  return r;
}

TEST(BenchCompare, IdenticalRunsHaveNoDropAndPass) {
  BenchReport r = testing::SampleReport(nullptr);
  BenchComparison c = CompareBenchReports(r, r, 1 << 20);
  ASSERT_EQ(c.collectives.size(), 2u);
  EXPECT_TRUE(c.notes.empty());
  EXPECT_EQ(c.collectives[0].name, "all_reduce (float, sum)");
  EXPECT_EQ(c.collectives[0].worst_drop_pct, 0);
  EXPECT_FALSE(HasRegression(c, 0));
  std::string text = FormatComparison(c, 2);
  EXPECT_NE(text.find("no drop at >= 1 MiB"), std::string::npos) << text;
  EXPECT_NE(text.find("regression check (busbw drop > 2% at >= 1 MiB): PASS"), std::string::npos);
}

TEST(BenchCompare, ADropBeyondTheToleranceIsARegression) {
  BenchComparison c =
      CompareBenchReports(Scaled("alltoall", 0.9), testing::SampleReport(nullptr), 1 << 20);
  const CollectiveComparison& a2a = c.collectives[1];
  EXPECT_NEAR(a2a.worst_drop_pct, -10.0, 1e-9);
  EXPECT_EQ(a2a.worst_drop_size, 1 << 20);
  EXPECT_TRUE(HasRegression(c, 5));
  EXPECT_FALSE(HasRegression(c, 15));
  std::string text = FormatComparison(c, 5);
  EXPECT_NE(text.find("FAIL: alltoall (float, none) -10.00% at 1 MiB out-of-place"),
            std::string::npos)
      << text;
  // A faster run is no regression at any tolerance.
  EXPECT_FALSE(HasRegression(
      CompareBenchReports(Scaled("alltoall", 1.5), testing::SampleReport(nullptr), 0), 0));
}

TEST(BenchCompare, SizesBelowTheFloorDoNotGate) {
  BenchReport run = testing::SampleReport(nullptr);
  run.collectives[0].rows[0].out_of_place.busbw_gbps = 1;  // 8 B row: base 0, so no diff
  run.collectives[0].rows[0].out_of_place.time_us *= 3;
  BenchReport base = testing::SampleReport(nullptr);
  base.collectives[0].rows[0].out_of_place.busbw_gbps = 2;
  EXPECT_TRUE(HasRegression(CompareBenchReports(run, base, 0), 10));
  EXPECT_FALSE(HasRegression(CompareBenchReports(run, base, 1 << 20), 10));
}

TEST(BenchCompare, UnmatchedCollectivesAndSetupDifferencesAreListed) {
  BenchReport run = testing::SampleReport(nullptr);
  BenchReport base = testing::SampleReport(nullptr);
  base.collectives.pop_back();           // no alltoall in the baseline
  run.collectives[0].dtype = "bfloat16";  // a different all_reduce: not paired
  base.run.nranks = 8;
  base.run.nccl_version = "2.27.7";
  BenchComparison c = CompareBenchReports(run, base, 0);
  EXPECT_TRUE(c.collectives.empty());
  EXPECT_EQ(c.only_in_run,
            (std::vector<std::string>{"all_reduce (bfloat16, sum)", "alltoall (float, none)"}));
  EXPECT_EQ(c.only_in_base, std::vector<std::string>{"all_reduce (float, sum)"});
  std::string text = FormatComparison(c, -1);
  EXPECT_NE(text.find("# note: ranks: run 2, baseline 8"), std::string::npos) << text;
  EXPECT_NE(text.find("# note: NCCL: run 2.28.9, baseline 2.27.7"), std::string::npos);
  EXPECT_EQ(text.find("regression check"), std::string::npos);  // no gate asked for
}

}  // namespace
}  // namespace commlens::bench
