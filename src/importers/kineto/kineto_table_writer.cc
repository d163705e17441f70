#include "importers/kineto/kineto_table_writer.h"

#include <algorithm>
#include <numeric>
#include <string>

#include "importers/kineto/kineto_keys.h"
#include "model/activity_class.h"
#include "model/collective.h"

namespace commlens::importers {

namespace keys = kineto_keys;
using model::ActivityClass;
using model::ActivityKind;
using model::HostKind;
using model::ImportIssue;

namespace {

enum class Category : uint8_t { kKernel, kMemcpy, kMemset, kSync, kHost, kSkip };

struct CategoryInfo {
  Category category;
  HostKind host_kind;
};

CategoryInfo Categorize(std::string_view cat) {
  if (cat == keys::kCatKernel || cat == keys::kCatKernelLegacy) return {Category::kKernel, {}};
  if (cat == keys::kCatMemcpy || cat == keys::kCatMemcpyLegacy) return {Category::kMemcpy, {}};
  if (cat == keys::kCatMemset || cat == keys::kCatMemsetLegacy) return {Category::kMemset, {}};
  if (cat == keys::kCatCudaSync) return {Category::kSync, {}};
  if (cat == keys::kCatCpuOp) return {Category::kHost, HostKind::kCpuOp};
  if (cat == keys::kCatUserAnnotation) return {Category::kHost, HostKind::kUserAnnotation};
  if (cat == keys::kCatCudaRuntime || cat == keys::kCatRuntimeLegacy)
    return {Category::kHost, HostKind::kRuntime};
  if (cat == keys::kCatCudaDriver) return {Category::kHost, HostKind::kDriver};
  if (cat == keys::kCatPythonFunction) return {Category::kHost, HostKind::kPython};
  if (cat == keys::kCatGpuUserAnnotation) return {Category::kHost, HostKind::kGpuAnnotation};
  if (cat == keys::kCatTrace) return {Category::kSkip, {}};
  return {Category::kHost, HostKind::kOther};
}

template <typename T>
void Permute(std::vector<T>* column, const std::vector<uint32_t>& order) {
  std::vector<T> out;
  out.reserve(order.size());
  for (uint32_t i : order) out.push_back((*column)[i]);
  column->swap(out);
}

// Adds |base| to every time; a sum beyond int64 (only in corrupt input) saturates.
void AddBase(std::vector<model::TimeNs>* column, int64_t base) {
  for (model::TimeNs& t : *column) {
    if (t == model::kNoTime) continue;
    if (__builtin_add_overflow(t, base, &t)) t = base > 0 ? INT64_MAX : INT64_MIN + 1;
  }
}

}  // namespace

std::vector<int> ParseRankList(std::string_view text) {
  std::vector<int> ranks;
  size_t i = 0;
  while (i < text.size()) {
    char c = text[i];
    if (c >= '0' && c <= '9') {
      int v = 0;
      while (i < text.size() && text[i] >= '0' && text[i] <= '9') v = v * 10 + (text[i++] - '0');
      ranks.push_back(v);
    } else if (c == '[' || c == ']' || c == ',' || c == ' ') {
      ++i;
    } else {
      break;  // "..." of a truncated list, or garbage
    }
  }
  return ranks;
}

ActivityClass KinetoTableWriter::ClassOf(model::StringId name, ActivityKind kind) {
  if (kind != ActivityKind::kKernel) return model::ClassifyActivity(rank_->strings.Get(name), kind);
  auto it = class_cache_.find(name.value);
  if (it != class_cache_.end()) return it->second;
  ActivityClass c = model::ClassifyActivity(rank_->strings.Get(name), kind);
  class_cache_.emplace(name.value, c);
  return c;
}

void KinetoTableWriter::Add(const KinetoEvent& e, uint64_t offset) {
  if (e.ph != 'X') {
    // Metadata (M), flows (s/f), instants (i), counters (C) carry nothing the analyses use.
    if (e.ph == 0) rank_->stats.Count(ImportIssue::kMalformedEvent, offset, "event without ph");
    return;
  }
  if (e.bad_field && std::string_view(e.bad_field) != "args") {
    rank_->stats.Count(ImportIssue::kMalformedEvent, offset,
                       std::string("field '") + e.bad_field + "' has the wrong type");
    return;
  }
  CategoryInfo info = Categorize(e.cat);
  if (info.category == Category::kSkip) return;
  if (!e.has_ts || !e.has_dur) {
    rank_->stats.Count(ImportIssue::kMissingTime, offset,
                       std::string(e.name.substr(0, 80)) + ": no ts or dur");
    return;
  }
  if (e.dur_ns < 0 || e.ts_ns > INT64_MAX - e.dur_ns) {
    rank_->stats.Count(ImportIssue::kNegativeDuration, offset, std::string(e.name.substr(0, 80)));
    return;
  }
  if (e.bad_field) {  // args unreadable: keep the event, note the loss
    rank_->stats.Count(ImportIssue::kMalformedEvent, offset,
                       std::string(e.name.substr(0, 80)) + ": args unreadable");
  }
  switch (info.category) {
    case Category::kKernel:
      AddGpuActivity(e, ActivityKind::kKernel, offset);
      break;
    case Category::kMemcpy:
      AddGpuActivity(e, ActivityKind::kMemcpy, offset);
      break;
    case Category::kMemset:
      AddGpuActivity(e, ActivityKind::kMemset, offset);
      break;
    case Category::kSync:
      // Only stream-bound sync markers are GPU timeline events (HTA counts the same).
      if (e.stream >= 0) AddGpuActivity(e, ActivityKind::kSync, offset);
      break;
    case Category::kHost: {
      model::StringId name = rank_->strings.Intern(e.name);
      rank_->host.Append(e.ts_ns, e.ts_ns + e.dur_ns, name, e.tid, e.correlation, info.host_kind);
      break;
    }
    case Category::kSkip:
      break;
  }
}

void KinetoTableWriter::AddGpuActivity(const KinetoEvent& e, ActivityKind kind, uint64_t offset) {
  model::StringId name = rank_->strings.Intern(e.name);
  int32_t stream = static_cast<int32_t>(e.stream >= 0 ? e.stream : e.tid);
  int32_t device = static_cast<int32_t>(e.device >= 0 ? e.device : e.pid);
  uint32_t row = rank_->gpu.Append(e.ts_ns, e.ts_ns + e.dur_ns, name, device, stream,
                                   e.correlation, kind, ClassOf(name, kind));
  if (kind == ActivityKind::kKernel &&
      (e.coll.present() || rank_->gpu.cls[row] == ActivityClass::kCommunication))
    AddCommOp(e, row, offset);
}

void KinetoTableWriter::AddCommOp(const KinetoEvent& e, uint32_t activity, uint64_t offset) {
  const KinetoCollectiveArgs& c = e.coll;
  model::CommOp op = model::CommOp::kUnknown;
  if (c.present()) {
    op = model::CommOpFromPyTorchName(c.name);
    if (op == model::CommOp::kUnknown)
      rank_->stats.Count(ImportIssue::kUnknownCollective, offset, std::string(c.name));
  }
  if (op == model::CommOp::kUnknown) op = model::CommOpFromNcclKernelName(e.name);

  uint32_t group = model::kNoIndex;
  if (!c.group_name.empty()) {
    model::ProcessGroup g;
    g.name = std::string(c.group_name);
    g.description = std::string(c.group_desc);
    g.ranks = ParseRankList(c.group_ranks);
    g.size = static_cast<int>(c.group_size > 0 ? c.group_size : g.ranks.size());
    group = rank_->FindOrAddGroup(g);
  }
  int elem = model::DataTypeSize(c.dtype);
  if (c.present() && elem == 0 && !c.dtype.empty())
    rank_->stats.Count(ImportIssue::kBadCollectiveArgs, offset,
                       "unknown dtype '" + std::string(c.dtype) + "'");
  int64_t in = c.in_elems, out = c.out_elems;
  int64_t bytes = -1;
  if (elem > 0 && __builtin_mul_overflow(std::max<int64_t>(std::max<int64_t>(in, out), 0),
                                         static_cast<int64_t>(elem), &bytes))
    bytes = -1;
  int32_t peer = static_cast<int32_t>(c.dst_rank >= 0 ? c.dst_rank : c.src_rank);
  uint32_t row = rank_->comms.Append(e.ts_ns, e.ts_ns + e.dur_ns, op,
                                     rank_->strings.Intern(c.dtype), in, out, bytes, group,
                                     c.seq, peer, activity);
  rank_->gpu.comm[activity] = row;
}

void KinetoTableWriter::SortGpuActivities() {
  model::GpuActivities& g = rank_->gpu;
  std::vector<uint32_t> order(g.size());
  std::iota(order.begin(), order.end(), 0u);
  bool sorted = std::is_sorted(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
    return g.start[a] < g.start[b];
  });
  if (sorted) return;
  std::stable_sort(order.begin(), order.end(),
                   [&](uint32_t a, uint32_t b) { return g.start[a] < g.start[b]; });
  Permute(&g.start, order);
  Permute(&g.end, order);
  Permute(&g.name, order);
  Permute(&g.device, order);
  Permute(&g.stream, order);
  Permute(&g.correlation, order);
  Permute(&g.kind, order);
  Permute(&g.cls, order);
  Permute(&g.comm, order);
  Permute(&g.launch, order);
  for (uint32_t i = 0; i < g.size(); ++i)
    if (g.comm[i] != model::kNoIndex) rank_->comms.activity[g.comm[i]] = i;
}

