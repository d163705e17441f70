// The sampler's records of a native trace (format 1.1: CounterDef, CounterSamples,
// SamplerEvent, SamplerStats; docs/formats.md) into counter series of the trace model.
//
// Each series keeps its raw values (cumulative counters as the device counted, wraps
// and all) with its width, so rates are derived by its readers (model/counter_rates.h).
// Events (a device gone or back, a width raised, a note) and the sampler's own stats
// become notes; values the sampler dropped are counted as dropped_by_recorder.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "model/trace.h"
#include "native_format/format.h"
#include "native_format/record_reader.h"

namespace commlens::importers::native {

class SamplerRecords {
 public:
  static bool IsSamplerRecord(uint16_t type);
  // Decodes one sampler record; a bad one is counted in |stats| and skipped.
  void Decode(const native_format::RecordView& r, model::ImportStats* stats);
  // Appends the series that hold samples to |t->counters|, and the notes and stats.
  void Fill(const std::function<std::string(uint32_t)>& text, model::RankTrace* t) const;

 private:
  struct Series {
    native_format::CounterDefRecord def{};
    std::vector<model::TimeNs> time;
    std::vector<double> value;
  };
  std::map<uint32_t, Series> series_;  // by series id
  std::vector<native_format::SamplerEventRecord> events_;
  bool has_stats_ = false;
  native_format::SamplerStatsRecord stats_{};
};

}  // namespace commlens::importers::native
