// Interval arithmetic on [start, end) nanosecond ranges: the building block of every
// time breakdown. A "merged" list is sorted by start with no two intervals touching or
// overlapping; all set operations below take and return merged lists.
#pragma once

#include <cstdint>
#include <vector>

#include "model/trace.h"

namespace commlens::analysis {

using model::TimeNs;

struct Interval {
  TimeNs start = 0;
  TimeNs end = 0;
  TimeNs length() const { return end - start; }
  friend bool operator==(const Interval& a, const Interval& b) {
    return a.start == b.start && a.end == b.end;
  }
};
using IntervalList = std::vector<Interval>;

// Sorts and merges |intervals| in place (empty intervals are dropped).
void Merge(IntervalList* intervals);
IntervalList Merged(IntervalList intervals);

TimeNs TotalLength(const IntervalList& merged);
// Length of the intersection of two merged lists.
TimeNs IntersectionLength(const IntervalList& a, const IntervalList& b);
IntervalList Intersection(const IntervalList& a, const IntervalList& b);
// Parts of |a| not covered by |b|.
IntervalList Difference(const IntervalList& a, const IntervalList& b);
// Clips a merged list to [lo, hi).
IntervalList Clip(const IntervalList& merged, TimeNs lo, TimeNs hi);

}  // namespace commlens::analysis
