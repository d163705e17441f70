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
};

std::string AnalyzeToText(const model::Trace& trace, const analysis::JobAnalysis& job,
                          const TextOptions& options);

}  // namespace commlens::report
