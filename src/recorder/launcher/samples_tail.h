// Follows a sampler file (recorder/sampler) while the sampler appends to it, for the live
// metrics of `commlens record --prometheus`: each Poll reads the bytes added since the
// last one, decodes the whole records among them (a record cut by the end of what was
// written so far waits for the next Poll) and keeps, per series, the samples of the last
// |history| of sampled time. Rates are derived from those with model/counter_rates.h,
// the same rules as `commlens analyze` (wraps, resets, saturation, units).
//
// Reading the file rather than asking the Sampler keeps the sampler's hot path free of
// any reader: the file is the interface, and it is on disk within one flush interval.
//
// Threading: one thread (the live metrics writer).
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <string>
#include <vector>

#include "common/status.h"
#include "model/trace.h"
#include "native_format/format.h"

namespace commlens::recorder::launcher {

class SamplesTail {
 public:
  struct Series {
    std::string name;    // "net.tx_bytes", "ib.port_xmit_data", "gpu.utilization"
    std::string unit;    // "bytes", "4 bytes", "percent", "KiB", "mW"
    std::string device;  // "eth0", "mlx5_0:1", GPU "0"
    std::string host;
    native_format::DeviceKind kind = native_format::DeviceKind::kOther;
    bool cumulative = false;
    bool saturates = false;
    uint8_t width_bits = 64;
    std::deque<std::pair<int64_t, double>> samples;  // (CLOCK_REALTIME ns, raw value), oldest first
  };

  SamplesTail(std::string path, int64_t history_ns);

  // Reads what was appended. An error (not a native trace, a damaged record) stops the
  // tail for good; a file that does not exist yet is not an error.
  Status Poll();

  const std::map<uint32_t, Series>& series() const { return series_; }
  int64_t last_sample_ns() const { return last_sample_ns_; }

  // The series' samples as a model series, for model::RatesOf.
  static model::CounterSeries AsCounterSeries(const Series& s);

 private:
  void Decode(const uint8_t* data, size_t size, size_t* consumed, Status* error);
  void AddSamples(int64_t time_ns, uint32_t first, const uint8_t* values, uint32_t count);
  const std::string& String(uint32_t id) const;

  std::string path_;
  int64_t history_ns_;
  int fd_ = -1;
  uint64_t file_offset_ = 0;  // bytes read so far
  bool header_read_ = false;
  std::vector<uint8_t> pending_;  // read but not yet decoded (a record cut short)
  bool failed_ = false;
  std::string failure_;
  std::map<uint32_t, std::string> strings_;
  std::map<uint32_t, Series> series_;
  int64_t last_sample_ns_ = 0;
};

}  // namespace commlens::recorder::launcher
