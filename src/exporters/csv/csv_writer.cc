#include "exporters/csv/csv_writer.h"

#include <fmt/format.h>

#include <filesystem>

#include "common/output_file.h"
#include "model/activity_class.h"
#include "model/collective.h"

namespace commlens::exporters {

namespace {

using model::TimeNs;

std::string Us(TimeNs ns) {
  const bool negative = ns < 0;
  const uint64_t v = negative ? 0 - static_cast<uint64_t>(ns) : static_cast<uint64_t>(ns);
  return fmt::format("{}{}.{:03}", negative ? "-" : "", v / 1000, v % 1000);
}

std::string Pct(double v) { return fmt::format("{:.2f}", v); }

// A name from the trace (host, kernel, process group) as a cell. A spreadsheet runs a
// cell that starts with = + - @, a tab or a carriage return as a formula (OWASP, "CSV
// Injection"): such a cell gets a leading single quote, which makes it text there, and
// Field() quotes it. Only names go through here: the numbers we format ("-12.500") stay
// numbers.
std::string Text(std::string_view s) {
  if (!s.empty() && std::string_view("=+-@\t\r").find(s.front()) != std::string_view::npos)
    return "'" + std::string(s);
  return std::string(s);
}

// One field, quoted when it must be (RFC 4180), and when Text() guarded it.
std::string Field(std::string_view s) {
  if (s.find_first_of(",\"\r\n") == std::string_view::npos && !s.starts_with('\'')) return std::string(s);
  std::string q = "\"";
  for (char c : s) {
    if (c == '"') q += '"';
    q += c;
  }
  return q + "\"";
}

// A table being written: the header, then rows of already formatted fields.
class Table {
 public:
  Table(OutputFile* out, const std::vector<std::string>& columns) : out_(out) { Row(columns); }
  void Row(const std::vector<std::string>& fields) {
    line_.clear();
    for (size_t i = 0; i < fields.size(); ++i) {
      if (i) line_ += ',';
      line_ += Field(fields[i]);
    }
    line_ += '\n';
    out_->Write(line_);
  }

 private:
  OutputFile* out_;
  std::string line_;
};

std::vector<std::string> BreakdownFields(const analysis::TimeBreakdown& b) {
  return {Us(b.span), Us(b.busy), Us(b.idle), Us(b.compute), Us(b.non_compute), Us(b.comm), Us(b.memory),
          Us(b.overlap), Us(b.exposed_comm), Pct(b.idle_pct()), Pct(b.compute_pct()), Pct(b.non_compute_pct()),
          b.has_comm() ? Pct(b.overlap_pct()) : "", std::to_string(b.activities)};
}
#define COMMLENS_BREAKDOWN_COLUMNS                                                                  \
  "span_us", "busy_us", "idle_us", "compute_us", "non_compute_us", "comm_us", "memory_us", "overlap_us", \
      "exposed_comm_us", "idle_pct", "compute_pct", "non_compute_pct", "overlap_pct", "gpu_activities"

std::vector<std::string> Join(std::vector<std::string> head, const std::vector<std::string>& tail) {
  head.insert(head.end(), tail.begin(), tail.end());
  return head;
}

class CsvWriter {
 public:
  CsvWriter(const analysis::JobAnalysis& j, std::string dir) : job_(j), dir_(std::move(dir)) {}

  // All tables or none: a failure removes the ones already written.
  Status Write(std::vector<std::string>* written) {
    Status s = WriteAll();
    if (!s.ok())
      for (const std::string& name : written_) std::filesystem::remove(dir_ + "/" + name);
    else if (written)
      *written = written_;
    return s;
  }

 private:
  Status WriteAll() {
    COMMLENS_RETURN_IF_ERROR(File("ranks.csv", [&](OutputFile* f) { Ranks(f); }));
    COMMLENS_RETURN_IF_ERROR(File("steps.csv", [&](OutputFile* f) { Steps(f); }));
    COMMLENS_RETURN_IF_ERROR(File("kernels.csv", [&](OutputFile* f) { Kernels(f); }));
    COMMLENS_RETURN_IF_ERROR(File("kernel_states.csv", [&](OutputFile* f) { States(f); }));
    COMMLENS_RETURN_IF_ERROR(File("idle_gaps.csv", [&](OutputFile* f) { IdleGaps(f); }));
    COMMLENS_RETURN_IF_ERROR(File("collectives.csv", [&](OutputFile* f) { Collectives(f); }));
    COMMLENS_RETURN_IF_ERROR(File("cross_rank_groups.csv", [&](OutputFile* f) { CrossRankGroups(f); }));
    COMMLENS_RETURN_IF_ERROR(File("cross_rank_ranks.csv", [&](OutputFile* f) { CrossRankRanks(f); }));
    COMMLENS_RETURN_IF_ERROR(File("group_roles.csv", [&](OutputFile* f) { GroupRoles(f); }));
    COMMLENS_RETURN_IF_ERROR(File("role_steps.csv", [&](OutputFile* f) { RoleSteps(f); }));
    return OkStatus();
  }

