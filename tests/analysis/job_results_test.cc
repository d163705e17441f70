// Job-level results computed once in analysis: the per-step means over ranks and the
// job's kernel table merged from every rank's full kernel statistics.
#include <gtest/gtest.h>

#include <cmath>

#include "analysis/kernel_breakdown.h"
#include "analysis/synthetic_rank.h"
#include "analysis/time_breakdown.h"

namespace commlens::analysis {
namespace {

using testing::All;
using testing::SyntheticRank;


TEST(JobKernels, MergesFullStatisticsNotTopLists) {
  // Rank 0 runs "big" much more than "small"; rank 1 runs "small" a lot. With top 1 per
  // rank, summing top lists would lose "small" on rank 0.
  SyntheticRank r0, r1;
  r0.Gpu("big", 0, 1000);
  r0.Gpu("small", 2000, 2100);
  r1.Gpu("small", 0, 900);
  r1.Gpu("small", 1000, 1900);
  r1.Gpu("big", 2000, 2100);
  KernelBreakdown k0 = ComputeKernelBreakdown(r0.rank, All(r0.rank), 1);
  KernelBreakdown k1 = ComputeKernelBreakdown(r1.rank, All(r1.rank), 1);
  KernelBreakdown job = MergeKernelBreakdowns({&k0, &k1}, 1);
  ASSERT_EQ(job.kernels.size(), 2u);
  EXPECT_EQ(job.kernels[0].name, "small");
  EXPECT_EQ(job.kernels[0].count, 3u);
  EXPECT_EQ(job.kernels[0].total, 100 + 900 + 900);
  EXPECT_EQ(job.kernels[0].min, 100);
  EXPECT_EQ(job.kernels[0].max, 900);
  // Standard deviation as over all three launches: mean 633.3, population stddev 377.1.
  EXPECT_NEAR(job.kernels[0].mean, 1900.0 / 3, 1e-9);
  EXPECT_NEAR(job.kernels[0].stddev, std::sqrt((std::pow(100 - 1900.0 / 3, 2) + 2 * std::pow(900 - 1900.0 / 3, 2)) / 3),
              1e-6);
  EXPECT_EQ(job.top().size(), 1u);
  EXPECT_EQ(job.rest_total(), 1100);
  EXPECT_EQ(job.state_time[kComputeBit], k0.state_time[kComputeBit] + k1.state_time[kComputeBit]);
}

TEST(JobSteps, MeanOverTheRanksThatRanTheStep) {
  RankTimeBreakdown a, b;
  a.steps.push_back({1, {}});
  a.steps.back().time.span = 100;
  a.steps.back().time.compute = 60;
  b.steps.push_back({1, {}});
  b.steps.back().time.span = 201;
  b.steps.back().time.compute = 41;
  b.steps.push_back({2, {}});
  b.steps.back().time.span = 50;
  std::vector<JobStepBreakdown> steps = MeanStepBreakdowns({&a, &b});
  ASSERT_EQ(steps.size(), 2u);
  EXPECT_EQ(steps[0].number, 1);
  EXPECT_EQ(steps[0].ranks, 2);
  EXPECT_EQ(steps[0].mean.span, 150);  // (100 + 201) / 2, toward zero
  EXPECT_EQ(steps[0].mean.compute, 50);
  EXPECT_EQ(steps[1].ranks, 1);
  EXPECT_EQ(steps[1].mean.span, 50);
}

}  // namespace
}  // namespace commlens::analysis
