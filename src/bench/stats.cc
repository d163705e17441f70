#include "bench/stats.h"

#include <algorithm>
#include <cmath>

namespace commlens::bench {

Bandwidth ComputeBandwidth(int64_t size_bytes, double time_us, double busbw_factor) {
  if (!(time_us > 0)) return {};
  // bytes / (time_us * 1e-6 s) / 1e9 = bytes / time_us / 1e3
  double algbw = static_cast<double>(size_bytes) / time_us / 1e3;
  return {algbw, algbw * busbw_factor};
}

double Percentile(std::vector<double> values, double p) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  double rank = std::ceil(p / 100.0 * static_cast<double>(values.size()));
  size_t index = rank < 1 ? 0 : static_cast<size_t>(rank) - 1;
  return values[std::min(index, values.size() - 1)];
}

IterationStats SummarizeIterations(const std::vector<double>& us) {
  if (us.empty()) return {};
  auto [lo, hi] = std::minmax_element(us.begin(), us.end());
  return {Percentile(us, 50), Percentile(us, 99), *lo, *hi};
}

CollectiveSummary Summarize(const std::vector<SizeResult>& rows, bool in_place_measured) {
  CollectiveSummary s;
  double busbw_sum = 0;
  int busbw_count = 0;
  for (const SizeResult& r : rows) {
    for (const PlacementResult* p : {&r.out_of_place, &r.in_place}) {
      if (p == &r.in_place && !in_place_measured) continue;
      busbw_sum += p->busbw_gbps;
      ++busbw_count;
      s.wrong += p->wrong.value_or(0);
    }
    if (r.out_of_place.busbw_gbps > s.peak_busbw_gbps) {
      s.peak_busbw_gbps = r.out_of_place.busbw_gbps;
      s.peak_size = r.size_bytes;
    }
  }
  s.avg_busbw_gbps = busbw_count ? busbw_sum / busbw_count : 0;
  for (const SizeResult& r : rows) {
    if (s.peak_busbw_gbps > 0 && r.out_of_place.busbw_gbps >= s.peak_busbw_gbps / 2) {
      s.half_peak_size = r.size_bytes;
      break;
    }
  }
  for (const SizeResult& r : rows) {
    if (r.count > 0) {
      s.small_size = r.size_bytes;
      s.small_latency_us = r.out_of_place.time_us;
      s.small_latency_p50_us = r.out_of_place.p50_us;
      break;
    }
  }
  return s;
}

}  // namespace commlens::bench
