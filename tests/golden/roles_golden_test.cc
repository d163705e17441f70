// Parallelism roles on real traces (docs/analysis.md, "Parallelism roles"): the real
// 2 x 2 TP x DP mesh named from its descriptions, and again from its structure alone once
// the descriptions are removed; the exposed communication per role per step adds up with
// the time breakdown; DDP's world group is data parallel; the MoE job's expert and data
// groups; a two-rank all-to-all made of send/recv (Nsight) is not called a pipeline.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>
#include <string>

#include "analysis/analyze.h"
#include "report/json_report.h"
#include "testing/sample_job.h"

namespace commlens {
namespace {

using analysis::ParallelRole;
using testing::AnalyzeSample;

// The role of every job group, by its member ranks ("0,1").
std::map<std::string, ParallelRole> RolesByMembers(const model::Trace& trace, const analysis::ParallelRoles& roles) {
  std::map<std::string, ParallelRole> out;
  for (const analysis::GroupRole& g : roles.groups) {
    std::string members;
    for (int r : trace.groups[g.job_group].ranks) members += (members.empty() ? "" : ",") + std::to_string(r);
    out[members] = g.role;
  }
  return out;
}

// The mesh sample's layout: TP over {0,1} and {2,3}, DP over {0,2} and {1,3}.
void ExpectTpDpMesh(const std::map<std::string, ParallelRole>& roles) {
  EXPECT_EQ(roles.at("0,1"), ParallelRole::kTensor);
  EXPECT_EQ(roles.at("2,3"), ParallelRole::kTensor);
  EXPECT_EQ(roles.at("0,2"), ParallelRole::kData);
  EXPECT_EQ(roles.at("1,3"), ParallelRole::kData);
}

TEST(Roles, MeshNamedFromItsDescriptions) {
  testing::Analyzed a = AnalyzeSample("mesh");
  const auto roles = RolesByMembers(a.trace, a.job.roles);
  ExpectTpDpMesh(roles);
  for (const analysis::GroupRole& g : a.job.roles.groups)
    if (g.role != ParallelRole::kUnknown) {
      EXPECT_NE(g.rule.find("description"), std::string::npos) << g.rule;
    }
}

// The same job with every description gone: the structure tells TP (consecutive ranks)
// from DP (strided), as Megatron and torchtitan order their meshes.
TEST(Roles, MeshNamedFromItsStructureWithoutDescriptions) {
  std::filesystem::current_path(COMMLENS_SOURCE_DIR);
  auto t = importers::LoadTrace({"examples/traces/mesh"}, {});
  ASSERT_TRUE(t.ok()) << t.status().message();
  model::Trace trace = std::move(t).value();
  for (model::JobGroup& g : trace.groups) g.description.clear();
  for (model::RankTrace& r : trace.ranks)
    for (model::ProcessGroup& g : r.groups) g.description.clear();
  const analysis::JobAnalysis job = analysis::Analyze(trace, {});
  const auto roles = RolesByMembers(trace, job.roles);
  ExpectTpDpMesh(roles);
  for (const analysis::GroupRole& g : job.roles.groups)
    if (g.role == ParallelRole::kTensor) {
      EXPECT_NE(g.rule.find("consecutive"), std::string::npos) << g.rule;
    }
}

// The plugin's recording of the same run names no group and no member, only rank counts:
// the members come from the ranks that use each communicator, and the structure names the
// same roles as the descriptions did; the world communicator's barriers are no role.
TEST(Roles, TheRecordingOfTheMeshNamesTheSameRoles) {
  testing::Analyzed a = AnalyzeSample("mesh/native");
  const auto roles = RolesByMembers(a.trace, a.job.roles);
  ExpectTpDpMesh(roles);
  EXPECT_EQ(roles.at("0,1,2,3"), ParallelRole::kUnknown);
  EXPECT_FALSE(a.job.roles.has_kernels);
}

// The mesh with its DP traffic in coalesced batches (examples/traces/mesh-coalesced): the
// profiler writes each batch as one op of the batch's bytes, the recording as the ops of
// one group and launch; both count a batch once, 128 MiB, at the same bandwidth over the
// transfer time (287 GB/s on these NVLinks), and the roles stay named.
TEST(Roles, CoalescedBatchesCountOnce) {
  std::map<std::string, double> busbw;  // input -> the DP all-reduce batches' busbw
  for (const char* w : {"mesh-coalesced", "mesh-coalesced/native"}) {
    SCOPED_TRACE(w);
    testing::Analyzed a = AnalyzeSample(w);
    ExpectTpDpMesh(RolesByMembers(a.trace, a.job.roles));
    int dp_all_reduce = 0, dp_all_gather = 0;
    for (const analysis::CollectiveBucket& b : a.job.collectives.buckets) {
      if (b.size_lo != (128 << 20)) continue;
      EXPECT_EQ(b.batched, std::string(w).find("native") != std::string::npos) << model::CommOpName(b.op);
      if (b.op == model::CommOp::kAllReduce) {
        ++dp_all_reduce;
        EXPECT_NEAR(b.transfer_busbw_gbps, 287.0, 15.0);
        busbw[w] = b.transfer_busbw_gbps;
      }
      dp_all_gather += b.op == model::CommOp::kAllGather;
    }
    EXPECT_EQ(dp_all_reduce, 2);  // one bucket row per DP group
    EXPECT_EQ(dp_all_gather, 2);
  }
  EXPECT_NEAR(busbw["mesh-coalesced/native"] / busbw["mesh-coalesced"], 1.0, 0.05);
}

// Per step, each role's exposed communication is at most its communication, and together
// (stretches exposed in two roles at once shared between them) they make the step's
// exposed communication, and at most what the roles' kernels ran; on the mesh both roles
// leave a real share of the step exposed (measured: TP 20.9%, DP 23.8% of the summarized
// step, adding up to the breakdown's 44.7%).
TEST(Roles, ExposedCommunicationPerRoleAddsUpWithTheBreakdown) {
  testing::Analyzed a = AnalyzeSample("mesh");
  const analysis::ParallelRoles& roles = a.job.roles;
  ASSERT_TRUE(roles.has_kernels);
  ASSERT_EQ(roles.steps.size(), a.job.steps.size());
  for (size_t i = 0; i < roles.steps.size(); ++i) {
    const analysis::RoleTimes& t = roles.steps[i];
    const analysis::TimeBreakdown& b = a.job.steps[i].mean;
    SCOPED_TRACE(t.step);
    EXPECT_EQ(t.step, a.job.steps[i].number);
    model::TimeNs exposed = 0, comm = 0;
    for (size_t r = 0; r < analysis::kRoleCount; ++r) {
      EXPECT_LE(t.exposed[r], t.comm[r]);
      exposed += t.exposed[r];
      comm += t.comm[r];
    }
    EXPECT_GE(exposed + 2 * t.ranks, b.exposed_comm);  // rounding of each mean
    EXPECT_GE(comm + 2 * t.ranks, b.comm);
    EXPECT_EQ(t.exposed[static_cast<size_t>(ParallelRole::kUnknown)], 0);
  }
  EXPECT_GT(roles.summary.ExposedPct(ParallelRole::kTensor), 10.0);
  EXPECT_GT(roles.summary.ExposedPct(ParallelRole::kData), 10.0);
  EXPECT_LT(roles.summary.ExposedPct(ParallelRole::kTensor), 40.0);
  EXPECT_LT(roles.summary.ExposedPct(ParallelRole::kData), 40.0);
}

TEST(Roles, OtherSamples) {
  {
    testing::Analyzed a = AnalyzeSample("ddp");
    ASSERT_EQ(a.job.roles.groups.size(), 1u);
    EXPECT_EQ(a.job.roles.groups[0].role, ParallelRole::kData);  // the world group, all-reducing gradients
    EXPECT_GT(a.job.roles.summary.ExposedPct(ParallelRole::kData), 5.0);
  }
  {
    testing::Analyzed a = AnalyzeSample("moe");
    std::vector<ParallelRole> named;
    for (const analysis::GroupRole& g : a.job.roles.groups) named.push_back(g.role);
    EXPECT_EQ(std::count(named.begin(), named.end(), ParallelRole::kExpert), 1);
    EXPECT_EQ(std::count(named.begin(), named.end(), ParallelRole::kData), 1);
  }
  {
    // Two ranks all-to-all with send/recv (how NCCL runs PyTorch's all_to_all; Nsight sees
    // the send/recv calls): not a pipeline, and the report says why it cannot tell.
    testing::Analyzed a = AnalyzeSample("nsys-2gpu/moe");
    bool exchange = false;
    for (const analysis::GroupRole& g : a.job.roles.groups) {
      EXPECT_NE(g.role, ParallelRole::kPipeline) << g.rule;
      exchange = exchange || g.rule.find("both ways in one batch") != std::string::npos;
    }
    EXPECT_TRUE(exchange);
  }
  {
    // A recording holds no kernels: roles, but no exposure to report.
    testing::Analyzed a = AnalyzeSample("native");
    EXPECT_FALSE(a.job.roles.has_kernels);
  }
}

// The JSON carries the roles and the per-role times (parsed back).
TEST(Roles, JsonHoldsRolesAndTimes) {
  testing::Analyzed a = AnalyzeSample("mesh");
  const nlohmann::json doc = nlohmann::json::parse(report::AnalyzeToJson(a.trace, a.job).dump());
  const nlohmann::json& r = doc.at("parallel_roles");
  ASSERT_EQ(r.at("groups").size(), a.trace.groups.size());
  int tensor = 0;
  for (const auto& g : r.at("groups")) tensor += g.at("role") == "tensor";
  EXPECT_EQ(tensor, 2);
  EXPECT_EQ(r.at("steps").size(), a.job.steps.size());
  EXPECT_GT(r.at("summary").at("exposed_pct").at("tensor").get<double>(), 10.0);
}

}  // namespace
}  // namespace commlens
