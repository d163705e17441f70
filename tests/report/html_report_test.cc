// The HTML report (src/report/html): on every shipped sample the page stands alone (no
// reference to anything outside it), its embedded data parses back with an independent
// parser (simdjson) and holds the numbers `commlens analyze --json` writes for the same
// analysis; the step timeline stays within its budget; findings name what the analysis
// shows; the command writes the page and refuses wrong command lines.
#include <gtest/gtest.h>
#include <simdjson.h>
#include <sys/wait.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>

#include "analysis/analyze.h"
#include "importers/trace_loader.h"
#include "report/html/counter_charts.h"
#include "report/html/html_report.h"
#include "report/html/step_timeline.h"
#include "common/sha256.h"
#include "report/json_report.h"
#include "testing/hostile_names.h"
#include "testing/sample_job.h"

namespace commlens {
namespace {

using nlohmann::json;
using report::html::TimelineRow;
using report::html::TimelineState;

using testing::Analyzed;
using testing::AnalyzeSample;

std::string Between(const std::string& text, const std::string& open, const std::string& close) {
  const size_t a = text.find(open);
  if (a == std::string::npos) return "";
  const size_t b = text.find(close, a + open.size());
  if (b == std::string::npos) return "";
  return text.substr(a + open.size(), b - a - open.size());
}

// The page less the inlined chart library (whose license header and SVG namespaces
// contain URLs that are never fetched).
std::string WithoutChartLibrary(const std::string& page) {
  const std::string open = "<script>/* echarts";
  const size_t a = page.find(open);
  const size_t b = page.find("</script>", a);
  if (a == std::string::npos || b == std::string::npos) return page;
  return page.substr(0, a) + page.substr(b);
}

// A build without the chart library (not set up with scripts/setup.sh) cannot write
// pages: the page tests are skipped and NoChartLibrary checks the message instead.
class HtmlSample : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    if (!report::html::MissingChartLibraryMessage().empty()) GTEST_SKIP() << "built without echarts";
  }
};

TEST(HtmlReport, NoChartLibraryIsAClearError) {
  if (report::html::MissingChartLibraryMessage().empty()) GTEST_SKIP() << "built with echarts";
  Analyzed a = AnalyzeSample("ddp");
  Result<std::string> page = report::html::RenderHtmlReport(a.trace, a.job, {});
  ASSERT_FALSE(page.ok());
  EXPECT_NE(page.status().message().find("scripts/setup.sh"), std::string::npos);
}

