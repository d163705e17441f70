// Rates from a cumulative counter series (NIC bytes and packets, NVLink KiB, GPU energy):
// the amount moved between consecutive samples, in base units, and that amount per second.
// What a counter's raw values mean, so it lives with the series: the analyses, the
// exporters, the HTML report's charts and the recorder's live metrics all read rates here.
//
// Between two samples a counter of width w (CounterSeries::width_bits) may have:
//  - grown: amount = new - old;
//  - wrapped (a wrapping counter narrower than 64 bits whose value fell):
//    amount = 2^w - old + new, one wrap assumed. When |max_rate| is given and that amount
//    is faster than it, the drop is taken as a reset instead;
//  - been reset (a 64-bit counter, or a saturating one, whose value fell; the driver was
//    reloaded, someone cleared the port counters): amount = new, counted from zero;
//  - been stuck (a saturating counter at 2^w - 1, InfiniBand PMA): the amount is a lower
//    bound, and intervals that start there have no amount at all (left out, counted).
// An interval longer than |max_gap| (the device went away, the sampler was stopped) is a
// gap: left out, counted, because what happened inside it is not known.
//
// Units: "bytes" and "B" are bytes, "4 bytes" (InfiniBand port_xmit_data) is 4 bytes,
// "KiB" (NVML NVLink counters) is 1024 bytes, so every byte counter gives bytes and
// bytes/s; "packets" gives packets/s; any other unit U gives U/s.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "model/trace.h"

namespace commlens::model {

// How a counter unit becomes a base unit: the base unit's name and the factor.
struct BaseUnit {
  std::string unit;     // "bytes", "packets", or the unit itself
  double factor = 1.0;  // base units per counter unit
};
BaseUnit BaseUnitOf(const std::string& counter_unit);

struct RateOptions {
  // Intervals longer than this are gaps; 0: five times the series' median interval, and at
  // least one second.
  model::TimeNs max_gap = 0;
  // Base units per second no interval can reach (a link's line rate, in bytes/s): a drop
  // whose wrap would be faster is a reset. 0: no limit.
  double max_rate = 0;
};

struct CounterRates {
  std::string unit;  // of |amount|: "bytes", "packets", ...; |rate| is per second of it
  // One entry per interval between consecutive samples that has an amount.
  std::vector<model::TimeNs> start;
  std::vector<model::TimeNs> end;
  std::vector<double> amount;  // base units moved in [start, end)
  std::vector<double> rate;    // amount / (end - start), per second
  double total = 0;            // sum of |amount|
  uint32_t wraps = 0;
  uint32_t resets = 0;
  uint32_t gaps = 0;
  uint32_t stuck = 0;  // intervals of a saturated counter, left out

  size_t size() const { return start.size(); }
};

// Rates of a cumulative series; a gauge (cumulative false) gives an empty result.
CounterRates RatesOf(const model::CounterSeries& series, const RateOptions& options = {});

}  // namespace commlens::model
