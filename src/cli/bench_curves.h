// A benchmark run (commlens bench --json) as the analyses' yardstick: one curve of
// out-of-place busbw against size per collective (analysis/bench_curve.h).
#pragma once

#include <string>
#include <vector>

#include "analysis/bench_curve.h"
#include "common/status.h"

namespace commlens::cli {

Result<std::vector<analysis::BenchCurve>> ReadBenchCurves(const std::string& path);

}  // namespace commlens::cli
