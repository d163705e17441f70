#include "exporters/perfetto/perfetto_writer.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>

#include "analysis/collectives.h"
#include "model/counter_rates.h"
#include "common/strings.h"
#include "common/json_writer.h"
#include "common/output_file.h"
#include "model/activity_class.h"
#include "model/bus_bandwidth.h"
#include "model/collective.h"

namespace commlens::exporters {

namespace {

using model::TimeNs;

// A JSON string literal; a name that is not UTF-8 keeps the rest (common/json_writer.h).
std::string Quote(std::string_view s) { return JsonString(s); }

// Microseconds with nanosecond decimals, exactly: 1234567 ns -> "1234.567".
void AppendUs(fmt::memory_buffer* b, TimeNs ns) {
  if (ns < 0) {
    b->push_back('-');
    ns = ns == INT64_MIN ? INT64_MAX : -ns;
  }
  fmt::format_to(std::back_inserter(*b), "{}.{:03}", ns / 1000, ns % 1000);
}

// Per-op cross-rank facts from the matched-ops table, for one rank.
struct OpFacts {
  std::vector<uint32_t> match;  // row in MatchedOps, or kNoIndex
  std::vector<TimeNs> wait;     // waited for the last rank to arrive, -1 when unmatched
};

std::vector<OpFacts> CrossRankFacts(const model::Trace& t) {
  std::vector<OpFacts> facts(t.ranks.size());
  for (size_t r = 0; r < t.ranks.size(); ++r) {
    facts[r].match.assign(t.ranks[r].comms.size(), model::kNoIndex);
    facts[r].wait.assign(t.ranks[r].comms.size(), -1);
  }
  const model::MatchedOps& m = t.matched;
  for (uint32_t k = 0; k < m.size(); ++k) {
    TimeNs last = INT64_MIN;
    for (uint32_t j = m.first[k]; j < m.first[k + 1]; ++j) last = std::max(last, m.start[j]);
    for (uint32_t j = m.first[k]; j < m.first[k + 1]; ++j) {
      OpFacts& f = facts[m.rank_index[j]];
      f.match[m.row[j]] = k;
      if (m.members(k) > 1) f.wait[m.row[j]] = std::min(m.end[j] - m.start[j], last - m.start[j]);
    }
  }
  return facts;
}


std::string_view CategoryOf(model::ActivityKind k) {
  switch (k) {
    case model::ActivityKind::kKernel: return "kernel";
    case model::ActivityKind::kMemcpy: return "gpu_memcpy";
    case model::ActivityKind::kMemset: return "gpu_memset";
    case model::ActivityKind::kSync: return "cuda_sync";
  }
  return "kernel";
}

std::string_view HostCategory(model::HostKind k) {
  switch (k) {
    case model::HostKind::kCpuOp: return "cpu_op";
    case model::HostKind::kRuntime: return "cuda_runtime";
    case model::HostKind::kDriver: return "cuda_driver";
    case model::HostKind::kPython: return "python_function";
    case model::HostKind::kOther: return "host";
  }
  return "host";
}

class PerfettoWriter {
 public:
  PerfettoWriter(const model::Trace& t, const ExportOptions& o, OutputFile* out)
      : t_(t), options_(o), selection_(t, o), out_(out), facts_(CrossRankFacts(t)), names_(t.ranks.size()) {}

  void Write() {
    out_->Write("{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n");
    for (size_t r = 0; r < t_.ranks.size(); ++r) WriteRank(r);
    WriteFlows();
    WriteJobCounters();
    out_->Write("\n]}\n");
  }
  uint64_t events() const { return events_; }

 private:
  // Starts an event: the separator and the buffer it is built in.
  fmt::memory_buffer& Begin() {
    buf_.clear();
    if (events_++ > 0) buf_.append(std::string_view(",\n"));
    return buf_;
  }
  void End() { out_->Write(std::string_view(buf_.data(), buf_.size())); }

  const std::string& Name(size_t r, model::StringId id) {
    std::vector<std::string>& cache = names_[r];
    if (cache.empty()) cache.resize(t_.ranks[r].strings.size());
    std::string& s = cache[id.value];
    if (s.empty()) s = Quote(t_.ranks[r].strings.Get(id));
    return s;
  }

