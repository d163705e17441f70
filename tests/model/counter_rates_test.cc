// Rates from cumulative counters: growth, wrap-around at a known width, resets, stuck
// saturating counters, units of 4 bytes and KiB, gaps.
#include "model/counter_rates.h"

#include <gtest/gtest.h>

namespace commlens::model {
namespace {

constexpr model::TimeNs kMs = 1'000'000;

model::CounterSeries Series(std::vector<double> values, const std::string& unit = "bytes", uint8_t width = 64,
                            bool saturates = false, model::TimeNs step = 100 * kMs) {
  model::CounterSeries s;
  s.name = "test";
  s.unit = unit;
  s.cumulative = true;
  s.width_bits = width;
  s.saturates = saturates;
  for (size_t i = 0; i < values.size(); ++i) {
    s.time.push_back(1'700'000'000'000'000'000 + static_cast<model::TimeNs>(i) * step);
    s.value.push_back(values[i]);
  }
  return s;
}

TEST(CounterRates, GrowthGivesAmountsAndRatesPerSecond) {
  CounterRates r = RatesOf(Series({0, 1000, 3000, 3000}));
  ASSERT_EQ(r.size(), 3u);
  EXPECT_EQ(r.unit, "bytes");
  EXPECT_EQ(r.amount, (std::vector<double>{1000, 2000, 0}));
  EXPECT_DOUBLE_EQ(r.rate[0], 10'000.0);  // 1000 bytes in 100 ms
  EXPECT_EQ(r.total, 3000);
  EXPECT_EQ(r.start[1], r.end[0]);
  EXPECT_EQ(r.wraps + r.resets + r.gaps + r.stuck, 0u);
}

TEST(CounterRates, ThirtyTwoBitCounterWraps) {
  const double top = 4294967296.0;  // 2^32
  CounterRates r = RatesOf(Series({top - 100, top - 10, 50, 150}, "count", 32));
  EXPECT_EQ(r.wraps, 1u);
  EXPECT_EQ(r.resets, 0u);
  EXPECT_EQ(r.amount, (std::vector<double>{90, 60, 100}));
  EXPECT_EQ(r.unit, "count");
}

TEST(CounterRates, AWrapFasterThanTheLineRateIsAReset) {
  const double top = 4294967296.0;
  RateOptions o;
  o.max_rate = 1000;  // per second: a wrap would mean ~43 GB/s
  CounterRates r = RatesOf(Series({top / 2, 10}, "bytes", 32), o);
  EXPECT_EQ(r.wraps, 0u);
  EXPECT_EQ(r.resets, 1u);
  EXPECT_EQ(r.total, 10);
}

TEST(CounterRates, SixtyFourBitCounterThatFallsWasReset) {
  CounterRates r = RatesOf(Series({5000, 9000, 200, 700}));
  EXPECT_EQ(r.resets, 1u);
  EXPECT_EQ(r.wraps, 0u);
  EXPECT_EQ(r.amount, (std::vector<double>{4000, 200, 500}));  // counted from zero after the reset
}

TEST(CounterRates, SaturatedCounterIsStuckUntilCleared) {
  const double max = 4294967295.0;  // a 32-bit PMA counter at its maximum
  CounterRates r = RatesOf(Series({max - 40, max, max, max, 30, 70}, "4 bytes", 32, true));
  EXPECT_EQ(r.stuck, 2u);   // max -> max twice: unknown
  EXPECT_EQ(r.resets, 1u);  // cleared: counted from zero
  EXPECT_EQ(r.wraps, 0u);
  EXPECT_EQ(r.amount, (std::vector<double>{160, 120, 160}));  // 4-byte units
  EXPECT_EQ(r.unit, "bytes");
}

TEST(CounterRates, ValuesAboveTheDeclaredWidthMakeItWider) {
  // Declared 32-bit, but it reads 5e9: a 64-bit counter; a fall is then a reset, not a wrap.
  CounterRates r = RatesOf(Series({1e9, 5e9, 100}, "4 bytes", 32, true));
  EXPECT_EQ(r.wraps, 0u);
  EXPECT_EQ(r.stuck, 0u);
  EXPECT_EQ(r.resets, 1u);
  EXPECT_EQ(r.amount, (std::vector<double>{16e9, 400}));
}

TEST(CounterRates, UnitsBecomeBytesAndPackets) {
  EXPECT_EQ(RatesOf(Series({0, 10}, "KiB")).total, 10240);
  EXPECT_EQ(RatesOf(Series({0, 10}, "4 bytes")).total, 40);
  EXPECT_EQ(RatesOf(Series({0, 10}, "packets")).unit, "packets");
  EXPECT_EQ(BaseUnitOf("mJ").unit, "mJ");
  EXPECT_EQ(BaseUnitOf("B").factor, 1.0);
}

TEST(CounterRates, GapsAreLeftOut) {
  model::CounterSeries s = Series({0, 100, 200, 300, 400});
  s.time[3] += 2'000 * kMs;  // the device was away for two seconds
  s.time[4] += 2'000 * kMs;
  CounterRates r = RatesOf(s);  // default: five median intervals, at least 1 s
  EXPECT_EQ(r.gaps, 1u);
  EXPECT_EQ(r.total, 300);
  RateOptions wide;
  wide.max_gap = 10'000 * kMs;
  EXPECT_EQ(RatesOf(s, wide).total, 400);
}

TEST(CounterRates, GaugesAndShortSeriesGiveNothing) {
  model::CounterSeries gauge = Series({1, 2, 3}, "percent");
  gauge.cumulative = false;
  EXPECT_EQ(RatesOf(gauge).size(), 0u);
  EXPECT_EQ(RatesOf(Series({5})).size(), 0u);
  model::CounterSeries same_time = Series({0, 10, 20});
  same_time.time[1] = same_time.time[0];
  CounterRates r = RatesOf(same_time);  // a reading at the same time as the last one is skipped
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r.total, 20);
}

}  // namespace
}  // namespace commlens::model
