#include "importers/nsys/nsys_importer.h"

#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <filesystem>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <unordered_map>

#include "common/file.h"
#include "common/strings.h"
#include "importers/common/chunked_source.h"
#include "importers/nsys/export_strings.h"
#include "importers/nsys/nccl_calls.h"
#include "importers/nsys/nvtx_payload.h"
#include "importers/nsys/sqlite_db.h"
#include "common/launch_env.h"

namespace commlens::importers {

using model::ActivityKind;
using model::HostKind;
using model::ImportIssue;
using model::TimeNs;
using nsys::Database;
using nsys::Statement;

namespace {

constexpr std::string_view kSqliteMagic{"SQLite format 3\0", 16};

// nsys's ids: globalTid = <HW:8><VM:8><PID:24><TID:24>; globalPid holds the PID part.
int64_t PidOf(int64_t global_id) { return (global_id >> 24) & 0xFFFFFF; }
int64_t TidOf(int64_t global_tid) { return global_tid & 0xFFFFFF; }

// NVTX event types (ENUM_NSYS_EVENT_TYPE).
constexpr int64_t kNvtxMark = 34;
constexpr int64_t kNvtxPushPop = 59;
constexpr int64_t kNvtxStartEnd = 60;
constexpr int64_t kNvtxDomainCreate = 75;

// A gzipped export inflates to at most this many times its size, plus kInflateSlack: real
// exports shrink 3 to 5 times, and a gzip bomb (up to 1000 times) must not fill $TMPDIR.
constexpr uint64_t kMaxInflateRatio = 100;
constexpr uint64_t kInflateSlack = 64 << 20;

// A gzipped export is inflated into a temporary file SQLite can open, removed afterwards.
class TempCopy {
 public:
  ~TempCopy() {
    if (!path_.empty()) ::unlink(path_.c_str());
  }
  const std::string& path() const { return path_; }

  Status Inflate(const std::string& source) {
    COMMLENS_ASSIGN_OR_RETURN(ChunkedSource in, ChunkedSource::Open(source));
    const char* dir = std::getenv("TMPDIR");
    std::string templ = std::string(dir && *dir ? dir : "/tmp") + "/commlens-nsys-XXXXXX";
    std::vector<char> name(templ.begin(), templ.end());
    name.push_back('\0');
    int fd = ::mkstemp(name.data());
    if (fd < 0) return Error(source + ": cannot create a temporary file in " + templ + " to inflate it into");
    path_ = name.data();
    std::unique_ptr<FILE, int (*)(FILE*)> out(::fdopen(fd, "wb"), &std::fclose);
    if (!out) return Error(source + ": cannot write the temporary file " + path_);
    std::vector<char> buf(1 << 20);
    const uint64_t limit = in.file_bytes() * kMaxInflateRatio + kInflateSlack;
    for (;;) {
      COMMLENS_ASSIGN_OR_RETURN(size_t n, in.Read(buf.data(), buf.size()));
      if (n == 0) break;
      if (in.decoded_bytes() > limit)
        return Error(source + ": inflates to more than " + std::to_string(limit) + " bytes (" +
                     std::to_string(kMaxInflateRatio) + " times its size, plus 64 MiB): not an export nsys wrote");
      if (std::fwrite(buf.data(), 1, n, out.get()) != n)
        return Error(source + ": cannot write the inflated copy to " + path_ + " (disk full? set TMPDIR)");
    }
    if (std::fflush(out.get()) != 0) return Error(source + ": cannot write the inflated copy to " + path_);
    return OkStatus();
  }

 private:
  std::string path_;
};

// Processes given a vector cache of the string table (InternCache); the others, of which
// a real export has none (it profiles a node's ranks and their launcher), get a map.
constexpr size_t kDenseCacheProcesses = 16;
// Entries of one NVTX payload schema: NCCL's have up to 8. Each range's payload is decoded
// entry by entry, so a bound keeps the decoding linear in the file's size.
constexpr size_t kMaxSchemaEntries = 256;

// A 32-bit id, signed or not: CUPTI's are unsigned (a sync marker's stream 0xFFFFFFFF is
// "none", -1 once cast); the model keeps them as int32.
bool Fits32Bits(int64_t v) { return v >= INT32_MIN && v <= UINT32_MAX; }

// Why a time column was not used (ExportReader::Time).
constexpr std::string_view kNotATime = "is not a time (not an integer, or beyond 2^62 ns)";

// One profiled process becoming one rank.
struct Process {
  explicit Process(int64_t id, bool dense_cache) : pid(id), strings(dense_cache) {}
  int64_t pid = 0;
  model::RankTrace rank;
  nsys::InternCache strings;
  std::vector<nsys::NcclRange> nccl;
  std::map<int64_t, model::StringId> domain_names;  // NVTX domain id -> its name in the pool

