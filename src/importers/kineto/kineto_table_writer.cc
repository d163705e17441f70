#include "importers/kineto/kineto_table_writer.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <string>

#include "common/strings.h"
#include "importers/kineto/kineto_keys.h"
#include "model/activity_class.h"
#include "model/collective.h"

namespace commlens::importers {

namespace keys = kineto_keys;
using model::ActivityKind;
using model::HostKind;
using model::ImportIssue;

namespace {

enum class Category : uint8_t { kKernel, kMemcpy, kMemset, kSync, kHost, kAnnotation, kGpuAnnotation, kSkip };

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
  if (cat == keys::kCatUserAnnotation) return {Category::kAnnotation, {}};
  if (cat == keys::kCatCudaRuntime || cat == keys::kCatRuntimeLegacy)
    return {Category::kHost, HostKind::kRuntime};
  if (cat == keys::kCatCudaDriver) return {Category::kHost, HostKind::kDriver};
  if (cat == keys::kCatPythonFunction) return {Category::kHost, HostKind::kPython};
  if (cat == keys::kCatGpuUserAnnotation) return {Category::kGpuAnnotation, {}};
  if (cat == keys::kCatTrace) return {Category::kSkip, {}};
  return {Category::kHost, HostKind::kOther};
}

// Adds |base| to every time; a sum beyond int64 (only in corrupt input) saturates.
void AddBase(std::vector<model::TimeNs>* column, int64_t base) {
  for (model::TimeNs& t : *column) {
    if (t == model::kNoTime) continue;
    if (__builtin_add_overflow(t, base, &t)) t = base > 0 ? INT64_MAX : INT64_MIN + 1;
  }
}

// The first 80 bytes of a name for an issue's example, cut between two characters: an
// example cut inside one would not be UTF-8.
std::string Head(std::string_view name) {
  size_t n = std::min<size_t>(name.size(), 80);
  if (n < name.size())
    while (n > 0 && (static_cast<unsigned char>(name[n]) & 0xC0) == 0x80) --n;  // a continuation byte
  return std::string(name.substr(0, n));
}

// An event's phase for an issue's example: the letter, or its byte in hex when it is not
// printable ASCII (the first byte of a longer character, alone, is not UTF-8).
std::string PhaseText(char ph) {
  const auto b = static_cast<unsigned char>(ph);
  if (b >= 0x20 && b < 0x7F) return std::string("'") + ph + "'";
  char hex[8];
  std::snprintf(hex, sizeof hex, "0x%02X", b);
  return hex;
}

// Times beyond +-2^62 ns (146 years) are not from a clock: differences of such times would
// overflow in the analyses, so such an event is a bad field.
constexpr int64_t kTimeLimit = int64_t{1} << 62;
bool TimeInRange(int64_t t) { return t > -kTimeLimit && t < kTimeLimit; }

}  // namespace

std::vector<int> ParseRankList(std::string_view text, bool* out_of_range) {
  std::vector<int> ranks;
  if (out_of_range) *out_of_range = false;
  size_t i = 0;
  while (i < text.size()) {
    char c = text[i];
    if (c >= '0' && c <= '9') {
      int64_t v = 0;
      while (i < text.size() && text[i] >= '0' && text[i] <= '9') {
        v = v * 10 + (text[i++] - '0');
        if (v > INT32_MAX) {  // out of range: the list ends here
          if (out_of_range) *out_of_range = true;
          return ranks;
        }
      }
      ranks.push_back(static_cast<int>(v));
    } else if (c == '[' || c == ']' || c == ',' || c == ' ') {
      ++i;
    } else {
      break;  // "..." of a truncated list, or garbage
    }
  }
  return ranks;
}

