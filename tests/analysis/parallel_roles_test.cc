// The rules that name a process group's parallelism (analysis/parallel_roles.h), on small
// made-up jobs: descriptions as Megatron and torchtitan write them, send/recv pipelines
// against all-to-alls made of send/recv, and the mesh rules.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "analysis/parallel_roles.h"

namespace commlens::analysis {
namespace {

using model::CommOp;

int64_t kBytes = 1 << 20;  // each op's size (a small one is a barrier's)

// A job of |world| ranks; AddGroup gives each member rank the group and |ops| operations
// in it (each a batch of its own unless |batch| puts them on one kernel per rank).
struct Job {
  model::Trace trace;
  explicit Job(int world) {
    trace.world_size = world;
    trace.ranks.resize(world);
    for (int r = 0; r < world; ++r) trace.ranks[r].rank = r;
  }
  uint32_t AddGroup(std::vector<int> ranks, const std::string& description, std::vector<CommOp> ops,
                    std::vector<int> peers = {}) {
    const uint32_t j = static_cast<uint32_t>(trace.groups.size());
    model::JobGroup g;
    g.name = std::to_string(j);
    g.description = description;
    g.size = static_cast<int>(ranks.size());
    g.ranks = ranks;
    trace.groups.push_back(g);
    for (size_t self = 0; self < ranks.size(); ++self) {
      model::RankTrace& r = trace.ranks[ranks[self]];
      model::ProcessGroup p;
      p.name = g.name;
      p.description = description;
      p.size = g.size;
      p.ranks = ranks;
      p.self = static_cast<int>(self);
      p.job_group = j;
      const uint32_t local = r.FindOrAddGroup(p);
      for (size_t k = 0; k < ops.size(); ++k) {
        const int32_t peer = k < peers.size() ? peers[k] : -1;
        // One kernel per rank for all of the group's ops: a batch.
        r.comms.Append(100, 200, ops[k], model::StringId{}, 1, 1, kBytes, local, -1, peer, peers.empty() ? model::kNoIndex : 7);
      }
    }
    return j;
  }
  ParallelRoles Roles() const { return FindParallelRoles(trace, {}, {}, {}, 0); }
};

TEST(ParallelRoles, DescriptionsAsFrameworksWriteThem) {
  Job job(8);
  const std::vector<CommOp> ar = {CommOp::kAllReduce};
  const uint32_t tp = job.AddGroup({0, 1}, "TENSOR_MODEL_PARALLEL_GROUP", ar);
  const uint32_t dp = job.AddGroup({0, 2}, "DATA_PARALLEL_GROUP_WITH_CP", ar);
  const uint32_t pp = job.AddGroup({0, 4}, "PIPELINE_MODEL_PARALLEL_GROUP", {CommOp::kSend});
  const uint32_t ep = job.AddGroup({1, 3}, "mesh_ep", {CommOp::kAllToAll});
  const uint32_t cp = job.AddGroup({2, 3}, "cp", ar);
  const uint32_t mixed = job.AddGroup({0, 1, 2, 3}, "TENSOR_AND_DATA_PARALLEL_GROUP", ar);
  const uint32_t fsdp = job.AddGroup({4, 5}, "dp_shard", {CommOp::kAllGather});
  const ParallelRoles roles = job.Roles();
  EXPECT_EQ(roles.groups[tp].role, ParallelRole::kTensor);
  EXPECT_EQ(roles.groups[dp].role, ParallelRole::kData);
  EXPECT_EQ(roles.groups[pp].role, ParallelRole::kPipeline);
  EXPECT_EQ(roles.groups[ep].role, ParallelRole::kExpert);
  EXPECT_EQ(roles.groups[cp].role, ParallelRole::kContext);
  EXPECT_EQ(roles.groups[mixed].role, ParallelRole::kMixed);
  EXPECT_EQ(roles.groups[fsdp].role, ParallelRole::kData);
  EXPECT_EQ(roles.groups[tp].rule, "its description 'TENSOR_MODEL_PARALLEL_GROUP'");
}

// Megatron's expert groups do the experts' own data or tensor parallelism; a description
// naming no parallelism is not guessed from the structure.
TEST(ParallelRoles, ExpertGroupsAndDescriptionsNamingNone) {
  Job job(4);
  const std::vector<CommOp> ar = {CommOp::kAllReduce};
  const uint32_t edp = job.AddGroup({0, 2}, "EXPERT_DATA_PARALLEL_GROUP", ar);
  const uint32_t etp = job.AddGroup({0, 1}, "EXPERT_TENSOR_PARALLEL_GROUP", ar);
  const uint32_t emb = job.AddGroup({0, 3}, "EMBEDDING_GROUP", ar);
  const ParallelRoles roles = job.Roles();
  EXPECT_EQ(roles.groups[edp].role, ParallelRole::kData);
  EXPECT_EQ(roles.groups[etp].role, ParallelRole::kTensor);
  EXPECT_EQ(roles.groups[emb].role, ParallelRole::kUnknown);
  EXPECT_EQ(roles.groups[emb].rule, "its description 'EMBEDDING_GROUP', which names no parallelism");
}

TEST(ParallelRoles, SendRecvPipelinesAndAllToAllsMadeOfSendRecv) {
  Job job(4);
  // A pipeline group of 4 whose ranks each talk to a neighbour only.
  const uint32_t pp = job.AddGroup({0, 1, 2, 3}, "", {CommOp::kSend, CommOp::kRecv}, {1, 1});
  // An all-to-all made of send/recv in one batch: to and from every other member (and itself).
  const uint32_t ep = job.AddGroup({0, 1, 2, 3}, "",
                                   {CommOp::kSend, CommOp::kSend, CommOp::kSend, CommOp::kSend, CommOp::kRecv,
                                    CommOp::kRecv, CommOp::kRecv, CommOp::kRecv},
                                   {0, 1, 2, 3, 0, 1, 2, 3});
  ParallelRoles roles = job.Roles();
  EXPECT_EQ(roles.groups[pp].role, ParallelRole::kPipeline) << roles.groups[pp].rule;
  EXPECT_EQ(roles.groups[ep].role, ParallelRole::kExpert) << roles.groups[ep].rule;
  // Peers unknown (an Nsight export without payloads): no exchange can be told, send/recv
  // between two members is a pipeline.
  Job blind(2);
  const uint32_t b = blind.AddGroup({0, 1}, "", {CommOp::kSend, CommOp::kRecv}, {-1, -1});
  EXPECT_EQ(blind.Roles().groups[b].role, ParallelRole::kPipeline);
  // A ring (each member sends to the next, the last to the first): a pipeline, said to
  // look like an interleaved one or a context-parallel ring.
  Job ring(4);
  model::Trace& t = ring.trace;
  const uint32_t g = ring.AddGroup({0, 1, 2, 3}, "", {});
  for (int r = 0; r < 4; ++r) {
    t.ranks[r].comms.Append(100, 200, CommOp::kSend, model::StringId{}, 1, 1, kBytes, 0, -1, (r + 1) % 4, 7);
    t.ranks[r].comms.Append(100, 200, CommOp::kRecv, model::StringId{}, 1, 1, kBytes, 0, -1, (r + 3) % 4, 7);
  }
  const ParallelRoles ring_roles = ring.Roles();
  EXPECT_EQ(ring_roles.groups[g].role, ParallelRole::kPipeline);
  EXPECT_NE(ring_roles.groups[g].rule.find("context-parallel ring"), std::string::npos) << ring_roles.groups[g].rule;
  // With two members, a batch both ways cannot tell a pipeline from an all-to-all.
  Job two(2);
  const uint32_t two_way = two.AddGroup({0, 1}, "", {CommOp::kSend, CommOp::kRecv}, {1, 1});
  roles = two.Roles();
  EXPECT_EQ(roles.groups[two_way].role, ParallelRole::kUnknown);
  EXPECT_NE(roles.groups[two_way].rule.find("a description would tell"), std::string::npos);
}

TEST(ParallelRoles, TheMeshRules) {
  const std::vector<CommOp> ar = {CommOp::kAllReduce};
  {
    // DDP: the world group all-reducing.
    Job job(4);
    const uint32_t world = job.AddGroup({0, 1, 2, 3}, "default_pg", ar);
    EXPECT_EQ(job.Roles().groups[world].role, ParallelRole::kData);
  }
  {
    // TP 2 x DP 4: TP over consecutive ranks, DP strided.
    Job job(8);
    std::vector<uint32_t> tp, dp;
    for (int i = 0; i < 8; i += 2) tp.push_back(job.AddGroup({i, i + 1}, "", ar));
    for (int i = 0; i < 2; ++i) dp.push_back(job.AddGroup({i, i + 2, i + 4, i + 6}, "", ar));
    const ParallelRoles roles = job.Roles();
    for (uint32_t j : tp) EXPECT_EQ(roles.groups[j].role, ParallelRole::kTensor) << roles.groups[j].rule;
    for (uint32_t j : dp) EXPECT_EQ(roles.groups[j].role, ParallelRole::kData) << roles.groups[j].rule;
  }
  {
    // One dimension below the world (PP by send/recv beside it): data parallel.
    Job job(4);
    const uint32_t a = job.AddGroup({0, 2}, "", ar), b = job.AddGroup({1, 3}, "", ar);
    const uint32_t p = job.AddGroup({0, 1}, "", {CommOp::kSend});
    const ParallelRoles roles = job.Roles();
    EXPECT_EQ(roles.groups[a].role, ParallelRole::kData);
    EXPECT_EQ(roles.groups[b].role, ParallelRole::kData);
    EXPECT_EQ(roles.groups[p].role, ParallelRole::kPipeline);
  }
  {
    // Three dimensions carrying reductions: no rule tells them apart.
    Job job(8);
    std::vector<uint32_t> all;
    for (int i = 0; i < 8; i += 2) all.push_back(job.AddGroup({i, i + 1}, "", ar));
    for (int i : {0, 1, 4, 5}) all.push_back(job.AddGroup({i, i + 2}, "", ar));
    for (int i = 0; i < 4; ++i) all.push_back(job.AddGroup({i, i + 4}, "", ar));
    const ParallelRoles roles = job.Roles();
    for (uint32_t j : all) EXPECT_EQ(roles.groups[j].role, ParallelRole::kUnknown) << roles.groups[j].rule;
  }
  {
    // The shapes decide, not the order the groups come in: DP before TP, interleaved.
    Job job(4);
    const uint32_t d0 = job.AddGroup({1, 3}, "", ar), t0 = job.AddGroup({2, 3}, "", ar);
    const uint32_t d1 = job.AddGroup({0, 2}, "", ar), t1 = job.AddGroup({0, 1}, "", ar);
    const ParallelRoles roles = job.Roles();
    for (uint32_t j : {t0, t1}) EXPECT_EQ(roles.groups[j].role, ParallelRole::kTensor) << roles.groups[j].rule;
    for (uint32_t j : {d0, d1}) EXPECT_EQ(roles.groups[j].role, ParallelRole::kData) << roles.groups[j].rule;
  }
  {
    // Groups that leave ranks out are no dimension of the mesh.
    Job job(4);
    const uint32_t a = job.AddGroup({0, 1}, "", ar);
    EXPECT_EQ(job.Roles().groups[a].role, ParallelRole::kUnknown);
  }
  {
    // A world group whose only reductions are barriers (all-reduces of 4 bytes).
    Job job(4);
    kBytes = 4;
    const uint32_t world = job.AddGroup({0, 1, 2, 3}, "", ar);
    kBytes = 1 << 20;
    EXPECT_EQ(job.Roles().groups[world].role, ParallelRole::kUnknown);
    EXPECT_EQ(job.Roles().groups[world].rule, "only small reductions (at most 4 bytes: barriers, scalars)");
  }
  {
    // No operations, one member: unknown, and said.
    Job job(2);
    const uint32_t idle = job.AddGroup({0, 1}, "", {});
    const uint32_t one = job.AddGroup({0}, "", ar);
    const ParallelRoles roles = job.Roles();
    EXPECT_EQ(roles.groups[idle].rule, "no operations in the traces");
    EXPECT_EQ(roles.groups[one].rule, "one member");
  }
}

}  // namespace
}  // namespace commlens::analysis
