#include "model/rank_trace_codec.h"

#include <cstring>
#include <string>
#include <string_view>
#include <type_traits>

#include "common/byte_codec.h"

namespace commlens::model {

namespace {

constexpr uint32_t kMagic = 0x54524c43;  // "CLRT" in a little-endian dump
constexpr uint32_t kVersion = 4;
constexpr uint32_t kByteOrderMark = 0x01020304;

// The fields of each struct, listed once for both directions (|T| is const when
// encoding). Each list is a structured binding of the whole struct: a field added to the
// model and not here stops the build instead of vanishing on the way to rank 0.
template <typename T, typename F>
void GpuColumns(T& t, F&& f) {
  auto& [start, end, name, device, stream, correlation, kind, cls, copy, bytes, comm, launch] = t;
  f(start), f(end), f(name), f(device), f(stream), f(correlation), f(kind), f(cls), f(copy), f(bytes), f(comm);
  f(launch);
}
template <typename T, typename F>
void HostColumns(T& t, F&& f) {
  auto& [start, end, name, pid, tid, correlation, kind] = t;
  f(start), f(end), f(name), f(pid), f(tid), f(correlation), f(kind);
}
template <typename T, typename F>
void AnnotationColumns(T& t, F&& f) {
  auto& [start, end, name, domain, pid, tid, device, depth] = t;
  f(start), f(end), f(name), f(domain), f(pid), f(tid), f(device), f(depth);
}
template <typename T, typename F>
void FlowColumns(T& t, F&& f) {
  auto& [id, category, phase, time, pid, tid] = t;
  f(id), f(category), f(phase), f(time), f(pid), f(tid);
}
template <typename T, typename F>
void CommColumns(T& t, F&& f) {
  auto& [start, end, op, dtype, in_elems, out_elems, bytes, group, seq, peer, activity, algorithm, protocol,
         channels, enqueue, flags, user_tag, launch, initial_sync] = t;
  f(start), f(end), f(op), f(dtype), f(in_elems), f(out_elems), f(bytes), f(group), f(seq), f(peer), f(activity);
  f(algorithm), f(protocol), f(channels), f(enqueue), f(flags), f(user_tag), f(launch), f(initial_sync);
}
template <typename T, typename F>
void DeviceFields(T& d, F&& f) {
  auto& [id, name, sm_count, memory_bytes] = d;
  f(id), f(name), f(sm_count), f(memory_bytes);
}
template <typename T, typename F>
void ThreadFields(T& t, F&& f) {
  auto& [pid, tid, name] = t;
  f(pid), f(tid), f(name);
}
template <typename T, typename F>
void GroupFields(T& g, F&& f) {
  auto& [name, description, ranks, size, comm_hash, self, job_group] = g;
  f(name), f(description), f(ranks), f(size), f(comm_hash), f(self), f(job_group);
}
template <typename T, typename F>
void CounterFields(T& c, F&& f) {
  auto& [name, unit, owner, host, device, cumulative, width_bits, saturates, time, value] = c;
  f(name), f(unit), f(owner), f(host), f(device), f(cumulative), f(width_bits), f(saturates), f(time), f(value);
}
template <typename T, typename F>
void RankFields(T& r, F&& f) {
  auto& [rank, world_size, path, format, backend, nccl_version, hostname, devices, threads, notes, strings, gpu, host,
         annotations, flows, comms, groups, steps, counters, host_counters_only, alive_until, launches_unrecorded, stats,
         input_bytes, part, host_events_dropped, gpu_rows_elsewhere, gpu_last_end] = r;
  f(rank), f(world_size), f(path), f(format), f(backend), f(nccl_version), f(hostname), f(devices), f(threads);
  f(notes), f(strings), f(gpu), f(host), f(annotations), f(flows), f(comms), f(groups), f(steps), f(counters);
  f(host_counters_only), f(alive_until), f(launches_unrecorded), f(stats), f(input_bytes), f(part), f(host_events_dropped);
  f(gpu_rows_elsewhere), f(gpu_last_end);
}
static_assert(std::is_trivially_copyable_v<ProfilerStep>, "ProfilerStep is copied raw");

using Writer = ByteWriter;
using Reader = ByteReader;

// ---- encoding ----

// Writes any field of the model: plain values, strings and columns through the Writer,
// lists of structs item by item, the tables column by column.
struct Encoder {
  Writer& w;

  template <typename T>
  void operator()(const T& v) { w.Field(v); }
  template <typename T>
    requires(!std::is_trivially_copyable_v<T>)
  void operator()(const std::vector<T>& list) {
    w.Count(list.size());
    for (const T& item : list) Item(item);
  }
  void operator()(const StringPool& pool) {
    w.Count(pool.size() - 1);  // id 0, the empty string, every pool has
    for (uint32_t i = 1; i < pool.size(); ++i) w.Str(pool.Get(StringId{i}));
  }
  void operator()(const GpuActivities& t) { GpuColumns(t, *this); }
  void operator()(const HostEvents& t) { HostColumns(t, *this); }
  void operator()(const Annotations& t) { AnnotationColumns(t, *this); }
  void operator()(const Flows& t) { FlowColumns(t, *this); }
  void operator()(const CommOps& t) { CommColumns(t, *this); }
  void operator()(const ImportStats& stats) {
    w.Count(static_cast<size_t>(ImportIssue::kCount));
    for (size_t i = 0; i < static_cast<size_t>(ImportIssue::kCount); ++i) {
      auto issue = static_cast<ImportIssue>(i);
      w.Pod(stats.count(issue));
      w.Count(stats.examples(issue).size());
      for (const ImportStats::Example& e : stats.examples(issue)) {
        w.Pod(e.offset);
        w.Str(e.what);
      }
    }
  }

