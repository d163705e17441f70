// commlens whatif: how much faster the job would be if a part of it ran at its typical
// speed (analysis/whatif.h, docs/analysis.md "What if").
#include <fmt/format.h>

#include <cstdio>
#include <iostream>

#include "analysis/analyze.h"
#include "analysis/whatif.h"
#include "cli/bench_curves.h"
#include "cli/job_inputs.h"
#include "cli/progress.h"
#include "common/strings.h"
#include "distributed/analyze_over_mpi.h"
#include "cli/verbs.h"
#include "common/json_writer.h"
#include "common/units.h"
#include "exporters/perfetto/perfetto_writer.h"

namespace commlens::cli {

namespace {

struct WhatIfArgs {
  JobInputs inputs;
  std::vector<std::string> fixes;
  std::string json_path;
  std::string perfetto_path;
  std::string network_path;
  bool mpi = false;
  bool quiet = false;
  size_t rows = 8;
};

std::string Ratio(double s) { return fmt::format("{:.3f}", s); }

void PrintShares(const char* title, const std::vector<analysis::WhatIfShare>& shares, size_t rows) {
  if (shares.empty()) return;
  fmt::print("\n{}\n", title);
  for (size_t i = 0; i < shares.size() && i < rows; ++i)
    fmt::print("  {:<50} S {}\n", Shortened(shares[i].label, 50),
               Ratio(shares[i].slowdown));
  if (shares.size() > rows) fmt::print("  ... {} more (--json has all)\n", shares.size() - rows);
}

nlohmann::json SharesJson(const std::vector<analysis::WhatIfShare>& shares) {
  nlohmann::json j = nlohmann::json::array();
  for (const auto& s : shares) j.push_back({{"part", s.label}, {"slowdown", s.slowdown}, {"per_step", s.per_step}});
  return j;
}

nlohmann::json ToJson(const analysis::WhatIfAnalysis& w) {
  auto us = [](const std::vector<model::TimeNs>& v) {
    nlohmann::json a = nlohmann::json::array();
    for (model::TimeNs t : v) a.push_back(static_cast<double>(t) / 1000.0);
    return a;
  };
  nlohmann::json fixes = nlohmann::json::array();
  for (const auto& f : w.fixes)
    fixes.push_back({{"fix", f.part.Label()}, {"step_time_us", us(f.step_time)}, {"no_delay_us", us(f.no_delay)},
                     {"mean_step_time_us", static_cast<double>(f.mean) / 1000.0}, {"gain", f.gain},
                     {"priced", f.priced}, {"unpriced", f.unpriced}});
  return {{"schema", "commlens.whatif"},
          {"schema_version", 1},
          {"done", w.done},
          {"why_not", w.why_not},
          {"steps", w.steps},
          {"measured_us", us(w.measured)},
          {"replayed_us", us(w.replayed)},
          {"no_delay_us", us(w.no_delay)},
          {"ideal_us", us(w.ideal)},
          {"replay_error", w.replay_error},
          {"slowdown", w.slowdown},
          {"launch_slowdown", w.launch_slowdown},
          {"step_slowdown", w.step_slowdown},
          {"graph", {{"nodes", w.nodes}, {"groups", w.groups}, {"cross_stream_edges", w.cross_stream_edges},
                     {"unresolved", w.unresolved}}},
          {"by_rank", SharesJson(w.by_rank)},
          {"by_stage", SharesJson(w.by_stage)},
          {"by_op", SharesJson(w.by_op)},
          {"by_group", SharesJson(w.by_group)},
          {"fixes", fixes}};
}

int ReplayAndReport(const model::Trace& trace, const analysis::JobAnalysis& job, analysis::WhatIfOptions options,
                    const WhatIfArgs& a);

int Run(const WhatIfArgs& a) {
  analysis::WhatIfOptions options;
  for (const std::string& f : a.fixes) {
    const size_t eq = f.find('=');
    const std::string kind = eq == std::string::npos ? "" : f.substr(0, eq);
    if (kind != "rank" && kind != "stage" && kind != "op" && kind != "group") {
      std::fprintf(stderr, "commlens whatif: --fix %s: give rank=R, stage=S, op=NAME or group=G\n", f.c_str());
      return kExitUsage;
    }
    options.fixes.push_back({kind, f.substr(eq + 1)});
  }
  if (!a.network_path.empty()) {
    Result<std::vector<analysis::BenchCurve>> curves = ReadBenchCurves(a.network_path);
    if (!curves.ok()) {
      std::fprintf(stderr, "commlens whatif: --network: %s\n", curves.status().message().c_str());
      return kExitFailed;
    }
    options.network = std::move(curves).value();
    options.network_label = a.network_path;
  }
  JobInputs inputs = a.inputs;
  inputs.load.drop_host_events = true;  // as analyze: the replay reads GPU activities and annotations only
  analysis::AnalyzeOptions analyze;
  analyze.threads = a.inputs.load.threads;
  analyze.replay = false;  // the replay below is the whole answer: not twice
  if (a.mpi) {
    // The import and per-rank analyses spread over the processes; every rank's GPU table
    // comes to rank 0, which replays (distributed/analyze_over_mpi.h, whole_ranks).
    distributed::RankZeroHooks hooks;
    const bool quiet = a.quiet || a.json_path == "-";
    hooks.show_progress = [quiet](const importers::LoadProgress* progress) {
      return std::make_shared<ProgressLine>(progress, quiet);
    };
    hooks.report = [&](const model::Trace& trace, const analysis::JobAnalysis& job) {
      return ReplayAndReport(trace, job, options, a);
    };
    hooks.fail = [](const std::string& why, bool usage) {
      std::fprintf(stderr, "commlens whatif: %s\n", why.c_str());
      return usage ? kExitUsage : kExitFailed;
    };
    distributed::MpiJob job{inputs.paths, inputs.load, inputs.steps, analyze};
    job.whole_ranks = true;
    return distributed::AnalyzeOverMpi(job, hooks);
  }
  Result<model::Trace> loaded = LoadJob(inputs, "whatif", a.quiet);
  if (!loaded.ok()) return kExitFailed;
  const model::Trace& trace = *loaded;
  analyze.steps = ChooseJobSteps(a.inputs, trace, "whatif");
  if (!analyze.steps) return kExitUsage;
  return ReplayAndReport(trace, analysis::Analyze(trace, analyze), options, a);
}

int ReplayAndReport(const model::Trace& trace, const analysis::JobAnalysis& job, analysis::WhatIfOptions options,
                    const WhatIfArgs& a) {
  // Past 64 ranks, the 16 whose activities exceed their kinds' ideal most are attributed
  // (a replay each), not every rank.
  if (trace.ranks.size() > 64) options.rank_candidates = 16;
  options.timeline = !a.perfetto_path.empty();
  const analysis::WhatIfAnalysis w = analysis::WhatIf(trace, job, options);
  if (!a.json_path.empty()) {
    const nlohmann::json doc = ToJson(w);
    if (a.json_path == "-") {
      WriteJson(std::cout, doc, 1);
      std::cout << "\n";
    } else if (Status s = WriteJsonFile(a.json_path, doc, 1); !s.ok()) {
      std::fprintf(stderr, "commlens whatif: %s\n", s.message().c_str());
      return kExitFailed;
    }
  }
  if (a.json_path != "-" && !a.quiet) {
    if (!w.done) {
      fmt::print("commlens whatif: no replay: {}\n", w.why_not);
    } else {
      const std::string what = w.steps.size() == 1 && w.steps[0] < 0 ? std::string("the whole trace: no profiler steps")
                                                                      : fmt::format("{} steps", w.steps.size());
      fmt::print("What if (replay of {}, {} activities, {} cross-rank groups)\n", what, w.nodes, w.groups);
      fmt::print("  model error: the replay gives the measured step times within {:.2f}%{}\n", 100.0 * w.replay_error,
                 w.unresolved ? fmt::format(" ({} activities held back by a cycle, ended on the members started)",
                                           w.unresolved)
                              : "");
      fmt::print("  step time: measured {}, without launch delays {}, ideal {} (mean per step)\n",
                 FormatDuration(static_cast<model::TimeNs>(analysis::MeanStep(w.measured))),
                 FormatDuration(static_cast<model::TimeNs>(analysis::MeanStep(w.no_delay))),
                 FormatDuration(static_cast<model::TimeNs>(analysis::MeanStep(w.ideal))));
      fmt::print("  slowdown S = {} (no-delay over ideal); launch delays add {}x\n", Ratio(w.slowdown),
                 Ratio(w.launch_slowdown));
      PrintShares("S with only this part as measured (the rest ideal), largest first:", w.by_stage, a.rows);
      PrintShares(w.by_rank.size() < trace.ranks.size()
                      ? "by rank (the 16 whose activities exceed their kinds' typical time most):"
                      : "by rank:",
                  w.by_rank, a.rows);
      PrintShares("by op kind:", w.by_op, a.rows);
      PrintShares("by process group (its communication):", w.by_group, a.rows);
      for (const auto& f : w.fixes) {
        const bool network = f.part.kind == "network";
        fmt::print("\n{} {}: step time {} instead of {} ({:.1f}% {})\n", network ? "--network" : "--fix",
                   network ? f.part.value : f.part.Label(), FormatDuration(f.mean),
                   FormatDuration(static_cast<model::TimeNs>(analysis::MeanStep(w.replayed))), 100.0 * std::abs(f.gain),
                   f.gain >= 0 ? "faster" : "slower");
        if (network)
          fmt::print("  every communication at the benchmark's bandwidth for its op, group size and bytes: {} of {} "
                     "activities priced{}\n",
                     f.priced, f.priced + f.unpriced,
                     f.unpriced ? " (the rest, without a curve of their op and group size, or batched, as measured)" : "");
      }
    }
  }
  if (!w.done) return kExitFailed;
  // The timeline last: a file that cannot be written loses none of the answer above.
  if (options.timeline) {
    if (Status s = exporters::WritePerfetto(analysis::IdealTimeline(trace, w), a.perfetto_path, {}); !s.ok()) {
      std::fprintf(stderr, "commlens whatif: %s\n", s.message().c_str());
      return kExitFailed;
    }
  }
  return ReportFailures(trace, "whatif");
}

}  // namespace

void AddWhatIfVerb(CLI::App& app, int* exit_code) {
  CLI::App* sub = app.add_subcommand(
      "whatif", "Replay a job's steps from its traces and say how much faster it would be if a part of it "
                "(a rank, a pipeline stage, an op kind, a process group) ran at its typical speed.");
  sub->footer(
      "commlens whatif TRACES [--fix rank=R|stage=S|op=NAME|group=G]... [--network RUN.json]\n"
      "                [--json OUT] [--perfetto IDEAL.json]\n"
      "  Each profiler step becomes a graph of its GPU activities (stream order, the waits\n"
      "  between streams, collectives and messages across ranks) and is replayed: with the\n"
      "  measured durations (the model error: how far the replay is from the measured step),\n"
      "  without launch delays, and with every activity at the typical duration of its kind\n"
      "  (the ideal). S = no-delay step time / ideal. Per rank, stage, op kind and group: S\n"
      "  with only that part as measured. --fix: the step time predicted with that part at\n"
      "  its typical speed (what it runs beyond its peers left out, its launch delays at\n"
      "  most its peers' median; peers: every rank, or a pipeline stage's own ranks, a\n"
      "  one-rank stage its leanest step and its own delays), the rest as measured; JSON\n"
      "  also without launch delays.\n"
      "  --network: the step time with every communication's transfer at the bandwidth\n"
      "  `commlens bench --json` measured for its op, group size and bytes.\n"
      "  --perfetto: the ideal replay as a Perfetto timeline, each step where it started in\n"
      "  the trace: open it beside `commlens export --perfetto` of the same traces.\n"
      "  Thousands of ranks: `mpirun -np N commlens whatif --mpi TRACES` spreads the import\n"
      "  and per-rank analyses; every rank's GPU activities go to rank 0, which replays.\n"
      "  docs/analysis.md, \"What if\". Exit codes: 0; 1 nothing to replay, or a --network\n"
      "  or output file could not be read or written; 2 some inputs failed; 64 usage error.");
  auto args = std::make_shared<WhatIfArgs>();
  AddJobInputOptions(sub, &args->inputs);
  sub->add_option("--fix", args->fixes, "A part at its typical speed: rank=R, stage=S, op=NAME (prefix), group=G")
      ->type_name("PART");
  sub->add_option("--json", args->json_path, "Write the result as JSON (- for stdout)")->type_name("OUT.json");
  sub->add_option("--network", args->network_path,
                  "The step time with the network at the speed this benchmark run measured (commlens bench --json)")
      ->type_name("RUN.json");
  sub->add_option("--perfetto", args->perfetto_path,
                  "Write the ideal replay as a Perfetto (Chrome trace JSON) timeline, .gz to compress")
      ->type_name("IDEAL.json");
  sub->add_option("--rows", args->rows, "Rows per attribution table (default 8)");
  sub->add_flag("--mpi", args->mpi,
                "Run as one process of an MPI job (mpirun, srun): the processes share the import and the per-rank "
                "analyses, every rank's GPU activities go to rank 0, which replays and writes the answer" +
                    std::string(COMMLENS_HAS_MPI ? "" : " (not in this build: no MPI was found)"));
  sub->add_flag("-q,--quiet", args->quiet, "No text");
  sub->callback([args, exit_code] { *exit_code = Run(*args); });
}

}  // namespace commlens::cli
