#include "recorder/launcher/samples_tail.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "native_format/record_reader.h"

namespace commlens::recorder::launcher {

namespace nf = native_format;

SamplesTail::SamplesTail(std::string path, int64_t history_ns)
    : path_(std::move(path)), history_ns_(history_ns) {}

const std::string& SamplesTail::String(uint32_t id) const {
  static const std::string kNone;
  auto it = strings_.find(id);
  return it == strings_.end() ? kNone : it->second;
}

Status SamplesTail::Poll() {
  if (failed_) return Error(failure_);
  if (fd_ < 0) {
    fd_ = open(path_.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd_ < 0) return errno == ENOENT ? OkStatus() : Error(path_ + ": " + std::strerror(errno));
  }
  uint8_t buf[1 << 16];
  for (;;) {
    ssize_t n = pread(fd_, buf, sizeof buf, static_cast<off_t>(file_offset_));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return Error(path_ + ": " + std::strerror(errno));
    if (n == 0) break;
    pending_.insert(pending_.end(), buf, buf + n);
    file_offset_ += static_cast<uint64_t>(n);
  }
  size_t consumed = 0;
  Status error;
  Decode(pending_.data(), pending_.size(), &consumed, &error);
  pending_.erase(pending_.begin(), pending_.begin() + static_cast<std::ptrdiff_t>(consumed));
  if (!error.ok()) {
    failed_ = true;
    failure_ = error.message();
  }
  return error;
}

void SamplesTail::Decode(const uint8_t* data, size_t size, size_t* consumed, Status* error) {
  std::span<const uint8_t> bytes(data, size);
  uint64_t start = 0;
  if (!header_read_) {
    if (size < sizeof(nf::FileHeader)) return;  // the header is not all there yet
    nf::FileHeader header;
    std::string why;
    if (!nf::ParseFileHeader(bytes, &header, &why)) {
      *error = Error(path_ + ": " + why);
      return;
    }
    if (size < header.header_size) return;
    header_read_ = true;
    start = header.header_size;
  }
  nf::RecordReader reader(bytes, start);
  nf::RecordView r;
  for (;;) {
    nf::ReadStatus st = reader.Next(&r);
    if (st == nf::ReadStatus::kCorrupt) {
      *error = Error(path_ + ": damaged record at offset " +
                     std::to_string(file_offset_ - size + reader.offset()));
      break;
    }
    if (st != nf::ReadStatus::kRecord) break;  // the end of what is written, or a record cut short
    switch (static_cast<nf::RecordType>(r.type)) {
      case nf::RecordType::kString:
        if (r.payload.size() >= 4) {
          uint32_t id;
          std::memcpy(&id, r.payload.data(), 4);
          strings_[id].assign(reinterpret_cast<const char*>(r.payload.data()) + 4,
                              r.payload.size() - 4);
        }
        break;
      case nf::RecordType::kCounterDef: {
        nf::CounterDefRecord d;
        if (!nf::DecodePayload(r, &d)) break;
        Series& s = series_[d.series];  // a redefinition keeps the samples
        s.name = String(d.name);
        s.unit = String(d.unit);
        s.device = String(d.device);
        s.host = String(d.host);
        s.kind = static_cast<nf::DeviceKind>(d.device_kind);
        s.cumulative = (d.flags & nf::kCounterFlagCumulative) != 0;
        s.saturates = (d.flags & nf::kCounterFlagSaturates) != 0;
        s.width_bits = d.width_bits == 0 ? 64 : d.width_bits;
        break;
      }
      case nf::RecordType::kCounterSamples: {
        nf::CounterSamplesRecord h;
        if (!nf::DecodePayload(r, &h)) break;
        if (r.payload.size() < sizeof h + uint64_t{8} * h.count) break;
        AddSamples(h.time_ns, h.first_series, r.payload.data() + sizeof h, h.count);
        break;
      }
      default:
        break;
    }
  }
  *consumed = reader.offset();
}

void SamplesTail::AddSamples(int64_t time_ns, uint32_t first, const uint8_t* values,
                             uint32_t count) {
  for (uint32_t i = 0; i < count; ++i) {
    auto it = series_.find(first + i);
    if (it == series_.end()) continue;
    uint64_t raw;
    std::memcpy(&raw, values + uint64_t{8} * i, 8);
    auto& samples = it->second.samples;
    samples.emplace_back(time_ns, static_cast<double>(raw));
    // Keep |history| of sampled time, and the sample just before it (the base of the first
    // interval).
    while (samples.size() > 2 && samples[1].first <= time_ns - history_ns_) samples.pop_front();
  }
  if (time_ns > last_sample_ns_) last_sample_ns_ = time_ns;
}

model::CounterSeries SamplesTail::AsCounterSeries(const Series& s) {
  model::CounterSeries c;
  c.name = s.name;
  c.unit = s.unit;
  c.device = s.device;
  c.host = s.host;
  c.cumulative = s.cumulative;
  c.saturates = s.saturates;
  c.width_bits = s.width_bits;
  for (const auto& [t, v] : s.samples) {
    c.time.push_back(t);
    c.value.push_back(v);
  }
  return c;
}

}  // namespace commlens::recorder::launcher
