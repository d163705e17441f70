#include "importers/native/native_importer.h"

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <map>
#include <numeric>
#include <optional>
#include <span>
#include <tuple>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "common/file.h"
#include "common/strings.h"
#include "importers/native/cupti_records.h"
#include "importers/native/gpu_clock.h"
#include "importers/native/sampler_records.h"
#include "model/collective.h"
#include "native_format/format.h"
#include "native_format/record_reader.h"

namespace commlens::importers {

namespace {

namespace nf = native_format;
using model::CommOp;
using model::ImportIssue;

// Kernel timing of one op, merged over its KernelTiming records.
struct Timing {
  uint64_t start = UINT64_MAX;
  uint64_t stop = 0;
  uint32_t channels = 0;
  bool bad = false;
};

// An op's initial-sync lengths over its KernelPhase records, and whether any other phase
// came (NCCL leaves out a phase of no length: the last member to arrive may report no
// initial sync at all, which means it waited none).
struct PhaseSums {
  uint64_t sync_total = 0;
  uint32_t sync_channels = 0;
  bool other_phases = false;
};

// Everything read from the file, before it becomes rows.
struct Decoded {
  bool has_process = false;
  nf::ProcessRecord process{};
  std::unordered_map<uint32_t, std::string> strings;
  std::map<uint32_t, nf::CommRecord> comms;
  std::vector<nf::OpRecord> ops;
  std::unordered_map<uint64_t, nf::OpDetailRecord> details;  // by op_id (ABI v7)
  std::unordered_map<uint64_t, Timing> timings;
  std::unordered_map<uint64_t, PhaseSums> initial_syncs;  // by op_id (1.5)
  std::vector<nf::ProxyOpRecord> proxy_ops;
  std::vector<nf::ApiRecord> apis;
  // From |apis| once decoded (IndexGroups): each Coll/P2p API event's group (GroupApi id,
  // one per communicator), and each group's kernel launches.
  std::unordered_map<uint64_t, uint64_t> group_of_api;
  struct GroupLaunches {
    int count = 0;
    uint64_t last = 0;  // the last KernelLaunch's API id
  };
  std::unordered_map<uint64_t, GroupLaunches> launches_of_group;
  // NCCL's kernels timed by CUDA events around their launches (1.7), by KernelLaunch id.
  std::unordered_map<uint64_t, nf::LaunchTimingRecord> launch_timings;
  std::optional<nf::LaunchTimerRecord> launch_timer;  // the last one
  std::map<uint32_t, nf::StatsRecord> stats;  // the last, cumulative one per comm
  std::vector<nf::MarkRecord> marks;
  bool ended = false;
  int64_t alive_until = INT64_MIN;  // latest mark or end record time
  importers::native::GpuClock clock;
  importers::native::SamplerRecords sampler;  // counters, when the sampler wrote the file
  importers::native::CuptiRecords cupti;      // GPU activities, CUDA calls, NVTX ranges (1.4)
};

std::string Hex(uint64_t v) {
  char buf[24];
  std::snprintf(buf, sizeof(buf), "%016" PRIx64, v);
  return buf;
}

// Adds one record to |d|. A payload too short for its type is a bad record.
void DecodeOne(const nf::RecordView& r, Decoded* d, model::ImportStats* stats) {
  auto bad = [&](const char* what) { stats->Count(ImportIssue::kBadRecord, r.offset, what); };
  switch (static_cast<nf::RecordType>(r.type)) {
    case nf::RecordType::kString: {
      if (r.payload.size() < 4) return bad("string record shorter than its id");
      uint32_t id;
      std::memcpy(&id, r.payload.data(), 4);
      d->strings[id].assign(reinterpret_cast<const char*>(r.payload.data()) + 4, r.payload.size() - 4);
      return;
    }
    case nf::RecordType::kProcess:
      if (!nf::DecodePayload(r, &d->process)) return bad("short process record");
      d->has_process = true;
      return;
    case nf::RecordType::kComm: {
      nf::CommRecord c;
      if (!nf::DecodePayload(r, &c)) return bad("short comm record");
      d->comms[c.comm] = c;
      return;
    }
    case nf::RecordType::kOp: {
      nf::OpRecord o;
      if (!nf::DecodePayload(r, &o)) return bad("short op record");
      d->ops.push_back(o);
      return;
    }
    case nf::RecordType::kOpDetail: {
      nf::OpDetailRecord o;
      if (!nf::DecodePayload(r, &o)) return bad("short op detail record");
      d->details[o.op_id] = o;
      return;
    }
    case nf::RecordType::kKernelTiming: {
      nf::KernelTimingRecord k;
      if (!nf::DecodePayload(r, &k)) return bad("short kernel timing record");
      Timing& t = d->timings[k.op_id];
      t.start = std::min(t.start, k.gpu_start);
      t.stop = std::max(t.stop, k.gpu_stop);
      t.channels += k.channels;
      t.bad = t.bad || (k.flags & nf::kTimingFlagBadTimer) != 0;
      if (k.channels > 0 && k.clock_offset_upper != INT64_MAX) d->clock.AddSample(k.gpu_start, k.clock_offset_upper);
      return;
    }
    case nf::RecordType::kKernelPhase: {
      nf::KernelPhaseRecord k;
      if (!nf::DecodePayload(r, &k)) return bad("short kernel phase record");
      // Only lengths on one GPU's clock are kept. A channel whose phase stopped before it
      // started was left out of the sums by the writer (the flag says one was).
      PhaseSums& t = d->initial_syncs[k.op_id];
      if (k.flags & nf::kTimingFlagBadTimer) bad("kernel phase stopped before it started (that channel left out)");
      t.other_phases = t.other_phases || k.channels[1] > 0 || k.channels[2] > 0;
      t.sync_total = k.total_ns[0] > UINT64_MAX - t.sync_total ? UINT64_MAX : t.sync_total + k.total_ns[0];
      t.sync_channels = k.channels[0] > UINT32_MAX - t.sync_channels ? UINT32_MAX : t.sync_channels + k.channels[0];
      return;
    }
    case nf::RecordType::kProxyOp: {
      nf::ProxyOpRecord p;
      if (!nf::DecodePayload(r, &p)) return bad("short proxy op record");
      d->proxy_ops.push_back(p);
      return;
    }
    case nf::RecordType::kApi: {
      nf::ApiRecord a;
      if (!nf::DecodePayload(r, &a)) return bad("short api record");
      d->apis.push_back(a);
      return;
    }
    case nf::RecordType::kLaunchTiming: {
      nf::LaunchTimingRecord l;
      if (!nf::DecodePayload(r, &l)) return bad("short launch timing record");
      if (l.gpu_end_ns < l.gpu_start_ns || l.gpu_start_ns <= 0 || !model::TimeInRange(l.gpu_end_ns))
        return bad("launch timing ends before it starts, or beyond the time range");
      d->launch_timings[l.api_id] = l;
      return;
    }
    case nf::RecordType::kLaunchTimer: {
      nf::LaunchTimerRecord l;
      if (!nf::DecodePayload(r, &l)) return bad("short launch timer record");
      d->launch_timer = l;
      return;
    }
    case nf::RecordType::kStats: {
      nf::StatsRecord s;
      if (!nf::DecodePayload(r, &s)) return bad("short stats record");
      d->stats[s.comm] = s;
      return;
    }
    case nf::RecordType::kMark: {
      nf::MarkRecord m;
      if (!nf::DecodePayload(r, &m)) return bad("short mark record");
      d->alive_until = std::max(d->alive_until, m.time_ns);
      if (m.what != static_cast<uint32_t>(nf::MarkKind::kAlive)) d->marks.push_back(m);
      return;
    }
    case nf::RecordType::kEnd: {
      nf::EndRecord e;
      if (nf::DecodePayload(r, &e)) d->alive_until = std::max(d->alive_until, e.time_ns);
      d->ended = true;
      return;
    }
    case nf::RecordType::kCounterDef:
    case nf::RecordType::kCounterSamples:
    case nf::RecordType::kSamplerEvent:
    case nf::RecordType::kSamplerStats:
      d->sampler.Decode(r, stats);
      return;
    case nf::RecordType::kGpuActivity:
    case nf::RecordType::kCudaApi:
    case nf::RecordType::kRange:
    case nf::RecordType::kTracer:
    case nf::RecordType::kStreamId:
      d->cupti.Decode(r, stats);
      return;
  }
  // A type from a later minor version: skipped by design.
}

void DecodeAll(std::span<const uint8_t> file, uint64_t first, Decoded* d, model::ImportStats* stats) {
  nf::RecordReader reader(file, first);
  nf::RecordView r;
  for (;;) {
    nf::ReadStatus s = reader.Next(&r);
    if (s == nf::ReadStatus::kRecord) {
      DecodeOne(r, d, stats);
      continue;
    }
    if (s == nf::ReadStatus::kTruncated)
      stats->Count(ImportIssue::kTruncatedRecord, reader.offset(),
                   "file ends inside a record: the writer stopped mid-flush");
    if (s == nf::ReadStatus::kCorrupt)
      stats->Count(ImportIssue::kBadRecord, reader.offset(),
                   "record fails its checksum; the rest of the file is skipped");
    return;
  }
}

// Products of values read from the file: they may be anything, so saturate.
int64_t Times(int64_t a, int64_t b) {
  int64_t r;
  return __builtin_mul_overflow(a, b, &r) ? INT64_MAX : r;
}

// Elements sent and received by this rank for one call of |count| (NCCL's count
// argument) in a communicator of |n| ranks; bytes (nccl-tests size) = the larger of the two.
void Elements(CommOp op, uint64_t count_arg, int64_t n, int64_t* in, int64_t* out) {
  const int64_t count = static_cast<int64_t>(std::min<uint64_t>(count_arg, INT64_MAX));
  n = std::max<int64_t>(n, 1);
  switch (op) {
    case CommOp::kAllGather:
    case CommOp::kGather: *in = count; *out = Times(count, n); return;
    case CommOp::kReduceScatter:
    case CommOp::kScatter: *in = Times(count, n); *out = count; return;
    case CommOp::kAllToAll: *in = *out = Times(count, n); return;
    case CommOp::kSend: *in = count; *out = 0; return;
    case CommOp::kRecv: *in = 0; *out = count; return;
    default: *in = *out = count; return;
  }
}

bool IsRooted(CommOp op) {
  return op == CommOp::kBroadcast || op == CommOp::kReduce || op == CommOp::kGather ||
         op == CommOp::kScatter;
}

std::string StringOf(const Decoded& d, uint32_t id) {
  auto it = d.strings.find(id);
  return it == d.strings.end() ? std::string() : it->second;
}

void FillIdentity(const Decoded& d, const std::string& path, model::RankTrace* t) {
  t->path = path;
  t->format = "native";
  t->hostname = StringOf(d, d.process.hostname);
  if (d.process.writer == static_cast<uint32_t>(nf::Writer::kSampler)) {
    // One host's NIC counters and GPU metrics: no rank (RankTrace::host_counters_only).
    t->host_counters_only = true;
    t->notes.push_back("samples file from " + StringOf(d, d.process.plugin_version) + " (host counters, no rank)");
    return;
  }
  t->backend = "nccl";
  t->rank = d.process.global_rank;
  t->world_size = d.process.world_size;
  for (const auto& [index, c] : d.comms) t->world_size = std::max(t->world_size, c.nranks);
  if (t->rank < 0 && !d.comms.empty()) {
    // No launcher rank: take the rank in the largest communicator.
    const nf::CommRecord* big = &d.comms.begin()->second;
    for (const auto& [index, c] : d.comms) if (c.nranks > big->nranks) big = &c;
    t->rank = big->rank;
    t->notes.push_back("rank taken from communicator " + Hex(big->comm_hash) + " (no RANK in the recorded environment)");
  }
  if (d.process.abi_version == 0) {  // a session CUDA started (the tracer) that NCCL never joined
    t->backend.clear();
    t->notes.push_back("native trace from " + StringOf(d, d.process.plugin_version) +
                       ": the GPU's activity only (this process made no NCCL communicator)");
    return;
  }
  t->notes.push_back("native trace from " + StringOf(d, d.process.plugin_version) +
                     ", NCCL profiler ABI v" + std::to_string(d.process.abi_version));
}

// One ProcessGroup per communicator; returns comm index -> group index.
std::map<uint32_t, uint32_t> FillGroups(const Decoded& d, model::RankTrace* t) {
  std::map<uint32_t, uint32_t> group_of;
  for (const auto& [index, c] : d.comms) {
    model::ProcessGroup g;
    std::string name = StringOf(d, c.name);
    g.name = name.empty() ? "comm-" + Hex(c.comm_hash) : name;
    g.comm_hash = c.comm_hash;
    g.size = c.nranks;
    g.self = c.rank;
    // A communicator of the whole job in which this rank keeps its global number is the
    // world group: its members are 0..n-1. Otherwise they are not recorded.
    if (c.nranks == t->world_size && c.rank == t->rank && t->rank >= 0 && c.nranks <= (1 << 20)) {
      g.ranks.resize(static_cast<size_t>(c.nranks));
      std::iota(g.ranks.begin(), g.ranks.end(), 0);
    }
    group_of[index] = t->FindOrAddGroup(g);
  }
  return group_of;
}

// The op's sequence number (model: collectives per group, p2p per direction and peer):
//  - collectives: comm_seq, which every rank assigns alike unless the recorder was ever
//    fully off; then NCCL's own per-type counter, made unique across types
//    (nccl_seq * 16 + op);
//  - copy-engine collectives: the same, in their own sequence (CommFlags);
//  - p2p: comm_seq is already the k-th message from the sender to the receiver.
int64_t SequenceNumber(const nf::OpRecord& o, CommOp op, bool seq_reliable) {
  constexpr uint64_t kMax = (uint64_t{1} << 62) - 1;  // what a file may claim, kept positive
  if (o.kind == static_cast<uint8_t>(nf::OpKind::kP2p)) return static_cast<int64_t>(o.comm_seq & kMax);
  uint64_t seq = o.comm_seq;
  if (!seq_reliable && o.nccl_seq != nf::kNoSeq) seq = (o.nccl_seq << 4) + static_cast<uint64_t>(op);
  return static_cast<int64_t>(seq & kMax);
}

// GPU start and end of an op if its kernel channels were timed, else its host times.
struct Placed {
  const nf::OpRecord* op;
  model::TimeNs start;
  model::TimeNs end;
  bool gpu_timed;
};

// The kernel launches of the op's group (its GroupApi event: one per communicator); null
// when it has none, and for a copy-engine op (no kernel runs it).
const Decoded::GroupLaunches* LaunchesOf(const Decoded& d, const nf::OpRecord& o) {
  if (o.kind == static_cast<uint8_t>(nf::OpKind::kCeColl)) return nullptr;
  auto g = d.group_of_api.find(o.api_id);
  if (g == d.group_of_api.end()) return nullptr;
  auto l = d.launches_of_group.find(g->second);
  return l == d.launches_of_group.end() ? nullptr : &l->second;
}

// The CUDA events around the kernel launch of the op's group, when the group launched
// once on its communicator (its ops all ran in that kernel); null otherwise.
const nf::LaunchTimingRecord* LaunchTimingOf(const Decoded& d, const nf::OpRecord& o) {
  if (d.launch_timings.empty()) return nullptr;
  const Decoded::GroupLaunches* g = LaunchesOf(d, o);
  if (g == nullptr || g->count != 1) return nullptr;
  auto l = d.launch_timings.find(g->last);
  return l == d.launch_timings.end() ? nullptr : &l->second;
}

Placed Place(const Decoded& d, const nf::OpRecord& o) {
  auto timing = d.timings.find(o.op_id);
  if (timing != d.timings.end() && timing->second.channels > 0 && timing->second.stop >= timing->second.start)
    return {&o, d.clock.ToHost(timing->second.start), d.clock.ToHost(timing->second.stop), true};
  if (const nf::LaunchTimingRecord* l = LaunchTimingOf(d, o)) return {&o, l->gpu_start_ns, l->gpu_end_ns, true};
  return {&o, o.host_start_ns, std::max(o.host_stop_ns, o.host_start_ns), false};
}

void AppendOp(const Decoded& d, const Placed& p, const std::map<uint32_t, uint32_t>& group_of,
              const std::unordered_map<uint64_t, int64_t>& api_start, bool seq_reliable, model::RankTrace* t) {
  const nf::OpRecord& o = *p.op;
  auto comm = d.comms.find(o.comm);
  const int n = comm == d.comms.end() ? 0 : comm->second.nranks;
  const std::string func = StringOf(d, o.func);
  const bool ce = o.kind == static_cast<uint8_t>(nf::OpKind::kCeColl);
  CommOp op = o.kind == static_cast<uint8_t>(nf::OpKind::kP2p)
                  ? ((o.flags & nf::kOpFlagSend) ? CommOp::kSend : CommOp::kRecv)
                  : model::CommOpFromNcclFunc(func);
  if (op == CommOp::kUnknown) t->stats.Count(ImportIssue::kUnknownCollective, 0, func);
  const std::string dtype = StringOf(d, o.dtype);
  int64_t in = 0, out = 0;
  Elements(op, o.count, n, &in, &out);
  const int64_t bytes = Times(std::max(in, out), model::DataTypeSize(dtype));
  const int64_t seq = SequenceNumber(o, op, seq_reliable);
  const int32_t peer = (model::IsPointToPoint(op) || IsRooted(op)) ? o.root_or_peer : -1;
  auto g = group_of.find(o.comm);
  uint32_t r = t->comms.Append(p.start, p.end, op, t->strings.Intern(dtype), in, out, bytes,
                               g == group_of.end() ? model::kNoIndex : g->second, seq, peer, model::kNoIndex);
  t->comms.algorithm[r] = t->strings.Intern(StringOf(d, o.algo));
  t->comms.protocol[r] = t->strings.Intern(StringOf(d, o.proto));
  t->comms.channels[r] = ce ? -1 : o.channels;
  t->comms.flags[r] = (ce ? model::kCommCopyEngine : 0) | (p.gpu_timed ? 0 : model::kCommNoGpuTiming) |
                      ((o.flags & nf::kOpFlagSymmetric) ? model::kCommSymmetric : 0);
  if (auto detail = d.details.find(o.op_id); detail != d.details.end()) t->comms.user_tag[r] = detail->second.user_tag;
  if (auto sync = d.initial_syncs.find(o.op_id); sync != d.initial_syncs.end()) {
    const PhaseSums& s = sync->second;
    const uint64_t mean = s.sync_channels > 0 ? s.sync_total / s.sync_channels : 0;
    if (mean >= uint64_t{model::kTimeLimit}) t->stats.Count(ImportIssue::kBadRecord, 0, "kernel phase lasted for ever");
    else if (s.sync_channels > 0 || s.other_phases) t->comms.initial_sync[r] = static_cast<model::TimeNs>(mean);
  }
  auto api = api_start.find(o.api_id);
  t->comms.enqueue[r] = api != api_start.end() ? api->second : o.host_start_ns;
}

// What the launch timer's CUDA calls cost the launching threads (1.9): "held the launching
// thread ..." for a note, "" when the file does not say.
std::string TimingCost(const Decoded& d) {
  if (!d.launch_timer || d.launch_timer->host_launches == 0) return "";
  const nf::LaunchTimerRecord& l = *d.launch_timer;
  char buf[200];
  std::snprintf(buf, sizeof(buf), "held the launching thread %.1f us a launch (the mean over %" PRIu64
                " launches)", static_cast<double>(l.host_ns) / 1e3 / static_cast<double>(l.host_launches), l.host_launches);
  std::string out = buf;
  const int64_t span = d.has_process ? l.time_ns - d.process.start_realtime_ns : 0;
  if (span > 0) {
    std::snprintf(buf, sizeof(buf), ", %.2f%% of the %.1f s the file spans", 100.0 * static_cast<double>(l.host_ns) / span,
                  static_cast<double>(span) / 1e9);
    out += buf;
  }
  return out;
}

// The groups of the API events, for the batches and the kernels' launches.
void IndexGroups(Decoded* d) {
  d->group_of_api.reserve(d->apis.size());
  for (const nf::ApiRecord& a : d->apis) {
    if (a.parent_id == 0) continue;
    if (a.kind == static_cast<uint8_t>(nf::ApiKind::kKernelLaunch)) {
      Decoded::GroupLaunches& g = d->launches_of_group[a.parent_id];
      ++g.count;
      g.last = a.api_id;
    } else {
      d->group_of_api.emplace(a.api_id, a.parent_id);
    }
  }
}

// The ops NCCL ran as one kernel: those of one group call (ncclGroupStart/End: a
// batch_isend_irecv, coalesced collectives) on one communicator, where the group's
// KernelLaunch events say it launched once there. The plugin's GroupApi events are per
// communicator, so a group's API id names both. Each batch of two ops or more, as indices
// into d.ops. Most groups hold one op (NCCL's implicit group around a lone call): counted
// first, so that only the batches are gathered.
std::vector<std::vector<size_t>> Batches(const Decoded& d) {
  std::vector<std::vector<size_t>> batches;
  if (d.launches_of_group.empty()) return batches;
  std::vector<uint64_t> group(d.ops.size(), 0);
  std::unordered_map<uint64_t, uint32_t> members;  // group API id -> its ops; then its batch's index
  for (size_t i = 0; i < d.ops.size(); ++i) {
    const nf::OpRecord& o = d.ops[i];
    if (o.kind == static_cast<uint8_t>(nf::OpKind::kCeColl)) continue;
    auto g = d.group_of_api.find(o.api_id);
    if (g == d.group_of_api.end()) continue;
    group[i] = g->second;
    ++members[g->second];
  }
  for (auto& [id, n] : members) {
    auto l = d.launches_of_group.find(id);
    if (n >= 2 && l != d.launches_of_group.end() && l->second.count == 1) {
      n = static_cast<uint32_t>(batches.size());
      batches.emplace_back();
    } else {
      n = UINT32_MAX;
    }
  }
  for (size_t i = 0; i < d.ops.size(); ++i)
    if (group[i] != 0)
      if (uint32_t b = members[group[i]]; b != UINT32_MAX) batches[b].push_back(i);
  return batches;
}

// Appends the ops in start order, a batch's together (in the order NCCL was given them), each
// spanning the batch's kernel and flagged (model::kCommBatched, kCommBatchNext after the
// first): the analyses count a batch once, with its bytes summed. Returns each one's
// record, by comm row.
std::vector<const nf::OpRecord*> FillOps(const Decoded& d, const std::map<uint32_t, uint32_t>& group_of,
                                         bool seq_reliable, model::RankTrace* t) {
  std::unordered_map<uint64_t, int64_t> api_start;
  for (const nf::ApiRecord& a : d.apis) api_start[a.api_id] = a.host_start_ns;
  std::vector<Placed> placed;
  placed.reserve(d.ops.size());
  for (const nf::OpRecord& o : d.ops) placed.push_back(Place(d, o));
  // Each op's sort key: its start, or its batch's (the batch's earliest start and its
  // first op's index), then its index.
  struct Key {
    model::TimeNs start;
    size_t batch;  // index of the batch's first op; the op's own when alone
    size_t index;
  };
  std::vector<Key> keys(placed.size());
  for (size_t i = 0; i < placed.size(); ++i) keys[i] = {placed[i].start, i, i};
  std::vector<uint8_t> batched(placed.size(), 0);
  for (const std::vector<size_t>& members : Batches(d)) {
    model::TimeNs start = placed[members[0]].start, end = placed[members[0]].end;
    bool timed = true, any_timed = false;
    for (size_t m : members) {
      start = std::min(start, placed[m].start), end = std::max(end, placed[m].end);
      timed = timed && placed[m].gpu_timed;
      any_timed = any_timed || placed[m].gpu_timed;
    }
    // Some ops timed and some not (kernel timing for 1 op in N): their times are of two
    // kinds, no one span; each stays an op of its own.
    if (any_timed && !timed) continue;
    for (size_t m : members) {
      keys[m] = {start, members[0], m};
      batched[m] = 1;
      if (timed) placed[m].start = start, placed[m].end = end;  // one kernel: its span
    }
  }
  std::vector<size_t> order(placed.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return std::tie(keys[a].start, keys[a].batch, keys[a].index) < std::tie(keys[b].start, keys[b].batch, keys[b].index);
  });
  std::vector<const nf::OpRecord*> rows;
  size_t previous_batch = SIZE_MAX;
  for (size_t i : order) {
    AppendOp(d, placed[i], group_of, api_start, seq_reliable, t);
    const uint32_t r = static_cast<uint32_t>(rows.size());
    if (batched[i]) t->comms.flags[r] |= model::kCommBatched | (keys[i].batch == previous_batch ? model::kCommBatchNext : 0);
    previous_batch = batched[i] ? keys[i].batch : SIZE_MAX;
    rows.push_back(placed[i].op);
  }
  return rows;
}

// Each KernelLaunch event (a group's launch on a communicator) and the kernel it
// launched, found through the CUDA call CUPTI recorded inside the event's time: that
// call's correlation id names the kernel.
std::vector<std::pair<const nf::ApiRecord*, uint32_t>> KernelsByLaunchCall(const Decoded& d, const model::RankTrace& t) {
  std::unordered_map<int64_t, uint32_t> kernel_of;  // correlation id -> kernel row
  for (uint32_t i = 0; i < t.gpu.size(); ++i)
    if (t.gpu.kind[i] == model::ActivityKind::kKernel && t.gpu.correlation[i] != 0) kernel_of.emplace(t.gpu.correlation[i], i);
  // The CUDA calls that launched a kernel, by start: (start, end, kernel row).
  std::vector<std::tuple<model::TimeNs, model::TimeNs, uint32_t>> calls;
  for (uint32_t i = 0; i < t.host.size(); ++i)
    if (t.host.kind[i] == model::HostKind::kRuntime || t.host.kind[i] == model::HostKind::kDriver)
      if (auto k = kernel_of.find(t.host.correlation[i]); k != kernel_of.end())
        calls.emplace_back(t.host.start[i], t.host.end[i], k->second);
  std::sort(calls.begin(), calls.end());
  std::vector<std::pair<const nf::ApiRecord*, uint32_t>> found;
  if (calls.empty()) return found;
  for (const nf::ApiRecord& a : d.apis) {
    if (a.kind != static_cast<uint8_t>(nf::ApiKind::kKernelLaunch) || a.parent_id == 0) continue;
    auto it = std::lower_bound(calls.begin(), calls.end(), std::make_tuple(a.host_start_ns, model::TimeNs{INT64_MIN}, 0u));
    for (; it != calls.end() && std::get<0>(*it) <= a.host_stop_ns; ++it)
      if (std::get<1>(*it) <= a.host_stop_ns) {
        found.emplace_back(&a, std::get<2>(*it));
        break;
      }
  }
  return found;
}

// NCCL's kernel names: ncclDevKernel_AllReduce_Sum_bf16_RING_LL(...), ncclSymkDevKernel_*
// (symmetric kernels), ncclKernel_* (older NCCL).
bool IsNcclKernel(std::string_view name) { return StartsWith(name, "nccl") && name.find("Kernel") != std::string_view::npos; }

// What an NCCL kernel or op does, as far as telling a launch's kernel goes: its
// collective, kSendRecv for point-to-point (NCCL runs all-to-all, gather and scatter as
// sends and receives), kUnknown when it cannot be told (a Generic kernel).
model::CommOp LaunchFamily(model::CommOp op) {
  using model::CommOp;
  return model::IsPointToPoint(op) || op == CommOp::kAllToAll || op == CommOp::kGather || op == CommOp::kScatter
             ? CommOp::kSendRecv
             : op;
}

// The same without the CUDA calls (the tracer's default): the StreamId records give each
// launch's CUPTI stream, and the launches on a stream take its NCCL kernels in order,
// each the first kernel not yet taken that had not ended when the launch began (not its
// start: CUPTI's conversion of GPU times to the host clock may read a little early, while
// the end comes a launch latency and a kernel after the launch) and that runs the
// launch's collective (by the kernel's name), so that a kernel whose launch was not
// recorded is passed over. Graph-captured launches run their kernels later: left out.
// Launches left without a kernel may be the first ones (recorded before the tracer ran:
// its attach takes a while): such a stream is matched again from its end, and the
// pairing whose kernels start closer to their launches is kept. CUPTI cannot name a
// context's default stream (stream 0: PyTorch launches a synchronous collective on the
// caller's stream, often that one) from the recorder's thread: one launch stream left
// unnamed pairs with the one CUPTI stream whose NCCL kernels no named stream claims.
std::vector<std::pair<const nf::ApiRecord*, uint32_t>> KernelsByStreamOrder(const Decoded& d, const model::RankTrace& t) {
  std::vector<std::pair<const nf::ApiRecord*, uint32_t>> found;
  std::unordered_map<uint64_t, uint32_t> cupti_stream;  // cudaStream_t -> CUPTI's id
  std::unordered_set<uint32_t> named;                   // CUPTI ids some launch stream has
  for (const nf::StreamIdRecord& s : d.cupti.stream_ids())
    if (cupti_stream.emplace(s.stream, s.cupti_stream).second) named.insert(s.cupti_stream);
  std::unordered_map<uint32_t, std::vector<uint32_t>> kernels;  // CUPTI stream -> its NCCL kernels
  for (uint32_t i = 0; i < t.gpu.size(); ++i)
    if (t.gpu.kind[i] == model::ActivityKind::kKernel && IsNcclKernel(t.strings.Get(t.gpu.name[i])))
      kernels[static_cast<uint32_t>(t.gpu.stream[i])].push_back(i);
  if (kernels.empty()) return found;
  auto launch_of = [](const nf::ApiRecord& a) {
    return a.kind == static_cast<uint8_t>(nf::ApiKind::kKernelLaunch) && a.parent_id != 0 && !a.graph_captured;
  };
  std::unordered_set<uint64_t> unnamed;  // launch streams without a StreamId record (2 are enough to know)
  for (const nf::ApiRecord& a : d.apis)
    if (launch_of(a) && !cupti_stream.count(a.stream) && unnamed.size() < 2) unnamed.insert(a.stream);
  std::vector<uint32_t> unclaimed;  // CUPTI streams with NCCL kernels that no named stream is
  for (const auto& [stream, rows] : kernels)
    if (!named.count(stream)) unclaimed.push_back(stream);
  if (unnamed.size() == 1 && unclaimed.size() == 1) cupti_stream.emplace(*unnamed.begin(), unclaimed[0]);
  if (cupti_stream.empty()) return found;
  for (auto& [stream, rows] : kernels)
    std::stable_sort(rows.begin(), rows.end(), [&](uint32_t a, uint32_t b) { return t.gpu.start[a] < t.gpu.start[b]; });
  // Each group's collective family, from its first op.
  std::unordered_map<uint64_t, model::CommOp> family;  // group API id -> what its ops do
  std::unordered_map<uint32_t, model::CommOp> func_op;  // string id -> its op
  for (const nf::OpRecord& o : d.ops) {
    auto g = d.group_of_api.find(o.api_id);
    if (g == d.group_of_api.end() || family.count(g->second)) continue;
    auto [op, added] = func_op.try_emplace(o.func);
    if (added) op->second = model::CommOpFromNcclFunc(StringOf(d, o.func));
    family.emplace(g->second, o.kind == static_cast<uint8_t>(nf::OpKind::kP2p) ? model::CommOp::kSendRecv
                                                                              : LaunchFamily(op->second));
  }
  std::unordered_map<uint32_t, std::vector<const nf::ApiRecord*>> launches;  // CUPTI stream -> its launches
  for (const nf::ApiRecord& a : d.apis)
    if (launch_of(a))
      if (auto s = cupti_stream.find(a.stream); s != cupti_stream.end() && kernels.count(s->second)) launches[s->second].push_back(&a);
  auto fits = [&](const nf::ApiRecord* a, uint32_t kernel) {
    auto f = family.find(a->parent_id);
    const model::CommOp want = f == family.end() ? model::CommOp::kUnknown : f->second;
    const model::CommOp got = LaunchFamily(model::CommOpFromNcclKernelName(t.strings.Get(t.gpu.name[kernel])));
    return want == model::CommOp::kUnknown || got == model::CommOp::kUnknown || want == got;
  };
  for (auto& [stream, list] : launches) {
    std::stable_sort(list.begin(), list.end(),
                     [](const nf::ApiRecord* a, const nf::ApiRecord* b) { return a->host_start_ns < b->host_start_ns; });
    const std::vector<uint32_t>& rows = kernels[stream];
    std::vector<std::pair<const nf::ApiRecord*, uint32_t>> forward;
    size_t i = 0;
    for (const nf::ApiRecord* a : list) {
      while (i < rows.size() && (t.gpu.end[rows[i]] < a->host_start_ns || !fits(a, rows[i]))) ++i;
      if (i == rows.size()) break;
      forward.emplace_back(a, rows[i++]);
    }
    if (forward.size() < list.size()) {
      // Launches left over: either the last ones' kernels were not recorded (the process
      // ended), or the first ones' (recorded before the tracer ran), and then every pair
      // is one launch late. Matched from the end too (each launch the last kernel not yet
      // taken that ran its collective and ended after it began), the pairing whose kernels
      // start closer to their launches (the median) is kept: a shifted one pairs each
      // launch with a later launch's kernel.
      std::vector<std::pair<const nf::ApiRecord*, uint32_t>> backward;
      size_t k = rows.size();
      for (auto a = list.rbegin(); a != list.rend() && k > 0; ++a) {
        size_t j = k;
        while (j > 0 && !fits(*a, rows[j - 1])) --j;
        if (j == 0 || t.gpu.end[rows[j - 1]] < (*a)->host_start_ns) continue;
        backward.emplace_back(*a, rows[j - 1]);
        k = j - 1;
      }
      auto median_lag = [&](const std::vector<std::pair<const nf::ApiRecord*, uint32_t>>& pairs) {
        std::vector<model::TimeNs> lag;
        for (const auto& [a, k] : pairs) lag.push_back(t.gpu.start[k] - a->host_start_ns);
        if (lag.empty()) return INT64_MAX;
        std::nth_element(lag.begin(), lag.begin() + lag.size() / 2, lag.end());
        return lag[lag.size() / 2];
      };
      if (backward.size() >= forward.size() && median_lag(backward) < median_lag(forward)) forward = std::move(backward);
    }
    found.insert(found.end(), forward.begin(), forward.end());
  }
  return found;
}

// The CUPTI tracer's kernels time NCCL's ops (issue 28): NCCL reports each kernel launch
// as an event of its group (KernelLaunch, a child of the GroupApi event, as the group's
// Coll and P2p API events are); its kernel is found by the launching CUDA call, else by
// stream order (above). A group's ops on a communicator with one launch on it run in
// that kernel: their GPU start and end become the kernel's, and the kernel row names its
// op. Returns the ops timed so.
uint64_t TimeOpsByKernels(const Decoded& d, const std::vector<const nf::OpRecord*>& op_rows, model::RankTrace* t) {
  if (t->gpu.size() == 0 || d.apis.empty()) return 0;
  std::vector<std::pair<const nf::ApiRecord*, uint32_t>> found = KernelsByLaunchCall(d, *t);
  if (found.empty()) found = KernelsByStreamOrder(d, *t);
  // Each group's launch per communicator: its kernel, or none when it launched several.
  std::map<std::pair<uint64_t, uint32_t>, uint32_t> launch_kernel;  // (group api id, comm) -> kernel row
  constexpr uint32_t kSeveral = model::kNoIndex - 1;
  for (const auto& [a, kernel] : found) {
    auto [slot, added] = launch_kernel.try_emplace({a->parent_id, a->comm}, kernel);
    if (!added && slot->second != kernel) slot->second = kSeveral;
  }
  if (launch_kernel.empty()) return 0;
  uint64_t timed = 0;
  for (uint32_t r = 0; r < op_rows.size(); ++r) {
    const nf::OpRecord& o = *op_rows[r];
    auto g = d.group_of_api.find(o.api_id);
    if (g == d.group_of_api.end()) continue;
    auto k = launch_kernel.find({g->second, o.comm});
    if (k == launch_kernel.end() || k->second == kSeveral) continue;
    const uint32_t kernel = k->second;
    t->comms.start[r] = t->gpu.start[kernel];
    t->comms.end[r] = t->gpu.end[kernel];
    t->comms.flags[r] &= ~model::kCommNoGpuTiming;
    t->comms.activity[r] = kernel;
    if (t->gpu.comm[kernel] == model::kNoIndex) t->gpu.comm[kernel] = r;
    ++timed;
  }
  return timed;
}

void FillHostAndCounters(const Decoded& d, model::RankTrace* t) {
  for (const nf::ApiRecord& a : d.apis) {
    std::string name;
    switch (static_cast<nf::ApiKind>(a.kind)) {
      case nf::ApiKind::kGroupApi: name = "ncclGroup"; break;
      case nf::ApiKind::kKernelLaunch: name = "ncclKernelLaunch"; break;
      default: name = "nccl" + StringOf(d, a.func);
    }
    t->host.Append(a.host_start_ns, std::max(a.host_stop_ns, a.host_start_ns), t->strings.Intern(name),
                   d.process.pid, -1, 0, model::HostKind::kOther);
  }
  model::CounterSeries sent, received;
  sent.name = "nccl.proxy.send_bytes";
  received.name = "nccl.proxy.recv_bytes";
  sent.unit = received.unit = "bytes";
  sent.host = received.host = t->hostname;
  std::vector<const nf::ProxyOpRecord*> proxies;
  for (const nf::ProxyOpRecord& p : d.proxy_ops) proxies.push_back(&p);
  std::sort(proxies.begin(), proxies.end(),
            [](const auto* a, const auto* b) { return a->host_stop_ns < b->host_stop_ns; });
  for (const nf::ProxyOpRecord* p : proxies) {
    model::CounterSeries& s = p->is_send ? sent : received;
    s.time.push_back(p->host_stop_ns);
    s.value.push_back(static_cast<double>(p->bytes));
  }
  if (!sent.time.empty()) t->counters.push_back(std::move(sent));
  if (!received.time.empty()) t->counters.push_back(std::move(received));
}

void FillStatsAndNotes(const Decoded& d, model::RankTrace* t) {
  uint64_t dropped = 0, orphaned = 0, gaps = 0;
  for (const auto& [comm, s] : d.stats) {
    for (int k = 0; k < nf::kNumEventKinds; ++k) {
      dropped += s.dropped[k];
      orphaned += s.orphaned[k];
    }
    gaps = std::max(gaps, s.seq_gaps);
  }
  if (dropped > 0)
    t->stats.Count(ImportIssue::kDroppedByRecorder, 0,
                   "the recorder's event buffers were full (raise COMMLENS_BUFFER_EVENTS)", dropped);
  if (orphaned > 0)
    t->notes.push_back(std::to_string(orphaned) + " child events (kernel channels, proxy ops) belonged to ops that "
                       "were not recorded");
  if (d.alive_until != INT64_MIN) t->alive_until = d.alive_until;
  if (!d.ended)
    t->notes.push_back(t->host_counters_only
                           ? "no end record: the sampler was stopped without finishing (killed?); samples after "
                             "its last flush are missing"
                           : "no end record: the process stopped without finalizing NCCL (killed?); events after its "
                             "last flush are missing");
  if (!d.clock.empty()) {
    char buf[200];
    std::snprintf(buf, sizeof(buf),
                  "GPU clock to host clock offset %" PRId64 " ns (from %zu samples; %" PRId64
                  " ns spread over the run); converted GPU times may be late by the proxy poll latency",
                  d.clock.min_offset(), d.clock.samples(), d.clock.max_offset() - d.clock.min_offset());
    t->notes.push_back(buf);
  }
  if (gaps > 0)
    t->notes.push_back("the recorder was switched off " + std::to_string(gaps) +
                       " times, so collectives are matched by NCCL's per-type sequence (seq = nccl_seq * 16 + op)");
  for (const nf::MarkRecord& m : d.marks) {
    static constexpr const char* kWhat[] = {"",
                                            "capture window opened",
                                            "capture window closed",
                                            "control: on",
                                            "control: off",
                                            "control: count only",
                                            "",
                                            "control: host times only (no GPU timing)"};
    if (m.what < std::size(kWhat) && kWhat[m.what][0] != '\0')
      t->notes.push_back(std::string(kWhat[m.what]) + " at " + std::to_string(m.time_ns) + " ns");
  }
}

}  // namespace