void KinetoTableWriter::LinkLaunches() {
  const model::HostEvents& h = rank_->host;
  std::unordered_map<int64_t, model::TimeNs> launch_of;
  launch_of.reserve(h.size() / 4);
  for (size_t i = 0; i < h.size(); ++i) {
    if (h.correlation[i] == 0) continue;
    if (h.kind[i] != HostKind::kRuntime && h.kind[i] != HostKind::kDriver) continue;
    launch_of.emplace(h.correlation[i], h.start[i]);
  }
  model::GpuActivities& g = rank_->gpu;
  uint64_t unmatched = 0;
  for (size_t i = 0; i < g.size(); ++i) {
    auto it = launch_of.find(g.correlation[i]);
    if (it != launch_of.end()) {
      g.launch[i] = it->second;
    } else {
      ++unmatched;
    }
  }
  // Activities launched before the profiler started have no launch in the trace: an
  // expected loss at the window's edge, counted so the report can say how many.
  if (unmatched)
    rank_->stats.Count(ImportIssue::kUnmatchedCorrelation, 0,
                       "GPU activities whose launching call is not in the trace", unmatched);
}

void KinetoTableWriter::NumberCollectives() {
  // The k-th collective of a group on one rank is the k-th on every other rank: number
  // them per group in launch order (GPU start order when the launch is unknown).
  model::CommOps& c = rank_->comms;
  std::vector<uint32_t> order(c.size());
  std::iota(order.begin(), order.end(), 0u);
  auto when = [&](uint32_t i) {
    uint32_t a = c.activity[i];
    model::TimeNs t = a != model::kNoIndex ? rank_->gpu.launch[a] : model::kNoTime;
    return t != model::kNoTime ? t : c.start[i];
  };
  std::stable_sort(order.begin(), order.end(),
                   [&](uint32_t a, uint32_t b) { return when(a) < when(b); });
  std::unordered_map<uint32_t, int64_t> next;
  for (uint32_t i : order) {
    if (c.seq[i] >= 0) continue;  // the trace said
    c.seq[i] = next[c.group[i]]++;
  }
}

