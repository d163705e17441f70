// The data of one HTML report: the analysis results the page shows, as one compact JSON
// document (columnar where there is a value per rank, so 1000 ranks stay small).
//
// Fields that `commlens analyze --json` also writes carry its names and its numbers
// (microseconds, percentages rounded to 2 decimals): per rank span_us, compute_us,
// non_compute_us, exposed_comm_us, idle_us, comm_us, overlap_us and the *_pct; the job's
// steps; the collectives' buckets, groups and rank waits. Added for the charts: the
// findings, the summary of a step, the idle-gap histogram summed over every stream, the
// timeline of one step, counters as rates, the benchmark's curves. docs/report.md lists
// every field.
#pragma once

#include <nlohmann/json.hpp>

#include "analysis/analyze.h"
#include "model/trace.h"
#include "report/html/html_report.h"

namespace commlens::report::html {

inline constexpr const char* kReportDataSchema = "commlens.report";
inline constexpr int kReportDataSchemaVersion = 1;

nlohmann::json BuildReportData(const model::Trace& trace, const analysis::JobAnalysis& job,
                               const HtmlReportOptions& options);

}  // namespace commlens::report::html
