// commlens report: the HTML report of a job's traces (src/report/html, docs/report.md),
// or, without traces, a benchmark run's JSON shown again as its table or held against a
// baseline (another run, or nccl-tests' output) with an optional regression gate
// (src/bench/bench_compare.h, nccl_tests_log.h).
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>

#include <fmt/format.h>

#include "bench/bench_compare.h"
#include "bench/bench_config.h"
#include "bench/bench_json.h"
#include "bench/nccl_tests_log.h"
#include "bench/reporter.h"
#include "cli/verbs.h"
#if COMMLENS_HAS_ANALYZE
#include "analysis/analyze.h"
#include "cli/bench_curves.h"
#include "cli/job_inputs.h"
#include "common/strings.h"
#include "model/collective.h"
#include "report/html/html_report.h"
#endif

namespace commlens::cli {

namespace {

constexpr int kExitRegression = 1;
constexpr int kExitBadBench = 2;  // an unreadable benchmark file, or runs with nothing in common

struct ReportArgs {
#if COMMLENS_HAS_ANALYZE
  JobInputs inputs;
#endif
  std::string out;       // the HTML page
  std::string perfetto;  // linked from the page
  int64_t step = -1;
  bool quiet = false;
  std::string bench;
  std::string baseline;
  double tolerance_pct = -1;  // < 0: no gate
  std::string min_size = "1M";
};

int RunReport(const ReportArgs& a) {
  Result<bench::BenchReport> run = bench::ReadBenchReport(a.bench);
  if (!run.ok()) {
    std::fprintf(stderr, "commlens report: %s\n", run.status().message().c_str());
    return kExitBadBench;
  }
  if (a.baseline.empty()) {
    std::fputs(bench::FormatReport(*run).c_str(), stdout);
    return 0;
  }
  Result<bench::BenchReport> base = bench::ReadBenchOrNcclTests(a.baseline);
  if (!base.ok()) {
    std::fprintf(stderr, "commlens report: %s\n", base.status().message().c_str());
    return kExitBadBench;
  }
  Result<int64_t> floor = bench::ParseByteSize(a.min_size);
  if (!floor.ok()) {
    std::fprintf(stderr, "commlens report: --min-size: %s\n", floor.status().message().c_str());
    return kExitUsage;
  }
  bench::BenchComparison cmp = bench::CompareBenchReports(*run, *base, *floor);
  std::fputs(fmt::format("# commlens report: run {} against baseline {}\n", a.bench, a.baseline)
                 .c_str(),
             stdout);
  std::fputs(bench::FormatComparison(cmp, a.tolerance_pct).c_str(), stdout);
  if (cmp.collectives.empty()) {
    std::fprintf(stderr, "commlens report: %s and %s have no collective in common\n",
                 a.bench.c_str(), a.baseline.c_str());
    return kExitBadBench;
  }
  return a.tolerance_pct >= 0 && bench::HasRegression(cmp, a.tolerance_pct) ? kExitRegression
                                                                             : 0;
}

#if COMMLENS_HAS_ANALYZE
// The link from the page to the Perfetto file: relative to the page's folder.
std::string RelativeHref(const std::string& target, const std::string& page) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::path from = fs::absolute(fs::path(page), ec).parent_path();
  const fs::path rel = fs::absolute(fs::path(target), ec).lexically_normal().lexically_relative(from.lexically_normal());
  return rel.empty() ? target : rel.generic_string();
}

int RunHtmlReport(const ReportArgs& a) {
  const auto t0 = std::chrono::steady_clock::now();
  if (a.out.empty()) {
    std::fprintf(stderr, "commlens report: traces given: -o REPORT.html is required\n");
    return kExitUsage;
  }
  const std::string missing = report::html::MissingChartLibraryMessage();
  if (!missing.empty()) {
    std::fprintf(stderr, "commlens report: %s\n", missing.c_str());
    return kExitFailed;
  }
  report::html::HtmlReportOptions options;
  options.step = a.step;
  analysis::AnalyzeOptions analyze;
  analyze.threads = a.inputs.load.threads;
  if (!a.bench.empty()) {
    Result<std::vector<analysis::BenchCurve>> curves = ReadBenchCurves(a.bench);
    if (!curves.ok()) {
      std::fprintf(stderr, "commlens report: %s\n", curves.status().message().c_str());
      return kExitFailed;
    }
    analyze.bench = std::move(curves).value();
    options.bench_source = std::filesystem::path(a.bench).filename().string();
  }
  if (!a.perfetto.empty()) {
    options.perfetto_href = RelativeHref(a.perfetto, a.out);
    std::error_code ec;
    if (!std::filesystem::exists(a.perfetto, ec))
      std::fprintf(stderr,
                   "commlens report: note: %s does not exist yet; the page links it. Write it with "
                   "`commlens export TRACES -f perfetto -o %s`.\n",
                   a.perfetto.c_str(), a.perfetto.c_str());
  }
  Result<model::Trace> loaded = LoadJob(a.inputs, "report", a.quiet);
  if (!loaded.ok()) return kExitFailed;
  const model::Trace& trace = *loaded;
  analyze.steps = ChooseJobSteps(a.inputs, trace, "report");
  if (!analyze.steps) return kExitUsage;
  const analysis::JobAnalysis job = analysis::Analyze(trace, analyze);
  std::vector<std::string> names;
  for (const auto& p : a.inputs.paths) names.push_back(std::filesystem::path(p).filename().string());
  options.title = fmt::format("commlens report: {}", fmt::join(names, ", "));
  options.title = Shortened(options.title, 120);
  Status written = report::html::WriteHtmlReport(trace, job, options, a.out);
  if (!written.ok()) {
    std::fprintf(stderr, "commlens report: %s\n", written.message().c_str());
    ReportFailures(trace, "report");
    return kExitFailed;
  }
  if (!a.quiet) {
    std::error_code ec;
    const auto size = std::filesystem::file_size(a.out, ec);
    const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    fmt::print("{} ranks reported in {:.2f} s: {} ({:.1f} MB)\n", trace.ranks.size(), secs, a.out,
               static_cast<double>(size) / 1e6);
  }
  return ReportFailures(trace, "report");
}
#endif

int Run(const ReportArgs& a) {
#if COMMLENS_HAS_ANALYZE
  if (!a.inputs.paths.empty()) return RunHtmlReport(a);
#endif
  if (!a.out.empty() || !a.perfetto.empty()) {
    std::fprintf(stderr, "commlens report: -o and --perfetto need trace files (commlens report TRACES -o report.html)\n");
    return kExitUsage;
  }
  if (a.bench.empty()) {
    std::fprintf(stderr, "commlens report: give trace files (an HTML report) or --bench RUN.json (a benchmark run)\n");
    return kExitUsage;
  }
  return RunReport(a);
}

}  // namespace