  void Meta(int64_t pid, int64_t tid, std::string_view what, const std::string& name, int64_t sort) {
    fmt::memory_buffer& b = Begin();
    fmt::format_to(std::back_inserter(b), R"({{"ph":"M","pid":{},"tid":{},"name":"{}","args":{{"name":{}}}}})", pid,
                   tid, what, Quote(name));
    End();
    fmt::memory_buffer& c = Begin();
    fmt::format_to(std::back_inserter(c), R"({{"ph":"M","pid":{},"tid":{},"name":"{}_sort_index","args":{{"sort_index":{}}}}})",
                   pid, tid, what == "process_name" ? "process" : "thread", sort);
    End();
  }

  void Slice(std::string_view cat, const std::string& quoted_name, int64_t pid, int64_t tid, TimeNs start,
             TimeNs end, std::string_view args) {
    fmt::memory_buffer& b = Begin();
    fmt::format_to(std::back_inserter(b), R"({{"ph":"X","cat":"{}","name":{},"pid":{},"tid":{},"ts":)", cat,
                   quoted_name, pid, tid);
    AppendUs(&b, start);
    b.append(std::string_view(",\"dur\":"));
    AppendUs(&b, end - start);
    if (!args.empty()) {
      b.append(std::string_view(",\"args\":{"));
      b.append(args);
      b.push_back('}');
    }
    b.push_back('}');
    End();
  }

  void WriteRank(size_t r) {
    const model::RankTrace& rank = t_.ranks[r];
    const int64_t pid = rank.rank;
    std::string label = "rank " + std::to_string(rank.rank) + (rank.hostname.empty() ? "" : " (" + rank.hostname + ")");
    Meta(pid, 0, "process_name", label, rank.rank);
    WriteThreadNames(r);
    WriteGpu(r);
    WriteUntimedOps(r);
    WriteHost(r);
    WriteAnnotations(r);
    WriteCounters(rank.counters, pid);
    WriteSourceFlows(r);
    names_[r] = {};  // one rank's quoted names at a time: memory stays flat in the rank count
  }

  void WriteThreadNames(size_t r) {
    const model::RankTrace& rank = t_.ranks[r];
    std::set<std::pair<int32_t, int32_t>> streams;
    for (size_t i = 0; i < rank.gpu.size(); ++i) streams.insert({rank.gpu.device[i], rank.gpu.stream[i]});
    for (const auto& [device, stream] : streams)
      Meta(rank.rank, GpuTrackId(device, stream), "thread_name",
           fmt::format("GPU {} stream {}", device, stream), GpuTrackId(device, stream));
    // Names of the host threads that have events here (the source also names its GPU
    // pseudo-threads and other processes' threads).
    std::set<std::pair<model::ThreadId, model::ThreadId>> used;
    for (size_t i = 0; i < rank.host.size(); ++i) used.insert({rank.host.pid[i], rank.host.tid[i]});
    for (size_t i = 0; i < rank.annotations.size(); ++i)
      if (rank.annotations.device[i] < 0) used.insert({rank.annotations.pid[i], rank.annotations.tid[i]});
    std::set<model::ThreadId> named;
    for (const model::HostThread& th : rank.threads)
      if (th.tid >= 0 && used.count({th.pid, th.tid}) && named.insert(th.tid).second)
        Meta(rank.rank, th.tid, "thread_name", th.name, th.tid);
  }