  template <typename Fill>
  Status File(const std::string& name, Fill fill) {
    COMMLENS_ASSIGN_OR_RETURN(std::unique_ptr<OutputFile> out, OutputFile::Create(dir_ + "/" + name));
    fill(out.get());
    COMMLENS_RETURN_IF_ERROR(out->Commit());
    written_.push_back(name);
    return OkStatus();
  }

  void Ranks(OutputFile* f) {
    Table table(f, {"rank", "hostname", COMMLENS_BREAKDOWN_COLUMNS});
    for (const auto& a : job_.ranks)
      table.Row(Join({std::to_string(a.trace->rank), Text(a.trace->hostname)}, BreakdownFields(a.time.total)));
  }

  void Steps(OutputFile* f) {
    Table table(f, {"rank", "step", "ranks", COMMLENS_BREAKDOWN_COLUMNS});
    for (const auto& a : job_.ranks)
      for (const auto& s : a.time.steps)
        table.Row(Join({std::to_string(a.trace->rank), std::to_string(s.number), "1"}, BreakdownFields(s.time)));
    for (const auto& s : job_.steps)
      table.Row(Join({"mean", std::to_string(s.number), std::to_string(s.ranks)}, BreakdownFields(s.mean)));
  }

  static void KernelRows(Table* table, const std::string& who, const analysis::KernelBreakdown& k) {
    for (const auto& s : k.kernels)
      table->Row({who, Text(s.name), std::string(model::ActivityClassName(s.cls)), std::to_string(s.count), Us(s.total),
                  fmt::format("{:.3f}", s.mean / 1000.0), Us(s.min), Us(s.max), fmt::format("{:.3f}", s.stddev / 1000.0)});
  }

  void Kernels(OutputFile* f) {
    Table table(f, {"rank", "name", "class", "count", "total_us", "mean_us", "min_us", "max_us", "stddev_us"});
    for (const auto& a : job_.ranks) KernelRows(&table, std::to_string(a.trace->rank), a.kernels);
    KernelRows(&table, "all", job_.kernels);
  }

  static void StateRows(Table* table, const std::string& who, const analysis::KernelBreakdown& k) {
    for (uint8_t bits = 1; bits < 8; ++bits)
      if (k.state_time[bits]) table->Row({who, analysis::ClassStateLabel(bits), Us(k.state_time[bits])});
  }

  void States(OutputFile* f) {
    Table table(f, {"rank", "state", "time_us"});
    for (const auto& a : job_.ranks) StateRows(&table, std::to_string(a.trace->rank), a.kernels);
    StateRows(&table, "all", job_.kernels);
  }

  void IdleGaps(OutputFile* f) {
    std::vector<std::string> columns = {"rank", "device", "stream", "activities", "busy_us", "idle_us"};
    for (int k = 0; k < 3; ++k) {
      std::string kind(analysis::GapKindName(static_cast<analysis::GapKind>(k)));
      columns.push_back(kind + "_count");
      columns.push_back(kind + "_us");
    }
    for (int b = 0; b < analysis::kGapBins; ++b) columns.push_back("gaps_" + std::string(analysis::GapBinLabel(b)));
    Table table(f, columns);
    for (const auto& a : job_.ranks)
      for (const auto& s : a.idle) {
        std::vector<std::string> row = {std::to_string(a.trace->rank), std::to_string(s.device),
                                        std::to_string(s.stream), std::to_string(s.activities), Us(s.busy), Us(s.idle)};
        for (int k = 0; k < 3; ++k) {
          row.push_back(std::to_string(s.kind_count[k]));
          row.push_back(Us(s.kind_time[k]));
        }
        for (int b = 0; b < analysis::kGapBins; ++b) row.push_back(std::to_string(s.bin_count[b]));
        table.Row(row);
      }
  }