bool LooksLikeNativeTrace(std::string_view first_bytes) {
  return first_bytes.size() >= sizeof(nf::kMagic) &&
         std::memcmp(first_bytes.data(), nf::kMagic, sizeof(nf::kMagic)) == 0;
}

Result<model::RankTrace> ImportNativeTrace(const std::string& path) {
  COMMLENS_ASSIGN_OR_RETURN(std::string text, ReadWholeFile(path));
  std::span<const uint8_t> bytes(reinterpret_cast<const uint8_t*>(text.data()), text.size());
  nf::FileHeader header;
  std::string why;
  if (!nf::ParseFileHeader(bytes, &header, &why)) return Error(path + ": " + why);

  model::RankTrace t;
  t.input_bytes = bytes.size();
  Decoded d;
  DecodeAll(bytes, header.header_size, &d, &t.stats);
  IndexGroups(&d);
  if (!d.has_process) return Error(path + ": native trace has no process record (cut short after its header)");

  bool seq_reliable = true;
  for (const auto& [comm, s] : d.stats) seq_reliable = seq_reliable && s.seq_gaps == 0;
  FillIdentity(d, path, &t);
  auto group_of = FillGroups(d, &t);
  const std::vector<const nf::OpRecord*> op_rows = FillOps(d, group_of, seq_reliable, &t);
  FillHostAndCounters(d, &t);
  d.sampler.Fill([&](uint32_t id) { return StringOf(d, id); }, &t);
  d.cupti.Fill([&](uint32_t id) { return StringOf(d, id); }, d.process.pid, &t);
  if (t.gpu.size() > 0 && !d.cupti.has_cuda_calls()) {
    t.launches_unrecorded = true;
    t.notes.push_back("the CUPTI tracer recorded no CUDA calls (--cupti-kinds without api): GPU activities are placed "
                      "in the steps by their GPU start, and idle gaps are not told host waits");
  }
  uint64_t by_events = 0, split = 0;
  for (const nf::OpRecord* o : op_rows) {
    if (d.timings.count(o->op_id)) continue;
    if (LaunchTimingOf(d, *o) != nullptr) {
      ++by_events;
    } else if (!d.launch_timings.empty()) {
      const Decoded::GroupLaunches* g = LaunchesOf(d, *o);
      split += g != nullptr && g->count > 1;
    }
  }
  const std::string cost = TimingCost(d);
  if (by_events > 0)
    t.notes.push_back(std::to_string(by_events) + " ops timed by CUDA events around their kernels' launches" +
                      (cost.empty() ? "" : "; their CUDA calls " + cost));
  else if (!cost.empty())
    t.notes.push_back("the launch timer's CUDA calls " + cost);
  if (split > 0)
    t.notes.push_back(std::to_string(split) + " ops belong to groups NCCL ran as several kernels on one communicator: "
                      "which kernel ran which op is not known, so they keep host times");
  if (d.launch_timer && d.launch_timer->state == static_cast<uint32_t>(nf::LaunchTimerState::kFailed))
    t.notes.push_back("the launch timer could not time NCCL's kernels (" + StringOf(d, d.launch_timer->reason) +
                      "): the ops were timed by NCCL's kernel events or the CUPTI tracer where the file has them");
  else if (d.launch_timer && d.launch_timer->untimed > 0)
    t.notes.push_back(std::to_string(d.launch_timer->untimed) + " of NCCL's kernel launches were not timed by CUDA "
                      "events (captured into a CUDA graph, more than 4,096 in flight, or a CUDA error)");
  if (const uint64_t by_kernels = TimeOpsByKernels(d, op_rows, &t); by_kernels > 0)
    t.notes.push_back(std::to_string(by_kernels) + " ops timed by their kernels' CUPTI records");
  uint64_t untimed = 0;
  for (uint32_t r = 0; r < t.comms.size(); ++r) untimed += (t.comms.flags[r] & model::kCommNoGpuTiming) != 0;
  if (untimed > 0)
    t.notes.push_back(std::to_string(untimed) + " ops have no kernel timing (not recorded, recorded with host times only, or copy-engine ops): "
                      "their start and end are NCCL's host enqueue times");
  FillStatsAndNotes(d, &t);
  return t;
}

}  // namespace commlens::importers
