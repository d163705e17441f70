#include "importers/native/cupti_records.h"

#include <algorithm>
#include <numeric>
#include <unordered_map>

namespace commlens::importers::native {

namespace {

namespace nf = native_format;
using model::ImportIssue;

// Times a record may hold: within the model's range and not reversed. Else counted.
bool Checked(int64_t start, int64_t end, uint64_t offset, const char* what, model::ImportStats* stats) {
  if (!model::TimeInRange(start) || !model::TimeInRange(end)) {
    stats->Count(ImportIssue::kBadRecord, offset, std::string(what) + " time beyond +-2^62 ns");
    return false;
  }
  if (end < start) {
    stats->Count(ImportIssue::kNegativeDuration, offset, std::string(what) + " ends before it starts");
    return false;
  }
  return true;
}

// The rows of |v| in start order (CUPTI hands buffers over in completion order).
template <typename Record>
std::vector<size_t> ByStart(const std::vector<Record>& v) {
  std::vector<size_t> order(v.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return v[a].start_ns < v[b].start_ns; });
  return order;
}

model::ActivityKind KindOf(uint8_t k) {
  switch (static_cast<nf::GpuActivityKind>(k)) {
    case nf::GpuActivityKind::kMemcpy: return model::ActivityKind::kMemcpy;
    case nf::GpuActivityKind::kMemset: return model::ActivityKind::kMemset;
    case nf::GpuActivityKind::kSync: return model::ActivityKind::kSync;
    default: return model::ActivityKind::kKernel;
  }
}

}  // namespace

void CuptiRecords::Decode(const nf::RecordView& r, model::ImportStats* stats) {
  auto bad = [&](const char* what) { stats->Count(ImportIssue::kBadRecord, r.offset, what); };
  switch (static_cast<nf::RecordType>(r.type)) {
    case nf::RecordType::kGpuActivity: {
      nf::GpuActivityRecord g;
      if (!nf::DecodePayload(r, &g)) return bad("short GPU activity record");
      if (g.kind > static_cast<uint8_t>(nf::GpuActivityKind::kSync)) return bad("GPU activity of an unknown kind");
      if (Checked(g.start_ns, g.end_ns, r.offset, "GPU activity", stats)) gpu_.push_back(g);
      return;
    }
    case nf::RecordType::kCudaApi: {
      nf::CudaApiRecord a;
      if (!nf::DecodePayload(r, &a)) return bad("short CUDA API record");
      if (Checked(a.start_ns, a.end_ns, r.offset, "CUDA API call", stats)) api_.push_back(a);
      return;
    }
    case nf::RecordType::kRange: {
      nf::RangeRecord x;
      if (!nf::DecodePayload(r, &x)) return bad("short range record");
      if (Checked(x.start_ns, x.end_ns, r.offset, "NVTX range", stats)) ranges_.push_back(x);
      return;
    }
    case nf::RecordType::kStreamId: {
      nf::StreamIdRecord s;
      if (!nf::DecodePayload(r, &s)) return bad("short stream id record");
      streams_.push_back(s);
      return;
    }
    case nf::RecordType::kTracer: {
      nf::TracerRecord t;
      if (!nf::DecodePayload(r, &t)) return bad("short tracer record");
      tracer_ = t;
      return;
    }
    default: return;
  }
}

void CuptiRecords::Fill(const std::function<std::string(uint32_t)>& text_of, int32_t pid, model::RankTrace* t) const {
  // Each string id interned once, however many rows name it.
  std::unordered_map<uint32_t, model::StringId> interned;
  auto intern = [&](uint32_t id) {
    auto [it, added] = interned.try_emplace(id);
    if (added) it->second = t->strings.Intern(text_of(id));
    return it->second;
  };
  model::GpuActivities& g = t->gpu;
  g.Reserve(g.size() + gpu_.size());
  for (size_t i : ByStart(gpu_)) {
    const nf::GpuActivityRecord& a = gpu_[i];
    model::StringId name = intern(a.name);
    if (t->strings.Get(name).empty())
      name = t->strings.Intern(a.kind == static_cast<uint8_t>(nf::GpuActivityKind::kKernel) ? "(unnamed kernel)" : "(unnamed)");
    const uint32_t row = g.Append(a.start_ns, a.end_ns, name, a.device, static_cast<int32_t>(a.stream),
                                  static_cast<int64_t>(a.correlation & INT64_MAX), KindOf(a.kind));
    if (a.kind == static_cast<uint8_t>(nf::GpuActivityKind::kMemcpy))
      g.copy[row] = a.copy_kind <= static_cast<uint8_t>(nf::CopyKindCode::kUnknown) ? static_cast<model::CopyKind>(a.copy_kind)
                                                                                   : model::CopyKind::kUnknown;
    if (a.kind == static_cast<uint8_t>(nf::GpuActivityKind::kMemcpy) || a.kind == static_cast<uint8_t>(nf::GpuActivityKind::kMemset))
      g.bytes[row] = a.bytes >= 0 ? a.bytes : -1;
  }
  for (size_t i : ByStart(api_)) {
    const nf::CudaApiRecord& a = api_[i];
    t->host.Append(a.start_ns, a.end_ns, intern(a.name), pid, a.tid,
                   static_cast<int64_t>(a.correlation & INT64_MAX),
                   a.kind == static_cast<uint8_t>(nf::CudaApiKind::kDriver) ? model::HostKind::kDriver
                                                                            : model::HostKind::kRuntime);
  }
  for (size_t i : ByStart(ranges_)) {
    const nf::RangeRecord& x = ranges_[i];
    t->annotations.Append(x.start_ns, x.end_ns, intern(x.name), intern(x.domain), pid, x.tid, -1);
  }
  if (tracer_) {
    const nf::TracerRecord& s = *tracer_;
    if (s.state == static_cast<uint32_t>(nf::TracerState::kSteppedAside) && s.records > 0)
      t->notes.push_back("the CUPTI tracer stepped aside during the run (" + text_of(s.reason) +
                         "): kernels, copies and NVTX ranges after that are missing (" + std::to_string(s.records) +
                         " recorded before); NCCL's operations were recorded throughout");
    else if (s.state == static_cast<uint32_t>(nf::TracerState::kSteppedAside))
      t->notes.push_back("the CUPTI tracer stepped aside (" + text_of(s.reason) +
                         "): no kernels, copies or NVTX ranges were recorded, NCCL's operations were");
    else if (s.state == static_cast<uint32_t>(nf::TracerState::kFailed))
      t->notes.push_back("the CUPTI tracer could not start (" + text_of(s.reason) + "): NCCL's operations were recorded alone");
    if (s.dropped > 0)
      t->stats.Count(ImportIssue::kDroppedByRecorder, 0, "CUPTI's activity buffers were full: GPU activities lost",
                     s.dropped);
  }
}

}  // namespace commlens::importers::native
