#include "analysis/rank_spread.h"

#include <algorithm>
#include <numeric>

namespace commlens::analysis {

RankSpread SpreadOverRanks(const std::vector<double>& values) {
  RankSpread s;
  const size_t n = values.size();
  if (n == 0) return s;
  s.order.resize(n);
  std::iota(s.order.begin(), s.order.end(), size_t{0});
  std::stable_sort(s.order.begin(), s.order.end(), [&](size_t a, size_t b) { return values[a] > values[b]; });
  // The share |q| of the way down the order, largest first.
  auto down = [&](double q) { return values[s.order[static_cast<size_t>(q * static_cast<double>(n - 1) + 0.5)]]; };
  s.max = values[s.order.front()];
  s.p75 = down(0.25);
  s.median = down(0.5);
  s.p25 = down(0.75);
  s.min = values[s.order.back()];
  return s;
}

}  // namespace commlens::analysis
