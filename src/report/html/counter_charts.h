// Counter series (NIC bytes and packets, GPU metrics) resampled into a fixed number of
// time bins for the report's charts, so a chart costs the same however long the trace.
// Drawing, not analysis: the bins are the page's resolution (HtmlReportOptions), and what
// a raw counter amounts to between two readings (wraps, resets, gaps) is
// model/counter_rates.h's; the analysis' own NIC and GPU numbers are in
// analysis/nic_analysis.h.
//
// Amounts become rates: a cumulative series (raw counter values) contributes the
// difference between consecutive samples (negative differences, counter resets, are
// dropped); a non-cumulative series in bytes or packets holds an amount per sample (what
// a recording's proxy ops moved). Each bin's rate is its amount over its width, in GB/s
// for bytes ("4 bytes" units are multiplied out) and packets/s for packets. Any other
// unit is a gauge: the mean of the samples in the bin, or none.
//
// Series are grouped by (name, unit, owner kind); a group of more than |max_series|
// series is drawn as one aggregate (the sum of rates, the mean of gauges).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "model/trace.h"

namespace commlens::report::html {

struct CounterChart {
  std::string name;
  std::string unit;     // of the values below: "GB/s", "packets/s", or the series' unit
  bool rate = false;
  model::TimeNs start = 0;  // first bin's start (trace clock)
  model::TimeNs bin = 0;    // bin width
  std::vector<std::string> labels;                       // one per drawn series
  std::vector<std::vector<std::optional<double>>> values;  // [series][bin]
};

std::vector<CounterChart> ResampleCounters(const model::Trace& trace, size_t bins,
                                           size_t max_series);

}  // namespace commlens::report::html