  model::StringId Intern(const nsys::ExportStrings& table, int64_t id) {
    return strings.Intern(table, id, &rank.strings);
  }
};

// The columns every CUPTI activity table shares, checked.
struct Activity {
  TimeNs start = 0, end = 0;
  int32_t device = 0, stream = 0;
  int64_t correlation = 0;
};

// "cudaLaunchKernel_v7000" -> "cudaLaunchKernel": nsys adds the API version to runtime
// names; Kineto and the CUDA docs do not.
std::string_view WithoutVersionSuffix(std::string_view name) {
  size_t at = name.rfind("_v");
  if (at == std::string_view::npos || at + 2 == name.size()) return name;
  for (size_t i = at + 2; i < name.size(); ++i)
    if (name[i] < '0' || name[i] > '9') return name;
  return name.substr(0, at);
}

std::string_view CopyName(int64_t kind, model::CopyKind* copy) {
  switch (kind) {  // ENUM_CUDA_MEMCPY_OPER
    case 1: case 11: *copy = model::CopyKind::kHtoD; return "Memcpy HtoD";
    case 2: case 12: *copy = model::CopyKind::kDtoH; return "Memcpy DtoH";
    case 8: case 13: *copy = model::CopyKind::kDtoD; return "Memcpy DtoD";
    case 9: *copy = model::CopyKind::kHtoH; return "Memcpy HtoH";
    case 10: *copy = model::CopyKind::kPtoP; return "Memcpy PtoP";
    default: *copy = model::CopyKind::kUnknown; return "Memcpy";
  }
}

std::string_view SyncName(int64_t type) {
  switch (type) {  // ENUM_CUPTI_SYNC_TYPE, named as Kineto names its cuda_sync events
    case 1: return "Event Sync";
    case 2: return "Stream Wait Event";
    case 3: return "Stream Sync";
    case 4: return "Context Sync";
    default: return "Sync";
  }
}

class ExportReader {
 public:
  ExportReader(const Database& db, std::string path) : db_(db), path_(std::move(path)) {}

  Result<std::vector<model::RankTrace>> Read() {
    COMMLENS_RETURN_IF_ERROR(CheckExport());
    COMMLENS_RETURN_IF_ERROR(strings_.Load(db_, &export_stats_));
    COMMLENS_RETURN_IF_ERROR(ReadSession());
    COMMLENS_RETURN_IF_ERROR(ReadKernels());
    COMMLENS_RETURN_IF_ERROR(ReadCopies());
    COMMLENS_RETURN_IF_ERROR(ReadSets());
    COMMLENS_RETURN_IF_ERROR(ReadSyncs());
    COMMLENS_RETURN_IF_ERROR(ReadPayloadSchemas());
    COMMLENS_RETURN_IF_ERROR(ReadNvtx());
    COMMLENS_RETURN_IF_ERROR(ReadRuntime());
    COMMLENS_RETURN_IF_ERROR(ReadNames());
    COMMLENS_RETURN_IF_ERROR(ReadGpuMetrics());
    return Finish();
  }

 private:
  // Column |c| as Unix-epoch ns: false when it is not an integer or the time is beyond
  // +-2^62 ns (model::TimeInRange) once the session start is added.
  bool Time(const Statement& s, int c, TimeNs* out) const { return s.IsInt(c) && Epoch(s.Int(c), out); }
  bool Epoch(int64_t ts, TimeNs* out) const {
    return !__builtin_add_overflow(base_, ts, out) && model::TimeInRange(*out);
  }

  Process* Find(int64_t pid) {
    auto it = processes_.find(pid);
    return it == processes_.end() ? nullptr : it->second.get();
  }
  Process* FindOrAdd(int64_t pid) {
    auto& p = processes_[pid];
    if (!p) p = std::make_unique<Process>(pid, processes_.size() <= kDenseCacheProcesses);
    return p.get();
  }

