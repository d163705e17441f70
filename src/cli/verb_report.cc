// commlens report --bench: a benchmark run's JSON shown again as its table, or held
// against a baseline (another run, or nccl-tests' output) with an optional regression
// gate (src/bench/bench_compare.h, nccl_tests_log.h).
#include <cstdio>
#include <memory>
#include <string>

#include <fmt/format.h>

#include "bench/bench_compare.h"
#include "bench/bench_config.h"
#include "bench/bench_json.h"
#include "bench/nccl_tests_log.h"
#include "bench/reporter.h"
#include "cli/verbs.h"

namespace commlens::cli {

namespace {

constexpr int kExitRegression = 1;
constexpr int kExitUsage = 2;

struct ReportArgs {
  std::string bench;
  std::string baseline;
  double tolerance_pct = -1;  // < 0: no gate
  std::string min_size = "1M";
};

int RunReport(const ReportArgs& a) {
  Result<bench::BenchReport> run = bench::ReadBenchReport(a.bench);
  if (!run.ok()) {
    std::fprintf(stderr, "commlens report: %s\n", run.status().message().c_str());
    return kExitUsage;
  }
  if (a.baseline.empty()) {
    std::fputs(bench::FormatReport(*run).c_str(), stdout);
    return 0;
  }
  Result<bench::BenchReport> base = bench::ReadBenchOrNcclTests(a.baseline);
  if (!base.ok()) {
    std::fprintf(stderr, "commlens report: %s\n", base.status().message().c_str());
    return kExitUsage;
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
    return kExitUsage;
  }
  return a.tolerance_pct >= 0 && bench::HasRegression(cmp, a.tolerance_pct) ? kExitRegression
                                                                             : 0;
}

}  // namespace

void AddReportVerb(CLI::App& app, int* exit_code) {
  CLI::App* sub = app.add_subcommand(
      "report", "Show a saved `commlens bench --json` run again, or hold it against a baseline "
                "run, size by size, with an optional regression gate.");
  sub->footer(
      "Exit codes: 0 shown (and no regression), 1 a busbw drop beyond --tolerance, "
      "2 an unreadable file or bad option.\nSee docs/bench.md, \"Comparing runs\".");
  auto args = std::make_shared<ReportArgs>();
  sub->add_option("--bench", args->bench, "A commlens.bench JSON file (commlens bench --json)")
      ->required();
  sub->add_option("--baseline", args->baseline,
                  "Another run to compare with: a commlens.bench JSON file, or the output of "
                  "nccl-tests (all_reduce_perf ... > log; several logs may be concatenated)");
  sub->add_option("--tolerance", args->tolerance_pct,
                  "With --baseline: exit 1 when some busbw at >= --min-size is more than this "
                  "many percent below the baseline's")
      ->check(CLI::NonNegativeNumber);
  sub->add_option("--min-size", args->min_size,
                  "Smallest size the regression gate looks at (default 1M; K/M/G are 1024-based)");
  sub->callback([args, exit_code] { *exit_code = RunReport(*args); });
}

}  // namespace commlens::cli