  std::string CommArgs(size_t r, uint32_t c) {
    const model::RankTrace& rank = t_.ranks[r];
    const model::CommOps& ops = rank.comms;
    std::string a = fmt::format(R"("op":"{}","bytes":{})", model::CommOpName(ops.op[c]), ops.bytes[c]);
    if (ops.group[c] != model::kNoIndex) {
      const model::ProcessGroup& g = rank.groups[ops.group[c]];
      a += fmt::format(R"(,"process_group":{},"group_desc":{},"group_size":{})", Quote(g.name),
                       Quote(g.description), analysis::GroupSizeOf(rank, ops.group[c]));
    }
    if (ops.seq[c] >= 0) a += fmt::format(R"(,"seq":{})", ops.seq[c]);
    if (ops.peer[c] >= 0) a += fmt::format(R"(,"peer":{})", ops.peer[c]);
    const TimeNs d = ops.end[c] - ops.start[c];
    if (ops.bytes[c] > 0 && d > 0) {
      const double algbw = static_cast<double>(ops.bytes[c]) / static_cast<double>(d);
      a += fmt::format(R"(,"algbw_gbps":{:.3f},"busbw_gbps":{:.3f})", algbw,
                       algbw * model::BusBwFactor(ops.op[c], analysis::GroupSizeOf(rank, ops.group[c])));
    }
    if (facts_[r].wait[c] >= 0) {
      fmt::memory_buffer w;
      AppendUs(&w, facts_[r].wait[c]);
      a += R"(,"wait_us":)" + fmt::to_string(w);
    }
    if (ops.algorithm[c].value) a += fmt::format(R"(,"algorithm":{})", Quote(rank.strings.Get(ops.algorithm[c])));
    if (ops.protocol[c].value) a += fmt::format(R"(,"protocol":{})", Quote(rank.strings.Get(ops.protocol[c])));
    if (ops.channels[c] >= 0) a += fmt::format(R"(,"channels":{})", ops.channels[c]);
    if (ops.user_tag[c] != 0) a += fmt::format(R"(,"user_tag":{})", ops.user_tag[c]);
    if (ops.flags[c] & model::kCommSymmetric) a += R"(,"symmetric_kernel":true)";
    if (ops.initial_sync[c] != model::kNoTime) {  // NCCL 2.31's kernel phases
      fmt::memory_buffer w;
      AppendUs(&w, ops.initial_sync[c]);
      a += R"(,"initial_sync_us":)" + fmt::to_string(w);
    }
    return a;
  }

  void WriteGpu(size_t r) {
    const model::RankTrace& rank = t_.ranks[r];
    const model::GpuActivities& g = rank.gpu;
    std::string args;
    for (uint32_t i = 0; i < g.size(); ++i) {
      if (!selection_.Gpu(r, i)) continue;
      args = fmt::format(R"("device":{},"stream":{},"correlation":{})", g.device[i], g.stream[i], g.correlation[i]);
      if (g.bytes[i] >= 0) args += fmt::format(R"(,"bytes":{})", g.bytes[i]);
      if (g.kind[i] == model::ActivityKind::kMemcpy)
        args += fmt::format(R"(,"copy_kind":"{}")", model::CopyKindName(g.copy[i]));
      if (g.comm[i] != model::kNoIndex) args += "," + CommArgs(r, g.comm[i]);
      Slice(CategoryOf(g.kind[i]), Name(r, g.name[i]), rank.rank, GpuTrackId(g.device[i], g.stream[i]), g.start[i],
            g.end[i], args);
    }
  }

  // Ops timed by themselves (recordings): one track of NCCL operations.
  void WriteUntimedOps(size_t r) {
    const model::RankTrace& rank = t_.ranks[r];
    bool named = false;
    for (uint32_t c = 0; c < rank.comms.size(); ++c) {
      if (rank.comms.activity[c] != model::kNoIndex || !selection_.Comm(r, c)) continue;
      if (!named) Meta(rank.rank, kNcclOpsTrack, "thread_name", "NCCL ops", kNcclOpsTrack);
      named = true;
      Slice("nccl", Quote(model::CommOpName(rank.comms.op[c])), rank.rank, kNcclOpsTrack, rank.comms.start[c],
            rank.comms.end[c], CommArgs(r, c));
    }
  }

  void WriteHost(size_t r) {
    const model::RankTrace& rank = t_.ranks[r];
    const model::HostEvents& h = rank.host;
    for (uint32_t i = 0; i < h.size(); ++i) {
      const bool detail = h.kind[i] == model::HostKind::kCpuOp || h.kind[i] == model::HostKind::kPython;
      if (detail && !options_.all_events) continue;
      if (!selection_.Host(r, h.start[i], h.end[i])) continue;
      std::string args = h.correlation[i] ? fmt::format(R"("correlation":{})", h.correlation[i]) : std::string();
      Slice(HostCategory(h.kind[i]), Name(r, h.name[i]), rank.rank, h.tid[i], h.start[i], h.end[i], args);
    }
  }