  Status CheckExport() {
    COMMLENS_ASSIGN_OR_RETURN(bool has_meta, db_.HasTable("META_DATA_EXPORT"));
    if (!has_meta)
      return Error(path_ + ": a SQLite database, but not an Nsight Systems export (no META_DATA_EXPORT table)");
    COMMLENS_ASSIGN_OR_RETURN(Statement s, db_.Prepare("SELECT name, value FROM META_DATA_EXPORT"));
    for (;;) {
      COMMLENS_ASSIGN_OR_RETURN(bool row, s.Next());
      if (!row) break;
      std::string_view name = s.Text(0);
      if (name == "EXPORT_SCHEMA_VERSION") schema_version_ = std::string(s.Text(1));
      else if (name == "EXPORT_SCHEMA_VERSION_MAJOR") schema_major_ = std::string(s.Text(1));
      else if (name == "EXPORT_PRODUCT_VERSION") product_ = std::string(s.Text(1));
    }
    int major = -1;
    if (!schema_major_.empty()) std::from_chars(schema_major_.data(), schema_major_.data() + schema_major_.size(), major);
    else if (!schema_version_.empty()) std::from_chars(schema_version_.data(), schema_version_.data() + schema_version_.size(), major);
    if (major != kNsysSchemaMajor)
      return Error(path_ + ": Nsight Systems export schema version " +
                   (schema_version_.empty() ? std::string("(none)") : schema_version_) +
                   ", commlens reads major version " + std::to_string(kNsysSchemaMajor) +
                   " (re-export with an Nsight Systems release whose schema is 3.x)");
    return OkStatus();
  }

  Status ReadSession() {
    COMMLENS_ASSIGN_OR_RETURN(bool has_start, db_.HasTable("TARGET_INFO_SESSION_START_TIME"));
    if (has_start) {
      COMMLENS_ASSIGN_OR_RETURN(Statement s, db_.Prepare("SELECT utcEpochNs FROM TARGET_INFO_SESSION_START_TIME"));
      COMMLENS_ASSIGN_OR_RETURN(bool row, s.Next());
      if (row && !s.IsNull(0)) {
        // A Unix time before 2^62 ns (the year 2116); anything else is not a clock.
        if (s.IsInt(0) && s.Int(0) >= 0 && s.Int(0) < model::kTimeLimit) {
          base_ = s.Int(0);
        } else {
          notes_.push_back("the session start time in the export (" + std::string(s.Text(0)) +
                           ") is not a Unix time in ns");
        }
      }
    }
    if (base_ == 0) notes_.push_back("no session start time in the export: times are nsys session times, not Unix time");
    COMMLENS_ASSIGN_OR_RETURN(bool has_env, db_.HasTable("TARGET_INFO_SYSTEM_ENV"));
    if (has_env) {
      COMMLENS_ASSIGN_OR_RETURN(Statement s, db_.Prepare("SELECT name, value FROM TARGET_INFO_SYSTEM_ENV"));
      for (;;) {
        COMMLENS_ASSIGN_OR_RETURN(bool row, s.Next());
        if (!row) break;
        std::string_view name = s.Text(0);
        if (name == "Hostname") hostname_ = std::string(s.Text(1));
        else if (name == "DeviceEnvironment") environment_ = std::string(s.Text(1));
      }
    }
    return OkStatus();
  }

  // Runs |sql| over a table when the export has it (nsys creates tables lazily: a report
  // with no memset has no memset table).
  template <typename Row>
  Status ForEachRow(std::string_view table, const std::string& sql, Row&& row_fn) {
    COMMLENS_ASSIGN_OR_RETURN(bool has, db_.HasTable(table));
    if (!has) return OkStatus();
    COMMLENS_ASSIGN_OR_RETURN(Statement s, db_.Prepare(sql));
    for (uint64_t n = 0;; ++n) {
      COMMLENS_ASSIGN_OR_RETURN(bool row, s.Next());
      if (!row) break;
      row_fn(s, n);
    }
    return OkStatus();
  }

