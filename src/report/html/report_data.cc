#include "report/html/report_data.h"

#include <algorithm>
#include <cctype>
#include <cmath>

#include "model/activity_class.h"
#include "model/collective.h"
#include "report/html/counter_charts.h"
#include "report/html/step_timeline.h"
#include "report/json_report.h"

namespace commlens::report::html {

using nlohmann::json;
using model::TimeNs;

namespace {

// The conversions json_report.cc uses, so the numbers are the same.
double Us(TimeNs ns) { return static_cast<double>(ns) / 1000.0; }
double Round2(double v) { return std::round(v * 100.0) / 100.0; }

// One breakdown as an object with analyze --json's field names.
json BreakdownJson(const analysis::TimeBreakdown& b) {
  return {{"span_us", Us(b.span)},
          {"busy_us", Us(b.busy)},
          {"idle_us", Us(b.idle)},
          {"compute_us", Us(b.compute)},
          {"non_compute_us", Us(b.non_compute)},
          {"comm_us", Us(b.comm)},
          {"memory_us", Us(b.memory)},
          {"overlap_us", Us(b.overlap)},
          {"exposed_comm_us", Us(b.exposed_comm)},
          {"idle_pct", Round2(b.idle_pct())},
          {"compute_pct", Round2(b.compute_pct())},
          {"non_compute_pct", Round2(b.non_compute_pct())},
          {"overlap_pct", b.has_comm() ? json(Round2(b.overlap_pct())) : json(nullptr)},
          {"exposed_comm_pct", Round2(b.Pct(b.exposed_comm))}};
}

// Per rank, one array per field (the same fields as BreakdownJson).
json RanksJson(const analysis::JobAnalysis& job) {
  json cols = json::object();
  const char* names[] = {"rank", "span_us", "compute_us", "non_compute_us", "exposed_comm_us",
                         "idle_us", "comm_us", "overlap_us", "idle_pct", "compute_pct",
                         "non_compute_pct", "exposed_comm_pct", "overlap_pct"};
  for (const char* n : names) cols[n] = json::array();
  for (const auto& a : job.ranks) {
    const json b = BreakdownJson(a.time.total);
    cols["rank"].push_back(a.trace->rank);
    for (const char* n : names)
      if (std::string_view(n) != "rank") cols[n].push_back(b[n]);
  }
  return cols;
}

// The step the summary describes (analysis::StepSummary).
json SummaryJson(const analysis::JobAnalysis& job) {
  const analysis::StepSummary& m = job.summary;
  json j = BreakdownJson(m.mean);
  j["over"] = m.over_steps ? "steps" : "ranks";
  j["count"] = m.count;
  j["span_min_us"] = Us(m.span_min);
  j["span_median_us"] = Us(m.span_median);
  j["span_max_us"] = Us(m.span_max);
  j["left_out"] = json::array();
  for (const auto& st : job.step_choice.steps)
    if (!st.left_out.empty()) j["left_out"].push_back({{"step", st.number}, {"why", st.left_out}});
  return j;
}

// analyze --json's collectives, with the per-rank waits as columns (the page draws them).
json CollectivesJson(const analysis::CollectiveAnalysis& c) {
  json j = report::CollectivesJson(c);
  json ranks = {{"rank", json::array()}, {"in_collectives_us", json::array()},
                {"waiting_us", json::array()}, {"last_arrivals", json::array()}};
  for (const auto& r : c.ranks) {
    ranks["rank"].push_back(r.rank);
    ranks["in_collectives_us"].push_back(Us(r.in_collectives));
    ranks["waiting_us"].push_back(Us(r.waiting));
    ranks["last_arrivals"].push_back(r.last_arrivals);
  }
  j["ranks"] = ranks;
  return j;
}

// Every stream of every rank summed: the histogram by gap length and the time by kind.
json IdleJson(const analysis::JobIdle& idle) {
  json j = {{"streams", idle.streams}, {"bins", json::array()}, {"kinds", json::array()}};
  for (int b = 0; b < analysis::kGapBins; ++b)
    j["bins"].push_back(
        {{"bin", std::string(analysis::GapBinLabel(b))}, {"count", idle.bin_count[b]}, {"time_us", Us(idle.bin_time[b])}});
  for (int k = 0; k < 3; ++k)
    j["kinds"].push_back({{"kind", std::string(analysis::GapKindName(static_cast<analysis::GapKind>(k)))},
                          {"count", idle.kind_count[k]},
                          {"time_us", Us(idle.kind_time[k])}});
  return j;
}

json KernelsJson(const analysis::KernelBreakdown& k) {
  json j = {{"distinct_kernels", k.distinct_names()}, {"rest_total_us", Us(k.rest_total())},
            {"top_kernels", json::array()}};
  for (const auto& s : k.top())
    j["top_kernels"].push_back({{"name", s.name},
                                {"class", std::string(model::ActivityClassName(s.cls))},
                                {"count", s.count},
                                {"total_us", Us(s.total)},
                                {"mean_us", s.mean / 1000.0}});
  return j;
}

json TimelineJson(const StepTimeline& tl) {
  json j = {{"step", tl.step >= 0 ? json(tl.step) : json(nullptr)},
            {"length_us", Us(tl.length)},
            {"per_stream", tl.per_stream},
            {"merged_gap_us", Us(tl.merged_gap)},
            {"rectangles", tl.rectangles},
            {"rows", json::array()}};
  for (const auto& r : tl.rows) {
    json row = {{"rank", r.rank}, {"device", r.device}, {"stream", r.stream}};
    // Integer nanoseconds from the step's start: exact and short.
    json s = json::array(), d = json::array(), c = json::array();
    for (size_t k = 0; k < r.start.size(); ++k) {
      s.push_back(r.start[k]);
      d.push_back(r.end[k] - r.start[k]);
      c.push_back(static_cast<int>(r.state[k]));
    }
    row["start_ns"] = std::move(s);
    row["dur_ns"] = std::move(d);
    row["state"] = std::move(c);
    j["rows"].push_back(std::move(row));
  }
  return j;
}

json CountersJson(const std::vector<CounterChart>& charts, TimeNs origin) {
  json arr = json::array();
  for (const auto& c : charts) {
    json j = {{"name", c.name}, {"unit", c.unit}, {"rate", c.rate},
              {"start_s", static_cast<double>(c.start - origin) * 1e-9}, {"bin_s", static_cast<double>(c.bin) * 1e-9},
              {"series", json::array()}};
    for (size_t k = 0; k < c.labels.size(); ++k) {
      json v = json::array();
      for (const auto& x : c.values[k]) v.push_back(x ? json(*x) : json(nullptr));
      j["series"].push_back({{"label", c.labels[k]}, {"values", std::move(v)}});
    }
    arr.push_back(std::move(j));
  }
  return arr;
}

json BenchJson(const analysis::JobAnalysis& job, const HtmlReportOptions& o) {
  json j = {{"source", o.bench_source}, {"curves", json::array()}};
  for (const auto& c : job.bench)
    j["curves"].push_back({{"op", std::string(model::CommOpName(c.op))},
                           {"label", c.label},
                           {"size_bytes", c.size_bytes},
                           {"busbw_gbps", c.busbw_gbps}});
  return j;
}

// Durations in the analysis' sentences ("812.4 us") with the page's unit sign.
std::string MicroSign(std::string text) {
  for (size_t p = 0; (p = text.find(" us", p)) != std::string::npos; p += 3) {
    const bool after_digit = p > 0 && std::isdigit(static_cast<unsigned char>(text[p - 1]));
    const bool word_ends = p + 3 == text.size() || !std::isalpha(static_cast<unsigned char>(text[p + 3]));
    if (after_digit && word_ends) text.replace(p, 3, " \u00b5s");
  }
  return text;
}

}  // namespace

json BuildReportData(const model::Trace& trace, const analysis::JobAnalysis& job, const HtmlReportOptions& options) {
  json doc;
  doc["schema"] = kReportDataSchema;
  doc["schema_version"] = kReportDataSchemaVersion;
  doc["title"] = options.title.empty() ? "commlens report" : options.title;
  json paths = json::array();
  for (size_t i = 0; i < trace.ranks.size() && i < 8; ++i) paths.push_back(trace.ranks[i].path);
  doc["inputs"] = {{"ranks", trace.ranks.size()}, {"bytes", trace.InputBytes()}, {"paths", paths}, {"failures", json::array()},
                   {"warnings", trace.warnings}};
  for (const auto& f : trace.failures) doc["inputs"]["failures"].push_back({{"path", f.path}, {"message", f.message}});
  doc["summary"] = SummaryJson(job);
  json findings = json::array();
  for (const analysis::Finding& f : job.findings)
    findings.push_back({{"rule", f.rule}, {"text", MicroSign(f.text)}, {"section", f.section},
                        {"cost_us_per_step", Us(static_cast<TimeNs>(std::llround(f.cost_ns_per_step)))}});
  doc["findings"] = findings;
  doc["ranks"] = RanksJson(job);
  doc["steps"] = json::array();
  for (const auto& s : job.steps) {
    json sj = BreakdownJson(s.mean);
    sj["step"] = s.number;
    sj["ranks"] = s.ranks;
    doc["steps"].push_back(sj);
  }
  doc["kernels"] = KernelsJson(job.kernels);
  doc["collectives"] = CollectivesJson(job.collectives);
  doc["cross_rank"] = report::CrossRankJson(trace, job.cross_rank);  // analyze --json's section, as it is
  doc["parallel_roles"] = report::RolesJson(job.roles);  // likewise
  if (job.replay.done) doc["replay"] = report::ReplayJson(job.replay);  // likewise
  doc["idle"] = IdleJson(job.idle);
  const StepTimeline tl = BuildStepTimeline(trace, job, options.step, options.timeline_budget);
  doc["timeline"] = TimelineJson(tl);
  const std::vector<CounterChart> counters = ResampleCounters(trace, options.counter_points, 8);
  // The charts' time axis starts at the job's first GPU activity, else at the first chart's.
  TimeNs origin = job.first_gpu_start.value_or(INT64_MAX);
  if (!job.first_gpu_start)
    for (const auto& c : counters) origin = std::min(origin, c.start);
  doc["counters"] = CountersJson(counters, origin == INT64_MAX ? 0 : origin);
  doc["bench"] = BenchJson(job, options);
  doc["perfetto_href"] = options.perfetto_href;
  return doc;
}

}  // namespace commlens::report::html
