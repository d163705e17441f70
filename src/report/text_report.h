// The analyze results as terminal text: one section per analysis, tables sized to fit.
#pragma once

#include <cstdint>
#include <string>

#include "analysis/analyze.h"
#include "model/trace.h"

namespace commlens::report {

struct TextOptions {
  size_t max_steps = 20;   // per-step rows shown before "... more"
  size_t max_rows = 20;    // rows of the collective and idle tables
  size_t name_width = 60;  // kernel names are cut to this width
  // Past this many ranks a per-rank table shows the extremes and the distribution
  // instead of every row (|all_ranks|: every row).
  size_t rank_rows = 16;
  bool all_ranks = false;
};

std::string AnalyzeToText(const model::Trace& trace, const analysis::JobAnalysis& job,
                          const TextOptions& options);

}  // namespace commlens::report
