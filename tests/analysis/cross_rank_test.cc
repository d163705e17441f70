// Cross-rank findings on hand-made jobs whose answer is known: the late rank and why,
// hangs and desyncs, contention between process groups, pipeline structure.
#include "analysis/cross_rank.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "analysis/analyze.h"
#include "analysis/synthetic_rank.h"
#include "passes/finish.h"

namespace commlens::analysis {
namespace {

using model::CommOp;
using model::TimeNs;
using testing::SyntheticRank;

constexpr TimeNs kUs = 1000;

// A job of |n| ranks on one host; collectives are added per rank.
struct Job {
  explicit Job(int n) : ranks(n) {
    for (int r = 0; r < n; ++r) ranks[r].rank.rank = r, ranks[r].rank.world_size = n;
  }
  uint32_t Group(int r, const std::string& name, int size) {
    model::ProcessGroup g;
    g.name = name;
    g.size = size;
    g.self = r;
    return ranks[r].rank.FindOrAddGroup(g);
  }
  // A collective kernel on |stream| with its comm row.
  void Coll(int r, uint32_t group, CommOp op, int64_t seq, TimeNs start, TimeNs end, int64_t bytes = 1 << 20,
            int stream = 19, int32_t peer = -1) {
    SyntheticRank& s = ranks[r];
    uint32_t a = s.Gpu(op == CommOp::kSend || op == CommOp::kRecv ? "ncclDevKernel_SendRecv" : "ncclDevKernel_AllReduce",
                       start, end, stream, start - 5 * kUs);
    uint32_t c = s.rank.comms.Append(start, end, op, {}, bytes / 4, bytes / 4, bytes, group, seq, peer, a);
    s.rank.gpu.comm[a] = c;
  }
  model::Trace Finish() {
    model::Trace t;
    for (auto& s : ranks) {
      s.rank.steps.clear();  // the find_steps pass finds them from the annotations
      passes::FinishRank(&s.rank);
      t.ranks.push_back(std::move(s.rank));
    }
    passes::FinishJob(&t, {model::AlignMode::kNone});
    return t;
  }
  std::vector<SyntheticRank> ranks;
};

// Three ranks, five all-reduces; before each, rank 2 is held up by |how|.
model::Trace LateRank(bool by_compute) {
  Job job(3);
  for (int r = 0; r < 3; ++r) {
    uint32_t g = job.Group(r, "0", 3);
    job.ranks[r].Step(1, 0, 4'000 * kUs);  // collectives #0 and #1
    job.ranks[r].Step(2, 4'000 * kUs, 20'000 * kUs);
    TimeNs t = 100 * kUs;
    for (int k = 0; k < 5; ++k) {
      TimeNs gemm = 1000 * kUs + (r == 2 && by_compute ? 400 * kUs : 0);
      TimeNs gap = r == 2 && !by_compute ? 400 * kUs : 0;
      job.ranks[r].Gpu("gemm", t + gap, t + gap + gemm, 7, t + gap - 10 * kUs);
      TimeNs start = t + gap + gemm + 5 * kUs;
      // Everyone ends together, after the last one started.
      TimeNs end = 100 * kUs + k * 2000 * kUs + 1400 * kUs + 300 * kUs;
      job.Coll(r, g, CommOp::kAllReduce, k, start, end);
      t = end + 300 * kUs;
    }
  }
  return job.Finish();
}

TEST(CrossRank, TheLateRankAndComputeThatRanLonger) {
  model::Trace t = LateRank(true);
  JobAnalysis a = Analyze(t, {});
  const CrossRankAnalysis& x = a.cross_rank;
  ASSERT_FALSE(x.stragglers.empty());
  const Straggler& s = x.stragglers.front();
  EXPECT_EQ(s.rank, 2);
  EXPECT_EQ(s.last_arrivals, 5u);
  EXPECT_EQ(s.matched, 5u);
  EXPECT_EQ(s.mean_lateness, 400 * kUs);
  EXPECT_EQ(s.cost_to_others, 5 * 2 * 400 * kUs);  // two others wait 400 us each time
  EXPECT_DOUBLE_EQ(s.cost_per_step, 5 * 2 * 400.0 * kUs / 2);
  EXPECT_EQ(s.cause, LateCause::kCompute);
  ASSERT_FALSE(s.kernels.empty());
  EXPECT_EQ(s.kernels[0], "gemm");
  EXPECT_DOUBLE_EQ(s.chance_arrivals, 5.0 / 3);
  EXPECT_TRUE(s.consistent);
  EXPECT_EQ(s.delay, 5 * 400 * kUs);  // wall time: each collective began 400 us later
  EXPECT_DOUBLE_EQ(s.delay_per_step, 5 * 400.0 * kUs / 2);
  EXPECT_NE(x.summary.find("Rank 2 arrives last at 100% of its 5 collectives (33% by chance), delaying them by "
                           "1.00 ms of wall time per step (the others waited 2.00 ms of rank-time per step, summed over "
                           "them)"),
            std::string::npos)
      << x.summary;
  EXPECT_NE(x.summary.find("compute ran longer"), std::string::npos) << x.summary;
  EXPECT_TRUE(x.hangs.empty());
}

// A recording that timed the kernels of some ops only (--kernel-sample): the untimed ones
// carry host enqueue times, so the late-rank analysis judges the timed ones alone.
TEST(CrossRank, OpsWithoutGpuTimingAreLeftOutOfTheLateRank) {
  model::Trace t = LateRank(true);
  for (auto& r : t.ranks)
    for (uint32_t i = 1; i < r.comms.size(); ++i) r.comms.flags[i] |= model::kCommNoGpuTiming;
  JobAnalysis a = Analyze(t, {});
  ASSERT_FALSE(a.cross_rank.stragglers.empty());
  const Straggler& s = a.cross_rank.stragglers.front();
  EXPECT_EQ(s.rank, 2);
  EXPECT_EQ(s.last_arrivals, 1u);  // collective #0, the one timed
  EXPECT_EQ(s.cost_to_others, 2 * 400 * kUs);
  ASSERT_EQ(a.collectives.groups.size(), 1u);
  EXPECT_EQ(a.collectives.groups[0].matched, 5u);  // still matched and counted
}

TEST(CrossRank, TheLateRankWhoseGpuSatIdle) {
  model::Trace t = LateRank(false);
  JobAnalysis a = Analyze(t, {});
  ASSERT_FALSE(a.cross_rank.stragglers.empty());
  EXPECT_EQ(a.cross_rank.stragglers.front().rank, 2);
  EXPECT_EQ(a.cross_rank.stragglers.front().cause, LateCause::kHostIdle);
  EXPECT_NE(a.cross_rank.summary.find("GPU sat idle"), std::string::npos);
}

// Consistency is judged against the size of the groups: in two-member groups every rank
// is last half the time by chance, so being last at 60% of them is not "consistently late"
// (the old test, 1.5 / world size, called it so on a 4-rank job).
TEST(CrossRank, ConsistentlyLateIsJudgedAgainstTheGroupSize) {
  Job job(4);
  for (int r = 0; r < 4; ++r) {
    const uint32_t g = job.Group(r, r < 2 ? "a" : "b", 2);  // two groups of two
    for (int k = 0; k < 10; ++k) {
      const TimeNs t = k * 1000 * kUs;
      // Rank 1 (and 3) is last at 6 of 10, by 50 us.
      const bool late = (r % 2 == 1) == (k < 6);
      job.Coll(r, g, CommOp::kAllReduce, k, t + (late ? 50 * kUs : 0), t + 200 * kUs);
    }
  }
  model::Trace t = job.Finish();
  AnalyzeOptions o;
  o.window.all_events = true;
  JobAnalysis a = Analyze(t, o);
  ASSERT_FALSE(a.cross_rank.stragglers.empty());
  for (const Straggler& s : a.cross_rank.stragglers) {
    EXPECT_DOUBLE_EQ(s.chance_arrivals, 5.0) << s.rank;  // 10 collectives of 2: half by chance
    EXPECT_FALSE(s.consistent) << s.rank;
  }
  EXPECT_EQ(a.cross_rank.summary.rfind("No rank is consistently late", 0), 0u) << a.cross_rank.summary;
  for (const auto& f : a.findings) EXPECT_NE(f.rule, "straggler") << f.text;
}

// A delay within the steps' own variation names no rank: not "costing 0.00 ms".
TEST(CrossRank, ADelayUnderTheNoiseNamesNoRank) {
  Job job(2);
  for (int r = 0; r < 2; ++r) {
    const uint32_t g = job.Group(r, "0", 2);
    for (int step = 0; step < 5; ++step) {
      const TimeNs s0 = step * 10'000 * kUs;
      job.ranks[r].Step(step, s0, s0 + 10'000 * kUs);
      for (int k = 0; k < 4; ++k) {
        const TimeNs t = s0 + (k * 2000 + 100) * kUs;
        // Rank 1 is always last, by 1 us: 4 us of 10 ms per step.
        job.Coll(r, g, CommOp::kAllReduce, step * 4 + k, t + (r == 1 ? kUs : 0), t + 500 * kUs);
      }
    }
  }
  model::Trace t = job.Finish();
  JobAnalysis a = Analyze(t, {});
  ASSERT_FALSE(a.cross_rank.stragglers.empty());
  EXPECT_TRUE(a.cross_rank.stragglers.front().consistent);
  EXPECT_EQ(a.cross_rank.summary.rfind("No rank holds the others up", 0), 0u) << a.cross_rank.summary;
  for (const auto& f : a.findings) EXPECT_NE(f.rule, "straggler") << f.text;
}

// A group of one member has nothing to match: its ops are neither matched nor unmatched.
TEST(CrossRank, GroupsOfOneAreNeitherMatchedNorUnmatched) {
  Job job(2);
  for (int r = 0; r < 2; ++r) {
    const uint32_t world = job.Group(r, "0", 2), self = job.Group(r, r == 0 ? "solo0" : "solo1", 1);
    job.Coll(r, world, CommOp::kAllReduce, 0, 0, 100 * kUs);
    job.Coll(r, self, CommOp::kAllReduce, 0, 200 * kUs, 210 * kUs);
  }
  model::Trace t = job.Finish();
  AnalyzeOptions o;
  o.window.all_events = true;
  JobAnalysis a = Analyze(t, o);
  ASSERT_EQ(a.collectives.groups.size(), 1u);
  EXPECT_EQ(a.collectives.groups[0].group_name, "0");
  EXPECT_EQ(a.collectives.groups[0].unmatched, 0u);
}

TEST(CrossRank, EndSkewAndWaitingPerRank) {
  model::Trace t = LateRank(true);
  JobAnalysis a = Analyze(t, {});
  ASSERT_EQ(a.collectives.groups.size(), 1u);
  EXPECT_EQ(a.collectives.groups[0].end_skew_max, 0);  // all end together
  EXPECT_EQ(a.collectives.groups[0].skew_max, 400 * kUs);
  EXPECT_EQ(a.collectives.ranks[0].waiting, 5 * 400 * kUs);
  EXPECT_EQ(a.collectives.ranks[2].waiting, 0);
}

TEST(CrossRank, ARankThatStoppedShortAndADesync) {
  Job job(3);
  for (int r = 0; r < 3; ++r) {
    uint32_t g = job.Group(r, "0", 3);
    const int count = r == 2 ? 3 : 5;  // rank 2 never reaches #3
    for (int k = 0; k < count; ++k) {
      CommOp op = (k == 1 && r == 1) ? CommOp::kAllGather : CommOp::kAllReduce;
      job.Coll(r, g, op, k, k * 1000 * kUs, k * 1000 * kUs + 500 * kUs);
    }
  }
  job.ranks[2].Gpu("gemm", 2600 * kUs, 6000 * kUs);  // its trace goes on: it is stuck elsewhere
  model::Trace t = job.Finish();
  AnalyzeOptions o;
  o.window.all_events = true;
  JobAnalysis a = Analyze(t, o);
  const auto& hangs = a.cross_rank.hangs;
  ASSERT_EQ(hangs.size(), 2u);
  EXPECT_TRUE(hangs[0].desync);
  EXPECT_EQ(hangs[0].seq, 1);
  EXPECT_NE(hangs[0].detail.find("all_gather on rank 1"), std::string::npos) << hangs[0].detail;
  EXPECT_FALSE(hangs[1].desync);
  EXPECT_EQ(hangs[1].seq, 3);
  EXPECT_EQ(hangs[1].missing, std::vector<int>{2});
  EXPECT_EQ(hangs[1].reached, (std::vector<int>{0, 1}));
  EXPECT_NE(hangs[1].detail.find("rank 2 never reached collective #3 (all_reduce) of group 0"), std::string::npos)
      << hangs[1].detail;
}

// Ranks 2 and 3 both stop after all-reduce #2, but rank 3's trace ends before the others
// start #3 (its profiler stopped, not the rank): the finding reports rank 2 alone, and
// says what rank 2 was doing, not rank 3.
model::Trace TwoStoppedOneReported() {
  Job job(4);
  for (int r = 0; r < 4; ++r) {
    uint32_t g = job.Group(r, "0", 4);
    const int count = r >= 2 ? 3 : 5;
    for (int k = 0; k < count; ++k) job.Coll(r, g, CommOp::kAllReduce, k, k * 1000 * kUs, k * 1000 * kUs + 500 * kUs);
  }
  model::RankTrace& stuck = job.ranks[2].rank;
  stuck.host.Append(2600 * kUs, 6000 * kUs, stuck.strings.Intern("stuck_in_data_loader"), 1, 1, 0, model::HostKind::kCpuOp);
  model::RankTrace& ended = job.ranks[3].rank;
  ended.host.Append(2000 * kUs, 2400 * kUs, ended.strings.Intern("optimizer_step"), 1, 1, 0, model::HostKind::kCpuOp);
  return job.Finish();
}

TEST(CrossRank, OnlyTheReportedStoppedRanksAreDescribed) {
  model::Trace t = TwoStoppedOneReported();
  AnalyzeOptions o;
  o.window.all_events = true;
  JobAnalysis a = Analyze(t, o);
  ASSERT_EQ(a.cross_rank.hangs.size(), 1u);
  const Hang& h = a.cross_rank.hangs[0];
  EXPECT_EQ(h.missing, std::vector<int>{2});
  ASSERT_EQ(h.missing_doing.size(), 1u);
  EXPECT_EQ(h.missing_doing[0].rfind("rank 2 was in \"stuck_in_data_loader\"", 0), 0u) << h.missing_doing[0];
  EXPECT_EQ(h.detail.find("rank 3"), std::string::npos) << h.detail;
  EXPECT_EQ(h.detail.find("optimizer_step"), std::string::npos) << h.detail;
}

// Without host events (as analyze imports) each description is a lookup that reads the
// rank's file again, or under --mpi asks the process that imported it: asked for the
// reported rank only, once.
TEST(CrossRank, TheLookupIsAskedOnlyForTheReportedRanks) {
  model::Trace t = TwoStoppedOneReported();
  for (model::RankTrace& r : t.ranks) r.host_events_dropped = 1;
  std::vector<size_t> asked;
  AnalyzeOptions o;
  o.window.all_events = true;
  o.doing_at = [&](size_t rank_index, TimeNs) {
    asked.push_back(rank_index);
    return std::string("was asked");
  };
  JobAnalysis a = Analyze(t, o);
  ASSERT_EQ(a.cross_rank.hangs.size(), 1u);
  EXPECT_EQ(asked, std::vector<size_t>{2});
  EXPECT_EQ(a.cross_rank.hangs[0].missing_doing, std::vector<std::string>{"rank 2 was asked"});
}

TEST(CrossRank, ARankThatSkippedACollectiveInTheMiddle) {
  Job job(3);
  for (int r = 0; r < 3; ++r) {
    uint32_t g = job.Group(r, "0", 3);
    for (int k = 0; k < 6; ++k)
      if (!(r == 1 && k == 3)) job.Coll(r, g, CommOp::kAllReduce, k, k * 1000 * kUs, k * 1000 * kUs + 500 * kUs);
  }
  model::Trace t = job.Finish();
  AnalyzeOptions o;
  o.window.all_events = true;
  JobAnalysis a = Analyze(t, o);
  const auto& hangs = a.cross_rank.hangs;
  ASSERT_EQ(hangs.size(), 1u);
  EXPECT_TRUE(hangs[0].desync);
  EXPECT_EQ(hangs[0].seq, 3);
  EXPECT_EQ(hangs[0].missing, std::vector<int>{1});
  EXPECT_EQ(hangs[0].reached, (std::vector<int>{0, 2}));
  EXPECT_NE(hangs[0].detail.find("rank 1 ran collectives #2 and #4 of group 0 but has no #3"), std::string::npos)
      << hangs[0].detail;
}

TEST(CrossRank, ATraceThatJustEndsEarlierIsNoHang) {
  Job job(2);
  for (int r = 0; r < 2; ++r) {
    uint32_t g = job.Group(r, "0", 2);
    const int count = r == 1 ? 2 : 3;  // rank 1's profiler stopped before #2
    for (int k = 0; k < count; ++k) job.Coll(r, g, CommOp::kAllReduce, k, k * 1000 * kUs, k * 1000 * kUs + 500 * kUs);
  }
  model::Trace t = job.Finish();
  AnalyzeOptions o;
  o.window.all_events = true;
  EXPECT_TRUE(Analyze(t, o).cross_rank.hangs.empty());
}

TEST(CrossRank, BatchedP2pIsNotMistakenForACollective) {
  Job job(2);
  for (int r = 0; r < 2; ++r) {
    uint32_t g = job.Group(r, "0", 2);
    job.Coll(r, g, CommOp::kAllReduce, 0, 0, 500 * kUs);
    job.Coll(r, g, CommOp::kSendRecv, -1, 1000 * kUs, 1500 * kUs);  // numbered 0 in its own sequence
  }
  model::Trace t = job.Finish();
  ASSERT_EQ(t.matched.size(), 1u);  // the all-reduce only
  AnalyzeOptions o;
  o.window.all_events = true;
  JobAnalysis a = Analyze(t, o);
  EXPECT_TRUE(a.cross_rank.hangs.empty());
  EXPECT_EQ(a.collectives.groups[0].matched, 1u);
}

TEST(CrossRank, InterleavedPipelineRingStartsAtTheFirstSender) {
  // 0 -> 1 -> 2 -> 3 -> 0 (virtual stages), rank 2 sends first: stages 2, 3, 0, 1.
  Job job(4);
  std::vector<uint32_t> g(4);
  for (int r = 0; r < 4; ++r) g[r] = job.Group(r, "pp", 4);
  for (int i = 0; i < 3; ++i)
    for (int s = 0; s < 4; ++s) {
      const int from = (2 + s) % 4, to = (3 + s) % 4;
      const TimeNs t = (i * 10 + s) * 100 * kUs;
      job.Coll(from, g[from], CommOp::kSend, i, t, t + 10 * kUs, 4096, 19, to);
      job.Coll(to, g[to], CommOp::kRecv, i, t, t + 10 * kUs, 4096, 19, from);
    }
  model::Trace t = job.Finish();
  AnalyzeOptions o;
  o.window.all_events = true;
  const analysis::Pipeline& p = Analyze(t, o).cross_rank.pipeline;
  ASSERT_TRUE(p.detected);
  ASSERT_EQ(p.per_stage.size(), 4u);
  EXPECT_EQ(p.per_stage[0].rank, 2);
  EXPECT_EQ(p.per_stage[1].rank, 3);
  EXPECT_EQ(p.per_stage[2].rank, 0);
  EXPECT_EQ(p.per_stage[3].rank, 1);
}

// NCCL 2.31's kernel phases say who was late without the clocks: here rank 1's kernels
// start 400 us after rank 0's on the (unaligned) clocks, which would blame rank 1, but
// each kernel's initial sync says rank 0 waited 10 us and rank 1 waited 300 us: rank 0
// arrived last. The waits, the last arrivals and the transfer time follow the phases.
TEST(CrossRank, KernelPhasesTellTheLateRankWithoutTheClocks) {
  Job job(2);
  std::vector<uint32_t> g = {job.Group(0, "dp", 2), job.Group(1, "dp", 2)};
  for (int i = 0; i < 6; ++i) {
    const TimeNs t = i * 10'000 * kUs;
    job.Coll(0, g[0], CommOp::kAllReduce, i, t, t + 500 * kUs, 1 << 20);
    job.Coll(1, g[1], CommOp::kAllReduce, i, t + 400 * kUs, t + 900 * kUs, 1 << 20);
  }
  model::Trace t = job.Finish();
  AnalyzeOptions o;
  o.window.all_events = true;
  {
    const JobAnalysis clocks = Analyze(t, o);  // without phases: the clocks blame rank 1
    ASSERT_EQ(clocks.collectives.buckets.size(), 1u);
    EXPECT_EQ(clocks.collectives.buckets[0].waited_for_rank, 1);
    EXPECT_EQ(clocks.collectives.phase_timed, 0u);
  }
  for (model::RankTrace& r : t.ranks)
    for (uint32_t i = 0; i < r.comms.size(); ++i) r.comms.initial_sync[i] = (r.rank == 0 ? 10 : 300) * kUs;
  const JobAnalysis a = Analyze(t, o);
  const CollectiveAnalysis& c = a.collectives;
  EXPECT_EQ(c.phase_timed, 12u);
  ASSERT_EQ(c.buckets.size(), 1u);
  const CollectiveBucket& b = c.buckets[0];
  EXPECT_EQ(b.waited_for_rank, 0);
  EXPECT_EQ(b.transfer_count, 12u);
  // Each kernel is 500 us: 10 + 300 us of the 1000 per pair waited.
  EXPECT_NEAR(b.wait_share(), 310.0 / 1000.0, 1e-9);
  ASSERT_EQ(c.ranks.size(), 2u);
  EXPECT_EQ(c.ranks[0].last_arrivals, 6u);
  EXPECT_EQ(c.ranks[1].last_arrivals, 0u);
  EXPECT_EQ(c.ranks[0].waiting, 6 * 10 * kUs);
  EXPECT_EQ(c.ranks[1].waiting, 6 * 300 * kUs);
  // The straggler analysis agrees: rank 0, 290 us later than rank 1 each time.
  ASSERT_FALSE(a.cross_rank.stragglers.empty());
  EXPECT_EQ(a.cross_rank.stragglers[0].rank, 0);
  EXPECT_EQ(a.cross_rank.stragglers[0].last_arrivals, 6u);
  EXPECT_EQ(a.cross_rank.stragglers[0].mean_lateness, 290 * kUs);
  EXPECT_EQ(a.cross_rank.stragglers[0].cost_to_others, 6 * 290 * kUs);
}

// Contention is judged on transfers: a dp all-reduce that moves data while an ep
// all-to-all moves data is slowed; one whose kernel only waits (for a late member) while
// the all-to-all runs is not, though the two kernels overlap.
TEST(CrossRank, ContentionComparesTransfersNotKernels) {
  Job job(2);
  std::vector<uint32_t> dp(2), ep(2);
  for (int r = 0; r < 2; ++r) dp[r] = job.Group(r, "dp", 2), ep[r] = job.Group(r, "ep", 2);
  int64_t dp_seq = 0, ep_seq = 0;
  for (int i = 0; i < 6; ++i) {
    const TimeNs t = i * 10'000 * kUs;
    for (int r = 0; r < 2; ++r) {
      // Alone: 1 MiB in 100 us.
      job.Coll(r, dp[r], CommOp::kAllReduce, dp_seq, t, t + 100 * kUs, 1 << 20, 19);
      // Moving data beside an all-to-all: 200 us.
      job.Coll(r, dp[r], CommOp::kAllReduce, dp_seq + 1, t + 1000 * kUs, t + 1200 * kUs, 1 << 20, 19);
      job.Coll(r, ep[r], CommOp::kAllToAll, ep_seq, t + 1050 * kUs, t + 1150 * kUs, 1 << 20, 23);
      // Rank 1 joins 300 us late: rank 0's kernel waits while the all-to-all runs, then
      // both move data alone for 100 us.
      job.Coll(r, dp[r], CommOp::kAllReduce, dp_seq + 2, t + 2000 * kUs + (r == 1 ? 300 * kUs : 0), t + 2400 * kUs,
               1 << 20, 19);
      job.Coll(r, ep[r], CommOp::kAllToAll, ep_seq + 1, t + 2050 * kUs, t + 2150 * kUs, 1 << 20, 23);
    }
    dp_seq += 3;
    ep_seq += 2;
  }
  model::Trace t = job.Finish();
  AnalyzeOptions o;
  o.window.all_events = true;
  JobAnalysis a = Analyze(t, o);
  const auto& x = a.cross_rank;
  ASSERT_EQ(x.contention.size(), 2u);
  const ContentionRow& d = x.contention[0];
  EXPECT_EQ(d.group, "dp");
  const double alone = 2.0 * (1 << 20) / (2 * 100 * kUs) * 1.0;  // bytes / ns, factor 2(n-1)/n = 1
  EXPECT_EQ(d.alone.count, 24u);  // 12 alone, 12 that waited beside the all-to-all
  EXPECT_TRUE(d.alone.enough());
  EXPECT_NEAR(d.alone.median, (1 << 20) / (100.0 * kUs), 1e-9);
  EXPECT_NEAR(d.alone.p25, d.alone.median, 1e-9);
  EXPECT_EQ(d.overlapped.count, 12u);
  EXPECT_NEAR(d.overlapped.median, d.alone.median / 2, 1e-9);
  EXPECT_EQ(d.with_groups, std::vector<std::string>{"ep"});
  EXPECT_EQ(d.unknown, 0u);
  (void)alone;
  const ContentionRow& e = x.contention[1];
  EXPECT_EQ(e.group, "ep");
  EXPECT_EQ(e.overlapped.count, 12u);
  EXPECT_EQ(e.alone.count, 12u);
  // The contention finding names dp's slow-down, measured on transfers.
  bool found = false;
  for (const auto& f : a.findings)
    if (f.rule == "contention" && f.text.find("dp") != std::string::npos) {
      found = true;
      EXPECT_NE(f.text.find("at 50% of its alone bandwidth"), std::string::npos) << f.text;
    }
  EXPECT_TRUE(found);
}

// Fewer samples than BandwidthSpread::kMinSamples give counts, not a number.
TEST(CrossRank, ContentionSaysTooFewSamples) {
  Job job(2);
  for (int r = 0; r < 2; ++r) {
    uint32_t dp = job.Group(r, "dp", 2), ep = job.Group(r, "ep", 2);
    job.Coll(r, dp, CommOp::kAllReduce, 0, 0, 100 * kUs, 1 << 20, 19);
    job.Coll(r, dp, CommOp::kAllReduce, 1, 1000 * kUs, 1200 * kUs, 1 << 20, 19);
    job.Coll(r, ep, CommOp::kAllToAll, 0, 1050 * kUs, 1150 * kUs, 1 << 20, 23);
  }
  model::Trace t = job.Finish();
  AnalyzeOptions o;
  o.window.all_events = true;
  JobAnalysis a = Analyze(t, o);
  ASSERT_EQ(a.cross_rank.contention.size(), 2u);
  const ContentionRow& d = a.cross_rank.contention[0];
  EXPECT_EQ(d.alone.count, 2u);
  EXPECT_FALSE(d.alone.enough());
  for (const auto& f : a.findings) EXPECT_NE(f.rule, "contention") << f.text;
}

// p stages, m micro-batches, one step: forward sends from stage s to s+1, then (GPipe) or
// interleaved with (1F1B) backward sends from s+1 to s.
model::Trace Pipeline(int p, int m, bool one_f_one_b) {
  Job job(p);
  std::vector<uint32_t> g(p);
  for (int r = 0; r < p; ++r) {
    g[r] = job.Group(r, "pp", p);
    job.ranks[r].Step(1, 0, 100'000 * kUs);
    job.ranks[r].Step(2, 100'000 * kUs, 100'001 * kUs);
  }
  for (int s = 0; s + 1 < p; ++s)
    for (int i = 0; i < m; ++i) {
      TimeNs f = (1 + s * 10 + i * (one_f_one_b ? 2 : 1)) * 100 * kUs, b = f + (one_f_one_b ? 100 : 5000) * kUs;
      job.Coll(s, g[s], CommOp::kSend, i, f, f + 10 * kUs, 4096, 19, s + 1);
      job.Coll(s + 1, g[s + 1], CommOp::kRecv, i, f, f + 10 * kUs, 4096, 19, s);
      job.Coll(s + 1, g[s + 1], CommOp::kSend, i, b, b + 10 * kUs, 4096, 19, s);
      job.Coll(s, g[s], CommOp::kRecv, i, b, b + 10 * kUs, 4096, 19, s + 1);
    }
  return job.Finish();
}

TEST(CrossRank, PipelineStagesMicrobatchesAndSchedule) {
  for (bool interleaved : {false, true}) {
    model::Trace t = Pipeline(4, 8, interleaved);
    JobAnalysis a = Analyze(t, {});
    const analysis::Pipeline& p = a.cross_rank.pipeline;
    ASSERT_TRUE(p.detected);
    EXPECT_EQ(p.stages, 4);
    EXPECT_EQ(p.microbatches, 8);
    EXPECT_EQ(p.schedule, interleaved ? "1F1B" : "GPipe (all forward, then all backward)");
    EXPECT_DOUBLE_EQ(p.ideal_fraction, 3.0 / 11.0);
    ASSERT_EQ(p.per_stage.size(), 4u);
    EXPECT_EQ(p.per_stage[0].rank, 0);
    EXPECT_EQ(p.per_stage[3].rank, 3);
    EXPECT_GT(p.bubble_fraction, 0.0);
    EXPECT_LE(p.bubble_fraction, 1.0);
  }
}

// Two ranks, v model chunks each (chunk c on rank c % 2), m micro-batches, each one
// through every chunk and back before the next (depth-first), |steps| profiler steps 20 ms
// apart. The messages both ways look alike: stage 0 sends v forwards and v - 1 gradients
// per micro-batch.
model::Trace TwoRankChunkedPipeline(int v, int m, int steps) {
  Job job(2);
  std::vector<uint32_t> g = {job.Group(0, "pp", 2), job.Group(1, "pp", 2)};
  std::vector<int64_t> seq(2, 0);
  const int chunks = 2 * v;
  for (int step = 0; step < steps; ++step) {
    TimeNs t = step * 20'000 * kUs;
    for (int r = 0; r < 2; ++r) job.ranks[r].Step(step, t - 1000 * kUs, t + 19'000 * kUs);
    auto message = [&](int from_chunk, int to_chunk) {
      const int from = from_chunk % 2, to = to_chunk % 2;
      job.Coll(from, g[from], CommOp::kSend, seq[from], t, t + 10 * kUs, 4096, 19, to);
      job.Coll(to, g[to], CommOp::kRecv, seq[from]++, t, t + 10 * kUs, 4096, 19, from);  // numbered per direction
      t += 50 * kUs;
    };
    for (int i = 0; i < m; ++i) {
      for (int c = 0; c + 1 < chunks; ++c) message(c, c + 1);
      for (int c = chunks - 1; c > 0; --c) message(c, c - 1);
    }
  }
  return job.Finish();
}

// Stage 0 sends m (2v - 1) messages per step; its open count returns to none inside a
// step, so the messages back are not all gradients. 2v - 1 is the count's odd factor.
TEST(CrossRank, TwoRankChunksFromTheirMessageCounts) {
  AnalyzeOptions o;
  for (auto [v, m] : {std::pair{2, 8}, std::pair{3, 4}}) {
    SCOPED_TRACE(::testing::Message() << "v " << v << " m " << m);
    model::Trace t = TwoRankChunkedPipeline(v, m, 4);
    const analysis::Pipeline& p = Analyze(t, o).cross_rank.pipeline;
    ASSERT_TRUE(p.detected);
    EXPECT_EQ(p.stages, 2);
    EXPECT_EQ(p.microbatches, m);
    EXPECT_EQ(p.virtual_stages, v);
    EXPECT_EQ(p.schedule, fmt::format("interleaved 1F1B with {} model chunks per rank", v));
    ASSERT_EQ(p.per_stage.size(), 2u);
    EXPECT_EQ(p.per_stage[0].rank, 0);
    for (const analysis::PipelineStage& s : p.per_stage) EXPECT_EQ(s.steps.size(), 4u) << s.stage;
  }
  // 36 = 12 x 3 = 4 x 9: two readings, neither guessed.
  model::Trace t = TwoRankChunkedPipeline(2, 12, 4);
  const analysis::Pipeline& p = Analyze(t, o).cross_rank.pipeline;
  ASSERT_TRUE(p.detected);
  EXPECT_EQ(p.virtual_stages, 0);
  EXPECT_EQ(p.microbatches, 0);
  EXPECT_EQ(p.schedule,
            "unknown schedule (two ranks pass model chunks both ways: stage 0 sends 36 messages per step, which fits "
            "12 micro-batches with 2 chunks per rank or 4 micro-batches with 5 chunks per rank)");
  // A plain two-stage 1F1B is still one: with one micro-batch of warm-up, its open count
  // returns to none once a flush. Stage 0: F0 F1 B0 F2 B1 ... Fm-1 Bm-2 Bm-1. Once a
  // step (m = 8), and flushed three times a step (m = 4: the step's 12 forwards are three
  // flushes of 4, not 4 micro-batches in 3 chunks).
  for (auto [m, flushes] : {std::pair{8, 1}, std::pair{4, 3}}) {
    SCOPED_TRACE(::testing::Message() << "m " << m << " flushes " << flushes);
    Job job(2);
    std::vector<uint32_t> g = {job.Group(0, "pp", 2), job.Group(1, "pp", 2)};
    int64_t seq = 0;
    for (int step = 0; step < 4; ++step) {
      const TimeNs t0 = step * 20'000 * kUs;
      for (int r = 0; r < 2; ++r) job.ranks[r].Step(step, t0 - 1000 * kUs, t0 + 19'000 * kUs);
      int at = 0;
      auto message = [&](int from, int64_t number) {
        const TimeNs t = t0 + at++ * 100 * kUs;
        job.Coll(from, g[from], CommOp::kSend, number, t, t + 10 * kUs, 4096, 19, 1 - from);
        job.Coll(1 - from, g[1 - from], CommOp::kRecv, number, t, t + 10 * kUs, 4096, 19, from);
      };
      for (int k = 0; k < flushes; ++k, seq += m) {
        message(0, seq);
        for (int i = 0; i < m; ++i) {
          if (i + 1 < m) message(0, seq + i + 1);
          message(1, seq + i);
        }
      }
    }
    model::Trace plain = job.Finish();
    const analysis::Pipeline& q = Analyze(plain, {}).cross_rank.pipeline;
    EXPECT_EQ(q.virtual_stages, 1);
    EXPECT_EQ(q.microbatches, m);
    EXPECT_EQ(q.schedule, "1F1B");
    if (flushes > 1) {
      EXPECT_NE(q.schedule_rule.find("3 flushes per profiler step"), std::string::npos) << q.schedule_rule;
    }
  }
}

TEST(CrossRank, NoPipelineWithoutMessages) {
  JobAnalysis a = Analyze(LateRank(true), {});
  EXPECT_FALSE(a.cross_rank.pipeline.detected);
  EXPECT_TRUE(a.cross_rank.contention.empty());
}

}  // namespace
}  // namespace commlens::analysis
