// What the fabric delivers, as `commlens bench` measured it: bus bandwidth against message
// size for one collective and group size. The analyses hold each collective bucket's
// transfer bandwidth against it (collectives.h); the CLI reads the benchmark's JSON.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "model/collective.h"

namespace commlens::analysis {

struct BenchCurve {
  model::CommOp op = model::CommOp::kUnknown;
  int ranks = 0;           // the benchmark's group size
  std::string label;       // "all_reduce (benchmark, 4 ranks)"
  std::vector<int64_t> size_bytes;  // increasing
  std::vector<double> busbw_gbps;
};

// The curve's busbw at |bytes|: log-size linear between two measured sizes; above the
// largest size measured, the largest's (bandwidth grows with size, so the figure is a
// floor of what the fabric does there); below the smallest, or an empty curve, -1.
double BusBwAt(const BenchCurve& curve, double bytes);

// The curve measured for |op| on groups of |ranks|, or null: bandwidth depends on the
// group size, so a curve of another size is no yardstick.
const BenchCurve* CurveFor(const std::vector<BenchCurve>& curves, model::CommOp op, int ranks);

}  // namespace commlens::analysis