  void WriteAnnotations(size_t r) {
    const model::RankTrace& rank = t_.ranks[r];
    const model::Annotations& a = rank.annotations;
    for (uint32_t i = 0; i < a.size(); ++i) {
      if (!selection_.Host(r, a.start[i], a.end[i])) continue;
      const bool gpu = a.device[i] >= 0;
      const int64_t tid = gpu ? GpuTrackId(a.device[i], a.tid[i]) : a.tid[i];
      if (a.start[i] == a.end[i]) {
        fmt::memory_buffer& b = Begin();
        fmt::format_to(std::back_inserter(b), R"({{"ph":"i","s":"t","cat":"instant","name":{},"pid":{},"tid":{},"ts":)",
                       Name(r, a.name[i]), rank.rank, tid);
        AppendUs(&b, a.start[i]);
        b.push_back('}');
        End();
        continue;
      }
      std::string args = a.domain[i].value ? fmt::format(R"("domain":{})", Name(r, a.domain[i])) : std::string();
      Slice(gpu ? "gpu_user_annotation" : "user_annotation", Name(r, a.name[i]), rank.rank, tid, a.start[i], a.end[i],
            args);
    }
  }

  // Gauges as sampled; cumulative counters (NIC bytes and packets, NVLink KiB) as their
  // rate per sampling interval ("eth0 net.tx_bytes rate", bytes/s), through
  // model/counter_rates (wraps, resets and gaps handled there, as in analyze and the
  // HTML report): a raw cumulative value only ever grows and says little on a timeline.
  void WriteCounters(const std::vector<model::CounterSeries>& series, int64_t pid) {
    for (const model::CounterSeries& s : series) {
      const std::string label = s.device.empty() ? s.name : s.device + " " + s.name;
      if (s.cumulative) {
        WriteRates(s, label, pid);
        continue;
      }
      std::string name = Quote(label);
      std::string unit = Quote(s.unit.empty() ? "value" : s.unit);
      for (size_t k = 0; k < s.time.size(); ++k) {
        if (!std::isfinite(s.value[k])) continue;
        fmt::memory_buffer& b = Begin();
        fmt::format_to(std::back_inserter(b), R"({{"ph":"C","name":{},"pid":{},"ts":)", name, pid);
        AppendUs(&b, s.time[k]);
        fmt::format_to(std::back_inserter(b), R"(,"args":{{{}:{}}}}})", unit, s.value[k]);
        End();
      }
    }
  }

  void WriteRates(const model::CounterSeries& s, const std::string& label, int64_t pid) {
    const model::CounterRates rates = model::RatesOf(s);
    const std::string name = Quote(label + " rate");
    const std::string unit = Quote(rates.unit + "/s");
    auto point = [&](TimeNs t, double v) {
      fmt::memory_buffer& b = Begin();
      fmt::format_to(std::back_inserter(b), R"({{"ph":"C","name":{},"pid":{},"ts":)", name, pid);
      AppendUs(&b, t);
      fmt::format_to(std::back_inserter(b), R"(,"args":{{{}:{}}}}})", unit, v);
      End();
    };
    for (size_t k = 0; k < rates.size(); ++k) {
      if (!std::isfinite(rates.rate[k])) continue;
      point(rates.start[k], rates.rate[k]);
      // A gap (or the end) drops the track to zero instead of holding the last rate.
      if (k + 1 == rates.size() || rates.start[k + 1] != rates.end[k]) point(rates.end[k], 0);
    }
  }

  // Host- and NIC-owned series: one process per host, after the ranks.
  void WriteJobCounters() {
    std::map<std::string, std::vector<model::CounterSeries>> by_host;
    for (const model::CounterSeries& s : t_.counters) by_host[s.host].push_back(s);
    int64_t pid = kHostProcessBase;
    for (auto& [host, series] : by_host) {
      Meta(pid, 0, "process_name", "host " + (host.empty() ? std::string("?") : host), pid);
      WriteCounters(series, pid);
      ++pid;
    }
  }

