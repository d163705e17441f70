// Clock alignment on real traces whose ranks are shifted by known offsets: the estimate
// recovers each offset within 10 us or its reported bound, whichever is larger.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>

#include "importers/trace_loader.h"
#include "passes/finish.h"
#include "passes/passes.h"

namespace commlens::passes {
namespace {

using model::TimeNs;

model::Trace LoadRaw(const std::string& workload) {
  importers::LoadOptions o;
  o.align = model::AlignMode::kNone;
  auto t = importers::LoadTrace({std::string(COMMLENS_SOURCE_DIR) + "/examples/traces/" + workload}, o);
  EXPECT_TRUE(t.ok()) << t.status().message();
  return std::move(t).value();
}

// Shifts rank r's clock by shifts[r], as if its host's clock were off by that much.
void Skew(model::Trace* t, const std::vector<TimeNs>& shifts) {
  for (size_t r = 0; r < t->ranks.size(); ++r) ShiftRankTimes(&t->ranks[r], -shifts[r]);
  MatchOps(t);
}

void ExpectRecovered(const model::Trace& t, const std::vector<TimeNs>& shifts) {
  ASSERT_EQ(t.clock.ranks.size(), shifts.size());
  for (size_t r = 0; r < shifts.size(); ++r) {
    const model::ClockOffset& o = t.clock.ranks[r];
    const TimeNs want = shifts[r] - shifts[0];
    const TimeNs allowed = std::max<TimeNs>(10'000, o.bound);
    SCOPED_TRACE("rank " + std::to_string(o.rank));
    EXPECT_GE(o.bound, 0);
    EXPECT_LE(std::llabs(o.offset - want), allowed) << "offset " << o.offset << " bound " << o.bound;
    const bool own_clock = t.clock.mode == model::AlignMode::kCollectives || o.host != t.clock.ranks[0].host;
    if (r > 0 && own_clock) {
      EXPECT_GT(o.samples, 10u);
    }
    std::printf("rank %d: offset %lld ns (shift %lld), bound %lld ns, %llu collectives\n", o.rank,
                static_cast<long long>(o.offset), static_cast<long long>(want), static_cast<long long>(o.bound),
                static_cast<unsigned long long>(o.samples));
  }
}

class AlignRealTraces : public ::testing::TestWithParam<std::string> {};

TEST_P(AlignRealTraces, RecoversKnownOffsetsOfEveryRank) {
  model::Trace t = LoadRaw(GetParam());
  ASSERT_EQ(t.ranks.size(), 4u);
  const std::vector<TimeNs> shifts = {0, 37'000, -12'500'000, 31'700'000};  // 37 us .. 31.7 ms
  const TimeNs first_op = t.ranks[2].comms.start[0];
  Skew(&t, shifts);
  AlignClocks(&t, model::AlignMode::kCollectives);
  ExpectRecovered(t, shifts);
  EXPECT_TRUE(t.clock.applied);
  // Times are back where the shared clock had them (within the estimate's error).
  EXPECT_LE(std::llabs(t.ranks[2].comms.start[0] - first_op), std::max<TimeNs>(10'000, t.clock.ranks[2].bound));
}

INSTANTIATE_TEST_SUITE_P(RealTraces, AlignRealTraces, ::testing::Values("ddp", "fsdp", "moe", "native"));

// The two-GPU cross-rank jobs (examples/workloads/cross_rank.py, Kineto and the plugin's
// recordings of the same runs): rank 1 ahead by 23.4 ms, then behind by 4.7 us.
class AlignTwoRankTraces : public ::testing::TestWithParam<std::string> {};

TEST_P(AlignTwoRankTraces, RecoversKnownOffsets) {
  for (TimeNs shift : {TimeNs{23'400'000}, TimeNs{-4'700}}) {
    SCOPED_TRACE("shift " + std::to_string(shift));
    model::Trace t = LoadRaw(GetParam());
    ASSERT_EQ(t.ranks.size(), 2u);
    const std::vector<TimeNs> shifts = {0, shift};
    Skew(&t, shifts);
    AlignClocks(&t, model::AlignMode::kCollectives);
    ExpectRecovered(t, shifts);
  }
}

INSTANTIATE_TEST_SUITE_P(CrossRankJobs, AlignTwoRankTraces,
                         ::testing::Values("cross-rank/slow-compute", "cross-rank/slow-host", "cross-rank/contention",
                                           "cross-rank/hang", "cross-rank/slow-compute/native",
                                           "cross-rank/contention/native"));

TEST(Align, AutoAlignsHostsAndKeepsRanksOfOneHostTogether) {
  model::Trace t = LoadRaw("ddp");
  const char* hosts[] = {"node-a", "node-a", "node-b", "node-b"};
  for (size_t r = 0; r < 4; ++r) t.ranks[r].hostname = hosts[r];
  const std::vector<TimeNs> shifts = {0, 0, 2'345'678, 2'345'678};
  Skew(&t, shifts);
  AlignClocks(&t, model::AlignMode::kAuto);
  ExpectRecovered(t, shifts);
  EXPECT_EQ(t.clock.ranks[1].offset, 0);  // same host as the reference
  EXPECT_EQ(t.clock.ranks[2].offset, t.clock.ranks[3].offset);
}

TEST(Align, NoneAndOneHostLeaveTimesAlone) {
  model::Trace t = LoadRaw("ddp");
  const TimeNs before = t.ranks[1].gpu.start[0];
  AlignClocks(&t, model::AlignMode::kAuto);  // no host names: one clock
  EXPECT_FALSE(t.clock.applied);
  EXPECT_EQ(t.ranks[1].gpu.start[0], before);
  ASSERT_EQ(t.clock.notes.size(), 1u);
  AlignClocks(&t, model::AlignMode::kNone);
  EXPECT_FALSE(t.clock.applied);
  EXPECT_EQ(t.ranks[1].gpu.start[0], before);
}

// Traces that name no host are checked: ranks 2 and 3 shifted by 5 ms (as a second node's
// clock would be) end collectives before ranks 0 and 1 start them, which the default
// mode takes as proof and aligns every rank.
TEST(Align, AutoAlignsEveryRankWhenTheCheckProvesTheClocksDiffer) {
  model::Trace t = LoadRaw("ddp");
  const std::vector<TimeNs> shifts = {0, 0, 5'000'000, 5'000'000};
  Skew(&t, shifts);
  AlignClocks(&t, model::AlignMode::kAuto);
  EXPECT_TRUE(t.clock.raw.violated());
  EXPECT_GT(t.clock.raw.violations, t.clock.raw.checked / 2);
  EXPECT_TRUE(t.clock.aligned_by_check);
  EXPECT_EQ(t.clock.aligned_per, "ranks");
  ExpectRecovered(t, shifts);
  EXPECT_FALSE(t.clock.aligned.violated());
  ASSERT_FALSE(t.clock.notes.empty());
  EXPECT_EQ(t.clock.notes[0].rfind("clocks checked: the ranks' clocks differ (collective #", 0), 0u) << t.clock.notes[0];
  // The unshifted traces pass the check and stay on their clocks.
  model::Trace raw = LoadRaw("ddp");
  AlignClocks(&raw, model::AlignMode::kAuto);
  EXPECT_GT(raw.clock.raw.checked, 0u);
  EXPECT_FALSE(raw.clock.raw.violated());
  EXPECT_FALSE(raw.clock.applied);
}

// Hosts named, but one host's ranks disagree with each other (rank 1 shifted on node-a):
// the per-host alignment still breaks the rule, so every rank is aligned on its own.
TEST(Align, AutoFallsBackToRanksWhenAHostsRanksDisagree) {
  model::Trace t = LoadRaw("ddp");
  const char* hosts[] = {"node-a", "node-a", "node-b", "node-b"};
  for (size_t r = 0; r < 4; ++r) t.ranks[r].hostname = hosts[r];
  const std::vector<TimeNs> shifts = {0, 3'000'000, 2'345'678, 2'345'678};
  Skew(&t, shifts);
  AlignClocks(&t, model::AlignMode::kAuto);
  EXPECT_TRUE(t.clock.aligned_by_check);
  EXPECT_EQ(t.clock.aligned_per, "ranks");
  ExpectRecovered(t, shifts);
  EXPECT_FALSE(t.clock.aligned.violated());
}

// --align none keeps the raw clocks, and says that they disagree.
TEST(Align, NoneKeepsDisagreeingClocksAndSaysSo) {
  model::Trace t = LoadRaw("ddp");
  Skew(&t, {0, 0, 5'000'000, 5'000'000});
  AlignClocks(&t, model::AlignMode::kNone);
  EXPECT_FALSE(t.clock.applied);
  EXPECT_TRUE(t.clock.aligned.violated());
  ASSERT_EQ(t.clock.notes.size(), 1u);
  EXPECT_EQ(t.clock.notes[0].rfind("--align none: the raw clocks differ", 0), 0u) << t.clock.notes[0];
}

TEST(Align, HostFromPyTorchFileNames) {
  EXPECT_EQ(HostFromFileName("/t/node-17_4242.1732612345678.pt.trace.json"), "node-17");
  EXPECT_EQ(HostFromFileName("gpu_host_a_99.1.pt.trace.json.gz"), "gpu_host_a");
  EXPECT_EQ(HostFromFileName("rank0.json.gz"), "");
  EXPECT_EQ(HostFromFileName("worker0.1.pt.trace.json"), "");   // no _<pid>: a name the job chose
  EXPECT_EQ(HostFromFileName("node_x1.1.pt.trace.json"), "");   // "x1" is no pid
}

TEST(Align, AClockLinkedOnlyThroughOthersIsAlignedThroughThem) {
  // Real DDP collectives, thinned so that rank 3 never shares one with rank 0: rank 0 is
  // left out of the odd ones and rank 3 of the even ones. Ranks 1 and 2 are aligned
  // against rank 0 first, then rank 3 against them.
  model::Trace t = LoadRaw("ddp");
  for (int r : {0, 3})
    for (uint32_t i = 0; i < t.ranks[r].comms.size(); ++i)
      if (t.ranks[r].comms.seq[i] % 2 == (r == 0 ? 1 : 0)) t.ranks[r].comms.group[i] = model::kNoIndex;
  const std::vector<TimeNs> shifts = {0, 37'000, -12'500'000, 31'700'000};
  Skew(&t, shifts);
  AlignClocks(&t, model::AlignMode::kCollectives);
  ExpectRecovered(t, shifts);
  EXPECT_GE(t.clock.ranks[3].bound, t.clock.ranks[1].bound);  // includes the bound of those it went through
  bool said = false;
  for (const std::string& note : t.clock.notes) said = said || note.find("rank 3: shares no collective") != std::string::npos;
  EXPECT_TRUE(said);
}

TEST(Align, AClockNoCollectiveReachesIsSaid) {
  model::Trace t = LoadRaw("ddp");
  for (uint32_t i = 0; i < t.ranks[3].comms.size(); ++i) t.ranks[3].comms.group[i] = model::kNoIndex;
  MatchOps(&t);
  AlignClocks(&t, model::AlignMode::kCollectives);
  EXPECT_EQ(t.clock.ranks[3].bound, -1);
  EXPECT_EQ(t.clock.ranks[3].offset, 0);
  ASSERT_FALSE(t.clock.notes.empty());
  EXPECT_NE(t.clock.notes[0].find("rank 3"), std::string::npos);
}

}  // namespace
}  // namespace commlens::passes
