// Run-to-run diff (issue 31, docs/analysis.md "Diff") on real runs: the same DDP job twice
// shows no change beyond noise; the job with 2 NCCL channels names the all-reduce buckets
// whose bandwidth fell and what it cost per step, from Kineto traces, from recordings, and
// from one of each; a run recorded twice as long compares slice for slice; the verb's JSON
// parses back and its HTML page holds the same data.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "analysis/run_diff.h"
#include "testing/sample_job.h"

namespace commlens {
namespace {

using testing::AnalyzeSample;

struct Diffed {
  testing::Analyzed a, b;
  analysis::RunDiff diff;
};

std::unique_ptr<Diffed> Diff(const std::string& a, const std::string& b) {
  auto d = std::make_unique<Diffed>(Diffed{AnalyzeSample(a), AnalyzeSample(b), {}});
  d->diff = analysis::DiffRuns({&d->a.trace, &d->a.job}, {&d->b.trace, &d->b.job});
  return d;
}

const analysis::DiffRow* Row(const analysis::RunDiff& d, const std::string& section, const std::string& name) {
  for (const auto& r : d.rows)
    if (r.section == section && r.name == name) return &r;
  return nullptr;
}

TEST(Diff, TheSameJobTwiceIsWithinNoise) {
  for (const char* sub : {"", "/native"}) {
    SCOPED_TRACE(sub);
    auto d = Diff(std::string("diff/ddp-a") + sub, std::string("diff/ddp-b") + sub);
    EXPECT_EQ(d->diff.Changes().size(), 0u);
    for (const auto* r : d->diff.Changes()) ADD_FAILURE() << r->section << " " << r->name;
    if (*sub == 0) {
      const analysis::DiffRow* step = Row(d->diff, "step", "step time");
      ASSERT_NE(step, nullptr);
      ASSERT_TRUE(step->interval);
      EXPECT_TRUE(step->interval->Holds(0));
      EXPECT_EQ(step->steps_a, 8u);
      // The same kernels, at the same speed.
      const analysis::DiffRow* compute = Row(d->diff, "breakdown", "compute");
      ASSERT_NE(compute, nullptr);
      EXPECT_LT(std::abs(compute->relative), 0.01);
    }
  }
}

TEST(Diff, TwoChannelsLowerTheAllReducesBandwidth) {
  for (const char* sub : {"", "/native"}) {
    SCOPED_TRACE(sub);
    auto d = Diff(std::string("diff/ddp-a") + sub, std::string("diff/ddp-2ch") + sub);
    const std::string group = "ranks 0-3";  // by members: a recording knows no "default_pg"
    for (const char* size : {"32 MiB-64 MiB", "16 MiB-32 MiB"}) {
      SCOPED_TRACE(size);
      const analysis::DiffRow* bw = Row(d->diff, "collective", fmt::format("all_reduce {} in {}: busbw", size, group));
      ASSERT_NE(bw, nullptr);
      EXPECT_TRUE(bw->beyond_noise);
      EXPECT_LT(bw->relative, -0.7);  // 250-300 GB/s -> 45 GB/s
      EXPECT_GT(bw->step_cost, 0.5e6 * (*sub ? 0.5 : 1.0));  // its transfers take longer, per step
    }
    // The largest time-per-step change beyond noise is the big bucket's.
    const auto changes = d->diff.Changes();
    ASSERT_FALSE(changes.empty());
    EXPECT_EQ(changes.front()->name.rfind(fmt::format("all_reduce 32 MiB-64 MiB in {}", group), 0), 0u)
        << changes.front()->name;
  }
}

// A Kineto trace against the recording of the 2-channel run: the buckets match by their
// members, and what the recording lacks (kernels, the breakdown) is unknown, not a change.
TEST(Diff, AKinetoTraceAgainstARecording) {
  auto d = Diff("diff/ddp-a", "diff/ddp-2ch/native");
  EXPECT_FALSE(d->diff.warnings.empty());
  const analysis::DiffRow* bw = Row(d->diff, "collective", "all_reduce 32 MiB-64 MiB in ranks 0-3: busbw");
  ASSERT_NE(bw, nullptr);
  EXPECT_TRUE(bw->beyond_noise);
  EXPECT_LT(bw->relative, -0.7);
  for (const auto* r : d->diff.Changes()) EXPECT_EQ(r->section, "collective") << r->name;
  const analysis::DiffRow* compute = Row(d->diff, "breakdown", "compute");
  ASSERT_NE(compute, nullptr);
  EXPECT_FALSE(compute->known_b);
  EXPECT_FALSE(compute->beyond_noise);
}

// Slices hold as many operations in both runs: the first half of a recording against
// the whole of it is no change, though one was recorded twice as long.
TEST(Diff, SlicesDoNotDependOnHowLongARunWasRecorded) {
  testing::Analyzed whole = AnalyzeSample("diff/ddp-a/native");
  testing::Analyzed half = AnalyzeSample("diff/ddp-a/native");
  // The first half of every rank's operations.
  for (analysis::RankAnalysis& r : half.job.ranks) {
    const size_t n = r.ops_in_window.size();
    for (size_t i = n / 2; i < n; ++i) r.ops_in_window[i] = 0;
  }
  const analysis::RunDiff d = analysis::DiffRuns({&whole.trace, &whole.job}, {&half.trace, &half.job});
  EXPECT_GT(d.a.steps, d.b.steps);  // more slices in the longer run
  for (const auto* r : d.Changes()) ADD_FAILURE() << r->section << " " << r->name << " " << r->relative;
}

std::string Slurp(const std::filesystem::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

TEST(Diff, VerbWritesJsonAndAPage) {
  const auto dir = std::filesystem::temp_directory_path();
  const std::filesystem::path json = dir / "commlens_diff_test.json", html = dir / "commlens_diff_test.html";
  const std::string base = std::string(COMMLENS_SOURCE_DIR) + "/examples/traces/diff/";
  const std::string runs = std::string(COMMLENS_BIN) + " diff " + base + "ddp-a " + base + "ddp-2ch -q";
  ASSERT_EQ(std::system((runs + " --json " + json.string()).c_str()), 0);
  const nlohmann::json j = nlohmann::json::parse(Slurp(json));
  EXPECT_EQ(j["schema"], "commlens.diff");
  EXPECT_EQ(j["a"]["steps"], 8);
  EXPECT_EQ(j["a"]["step_times_us"].size(), 8u);
  ASSERT_FALSE(j["changes"].empty());
  for (const auto& i : j["changes"]) EXPECT_TRUE(j["rows"][i.get<size_t>()]["beyond_noise"].get<bool>());
  // The page, where this build has the chart library (else it says what to run).
  const std::filesystem::path err = dir / "commlens_diff_test.err";
  if (std::system((runs + " --html " + html.string() + " 2>" + err.string()).c_str()) == 0) {
    const std::string page = Slurp(html);
    EXPECT_NE(page.find("id=\"report-data\""), std::string::npos);
    EXPECT_NE(page.find("\"schema\":\"commlens.diff\""), std::string::npos);
  } else {
    EXPECT_NE(Slurp(err).find("chart library"), std::string::npos) << Slurp(err);
  }
  std::filesystem::remove(err);
  std::filesystem::remove(json);
  std::filesystem::remove(html);
  // One run is a usage error.
  EXPECT_NE(std::system((std::string(COMMLENS_BIN) + " diff " + base + "ddp-a -q 2>/dev/null").c_str()), 0);
}

}  // namespace
}  // namespace commlens
