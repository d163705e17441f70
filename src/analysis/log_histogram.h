// A mergeable summary of a distribution of non-negative integers (durations in ns):
// a fixed log-linear histogram. Values below 2^kSubBits fall in bins of width 1 (exact);
// above, each power of two is split into 2^kSubBits equal bins, so a bin is at most
// 1/128 of its values wide. Quantiles are reported as the midpoint of the bin that holds
// the nearest-rank value, clamped to the exact min and max (which the first and last
// ranks return as they are): within 0.4% of the exact nearest-rank value.
//
// Merging adds counts bin by bin, so a summary merged from per-rank (or per-process)
// summaries is identical to the summary of all values: what we report from it does not
// depend on how the values were split. Memory: one counter per bin between the smallest
// and the largest value seen (about 1 KiB per power of two spanned).
#pragma once

#include <cstdint>
#include <vector>

namespace commlens::analysis {

class LogHistogram {
 public:
  static constexpr int kSubBits = 7;

  void Add(int64_t value);  // negative values count as 0
  void Merge(const LogHistogram& other);

  uint64_t count() const { return count_; }
  int64_t min() const { return count_ ? min_ : 0; }
  int64_t max() const { return count_ ? max_ : 0; }
  // Nearest-rank quantile, p in [0, 100]; 0 when empty.
  int64_t Quantile(double p) const;

  // The bin holding |value| and the bounds of bin |bin| ([low, high], inclusive).
  static uint32_t BinOf(int64_t value);
  static int64_t BinLow(uint32_t bin);
  static int64_t BinHigh(uint32_t bin);

  bool operator==(const LogHistogram& other) const = default;

 private:
  void Grow(uint32_t bin);

  uint32_t first_bin_ = 0;         // bin of counts_[0]
  std::vector<uint64_t> counts_;   // bins first_bin_ .. first_bin_ + size - 1
  uint64_t count_ = 0;
  int64_t min_ = INT64_MAX;
  int64_t max_ = 0;
};

}  // namespace commlens::analysis
