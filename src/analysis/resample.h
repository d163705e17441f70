// Bootstrap intervals: how far apart two runs' means can fall by their own step-to-step
// spread alone (docs/analysis.md, "Diff").
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

namespace commlens::analysis {

struct Interval {
  double lo = 0;
  double hi = 0;
  bool Holds(double x) const { return lo <= x && x <= hi; }
};

inline constexpr size_t kBootstrapResamples = 2000;
inline constexpr size_t kBootstrapMinSamples = 3;

// The |level| (0.95) bootstrap-t interval of mean(b) - mean(a): the quantiles of the
// resampled differences, each over its own standard error (a* and b* drawn from |a| and
// |b| with replacement, |resamples| times), scaled back by the samples' error. The
// generator is seeded from |seed|, so the same inputs give the same interval. nullopt when
// either side has fewer than kBootstrapMinSamples values: too few to say.
std::optional<Interval> BootstrapMeanDifference(const std::vector<double>& a, const std::vector<double>& b,
                                                double level = 0.95, size_t resamples = kBootstrapResamples,
                                                uint64_t seed = 1);

}  // namespace commlens::analysis