void KinetoTableWriter::CollectSteps() {
  const model::HostEvents& h = rank_->host;
  for (size_t i = 0; i < h.size(); ++i) {
    if (h.kind[i] != HostKind::kCpuOp && h.kind[i] != HostKind::kUserAnnotation) continue;
    std::string_view n = rank_->strings.Get(h.name[i]);
    if (n.substr(0, model::kProfilerStepPrefix.size()) != model::kProfilerStepPrefix) continue;
    model::ProfilerStep s;
    s.number = std::atoll(std::string(n.substr(model::kProfilerStepPrefix.size())).c_str());
    s.start = h.start[i];
    s.end = h.end[i];
    rank_->steps.push_back(s);
  }
  std::sort(rank_->steps.begin(), rank_->steps.end(),
            [](const model::ProfilerStep& a, const model::ProfilerStep& b) {
              return a.start < b.start;
            });
}

void KinetoTableWriter::Finish(int64_t base_ns) {
  if (base_ns != 0) {
    AddBase(&rank_->gpu.start, base_ns);
    AddBase(&rank_->gpu.end, base_ns);
    AddBase(&rank_->host.start, base_ns);
    AddBase(&rank_->host.end, base_ns);
    AddBase(&rank_->comms.start, base_ns);
    AddBase(&rank_->comms.end, base_ns);
  }
  SortGpuActivities();
  LinkLaunches();
  NumberCollectives();
  CollectSteps();
}

}  // namespace commlens::importers