void AddReportVerb(CLI::App& app, int* exit_code) {
  CLI::App* sub = app.add_subcommand(
      "report", "Write a job's HTML report (commlens report TRACES -o report.html), or show a saved "
                "`commlens bench --json` run again and hold it against a baseline run.");
  sub->footer(
      "HTML report: commlens report TRACES -o report.html [--bench RUN.json] [--perfetto OUT.json]\n"
      "  one self-contained page (no network): summary and findings, time breakdown per rank\n"
      "  and per step, a timeline of one step, collectives with busbw against message size\n"
      "  (and the benchmark's curve with --bench), waits, idle gaps, counters. docs/report.md.\n"
      "  Exit codes: 0 written; 1 nothing could be loaded, or the page could not be written\n"
      "  (or this build has no chart library); 2 some input files failed; 64 usage error.\n"
      "Benchmark run: commlens report --bench RUN.json [--baseline OLD] [--tolerance PCT]\n"
      "  Exit codes: 0 shown (and no regression), 1 a busbw drop beyond --tolerance,\n"
      "  2 an unreadable file (or runs with no collective in common), 64 usage error.\n"
      "  See docs/bench.md, \"Comparing runs\".");
  auto args = std::make_shared<ReportArgs>();
#if COMMLENS_HAS_ANALYZE
  AddJobInputOptions(sub, &args->inputs);
  sub->get_option("traces")->required(false);
#endif
  sub->add_option("-o,--output", args->out, "With traces: the HTML page to write")->type_name("REPORT.html");
  sub->add_option("--perfetto", args->perfetto,
                  "With traces: link this Perfetto export from the page (a path relative to it; "
                  "write it with commlens export -f perfetto)")
      ->type_name("OUT.json");
  sub->add_option("--step", args->step,
                  "With traces: the profiler step the timeline shows (default: the median-length step)")
      ->type_name("N");
  sub->add_flag("-q,--quiet", args->quiet, "With traces: no summary line");
  sub->add_option("--bench", args->bench,
                  "A commlens.bench JSON file (commlens bench --json): with traces, its busbw curves "
                  "are drawn beside the job's collectives; alone, the run is shown again");
  sub->add_option("--baseline", args->baseline,
                  "Another run to compare with: a commlens.bench JSON file, or the output of "
                  "nccl-tests (all_reduce_perf ... > log; several logs may be concatenated)");
  sub->add_option("--tolerance", args->tolerance_pct,
                  "With --baseline: exit 1 when some busbw at >= --min-size is more than this "
                  "many percent below the baseline's")
      ->check(CLI::NonNegativeNumber);
  sub->add_option("--min-size", args->min_size,
                  "Smallest size the regression gate looks at (default 1M; K/M/G are 1024-based)");
  sub->callback([args, exit_code] { *exit_code = Run(*args); });
}

}  // namespace commlens::cli
