#include "analysis/log_histogram.h"

#include <algorithm>
#include <bit>
#include <cmath>

namespace commlens::analysis {

namespace {
constexpr uint64_t kSub = uint64_t{1} << LogHistogram::kSubBits;
}

uint32_t LogHistogram::BinOf(int64_t value) {
  const uint64_t v = value > 0 ? static_cast<uint64_t>(value) : 0;
  if (v < kSub) return static_cast<uint32_t>(v);
  const int top = 63 - std::countl_zero(v);  // >= kSubBits
  const int shift = top - kSubBits;
  const uint64_t sub = (v >> shift) & (kSub - 1);
  return static_cast<uint32_t>((static_cast<uint64_t>(shift + 1) << kSubBits) + sub);
}

int64_t LogHistogram::BinLow(uint32_t bin) {
  if (bin < kSub) return bin;
  const int shift = static_cast<int>(bin >> kSubBits) - 1;
  const uint64_t sub = bin & (kSub - 1);
  return static_cast<int64_t>((kSub + sub) << shift);
}

int64_t LogHistogram::BinHigh(uint32_t bin) {
  if (bin < kSub) return bin;
  const int shift = static_cast<int>(bin >> kSubBits) - 1;
  const uint64_t high = static_cast<uint64_t>(BinLow(bin)) + ((uint64_t{1} << shift) - 1);
  return static_cast<int64_t>(std::min<uint64_t>(high, INT64_MAX));
}

void LogHistogram::Grow(uint32_t bin) {
  if (counts_.empty()) {
    first_bin_ = bin;
    counts_.assign(1, 0);
    return;
  }
  if (bin < first_bin_) {
    counts_.insert(counts_.begin(), first_bin_ - bin, 0);
    first_bin_ = bin;
  } else if (bin >= first_bin_ + counts_.size()) {
    counts_.resize(bin - first_bin_ + 1, 0);
  }
}

void LogHistogram::Add(int64_t value) {
  value = std::max<int64_t>(value, 0);
  const uint32_t bin = BinOf(value);
  Grow(bin);
  ++counts_[bin - first_bin_];
  ++count_;
  min_ = std::min(min_, value);
  max_ = std::max(max_, value);
}

void LogHistogram::Merge(const LogHistogram& other) {
  if (other.count_ == 0) return;
  Grow(other.first_bin_);
  Grow(other.first_bin_ + static_cast<uint32_t>(other.counts_.size()) - 1);
  for (size_t k = 0; k < other.counts_.size(); ++k) counts_[other.first_bin_ - first_bin_ + k] += other.counts_[k];
  count_ += other.count_;
  min_ = std::min(min_, other.min_);
  max_ = std::max(max_, other.max_);
}

int64_t LogHistogram::Quantile(double p) const {
  if (count_ == 0) return 0;
  uint64_t rank = static_cast<uint64_t>(std::ceil(p / 100.0 * static_cast<double>(count_)));
  rank = std::clamp<uint64_t>(rank, 1, count_);
  if (rank == 1) return min_;  // the extremes are known exactly
  if (rank == count_) return max_;
  uint64_t seen = 0;
  for (size_t k = 0; k < counts_.size(); ++k) {
    seen += counts_[k];
    if (seen < rank) continue;
    const uint32_t bin = first_bin_ + static_cast<uint32_t>(k);
    const int64_t mid = BinLow(bin) + (BinHigh(bin) - BinLow(bin)) / 2;
    return std::clamp(mid, min_, max_);
  }
  return max_;
}

}  // namespace commlens::analysis
