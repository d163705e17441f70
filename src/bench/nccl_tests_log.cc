#include "bench/nccl_tests_log.h"

#include <cerrno>
#include <set>
#include <sstream>
#include <vector>

#include <fmt/format.h>

#include "bench/bench_json.h"
#include "bench/collective_table.h"
#include "bench/stats.h"

namespace commlens::bench {

namespace {

std::vector<std::string> Fields(std::string_view line) {
  std::vector<std::string> out;
  std::istringstream in{std::string(line)};
  for (std::string f; in >> f;) out.push_back(f);
  return out;
}

// The field after |key| ("iters:" -> "1000"), or "" when absent.
std::string After(const std::vector<std::string>& fields, std::string_view key) {
  for (size_t i = 0; i + 1 < fields.size(); ++i)
    if (fields[i] == key) return fields[i + 1];
  return "";
}

bool ToInt(const std::string& s, int64_t* out) {
  if (s.empty()) return false;
  char* end = nullptr;
  errno = 0;
  long long v = std::strtoll(s.c_str(), &end, 10);
  if (errno != 0 || *end != '\0') return false;
  *out = v;
  return true;
}

bool ToDouble(const std::string& s, double* out) {
  if (s.empty()) return false;
  char* end = nullptr;
  *out = std::strtod(s.c_str(), &end);
  return *end == '\0';
}

// time algbw busbw #wrong, from fields[at].
bool ParsePlacement(const std::vector<std::string>& f, size_t at, PlacementResult* p) {
  if (!ToDouble(f[at], &p->time_us) || !ToDouble(f[at + 1], &p->algbw_gbps) ||
      !ToDouble(f[at + 2], &p->busbw_gbps))
    return false;
  if (f[at + 3] == "N/A") return true;
  int64_t wrong = 0;
  if (!ToInt(f[at + 3], &wrong)) return false;
  p->wrong = wrong;
  return true;
}

std::string VersionFromCode(int64_t code) {
  return fmt::format("{}.{}.{}", code / 10000, code % 10000 / 100, code % 100);
}

struct LogState {
  BenchReport report;
  std::set<std::string> hosts_seen;
  std::set<std::string> pids;
  bool ranks_done = false;  // rank lines are read from the first collective only
};

void ReadHeaderLine(const std::vector<std::string>& f, LogState* st) {
  BenchReport& r = st->report;
  if (f.size() >= 3 && f[1] == "nccl-tests" && f[2] == "version") {
    r.run.tool_version = "nccl-tests " + (f.size() > 3 ? f[3] : "?");
    int64_t code = 0;
    for (const std::string& token : f)
      if (token.rfind("nccl-library=", 0) == 0 && ToInt(token.substr(13), &code)) {
        r.run.nccl_version_code = static_cast<int>(code);
        r.run.nccl_version = VersionFromCode(code);
      }
  } else if (f.size() >= 2 && f[1] == "nThread") {
    int64_t v = 0;
    if (ToInt(After(f, "nGpus"), &v)) r.run.gpus_per_process = static_cast<int>(v);
    if (ToInt(After(f, "minBytes"), &v)) r.config.min_bytes = v;
    if (ToInt(After(f, "maxBytes"), &v)) r.config.max_bytes = v;
    if (ToInt(After(f, "graph:"), &v)) r.config.graph = v != 0;
    if (ToInt(After(f, "validation:"), &v)) r.config.check = v != 0;
    // "warmup iters: 20 iters: 1000 agg iters: 1": "iters:" follows three words.
    for (size_t i = 1; i + 1 < f.size(); ++i) {
      if (f[i] != "iters:" || !ToInt(f[i + 1], &v)) continue;
      if (f[i - 1] == "warmup") r.config.warmup = static_cast<int>(v);
      else if (f[i - 1] != "agg") r.config.iters = static_cast<int>(v);
    }
  } else if (f.size() >= 12 && f[1] == "Rank" && !st->ranks_done) {
    // # Rank 0 Group 0 Pid 875 on vm device 0 [0000:00:06] NVIDIA H200
    GpuInfo g;
    int64_t v = 0;
    if (ToInt(f[2], &v)) g.rank = static_cast<int>(v);
    g.host = After(f, "on");
    if (ToInt(After(f, "device"), &v)) g.device = static_cast<int>(v);
    size_t bus = 0;
    while (bus < f.size() && f[bus].front() != '[') ++bus;
    if (bus < f.size()) {
      g.pci_bus_id = f[bus].substr(1, f[bus].size() - 2);
      std::vector<std::string> name(f.begin() + static_cast<long>(bus) + 1, f.end());
      g.name = fmt::format("{}", fmt::join(name, " "));
    }
    st->pids.insert(After(f, "Pid") + "@" + g.host);
    if (st->hosts_seen.insert(g.host).second) r.run.hosts.push_back(g.host);
    r.run.gpus.push_back(std::move(g));
  }
}

}  // namespace

Result<BenchReport> ParseNcclTestsLog(std::string_view text, std::string_view source) {
  LogState st;
  BenchReport& r = st.report;
  r.run.launcher = "nccl-tests";
  r.config.collectives.clear();
  r.config.spin_up = std::chrono::milliseconds(0);
  CollectiveResult* current = nullptr;
  std::istringstream in{std::string(text)};
  int line_no = 0;
  for (std::string line; std::getline(in, line);) {
    ++line_no;
    std::vector<std::string> f = Fields(line);
    if (f.empty()) continue;
    if (f[0] == "#") {
      if (f.size() >= 5 && f[1] == "Collective" && f[2] == "test" && f[3] == "starting:") {
        std::string name = f[4];
        if (name.size() > 5 && name.ends_with("_perf")) name.resize(name.size() - 5);
        const CollectiveSpec* spec = FindCollective(name);
        if (!spec)
          return Error(fmt::format("{}:{}: nccl-tests collective '{}' is not one commlens "
                                   "benchmarks",
                                   source, line_no, f[4]));
        if (!r.run.gpus.empty()) st.ranks_done = true;
        CollectiveResult c;
        c.name = std::string(spec->name);
        c.comm_op = std::string(model::CommOpName(spec->op));
        r.collectives.push_back(std::move(c));
        r.config.collectives.push_back(spec->op);
        current = &r.collectives.back();
      } else if (f.size() >= 2 && f[1] == "Collective" && current) {
        current = nullptr;  // "# Collective test concluded"
      } else {
        ReadHeaderLine(f, &st);
      }
      continue;
    }
    // Not a comment: a table row starts with the size; anything else (NCCL INFO lines) is
    // not nccl-tests' own output.
    int64_t size = 0;
    if (!ToInt(f[0], &size)) continue;
    if (!current)
      return Error(fmt::format("{}:{}: a table row outside any \"Collective test starting\" "
                               "section",
                               source, line_no));
    SizeResult row;
    row.size_bytes = size;
    int64_t root = 0;
    if (f.size() != 13 || !ToInt(f[1], &row.count) || !ToInt(f[4], &root) ||
        !ParsePlacement(f, 5, &row.out_of_place) || !ParsePlacement(f, 9, &row.in_place))
      return Error(fmt::format("{}:{}: not an nccl-tests table row (13 columns: size count type "
                               "redop root, then time algbw busbw #wrong twice): {}",
                               source, line_no, line));
    current->dtype = f[2];
    current->redop = f[3];
    current->root = static_cast<int>(root);
    current->rows.push_back(row);
  }
  if (r.collectives.empty())
    return Error(fmt::format("{}: no \"# Collective test starting\" line: not an nccl-tests log",
                             source));
  r.run.nranks = r.run.gpus.empty() ? 1 : static_cast<int>(r.run.gpus.size());
  r.run.nprocs = std::max<int>(1, static_cast<int>(st.pids.size()));
  for (CollectiveResult& c : r.collectives) {
    c.busbw_factor = FindCollective(c.name)->BusBwFactor(r.run.nranks);
    c.summary = Summarize(c.rows);
  }
  return r;
}

Result<BenchReport> ReadBenchOrNcclTests(const std::string& path) {
  COMMLENS_ASSIGN_OR_RETURN(std::string text, ReadWholeFile(path));
  size_t first = text.find_first_not_of(" \t\r\n");
  if (first != std::string::npos && text[first] == '{') return ParseBenchReport(text, path);
  return ParseNcclTestsLog(text, path);
}

}  // namespace commlens::bench
