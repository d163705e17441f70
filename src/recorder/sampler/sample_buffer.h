// What the sources read, encoded as native-format records (format.h, "Sampler records")
// in a bounded buffer that the file writer drains.
//
// Series definitions, strings and events are always kept (they are few, and samples
// mean nothing without them); samples are dropped, and counted, once |max_bytes| are
// waiting for the disk. Every value passes two checks on its way in:
//  - a value above the width assumed for its counter means the assumption was wrong (an
//    InfiniBand port with 64-bit counters that does not say so): the series is defined
//    again with 64 bits and an event says why;
//  - a saturating counter at its maximum is stuck there: an event says so, once.
//
// Threading: used by one thread at a time (the sampling thread, or the caller of
// Sampler::TickNow / Stop, never both at once).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "native_format/format.h"
#include "native_format/record_writer.h"

namespace commlens::recorder::sampler {

struct SeriesDef {
  std::string name;    // "ib.port_xmit_data", "gpu.power"
  std::string unit;    // "bytes", "4 bytes", "packets", "mW", ...
  std::string device;  // "mlx5_0:1", "eth0", GPU "0"
  std::string source;  // where the value is read: a sysfs path, "nvml:..."
  native_format::CounterOwnerCode owner = native_format::CounterOwnerCode::kNic;
  native_format::DeviceKind kind = native_format::DeviceKind::kOther;
  uint8_t width_bits = 0;  // cumulative counters; 0 for gauges
  bool cumulative = false;
  bool saturates = false;
};

class SampleBuffer {
 public:
  SampleBuffer(std::string host, size_t max_bytes);

  uint32_t Intern(std::string_view text);  // a String record the first time
  // Defines a series; returns its id (ids are consecutive, from 0).
  uint32_t Define(const SeriesDef& def);
  // One reading of series first .. first + values.size() - 1, taken at |time_ns|.
  void Samples(int64_t time_ns, uint32_t first, std::span<const uint64_t> values);
  // The same for the entries of |values| whose |ok| is set: one record per run of them.
  void SamplesWhereOk(int64_t time_ns, uint32_t first, std::span<const uint64_t> values,
                      std::span<const uint8_t> ok);
  void Event(int64_t time_ns, native_format::SamplerEventKind what, uint32_t first, uint32_t count,
             std::string_view text);
  void CountReadError() { ++read_errors_; }
  // Any other record (file header, Process, SamplerStats, End): always kept.
  native_format::RecordWriter& records() { return out_; }

  // Moves the encoded bytes into |bytes| (swapping buffers, so both keep their capacity).
  void SwapBytes(std::vector<uint8_t>* bytes) { out_.SwapBytes(bytes); }
  size_t pending_bytes() const { return out_.size(); }

  const std::string& host() const { return host_; }
  uint32_t series_count() const { return static_cast<uint32_t>(defs_.size()); }
  const SeriesDef& def(uint32_t series) const { return defs_[series]; }
  uint64_t values() const { return values_; }
  uint64_t dropped_values() const { return dropped_values_; }
  uint64_t read_errors() const { return read_errors_; }

 private:
  void AppendDef(uint32_t series);
  void Check(int64_t time_ns, uint32_t series, uint64_t value);

  std::string host_;
  size_t max_bytes_;
  native_format::RecordWriter out_;
  std::unordered_map<std::string, uint32_t> strings_;
  std::vector<SeriesDef> defs_;
  std::vector<uint8_t> saturation_reported_;
  uint64_t values_ = 0;
  uint64_t dropped_values_ = 0;
  uint64_t read_errors_ = 0;
};

}  // namespace commlens::recorder::sampler
