// Pipelines as people run them (issue 30, docs/analysis.md "Pipelines"), on real traces
// of examples/workloads/pipeline.py (examples/traces/pipelines/README.md): Megatron's
// batched 1F1B loop and torch.distributed.pipelining's schedules. Each layout.txt says
// what the job was; the analysis must find it from the traffic: stages, micro-batches,
// schedule, model chunks per rank, every data-parallel replica, the pace-setting stage,
// and batched sends and receives counted once.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <string>

#include "analysis/analyze.h"
#include "testing/sample_job.h"

namespace commlens {
namespace {

using testing::AnalyzeSample;

const analysis::Pipeline& Expect(const testing::Analyzed& a, int stages, int replicas, int micro, int v,
                                 const std::string& schedule) {
  const analysis::Pipeline& p = a.job.cross_rank.pipeline;
  EXPECT_TRUE(p.detected);
  EXPECT_EQ(p.stages, stages);
  EXPECT_EQ(p.replicas, replicas);
  EXPECT_EQ(p.microbatches, micro);
  EXPECT_EQ(p.virtual_stages, v);
  EXPECT_EQ(p.schedule, schedule);
  EXPECT_EQ(p.per_stage.size(), static_cast<size_t>(stages * replicas));
  EXPECT_NEAR(p.ideal_fraction, (stages - 1.0) / (micro + stages - 1.0) / v, 1e-12);
  return p;
}

// One job, three inputs: the profiler's trace, the plugin's recording and Nsight Systems
// (a separate run of the same job, exported with its payloads).
TEST(Pipelines, MegatronBatched1F1BFromKinetoNsightAndTheRecording) {
  for (const char* w : {"pipelines/megatron-2r", "pipelines/megatron-2r/native", "pipelines/megatron-2r/nsys"}) {
    SCOPED_TRACE(w);
    testing::Analyzed a = AnalyzeSample(w);
    const analysis::Pipeline& p = Expect(a, 2, 1, 8, 1, "1F1B");
    EXPECT_EQ(p.per_stage[0].rank, 0);
    EXPECT_EQ(p.per_stage[1].rank, 1);
  }
}

// A batch_isend_irecv runs as one kernel: in the Kineto trace its ops get the kernel's
// time, sizes, peers and group from the record_param_comms ops, are matched with the other
// end, and the collectives table counts each batch once (its time is not counted twice).
TEST(Pipelines, BatchesCountedOnceAndMatched) {
  testing::Analyzed a = AnalyzeSample("pipelines/megatron-2r");
  int64_t batches = 0, batch_ops = 0;
  model::TimeNs bucket_time = 0, kernel_time = 0;
  for (const auto& b : a.job.collectives.buckets) {
    bucket_time += b.total;
    if (b.batched) {
      batches += static_cast<int64_t>(b.count);
      EXPECT_EQ(b.op, model::CommOp::kSendRecv);
      EXPECT_GT(b.transfer_busbw_gbps, 0.0);
    }
    EXPECT_NE(b.group_name, "?");
  }
  for (const model::RankTrace& r : a.trace.ranks) {
    for (uint32_t i = 0; i < r.comms.size(); ++i) batch_ops += (r.comms.flags[i] & model::kCommBatched) != 0;
    for (uint32_t i = 0; i < r.gpu.size(); ++i)
      if (r.gpu.comm[i] != model::kNoIndex && r.gpu.cls[i] == model::ActivityClass::kCommunication)
        kernel_time += r.gpu.end[i] - r.gpu.start[i];
  }
  EXPECT_GT(batches, 0);
  EXPECT_EQ(batch_ops, 2 * batches);  // Megatron's steady state: a send and a receive per batch
  EXPECT_EQ(bucket_time, kernel_time);
  uint64_t messages = 0;
  for (size_t k = 0; k < a.trace.matched.size(); ++k)
    if (a.trace.matched.kind[k] == model::MatchKind::kP2p) {
      EXPECT_EQ(a.trace.matched.members(k), 2u);
      ++messages;
    }
  EXPECT_GT(messages, 0u);
}

// Nsight: the calls between ncclGroupStart and ncclGroupEnd that share one kernel are a
// batch, counted once.
TEST(Pipelines, NsightGroupsAreBatches) {
  testing::Analyzed a = AnalyzeSample("pipelines/megatron-2r/nsys");
  bool batched = false;
  for (const auto& b : a.job.collectives.buckets) batched = batched || (b.batched && b.op == model::CommOp::kSendRecv);
  EXPECT_TRUE(batched);
}

TEST(Pipelines, EveryDataParallelReplica) {
  for (const char* w : {"pipelines/megatron-pp2-dp2", "pipelines/megatron-pp2-dp2/native"}) {
    SCOPED_TRACE(w);
    testing::Analyzed a = AnalyzeSample(w);
    const analysis::Pipeline& p = Expect(a, 2, 2, 8, 1, "1F1B");
    // Megatron's layout (data-parallel index fastest): pipelines {0, 2} and {1, 3}.
    ASSERT_EQ(p.per_stage.size(), 4u);
    EXPECT_EQ(p.per_stage[0].rank, 0);
    EXPECT_EQ(p.per_stage[1].rank, 2);
    EXPECT_EQ(p.per_stage[2].rank, 1);
    EXPECT_EQ(p.per_stage[3].rank, 3);
    ASSERT_EQ(p.replica_bubble.size(), 2u);
    EXPECT_GE(p.replica_spread, 0.0);
  }
}

// torch.distributed.pipelining's schedules, from the profiler's traces and from the plugin's
// recordings of the same runs (whole runs without steps; the stages' start-up exchange of
// shapes, small messages, is left out).
TEST(Pipelines, TorchSchedules) {
  for (const char* w : {"pipelines/torch-gpipe", "pipelines/torch-gpipe/native"}) {
    SCOPED_TRACE(w);
    testing::Analyzed a = AnalyzeSample(w);
    const analysis::Pipeline& p = Expect(a, 4, 1, 8, 1, "GPipe (all forward, then all backward)");
    for (int s = 0; s < 4; ++s) EXPECT_EQ(p.per_stage[s].rank, s);
  }
  for (const char* w : {"pipelines/torch-interleaved", "pipelines/torch-interleaved/native"}) {
    // Four ranks, two chunks each: m v messages on an inner link, m (v - 1) back to stage 0.
    SCOPED_TRACE(w);
    testing::Analyzed a = AnalyzeSample(w);
    const analysis::Pipeline& p = Expect(a, 4, 1, 8, 2, "interleaved 1F1B with 2 model chunks per rank");
    for (int s = 0; s < 4; ++s) EXPECT_EQ(p.per_stage[s].rank, s);
  }
  {
    // Two ranks: the traffic looks alike both ways; the schedule's own PP: ranges say v.
    testing::Analyzed a = AnalyzeSample("pipelines/torch-interleaved-2r");
    const analysis::Pipeline& p = Expect(a, 2, 1, 8, 2, "interleaved 1F1B with 2 model chunks per rank");
    EXPECT_NE(p.schedule_rule.find("PP: ranges"), std::string::npos) << p.schedule_rule;
  }
}

// Two ranks without the PP: ranges. The recording has neither names nor steps: stage 0's
// messages back are not all gradients (its open count returns to none inside a step), the
// schedule repeats every 48 messages, 24 each way = m (2v - 1) with 3 its only odd factor.
// The profiler's trace with its PP: ranges taken away gives the same from its steps.
TEST(Pipelines, TwoRankInterleavingFromTheTrafficAlone) {
  {
    testing::Analyzed a = AnalyzeSample("pipelines/torch-interleaved-2r/native");
    const analysis::Pipeline& p = Expect(a, 2, 1, 8, 2, "interleaved 1F1B with 2 model chunks per rank");
    // The rule is said with the result.
    EXPECT_NE(p.schedule_rule.find("24 messages per repeat of stage 0's message order"), std::string::npos)
        << p.schedule_rule;
    EXPECT_NE(p.schedule_rule.find("3 is its only odd factor"), std::string::npos) << p.schedule_rule;
    // The run's 6 steps (the schedule's periods), not pieces of them.
    for (const analysis::PipelineStage& s : p.per_stage) EXPECT_EQ(s.steps.size(), 6u) << s.stage;
  }
  std::filesystem::current_path(COMMLENS_SOURCE_DIR);
  auto t = importers::LoadTrace({"examples/traces/pipelines/torch-interleaved-2r"}, {});
  ASSERT_TRUE(t.ok()) << t.status().message();
  model::Trace trace = std::move(t).value();
  for (model::RankTrace& r : trace.ranks) {
    const model::StringId unnamed = r.strings.Intern("stage action");
    for (model::StringId& name : r.annotations.name)
      if (r.strings.Get(name).starts_with(model::kPipelineActionPrefix)) name = unnamed;
  }
  const analysis::JobAnalysis job = analysis::Analyze(trace, {});
  const analysis::Pipeline& p = job.cross_rank.pipeline;
  EXPECT_TRUE(p.detected);
  EXPECT_EQ(p.stages, 2);
  EXPECT_EQ(p.microbatches, 8);
  EXPECT_EQ(p.virtual_stages, 2);
  EXPECT_EQ(p.schedule, "interleaved 1F1B with 2 model chunks per rank");
  EXPECT_NE(p.schedule_rule.find("24 messages per profiler step"), std::string::npos) << p.schedule_rule;
}

// The last stage holds 1.5x the layers: it sets the pace, and the others wait for it (its
// bubble is the smallest).
TEST(Pipelines, HeavierLastStageSetsThePace) {
  testing::Analyzed a = AnalyzeSample("pipelines/torch-1f1b-heavy");
  const analysis::Pipeline& p = Expect(a, 4, 1, 8, 1, "1F1B");
  EXPECT_EQ(p.pace_stage, 3);
  EXPECT_GT(static_cast<double>(p.pace_compute), 1.3 * static_cast<double>(p.median_compute));
  for (int s = 0; s < 3; ++s) EXPECT_GT(p.per_stage[s].idle_share, p.per_stage[3].idle_share);
  bool finding = false;
  for (const auto& f : a.job.findings) finding = finding || f.rule == "pipeline_pace";
  EXPECT_TRUE(finding);
}

// A model heavy enough that compute fills the step (16 layers a stage, 8192-row
// micro-batches; examples/traces/pipelines/megatron-1f1b*-big): every stage's bubble is
// within 2.5 points of what the schedule leaves it at the measured compute (paced), the
// balanced one within a few points of (p - 1) / (m + p - 1) where its compute is the
// slowest stage's; with the last stage 1.5x heavier, it sets the pace and the other
// stages' idle time per step grows by about its extra compute. The recordings of the
// same runs give the same stages, m and schedule.
TEST(Pipelines, BubblesAsTheScheduleAndTheComputeExplainThem) {
  testing::Analyzed balanced = AnalyzeSample("pipelines/megatron-1f1b-big");
  testing::Analyzed heavy = AnalyzeSample("pipelines/megatron-1f1b-heavy-big");
  const analysis::Pipeline& b = Expect(balanced, 4, 1, 8, 1, "1F1B");
  const analysis::Pipeline& h = Expect(heavy, 4, 1, 8, 1, "1F1B");
  for (const analysis::Pipeline* p : {&b, &h})
    for (const analysis::PipelineStage& s : p->per_stage) {
      SCOPED_TRACE(s.stage);
      ASSERT_GE(s.paced_ideal, 0);
      EXPECT_NEAR(s.idle_share, s.paced_ideal, 0.025);
    }
  // Balanced: the slowest stage (the last: it also computes the loss) sits at the ideal;
  // every stage within 12 points of it, the spread being the stages' compute.
  EXPECT_EQ(b.pace_stage, -1);
  EXPECT_NEAR(b.per_stage[3].idle_share, b.ideal_fraction, 0.02);
  for (const analysis::PipelineStage& s : b.per_stage) EXPECT_NEAR(s.idle_share, b.ideal_fraction, 0.12) << s.stage;
  // Heavy: stage 3 sets the pace; each other stage's idle time per step grows by stage 3's
  // extra compute, less what its own compute grew (the runs differ by a few ms), within 10 %.
  EXPECT_EQ(h.pace_stage, 3);
  auto idle_per_step = [](const analysis::PipelineStage& s) {
    double sum = 0;
    for (const analysis::PipelineStep& st : s.steps) sum += static_cast<double>(st.warmup_idle + st.steady_idle + st.cooldown_idle);
    return s.steps.empty() ? 0.0 : sum / static_cast<double>(s.steps.size());
  };
  const double extra = static_cast<double>(h.per_stage[3].compute - b.per_stage[3].compute);
  ASSERT_GT(extra, 0);
  for (int s = 0; s < 3; ++s) {
    const double grown = idle_per_step(h.per_stage[s]) - idle_per_step(b.per_stage[s]);
    const double own = static_cast<double>(h.per_stage[s].compute - b.per_stage[s].compute);
    EXPECT_NEAR(grown / (extra - own), 1.0, 0.10) << "stage " << s;
  }
  for (const char* w : {"pipelines/megatron-1f1b-big/native", "pipelines/megatron-1f1b-heavy-big/native"}) {
    SCOPED_TRACE(w);
    Expect(AnalyzeSample(w), 4, 1, 8, 1, "1F1B");
  }
}

}  // namespace
}  // namespace commlens
