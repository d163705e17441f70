// Reads one NIC port or network interface (a NicSpec) at every tick.
//
// Each counter file stays open (CounterFile). The traffic group is read at every tick,
// the events group when the tick says so; each group is one CounterSamples record per
// run of values that could be read, stamped with the middle of its reads.
//
// A device that goes away (its attribute files fail with ENODEV/ENOENT, or, checked at
// the slow group's ticks, lose their last link, and its folder is gone) is noted once
// with a DeviceGone event; its series
// then stop, every file is closed, and the folder is looked for again every 100 ms.
// When it is back the files are opened again, a DeviceBack event is written and the
// series go on (the counters have usually restarted from zero: the rates see a reset).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "recorder/sampler/counter_file_reader.h"
#include "recorder/sampler/nic_counter_files.h"
#include "recorder/sampler/sample_source.h"

namespace commlens::recorder::sampler {

class NicSource : public SampleSource {
 public:
  explicit NicSource(NicSpec spec);

  void Define(SampleBuffer* out) override;
  void Sample(const Tick& tick, SampleBuffer* out) override;
  const std::string& name() const override { return spec_.name; }
  bool gone() const { return gone_; }

 private:
  bool Present() const;
  // Reads files_[begin, end); false when the device turned out to be gone.
  bool ReadGroup(size_t begin, size_t end, SampleBuffer* out);
  void MarkGone(SampleBuffer* out, const std::string& why);

  NicSpec spec_;
  std::vector<CounterFile> files_;
  size_t traffic_ = 0;  // files_[0, traffic_) are the traffic group
  uint32_t first_series_ = 0;
  bool gone_ = false;
  int64_t next_look_ns_ = 0;  // monotonic: when to look for a gone device again
  std::vector<uint64_t> values_;
  std::vector<uint8_t> ok_;
};

}  // namespace commlens::recorder::sampler
