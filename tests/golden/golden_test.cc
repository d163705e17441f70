// Golden tests on the shipped real traces (4 x H200 runs of examples/workloads/train.py):
//  - the analyze JSON equals the checked-in golden (regenerate with
//    scripts/update_goldens.sh after an intended change, and review the diff);
//  - the JSON parses back with an independent parser (simdjson) and has the documented
//    fields with the documented types;
//  - the text report equals its golden;
//  - the temporal breakdown and overlap agree with HTA's numbers for the same traces
//    (hta_reference.json, written by scripts/compare_hta.py from HTA run with
//    nanosecond timestamps) to within 0.01 percentage points.
#include <gtest/gtest.h>
#include <simdjson.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "analysis/analyze.h"
#include "importers/trace_loader.h"
#include "report/json_report.h"
#include "testing/sample_job.h"
#include "report/text_report.h"

namespace commlens {
namespace {

using nlohmann::json;

std::string ReadAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

using testing::Analyzed;
using testing::AnalyzeSample;

class Golden : public ::testing::TestWithParam<std::string> {};
class KinetoGolden : public ::testing::TestWithParam<std::string> {};

TEST_P(Golden, JsonMatchesGolden) {
  Analyzed a = AnalyzeSample(GetParam());
  json got = report::AnalyzeToJson(a.trace, a.job);
  std::string path = std::string(COMMLENS_SOURCE_DIR) + "/tests/golden/" + GetParam() + ".analyze.json";
  json want = json::parse(ReadAll(path));
  if (got != want) {
    json patch = json::diff(want, got);
    FAIL() << "analyze JSON differs from " << path << " (first changes):\n"
           << patch.dump(1).substr(0, 3000);
  }
}

TEST_P(Golden, TextMatchesGolden) {
  Analyzed a = AnalyzeSample(GetParam());
  std::string got = report::AnalyzeToText(a.trace, a.job, {});
  std::string want = ReadAll(std::string(COMMLENS_SOURCE_DIR) + "/tests/golden/" + GetParam() +
                             ".analyze.txt");
  EXPECT_EQ(got, want);
}

TEST_P(KinetoGolden, JsonParsesBackWithTheDocumentedShape) {
  Analyzed a = AnalyzeSample(GetParam());
  std::string text = report::AnalyzeToJson(a.trace, a.job).dump(1);
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  ASSERT_EQ(parser.parse(text).get(doc), simdjson::SUCCESS);
  EXPECT_EQ(std::string_view(doc["schema"]), report::kAnalyzeSchema);
  EXPECT_EQ(int64_t(doc["schema_version"]), report::kAnalyzeSchemaVersion);
  simdjson::dom::array ranks = doc["ranks"];
  ASSERT_EQ(ranks.size(), 4u);
  int expected_rank = 0;
  for (simdjson::dom::element r : ranks) {
    EXPECT_EQ(int64_t(r["rank"]), expected_rank++);
    double sum = 0;
    for (const char* key : {"compute_pct", "idle_pct", "non_compute_pct"}) {
      double v = r[key];
      EXPECT_GE(v, 0.0);
      EXPECT_LE(v, 100.0);
      sum += v;
    }
    EXPECT_NEAR(sum, 100.0, 0.02);
    EXPECT_TRUE(r["overlap_pct"].is_double() || r["overlap_pct"].is_null());
    EXPECT_GT(double(r["span_us"]), 0.0);
    EXPECT_GT(simdjson::dom::array(r["steps"]).size(), 0u);
    EXPECT_GT(simdjson::dom::array(r["kernel_breakdown"]["top_kernels"]).size(), 0u);
    EXPECT_GT(simdjson::dom::array(r["idle_gaps"]).size(), 0u);
  }
  // Job-level results: per-step means and the job's kernel table.
  simdjson::dom::array steps = doc["steps"];
  ASSERT_GT(steps.size(), 0u);
  for (simdjson::dom::element s : steps) {
    EXPECT_EQ(int64_t(s["ranks"]), 4);
    EXPECT_GT(double(s["span_us"]), 0.0);
  }
  EXPECT_GT(simdjson::dom::array(doc["kernel_breakdown"]["top_kernels"]).size(), 0u);
  simdjson::dom::array buckets = doc["collectives"]["buckets"];
  ASSERT_GT(buckets.size(), 0u);
  for (simdjson::dom::element b : buckets) {
    EXPECT_GT(int64_t(b["count"]), 0);
    EXPECT_GE(double(b["kernel_busbw_gbps"]), 0.0);
    EXPECT_LE(uint64_t(b["transfer"]["count"]), uint64_t(b["count"]));
    EXPECT_FALSE(std::string_view(b["op"]).empty());
  }
}

TEST_P(KinetoGolden, AgreesWithHta) {
  Analyzed a = AnalyzeSample(GetParam());
  json ref = json::parse(ReadAll(std::string(COMMLENS_SOURCE_DIR) +
                                 "/tests/golden/hta_reference.json"))[GetParam()];
  ASSERT_FALSE(ref.is_null()) << "no HTA reference for " << GetParam();
  for (const auto& r : a.job.ranks) {
    const json& h = ref[std::to_string(r.trace->rank)];
    const analysis::TimeBreakdown& b = r.time.total;
    EXPECT_NEAR(b.idle_pct(), h["idle_pct"].get<double>(), 0.01) << "rank " << r.trace->rank;
    EXPECT_NEAR(b.compute_pct(), h["compute_pct"].get<double>(), 0.01);
    EXPECT_NEAR(b.non_compute_pct(), h["non_compute_pct"].get<double>(), 0.01);
    if (h["overlap_pct"].is_null()) {
      EXPECT_FALSE(b.has_comm());
    } else {
      EXPECT_NEAR(b.overlap_pct(), h["overlap_pct"].get<double>(), 0.01);
    }
  }
}

TEST_P(KinetoGolden, JobKernelTableAccountsForEveryActivity) {
  Analyzed a = AnalyzeSample(GetParam());
  uint64_t activities = 0, counted = 0;
  model::TimeNs total = 0, summed = 0;
  for (const auto& r : a.job.ranks) {
    activities += r.window.rows.size();
    for (uint32_t i : r.window.rows) total += r.trace->gpu.end[i] - r.trace->gpu.start[i];
  }
  for (const auto& k : a.job.kernels.kernels) {
    counted += k.count;
    summed += k.total;
  }
  EXPECT_EQ(counted, activities);
  EXPECT_EQ(summed, total);
}

TEST_P(Golden, CrossRankFindingsAreConsistent) {
  Analyzed a = AnalyzeSample(GetParam());
  const analysis::CrossRankAnalysis& x = a.job.cross_rank;
  EXPECT_FALSE(x.summary.empty());
  EXPECT_TRUE(x.hangs.empty());  // every sample ran to the end on every rank
  uint64_t last = 0, matched = 0;
  for (const auto& g : a.job.collectives.groups) matched += g.matched;
  for (size_t i = 0; i < x.stragglers.size(); ++i) {
    last += x.stragglers[i].last_arrivals;
    if (i > 0) {
      EXPECT_GE(x.stragglers[i - 1].delay, x.stragglers[i].delay);  // longest wall-time delay first
    }
  }
  EXPECT_EQ(last, matched);  // each matched collective has one last rank
  if (GetParam() == "native") {
    EXPECT_FALSE(x.protocols.empty());  // recordings know NCCL's algorithm and protocol
    EXPECT_EQ(x.stragglers[0].cause, analysis::LateCause::kUnknown);  // no kernel timeline
  }
}

TEST_P(Golden, MatchedOpsTableCoversEveryNumberedOp) {
  Analyzed a = AnalyzeSample(GetParam());
  const model::MatchedOps& m = a.trace.matched;
  uint64_t numbered = 0;
  for (const auto& r : a.trace.ranks)
    for (uint32_t i = 0; i < r.comms.size(); ++i) numbered += r.comms.group[i] != model::kNoIndex && r.comms.seq[i] >= 0;
  ASSERT_EQ(m.first.size(), m.size() + 1);
  EXPECT_EQ(m.first.back(), numbered);
  for (size_t k = 0; k < m.size(); ++k)
    for (uint32_t j = m.first[k]; j < m.first[k + 1]; ++j) {
      const auto& c = a.trace.ranks[m.rank_index[j]].comms;
      ASSERT_EQ(c.seq[m.row[j]], m.seq[k]);
      ASSERT_EQ(c.start[m.row[j]], m.start[j]);
    }
}

// "native": the commlens NCCL profiler plugin's recording of a 4 x H200 DDP run.
INSTANTIATE_TEST_SUITE_P(RealTraces, Golden, ::testing::Values("ddp", "fsdp", "moe", "native"));
INSTANTIATE_TEST_SUITE_P(RealTraces, KinetoGolden, ::testing::Values("ddp", "fsdp", "moe"));

TEST(NativeGolden, RecordedCollectivesAreMatchedAcrossRanks) {
  Analyzed a = AnalyzeSample("native");
  ASSERT_EQ(a.trace.ranks.size(), 4u);
  for (const auto& r : a.trace.ranks) {
    EXPECT_EQ(r.format, "native");
    EXPECT_GT(r.comms.size(), 600u);
  }
  const auto& c = a.job.collectives;
  ASSERT_EQ(c.groups.size(), 1u);
  EXPECT_EQ(c.groups[0].matched, 625u);
  EXPECT_EQ(c.groups[0].unmatched, 0u);
  double busbw = 0;
  for (const auto& b : c.buckets)
    if (b.op == model::CommOp::kAllReduce && b.size_lo == (64 << 20)) busbw = b.kernel_busbw_gbps;
  EXPECT_GT(busbw, 50.0);  // DDP buckets over NVLink: hundreds of GB/s
}

}  // namespace
}  // namespace commlens
