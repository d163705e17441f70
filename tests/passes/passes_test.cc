// The finishing passes on hand-made ranks: what each pass must leave behind whatever
// format the rows came from.
#include <gtest/gtest.h>

#include "passes/finish.h"
#include "passes/passes.h"

namespace commlens::passes {
namespace {

using model::ActivityClass;
using model::ActivityKind;
using model::CommOp;
using model::kNoIndex;

uint32_t Kernel(model::RankTrace* r, const char* name, model::TimeNs start, model::TimeNs end, int64_t corr = 0) {
  return r->gpu.Append(start, end, r->strings.Intern(name), 0, 7, corr, ActivityKind::kKernel);
}

uint32_t Group(model::RankTrace* r, const char* name, int self = -1) {
  model::ProcessGroup g;
  g.name = name;
  g.size = 2;
  g.self = self;
  return r->FindOrAddGroup(g);
}

TEST(Passes, SortKeepsCommRowsOnTheirActivity) {
  model::RankTrace r;
  uint32_t late = Kernel(&r, "ncclDevKernel_AllReduce_Sum_f32_RING_LL", 500, 600);
  Kernel(&r, "gemm", 100, 200);
  uint32_t c = r.comms.Append(500, 600, CommOp::kAllReduce, {}, 1, 1, 4, kNoIndex, -1, -1, late);
  r.gpu.comm[late] = c;
  SortActivities(&r);
  EXPECT_EQ(r.gpu.start[0], 100);
  EXPECT_EQ(r.comms.activity[c], 1u);
  EXPECT_EQ(r.gpu.comm[1], c);
  EXPECT_EQ(r.gpu.comm[0], kNoIndex);
}

TEST(Passes, ClassifyGivesBareNcclKernelsACommRow) {
  model::RankTrace r;
  Kernel(&r, "gemm", 0, 10);
  Kernel(&r, "ncclDevKernel_AllGather_RING_LL", 20, 30);
  r.gpu.Append(40, 50, r.strings.Intern("Memcpy DtoD (Device -> Device)"), 0, 7, 0, ActivityKind::kMemcpy);
  Classify(&r);
  EXPECT_EQ(r.gpu.cls[0], ActivityClass::kCompute);
  EXPECT_EQ(r.gpu.cls[1], ActivityClass::kCommunication);
  EXPECT_EQ(r.gpu.cls[2], ActivityClass::kMemory);
  ASSERT_EQ(r.comms.size(), 1u);
  EXPECT_EQ(r.comms.op[0], CommOp::kAllGather);
  EXPECT_EQ(r.comms.activity[0], 1u);
  EXPECT_EQ(r.gpu.comm[1], 0u);
}

TEST(Passes, LinkLaunchesByCorrelationAndCountsTheRest) {
  model::RankTrace r;
  Kernel(&r, "gemm", 100, 200, 42);
  Kernel(&r, "gemm", 300, 400, 43);
  r.host.Append(10, 20, r.strings.Intern("cudaLaunchKernel"), 1, 1, 42, model::HostKind::kRuntime);
  LinkLaunches(&r);
  EXPECT_EQ(r.gpu.launch[0], 10);
  EXPECT_EQ(r.gpu.launch[1], model::kNoTime);
  EXPECT_EQ(r.stats.count(model::ImportIssue::kUnmatchedCorrelation), 1u);
}

TEST(Passes, NumberOpsPerGroupAndPerP2pDirectionAndPeer) {
  model::RankTrace r;
  uint32_t g = Group(&r, "0"), h = Group(&r, "1");
  auto op = [&](CommOp o, uint32_t group, int32_t peer, model::TimeNs t, int64_t seq = -1) {
    return r.comms.Append(t, t + 1, o, {}, 1, 1, 4, group, seq, peer, kNoIndex);
  };
  uint32_t a0 = op(CommOp::kAllReduce, g, -1, 10);
  uint32_t s1 = op(CommOp::kSend, g, 1, 20);
  uint32_t a1 = op(CommOp::kAllReduce, g, -1, 30);
  uint32_t r1 = op(CommOp::kRecv, g, 1, 40);
  uint32_t s1b = op(CommOp::kSend, g, 1, 50);
  uint32_t s2 = op(CommOp::kSend, g, 2, 60);
  uint32_t b0 = op(CommOp::kAllReduce, h, -1, 5);
  uint32_t given = op(CommOp::kAllReduce, h, -1, 1, 7);
  NumberOps(&r);
  EXPECT_EQ(r.comms.seq[a0], 0);
  EXPECT_EQ(r.comms.seq[a1], 1);
  EXPECT_EQ(r.comms.seq[s1], 0);
  EXPECT_EQ(r.comms.seq[s1b], 1);
  EXPECT_EQ(r.comms.seq[r1], 0);
  EXPECT_EQ(r.comms.seq[s2], 0);
  EXPECT_EQ(r.comms.seq[given], 7);  // the source said
  EXPECT_EQ(r.comms.seq[b0], 8);     // numbering goes on after it
}

TEST(Passes, NestAnnotationsPerThread) {
  model::RankTrace r;
  auto range = [&](model::TimeNs s, model::TimeNs e, int64_t tid) {
    return r.annotations.Append(s, e, r.strings.Intern("x"), {}, 1, tid, -1);
  };
  uint32_t outer = range(0, 100, 1);
  uint32_t inner = range(10, 50, 1);
  uint32_t innermost = range(20, 30, 1);
  uint32_t sibling = range(60, 90, 1);
  uint32_t other_thread = range(20, 30, 2);
  NestAnnotations(&r);
  EXPECT_EQ(r.annotations.depth[outer], 0);
  EXPECT_EQ(r.annotations.depth[inner], 1);
  EXPECT_EQ(r.annotations.depth[innermost], 2);
  EXPECT_EQ(r.annotations.depth[sibling], 1);
  EXPECT_EQ(r.annotations.depth[other_thread], 0);
}

TEST(Passes, FindStepsFromAnnotationsAndOldStyleCpuOps) {
  model::RankTrace r;
  r.annotations.Append(200, 300, r.strings.Intern("ProfilerStep#8"), {}, 1, 1, -1);
  r.annotations.Append(200, 300, r.strings.Intern("ProfilerStep#8"), {}, 0, 7, 0);  // GPU-side copy
  r.host.Append(100, 200, r.strings.Intern("ProfilerStep#7"), 1, 1, 0, model::HostKind::kCpuOp);
  r.host.Append(0, 50, r.strings.Intern("aten::mm"), 1, 1, 0, model::HostKind::kCpuOp);
  FindSteps(&r);
  ASSERT_EQ(r.steps.size(), 2u);
  EXPECT_EQ(r.steps[0].number, 7);
  EXPECT_EQ(r.steps[1].number, 8);
  EXPECT_EQ(r.steps[1].start, 200);
}

// Two ranks of one group: an all-reduce on both, one only on rank 0, a message from
// rank 0 to rank 1, and a copy-engine all-gather numbered in its own sequence.
model::Trace TwoRanks() {
  model::Trace t;
  for (int rank = 0; rank < 2; ++rank) {
    model::RankTrace r;
    r.rank = rank;
    uint32_t g = Group(&r, "world", rank);
    r.comms.Append(10 + rank, 20, CommOp::kAllReduce, {}, 1, 1, 4, g, 0, -1, kNoIndex);
    if (rank == 0) r.comms.Append(30, 40, CommOp::kAllReduce, {}, 1, 1, 4, g, 1, -1, kNoIndex);
    CommOp dir = rank == 0 ? CommOp::kSend : CommOp::kRecv;
    r.comms.Append(50, 60, dir, {}, 1, 1, 4, g, 0, 1 - rank, kNoIndex);
    uint32_t ce = r.comms.Append(70, 80, CommOp::kAllGather, {}, 1, 2, 8, g, 0, -1, kNoIndex);
    r.comms.flags[ce] = model::kCommCopyEngine;
    t.ranks.push_back(std::move(r));
  }
  FinishJob(&t);
  return t;
}

TEST(Passes, JobGroupsJoinRanksByName) {
  model::Trace t = TwoRanks();
  ASSERT_EQ(t.groups.size(), 1u);
  EXPECT_EQ(t.groups[0].name, "world");
  EXPECT_EQ(t.ranks[0].groups[0].job_group, 0u);
  EXPECT_EQ(t.ranks[1].groups[0].job_group, 0u);
}

TEST(Passes, MatchOpsLinksCollectivesAndBothEndsOfAMessage) {
  model::Trace t = TwoRanks();
  const model::MatchedOps& m = t.matched;
  ASSERT_EQ(m.size(), 4u);  // all-reduce 0, all-reduce 1, copy-engine all-gather, message
  ASSERT_EQ(m.first.size(), 5u);
  // Sorted by (group, kind, sender, receiver, seq).
  EXPECT_EQ(m.kind[0], model::MatchKind::kCollective);
  EXPECT_EQ(m.members(0), 2u);
  EXPECT_EQ(m.start[m.first[0]], 10);
  EXPECT_EQ(m.start[m.first[0] + 1], 11);
  EXPECT_EQ(m.members(1), 1u);  // ran on rank 0 only
  EXPECT_EQ(m.kind[2], model::MatchKind::kCopyEngine);
  EXPECT_EQ(m.members(2), 2u);
  EXPECT_EQ(m.kind[3], model::MatchKind::kP2p);
  EXPECT_EQ(m.sender[3], 0);
  EXPECT_EQ(m.receiver[3], 1);
  EXPECT_EQ(m.members(3), 2u);
  EXPECT_EQ(t.ranks[m.rank_index[m.first[3]]].comms.op[m.row[m.first[3]]], CommOp::kSend);
}

TEST(Passes, FinishRankOnAnEmptyRank) {
  model::RankTrace r;
  FinishRank(&r);
  model::Trace t;
  t.ranks.push_back(std::move(r));
  FinishJob(&t);
  EXPECT_EQ(t.matched.size(), 0u);
  EXPECT_EQ(t.matched.first.size(), 1u);
}

}  // namespace
}  // namespace commlens::passes
