// commlens analyze: import a job's traces and report where the GPU time went.
#include <fmt/format.h>

#include <chrono>
#include <cstdio>
#include <iostream>

#include "analysis/analyze.h"
#include "cli/bench_curves.h"
#include "cli/job_inputs.h"
#include "cli/progress.h"
#include "cli/verbs.h"
#include "common/json_writer.h"
#include "common/units.h"
#include "distributed/analyze_over_mpi.h"
#include "distributed/host_lookup.h"
#include "exporters/csv/csv_writer.h"
#include "importers/trace_loader.h"
#include "report/json_report.h"
#include "report/text_report.h"

namespace commlens::cli {

namespace {

// The options structs hold the defaults; the command line writes into them.
struct AnalyzeArgs {
  JobInputs inputs;
  std::string json_path;
  std::string csv_dir;
  std::string bench;
  bool quiet = false;
  bool mpi = false;
  analysis::AnalyzeOptions analyze;
  report::TextOptions text;
  double kernel_wait_us = analyze.idle.kernel_wait_threshold / 1000.0;
};

// Writes the reports of the analyzed job; the exit code.
int Report(const model::Trace& trace, const analysis::JobAnalysis& job, const AnalyzeArgs& args,
           std::chrono::steady_clock::time_point t0) {
  if (!args.json_path.empty()) {
    // Written straight to the file (indent 1, as dump(1)): a job of thousands of ranks
    // does not hold its JSON text beside the document. The file is whole or absent.
    const nlohmann::json doc = report::AnalyzeToJson(trace, job);
    if (args.json_path == "-") {
      WriteJson(std::cout, doc, 1);
      std::cout << "\n";
      if (!std::cout.flush()) {
        fmt::print(stderr, "commlens analyze: cannot write the JSON to stdout\n");
        return kExitFailed;
      }
    } else if (Status written = WriteJsonFile(args.json_path, doc, 1); !written.ok()) {
      fmt::print(stderr, "commlens analyze: {}\n", written.message());
      return kExitFailed;
    }
  }
  if (!args.csv_dir.empty()) {
    std::vector<std::string> files;
    if (Status written = exporters::WriteCsv(job, args.csv_dir, &files); !written.ok()) {
      fmt::print(stderr, "commlens analyze: {}\n", written.message());
      return kExitFailed;
    }
  }
  if (!args.quiet && args.json_path != "-") {
    std::string out = report::AnalyzeToText(trace, job, args.text);
    double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    out += fmt::format("\n{} ranks, {} of trace data analyzed in {:.2f} s\n", trace.ranks.size(),
                       FormatBytes(static_cast<int64_t>(trace.InputBytes())), secs);
    std::fwrite(out.data(), 1, out.size(), stdout);
  }
  return ReportFailures(trace, "analyze");
}

int RunAnalyze(AnalyzeArgs args) {
  auto t0 = std::chrono::steady_clock::now();
  args.analyze.threads = args.inputs.load.threads;
  args.analyze.idle.kernel_wait_threshold = static_cast<model::TimeNs>(args.kernel_wait_us * 1000.0);
  if (!args.bench.empty()) {
    Result<std::vector<analysis::BenchCurve>> curves = ReadBenchCurves(args.bench);
    if (!curves.ok()) {
      fmt::print(stderr, "commlens analyze: {}\n", curves.status().message());
      return kExitFailed;
    }
    args.analyze.bench = std::move(curves).value();
  }
  bool quiet = args.quiet || args.json_path == "-";
  // The host events go as each rank is imported (model/host_events.h): what a stopped
  // rank was doing is then read again from its file.
  args.inputs.load.drop_host_events = true;
  args.inputs.load.counters_alone = true;  // a recording without NCCL: its nodes' counters
  if (args.mpi) {
    distributed::RankZeroHooks hooks;
    hooks.show_progress = [quiet](const importers::LoadProgress* progress) {
      return std::make_shared<ProgressLine>(progress, quiet);
    };
    hooks.report = [&](const model::Trace& trace, const analysis::JobAnalysis& job) {
      return Report(trace, job, args, t0);
    };
    hooks.fail = [](const std::string& why, bool usage) {
      fmt::print(stderr, "commlens analyze: {}\n", why);
      return usage ? kExitUsage : kExitFailed;
    };
    return distributed::AnalyzeOverMpi({args.inputs.paths, args.inputs.load, args.inputs.steps, args.analyze}, hooks);
  }
  Result<model::Trace> loaded = LoadJob(args.inputs, "analyze", quiet);
  if (!loaded.ok()) return kExitFailed;
  analysis::AnalyzeOptions options = args.analyze;
  options.steps = ChooseJobSteps(args.inputs, *loaded, "analyze");
  if (!options.steps) return kExitUsage;
  options.doing_at = distributed::DoingAtFromFiles(*loaded);
  return Report(*loaded, analysis::Analyze(*loaded, options), args, t0);
}

}  // namespace

void AddAnalyzeVerb(CLI::App& app, int* exit_code) {
  auto args = std::make_shared<AnalyzeArgs>();
  CLI::App* cmd = app.add_subcommand(
      "analyze",
      "Analyze a job's traces (PyTorch profiler JSON per rank, Nsight Systems reports, or "
      "commlens recordings): where "
      "the GPU time went, idle gaps, collectives and their bandwidth, matched across ranks");
  cmd->footer(
      "Inputs: PyTorch profiler (Kineto) JSON, one file per rank (.json or .json.gz);\n"
      "Nsight Systems SQLite exports (.sqlite or .sqlite.gz; `nsys export --type sqlite\n"
      "--include-blobs=true` keeps NCCL's sizes), or reports (.nsys-rep: exported with the nsys\n"
      "on PATH or in NSYS_HOME, cached beside the report), one rank per profiled process;\n"
      "or commlens native traces (.cltrace). Opens with the job (ranks, missing ones, steps,\n"
      "the median step) and the findings, largest cost first, each with its unit (wall time\n"
      "per step, or rank-time summed over ranks) and the section to read. Reports per rank the GPU time breakdown\n"
      "(compute / non-compute / idle), communication-compute overlap and exposed\n"
      "communication, per profiler step; the kernel breakdown; idle gaps per stream (host\n"
      "wait / kernel wait / other); and collectives per process group, op and message size\n"
      "with busbw over the kernel time and over the transfer time (after the last rank\n"
      "arrived: the fabric's speed; --bench holds it against a benchmark), matched across\n"
      "ranks; each process group's parallelism (tensor, data, pipeline, expert, context:\n"
      "from its description, its operations or its place in the mesh, the rule said) and\n"
      "each role's exposed communication per step; then the cross-rank findings: which rank\n"
      "arrives last, what it costs the others and why (overall and per step), hangs (who\n"
      "never reached which collective, what it was doing) and desyncs, process-group\n"
      "contention, pipelines (stages, every data-parallel replica, micro-batches, GPipe,\n"
      "1F1B or interleaved with its model chunks per rank, the bubble against the\n"
      "schedule's ideal, the stage that sets the pace; batched send/recv counted once),\n"
      "NCCL algorithm and protocol; clocks aligned across hosts (--align). Real examples:\n"
      "examples/traces/cross-rank/, examples/traces/pipelines/.\n"
      "With a node's samples file (commlens record; alone too, for a job that made no NCCL\n"
      "call): NIC ports' bytes, rates and line rate, a\n"
      "warning for each port whose error, retransmit or drop counters grew (which, how many,\n"
      "when first), NIC bytes and Gb/s against line rate per collective bucket; GPU metrics.\n"
      "Steps: warm-up steps (the leading ones over 1.5x the median step) are shown but left\n"
      "out, outliers (over 3x) stay out of the step statistics; --steps chooses. Clocks are\n"
      "checked (a collective cannot end on one rank before another starts it) and aligned\n"
      "when they differ. Two runs' traces are refused with both named; missing ranks are named.\n"
      "Definitions: docs/analysis.md.\n\n"
      "Memory: each rank's host events are dropped once it is imported (the analyses read only\n"
      "its ProfilerStep ranges; a stopped rank's file is read again to say what it was doing).\n"
      "Thousands of ranks: `mpirun -np N commlens analyze --mpi TRACES` (or srun) spreads the\n"
      "import and the per-rank analyses over N processes; each keeps its ranks' GPU timelines\n"
      "and sends rank 0 a summary of each rank; rank 0 writes the same report\n"
      "(docs/analysis.md, docs/performance.md).\n\n"
      "Exit codes: 0 all files analyzed; 1 nothing could be analyzed (or --strict and a file\n"
      "failed, or the inputs hold two jobs); 2 some files failed and the others were analyzed;\n"
      "64 usage error (also a --steps the traces lack).");
  AddJobInputOptions(cmd, &args->inputs);
  cmd->add_option("--json", args->json_path,
                  "Also write the results as JSON (schema commlens.analyze v2, docs/json-report.md); "
                  "'-' writes JSON alone to stdout")
      ->type_name("FILE");
  cmd->add_option("--csv", args->csv_dir,
                  "Also write the analysis tables as CSV into this folder (those of `commlens export -f csv`; "
                  "with --mpi too)")
      ->type_name("DIR");
  cmd->add_option("--bench", args->bench,
                  "A benchmark run of this fabric (commlens bench --json): each collective's transfer bandwidth "
                  "is held against its busbw at that size and group size")
      ->type_name("RUN.json");
  cmd->add_flag("--all-events", args->analyze.window.all_events,
                "Analyze every GPU activity, not only those launched within the profiled steps");
  cmd->add_option("--kernel-wait-threshold-us", args->kernel_wait_us,
                  "Idle gaps shorter than this between queued kernels count as kernel wait")
      ->capture_default_str();
  cmd->add_option("--top-kernels", args->analyze.top_kernels,
                  "Kernels listed in the job's table and per rank")
      ->capture_default_str();
  cmd->add_option_function<size_t>(
         "--max-rows", [args](size_t n) { args->text.max_rows = args->text.max_steps = n; },
         "Rows of each table in the text report (steps, collectives, idle gaps, ...); --json has all")
      ->type_name("N")
      ->default_str(std::to_string(args->text.max_rows));
  cmd->add_flag("--all-ranks", args->text.all_ranks,
                "Every rank's row in the per-rank tables (past 16 ranks they show the extremes and the distribution)");
  cmd->add_flag_function(
      "--no-replay", [args](int64_t) { args->analyze.replay = false; },
      "Leave out the what-if replay behind the verdict (commlens whatif; it runs for jobs of 2 to 512 ranks, "
      "not under --mpi)");
  cmd->add_flag("-q,--quiet", args->quiet, "No text report (with --json)");
  cmd->add_flag("--mpi", args->mpi,
                "Run as one process of an MPI job (mpirun, srun): the processes share the files' import and "
                "per-rank analyses, rank 0 writes the report, the same as without --mpi" +
                    std::string(COMMLENS_HAS_MPI ? "" : " (not in this build: no MPI was found)"));
  cmd->callback([args, exit_code] { *exit_code = RunAnalyze(*args); });
}

}  // namespace commlens::cli
