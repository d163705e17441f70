// A shipped sample job loaded and analyzed with the defaults, as `commlens analyze` does
// from the source tree (so paths in the output are the ones the CLI prints there).
#pragma once

#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "analysis/analyze.h"
#include "importers/trace_loader.h"

namespace commlens::testing {

struct Analyzed {
  model::Trace trace;
  analysis::JobAnalysis job;
};

inline Analyzed AnalyzeSample(const std::string& workload) {
  std::filesystem::current_path(COMMLENS_SOURCE_DIR);
  auto t = importers::LoadTrace({"examples/traces/" + workload}, {});
  EXPECT_TRUE(t.ok()) << t.status().message();
  Analyzed a{std::move(t).value(), {}};
  a.job = analysis::Analyze(a.trace, {});
  return a;
}

}  // namespace commlens::testing
