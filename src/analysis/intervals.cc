#include "analysis/intervals.h"

#include <algorithm>

namespace commlens::analysis {

void Merge(IntervalList* intervals) {
  IntervalList& v = *intervals;
  std::sort(v.begin(), v.end(), [](const Interval& a, const Interval& b) {
    return a.start < b.start || (a.start == b.start && a.end < b.end);
  });
  size_t out = 0;
  for (const Interval& iv : v) {
    if (iv.end <= iv.start) continue;
    if (out > 0 && iv.start <= v[out - 1].end) {
      v[out - 1].end = std::max(v[out - 1].end, iv.end);
    } else {
      v[out++] = iv;
    }
  }
  v.resize(out);
}

IntervalList Merged(IntervalList intervals) {
  Merge(&intervals);
  return intervals;
}

TimeNs TotalLength(const IntervalList& merged) {
  TimeNs total = 0;
  for (const Interval& iv : merged) total += iv.length();
  return total;
}

IntervalList Intersection(const IntervalList& a, const IntervalList& b) {
  IntervalList out;
  size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    TimeNs lo = std::max(a[i].start, b[j].start);
    TimeNs hi = std::min(a[i].end, b[j].end);
    if (lo < hi) out.push_back({lo, hi});
    if (a[i].end < b[j].end) ++i;
    else ++j;
  }
  return out;
}

TimeNs IntersectionLength(const IntervalList& a, const IntervalList& b) {
  TimeNs total = 0;
  size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    TimeNs lo = std::max(a[i].start, b[j].start);
    TimeNs hi = std::min(a[i].end, b[j].end);
    if (lo < hi) total += hi - lo;
    if (a[i].end < b[j].end) ++i;
    else ++j;
  }
  return total;
}

IntervalList Difference(const IntervalList& a, const IntervalList& b) {
  IntervalList out;
  size_t j = 0;
  for (const Interval& iv : a) {
    TimeNs cur = iv.start;
    while (j < b.size() && b[j].end <= cur) ++j;
    size_t k = j;
    while (k < b.size() && b[k].start < iv.end) {
      if (b[k].start > cur) out.push_back({cur, b[k].start});
      cur = std::max(cur, b[k].end);
      ++k;
    }
    if (cur < iv.end) out.push_back({cur, iv.end});
  }
  return out;
}

IntervalList Clip(const IntervalList& merged, TimeNs lo, TimeNs hi) {
  IntervalList out;
  for (const Interval& iv : merged) {
    TimeNs s = std::max(iv.start, lo), e = std::min(iv.end, hi);
    if (s < e) out.push_back({s, e});
  }
  return out;
}

}  // namespace commlens::analysis
