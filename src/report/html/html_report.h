// One self-contained HTML page of the analyze results (docs/report.md).
//
// The page holds everything it shows: the chart library (echarts, embedded into the
// binary at build time), its own script and style, and the results as one JSON document
// in a <script type="application/json"> element. It loads nothing from anywhere: no
// external script, style sheet, font or image, so it opens offline in any browser.
//
// The numbers are the ones `commlens analyze --json` writes for the same JobAnalysis
// (report_data.h says which fields the page carries); the page only adds what a chart
// needs and the analysis has no table for: the timeline of one profiler step, and
// counter series resampled to rates.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "analysis/analyze.h"
#include "common/status.h"
#include "model/trace.h"

namespace commlens::report::html {

struct HtmlReportOptions {
  std::string title;                  // default: "commlens report"
  int64_t step = -1;                  // profiler step of the timeline; -1: the median-length one
  std::string perfetto_href;          // relative link to the Perfetto export, "" for none
  std::string bench_source;           // file name of the benchmark (its curves: JobAnalysis::bench)
  size_t timeline_budget = 40'000;    // rectangles in the whole step timeline
  size_t counter_points = 400;        // time bins per counter chart
};

// The page; an error when this binary has no chart library (it says what to run).
Result<std::string> RenderHtmlReport(const model::Trace& trace, const analysis::JobAnalysis& job,
                                     const HtmlReportOptions& options);

// Renders and writes |path| (through a temporary file, renamed when complete).
Status WriteHtmlReport(const model::Trace& trace, const analysis::JobAnalysis& job,
                       const HtmlReportOptions& options, const std::string& path);

// The error RenderHtmlReport gives when the chart library is missing, or "" when present.
std::string MissingChartLibraryMessage();

}  // namespace commlens::report::html
