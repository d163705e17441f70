// Job-level results computed once in analysis, so that reports only render them: the
// per-step means over ranks, the step the summary describes, the job's kernel table merged
// from every rank's full kernel statistics, the idle gaps of every stream summed, and the
// GPU metrics by name.
#include <gtest/gtest.h>

#include <cmath>

#include "analysis/collectives.h"
#include "analysis/idle_gaps.h"
#include "analysis/kernel_breakdown.h"
#include "analysis/nic_analysis.h"
#include "analysis/rank_spread.h"
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

TEST(JobSummary, MeanOfTheSummarizedStepsAndTheirSpans) {
  TimeBreakdown a, b, c;
  a.span = 100;
  a.compute = 61;
  b.span = 300;
  b.compute = 20;
  c.span = 201;
  c.idle = 3;
  const StepSummary s = SummarizeSteps({&a, &b, &c}, true);
  EXPECT_TRUE(s.over_steps);
  EXPECT_EQ(s.count, 3u);
  EXPECT_EQ(s.mean.span, 200);     // 601 / 3, toward zero
  EXPECT_EQ(s.mean.compute, 27);   // 81 / 3
  EXPECT_EQ(s.mean.idle, 1);
  EXPECT_EQ(s.span_min, 100);
  EXPECT_EQ(s.span_median, 201);
  EXPECT_EQ(s.span_max, 300);
  // An even count: the lower of the two middle spans.
  EXPECT_EQ(SummarizeSteps({&a, &b, &c, &c}, false).span_median, 201);
  EXPECT_EQ(SummarizeSteps({&a, &b}, false).span_median, 100);
  const StepSummary none = SummarizeSteps({}, false);
  EXPECT_EQ(none.count, 0u);
  EXPECT_EQ(none.mean.span, 0);
  EXPECT_EQ(none.span_max, 0);
}

TEST(JobSummary, TheTypicalStepIsTheMedianSpan) {
  std::vector<JobStepBreakdown> steps(4);
  const model::TimeNs spans[] = {900, 100, 300, 200};
  for (size_t i = 0; i < steps.size(); ++i) {
    steps[i].number = static_cast<int64_t>(i) + 1;
    steps[i].mean.span = spans[i];
  }
  EXPECT_EQ(MedianSpanStep(steps), 4);  // spans 100 200 300 900: the lower middle, 200
  steps.pop_back();
  EXPECT_EQ(MedianSpanStep(steps), 3);
  EXPECT_EQ(MedianSpanStep({}), -1);
}

TEST(JobIdleGaps, EveryStreamSummedAndTheLongestOfAll) {
  auto stream = [](int32_t id, std::vector<model::TimeNs> longest) {
    StreamIdle s;
    s.stream = id;
    s.idle = 10'000;
    s.kind_count = {1, 2, 3};
    s.kind_time = {1000, 2000, 3000};
    s.bin_count[0] = 4;
    s.bin_time[5] = 7;
    for (model::TimeNs len : longest) s.longest.push_back({0, len, GapKind::kOther, "before", "after"});
    return s;
  };
  const std::vector<StreamIdle> rank3 = {stream(7, {500, 40}), stream(8, {90})};
  const std::vector<StreamIdle> rank5 = {stream(7, {300, 200, 100})};
  const JobIdle idle = SumIdleGaps({{3, &rank3}, {5, &rank5}}, 3);
  EXPECT_EQ(idle.streams, 3u);
  EXPECT_EQ(idle.kind_count[2], 9u);
  EXPECT_EQ(idle.kind_time[1], 6000);
  EXPECT_EQ(idle.bin_count[0], 12u);
  EXPECT_EQ(idle.bin_time[5], 21);
  ASSERT_EQ(idle.longest.size(), 3u);
  EXPECT_EQ(idle.longest[0].rank, 3);
  EXPECT_EQ(idle.longest[0].stream, 7);
  EXPECT_EQ(idle.longest[0].gap.length, 500);
  EXPECT_EQ(idle.longest[1].rank, 5);
  EXPECT_EQ(idle.longest[1].gap.length, 300);
  EXPECT_EQ(idle.longest[2].gap.length, 200);
  EXPECT_EQ(rank3[0].gaps(), 6u);
  EXPECT_DOUBLE_EQ(rank3[0].KindShare(2), 0.3);
}

