#include "importers/native/sampler_records.h"

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <numeric>

namespace commlens::importers::native {

namespace nf = native_format;
using model::ImportIssue;

namespace {

constexpr size_t kMaxEventNotes = 20;  // past this, events are summed up in one note

std::string EventWord(uint32_t what) {
  switch (static_cast<nf::SamplerEventKind>(what)) {
    case nf::SamplerEventKind::kDeviceGone: return "device gone";
    case nf::SamplerEventKind::kDeviceBack: return "device back";
    case nf::SamplerEventKind::kWidthRaised: return "counter width raised";
    case nf::SamplerEventKind::kSaturated: return "counter saturated";
    case nf::SamplerEventKind::kNote: return "note";
  }
  return "event " + std::to_string(what);
}

model::CounterOwner OwnerOf(uint8_t code) {
  return code <= static_cast<uint8_t>(model::CounterOwner::kNic) ? static_cast<model::CounterOwner>(code)
                                                                  : model::CounterOwner::kHost;
}

}  // namespace

bool SamplerRecords::IsSamplerRecord(uint16_t type) {
  return type >= static_cast<uint16_t>(nf::RecordType::kCounterDef) &&
         type <= static_cast<uint16_t>(nf::RecordType::kSamplerStats);
}

void SamplerRecords::Decode(const nf::RecordView& r, model::ImportStats* stats) {
  auto bad = [&](const char* what) { stats->Count(ImportIssue::kBadRecord, r.offset, what); };
  switch (static_cast<nf::RecordType>(r.type)) {
    case nf::RecordType::kCounterDef: {
      nf::CounterDefRecord d;
      if (!nf::DecodePayload(r, &d)) return bad("short counter definition");
      series_[d.series].def = d;  // a redefinition (width raised) replaces the first
      return;
    }
    case nf::RecordType::kCounterSamples: {
      nf::CounterSamplesRecord h;
      if (r.payload.size() < sizeof(h)) return bad("short counter samples record");
      std::memcpy(&h, r.payload.data(), sizeof(h));
      if (r.payload.size() != sizeof(h) + uint64_t{8} * h.count)
        return bad("counter samples record whose size does not match its count");
      // Series ids of one record are consecutive: walk the map from the first one.
      auto first = series_.find(h.first_series);
      auto it = first;
      for (uint32_t i = 0; i < h.count; ++i, ++it)
        if (it == series_.end() || it->first != uint64_t{h.first_series} + i) return bad("samples of an undefined series");
      const uint8_t* values = r.payload.data() + sizeof(h);
      it = first;
      for (uint32_t i = 0; i < h.count; ++i, ++it) {
        uint64_t v;
        std::memcpy(&v, values + 8 * i, 8);
        it->second.time.push_back(h.time_ns);
        it->second.value.push_back(static_cast<double>(v));
      }
      return;
    }
    case nf::RecordType::kSamplerEvent: {
      nf::SamplerEventRecord e;
      if (!nf::DecodePayload(r, &e)) return bad("short sampler event");
      events_.push_back(e);
      return;
    }
    case nf::RecordType::kSamplerStats:
      if (!nf::DecodePayload(r, &stats_)) return bad("short sampler stats record");
      has_stats_ = true;
      return;
    default:
      return;
  }
}

void SamplerRecords::Fill(const std::function<std::string(uint32_t)>& text, model::RankTrace* t) const {
  size_t empty = 0;
  for (const auto& entry : series_) {
    const Series& s = entry.second;  // a named reference: lambdas below capture it
    if (s.time.empty()) {
      ++empty;
      continue;
    }
    model::CounterSeries c;
    c.name = text(s.def.name);
    c.unit = text(s.def.unit);
    c.owner = OwnerOf(s.def.owner);
    c.host = text(s.def.host);
    c.device = text(s.def.device);
    c.cumulative = (s.def.flags & nf::kCounterFlagCumulative) != 0;
    c.saturates = (s.def.flags & nf::kCounterFlagSaturates) != 0;
    c.width_bits = static_cast<uint8_t>(s.def.width_bits == 0 || s.def.width_bits > 64 ? 64 : s.def.width_bits);
    c.time = s.time;
    c.value = s.value;
    if (!std::is_sorted(c.time.begin(), c.time.end())) {  // the sampler writes in order; a merged file may not
      std::vector<size_t> order(c.time.size());
      std::iota(order.begin(), order.end(), 0);
      std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return s.time[a] < s.time[b]; });
      for (size_t i = 0; i < order.size(); ++i) {
        c.time[i] = s.time[order[i]];
        c.value[i] = s.value[order[i]];
      }
    }
    t->counters.push_back(std::move(c));
  }
  if (empty > 0) t->notes.push_back(std::to_string(empty) + " sampled series have no samples (their device went away before the first reading)");

  for (size_t i = 0; i < events_.size() && i < kMaxEventNotes; ++i) {
    const nf::SamplerEventRecord& e = events_[i];
    t->notes.push_back("sampler, " + EventWord(e.what) + " at " + std::to_string(e.time_ns) + " ns: " + text(e.text));
  }
  if (events_.size() > kMaxEventNotes)
    t->notes.push_back("sampler: " + std::to_string(events_.size() - kMaxEventNotes) + " more events not listed");

  if (!has_stats_) return;
  const nf::SamplerStatsRecord& s = stats_;
  const double hz = s.period_ns > 0 ? 1e9 / static_cast<double>(s.period_ns) : 0;
  const double wall = static_cast<double>(s.time_ns - s.start_ns);
  const double cpu = static_cast<double>(s.sampler_cpu_ns + s.writer_cpu_ns);
  char buf[320];
  std::snprintf(buf, sizeof(buf),
                "sampler: %" PRIu64 " ticks at %.4g Hz, %" PRIu64 " missed, %" PRIu64 " values, %" PRIu64
                " read errors; cost %.1f us CPU per tick (%.3f%% of one core)",
                s.ticks, hz, s.missed_ticks, s.values, s.read_errors, s.ticks ? cpu / 1e3 / s.ticks : 0.0,
                wall > 0 ? 100.0 * cpu / wall : 0.0);
  t->notes.push_back(buf);
  if (s.dropped_values > 0)
    t->stats.Count(ImportIssue::kDroppedByRecorder, 0,
                   "sampled values dropped: the disk fell behind the sampler's buffer", s.dropped_values);
}

}  // namespace commlens::importers::native
