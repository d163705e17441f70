// commlens diff: what changed between two runs of a job, and whether it is more than the
// runs' own step-to-step noise (analysis/run_diff.h, docs/analysis.md "Diff").
#include <fmt/format.h>

#include <cstdio>
#include <iostream>

#include "analysis/analyze.h"
#include "analysis/run_diff.h"
#include "cli/job_inputs.h"
#include "cli/verbs.h"
#include "common/json_writer.h"
#include "report/diff_report.h"

namespace commlens::cli {

namespace {

struct DiffArgs {
  JobInputs inputs;  // paths: A then B
  std::string json_path, html_path;
  double min_change_pct = 2;
  size_t rows = 10;
  bool replay = true;
  bool quiet = false;
};

// One run: loaded, analyzed (its own steps, by the warm-up rule), replayed.
struct Run {
  model::Trace trace;
  analysis::JobAnalysis job;
};

std::optional<Run> LoadRun(const DiffArgs& a, const std::string& path, const char* which) {
  JobInputs in = a.inputs;
  in.paths = {path};
  in.steps.clear();
  in.load.drop_host_events = true;  // as analyze: the analyses and the replay read none
  Result<model::Trace> loaded = LoadJob(in, "diff", a.quiet);
  if (!loaded.ok()) {
    fmt::print(stderr, "commlens diff: run {} ({}) could not be loaded\n", which, path);
    return std::nullopt;
  }
  Run run{std::move(loaded).value(), {}};
  analysis::AnalyzeOptions options;
  options.threads = a.inputs.load.threads;
  options.steps = ChooseJobSteps(in, run.trace, "diff");
  if (!options.steps) {
    fmt::print(stderr, "commlens diff: run {} ({}): its steps could not be chosen\n", which, path);
    return std::nullopt;
  }
  options.replay = a.replay;  // its S per step is compared (analyze replays jobs of 2 to 512 ranks)
  run.job = analysis::Analyze(run.trace, options);
  return run;
}

int Run(const DiffArgs& a) {
  if (a.inputs.paths.size() != 2) {
    fmt::print(stderr, "commlens diff: give two runs, A and B (each a directory of traces or one trace file)\n");
    return kExitUsage;
  }
  std::optional<struct Run> ra = LoadRun(a, a.inputs.paths[0], "A");
  if (!ra) return kExitFailed;
  std::optional<struct Run> rb = LoadRun(a, a.inputs.paths[1], "B");
  if (!rb) return kExitFailed;
  analysis::DiffOptions options;
  options.min_change = a.min_change_pct / 100.0;
  const analysis::RunDiff diff =
      analysis::DiffRuns({&ra->trace, &ra->job}, {&rb->trace, &rb->job}, options);
  const report::DiffNames names{a.inputs.paths[0], a.inputs.paths[1]};
  if (!a.json_path.empty()) {
    const nlohmann::json doc = report::DiffJson(diff, names, options);
    if (a.json_path == "-") {
      WriteJson(std::cout, doc, 1);
      std::cout << "\n";
    } else if (Status s = WriteJsonFile(a.json_path, doc, 1); !s.ok()) {
      fmt::print(stderr, "commlens diff: {}\n", s.message());
      return kExitFailed;
    }
  }
  if (!a.html_path.empty()) {
    if (Status s = report::WriteDiffPage(diff, names, options, a.html_path); !s.ok()) {
      fmt::print(stderr, "commlens diff: {}\n", s.message());
      return kExitFailed;
    }
  }
  if (a.json_path != "-" && !a.quiet) std::fputs(report::DiffText(diff, names, options, a.rows).c_str(), stdout);
  const int fa = ReportFailures(ra->trace, "diff"), fb = ReportFailures(rb->trace, "diff");
  return std::max(fa, fb);
}

}  // namespace

void AddDiffVerb(CLI::App& app, int* exit_code) {
  CLI::App* sub = app.add_subcommand(
      "diff", "Compare two runs of a job: step time, its breakdown, every collective's time and bandwidth, "
              "kernels, stragglers and the what-if S, each with whether the change is beyond the runs' noise.");
  sub->footer(
      "commlens diff A B [--json OUT] [--html OUT.html] [--min-change PCT]\n"
      "  A and B: each a directory of one run's traces or a trace file, any format analyze\n"
      "  reads. Each run is analyzed on its own steps (warm-up left out, as analyze does).\n"
      "  For every quantity: A's mean per step, B's, the change, and a 95% bootstrap\n"
      "  interval of the change over the two runs' steps. A change is beyond noise when\n"
      "  the interval leaves out zero and it is at least --min-change percent of A.\n"
      "  Changes beyond noise come first, the largest time per step first; a bucket whose\n"
      "  bandwidth fell says what its transfers cost per step. Runs without profiler steps\n"
      "  (recordings) are cut into slices of as many operations each (16 in the shorter\n"
      "  run), and the slices are the samples. Buckets are matched by their group's\n"
      "  members, so a Kineto trace and a recording of one job compare; what only one of\n"
      "  them records (a recording's kernels) is left out, not zero.\n"
      "  docs/analysis.md, \"Diff\". Exit codes: 0; 1 a run could not be loaded; 2 some\n"
      "  files failed; 64 usage error.");
  auto args = std::make_shared<DiffArgs>();
  AddJobInputOptions(sub, &args->inputs);
  sub->get_option("traces")->description("Run A, then run B: each a directory of traces or one trace file")
      ->expected(2)->type_name("A B");
  sub->remove_option(sub->get_option("--steps"));
  sub->add_option("--json", args->json_path, "Write the comparison as JSON (- for stdout)")->type_name("OUT.json");
  sub->add_option("--html", args->html_path, "Write the comparison as an HTML page, A and B side by side")
      ->type_name("OUT.html");
  sub->add_option("--min-change", args->min_change_pct,
                  "Smallest change, in percent of A, that counts as beyond noise (default 2)")
      ->check(CLI::Range(0.0, 1000.0));
  sub->add_option("--rows", args->rows, "Rows per section in the text (default 10; JSON and HTML have all)");
  sub->add_flag_function("--no-replay", [args](int64_t) { args->replay = false; },
                         "Leave out the what-if replay of each run (its S per step)");
  sub->add_flag("-q,--quiet", args->quiet, "No text");
  sub->callback([args, exit_code] { *exit_code = Run(*args); });
}

}  // namespace commlens::cli