model::StringId KinetoTableWriter::InternName(std::string_view name) {
  if (name.empty()) return {};  // id 0: the empty string
  // The slot: length, first and last bytes (names differ at one end or the other).
  uint64_t head = 0, tail = 0;
  size_t n = std::min<size_t>(name.size(), 8);
  std::memcpy(&head, name.data(), n);
  std::memcpy(&tail, name.data() + name.size() - n, n);
  uint64_t h = (head * 0x9e3779b97f4a7c15ull) ^ (tail + name.size()) * 0xc2b2ae3d27d4eb4full;
  CachedName& slot = names_[(h >> 40) % names_.size()];
  if (slot.text.size() == name.size() && std::memcmp(slot.text.data(), name.data(), name.size()) == 0)
    return slot.id;
  model::StringId id = rank_->strings.Intern(name);
  slot = {rank_->strings.Get(id), id};
  return id;
}

void KinetoTableWriter::Add(const KinetoEvent& e, uint64_t offset) {
  if ((e.has_ts && !TimeInRange(e.ts_ns)) || (e.has_dur && !TimeInRange(e.dur_ns))) {
    rank_->stats.Count(ImportIssue::kMalformedEvent, offset, Head(e.name) + ": time out of range");
    return;
  }
  if (e.bad_field && std::string_view(e.bad_field) != "args") {
    rank_->stats.Count(ImportIssue::kMalformedEvent, offset,
                       std::string("field '") + e.bad_field + "' has the wrong type");
    return;
  }
  switch (e.ph) {
    case 'X':
      return AddComplete(e, offset);
    case 'M':
      return AddMetadata(e);
    case 's':
      return AddFlow(e, model::FlowPhase::kStart, offset);
    case 't':
      return AddFlow(e, model::FlowPhase::kStep, offset);
    case 'f':
      return AddFlow(e, model::FlowPhase::kEnd, offset);
    case 'i':
    case 'I':  // instant marks ("Iteration Start", "Record Window End"): zero-length ranges
      if (!e.has_ts) {
        rank_->stats.Count(ImportIssue::kMissingTime, offset, Head(e.name) + ": no ts");
        return;
      }
      rank_->annotations.Append(e.ts_ns, e.ts_ns, InternName(e.name), {}, e.pid, e.tid, -1);
      return;
    case 0:
      rank_->stats.Count(ImportIssue::kMalformedEvent, offset, "event without ph");
      return;
    default:
      rank_->stats.Count(ImportIssue::kUnknownPhase, offset,
                         "ph " + PhaseText(e.ph) + ": " + Head(e.name));
      return;
  }
}

void KinetoTableWriter::AddComplete(const KinetoEvent& e, uint64_t offset) {
  CategoryInfo info = Categorize(e.cat);
  if (info.category == Category::kSkip) return;
  if (!e.has_ts || !e.has_dur) {
    rank_->stats.Count(ImportIssue::kMissingTime, offset, Head(e.name) + ": no ts or dur");
    return;
  }
  if (e.dur_ns < 0 || e.ts_ns > INT64_MAX - e.dur_ns) {
    rank_->stats.Count(ImportIssue::kNegativeDuration, offset, Head(e.name));
    return;
  }
  if (e.bad_field)  // args unreadable: keep the event, note the loss
    rank_->stats.Count(ImportIssue::kMalformedEvent, offset, Head(e.name) + ": args unreadable");
  const model::TimeNs end = e.ts_ns + e.dur_ns;
  switch (info.category) {
    case Category::kKernel: {
      AddGpuActivity(e, ActivityKind::kKernel);
      const uint32_t row = static_cast<uint32_t>(rank_->gpu.size() - 1);
      if (e.coll.present()) AddCommOp(e, row, offset);
      if (e.coll.present() || StartsWith(e.name, "nccl")) batches_.AddNcclKernel(row, e.correlation, e.coll.present());
      return;
    }
    case Category::kMemcpy:
      return AddGpuActivity(e, ActivityKind::kMemcpy);
    case Category::kMemset:
      return AddGpuActivity(e, ActivityKind::kMemset);
    case Category::kSync:
      // Only stream-bound sync markers are GPU timeline events (HTA counts the same).
      if (e.stream >= 0) AddGpuActivity(e, ActivityKind::kSync);
      return;
    case Category::kHost:
      if (e.name == keys::kRecordParamComms && e.coll.present()) {  // a batch's op, maybe
        const model::CommOp op = model::CommOpFromPyTorchName(e.coll.name);
        if (op != model::CommOp::kUnknown) batches_.AddHostOp(DescribeComm(e, op, offset));  // not "wait"
      }
      if (drop_host_events_ && DropHostEvent(e, info.host_kind)) return;
      rank_->host.Append(e.ts_ns, end, InternName(e.name), e.pid, e.tid, e.correlation,
                         info.host_kind);
      return;
    case Category::kAnnotation:
      if (drop_host_events_ && DropUnlessStep(e)) return;
      rank_->annotations.Append(e.ts_ns, end, InternName(e.name), {}, e.pid, e.tid, -1);
      return;
    case Category::kGpuAnnotation:  // projected onto a GPU stream: pid is the device, tid the stream
      if (drop_host_events_ && DropUnlessStep(e)) return;
      rank_->annotations.Append(e.ts_ns, end, InternName(e.name), {}, e.pid, e.tid,
                                static_cast<int32_t>(e.device >= 0 ? e.device : e.pid));
      return;
    case Category::kSkip:
      return;
  }
}

