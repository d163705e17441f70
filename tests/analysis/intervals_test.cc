#include "analysis/intervals.h"

#include <gtest/gtest.h>

namespace commlens::analysis {
namespace {

TEST(Intervals, MergeSortsJoinsAndDropsEmpty) {
  IntervalList v = {{10, 20}, {0, 5}, {15, 30}, {30, 31}, {40, 40}, {50, 45}, {3, 4}};
  Merge(&v);
  EXPECT_EQ(v, (IntervalList{{0, 5}, {10, 31}}));
  EXPECT_EQ(TotalLength(v), 26);
}

TEST(Intervals, IntersectionAndDifference) {
  IntervalList a = Merged({{0, 10}, {20, 30}, {40, 50}});
  IntervalList b = Merged({{5, 25}, {28, 45}});
  EXPECT_EQ(Intersection(a, b), (IntervalList{{5, 10}, {20, 25}, {28, 30}, {40, 45}}));
  EXPECT_EQ(IntersectionLength(a, b), 5 + 5 + 2 + 5);
  EXPECT_EQ(Difference(a, b), (IntervalList{{0, 5}, {25, 28}, {45, 50}}));
  EXPECT_EQ(Difference(b, a), (IntervalList{{10, 20}, {30, 40}}));
  EXPECT_EQ(Difference(a, {}), a);
  EXPECT_TRUE(Intersection(a, {}).empty());
}

TEST(Intervals, Clip) {
  IntervalList a = Merged({{0, 10}, {20, 30}});
  EXPECT_EQ(Clip(a, 5, 25), (IntervalList{{5, 10}, {20, 25}}));
  EXPECT_TRUE(Clip(a, 10, 20).empty());
}

// Property check against a brute-force timeline for many random lists.
TEST(Intervals, AgreesWithBruteForce) {
  uint32_t seed = 12345;
  auto rnd = [&](int n) {
    seed = seed * 1103515245 + 12345;
    return static_cast<int>((seed >> 8) % n);
  };
  for (int round = 0; round < 200; ++round) {
    IntervalList a, b;
    bool ta[220] = {}, tb[220] = {};
    for (int k = rnd(8); k > 0; --k) {
      int s = rnd(190), e = s + rnd(20);
      a.push_back({s, e});
      for (int t = s; t < e; ++t) ta[t] = true;
    }
    for (int k = rnd(8); k > 0; --k) {
      int s = rnd(190), e = s + rnd(20);
      b.push_back({s, e});
      for (int t = s; t < e; ++t) tb[t] = true;
    }
    Merge(&a);
    Merge(&b);
    int both = 0, only_a = 0, any_a = 0;
    for (int t = 0; t < 220; ++t) {
      both += ta[t] && tb[t];
      only_a += ta[t] && !tb[t];
      any_a += ta[t];
    }
    EXPECT_EQ(TotalLength(a), any_a);
    EXPECT_EQ(IntersectionLength(a, b), both);
    EXPECT_EQ(TotalLength(Intersection(a, b)), both);
    EXPECT_EQ(TotalLength(Difference(a, b)), only_a);
  }
}

}  // namespace
}  // namespace commlens::analysis
