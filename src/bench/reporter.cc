#include "bench/reporter.h"

#include <cmath>

#include <fmt/format.h>

#include "bench/stats.h"

namespace commlens::bench {

namespace {

// A number in at most |width| characters: 2 decimals, then 1, then 0, then exponent
// (nccl-tests' table keeps its columns aligned the same way).
std::string Fit(double value, int width) {
  for (int decimals = 2; decimals >= 0; --decimals) {
    std::string s = fmt::format("{:>{}.{}f}", value, width, decimals);
    if (static_cast<int>(s.size()) <= width) return s;
  }
  return fmt::format("{:>{}.1e}", value, width);
}

std::string Wrong(const std::optional<int64_t>& wrong) {
  return wrong ? fmt::format("{:>6}", *wrong) : fmt::format("{:>6}", "N/A");
}

std::string Placement(const PlacementResult& p) {
  return fmt::format("  {}  {}  {}  {}  {}  {}", Fit(p.time_us, 7), Fit(p.algbw_gbps, 6),
                     Fit(p.busbw_gbps, 6), Wrong(p.wrong), Fit(p.p50_us, 7), Fit(p.p99_us, 7));
}

std::string FactorFormula(model::CommOp op) {
  switch (op) {
    case model::CommOp::kAllReduce:
      return "2(n-1)/n";
    case model::CommOp::kAllGather:
    case model::CommOp::kReduceScatter:
    case model::CommOp::kAllToAll:
      return "(n-1)/n";
    default:
      return "1";
  }
}

}  // namespace

std::string FormatRunHeader(const RunInfo& run, const BenchConfig& c) {
  std::string s = fmt::format(
      "# commlens bench {}: NCCL {}, CUDA runtime {}.{}, driver {}.{}\n", run.tool_version,
      run.nccl_version, run.cuda_runtime_version / 1000, run.cuda_runtime_version % 1000 / 10,
      run.cuda_driver_version / 1000, run.cuda_driver_version % 1000 / 10);
  s += fmt::format("# {} ranks: {} process(es) x {} GPU(s), launcher {}, hosts {}\n", run.nranks,
                   run.nprocs, run.gpus_per_process, run.launcher, fmt::join(run.hosts, ","));
  for (const GpuInfo& g : run.gpus) {
    s += fmt::format("#  rank {:>3}  host {}  device {:>2}  [{}]  {} (sm_{}{}, {})\n", g.rank,
                     g.host, g.device, g.pci_bus_id, g.name, g.cc_major, g.cc_minor,
                     FormatBytes(g.memory_bytes));
  }
  s += fmt::format(
      "# sizes {} to {} ({} {}), dtype {}, op {}, root {}, iters {}, warmup {}, check {}, "
      "graph {}\n",
      FormatBytes(c.min_bytes), FormatBytes(c.max_bytes), c.step_factor > 1 ? "x" : "+",
      c.step_factor > 1 ? std::to_string(c.step_factor) : FormatBytes(c.step_bytes),
      Info(c.dtype).name, RedOpName(c.op), c.root, c.iters, c.warmup, c.check ? "on" : "off",
      c.graph ? "on" : "off");
  return s;
}

std::string FormatTableHeader(const CollectiveResult& c, int nranks) {
  std::string backend;
  if (auto b = BackendFromName(c.backend); b && *b != Backend::kNccl)
    backend = fmt::format(" on {} ({}-initiated; out-of-place only)", c.backend,
                          BackendInitiator(*b));
  std::string s = fmt::format("#\n# {}{}: busbw = algbw x {} = algbw x {:.4g} (n = {})\n", c.name,
                              backend, FactorFormula(model::CommOpFromName(c.comm_op)),
                              c.busbw_factor, nranks);
  // Each side is 51 characters wide (see Placement); titles centred over them.
  std::string titles = fmt::format("# {:>10}  {:>12}  {:>8}  {:>6}  {:>6}{:^51}{:^51}", "", "",
                                   "", "", "", "out-of-place", "in-place");
  s += titles.substr(0, titles.find_last_not_of(' ') + 1) + "\n";
  std::string side = fmt::format("  {:>7}  {:>6}  {:>6}  {:>6}  {:>7}  {:>7}", "time", "algbw",
                                 "busbw", "#wrong", "p50", "p99");
  std::string units = fmt::format("  {:>7}  {:>6}  {:>6}  {:>6}  {:>7}  {:>7}", "(us)", "(GB/s)",
                                  "(GB/s)", "", "(us)", "(us)");
  s += fmt::format("# {:>10}  {:>12}  {:>8}  {:>6}  {:>6}{}{}\n", "size", "count", "type",
                   "redop", "root", side, side);
  s += fmt::format("# {:>10}  {:>12}  {:>8}  {:>6}  {:>6}{}{}\n", "(B)", "(elements)", "", "",
                   "", units, units);
  return s;
}

std::string FormatRow(const CollectiveResult& c, const SizeResult& r) {
  std::string in_place = c.in_place ? Placement(r.in_place)
                                    : fmt::format("  {:>7}  {:>6}  {:>6}  {:>6}  {:>7}  {:>7}",
                                                  "-", "-", "-", "-", "-", "-");
  return fmt::format("{:>12}  {:>12}  {:>8}  {:>6}  {:>6}{}{}\n", r.size_bytes, r.count, c.dtype,
                     c.redop, c.root, Placement(r.out_of_place), in_place);
}

std::string FormatBackendComparison(const BenchReport& report) {
  // The runs of one collective on several backends, row by row (they share the sweep).
  std::vector<const CollectiveResult*> runs;
  for (const CollectiveResult& c : report.collectives)
    if (runs.empty() || (c.name == runs.front()->name && c.rows.size() == runs.front()->rows.size()))
      runs.push_back(&c);
  if (runs.size() < 2) return "";
  std::string s = fmt::format(
      "#\n# {} side by side (out-of-place): busbw (GB/s) and p50 (us) per backend; best = "
      "highest busbw\n# {:>10}",
      runs.front()->name, "size (B)");
  for (const CollectiveResult* c : runs) s += fmt::format("  {:>11} busbw  {:>7}", c->backend, "p50");
  s += fmt::format("  {}\n", "best");
  for (size_t i = 0; i < runs.front()->rows.size(); ++i) {
    s += fmt::format("{:>12}", runs.front()->rows[i].size_bytes);
    const CollectiveResult* best = nullptr;
    for (const CollectiveResult* c : runs) {
      const PlacementResult& p = c->rows[i].out_of_place;
      s += fmt::format("  {:>17}  {}", Fit(p.busbw_gbps, 7), Fit(p.p50_us, 7));
      if (!best || p.busbw_gbps > best->rows[i].out_of_place.busbw_gbps) best = c;
    }
    s += fmt::format("  {}\n", best->backend);
  }
  return s;
}

std::string FormatSummary(const CollectiveResult& c) {
  const CollectiveSummary& s = c.summary;
  return fmt::format(
      "# {} summary: peak busbw {:.2f} GB/s at {}; half of peak from {}; small-message latency "
      "{:.2f} us (p50 {:.2f} us) at {}; avg busbw {:.2f} GB/s; #wrong {}\n",
      c.name, s.peak_busbw_gbps, FormatBytes(s.peak_size), FormatBytes(s.half_peak_size),
      s.small_latency_us, s.small_latency_p50_us, FormatBytes(s.small_size), s.avg_busbw_gbps,
      s.wrong);
}

std::string FormatFooter(const BenchReport& report) {
  int64_t wrong = report.WrongTotal();
  return fmt::format("#\n# Out of bounds values : {} {}\n", wrong, wrong ? "FAILED" : "OK");
}

std::string FormatReport(const BenchReport& report) {
  std::string s = FormatRunHeader(report.run, report.config);
  for (const CollectiveResult& c : report.collectives) {
    s += FormatTableHeader(c, report.run.nranks);
    for (const SizeResult& row : c.rows) s += FormatRow(c, row);
    s += FormatSummary(c);
  }
  return s + FormatBackendComparison(report) + FormatFooter(report);
}

void Reporter::Print(const std::string& text) {
  if (!out_) return;
  std::fputs(text.c_str(), out_);
  std::fflush(out_);
}

void Reporter::BeginRun(const RunInfo& run, const BenchConfig& config) {
  report_.run = run;
  report_.config = config;
  Print(FormatRunHeader(run, config));
}

void Reporter::BeginCollective(const CollectiveSpec& spec, const BenchConfig& config,
                               int nranks, Backend backend) {
  CollectiveResult c;
  c.backend = std::string(BackendName(backend));
  c.in_place = backend == Backend::kNccl;
  c.name = std::string(spec.name);
  c.comm_op = std::string(model::CommOpName(spec.op));
  c.dtype = std::string(Info(config.dtype).name);
  c.redop = spec.reduces ? std::string(RedOpName(config.op)) : "none";
  c.root = spec.rooted ? config.root : -1;
  c.busbw_factor = spec.BusBwFactor(nranks);
  report_.collectives.push_back(std::move(c));
  Print(FormatTableHeader(report_.collectives.back(), nranks));
}

void Reporter::AddRow(const SizeResult& row) {
  CollectiveResult& c = report_.collectives.back();
  c.rows.push_back(row);
  Print(FormatRow(c, row));
}

void Reporter::EndCollective() {
  CollectiveResult& c = report_.collectives.back();
  c.summary = Summarize(c.rows, c.in_place);
  Print(FormatSummary(c));
}

void Reporter::EndRun(std::string end_time) {
  report_.run.end_time = std::move(end_time);
  Print(FormatBackendComparison(report_) + FormatFooter(report_));
}

}  // namespace commlens::bench