  void Item(const std::string& s) { w.Str(s); }
  void Item(const Device& d) { DeviceFields(d, *this); }
  void Item(const HostThread& t) { ThreadFields(t, *this); }
  void Item(const ProcessGroup& g) { GroupFields(g, *this); }
  void Item(const CounterSeries& c) { CounterFields(c, *this); }
};

void Encode(const RankTrace& r, Writer& w) {
  w.Pod(kMagic);
  w.Pod(kVersion);
  w.Pod(kByteOrderMark);
  RankFields(r, Encoder{w});
}

// ---- decoding checks ----

template <typename E>
void CheckEnum(Reader& in, const std::vector<E>& c, E last, const char* what) {
  for (E v : c)
    if (static_cast<uint8_t>(v) > static_cast<uint8_t>(last)) return in.Fail(std::string("bad ") + what);
}

void CheckStrings(Reader& in, const std::vector<StringId>& c, size_t pool) {
  for (StringId id : c)
    if (id.value >= pool) return in.Fail("string id " + std::to_string(id.value) + " outside the pool");
}

void CheckRows(Reader& in, const std::vector<uint32_t>& c, size_t rows, const char* what) {
  for (uint32_t row : c)
    if (row != kNoIndex && row >= rows) return in.Fail(std::string(what) + " row " + std::to_string(row) + " out of range");
}

// Every column of |t| as long as the table (its first column): the analyses size their
// loops by the first and index every other column with the same row.
template <typename Table, typename Columns>
void CheckColumns(Reader& in, const Table& t, Columns columns, const char* table) {
  size_t k = 0;
  columns(t, [&](const auto& column) {
    ++k;
    if (in.ok() && column.size() != t.size())
      in.Fail(std::string(table) + ": column " + std::to_string(k) + " (in model/trace.h order) has " +
              std::to_string(column.size()) + " rows, the table " + std::to_string(t.size()));
  });
}

// The model's promise about times (model/trace.h): every row of a span table starts and
// ends within +-2^62 ns and does not end before it starts; counter samples are in range.
// The analyses subtract these times without checking.
void CheckSpans(Reader& in, const std::vector<TimeNs>& start, const std::vector<TimeNs>& end, const char* table) {
  for (size_t i = 0; i < start.size(); ++i)
    if (!TimeInRange(start[i]) || !TimeInRange(end[i]) || end[i] < start[i])
      return in.Fail(std::string(table) + " row " + std::to_string(i) + ": times " + std::to_string(start[i]) +
                     " to " + std::to_string(end[i]) + " ns are out of range or reversed");
}

// What the analyses index by: column lengths, enums, string ids and row references; and
// the times they subtract.
void CheckTables(Reader& in, const RankTrace& r) {
  CheckColumns(in, r.gpu, [](const auto& t, auto&& f) { GpuColumns(t, f); }, "GPU activities");
  CheckColumns(in, r.host, [](const auto& t, auto&& f) { HostColumns(t, f); }, "host events");
  CheckColumns(in, r.annotations, [](const auto& t, auto&& f) { AnnotationColumns(t, f); }, "annotations");
  CheckColumns(in, r.flows, [](const auto& t, auto&& f) { FlowColumns(t, f); }, "flows");
  CheckColumns(in, r.comms, [](const auto& t, auto&& f) { CommColumns(t, f); }, "comm ops");
  for (const CounterSeries& c : r.counters)
    if (in.ok() && c.value.size() != c.time.size())
      in.Fail("counter " + c.name + ": " + std::to_string(c.value.size()) + " values at " +
              std::to_string(c.time.size()) + " times");
  if (!in.ok()) return;
  const size_t pool = r.strings.size();
  CheckEnum(in, r.gpu.kind, ActivityKind::kSync, "activity kind");
  CheckEnum(in, r.gpu.cls, ActivityClass::kUnclassified, "activity class");
  CheckEnum(in, r.gpu.copy, CopyKind::kUnknown, "copy kind");
  CheckStrings(in, r.gpu.name, pool);
  CheckRows(in, r.gpu.comm, r.comms.size(), "comm op");
  CheckEnum(in, r.host.kind, HostKind::kOther, "host kind");
  CheckStrings(in, r.host.name, pool);
  CheckStrings(in, r.annotations.name, pool);
  CheckStrings(in, r.annotations.domain, pool);
  CheckEnum(in, r.flows.phase, FlowPhase::kEnd, "flow phase");
  CheckStrings(in, r.flows.category, pool);
  CheckEnum(in, r.comms.op, static_cast<CommOp>(static_cast<uint8_t>(CommOp::kCount) - 1), "comm op");
  for (const auto* ids : {&r.comms.dtype, &r.comms.algorithm, &r.comms.protocol}) CheckStrings(in, *ids, pool);
  CheckRows(in, r.comms.activity, r.gpu.size(), "activity");
  CheckRows(in, r.comms.group, r.groups.size(), "group");
  for (const CounterSeries& c : r.counters)
    if (static_cast<uint8_t>(c.owner) > static_cast<uint8_t>(CounterOwner::kNic)) return in.Fail("bad counter owner");
  CheckSpans(in, r.gpu.start, r.gpu.end, "GPU activities");
  CheckSpans(in, r.host.start, r.host.end, "host events");
  CheckSpans(in, r.annotations.start, r.annotations.end, "annotations");
  CheckSpans(in, r.comms.start, r.comms.end, "comm ops");
  for (TimeNs sync : r.comms.initial_sync)  // a length: kNoTime, or in [0, kTimeLimit)
    if (in.ok() && sync != kNoTime && (sync < 0 || sync >= kTimeLimit)) return in.Fail("comm op initial sync out of range");
  for (const CounterSeries& c : r.counters)
    for (TimeNs t : c.time)
      if (in.ok() && !TimeInRange(t)) return in.Fail("counter " + c.name + ": a sample time out of range");
}

// ---- decoding ----

// The bytes the smallest item of a list takes (empty strings and columns): a count of
// items that would not fit in what is left is refused before anything is sized by it.
template <typename T>
size_t MinItemBytes() {
  static const size_t bytes = [] {
    Writer w(nullptr);
    Encoder{w}.Item(T{});
    return w.size();
  }();
  return bytes;
}

// Reads what Encoder wrote into the same fields.
struct Decoder {
  Reader& in;