TEST(JobGpuMetrics, SeriesOfOneNameWeightedByTheirSamples) {
  std::vector<GpuMetric> metrics(3);
  metrics[0] = {0, "h", "0", "gpu.util", "%", 10, 50.0, 10.0, 90.0};
  metrics[1] = {1, "h", "1", "gpu.util", "%", 30, 70.0, 20.0, 95.0};
  metrics[2] = {0, "h", "0", "gpu.power", "W", 4, 300.0, 250.0, 350.0};
  const std::vector<GpuMetricTotal> totals = TotalGpuMetrics(metrics);
  ASSERT_EQ(totals.size(), 2u);
  EXPECT_EQ(totals[0].name, "gpu.power");  // by name
  EXPECT_EQ(totals[1].name, "gpu.util");
  EXPECT_EQ(totals[1].series, 2u);
  EXPECT_EQ(totals[1].samples, 40u);
  EXPECT_DOUBLE_EQ(totals[1].mean, (50.0 * 10 + 70.0 * 30) / 40);
  EXPECT_DOUBLE_EQ(totals[1].min, 10.0);
  EXPECT_DOUBLE_EQ(totals[1].max, 95.0);
}

TEST(JobShares, PercentagesOfKnownWholesOnly) {
  KernelBreakdown k;
  k.state_time[kComputeBit] = 250;
  EXPECT_DOUBLE_EQ(k.StatePct(kComputeBit, 1000), 25.0);
  EXPECT_DOUBLE_EQ(k.StatePct(kComputeBit, 0), 0.0);
  NicPort n;
  n.peak_tx_bytes_per_s = 1.25e9;  // 10 Gb/s
  n.peak_rx_bytes_per_s = 0.5e9;
  EXPECT_FALSE(n.peak_line_pct().has_value());  // line rate unknown
  n.line_rate_bits_per_s = 100e9;
  ASSERT_TRUE(n.peak_line_pct().has_value());
  EXPECT_NEAR(*n.peak_line_pct(), 10.0, 1e-9);
  RankWait w;
  w.in_collectives = 900;
  w.waiting = 200;
  EXPECT_EQ(w.transferring(), 700);
}

TEST(RankSpread, OrderLargestFirstAndNearestRankQuartiles) {
  // Ranks 0..8 with figures 0, 10, ..., 80 shuffled; ties keep rank order.
  const std::vector<double> v = {30, 80, 0, 50, 10, 70, 20, 60, 40};
  const RankSpread s = SpreadOverRanks(v);
  ASSERT_EQ(s.order.size(), 9u);
  EXPECT_EQ(s.order.front(), 1u);  // 80
  EXPECT_EQ(s.order.back(), 2u);   // 0
  EXPECT_EQ(s.max, 80);
  EXPECT_EQ(s.p75, 60);
  EXPECT_EQ(s.median, 40);
  EXPECT_EQ(s.p25, 20);
  EXPECT_EQ(s.min, 0);
  const RankSpread ties = SpreadOverRanks({5, 7, 5, 7});
  EXPECT_EQ(ties.order, (std::vector<size_t>{1, 3, 0, 2}));
  EXPECT_TRUE(SpreadOverRanks({}).order.empty());
}

TEST(JobShares, BusyTimeAndUntimedOperationsAreSums) {
  KernelBreakdown k;
  k.state_time = {999, 1, 2, 3, 4, 5, 6, 7};  // [0] is not a state
  EXPECT_EQ(k.busy(), 28);
  CollectiveAnalysis c;
  c.buckets.resize(2);
  c.buckets[0].count = 5;
  c.buckets[0].untimed = 2;
  c.buckets[1].count = 3;
  c.buckets[1].untimed = 1;
  EXPECT_EQ(c.counted(), 8u);
  EXPECT_EQ(c.untimed(), 3u);
  RankWait w;
  EXPECT_EQ(w.wait_pct(), 0.0);
  w.in_collectives = 400;
  w.waiting = 100;
  EXPECT_DOUBLE_EQ(w.wait_pct(), 25.0);
}

}  // namespace
}  // namespace commlens::analysis
