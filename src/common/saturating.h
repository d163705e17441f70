// Sums that stop at the ends of int64 instead of wrapping: for totals of values that are
// valid one by one but absurd together (a collective's size may be up to 2^63 bytes).
#pragma once

#include <cstdint>

namespace commlens {

inline int64_t SaturatingAdd(int64_t a, int64_t b) {
  int64_t sum = 0;
  if (__builtin_add_overflow(a, b, &sum)) return b > 0 ? INT64_MAX : INT64_MIN;
  return sum;
}

inline int64_t SaturatingSub(int64_t a, int64_t b) {
  int64_t diff = 0;
  if (__builtin_sub_overflow(a, b, &diff)) return b < 0 ? INT64_MAX : INT64_MIN;
  return diff;
}

}  // namespace commlens
