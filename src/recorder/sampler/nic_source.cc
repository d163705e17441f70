#include "recorder/sampler/nic_source.h"

#include <sys/stat.h>

#include <cerrno>
#include <cstring>

#include "recorder/nccl_profiler/clock.h"

namespace commlens::recorder::sampler {

namespace nf = native_format;

namespace {

constexpr int64_t kLookAgainNs = 100'000'000;  // how often a gone device is looked for

}  // namespace

NicSource::NicSource(NicSpec spec) : spec_(std::move(spec)) {
  files_.reserve(spec_.counters.size());
  for (const CounterSpec& c : spec_.counters) {
    files_.emplace_back(c.path, c.text);
    if (c.group == CounterGroup::kTraffic) ++traffic_;
  }
  values_.resize(files_.size());
  ok_.resize(files_.size());
}

void NicSource::Define(SampleBuffer* out) {
  for (size_t i = 0; i < spec_.counters.size(); ++i) {
    const uint32_t id = out->Define(spec_.counters[i].def);
    if (i == 0) first_series_ = id;
  }
  for (CounterFile& f : files_) f.Open();
}

bool NicSource::Present() const {
  struct stat st;
  return ::stat(spec_.presence_path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

void NicSource::MarkGone(SampleBuffer* out, const std::string& why) {
  gone_ = true;
  for (CounterFile& f : files_) f.Close();
  out->Event(RealtimeNs(), nf::SamplerEventKind::kDeviceGone, first_series_, static_cast<uint32_t>(files_.size()),
             spec_.name + " went away (" + why + "): its series stop until it comes back");
}

bool NicSource::ReadGroup(size_t begin, size_t end, SampleBuffer* out) {
  if (begin == end) return true;
  const int64_t t0 = RealtimeNs();
  for (size_t i = begin; i < end; ++i) {
    int error = 0;
    ok_[i] = files_[i].Read(&values_[i], &error) ? 1 : 0;
    if (ok_[i]) continue;
    // A device being removed fails its reads; a counter can also fail on its own (EINVAL,
    // EIO from the firmware), which is counted and left out.
    if ((error == ENODEV || error == ENOENT || error == ENXIO) && !Present()) {
      MarkGone(out, std::strerror(error));
      return false;
    }
    out->CountReadError();
  }
  const int64_t t1 = RealtimeNs();
  out->SamplesWhereOk(t0 + (t1 - t0) / 2, first_series_ + static_cast<uint32_t>(begin),
                      std::span<const uint64_t>(values_).subspan(begin, end - begin),
                      std::span<const uint8_t>(ok_).subspan(begin, end - begin));
  return true;
}

void NicSource::Sample(const Tick& tick, SampleBuffer* out) {
  if (files_.empty()) return;
  if (gone_) {
    if (tick.monotonic_ns < next_look_ns_) return;
    next_look_ns_ = tick.monotonic_ns + kLookAgainNs;
    if (!Present()) return;
    gone_ = false;
    for (CounterFile& f : files_) f.Open();
    out->Event(RealtimeNs(), nf::SamplerEventKind::kDeviceBack, first_series_, static_cast<uint32_t>(files_.size()),
               spec_.name + " is back: its series go on (its counters may have restarted)");
  } else if (tick.events && files_.front().Unlinked() && !Present()) {
    // On an ordinary file system a deleted file stays readable through its descriptor;
    // looked at on slow-group ticks only, as the live sysfs fails the reads at once.
    MarkGone(out, "its files were removed");
    next_look_ns_ = tick.monotonic_ns + kLookAgainNs;
    return;
  }
  const bool read = ReadGroup(0, traffic_, out) && (!tick.events || ReadGroup(traffic_, files_.size(), out));
  if (!read) next_look_ns_ = tick.monotonic_ns + kLookAgainNs;
}

}  // namespace commlens::recorder::sampler
