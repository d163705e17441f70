#include "recorder/sampler/sample_buffer.h"

#include <string>

namespace commlens::recorder::sampler {

namespace nf = native_format;

namespace {

uint64_t MaxOf(uint8_t width_bits) {
  return width_bits >= 64 || width_bits == 0 ? UINT64_MAX : (uint64_t{1} << width_bits) - 1;
}

}  // namespace

SampleBuffer::SampleBuffer(std::string host, size_t max_bytes) : host_(std::move(host)), max_bytes_(max_bytes) {}

uint32_t SampleBuffer::Intern(std::string_view text) {
  if (text.empty()) return 0;
  auto [it, added] = strings_.try_emplace(std::string(text), static_cast<uint32_t>(strings_.size() + 1));
  if (added) out_.AppendString(it->second, text);
  return it->second;
}

uint32_t SampleBuffer::Define(const SeriesDef& def) {
  const uint32_t series = static_cast<uint32_t>(defs_.size());
  defs_.push_back(def);
  saturation_reported_.push_back(0);
  AppendDef(series);
  return series;
}

void SampleBuffer::AppendDef(uint32_t series) {
  const SeriesDef& d = defs_[series];
  nf::CounterDefRecord r{};
  r.series = series;
  r.name = Intern(d.name);
  r.unit = Intern(d.unit);
  r.device = Intern(d.device);
  r.host = Intern(host_);
  r.source = Intern(d.source);
  r.owner = static_cast<uint8_t>(d.owner);
  r.device_kind = static_cast<uint8_t>(d.kind);
  r.width_bits = d.cumulative ? d.width_bits : 0;
  r.flags = (d.cumulative ? nf::kCounterFlagCumulative : 0) | (d.saturates ? nf::kCounterFlagSaturates : 0);
  out_.Append(nf::RecordType::kCounterDef, r);
}

void SampleBuffer::Check(int64_t time_ns, uint32_t series, uint64_t value) {
  SeriesDef& d = defs_[series];
  if (!d.cumulative || d.width_bits >= 64) return;
  const uint64_t max = MaxOf(d.width_bits);
  if (value > max) {
    Event(time_ns, nf::SamplerEventKind::kWidthRaised, series, 1,
          d.name + " of " + d.device + " read " + std::to_string(value) + ", more than " +
              std::to_string(d.width_bits) + " bits hold: taken as a 64-bit counter from here on");
    d.width_bits = 64;
    d.saturates = false;
    AppendDef(series);
  } else if (d.saturates && value == max && !saturation_reported_[series]) {
    saturation_reported_[series] = 1;
    Event(time_ns, nf::SamplerEventKind::kSaturated, series, 1,
          d.name + " of " + d.device + " is at its maximum (" + std::to_string(d.width_bits) +
              "-bit counter that stops there): later readings show no change; reset the port "
              "counters to measure again");
  }
}

void SampleBuffer::Samples(int64_t time_ns, uint32_t first, std::span<const uint64_t> values) {
  if (values.empty()) return;
  const size_t bytes = sizeof(nf::RecordHeader) + sizeof(nf::CounterSamplesRecord) + 8 * values.size();
  if (out_.size() + bytes > max_bytes_) {
    dropped_values_ += values.size();
    return;
  }
  for (size_t i = 0; i < values.size(); ++i) Check(time_ns, first + static_cast<uint32_t>(i), values[i]);
  nf::CounterSamplesRecord head{time_ns, first, static_cast<uint32_t>(values.size())};
  out_.Append(nf::RecordType::kCounterSamples, &head, sizeof(head), values.data(),
              static_cast<uint32_t>(8 * values.size()));
  values_ += values.size();
}

void SampleBuffer::SamplesWhereOk(int64_t time_ns, uint32_t first, std::span<const uint64_t> values,
                                  std::span<const uint8_t> ok) {
  size_t i = 0;
  while (i < values.size()) {
    if (!ok[i]) {
      ++i;
      continue;
    }
    size_t j = i;
    while (j < values.size() && ok[j]) ++j;
    Samples(time_ns, first + static_cast<uint32_t>(i), values.subspan(i, j - i));
    i = j;
  }
}

void SampleBuffer::Event(int64_t time_ns, nf::SamplerEventKind what, uint32_t first, uint32_t count,
                         std::string_view text) {
  nf::SamplerEventRecord r{};
  r.time_ns = time_ns;
  r.what = static_cast<uint32_t>(what);
  r.first_series = first;
  r.count = count;
  r.text = Intern(text);
  out_.Append(nf::RecordType::kSamplerEvent, r);
}

}  // namespace commlens::recorder::sampler
