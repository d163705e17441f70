// The analyze results as terminal text: one section per analysis, tables sized to fit.
#pragma once

#include <cstdint>
#include <string>

#include "analysis/analyze.h"
#include "model/trace.h"

namespace commlens::report {

struct TextOptions {
  size_t max_steps = 12;   // per-step rows shown before "... more"
  size_t max_rows = 20;    // rows of the collective and idle tables
  size_t name_width = 60;  // kernel names are cut to this width
};

std::string AnalyzeToText(const model::Trace& trace, const analysis::JobAnalysis& job,
                          const TextOptions& options);

// "850 ns", "12.3 us", "4.56 ms", "1.23 s"
std::string FormatDuration(model::TimeNs ns);
// "512 B", "4 KiB", "16 MiB", "1 GiB" (exact powers of two print without decimals)
std::string FormatBytes(int64_t bytes);

}  // namespace commlens::report
