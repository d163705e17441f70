// Cross-rank analyses on real two-GPU jobs made to show one problem each
// (examples/workloads/cross_rank.py on 2 x H200, recorded by the PyTorch profiler and the
// commlens NCCL profiler plugin at once; examples/traces/cross-rank/README.md):
//  - the analyze JSON and text equal their goldens, and the JSON parses back;
//  - each finding is the one the job was built to show, with values the job explains
//    (the slow rank's cost equals the extra work it did, the bubble is near the formula,
//    overlapped bandwidth is below alone bandwidth, the stuck rank is named).
#include <gtest/gtest.h>
#include <simdjson.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "analysis/analyze.h"
#include "report/json_report.h"
#include "report/text_report.h"
#include "testing/sample_job.h"

namespace commlens {
namespace {

using nlohmann::json;
using testing::Analyzed;
using testing::AnalyzeSample;

std::string ReadAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// "cross-rank/hang/native" -> tests/golden/cross-rank.hang.native.analyze.<ext>
std::string GoldenPath(std::string workload, const std::string& ext) {
  for (char& c : workload)
    if (c == '/') c = '.';
  return std::string(COMMLENS_SOURCE_DIR) + "/tests/golden/" + workload + ".analyze." + ext;
}

class CrossRankGolden : public ::testing::TestWithParam<std::string> {};

TEST_P(CrossRankGolden, JsonAndTextMatchGoldens) {
  Analyzed a = AnalyzeSample(GetParam());
  json got = report::AnalyzeToJson(a.trace, a.job);
  json want = json::parse(ReadAll(GoldenPath(GetParam(), "json")));
  if (got != want) FAIL() << "analyze JSON differs from its golden:\n" << json::diff(want, got).dump(1).substr(0, 3000);
  EXPECT_EQ(report::AnalyzeToText(a.trace, a.job, {}), ReadAll(GoldenPath(GetParam(), "txt")));
}

TEST_P(CrossRankGolden, CrossRankJsonParsesBackWithTheDocumentedShape) {
  Analyzed a = AnalyzeSample(GetParam());
  const std::string text = report::AnalyzeToJson(a.trace, a.job).dump();
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  ASSERT_EQ(parser.parse(text).get(doc), simdjson::SUCCESS);
  simdjson::dom::element x = doc["cross_rank"];
  EXPECT_FALSE(std::string_view(x["summary"]).empty());
  for (simdjson::dom::element o : simdjson::dom::array(x["clock"]["offsets"])) {
    EXPECT_TRUE(o["offset_us"].is_number());
    EXPECT_TRUE(o["bound_us"].is_number());
  }
  for (simdjson::dom::element s : simdjson::dom::array(x["stragglers"])) {
    EXPECT_GE(int64_t(s["last_arrivals"]), 1);
    EXPECT_GE(int64_t(s["matched"]), int64_t(s["last_arrivals"]));
    EXPECT_FALSE(std::string_view(s["cause"]).empty());
  }
  for (simdjson::dom::element h : simdjson::dom::array(x["hangs"])) {
    EXPECT_FALSE(std::string_view(h["detail"]).empty());
    EXPECT_TRUE(h["waited_us"].is_number());
  }
  simdjson::dom::element p = x["pipeline"];
  if (bool(p["detected"])) {
    EXPECT_GE(int64_t(p["stages"]), 2);
    EXPECT_GT(double(p["ideal_fraction"]), 0.0);
    EXPECT_EQ(simdjson::dom::array(p["per_stage"]).size(), uint64_t(p["stages"]));
  }
  for (simdjson::dom::element c : simdjson::dom::array(x["contention"])) {
    for (const char* side : {"alone", "overlapped"}) {
      EXPECT_TRUE(c[side]["count"].is_uint64());
      // A number only where there are enough samples to mean something.
      EXPECT_EQ(bool(c[side]["enough_samples"]), !c[side]["busbw_median_gbps"].error());
    }
  }
}

INSTANTIATE_TEST_SUITE_P(TwoGpuJobs, CrossRankGolden,
                         ::testing::Values("cross-rank/pipeline-1f1b", "cross-rank/pipeline-gpipe", "cross-rank/contention",
                                           "cross-rank/slow-compute", "cross-rank/slow-host", "cross-rank/hang",
                                           "cross-rank/hang/native"));

// Sum over the profiled steps of rank |r|'s GPU time in kernels whose name holds |part|,
// per step.
double KernelTimePerStep(const Analyzed& a, int r, const std::string& part) {
  const model::RankTrace& t = a.trace.ranks[r];
  double sum = 0;
  for (size_t i = 0; i < t.gpu.size(); ++i)
    if (std::string(t.strings.Get(t.gpu.name[i])).find(part) != std::string::npos) sum += t.gpu.end[i] - t.gpu.start[i];
  return sum / static_cast<double>(t.steps.size());
}

// Mean duration of rank |r|'s host ranges named |name|.
double RangeMean(const Analyzed& a, int r, const std::string& name) {
  const model::RankTrace& t = a.trace.ranks[r];
  double sum = 0;
  int n = 0;
  for (size_t i = 0; i < t.annotations.size(); ++i)
    if (t.strings.Get(t.annotations.name[i]) == name && t.annotations.device[i] < 0)
      sum += t.annotations.end[i] - t.annotations.start[i], ++n;
  return n > 0 ? sum / n : 0;
}

TEST(CrossRankJobs, SlowComputeRankIsFoundWithItsKernels) {
  Analyzed a = AnalyzeSample("cross-rank/slow-compute");
  const auto& x = a.job.cross_rank;
  ASSERT_FALSE(x.stragglers.empty());
  const auto& s = x.stragglers[0];
  EXPECT_EQ(s.rank, 1);
  EXPECT_EQ(s.cause, analysis::LateCause::kCompute);
  ASSERT_FALSE(s.kernels.empty());
  EXPECT_NE(s.kernels[0].find("fft"), std::string::npos) << s.kernels[0];
  EXPECT_EQ(s.last_arrivals, 32u);  // 8 all-reduces in each of 4 steps
  // Rank 0 waits for rank 1's extra FFTs: their time per step, within a quarter.
  const double fft = KernelTimePerStep(a, 1, "fft");
  EXPECT_GT(fft, 500'000);
  EXPECT_NEAR(s.cost_per_step, fft, 0.25 * fft);
  EXPECT_NE(x.summary.find("Rank 1 arrives last"), std::string::npos) << x.summary;
  EXPECT_TRUE(x.hangs.empty());
  EXPECT_FALSE(x.pipeline.detected);
}

TEST(CrossRankJobs, SlowHostRankIsFoundAsHostIdle) {
  Analyzed a = AnalyzeSample("cross-rank/slow-host");
  const auto& x = a.job.cross_rank;
  ASSERT_FALSE(x.stragglers.empty());
  const auto& s = x.stragglers[0];
  EXPECT_EQ(s.rank, 1);
  EXPECT_EQ(s.cause, analysis::LateCause::kHostIdle);
  // Rank 0 waits for rank 1's host sleep ("slow_host_work", 8 ms per step), within 15%.
  const double sleep = RangeMean(a, 1, "slow_host_work");
  EXPECT_GT(sleep, 7'900'000);
  EXPECT_NEAR(s.cost_per_step, sleep, 0.15 * sleep);
  EXPECT_NE(x.summary.find("host launched late"), std::string::npos) << x.summary;
  // Every profiled step: rank 1 last at all 8 all-reduces, costing about its sleep.
  ASSERT_EQ(x.steps.size(), 4u);
  for (const auto& st : x.steps) {
    EXPECT_EQ(st.collectives, 8u);
    EXPECT_EQ(st.most_last_rank, 1);
    EXPECT_EQ(st.most_last_count, 8u);
    EXPECT_NEAR(static_cast<double>(st.most_last_cost), sleep, 0.15 * sleep);
  }
}

TEST(CrossRankJobs, RecordingNamesTheSlowRankAndNcclsChoices) {
  Analyzed a = AnalyzeSample("cross-rank/slow-compute/native");
  const auto& x = a.job.cross_rank;
  ASSERT_FALSE(x.stragglers.empty());
  EXPECT_EQ(x.stragglers[0].rank, 1);
  EXPECT_EQ(x.stragglers[0].cause, analysis::LateCause::kUnknown);  // no kernel timeline to say why
  bool ring_simple = false;
  for (const auto& p : x.protocols)
    ring_simple = ring_simple || (p.op == model::CommOp::kAllReduce && p.size_lo == (32 << 20) && p.algorithm == "RING" &&
                                  p.protocol == "SIMPLE" && p.channels > 0);
  EXPECT_TRUE(ring_simple);
}

class PipelineJobs : public ::testing::TestWithParam<std::pair<std::string, std::string>> {};

TEST_P(PipelineJobs, StagesMicrobatchesScheduleAndBubble) {
  const auto& [workload, schedule] = GetParam();
  Analyzed a = AnalyzeSample(workload);
  const auto& p = a.job.cross_rank.pipeline;
  ASSERT_TRUE(p.detected);
  EXPECT_EQ(p.stages, 2);
  EXPECT_EQ(p.microbatches, 8);
  EXPECT_EQ(p.schedule.substr(0, schedule.size()), schedule);
  EXPECT_NEAR(p.ideal_fraction, 1.0 / 9.0, 1e-9);  // (p-1)/(m+p-1)
  ASSERT_EQ(p.per_stage.size(), 2u);
  EXPECT_EQ(p.per_stage[0].rank, 0);
  if (workload.find("native") != std::string::npos) {
    EXPECT_FALSE(p.idle_known);
    EXPECT_GT(p.bubble_fraction, 0.5 * p.ideal_fraction);
    EXPECT_LT(p.bubble_fraction, 3 * p.ideal_fraction);
    return;
  }
  EXPECT_TRUE(p.idle_known);
  // Stage 0 idles one micro-batch's forward and backward per step: the formula, within 3
  // points. The last stage also waits for the slower first stage in the steady state
  // (its micro-batches run faster: no input copy, no send on its critical path), so the
  // mean sits above the ideal but within twice it.
  EXPECT_NEAR(p.per_stage[0].idle_share, p.ideal_fraction, 0.03);
  EXPECT_GE(p.bubble_fraction, p.ideal_fraction);
  EXPECT_LE(p.bubble_fraction, 2 * p.ideal_fraction);
  // The last stage's bubble opens the step (it waits for the first activation); the
  // first stage's does not.
  EXPECT_GT(p.per_stage[1].warmup_idle, p.per_stage[1].cooldown_idle);
  EXPECT_GT(p.per_stage[1].warmup_idle, p.per_stage[0].warmup_idle);
  EXPECT_TRUE(a.job.cross_rank.contention.empty());
}

INSTANTIATE_TEST_SUITE_P(
    TwoStages, PipelineJobs,
    ::testing::Values(std::make_pair("cross-rank/pipeline-1f1b", "1F1B"), std::make_pair("cross-rank/pipeline-gpipe", "GPipe"),
                      std::make_pair("cross-rank/pipeline-1f1b/native", "1F1B"),
                      std::make_pair("cross-rank/pipeline-gpipe/native", "GPipe")));

TEST(CrossRankJobs, OverlappedGroupsRunSlowerThanAlone) {
  for (const char* workload : {"cross-rank/contention", "cross-rank/contention/native"}) {
    SCOPED_TRACE(workload);
    Analyzed a = AnalyzeSample(workload);
    const auto& x = a.job.cross_rank;
    EXPECT_GT(x.contended_time, 0);
    EXPECT_FALSE(x.pipeline.detected);  // all-to-all's send/recv pairs are no pipeline
    int rows = 0;
    for (const auto& c : x.contention) {
      if (c.size_lo != (64 << 20) && !(c.size_lo == (32 << 20) && model::IsPointToPoint(c.op))) continue;
      ++rows;
      SCOPED_TRACE(c.group + " " + std::string(model::CommOpName(c.op)));
      ASSERT_TRUE(c.alone.enough());
      ASSERT_TRUE(c.overlapped.enough());
      // Over the transfer time: slower beyond the alone ops' own spread.
      EXPECT_LT(c.overlapped.median, c.alone.p25);
      EXPECT_LT(c.overlapped.median, 0.9 * c.alone.median);
      ASSERT_EQ(c.with_groups.size(), 1u);
      EXPECT_NE(c.with_groups[0], c.group);
    }
    EXPECT_GE(rows, 2);  // the all-to-all group and the all-reduce group
  }
}

TEST(CrossRankJobs, TheStuckRankAndTheCollectiveItNeverReached) {
  Analyzed a = AnalyzeSample("cross-rank/hang");
  const auto& hangs = a.job.cross_rank.hangs;
  ASSERT_EQ(hangs.size(), 1u);
  const auto& h = hangs[0];
  EXPECT_FALSE(h.desync);
  EXPECT_EQ(h.missing, std::vector<int>{1});
  EXPECT_EQ(h.reached, std::vector<int>{0});
  EXPECT_EQ(h.op, "all_reduce");
  EXPECT_EQ(h.seq, 16);  // 8 all-reduces in each of the 2 profiled steps before it
  EXPECT_GE(h.waited, 3'000'000'000);  // rank 0 aborted after 3 s (--hang-timeout)
  ASSERT_EQ(h.missing_doing.size(), 1u);
  EXPECT_NE(h.missing_doing[0].find("stuck_in_data_loader"), std::string::npos) << h.missing_doing[0];
}

TEST(CrossRankJobs, TheStuckRankInARecording) {
  // Rank 1 writes no NCCL events while stuck, but its recorder's flush marks show it ran
  // on: a hang, not a trace that ends early.
  Analyzed a = AnalyzeSample("cross-rank/hang/native");
  const auto& hangs = a.job.cross_rank.hangs;
  ASSERT_EQ(hangs.size(), 1u);
  EXPECT_EQ(hangs[0].missing, std::vector<int>{1});
  EXPECT_EQ(hangs[0].reached, std::vector<int>{0});
  EXPECT_GE(hangs[0].waited, 3'000'000'000);
  EXPECT_NE(hangs[0].detail.find("reported no end"), std::string::npos) << hangs[0].detail;
  for (const auto& r : a.trace.ranks) EXPECT_NE(r.alive_until, model::kNoTime);
}

TEST(CrossRankJobs, JobsThatRanToTheEndHaveNoHang) {
  for (const char* workload : {"cross-rank/pipeline-1f1b", "cross-rank/contention", "cross-rank/slow-host",
                               "cross-rank/slow-compute/native", "cross-rank/pipeline-gpipe/native"}) {
    Analyzed a = AnalyzeSample(workload);
    EXPECT_TRUE(a.job.cross_rank.hangs.empty()) << workload << ": " << a.job.cross_rank.hangs[0].detail;
  }
}

}  // namespace
}  // namespace commlens
