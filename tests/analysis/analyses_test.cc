// Unit tests of the per-rank analyses on hand-made timelines whose answers are known.
#include <gtest/gtest.h>

#include "analysis/collectives.h"
#include "analysis/idle_gaps.h"
#include "analysis/kernel_breakdown.h"
#include "analysis/time_breakdown.h"
#include "analysis/window.h"
#include "analysis/synthetic_rank.h"
#include "passes/finish.h"

namespace commlens::analysis {
namespace {

using testing::All;
using testing::SyntheticRank;


// Timeline (ns):  gemm [0,100) stream 7;  nccl [50,200) stream 19;  memcpy [250,300);
// idle [200,250) and nothing else.  span 300.
SyntheticRank ThreeKernels() {
  SyntheticRank s;
  s.Gpu("sm90_gemm", 0, 100, 7, 0);
  s.Gpu("ncclDevKernel_AllReduce_Sum_f32_RING_LL", 50, 200, 19, 0);
  s.Gpu("Memcpy DtoD (Device -> Device)", 250, 300, 7, 0, model::ActivityKind::kMemcpy);
  return s;
}

TEST(TimeBreakdown, DefinitionsOnAKnownTimeline) {
  SyntheticRank s = ThreeKernels();
  TimeBreakdown b = ComputeTimeBreakdown(s.rank, All(s.rank));
  EXPECT_EQ(b.span, 300);
  EXPECT_EQ(b.busy, 250);
  EXPECT_EQ(b.idle, 50);
  EXPECT_EQ(b.compute, 100);
  EXPECT_EQ(b.non_compute, 150);  // nccl alone [100,200) + memcpy [250,300)
  EXPECT_EQ(b.comm, 150);
  EXPECT_EQ(b.overlap, 50);
  EXPECT_EQ(b.exposed_comm, 100);
  EXPECT_NEAR(b.overlap_pct(), 100.0 / 3, 1e-9);
  EXPECT_NEAR(b.compute_pct() + b.non_compute_pct() + b.idle_pct(), 100.0, 1e-9);
}

TEST(TimeBreakdown, NoCommunicationHasNoOverlap) {
  SyntheticRank s;
  s.Gpu("gemm", 0, 10);
  TimeBreakdown b = ComputeTimeBreakdown(s.rank, All(s.rank));
  EXPECT_FALSE(b.has_comm());
  EXPECT_EQ(b.compute_pct(), 100.0);
}

TEST(TimeBreakdown, SyncMarkersAreNeitherComputeNorIdle) {
  SyntheticRank s;
  s.Gpu("gemm", 0, 10);
  s.Gpu("Stream Sync", 10, 20, 7, 0, model::ActivityKind::kSync);
  TimeBreakdown b = ComputeTimeBreakdown(s.rank, All(s.rank));
  EXPECT_EQ(b.compute, 10);
  EXPECT_EQ(b.non_compute, 10);
  EXPECT_EQ(b.idle, 0);
}

TEST(KernelBreakdown, ClassStatesSumToBusyTime) {
  SyntheticRank s = ThreeKernels();
  KernelBreakdown k = ComputeKernelBreakdown(s.rank, All(s.rank), 10);
  EXPECT_EQ(k.state_time[kComputeBit], 50);
  EXPECT_EQ(k.state_time[kComputeBit | kCommBit], 50);
  EXPECT_EQ(k.state_time[kCommBit], 100);
  EXPECT_EQ(k.state_time[kMemoryBit], 50);
  ASSERT_EQ(k.top().size(), 3u);
  EXPECT_EQ(k.top()[0].name, "ncclDevKernel_AllReduce_Sum_f32_RING_LL");
  EXPECT_EQ(k.top()[0].total, 150);
}

TEST(KernelBreakdown, TopKeepsTheLongestAndCountsTheRest) {
  SyntheticRank s;
  for (int i = 0; i < 5; ++i) s.Gpu("k" + std::to_string(i), i * 100, i * 100 + 10 * (i + 1));
  KernelBreakdown k = ComputeKernelBreakdown(s.rank, All(s.rank), 2);
  ASSERT_EQ(k.top().size(), 2u);
  EXPECT_EQ(k.top()[0].name, "k4");
  EXPECT_EQ(k.top()[1].name, "k3");
  EXPECT_EQ(k.rest_total(), 10 + 20 + 30);
  EXPECT_EQ(k.distinct_names(), 5u);
}

TEST(IdleGaps, ClassifiesHostWaitKernelWaitAndOther) {
  SyntheticRank s;
  s.Gpu("a", 0, 100, 7, 0);
  s.Gpu("b", 150, 200, 7, 120);       // launched after a ended: host wait (50)
  s.Gpu("c", 210, 300, 7, 10);        // queued, gap 10 < threshold: kernel wait
  s.Gpu("d", 100300, 100400, 7, 20);  // queued, gap 100000 >= threshold: other
  IdleOptions opt;
  opt.kernel_wait_threshold = 30'000;
  auto streams = ComputeIdleGaps(s.rank, All(s.rank), opt);
  ASSERT_EQ(streams.size(), 1u);
  const StreamIdle& st = streams[0];
  EXPECT_EQ(st.kind_time[static_cast<int>(GapKind::kHostWait)], 50);
  EXPECT_EQ(st.kind_time[static_cast<int>(GapKind::kKernelWait)], 10);
  EXPECT_EQ(st.kind_time[static_cast<int>(GapKind::kOther)], 100000);
  EXPECT_EQ(st.idle, 100060);
  ASSERT_FALSE(st.longest.empty());
  EXPECT_EQ(st.longest[0].length, 100000);
  EXPECT_EQ(st.longest[0].before, "c");
  EXPECT_EQ(st.longest[0].after, "d");
  EXPECT_EQ(st.bin_count[0], 2u);  // 10 ns and 50 ns are < 1us
  EXPECT_EQ(st.bin_count[0] + st.bin_count[3], 3u);  // 100 us lands in 100us-1ms
}

TEST(Window, KeepsActivitiesLaunchedUpToTheEndOfTheLastStep) {
  SyntheticRank s;
  s.Step(1, 0, 1000);
  s.Step(2, 1000, 2000);
  s.Gpu("in_step1", 100, 200, 7, 50);
  s.Gpu("in_step2", 1100, 1200, 7, 1050);
  s.Gpu("after", 2100, 2200, 7, 2050);
  s.Gpu("no_launch", 300, 400, 7, model::kNoTime);
  ActivityWindow w = SelectActivities(s.rank, {});
  EXPECT_TRUE(w.filtered);
  EXPECT_EQ(w.rows, (std::vector<uint32_t>{0, 1}));
  EXPECT_EQ(w.step_of, (std::vector<int32_t>{0, 1}));
  EXPECT_EQ(w.dropped, 2u);
  WindowOptions all;
  all.all_events = true;
  EXPECT_EQ(SelectActivities(s.rank, all).rows.size(), 4u);
}

TEST(Window, OneStepKeepsEverything) {
  SyntheticRank s;
  s.Step(1, 0, 1000);
  s.Gpu("after", 2100, 2200, 7, 2050);
  EXPECT_FALSE(SelectActivities(s.rank, {}).filtered);
  EXPECT_EQ(SelectActivities(s.rank, {}).rows.size(), 1u);
}

TEST(Collectives, SizeBucketsAndPercentiles) {
  EXPECT_EQ(SizeBucket(0), (std::pair<int64_t, int64_t>{0, 1}));
  EXPECT_EQ(SizeBucket(1), (std::pair<int64_t, int64_t>{1, 2}));
  EXPECT_EQ(SizeBucket(1 << 20), (std::pair<int64_t, int64_t>{1 << 20, 2 << 20}));
  EXPECT_EQ(SizeBucket((1 << 20) + 1), (std::pair<int64_t, int64_t>{1 << 20, 2 << 20}));
  EXPECT_EQ(SizeBucket(-1).first, -1);
  // The top bucket's bound is the largest int64, not an overflow (found by summary_fuzzer).
  EXPECT_EQ(SizeBucket(INT64_MAX), (std::pair<int64_t, int64_t>{int64_t{1} << 62, INT64_MAX}));
  EXPECT_EQ(SizeBucket(int64_t{1} << 62), (std::pair<int64_t, int64_t>{int64_t{1} << 62, INT64_MAX}));
  std::vector<model::TimeNs> v = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10};
  EXPECT_EQ(Percentile(v, 50), 5);
  EXPECT_EQ(Percentile(v, 99), 10);
  EXPECT_EQ(Percentile(v, 0), 1);
}

// Ops without GPU timing (a recording that timed 1 op in N, --kernel-sample) are counted
// but their host times stay out of the durations and the bandwidth.
// A process group "0" of one rank, added to |s|; its index.
uint32_t GroupOfOne(SyntheticRank* s) {
  model::ProcessGroup g;
  g.name = "0";
  g.size = 1;
  return s->rank.FindOrAddGroup(g);
}

TEST(Collectives, UntimedOpsAreCountedButNotTimed) {
  model::Trace trace;
  SyntheticRank s;
  const uint32_t gi = GroupOfOne(&s);
  const uint32_t timed = s.rank.comms.Append(0, 1000, model::CommOp::kAllReduce, {}, 256, 256,
                                             1 << 20, gi, 0, -1, model::kNoIndex);
  const uint32_t untimed = s.rank.comms.Append(2000, 2010, model::CommOp::kAllReduce, {}, 256,
                                               256, 1 << 20, gi, 1, -1, model::kNoIndex);
  s.rank.comms.flags[untimed] |= model::kCommNoGpuTiming;
  (void)timed;
  trace.ranks.push_back(std::move(s.rank));
  passes::FinishJob(&trace);
  ActivityWindow w;
  CollectiveAnalysis c = AnalyzeCollectives(trace, std::vector<const ActivityWindow*>{&w});
  ASSERT_EQ(c.buckets.size(), 1u);
  EXPECT_EQ(c.buckets[0].count, 2u);
  EXPECT_EQ(c.buckets[0].untimed, 1u);
  EXPECT_EQ(c.buckets[0].total, 1000);
  EXPECT_EQ(c.buckets[0].bytes, 1 << 20);
  EXPECT_EQ(c.buckets[0].p50, 1000);
  EXPECT_NEAR(c.buckets[0].kernel_algbw_gbps, (1 << 20) / 1000.0, 1e-9);
}

// Sizes up to 2^63 bytes import (elements times element size); two such ops in one
// bucket saturate its total instead of wrapping it negative (found by summary_fuzzer).
TEST(Collectives, AbsurdSizesSaturateTheBucketTotal) {
  model::Trace trace;
  SyntheticRank s;
  const uint32_t gi = GroupOfOne(&s);
  const int64_t huge = int64_t{1} << 62;
  for (int k = 0; k < 2; ++k)
    s.rank.comms.Append(1000 * k, 1000 * k + 500, model::CommOp::kAllReduce, {}, 1, 1, huge, gi, k, -1,
                        model::kNoIndex);
  trace.ranks.push_back(std::move(s.rank));
  passes::FinishJob(&trace);
  ActivityWindow w;
  CollectiveAnalysis c = AnalyzeCollectives(trace, std::vector<const ActivityWindow*>{&w});
  ASSERT_EQ(c.buckets.size(), 1u);
  EXPECT_EQ(c.buckets[0].bytes, INT64_MAX);
  EXPECT_EQ(c.buckets[0].size_hi, INT64_MAX);
  EXPECT_GT(c.buckets[0].kernel_algbw_gbps, 0);
}

TEST(Collectives, BandwidthAndCrossRankWait) {
  model::Trace trace;
  for (int r = 0; r < 2; ++r) {
    SyntheticRank s;
    s.rank.rank = r;
    model::ProcessGroup g;
    g.name = "0";
    g.description = "default_pg";
    g.size = 2;
    uint32_t gi = s.rank.FindOrAddGroup(g);
    // rank 1 starts 400 ns later; both end at 1000: 1 MiB all-reduce
    model::TimeNs start = r == 0 ? 0 : 400;
    uint32_t a = s.Gpu("ncclDevKernel_AllReduce", start, 1000, 19, 0);
    uint32_t c = s.rank.comms.Append(start, 1000, model::CommOp::kAllReduce, {}, 262144, 262144,
                                     1 << 20, gi, 0, -1, a);
    s.rank.gpu.comm[a] = c;
    trace.ranks.push_back(std::move(s.rank));
  }
  passes::FinishJob(&trace);  // the analysis reads the matched-ops table
  std::vector<ActivityWindow> w(2);
  w[0].rows = {0};
  w[1].rows = {0};
  CollectiveAnalysis c = AnalyzeCollectives(trace, std::vector<const ActivityWindow*>{&w[0], &w[1]});
  ASSERT_EQ(c.buckets.size(), 1u);
  EXPECT_EQ(c.buckets[0].count, 2u);
  EXPECT_EQ(c.buckets[0].ranks, 2);
  EXPECT_EQ(c.buckets[0].total, 1600);
  EXPECT_NEAR(c.buckets[0].kernel_algbw_gbps, 2.0 * (1 << 20) / 1600, 1e-9);
  EXPECT_NEAR(c.buckets[0].kernel_busbw_gbps, c.buckets[0].kernel_algbw_gbps * 1.0, 1e-9);  // 2(n-1)/n = 1
  ASSERT_EQ(c.groups.size(), 1u);
  EXPECT_EQ(c.groups[0].matched, 1u);
  EXPECT_EQ(c.groups[0].skew_max, 400);
  EXPECT_EQ(c.ranks[0].waiting, 400);
  EXPECT_EQ(c.ranks[1].waiting, 0);
  EXPECT_EQ(c.ranks[1].last_arrivals, 1u);
}

}  // namespace
}  // namespace commlens::analysis