void KinetoTableWriter::AddMetadata(const KinetoEvent& e) {
  if (e.label.empty()) return;  // sort indices, labels: layout hints only
  const model::ThreadId pid = model::ToThreadId(e.pid);
  if (e.name == keys::kThreadName) rank_->threads.push_back({pid, model::ToThreadId(e.tid), std::string(e.label)});
  else if (e.name == keys::kProcessName) rank_->threads.push_back({pid, -1, std::string(e.label)});
}

void KinetoTableWriter::AddFlow(const KinetoEvent& e, model::FlowPhase phase, uint64_t offset) {
  if (e.cat == keys::kCatFlowLaunch) return;  // the same link as the correlation ids
  if (!e.has_ts || e.id < 0) {
    rank_->stats.Count(ImportIssue::kMalformedEvent, offset, "flow event without ts or id");
    return;
  }
  rank_->flows.Append(e.id, rank_->strings.Intern(e.cat), phase, e.ts_ns, e.pid, e.tid);
}

void KinetoTableWriter::AddGpuActivity(const KinetoEvent& e, ActivityKind kind) {
  model::StringId name = InternName(e.name);
  int32_t stream = static_cast<int32_t>(e.stream >= 0 ? e.stream : e.tid);
  int32_t device = static_cast<int32_t>(e.device >= 0 ? e.device : e.pid);
  uint32_t row = rank_->gpu.Append(e.ts_ns, e.ts_ns + e.dur_ns, name, device, stream,
                                   e.correlation, kind);
  if (kind == ActivityKind::kMemcpy || kind == ActivityKind::kMemset) rank_->gpu.bytes[row] = e.bytes;
  if (kind == ActivityKind::kMemcpy) rank_->gpu.copy[row] = model::CopyKindFromName(e.name);
}

void KinetoTableWriter::AddCommOp(const KinetoEvent& e, uint32_t activity, uint64_t offset) {
  model::CommOp op = model::CommOpFromPyTorchName(e.coll.name);
  if (op == model::CommOp::kUnknown) {
    rank_->stats.Count(ImportIssue::kUnknownCollective, offset, std::string(e.coll.name));
    op = model::CommOpFromNcclKernelName(e.name);
  }
  const HostCommOp d = DescribeComm(e, op, offset);
  uint32_t row = rank_->comms.Append(e.ts_ns, e.ts_ns + e.dur_ns, op, d.dtype, d.in_elems, d.out_elems, d.bytes,
                                     d.group, d.seq, d.peer, activity);
  rank_->gpu.comm[activity] = row;
}