  template <typename T>
  void operator()(T& v) { in.Field(&v); }
  template <typename T>
    requires(!std::is_trivially_copyable_v<T>)
  void operator()(std::vector<T>& list) {
    list.resize(in.Count(MinItemBytes<T>()));
    for (T& item : list) Item(item);
  }
  void operator()(StringPool& pool) {
    size_t n = in.Count(sizeof(uint64_t));
    for (size_t i = 1; i <= n && in.ok(); ++i) {
      std::string s = in.Str();
      if (in.ok() && pool.Intern(s).value != i) return in.Fail("string " + std::to_string(i) + " is a duplicate");
    }
  }
  void operator()(GpuActivities& t) { GpuColumns(t, *this); }
  void operator()(HostEvents& t) { HostColumns(t, *this); }
  void operator()(Annotations& t) { AnnotationColumns(t, *this); }
  void operator()(Flows& t) { FlowColumns(t, *this); }
  void operator()(CommOps& t) { CommColumns(t, *this); }
  void operator()(ImportStats& stats) {
    if (in.Pod<uint64_t>() != static_cast<uint64_t>(ImportIssue::kCount) && in.ok())
      return in.Fail("import issue kinds differ from this build's");
    for (size_t i = 0; i < static_cast<size_t>(ImportIssue::kCount) && in.ok(); ++i) {
      uint64_t count = in.Pod<uint64_t>();
      std::vector<ImportStats::Example> examples(in.Count(2 * sizeof(uint64_t)));
      for (ImportStats::Example& e : examples) {
        e.offset = in.Pod<uint64_t>();
        e.what = in.Str();
      }
      stats.Restore(static_cast<ImportIssue>(i), count, std::move(examples));
    }
  }

  void Item(std::string& s) { s = in.Str(); }
  void Item(Device& d) { DeviceFields(d, *this); }
  void Item(HostThread& t) { ThreadFields(t, *this); }
  void Item(ProcessGroup& g) { GroupFields(g, *this); }
  void Item(CounterSeries& c) { CounterFields(c, *this); }
};

void Decode(Reader& in, RankTrace* r) {
  if (in.Pod<uint32_t>() != kMagic) return in.Fail("not a rank trace encoding (magic)");
  if (uint32_t v = in.Pod<uint32_t>(); v != kVersion)
    return in.Fail("codec version " + std::to_string(v) + ", this build reads " + std::to_string(kVersion));
  if (in.Pod<uint32_t>() != kByteOrderMark) return in.Fail("written on a machine of another byte order");
  RankFields(*r, Decoder{in});
  if (in.ok() && in.left() != 0) in.Fail(std::to_string(in.left()) + " bytes after the end");
  if (in.ok()) CheckTables(in, *r);
}

}  // namespace

void EncodeRankTrace(const RankTrace& rank, std::vector<uint8_t>* out) {
  Writer counting(nullptr);
  Encode(rank, counting);
  out->reserve(out->size() + counting.size());
  Writer w(out);
  Encode(rank, w);
}

Result<RankTrace> DecodeRankTrace(std::span<const uint8_t> bytes) {
  Reader in(bytes, "rank trace encoding");
  RankTrace r;
  Decode(in, &r);
  if (!in.ok()) return Error(in.error());
  return r;
}

}  // namespace commlens::model