TEST_P(HtmlSample, PageStandsAlone) {
  Analyzed a = AnalyzeSample(GetParam());
  Result<std::string> page = report::html::RenderHtmlReport(a.trace, a.job, {});
  ASSERT_TRUE(page.ok()) << page.status().message();
  // Nothing that a browser would load from elsewhere: no element that loads, and no URL at
  // all, outside the chart library; no style import anywhere.
  const std::string ours = WithoutChartLibrary(*page);
  for (const char* bad : {"<script src", "<link", "<img", "<iframe", "<object", "<embed", "src=", "href=\"/"})
    EXPECT_EQ(ours.find(bad), std::string::npos) << bad;
  for (const char* bad : {"@import", "url(http", "url(//"}) EXPECT_EQ(page->find(bad), std::string::npos) << bad;
  EXPECT_LT(ours.size(), page->size() - 100'000) << "the chart library is inlined";
  EXPECT_EQ(ours.find("http://"), std::string::npos);
  EXPECT_EQ(ours.find("https://"), std::string::npos);
  // The content security policy forbids any load the page might still attempt.
  EXPECT_NE(page->find("default-src 'none'"), std::string::npos);
  // Every <script> element is inline and closes once: the data cannot end it early.
  size_t opens = 0, closes = 0;
  for (size_t p = 0; (p = page->find("<script", p)) != std::string::npos; ++p) ++opens;
  for (size_t p = 0; (p = page->find("</script", p)) != std::string::npos; ++p) ++closes;
  EXPECT_EQ(opens, 3u);
  EXPECT_EQ(closes, 3u);
}

// The policy runs the page's two scripts by their SHA-256 and nothing else: no
// 'unsafe-inline', so markup that a name smuggled into the page could not run script.
TEST_P(HtmlSample, ScriptsRunOnlyByTheirHashes) {
  Analyzed a = AnalyzeSample(GetParam());
  Result<std::string> page = report::html::RenderHtmlReport(a.trace, a.job, {});
  ASSERT_TRUE(page.ok()) << page.status().message();
  const std::string policy = Between(*page, "http-equiv=\"Content-Security-Policy\" content=\"", "\"");
  const std::string script_src = Between(policy, "script-src ", ";");
  EXPECT_EQ(script_src.find("unsafe-inline"), std::string::npos) << script_src;
  EXPECT_NE(policy.find("style-src 'unsafe-inline'"), std::string::npos) << "echarts sets inline styles";
  auto base64 = [](const Sha256::Digest& d) {
    static const std::string kDigits = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    std::string out;
    uint32_t bits = 0;
    int n = 0;
    for (uint8_t byte : d) {
      bits = bits << 8 | byte;
      for (n += 8; n >= 6; n -= 6) out += kDigits[(bits >> (n - 6)) & 63];
    }
    if (n > 0) out += kDigits[(bits << (6 - n)) & 63];
    while (out.size() % 4) out += '=';
    return out;
  };
  size_t scripts = 0;
  for (size_t p = 0; (p = page->find("<script>", p)) != std::string::npos; ++scripts) {
    p += 8;
    const size_t end = page->find("</script>", p);
    ASSERT_NE(end, std::string::npos);
    const std::string hash = "'sha256-" + base64(Sha256::Of(std::string_view(*page).substr(p, end - p))) + "'";
    EXPECT_NE(script_src.find(hash), std::string::npos) << "script " << scripts << " is not named: " << script_src;
  }
  EXPECT_EQ(scripts, 2u);  // the chart library and the page's script; the data is not run
}

// A job whose names are markup, formulas, control bytes and bad UTF-8: the page's data
// holds them as JSON text ('<' as \u003c, bad bytes as U+FFFD), inside its element.
TEST(HtmlReport, HostileNamesStayData) {
  if (!report::html::MissingChartLibraryMessage().empty()) GTEST_SKIP() << "built without echarts";
  Analyzed a = AnalyzeSample("ddp");
  testing::GiveHostileNames(&a.trace);
  const std::string markup_name = testing::kHostileNames.back();  // <img …>, quotes, </script>
  a.trace.groups[0].description = markup_name;
  for (model::RankTrace& r : a.trace.ranks)
    for (model::ProcessGroup& g : r.groups)
      if (g.job_group == 0) g.description = markup_name;
  a.job = analysis::Analyze(a.trace, {});
  report::html::HtmlReportOptions options;
  options.title = "<img src=x onerror=alert(1)>";
  Result<std::string> page = report::html::RenderHtmlReport(a.trace, a.job, options);
  ASSERT_TRUE(page.ok()) << page.status().message();
  EXPECT_NE(page->find("<title>&lt;img src=x onerror=alert(1)&gt;</title>"), std::string::npos);
  const std::string text = Between(*page, "<script type=\"application/json\" id=\"report-data\">", "</script>");
  EXPECT_EQ(text.find('<'), std::string::npos);
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  ASSERT_EQ(parser.parse(text).get(doc), simdjson::SUCCESS);  // UTF-8 checked too
  bool markup = false;
  for (simdjson::dom::element b : doc["collectives"]["buckets"].get_array())
    markup |= std::string_view(b["group_desc"]) == markup_name;
  EXPECT_TRUE(markup) << "the names are kept, as text";
  size_t opens = 0;
  for (size_t p = 0; (p = page->find("<script", p)) != std::string::npos; ++p) ++opens;
  EXPECT_EQ(opens, 3u);
}

TEST_P(HtmlSample, DataHoldsTheAnalyzeNumbers) {
  Analyzed a = AnalyzeSample(GetParam());
  Result<std::string> page = report::html::RenderHtmlReport(a.trace, a.job, {});
  ASSERT_TRUE(page.ok()) << page.status().message();
  const std::string text =
      Between(*page, "<script type=\"application/json\" id=\"report-data\">", "</script>");
  ASSERT_FALSE(text.empty());
  EXPECT_EQ(text.find("</"), std::string::npos);
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  ASSERT_EQ(parser.parse(text).get(doc), simdjson::SUCCESS);
  EXPECT_EQ(std::string_view(doc["schema"]), "commlens.report");
  EXPECT_EQ(int64_t(doc["schema_version"]), 1);

  const json want = report::AnalyzeToJson(a.trace, a.job);
  // Per rank: columns with analyze --json's field names and values.
  simdjson::dom::object ranks = doc["ranks"];
  ASSERT_EQ(simdjson::dom::array(ranks["rank"]).size(), want["ranks"].size());
  for (const char* field : {"span_us", "compute_us", "non_compute_us", "exposed_comm_us", "idle_us",
                            "comm_us", "overlap_us", "idle_pct", "compute_pct", "non_compute_pct",
                            "exposed_comm_pct"}) {
    size_t i = 0;
    for (simdjson::dom::element v : simdjson::dom::array(ranks[field])) {
      EXPECT_DOUBLE_EQ(double(v), want["ranks"][i][field].get<double>()) << field << " rank " << i;
      ++i;
    }
  }
  // The job's steps.
  simdjson::dom::array steps = doc["steps"];
  ASSERT_EQ(steps.size(), want["steps"].size());
  size_t k = 0;
  for (simdjson::dom::element s : steps) {
    EXPECT_EQ(int64_t(s["step"]), want["steps"][k]["step"].get<int64_t>());
    for (const char* field : {"span_us", "compute_us", "idle_us", "exposed_comm_us", "compute_pct"})
      EXPECT_DOUBLE_EQ(double(s[field]), want["steps"][k][field].get<double>()) << field;
    ++k;
  }
  // Collectives: every bucket and group, and the waits per rank.
  simdjson::dom::array buckets = doc["collectives"]["buckets"];
  ASSERT_EQ(buckets.size(), want["collectives"]["buckets"].size());
  k = 0;
  for (simdjson::dom::element b : buckets) {
    const json& w = want["collectives"]["buckets"][k++];
    EXPECT_EQ(std::string_view(b["op"]), w["op"].get<std::string>());
    EXPECT_EQ(uint64_t(b["count"]), w["count"].get<uint64_t>());
    EXPECT_DOUBLE_EQ(double(b["total_us"]), w["total_us"].get<double>());
    EXPECT_DOUBLE_EQ(double(b["kernel_busbw_gbps"]), w["kernel_busbw_gbps"].get<double>());
    EXPECT_EQ(int64_t(b["size_min_bytes"]), w["size_min_bytes"].get<int64_t>());
  }
  EXPECT_EQ(simdjson::dom::array(doc["collectives"]["groups"]).size(), want["collectives"]["groups"].size());
  k = 0;
  for (simdjson::dom::element v : simdjson::dom::array(doc["collectives"]["ranks"]["waiting_us"]))
    EXPECT_DOUBLE_EQ(double(v), want["collectives"]["ranks"][k++]["waiting_us"].get<double>());
  k = 0;
  for (simdjson::dom::element v : simdjson::dom::array(doc["collectives"]["ranks"]["last_arrivals"]))
    EXPECT_EQ(uint64_t(v), want["collectives"]["ranks"][k++]["last_arrivals"].get<uint64_t>());
  // The idle histogram is the sum of every stream's.
  double idle_sum = 0;
  for (const auto& r : want["ranks"])
    for (const auto& s : r["idle_gaps"])
      for (const auto& b : s["histogram"]) idle_sum += b["time_us"].get<double>();
  double got_idle = 0;
  for (simdjson::dom::element b : simdjson::dom::array(doc["idle"]["bins"])) got_idle += double(b["time_us"]);
  EXPECT_NEAR(got_idle, idle_sum, 1e-6 * std::max(1.0, idle_sum));
  // The cross-rank section is analyze --json's, field for field.
  EXPECT_EQ(json::parse(text)["cross_rank"], want["cross_rank"]);
}

TEST(HtmlReport, NativeTraceShowsNcclProtocols) {
  if (!report::html::MissingChartLibraryMessage().empty()) GTEST_SKIP() << "built without echarts";
  Analyzed a = AnalyzeSample("native");
  Result<std::string> page = report::html::RenderHtmlReport(a.trace, a.job, {});
  ASSERT_TRUE(page.ok()) << page.status().message();
  const json doc = json::parse(Between(*page, "<script type=\"application/json\" id=\"report-data\">", "</script>"));
  const json& rows = doc["cross_rank"]["protocols"];
  ASSERT_EQ(rows.size(), a.job.cross_rank.protocols.size());
  ASSERT_FALSE(rows.empty());
  bool simple_ring = false;
  for (const json& r : rows) {
    for (const char* field : {"group", "op", "size_min_bytes", "algorithm", "protocol", "channels", "count", "transfer_busbw_gbps"})
      EXPECT_TRUE(r.contains(field)) << field;
    // NCCL runs large all-reduces as a ring with the SIMPLE protocol on many channels.
    if (r["size_min_bytes"].get<int64_t>() >= (64 << 20) && r["algorithm"] == "RING" && r["protocol"] == "SIMPLE" &&
        r["channels"].get<int>() > 1)
      simple_ring = true;
  }
  EXPECT_TRUE(simple_ring) << rows.dump();
}

TEST_P(HtmlSample, TimelineIsOneStepWithinBudget) {
  Analyzed a = AnalyzeSample(GetParam());
  const size_t budget = 200;
  report::html::StepTimeline tl = report::html::BuildStepTimeline(a.trace, a.job, -1, budget);
  EXPECT_EQ(tl.step, a.job.median_span_step);
  ASSERT_FALSE(tl.rows.empty());
  EXPECT_LE(tl.rectangles, std::max<size_t>(budget, 8 * tl.rows.size()));
  for (const TimelineRow& r : tl.rows)
    for (size_t i = 0; i < r.start.size(); ++i) {
      EXPECT_GE(r.start[i], 0);
      EXPECT_LE(r.end[i], tl.length);
      EXPECT_LT(r.start[i], r.end[i]);
    }
}

INSTANTIATE_TEST_SUITE_P(Samples, HtmlSample, ::testing::Values("ddp", "fsdp", "moe", "native"));

TEST(HtmlReport, MedianStepAndExactTimeline) {
  Analyzed a = AnalyzeSample("ddp");
  ASSERT_EQ(a.job.steps.size(), 4u);
  // With a budget large enough nothing is merged, and the summary row's compute equals the
  // step's compute on that rank.
  const int64_t step = a.job.steps[1].number;
  report::html::StepTimeline tl = report::html::BuildStepTimeline(a.trace, a.job, step, 10'000'000);
  EXPECT_EQ(tl.step, step);
  EXPECT_EQ(tl.merged_gap, 0);
  EXPECT_TRUE(tl.per_stream);
  for (const TimelineRow& r : tl.rows) {
    if (r.stream != -1) continue;
    model::TimeNs compute = 0;
    for (size_t i = 0; i < r.start.size(); ++i)
      if (r.state[i] == TimelineState::kCompute) compute += r.end[i] - r.start[i];
    for (const auto& ra : a.job.ranks) {
      if (ra.trace->rank != r.rank) continue;
      for (const auto& s : ra.time.steps)
        if (s.number == step) {
          EXPECT_EQ(compute, s.time.compute) << "rank " << r.rank;
        }
    }
  }
}

TEST(HtmlReport, CoarsenRowFillsShortestGapsFirst) {
  TimelineRow row;
  // compute at 0-10, 12-20, 100-110, 111-120; comm at 20-30.
  for (auto [s, e, st] : {std::tuple{0, 10, 0}, {12, 20, 0}, {20, 30, 1}, {100, 110, 0}, {111, 120, 0}}) {
    row.start.push_back(s);
    row.end.push_back(e);
    row.state.push_back(static_cast<TimelineState>(st));
  }
  EXPECT_EQ(report::html::CoarsenRow(&row, 10), 0);
  EXPECT_EQ(row.start.size(), 5u);
  EXPECT_EQ(report::html::CoarsenRow(&row, 3), 2);  // the gaps of 1 and 2 ns are filled
  ASSERT_EQ(row.start.size(), 3u);
  EXPECT_EQ(row.start[0], 0);
  EXPECT_EQ(row.end[0], 20);
  EXPECT_EQ(row.state[1], TimelineState::kComm);
  EXPECT_EQ(row.start[2], 100);
  EXPECT_EQ(row.end[2], 120);
}

TEST(HtmlReport, CountersBecomeRates) {
  model::Trace trace;
  trace.ranks.resize(2);
  for (int r = 0; r < 2; ++r) {
    trace.ranks[r].rank = r;
    model::CounterSeries amounts;  // bytes moved per sample: 1 MB every 1 ms for 1 s
    amounts.name = "nccl.proxy.send_bytes";
    amounts.unit = "bytes";
    model::CounterSeries raw;      // a cumulative port counter in 4-byte words
    raw.name = "port_xmit_data";
    raw.unit = "4 bytes";
    raw.cumulative = true;
    raw.owner = model::CounterOwner::kNic;
    raw.device = "mlx5_" + std::to_string(r) + ":1";
    model::CounterSeries gauge;
    gauge.name = "sm_active";
    gauge.unit = "percent";
    for (int i = 0; i < 1000; ++i) {
      amounts.time.push_back(1'000'000LL * i);
      amounts.value.push_back(1e6);
      raw.time.push_back(1'000'000LL * i);
      raw.value.push_back(250'000.0 * i);  // 1 MB per ms
      gauge.time.push_back(1'000'000LL * i);
      gauge.value.push_back(i < 500 ? 40.0 : 80.0);
    }
    trace.ranks[r].counters = {amounts, raw, gauge};
  }
  auto charts = report::html::ResampleCounters(trace, 100, 8);
  ASSERT_EQ(charts.size(), 3u);
  for (const auto& c : charts) {
    ASSERT_EQ(c.labels.size(), 2u) << c.name;
    if (c.name == "sm_active") {
      EXPECT_FALSE(c.rate);
      EXPECT_EQ(c.unit, "percent");
      EXPECT_DOUBLE_EQ(*c.values[0].front(), 40.0);
      EXPECT_DOUBLE_EQ(*c.values[0].back(), 80.0);
      continue;
    }
    EXPECT_TRUE(c.rate);
    EXPECT_EQ(c.unit, "GB/s");
    // 1 MB per ms is 1 GB/s; bins hold whole samples, so the middle bins read ~1 GB/s and
    // the amounts sum back exactly.
    EXPECT_NEAR(*c.values[0][50], 1.0, 0.15) << c.name;
    double bytes = 0;
    for (const auto& v : c.values[0]) bytes += *v * 1e9 * static_cast<double>(c.bin) * 1e-9;
    EXPECT_NEAR(bytes, c.name == "port_xmit_data" ? 999e6 : 1000e6, 1e3) << c.name;
  }
  // Many series are drawn as one aggregate.
  auto one = report::html::ResampleCounters(trace, 100, 1);
  ASSERT_EQ(one[0].labels.size(), 1u);
  EXPECT_EQ(one[0].labels[0].rfind("sum of 2", 0), 0u);
}

// ---- the command ------------------------------------------------------------------------------

int Commlens(const std::string& args) {
  const std::string cmd = std::string(COMMLENS_BIN) + " " + args + " >/dev/null 2>&1";
  const int rc = std::system(cmd.c_str());
  return WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
}

TEST(ReportCommand, WritesThePageAndRefusesBadCommandLines) {
  if (!report::html::MissingChartLibraryMessage().empty()) GTEST_SKIP() << "built without echarts";
  std::filesystem::current_path(COMMLENS_SOURCE_DIR);
  const std::filesystem::path dir = std::filesystem::path(COMMLENS_BINARY_DIR) / "report-cli-test";
  std::filesystem::create_directories(dir);
  const std::string out = (dir / "moe.html").string();
  std::filesystem::remove(out);
  EXPECT_EQ(Commlens("report examples/traces/moe -o " + out + " --perfetto " + (dir / "moe.json").string() +
                " --bench tests/bench/data/h200x4_all_reduce_run1.json"),
            0);
  ASSERT_TRUE(std::filesystem::exists(out));
  std::ifstream in(out);
  const std::string page((std::istreambuf_iterator<char>(in)), {});
  EXPECT_NE(page.find("\"perfetto_href\":\"moe.json\""), std::string::npos);
  EXPECT_NE(page.find("\"source\":\"h200x4_all_reduce_run1.json\""), std::string::npos);
  EXPECT_EQ(Commlens("report"), 64);                                  // neither traces nor --bench
  EXPECT_EQ(Commlens("report examples/traces/moe"), 64);              // traces without -o
  EXPECT_EQ(Commlens("report -o x.html"), 64);                        // -o without traces
  EXPECT_EQ(Commlens("report examples/traces/moe --step x -o " + out), 64);
  EXPECT_EQ(Commlens("report examples/traces/moe -o " + out + " --bench /nonexistent.json"), 1);
  EXPECT_EQ(Commlens("report /nonexistent -o " + out), 1);
  // The benchmark view is unchanged.
  EXPECT_EQ(Commlens("report --bench tests/bench/data/h200x4_all_reduce_run1.json"), 0);
}

}  // namespace
}  // namespace commlens
