#include "analysis/bench_curve.h"

#include <cmath>

namespace commlens::analysis {

double BusBwAt(const BenchCurve& curve, double bytes) {
  const auto& x = curve.size_bytes;
  const auto& y = curve.busbw_gbps;
  const size_t n = std::min(x.size(), y.size());
  if (n == 0 || bytes < static_cast<double>(x[0])) return -1;
  if (bytes >= static_cast<double>(x[n - 1])) return y[n - 1];
  for (size_t i = 0; i + 1 < n; ++i) {
    const double lo = static_cast<double>(x[i]), hi = static_cast<double>(x[i + 1]);
    if (bytes > hi || lo <= 0) continue;
    const double f = hi > lo ? std::log(bytes / lo) / std::log(hi / lo) : 0.0;
    return y[i] + f * (y[i + 1] - y[i]);
  }
  return -1;
}

const BenchCurve* CurveFor(const std::vector<BenchCurve>& curves, model::CommOp op, int ranks) {
  for (const BenchCurve& c : curves)
    if (c.op == op && c.ranks == ranks) return &c;
  return nullptr;
}

}  // namespace commlens::analysis