  // Where a comm op's slice is: its GPU stream, or the NCCL ops track.
  int64_t TrackOf(const model::RankTrace& rank, uint32_t c) {
    uint32_t a = rank.comms.activity[c];
    return a == model::kNoIndex ? kNcclOpsTrack : GpuTrackId(rank.gpu.device[a], rank.gpu.stream[a]);
  }

  // |cat| and |name| are quoted JSON strings.
  void Flow(char ph, const std::string& cat, int64_t id, int64_t pid, int64_t tid, TimeNs ts, const std::string& name) {
    fmt::memory_buffer& b = Begin();
    fmt::format_to(std::back_inserter(b), R"({{"ph":"{}","cat":{},"id":{},"name":{},"pid":{},"tid":{},"ts":)", ph, cat,
                   id, name, pid, tid);
    AppendUs(&b, ts);
    b.append(std::string_view(ph == 's' ? "}" : ",\"bp\":\"e\"}"));
    End();
  }

  void WriteFlows() {
    const model::MatchedOps& m = t_.matched;
    std::vector<uint32_t> kept;
    for (uint32_t k = 0; k < m.size(); ++k) {
      kept.clear();
      for (uint32_t j = m.first[k]; j < m.first[k + 1]; ++j)
        if (selection_.Comm(m.rank_index[j], m.row[j])) kept.push_back(j);
      if (kept.size() < 2) continue;
      // In arrival order: the arrow ends at the rank the others waited for.
      std::stable_sort(kept.begin(), kept.end(), [&](uint32_t a, uint32_t b) { return m.start[a] < m.start[b]; });
      const model::RankTrace& r0 = t_.ranks[m.rank_index[kept[0]]];
      const std::string name = Quote(fmt::format("{} {}#{}", model::CommOpName(r0.comms.op[m.row[kept[0]]]),
                                                 t_.groups[m.group[k]].name, m.seq[k]));
      const std::string cat = m.kind[k] == model::MatchKind::kP2p ? "\"p2p\"" : "\"collective\"";
      for (size_t n = 0; n < kept.size(); ++n) {
        const uint32_t j = kept[n];
        const model::RankTrace& rank = t_.ranks[m.rank_index[j]];
        const char ph = n == 0 ? 's' : (n + 1 == kept.size() ? 'f' : 't');
        Flow(ph, cat, k + 1, rank.rank, TrackOf(rank, m.row[j]), m.start[j], name);
      }
    }
  }

  // The source's own flows (PyTorch's forward-to-backward links), ids kept apart per rank.
  void WriteSourceFlows(size_t r) {
    const model::RankTrace& rank = t_.ranks[r];
    const model::Flows& f = rank.flows;
    for (uint32_t i = 0; i < f.size(); ++i) {
      if (!selection_.Host(r, f.time[i], f.time[i])) continue;
      const char ph = f.phase[i] == model::FlowPhase::kStart ? 's' : (f.phase[i] == model::FlowPhase::kEnd ? 'f' : 't');
      const int64_t id = (static_cast<int64_t>(r + 1) << 40) | (f.id[i] & ((int64_t{1} << 40) - 1));
      const std::string& cat = f.category[i].value ? Name(r, f.category[i]) : kFlow;
      Flow(ph, cat, id, rank.rank, f.tid[i], f.time[i], cat);
    }
  }

  static constexpr int64_t kHostProcessBase = 1'000'000;
  inline static const std::string kFlow = "\"flow\"";

  const model::Trace& t_;
  const ExportOptions& options_;
  Selection selection_;
  OutputFile* out_;
  std::vector<OpFacts> facts_;
  std::vector<std::vector<std::string>> names_;  // per rank: quoted strings by StringId
  fmt::memory_buffer buf_;
  uint64_t events_ = 0;
};

}  // namespace

Status WritePerfetto(const model::Trace& trace, const std::string& path, const ExportOptions& options,
                     uint64_t* events) {
  COMMLENS_ASSIGN_OR_RETURN(std::unique_ptr<OutputFile> out, OutputFile::Create(path, EndsWith(path, ".gz")));
  PerfettoWriter writer(trace, options, out.get());
  writer.Write();
  if (events) *events = writer.events();
  return out->Commit();
}

}  // namespace commlens::exporters
