// What-if replay (issue 31, docs/analysis.md "What if") on real traces: the replay gives
// back the measured step times; a rank that runs extra compute (the slow-compute job) is
// where the slowdown is attributed, and fixing it predicts a faster step; a pipeline stage
// with more layers is the stage attributed; the verb's JSON parses back.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "analysis/whatif.h"
#include "testing/sample_job.h"

namespace commlens {
namespace {

using testing::AnalyzeSample;

analysis::WhatIfAnalysis WhatIfOn(const testing::Analyzed& a, std::vector<analysis::WhatIfPart> fixes = {}) {
  analysis::WhatIfOptions o;
  o.fixes = std::move(fixes);
  return analysis::WhatIf(a.trace, a.job, o);
}

TEST(WhatIf, ReplayGivesBackTheMeasuredSteps) {
  for (const char* w : {"ddp", "fsdp", "cross-rank/slow-compute", "pipelines/megatron-2r"}) {
    SCOPED_TRACE(w);
    testing::Analyzed a = AnalyzeSample(w);
    const analysis::WhatIfAnalysis x = WhatIfOn(a);
    ASSERT_TRUE(x.done) << x.why_not;
    EXPECT_EQ(x.steps.size(), x.measured.size());
    EXPECT_LT(x.replay_error, 0.01);
    EXPECT_GT(x.slowdown, 0.9);
    for (size_t i = 0; i < x.steps.size(); ++i) EXPECT_LE(x.no_delay[i], x.replayed[i] + 1000);
  }
}

// Rank 1 runs 8 extra FFT pairs before its all-reduces in every step.
TEST(WhatIf, TheRankWithExtraComputeIsTheSlowdown) {
  testing::Analyzed a = AnalyzeSample("cross-rank/slow-compute");
  const analysis::WhatIfAnalysis x = WhatIfOn(a, {{"rank", "1"}, {"rank", "0"}});
  ASSERT_TRUE(x.done);
  ASSERT_FALSE(x.by_rank.empty());
  EXPECT_EQ(x.by_rank[0].label, "rank 1");
  EXPECT_GT(x.by_rank[0].slowdown, 1.1);
  EXPECT_GT(x.slowdown, 1.1);
  ASSERT_EQ(x.fixes.size(), 2u);
  EXPECT_GT(x.fixes[0].gain, 0.1);                  // fixing rank 1 helps
  EXPECT_LT(std::abs(x.fixes[1].gain), 0.05);       // fixing rank 0 does not
}

// The last stage holds 1.5 x the layers: its extra kernels are the slowdown.
TEST(WhatIf, TheHeavierStageIsAttributed) {
  testing::Analyzed a = AnalyzeSample("pipelines/torch-1f1b-heavy");
  const analysis::WhatIfAnalysis x = WhatIfOn(a);
  ASSERT_TRUE(x.done);
  ASSERT_FALSE(x.by_stage.empty());
  EXPECT_EQ(x.by_stage[0].label, "stage 3");
  EXPECT_GT(x.by_stage[0].slowdown, 1.1);
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
}

// Predicted against measured inside one run: rank 2 runs extra compute in steps 4-7 and
// 12-15 only; with it fixed, the slow steps must take what the clean steps measured
// (within 10%), and the clean steps barely change.
TEST(WhatIf, FixingTheSlowRankPredictsTheCleanSteps) {
  testing::Analyzed a = AnalyzeSample("whatif/ddp-slow-blocks");
  const analysis::WhatIfAnalysis x = WhatIfOn(a, {{"rank", "2"}});
  ASSERT_TRUE(x.done) << x.why_not;
  ASSERT_EQ(x.fixes.size(), 1u);
  std::vector<double> predicted_slow, measured_clean;
  for (size_t i = 0; i < x.steps.size(); ++i) {
    const bool slow = (x.steps[i] / 4) % 2 == 1;
    if (slow) predicted_slow.push_back(static_cast<double>(x.fixes[0].step_time[i]));
    else measured_clean.push_back(static_cast<double>(x.measured[i]));
  }
  ASSERT_GE(predicted_slow.size(), 6u);
  ASSERT_GE(measured_clean.size(), 5u);
  EXPECT_NEAR(Median(predicted_slow) / Median(measured_clean), 1.0, 0.10);
  EXPECT_EQ(x.by_rank.front().label, "rank 2");
}

// The same for a pipeline: Megatron's batched 1F1B over 4 stages, the last stage with 1.5x
// the layers in steps 4-7 and 12-15 only. With stage 3 fixed, the heavy steps must take
// what the light ones measured (within 10%); the light ones barely change.
TEST(WhatIf, FixingTheHeavyStagePredictsTheLightSteps) {
  testing::Analyzed a = AnalyzeSample("whatif/pp-heavy-blocks");
  ASSERT_TRUE(a.job.cross_rank.pipeline.detected);
  const analysis::WhatIfAnalysis x = WhatIfOn(a, {{"stage", "3"}});
  ASSERT_TRUE(x.done) << x.why_not;
  ASSERT_EQ(x.fixes.size(), 1u);
  std::vector<double> predicted_heavy, measured_light, predicted_light;
  for (size_t i = 0; i < x.steps.size(); ++i) {
    if ((x.steps[i] / 4) % 2 == 1) {
      predicted_heavy.push_back(static_cast<double>(x.fixes[0].step_time[i]));
    } else {
      measured_light.push_back(static_cast<double>(x.measured[i]));
      predicted_light.push_back(static_cast<double>(x.fixes[0].step_time[i]));
    }
  }
  ASSERT_GE(predicted_heavy.size(), 6u);
  ASSERT_GE(measured_light.size(), 5u);
  EXPECT_NEAR(Median(predicted_heavy) / Median(measured_light), 1.0, 0.10);
  EXPECT_NEAR(Median(predicted_light) / Median(measured_light), 1.0, 0.05);
  ASSERT_FALSE(x.by_stage.empty());
  EXPECT_EQ(x.by_stage.front().label, "stage 3");
}

// The ideal replay as a timeline: every replayed activity placed, each step as long as
// the ideal replay says, and the verb writes it as a Perfetto file.
TEST(WhatIf, IdealTimelineHoldsTheIdealSteps) {
  testing::Analyzed a = AnalyzeSample("whatif/ddp-slow-blocks");
  analysis::WhatIfOptions o;
  o.timeline = true;
  const analysis::WhatIfAnalysis x = analysis::WhatIf(a.trace, a.job, o);
  ASSERT_TRUE(x.done);
  EXPECT_EQ(x.ideal_timeline.size(), x.nodes);
  const model::Trace ideal = analysis::IdealTimeline(a.trace, x);
  ASSERT_EQ(ideal.ranks.size(), a.trace.ranks.size());
  size_t rows = 0;
  for (const model::RankTrace& r : ideal.ranks) {
    rows += r.gpu.size();
    EXPECT_EQ(r.steps.size(), x.steps.size());
    for (size_t i = 0; i < r.gpu.size(); ++i) EXPECT_LE(r.gpu.start[i], r.gpu.end[i]);
  }
  EXPECT_EQ(rows, x.nodes);
  // Step k's activities span (from the step's first start) what the ideal replay gives.
  for (size_t k = 0; k < x.steps.size(); ++k) {
    model::TimeNs first = INT64_MAX, last = INT64_MIN;
    for (const auto& p : x.ideal_timeline) {
      const model::RankTrace& src = a.trace.ranks[p.rank];
      const model::TimeNs launch = src.gpu.launch[p.row];
      bool in = false;
      for (const auto& st : src.steps) in = in || (st.number == x.steps[k] && launch >= st.start && launch <= st.end);
      if (!in) continue;
      first = std::min(first, p.start), last = std::max(last, p.end);
    }
    EXPECT_LE(last - first, x.ideal[k]) << "step " << x.steps[k];
    EXPECT_GE(last - first, x.ideal[k] * 9 / 10) << "step " << x.steps[k];
  }
  const std::filesystem::path out = std::filesystem::temp_directory_path() / "commlens_ideal_test.json";
  ASSERT_EQ(std::system((std::string(COMMLENS_BIN) + " whatif " + COMMLENS_SOURCE_DIR +
                         "/examples/traces/whatif/ddp-slow-blocks -q --perfetto " + out.string()).c_str()),
            0);
  std::ifstream in(out);
  const nlohmann::json j = nlohmann::json::parse(in);
  size_t slices = 0;
  for (const auto& e : j["traceEvents"]) slices += e["ph"] == "X" && e.value("cat", "") != "user_annotation";
  EXPECT_EQ(slices, x.nodes);
  std::filesystem::remove(out);
}

// The network at the speed `commlens bench` measured on 4 x H200 (tests/bench/data):
// the job that ran with 2 NCCL channels (its all-reduces at 45 GB/s busbw) would be
// faster; the same job with the default channels (at the benchmark's speed already) not.
TEST(WhatIf, TheNetworkAtTheBenchmarksSpeed) {
  const std::string bench = std::string(COMMLENS_SOURCE_DIR) + "/tests/bench/data/h200x4_yardstick.json";
  for (const char* job : {"diff/ddp-2ch", "diff/ddp-a"}) {
    SCOPED_TRACE(job);
    const std::filesystem::path out = std::filesystem::temp_directory_path() / "commlens_whatif_network.json";
    ASSERT_EQ(std::system((std::string(COMMLENS_BIN) + " whatif " + COMMLENS_SOURCE_DIR + "/examples/traces/" + job +
                           " -q --network " + bench + " --json " + out.string()).c_str()),
              0);
    std::ifstream in(out);
    const nlohmann::json j = nlohmann::json::parse(in);
    ASSERT_EQ(j["fixes"].size(), 1u);
    const nlohmann::json& f = j["fixes"][0];
    EXPECT_EQ(f["fix"], "network=" + bench);
    EXPECT_GT(f["priced"].get<uint64_t>(), 0u);
    EXPECT_EQ(f["unpriced"].get<uint64_t>(), 0u);  // every op is an all-reduce of 4 ranks, the curve's
    if (std::string(job) == "diff/ddp-2ch") EXPECT_GT(f["gain"].get<double>(), 0.01);
    else EXPECT_LT(std::abs(f["gain"].get<double>()), 0.01);
    std::filesystem::remove(out);
  }
}

TEST(WhatIf, VerbWritesJsonThatParsesBack) {
  const std::filesystem::path out = std::filesystem::temp_directory_path() / "commlens_whatif_test.json";
  const std::string cmd = std::string(COMMLENS_BIN) + " whatif " + COMMLENS_SOURCE_DIR +
                          "/examples/traces/cross-rank/slow-compute --fix rank=1 -q --json " + out.string();
  ASSERT_EQ(std::system(cmd.c_str()), 0);
  std::ifstream in(out);
  const nlohmann::json j = nlohmann::json::parse(in);
  EXPECT_EQ(j["schema"], "commlens.whatif");
  EXPECT_TRUE(j["done"].get<bool>());
  EXPECT_EQ(j["fixes"].size(), 1u);
  EXPECT_EQ(j["steps"].size(), j["measured_us"].size());
  std::filesystem::remove(out);
  EXPECT_NE(std::system((std::string(COMMLENS_BIN) + " whatif --fix speed=1 " + COMMLENS_SOURCE_DIR +
                         "/examples/traces/ddp -q 2>/dev/null").c_str()),
            0);
}

}  // namespace
}  // namespace commlens