  void Collectives(OutputFile* f) {
    Table table(f, {"group", "group_desc", "group_size", "op", "size_min_bytes", "size_max_bytes", "count", "ranks",
                    "total_us", "p50_us", "p99_us", "max_us", "bytes", "kernel_algbw_gbps", "kernel_busbw_gbps",
                    "transfer_count", "waiting_pct", "transfer_algbw_gbps", "transfer_busbw_gbps", "waited_for_rank",
                    "bench_busbw_gbps", "batched"});
    // Unknown figures are empty cells.
    auto gbps = [](double v, bool known) { return known ? fmt::format("{:.3f}", v) : std::string(); };
    for (const auto& b : job_.collectives.buckets) {
      const double wait = b.wait_share();
      const bool sized = b.size_lo >= 0;  // no size, no bucket and no bandwidth: empty cells
      table.Row({Text(b.group_name), Text(b.group_desc), std::to_string(b.group_size), std::string(model::CommOpName(b.op)),
                 sized ? std::to_string(b.size_lo) : std::string(), sized ? std::to_string(b.size_hi) : std::string(),
                 std::to_string(b.count), std::to_string(b.ranks), Us(b.total), Us(b.p50), Us(b.p99), Us(b.max),
                 sized ? std::to_string(b.bytes) : std::string(), gbps(b.kernel_algbw_gbps, sized),
                 gbps(b.kernel_busbw_gbps, sized),
                 std::to_string(b.transfer_count), wait < 0 ? std::string() : fmt::format("{:.2f}", 100.0 * wait),
                 gbps(b.transfer_algbw_gbps, b.transfer > 0), gbps(b.transfer_busbw_gbps, b.transfer > 0),
                 b.waited_for_rank < 0 ? std::string() : std::to_string(b.waited_for_rank),
                 gbps(b.bench_busbw_gbps, b.bench_busbw_gbps >= 0), b.batched ? "1" : "0"});
    }
  }

  void CrossRankGroups(OutputFile* f) {
    Table table(f, {"group", "group_desc", "matched", "unmatched", "start_skew_p50_us", "start_skew_p99_us",
                    "start_skew_max_us"});
    for (const auto& g : job_.collectives.groups)
      table.Row({Text(g.group_name), Text(g.group_desc), std::to_string(g.matched), std::to_string(g.unmatched), Us(g.skew_p50),
                 Us(g.skew_p99), Us(g.skew_max)});
  }

  void CrossRankRanks(OutputFile* f) {
    Table table(f, {"rank", "in_collectives_us", "waiting_us", "transferring_us", "last_arrivals"});
    for (const auto& r : job_.collectives.ranks)
      table.Row({std::to_string(r.rank), Us(r.in_collectives), Us(r.waiting), Us(r.in_collectives - r.waiting),
                 std::to_string(r.last_arrivals)});
  }

  void GroupRoles(OutputFile* f) {
    Table table(f, {"group", "description", "size", "role", "rule"});
    for (const analysis::GroupRole& g : job_.roles.groups)
      table.Row({Text(g.group), Text(g.description), std::to_string(g.size), std::string(analysis::RoleName(g.role)),
                 Text(g.rule)});
  }

  // One row per step (then "summary", or "window" without steps) and role present: mean
  // rank, and % of the step.
  void RoleSteps(OutputFile* f) {
    Table table(f, {"step", "role", "ranks", "span_us", "comm_us", "exposed_us", "exposed_pct"});
    if (!job_.roles.has_kernels) return;
    auto rows = [&](const std::string& step, const analysis::RoleTimes& t) {
      for (analysis::ParallelRole r : job_.roles.Present()) {
        const size_t i = static_cast<size_t>(r);
        table.Row({step, std::string(analysis::RoleName(r)), std::to_string(t.ranks), Us(t.span), Us(t.comm[i]),
                   Us(t.exposed[i]), fmt::format("{:.2f}", t.ExposedPct(r))});
      }
    };
    for (const analysis::RoleTimes& t : job_.roles.steps) rows(std::to_string(t.step), t);
    rows(job_.summary.over_steps ? "summary" : "window", job_.roles.summary);
  }

  const analysis::JobAnalysis& job_;
  std::string dir_;
  std::vector<std::string> written_;
};

}  // namespace

Status WriteCsv(const analysis::JobAnalysis& job, const std::string& dir, std::vector<std::string>* written) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return Error(dir + ": cannot create the folder: " + ec.message());
  if (!std::filesystem::is_directory(dir)) return Error(dir + ": exists and is not a folder");
  return CsvWriter(job, dir).Write(written);
}

}  // namespace commlens::exporters