  // A row's start and end (columns 0 and 1), counted when unusable.
  bool RowTimes(Process* p, const Statement& s, std::string_view table, uint64_t n, TimeNs* start, TimeNs* end) {
    const bool integers = s.IsInt(0) && s.IsInt(1);  // one type look-up per column on the usual path
    if (!integers && (s.IsNull(0) || s.IsNull(1))) {
      p->rank.stats.Count(ImportIssue::kMissingTime, n, std::string(table) + " row without start or end");
      return false;
    }
    if (!integers || !Epoch(s.Int(0), start) || !Epoch(s.Int(1), end)) {
      p->rank.stats.Count(ImportIssue::kMissingTime, n,
                          std::string(table) + " row whose start or end " + std::string(kNotATime));
      return false;
    }
    if (*end < *start) {
      p->rank.stats.Count(ImportIssue::kNegativeDuration, n, std::string(table) + " row ends before it starts");
      return false;
    }
    return true;
  }

  // Rows of a CUPTI activity table: its shared columns (start, end, deviceId, streamId,
  // correlationId, globalPid) then |extra|; |row_fn(process, statement, n)| appends one.
  // A table's rows make their process a rank when |makes_ranks| (GPU work does; sync
  // markers alone do not).
  template <typename Row>
  Status ReadActivities(std::string_view table, std::string_view extra, bool makes_ranks, Row&& row_fn) {
    const std::string sql = "SELECT start, end, deviceId, streamId, correlationId, globalPid, " + std::string(extra) +
                            " FROM " + std::string(table);
    return ForEachRow(table, sql, [&](const Statement& s, uint64_t n) {
      Process* p = makes_ranks ? FindOrAdd(PidOf(s.Int(5))) : Find(PidOf(s.Int(5)));
      Activity a;
      if (!p || !RowTimes(p, s, table, n, &a.start, &a.end)) return;
      if (!Fits32Bits(s.Int(2)) || !Fits32Bits(s.Int(3))) {
        p->rank.stats.Count(ImportIssue::kBadRecord, n,
                            std::string(table) + " row whose deviceId or streamId is out of range");
        return;
      }
      a.device = static_cast<int32_t>(s.Int(2));
      a.stream = static_cast<int32_t>(s.Int(3));
      a.correlation = s.Int(4);
      row_fn(p, s, a);
    });
  }

  // The GPU row of an activity table's row.
  uint32_t AppendActivity(Process* p, const Activity& a, model::StringId name, ActivityKind kind) {
    return p->rank.gpu.Append(a.start, a.end, name, a.device, a.stream, a.correlation, kind);
  }

  Status ReadKernels() {
    const bool demangled = db_.HasColumn("CUPTI_ACTIVITY_KIND_KERNEL", "demangledName");
    return ReadActivities("CUPTI_ACTIVITY_KIND_KERNEL", demangled ? "demangledName, shortName" : "shortName, shortName",
                          true, [&](Process* p, const Statement& s, const Activity& a) {
                            const int64_t name_id = s.IsNull(6) ? s.Int(7) : s.Int(6);
                            AppendActivity(p, a, p->Intern(strings_, name_id), ActivityKind::kKernel);
                          });
  }

  Status ReadCopies() {
    return ReadActivities("CUPTI_ACTIVITY_KIND_MEMCPY", "bytes, copyKind", true,
                          [&](Process* p, const Statement& s, const Activity& a) {
                            model::CopyKind copy;
                            const std::string_view name = CopyName(s.Int(7), &copy);
                            const uint32_t row =
                                AppendActivity(p, a, p->rank.strings.Intern(name), ActivityKind::kMemcpy);
                            p->rank.gpu.copy[row] = copy;
                            p->rank.gpu.bytes[row] = s.Int(6);
                          });
  }

  Status ReadSets() {
    return ReadActivities("CUPTI_ACTIVITY_KIND_MEMSET", "bytes", true,
                          [&](Process* p, const Statement& s, const Activity& a) {
                            const uint32_t row =
                                AppendActivity(p, a, p->rank.strings.Intern("Memset"), ActivityKind::kMemset);
                            p->rank.gpu.bytes[row] = s.Int(6);
                          });
  }

  Status ReadSyncs() {
    return ReadActivities("CUPTI_ACTIVITY_KIND_SYNCHRONIZATION", "syncType", false,
                          [&](Process* p, const Statement& s, const Activity& a) {
                            AppendActivity(p, a, p->rank.strings.Intern(SyncName(s.Int(6))), ActivityKind::kSync);
                          });
  }

