#include "importers/native/gpu_clock.h"

#include <algorithm>
#include <iterator>

namespace commlens::importers::native {

void GpuClock::AddSample(uint64_t gpu_ns, int64_t offset_upper_bound) {
  const int64_t bucket = static_cast<int64_t>(gpu_ns / kBucketNs);
  auto [it, inserted] = buckets_.try_emplace(bucket, offset_upper_bound);
  if (!inserted) it->second = std::min(it->second, offset_upper_bound);
  ++samples_;
}

int64_t GpuClock::OffsetAt(uint64_t gpu_ns) const {
  if (buckets_.empty()) return 0;
  const int64_t bucket = static_cast<int64_t>(gpu_ns / kBucketNs);
  auto lo = buckets_.lower_bound(bucket - 1);
  auto hi = buckets_.upper_bound(bucket + 1);
  if (lo != hi) {
    int64_t best = lo->second;
    for (auto it = std::next(lo); it != hi; ++it) best = std::min(best, it->second);
    return best;
  }
  // No bucket within one of |bucket|: the nearest one.
  auto after = buckets_.lower_bound(bucket);
  if (after == buckets_.end()) return std::prev(after)->second;
  if (after == buckets_.begin()) return after->second;
  auto before = std::prev(after);
  return bucket - before->first <= after->first - bucket ? before->second : after->second;
}

int64_t GpuClock::min_offset() const {
  int64_t v = buckets_.empty() ? 0 : buckets_.begin()->second;
  for (const auto& [bucket, offset] : buckets_) v = std::min(v, offset);
  return v;
}

int64_t GpuClock::max_offset() const {
  int64_t v = buckets_.empty() ? 0 : buckets_.begin()->second;
  for (const auto& [bucket, offset] : buckets_) v = std::max(v, offset);
  return v;
}

}  // namespace commlens::importers::native
