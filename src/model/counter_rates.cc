#include "model/counter_rates.h"

#include <algorithm>
#include <cmath>

namespace commlens::model {

namespace {

model::TimeNs MedianInterval(const std::vector<model::TimeNs>& time) {
  std::vector<model::TimeNs> d;
  d.reserve(time.size());
  for (size_t i = 1; i < time.size(); ++i)
    if (time[i] > time[i - 1]) d.push_back(time[i] - time[i - 1]);
  if (d.empty()) return 0;
  std::nth_element(d.begin(), d.begin() + static_cast<ptrdiff_t>(d.size() / 2), d.end());
  return d[d.size() / 2];
}

}  // namespace

BaseUnit BaseUnitOf(const std::string& unit) {
  if (unit == "bytes" || unit == "B") return {"bytes", 1.0};
  if (unit == "4 bytes") return {"bytes", 4.0};
  if (unit == "KiB") return {"bytes", 1024.0};
  return {unit, 1.0};
}

CounterRates RatesOf(const model::CounterSeries& s, const RateOptions& options) {
  CounterRates r;
  const BaseUnit base = BaseUnitOf(s.unit);
  r.unit = base.unit;
  const size_t n = std::min(s.time.size(), s.value.size());
  if (!s.cumulative || n < 2) return r;

  // A value above the declared width means the width was wrong: the counter is wider.
  const double observed = *std::max_element(s.value.begin(), s.value.begin() + static_cast<ptrdiff_t>(n));
  const int width = s.width_bits == 0 || s.width_bits >= 64 ? 64 : s.width_bits;
  const double span = std::ldexp(1.0, width);  // 2^width
  const bool narrow = width < 64 && observed < span;
  const double max = span - 1;
  // Default: five median intervals, and at least a second, so that a sampler thread the
  // machine stalled for a moment is not a gap.
  constexpr model::TimeNs kMinGap = 1'000'000'000;
  const model::TimeNs max_gap =
      options.max_gap > 0 ? options.max_gap : std::max<model::TimeNs>(kMinGap, 5 * MedianInterval(s.time));

  size_t prev = 0;
  for (size_t i = 1; i < n; ++i) {
    const model::TimeNs t0 = s.time[prev], t1 = s.time[i];
    if (t1 <= t0) continue;  // a reading no later than the last: measure from the last one
    const double v0 = s.value[prev], v1 = s.value[i];
    prev = i;
    if (max_gap > 0 && t1 - t0 > max_gap) {
      ++r.gaps;
      continue;
    }
    const double seconds = static_cast<double>(t1 - t0) * 1e-9;
    double amount;
    if (s.saturates && narrow && v0 >= max && v1 >= v0) {
      ++r.stuck;  // stuck at the maximum: the interval's amount is unknown
      continue;
    }
    if (v1 >= v0) {
      amount = v1 - v0;
    } else if (narrow && !s.saturates) {
      const double wrapped = (span - v0) + v1;
      if (options.max_rate > 0 && wrapped * base.factor / seconds > options.max_rate) {
        ++r.resets;
        amount = v1;
      } else {
        ++r.wraps;
        amount = wrapped;
      }
    } else {
      ++r.resets;
      amount = v1;
    }
    amount *= base.factor;
    r.start.push_back(t0);
    r.end.push_back(t1);
    r.amount.push_back(amount);
    r.rate.push_back(amount / seconds);
    r.total += amount;
  }
  return r;
}

}  // namespace commlens::model