  Status ReadPayloadSchemas() {
    COMMLENS_RETURN_IF_ERROR(ForEachRow(
        "NVTX_PAYLOAD_SCHEMA_ENTRIES", "SELECT domainId, schemaId, type, name, offset FROM NVTX_PAYLOAD_SCHEMA_ENTRIES ORDER BY domainId, schemaId, idx",
        [&](const Statement& s, uint64_t n) {
          if (!schemas_.AddEntry(s.Int(0), static_cast<uint64_t>(s.Int(1)),
                                 {std::string(s.Text(3)), static_cast<uint64_t>(s.Int(2)), static_cast<uint64_t>(s.Int(4))},
                                 kMaxSchemaEntries))
            export_stats_.Count(ImportIssue::kBadRecord, n,
                                "NVTX_PAYLOAD_SCHEMA_ENTRIES: more than " + std::to_string(kMaxSchemaEntries) +
                                    " entries in schema " + std::to_string(s.Int(1)));
        }));
    COMMLENS_RETURN_IF_ERROR(ForEachRow("NVTX_PAYLOAD_ENUMS", "SELECT domainId, schemaId, size FROM NVTX_PAYLOAD_ENUMS",
                                        [&](const Statement& s, uint64_t) {
                                          schemas_.AddEnum(s.Int(0), static_cast<uint64_t>(s.Int(1)),
                                                           s.IsNull(2) ? 4 : static_cast<uint64_t>(s.Int(2)));
                                        }));
    return ForEachRow("NVTX_PAYLOAD_ENUM_ENTRIES", "SELECT domainId, schemaId, value, name FROM NVTX_PAYLOAD_ENUM_ENTRIES",
                      [&](const Statement& s, uint64_t) {
                        schemas_.AddEnumValue(s.Int(0), static_cast<uint64_t>(s.Int(1)), s.IsNull(2) ? 0 : s.Int(2),
                                              std::string(s.Text(3)));
                      });
  }

  Status ReadNvtx() {
    COMMLENS_ASSIGN_OR_RETURN(bool has, db_.HasTable("NVTX_EVENTS"));
    if (!has) return OkStatus();
    const bool blobs = db_.HasColumn("NVTX_EVENTS", "binaryData");
    // Domains first: their ids name the ranges' domains ("NCCL").
    COMMLENS_RETURN_IF_ERROR(ForEachRow("NVTX_EVENTS",
                                        "SELECT domainId, text FROM NVTX_EVENTS WHERE eventType = " +
                                            std::to_string(kNvtxDomainCreate),
                                        [&](const Statement& s, uint64_t) { domains_[s.Int(0)] = std::string(s.Text(1)); }));
    int64_t nccl_domain = -1;
    for (const auto& [id, name] : domains_)
      if (name == "NCCL") nccl_domain = id;
    std::vector<nsys::PayloadField> fields;
    const std::string sql = std::string("SELECT start, end, eventType, globalTid, text, textId, domainId, ") +
                            (blobs ? "binaryData" : "NULL") + " FROM NVTX_EVENTS WHERE eventType IN (" +
                            std::to_string(kNvtxMark) + "," + std::to_string(kNvtxPushPop) + "," +
                            std::to_string(kNvtxStartEnd) + ")";
    return ForEachRow("NVTX_EVENTS", sql, [&](const Statement& s, uint64_t n) {
      const int64_t domain = s.IsNull(6) ? 0 : s.Int(6);
      const bool is_nccl = domain == nccl_domain && nccl_domain >= 0;
      const int64_t gtid = s.Int(3);
      Process* p = is_nccl ? FindOrAdd(PidOf(gtid)) : Find(PidOf(gtid));
      if (!p) {
        ++skipped_rows_;
        return;
      }
      const bool mark = s.Int(2) == kNvtxMark;
      if (!mark && s.IsNull(1)) {
        p->rank.stats.Count(ImportIssue::kMissingTime, n, "NVTX range that never ended");
        return;
      }
      TimeNs start = 0, end = 0;
      if (!Time(s, 0, &start) || (!mark && !Time(s, 1, &end))) {
        p->rank.stats.Count(ImportIssue::kMissingTime, n, "NVTX event whose start or end " + std::string(kNotATime));
        return;
      }
      if (mark) end = start;
      if (end < start) {
        p->rank.stats.Count(ImportIssue::kNegativeDuration, n, "NVTX range ends before it starts");
        return;
      }
      model::StringId name = s.IsNull(4) ? p->Intern(strings_, s.Int(5)) : p->rank.strings.Intern(s.Text(4));
      auto [dom_name, added] = p->domain_names.try_emplace(domain);
      if (added) {  // interned once per domain, not per range
        auto dom = domains_.find(domain);
        dom_name->second = p->rank.strings.Intern(dom == domains_.end() ? std::string_view{} : dom->second);
      }
      p->rank.annotations.Append(start, end, name, dom_name->second, p->pid, TidOf(gtid), -1);
      if (!is_nccl || mark) return;
      nsys::NcclRange r;
      r.tid = TidOf(gtid);
      r.start = start;
      r.end = end;
      r.api = p->rank.strings.Get(name);
      std::string_view blob = s.Blob(7);
      if (!blob.empty()) {
        Status st = nsys::DecodePayload(blob, domain, schemas_, &fields);
        if (st.ok()) {
          nsys::ReadNcclFields(fields, &r);
        } else {
          p->rank.stats.Count(ImportIssue::kBadCollectiveArgs, n,
                              "NCCL " + std::string(r.api) + " payload: " + st.message());
        }
      }
      p->nccl.push_back(r);
    });
  }