HostCommOp KinetoTableWriter::DescribeComm(const KinetoEvent& e, model::CommOp op, uint64_t offset) {
  const KinetoCollectiveArgs& c = e.coll;
  HostCommOp d{e.ts_ns, e.tid, op, rank_->strings.Intern(c.dtype), c.in_elems, c.out_elems, -1, model::kNoIndex, -1, -1};
  if (!c.group_name.empty()) {
    model::ProcessGroup g;
    g.name = std::string(c.group_name);
    g.description = std::string(c.group_desc);
    bool out_of_range = false;
    g.ranks = ParseRankList(c.group_ranks, &out_of_range);
    if (out_of_range || c.group_size > INT32_MAX)
      rank_->stats.Count(ImportIssue::kBadCollectiveArgs, offset, "rank or group size out of range");
    g.size = static_cast<int>(c.group_size > 0 && c.group_size <= INT32_MAX ? c.group_size : g.ranks.size());
    d.group = rank_->FindOrAddGroup(g);
  }
  int elem = model::DataTypeSize(c.dtype);
  if (elem == 0 && !c.dtype.empty())
    rank_->stats.Count(ImportIssue::kBadCollectiveArgs, offset,
                       "unknown dtype '" + std::string(c.dtype) + "'");
  // Without either element count the size is unknown, not 0.
  if (elem > 0 && std::max(c.in_elems, c.out_elems) >= 0 &&
      __builtin_mul_overflow(std::max(c.in_elems, c.out_elems), static_cast<int64_t>(elem), &d.bytes))
    d.bytes = -1;
  // Src/Dst Rank are global ranks (in a batch's ops too, where "Rank" is the peer's
  // index in the group).
  int64_t peer64 = c.dst_rank >= 0 ? c.dst_rank : c.src_rank;
  if (peer64 > INT32_MAX) rank_->stats.Count(ImportIssue::kBadCollectiveArgs, offset, "peer rank out of range");
  else if (peer64 >= 0) d.peer = static_cast<int32_t>(peer64);
  // PyTorch's Seq numbers a group's collectives alike on every member; its p2p numbering
  // is per rank, not per pair, so p2p ops are numbered per (peer, direction) by the
  // number_ops pass instead.
  d.seq = model::IsPointToPoint(op) ? -1 : c.seq;
  return d;
}

bool KinetoTableWriter::DropUnlessStep(const KinetoEvent& e) {
  if (StartsWith(e.name, model::kProfilerStepPrefix)) return false;
  // A pipeline schedule's action ranges name its stages and micro-batches (few: kept).
  if (e.cat == keys::kCatUserAnnotation && StartsWith(e.name, model::kPipelineActionPrefix)) return false;
  ++rank_->host_events_dropped;
  return true;
}

bool KinetoTableWriter::DropHostEvent(const KinetoEvent& e, model::HostKind kind) {
  const bool launch = (kind == model::HostKind::kRuntime || kind == model::HostKind::kDriver) && e.correlation != 0;
  if (launch || !DropUnlessStep(e)) return false;
  if (e.ts_ns + e.dur_ns > last_host_end_) last_host_start_ = e.ts_ns, last_host_end_ = e.ts_ns + e.dur_ns;
  return true;
}

void KinetoTableWriter::Finish(int64_t base_ns) {
  batches_.Attach(rank_);
  if (last_host_end_ != INT64_MIN) {
    rank_->host.Append(last_host_start_, last_host_end_, {}, -1, -1, 0, model::HostKind::kOther);
    --rank_->host_events_dropped;
  }
  if (base_ns == 0) return;
  for (auto* column : {&rank_->gpu.start, &rank_->gpu.end, &rank_->host.start, &rank_->host.end,
                       &rank_->comms.start, &rank_->comms.end, &rank_->annotations.start,
                       &rank_->annotations.end, &rank_->flows.time})
    AddBase(column, base_ns);
}

}  // namespace commlens::importers
