#include "bench/bench_compare.h"

#include <algorithm>
#include <map>

#include <fmt/format.h>

#include "bench/bench_config.h"

namespace commlens::bench {

namespace {

std::string Key(const CollectiveResult& c) {
  return fmt::format("{} ({}, {})", c.name, c.dtype, c.redop);
}

std::string GpuModel(const RunInfo& r) { return r.gpus.empty() ? "?" : r.gpus.front().name; }

void NoteIfDifferent(std::vector<std::string>* notes, const char* what, const std::string& run,
                     const std::string& base) {
  if (run != base) notes->push_back(fmt::format("{}: run {}, baseline {}", what, run, base));
}

std::vector<std::string> SetupNotes(const BenchReport& run, const BenchReport& base) {
  std::vector<std::string> notes;
  NoteIfDifferent(&notes, "tool", "commlens " + run.run.tool_version,
                  base.run.tool_version.starts_with("nccl-tests")
                      ? base.run.tool_version
                      : "commlens " + base.run.tool_version);
  NoteIfDifferent(&notes, "ranks", std::to_string(run.run.nranks),
                  std::to_string(base.run.nranks));
  NoteIfDifferent(&notes, "processes x GPUs",
                  fmt::format("{} x {}", run.run.nprocs, run.run.gpus_per_process),
                  fmt::format("{} x {}", base.run.nprocs, base.run.gpus_per_process));
  NoteIfDifferent(&notes, "GPU", GpuModel(run.run), GpuModel(base.run));
  NoteIfDifferent(&notes, "NCCL", run.run.nccl_version, base.run.nccl_version);
  NoteIfDifferent(&notes, "iterations", std::to_string(run.config.iters),
                  std::to_string(base.config.iters));
  NoteIfDifferent(&notes, "CUDA graphs", run.config.graph ? "on" : "off",
                  base.config.graph ? "on" : "off");
  return notes;
}

CollectiveComparison CompareOne(const CollectiveResult& run, const CollectiveResult& base,
                                int64_t min_size) {
  CollectiveComparison out;
  out.name = Key(run);
  out.run_peak_busbw = run.summary.peak_busbw_gbps;
  out.base_peak_busbw = base.summary.peak_busbw_gbps;
  std::map<int64_t, const SizeResult*> base_rows;
  for (const SizeResult& r : base.rows) base_rows[r.size_bytes] = &r;
  for (const SizeResult& r : run.rows) {
    auto it = base_rows.find(r.size_bytes);
    if (it == base_rows.end()) continue;
    const SizeResult& b = *it->second;
    out.rows.push_back({r.size_bytes, r.out_of_place.busbw_gbps, b.out_of_place.busbw_gbps,
                        r.in_place.busbw_gbps, b.in_place.busbw_gbps, r.out_of_place.time_us,
                        b.out_of_place.time_us});
    if (r.size_bytes < min_size) continue;
    for (bool in_place : {false, true}) {
      const SizeComparison& s = out.rows.back();
      double d = in_place ? DiffPct(s.run_busbw_ip, s.base_busbw_ip)
                          : DiffPct(s.run_busbw_oop, s.base_busbw_oop);
      if (d < out.worst_drop_pct) {
        out.worst_drop_pct = d;
        out.worst_drop_size = r.size_bytes;
        out.worst_drop_placement = in_place ? "in-place" : "out-of-place";
      }
    }
  }
  return out;
}

}  // namespace

double DiffPct(double run, double base) { return base > 0 ? (run - base) / base * 100.0 : 0.0; }

BenchComparison CompareBenchReports(const BenchReport& run, const BenchReport& base,
                                    int64_t min_size) {
  BenchComparison out;
  out.min_size = min_size;
  out.notes = SetupNotes(run, base);
  std::map<std::string, const CollectiveResult*> base_by_key;
  for (const CollectiveResult& c : base.collectives) base_by_key[Key(c)] = &c;
  for (const CollectiveResult& c : run.collectives) {
    auto it = base_by_key.find(Key(c));
    if (it == base_by_key.end()) {
      out.only_in_run.push_back(Key(c));
      continue;
    }
    out.collectives.push_back(CompareOne(c, *it->second, min_size));
    base_by_key.erase(it);
  }
  for (const auto& [key, c] : base_by_key) out.only_in_base.push_back(key);
  return out;
}

bool HasRegression(const BenchComparison& comparison, double tolerance_pct) {
  return std::any_of(comparison.collectives.begin(), comparison.collectives.end(),
                     [&](const CollectiveComparison& c) { return -c.worst_drop_pct > tolerance_pct; });
}

std::string FormatComparison(const BenchComparison& cmp, double tolerance_pct) {
  std::string s;
  for (const std::string& note : cmp.notes) s += fmt::format("# note: {}\n", note);
  for (const std::string& name : cmp.only_in_run)
    s += fmt::format("# only in the run, not compared: {}\n", name);
  for (const std::string& name : cmp.only_in_base)
    s += fmt::format("# only in the baseline, not compared: {}\n", name);
  const std::string floor = FormatBytes(cmp.min_size);
  for (const CollectiveComparison& c : cmp.collectives) {
    s += fmt::format("#\n# {}\n", c.name);
    s += fmt::format("# {:>10}  {:^26}  {:^26}  {:^17}\n", "size", "busbw out-of-place (GB/s)",
                     "busbw in-place (GB/s)", "time oop (us)");
    s += fmt::format("# {:>10}  {:>8} {:>8} {:>8}  {:>8} {:>8} {:>8}  {:>8} {:>8}\n", "(B)",
                     "run", "base", "diff", "run", "base", "diff", "run", "base");
    for (const SizeComparison& r : c.rows) {
      s += fmt::format("  {:>10}  {:>8.2f} {:>8.2f} {:>+7.2f}%  {:>8.2f} {:>8.2f} {:>+7.2f}%  "
                       "{:>8.2f} {:>8.2f}\n",
                       r.size_bytes, r.run_busbw_oop, r.base_busbw_oop,
                       DiffPct(r.run_busbw_oop, r.base_busbw_oop), r.run_busbw_ip,
                       r.base_busbw_ip, DiffPct(r.run_busbw_ip, r.base_busbw_ip),
                       r.run_time_oop_us, r.base_time_oop_us);
    }
    s += fmt::format("# {}: peak busbw {:.2f} vs {:.2f} GB/s ({:+.2f}%); ", c.name,
                     c.run_peak_busbw, c.base_peak_busbw,
                     DiffPct(c.run_peak_busbw, c.base_peak_busbw));
    if (c.worst_drop_pct < 0)
      s += fmt::format("largest drop at >= {}: {:+.2f}% at {} {}\n", floor, c.worst_drop_pct,
                       FormatBytes(c.worst_drop_size), c.worst_drop_placement);
    else
      s += fmt::format("no drop at >= {}\n", floor);
  }
  if (tolerance_pct >= 0) {
    std::vector<std::string> failed;
    for (const CollectiveComparison& c : cmp.collectives)
      if (-c.worst_drop_pct > tolerance_pct)
        failed.push_back(fmt::format("{} {:+.2f}% at {} {}", c.name, c.worst_drop_pct,
                                     FormatBytes(c.worst_drop_size), c.worst_drop_placement));
    s += fmt::format("#\n# regression check (busbw drop > {:g}% at >= {}): {}\n", tolerance_pct,
                     floor, failed.empty() ? "PASS" : "FAIL: " + fmt::format("{}", fmt::join(failed, "; ")));
  }
  return s;
}

}  // namespace commlens::bench
