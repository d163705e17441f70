// The mergeable duration summary: bins, quantile accuracy, and exact merges.
#include "analysis/log_histogram.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "analysis/collectives.h"

namespace commlens::analysis {
namespace {

TEST(LogHistogram, SmallValuesAreExact) {
  for (int64_t v = 0; v < 128; ++v) {
    EXPECT_EQ(LogHistogram::BinLow(LogHistogram::BinOf(v)), v);
    EXPECT_EQ(LogHistogram::BinHigh(LogHistogram::BinOf(v)), v);
  }
}

TEST(LogHistogram, BinsTileTheLineWithBoundedWidth) {
  // Consecutive bins meet, and each holds exactly the values between its bounds.
  for (uint32_t bin = 0; bin < 128 * 40; ++bin) {
    const int64_t low = LogHistogram::BinLow(bin), high = LogHistogram::BinHigh(bin);
    ASSERT_EQ(LogHistogram::BinOf(low), bin);
    ASSERT_EQ(LogHistogram::BinOf(high), bin);
    ASSERT_EQ(LogHistogram::BinLow(bin + 1), high + 1);
    ASSERT_LE(static_cast<double>(high - low), static_cast<double>(low) / 128.0 + 1e-9);
  }
  EXPECT_GT(LogHistogram::BinOf(INT64_MAX), LogHistogram::BinOf(INT64_MAX / 2));
  EXPECT_EQ(LogHistogram::BinOf(-5), 0u);
}

TEST(LogHistogram, QuantilesAreWithinHalfABinOfTheExactValue) {
  std::mt19937_64 rng(7);
  std::lognormal_distribution<double> dist(12.0, 1.5);  // ~160 us median, wide tail
  std::vector<int64_t> values;
  LogHistogram h;
  for (int i = 0; i < 20000; ++i) {
    values.push_back(static_cast<int64_t>(dist(rng)));
    h.Add(values.back());
  }
  std::sort(values.begin(), values.end());
  for (double p : {0.0, 1.0, 50.0, 90.0, 99.0, 100.0}) {
    const int64_t exact = Percentile(values, p);
    const int64_t got = h.Quantile(p);
    EXPECT_LE(std::abs(got - exact), exact / 256 + 1) << "p" << p;
  }
  EXPECT_EQ(h.min(), values.front());
  EXPECT_EQ(h.max(), values.back());
  EXPECT_EQ(h.Quantile(100), values.back());
}

TEST(LogHistogram, MergeOfPartsEqualsTheWhole) {
  std::mt19937_64 rng(11);
  std::uniform_int_distribution<int64_t> dist(0, 50'000'000);
  LogHistogram whole, parts[4];
  for (int i = 0; i < 10000; ++i) {
    int64_t v = dist(rng) >> (i % 17);  // many magnitudes
    whole.Add(v);
    parts[i % 4].Add(v);
  }
  LogHistogram merged;
  for (const LogHistogram& p : parts) merged.Merge(p);
  EXPECT_EQ(merged, whole);
  LogHistogram other_order;
  for (int k = 3; k >= 0; --k) other_order.Merge(parts[k]);
  EXPECT_EQ(other_order, whole);
  for (double p : {50.0, 99.0}) EXPECT_EQ(merged.Quantile(p), whole.Quantile(p));
}

TEST(LogHistogram, EmptyAndSingle) {
  LogHistogram h;
  EXPECT_EQ(h.count(), 0u);
  EXPECT_EQ(h.Quantile(50), 0);
  h.Add(123456);
  EXPECT_EQ(h.Quantile(50), 123456);  // clamped to the exact min and max
  EXPECT_EQ(h.Quantile(99), 123456);
}

}  // namespace
}  // namespace commlens::analysis
