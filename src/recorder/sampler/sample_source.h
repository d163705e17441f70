// One device the sampler reads at every tick: a NIC port or network interface
// (nic_source.h), a GPU (nvml_source.h). The sampler calls Define once, then Sample at
// each tick, always from one thread at a time.
#pragma once

#include <cstdint>
#include <string>

#include "recorder/sampler/sample_buffer.h"

namespace commlens::recorder::sampler {

struct Tick {
  int64_t index = 0;
  int64_t monotonic_ns = 0;  // when the tick began (CLOCK_MONOTONIC)
  // Read the slow group too: error and event counters, link rates. They change rarely and
  // some cost a firmware command per read (InfiniBand PMA counters), so they are read at
  // SamplerOptions::events_hz, and at the first and last tick.
  bool events = true;
  // Read GPU metrics: at SamplerOptions::gpu_hz (NVML calls cost tens of microseconds and
  // NVML refreshes its values at 10 Hz or slower), and at the first and last tick.
  bool gpu = true;
};

// "4.20 us", "1209 us", "12.3 ms": a reading's cost, for notes and summaries.
std::string FormatCostNs(uint64_t ns);

class SampleSource {
 public:
  virtual ~SampleSource() = default;
  // Defines the source's series in |out| (a consecutive block of ids).
  virtual void Define(SampleBuffer* out) = 0;
  // Reads what is due at |tick| into |out|. Never fails: a value that cannot be read is
  // left out (and counted), a device that went away is noted once and skipped.
  virtual void Sample(const Tick& tick, SampleBuffer* out) = 0;
  // "mlx5_0:1", "eth0", "GPU 0": for notes.
  virtual const std::string& name() const = 0;
  // Whether Sample reads anything at |tick| (GPUs: only at GPU ticks): the sampler
  // charges a source's time to the readings it made.
  virtual bool Due(const Tick& tick) const { return true; }
  // What its readings' parts cost, for the sampler's note ("utilization 2.91 ms, ..."),
  // empty when there are no parts to tell apart.
  virtual std::string CostDetail() const { return {}; }
};

}  // namespace commlens::recorder::sampler