  Status ReadRuntime() {
    return ForEachRow("CUPTI_ACTIVITY_KIND_RUNTIME",
                      "SELECT start, end, globalTid, correlationId, nameId, eventClass FROM CUPTI_ACTIVITY_KIND_RUNTIME",
                      [&](const Statement& s, uint64_t n) {
                        const int64_t gtid = s.Int(2);
                        Process* p = Find(PidOf(gtid));
                        if (!p) {
                          ++skipped_rows_;
                          return;
                        }
                        TimeNs start = 0, end = 0;
                        if (!RowTimes(p, s, "CUDA API", n, &start, &end)) return;
                        int64_t id = s.Int(4);
                        model::StringId name = p->rank.strings.Intern(WithoutVersionSuffix(strings_.Get(id)));
                        p->rank.host.Append(start, end, name, p->pid, TidOf(gtid), s.Int(3),
                                            s.Int(5) == 1 ? HostKind::kDriver : HostKind::kRuntime);
                      });
  }

  Status ReadNames() {
    COMMLENS_RETURN_IF_ERROR(ForEachRow("PROCESSES", "SELECT pid, name FROM PROCESSES", [&](const Statement& s, uint64_t) {
      if (Process* p = Find(s.Int(0))) p->rank.threads.push_back({static_cast<model::ThreadId>(p->pid), -1, std::string(s.Text(1))});
    }));
    COMMLENS_RETURN_IF_ERROR(ForEachRow("ThreadNames", "SELECT globalTid, nameId FROM ThreadNames", [&](const Statement& s, uint64_t) {
      if (Process* p = Find(PidOf(s.Int(0))))
        p->rank.threads.push_back({static_cast<model::ThreadId>(p->pid), model::ToThreadId(TidOf(s.Int(0))),
                                   std::string(strings_.Get(s.Int(1)))});
    }));
    return ForEachRow("TARGET_INFO_GPU", "SELECT id, name, smCount, totalMemory FROM TARGET_INFO_GPU",
                      [&](const Statement& s, uint64_t n) {
                        if (!Fits32Bits(s.Int(0)) || !Fits32Bits(s.Int(2))) {
                          export_stats_.Count(ImportIssue::kBadRecord, n,
                                              "TARGET_INFO_GPU row whose id or smCount is out of range");
                          return;
                        }
                        gpus_.push_back({static_cast<int>(s.Int(0)), std::string(s.Text(1)), static_cast<int>(s.Int(2)), s.Int(3)});
                      });
  }

