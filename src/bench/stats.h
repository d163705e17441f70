// The arithmetic of the benchmark's numbers: bandwidths (nccl-tests' definitions,
// reference/nccl.md Q5), per-iteration percentiles and the per-collective summary.
#pragma once

#include <cstdint>
#include <vector>

#include "bench/result.h"

namespace commlens::bench {

struct Bandwidth {
  double algbw_gbps = 0;  // size / time, GB = 1e9 bytes
  double busbw_gbps = 0;  // algbw * busbw factor
};
// |size_bytes| is max(send, recv) of one rank; 0 GB/s when the time is not positive.
Bandwidth ComputeBandwidth(int64_t size_bytes, double time_us, double busbw_factor);

struct IterationStats {
  double p50_us = 0;
  double p99_us = 0;
  double min_us = 0;
  double max_us = 0;
};
// Nearest-rank percentile: the smallest value with at least p% of the values <= it,
// i.e. sorted[ceil(p/100 * n) - 1]. With 20 iterations p50 is the 10th smallest and p99
// the largest. 0 for an empty input.
double Percentile(std::vector<double> values, double p);
IterationStats SummarizeIterations(const std::vector<double>& per_iteration_us);

// Peak busbw, the size at half of it, the small-message latency, the average busbw and
// the wrong-element total over one collective's rows (see CollectiveSummary).
CollectiveSummary Summarize(const std::vector<SizeResult>& rows, bool in_place_measured = true);

}  // namespace commlens::bench
