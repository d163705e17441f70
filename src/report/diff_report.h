// `commlens diff` rendered: terminal text, versioned JSON (docs/json-report.md, "Diff")
// and one HTML page with the two runs side by side.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "analysis/run_diff.h"
#include "common/status.h"

namespace commlens::report {

struct DiffNames {
  std::string a, b;  // what the user gave for each run
};

nlohmann::json DiffJson(const analysis::RunDiff& diff, const DiffNames& names, const analysis::DiffOptions& options);

// |rows|: rows per section (the changes beyond noise are all listed).
std::string DiffText(const analysis::RunDiff& diff, const DiffNames& names, const analysis::DiffOptions& options,
                     size_t rows);

// The page (src/report/html/page/diff.js draws it from DiffJson), written whole or not at all.
Status WriteDiffPage(const analysis::RunDiff& diff, const DiffNames& names, const analysis::DiffOptions& options,
                     const std::string& path);

}  // namespace commlens::report
