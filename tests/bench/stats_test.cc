#include "bench/stats.h"

#include <gtest/gtest.h>

namespace commlens::bench {
namespace {

TEST(Bandwidth, NcclTestsDefinition) {
  // 1 GiB all-reduce on 4 ranks in 5 ms: algbw = 2^30 / 5e-3 / 1e9.
  Bandwidth b = ComputeBandwidth(1ll << 30, 5000.0, 1.5);
  EXPECT_NEAR(b.algbw_gbps, 214.748, 1e-3);
  EXPECT_NEAR(b.busbw_gbps, 322.123, 1e-3);
  EXPECT_EQ(ComputeBandwidth(1024, 0.0, 1.5).algbw_gbps, 0.0);
}

TEST(Percentile, NearestRank) {
  std::vector<double> v;
  for (int i = 20; i >= 1; --i) v.push_back(i);  // unsorted on purpose
  EXPECT_EQ(Percentile(v, 50), 10);
  EXPECT_EQ(Percentile(v, 99), 20);
  EXPECT_EQ(Percentile(v, 100), 20);
  EXPECT_EQ(Percentile(v, 0), 1);
  EXPECT_EQ(Percentile({7}, 50), 7);
  EXPECT_EQ(Percentile({}, 50), 0);
  IterationStats s = SummarizeIterations(v);
  EXPECT_EQ(s.min_us, 1);
  EXPECT_EQ(s.max_us, 20);
  EXPECT_EQ(s.p50_us, 10);
}

SizeResult Row(int64_t size, int64_t count, double time_us, double busbw, int64_t wrong) {
  SizeResult r;
  r.size_bytes = size;
  r.count = count;
  r.out_of_place.time_us = time_us;
  r.out_of_place.p50_us = time_us - 1;
  r.out_of_place.busbw_gbps = busbw;
  r.out_of_place.wrong = wrong;
  r.in_place.busbw_gbps = busbw / 2;
  return r;
}

TEST(Summarize, PeakHalfPeakLatencyAndWrongs) {
  std::vector<SizeResult> rows = {Row(0, 0, 5, 0, 0), Row(8, 2, 20, 0.001, 0),
                                  Row(1 << 20, 262144, 40, 40, 0),
                                  Row(4 << 20, 1 << 20, 60, 120, 2),
                                  Row(16 << 20, 4 << 20, 150, 200, 0)};
  CollectiveSummary s = Summarize(rows);
  EXPECT_DOUBLE_EQ(s.peak_busbw_gbps, 200);
  EXPECT_EQ(s.peak_size, 16 << 20);
  EXPECT_EQ(s.half_peak_size, 4 << 20);  // first size with busbw >= 100
  EXPECT_EQ(s.small_size, 8);            // the empty 0-byte row is skipped
  EXPECT_DOUBLE_EQ(s.small_latency_us, 20);
  EXPECT_DOUBLE_EQ(s.small_latency_p50_us, 19);
  EXPECT_EQ(s.wrong, 2);
  EXPECT_NEAR(s.avg_busbw_gbps, (0.001 + 40 + 120 + 200) * 1.5 / 10, 1e-9);
}

}  // namespace
}  // namespace commlens::bench