  // GPU metrics sampling (`nsys profile --gpu-metrics-devices`): one counter series per
  // (GPU, metric), owned by the GPU and given to the rank whose process used that GPU.
  // Units come from the bracket of a metric's name ("SMs Active [Throughput %]": %); clock
  // frequencies named "[MHz]" are stored by nsys in Hz and converted.
  Status ReadGpuMetrics() {
    COMMLENS_ASSIGN_OR_RETURN(bool has_metrics, db_.HasTable("GPU_METRICS"));
    COMMLENS_ASSIGN_OR_RETURN(bool has_names, db_.HasTable("TARGET_INFO_GPU_METRICS"));
    if (!has_metrics || !has_names) return OkStatus();
    std::map<std::pair<int64_t, int64_t>, std::string> names;
    COMMLENS_RETURN_IF_ERROR(ForEachRow("TARGET_INFO_GPU_METRICS", "SELECT typeId, metricId, metricName FROM TARGET_INFO_GPU_METRICS",
                                        [&](const Statement& s, uint64_t) { names[{s.Int(0), s.Int(1)}] = std::string(s.Text(2)); }));
    std::map<int, model::RankTrace*> by_gpu;
    for (auto& [pid, p] : processes_)
      for (int32_t d : p->rank.gpu.device) by_gpu.emplace(d, &p->rank);
    struct Target {
      model::RankTrace* rank = nullptr;  // the series is rank->counters[index]
      size_t index = 0;
      double scale = 1.0;
    };
    std::map<std::pair<int64_t, int64_t>, Target> targets;
    return ForEachRow("GPU_METRICS", "SELECT timestamp, typeId, metricId, value FROM GPU_METRICS ORDER BY timestamp",
                      [&](const Statement& s, uint64_t n) {
                        const std::pair<int64_t, int64_t> key{s.Int(1), s.Int(2)};
                        auto [it, added] = targets.emplace(key, Target{});
                        if (added) {
                          const int gpu = static_cast<int>(key.first & 0xFF);  // typeId's low byte
                          auto owner = by_gpu.find(gpu);
                          if (owner == by_gpu.end()) return;  // a GPU no rank used
                          std::string name = names.count(key) ? names[key] : "metric " + std::to_string(key.second);
                          std::string unit;
                          // "[MHz]" and "[Throughput %]" are units; "[Avg]" and "[Avg Warps per
                          // Cycle]" tell apart metrics of one name, so they stay in it.
                          if (size_t open = name.rfind(" ["); open != std::string::npos && name.back() == ']') {
                            const std::string bracket = name.substr(open + 2, name.size() - open - 3);
                            if (bracket == "MHz" || bracket == "Throughput %") {
                              unit = bracket == "MHz" ? "MHz" : "%";
                              name.resize(open);
                            }
                          }
                          if (unit == "MHz") it->second.scale = 1e-6;
                          model::CounterSeries series;
                          series.name = "gpu." + name;
                          series.unit = unit;
                          series.owner = model::CounterOwner::kDevice;
                          series.host = hostname_;
                          series.device = std::to_string(gpu);
                          it->second.rank = owner->second;
                          it->second.index = owner->second->counters.size();
                          owner->second->counters.push_back(std::move(series));
                        }
                        const Target& t = it->second;
                        if (!t.rank) return;
                        TimeNs time = 0;
                        if (!Time(s, 0, &time)) {
                          t.rank->stats.Count(ImportIssue::kMissingTime, n,
                                              "GPU_METRICS sample whose timestamp " + std::string(kNotATime));
                          return;
                        }
                        model::CounterSeries& series = t.rank->counters[t.index];
                        series.time.push_back(time);
                        series.value.push_back(static_cast<double>(s.Int(3)) * t.scale);
                      });
  }

  // The rank the launcher gave the profiled process (a report of one process): its
  // environment as nsys recorded it ("NAME=value;..."), read by the launcher detection the
  // recorder and the plugin use (common/launch_env.h). -1 without a launcher.
  int RankFromEnvironment(std::string* which) const {
    std::map<std::string, std::string, std::less<>> vars;
    for (size_t start = 0; start < environment_.size();) {
      size_t end = environment_.find(';', start);
      if (end == std::string::npos) end = environment_.size();
      const std::string_view entry(environment_.data() + start, end - start);
      if (const size_t eq = entry.find('='); eq != std::string_view::npos)
        vars.emplace(std::string(entry.substr(0, eq)), std::string(entry.substr(eq + 1)));
      start = end + 1;
    }
    const launch_env::LaunchEnv env = launch_env::DetectLaunchEnv([&](const char* name) -> const char* {
      auto it = vars.find(name);
      return it == vars.end() ? nullptr : it->second.c_str();
    });
    if (env.single_process() || env.rank < 0) return -1;
    *which = env.rank_variable + " (" + std::string(launch_env::LauncherName(env.launcher)) + ")";
    return env.rank;
  }

