// The analyze results as a versioned JSON document (schema in docs/json-report.md).
// Times are microseconds (floating point, nanosecond precision), percentages 0-100.
#pragma once

#include <nlohmann/json.hpp>

#include "analysis/analyze.h"
#include "model/trace.h"

namespace commlens::report {

inline constexpr const char* kAnalyzeSchema = "commlens.analyze";
inline constexpr int kAnalyzeSchemaVersion = 2;

nlohmann::json AnalyzeToJson(const model::Trace& trace, const analysis::JobAnalysis& job);

// The document's "collectives" section alone (the HTML report builds on it).
nlohmann::json CollectivesJson(const analysis::CollectiveAnalysis& c);
// The document's "cross_rank" section alone (the HTML report embeds it as it is).
nlohmann::json CrossRankJson(const model::Trace& trace, const analysis::CrossRankAnalysis& x);
// The what-if replay's verdict with its heatmap (analysis/whatif.h), shared with the HTML report.
nlohmann::json ReplayJson(const analysis::ReplayVerdict& replay);
// The parallelism roles section (groups, per-role times), shared with the HTML report.
nlohmann::json RolesJson(const analysis::ParallelRoles& roles);

}  // namespace commlens::report