  Result<std::vector<model::RankTrace>> Finish() {
    // Processes that ran no GPU work and made no NCCL call are not ranks (launchers,
    // compile workers); their rows were skipped.
    std::vector<Process*> ranks;
    for (auto& [pid, p] : processes_)
      if (p->rank.gpu.size() > 0 || !p->nccl.empty()) ranks.push_back(p.get());
    if (ranks.empty())
      return Error(path_ + ": the Nsight Systems export holds no CUDA kernels, copies or NCCL calls "
                           "(was the report made with -t cuda?)");
    std::vector<model::RankTrace> out;
    for (Process* p : ranks) {
      model::RankTrace& r = p->rank;
      r.path = path_;
      r.format = "nsys";
      r.hostname = hostname_;
      r.notes.insert(r.notes.end(), notes_.begin(), notes_.end());
      if (ranks.size() > 1)
        r.notes.push_back("process " + std::to_string(p->pid) + " of a report holding " + std::to_string(ranks.size()) +
                          " profiled processes");
      nsys::NcclSummary nccl = nsys::AppendNcclCalls(p->nccl, &r);
      if (nccl.world_rank >= 0) {
        r.rank = nccl.world_rank;
        r.world_size = nccl.world_size;
        r.backend = "nccl";
        r.notes.push_back("rank " + std::to_string(r.rank) + " of " + std::to_string(r.world_size) +
                          " from NCCL's init payload of its largest communicator");
      } else if (ranks.size() == 1) {
        std::string which;
        r.rank = RankFromEnvironment(&which);
        if (r.rank >= 0) r.notes.push_back("rank " + std::to_string(r.rank) + " from " + which + " in the profiled environment");
      }
      if (nccl.ranges_without_payload > 0)
        r.notes.push_back(std::to_string(nccl.ranges_without_payload) +
                          " NCCL calls carry no payload in this export: their message sizes are unknown (no "
                          "bandwidth) and their communicators are taken from the CUDA stream their kernel ran on; "
                          "re-export with `nsys export --type sqlite --include-blobs=true` for both");
      for (const auto& gpu : gpus_)
        if (std::find(r.gpu.device.begin(), r.gpu.device.end(), gpu.id) != r.gpu.device.end()) r.devices.push_back(gpu);
      if (&r == &ranks.front()->rank) {  // what concerns the whole file, once
        if (skipped_rows_ > 0)
          r.notes.push_back(std::to_string(skipped_rows_) + " NVTX/CUDA API rows of processes that ran no GPU work were left out");
        r.stats.Merge(export_stats_);
      }
      out.push_back(std::move(r));
    }
    return out;
  }

  const Database& db_;
  std::string path_;
  std::string schema_version_, schema_major_, product_;
  TimeNs base_ = 0;
  std::string hostname_, environment_;
  std::vector<std::string> notes_;
  model::ImportStats export_stats_;  // rows of tables shared by every process, given to the first rank
  nsys::ExportStrings strings_;
  nsys::PayloadSchemas schemas_;
  std::map<int64_t, std::string> domains_;
  std::map<int64_t, std::unique_ptr<Process>> processes_;
  std::vector<model::Device> gpus_;
  uint64_t skipped_rows_ = 0;
};

}  // namespace

bool LooksLikeSqlite(std::string_view head) { return StartsWith(head, kSqliteMagic); }

Result<std::vector<model::RankTrace>> ImportNsysExport(const std::string& path) {
  COMMLENS_ASSIGN_OR_RETURN(std::string magic, ReadFileHead(path, 2));
  TempCopy copy;
  std::string open_path = path;
  if (magic.size() == 2 && static_cast<unsigned char>(magic[0]) == 0x1f && static_cast<unsigned char>(magic[1]) == 0x8b) {
    COMMLENS_RETURN_IF_ERROR(copy.Inflate(path));
    open_path = copy.path();
  }
  COMMLENS_ASSIGN_OR_RETURN(Database db, Database::Open(open_path, path));
  ExportReader reader(db, path);
  COMMLENS_ASSIGN_OR_RETURN(std::vector<model::RankTrace> ranks, reader.Read());
  std::error_code ec;
  const uint64_t bytes = std::filesystem::file_size(open_path, ec);
  for (model::RankTrace& r : ranks) r.input_bytes = ec ? 0 : bytes;
  return ranks;
}

}  // namespace commlens::importers
