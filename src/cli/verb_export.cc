// commlens export: the job in other tools' formats (src/exporters, docs/export.md).
#include <fmt/format.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>

#include "analysis/analyze.h"
#include "cli/job_inputs.h"
#include "cli/verbs.h"
#include "common/strings.h"
#include "exporters/csv/csv_writer.h"
#include "exporters/export.h"
#include "exporters/paraver/paraver_writer.h"
#include "exporters/perfetto/perfetto_writer.h"

namespace commlens::cli {

namespace {

namespace fs = std::filesystem;

struct ExportArgs {
  JobInputs inputs;
  std::string format;
  std::string out;
  bool quiet = false;
  exporters::ExportOptions options;
};

// OUT.json, or OUT.json.gz when OUT ends in .gz; a name already ending in .json is kept.
std::string PerfettoPath(const std::string& out) {
  if (EndsWith(out, ".json") || EndsWith(out, ".json.gz")) return out;
  if (EndsWith(out, ".gz")) return out.substr(0, out.size() - 3) + ".json.gz";
  return out + ".json";
}

std::string ParaverPrefix(const std::string& out) {
  return EndsWith(out, ".prv") ? out.substr(0, out.size() - 4) : out;
}

// Where the shipped Paraver views are: installed beside the binary, else in the source
// tree this binary was built from.
std::string ParaverViewsDir() {
  std::error_code ec;
  fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    fs::path installed = exe.parent_path().parent_path() / "share" / "commlens" / "paraver";
    if (fs::is_directory(installed, ec)) return installed.string();
  }
  return COMMLENS_SOURCE_DIR "/share/paraver";
}

int RunExport(ExportArgs args) {
  const auto t0 = std::chrono::steady_clock::now();
  Result<model::Trace> loaded = LoadJob(args.inputs, "export", args.quiet);
  if (!loaded.ok()) return kExitFailed;
  const model::Trace& trace = *loaded;
  // The timeline keeps every step unless --steps names some (each must be in the traces).
  const std::optional<analysis::StepChoice> steps = ChooseJobSteps(args.inputs, trace, "export");
  if (!steps) return kExitUsage;
  args.options.steps = args.inputs.steps;

  Status written;
  std::string what;
  if (args.format == "perfetto") {
    const std::string path = PerfettoPath(args.out);
    uint64_t events = 0;
    written = exporters::WritePerfetto(trace, path, args.options, &events);
    what = fmt::format("{} ({} events)", path, events);
  } else if (args.format == "paraver") {
    const std::string prefix = ParaverPrefix(args.out);
    written = exporters::WriteParaver(trace, analysis::JobAnalysis{}, prefix, args.options);
    what = fmt::format("{0}.prv, {0}.pcf, {0}.row (views: {1})", prefix, ParaverViewsDir());
  } else {
    // The tables of `analyze --json`: the same analysis, the same window.
    analysis::AnalyzeOptions analyze;
    analyze.threads = args.inputs.load.threads;
    analyze.steps = *steps;
    analyze.replay = false;  // no table holds the replay's verdict
    const analysis::JobAnalysis job = analysis::Analyze(trace, analyze);
    std::vector<std::string> files;
    written = exporters::WriteCsv(job, args.out, &files);
    what = fmt::format("{}/ ({} tables)", args.out, files.size());
  }
  if (!written.ok()) {
    fmt::print(stderr, "commlens export: {}\n", written.message());
    ReportFailures(trace, "export");
    return kExitFailed;
  }
  if (!args.quiet) {
    const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    fmt::print("{} ranks exported in {:.2f} s: {}\n", trace.ranks.size(), secs, what);
  }
  return ReportFailures(trace, "export");
}

}  // namespace

void AddExportVerb(CLI::App& app, int* exit_code) {
  auto args = std::make_shared<ExportArgs>();
  CLI::App* cmd = app.add_subcommand(
      "export",
      "Write the job's traces for other tools: one Perfetto/Chrome timeline of every rank, "
      "Paraver traces with analysis views, or the analysis tables as CSV");
  cmd->footer(fmt::format(
      "Formats:\n"
      "  perfetto  OUT.json (OUT.json.gz when OUT ends in .gz) for ui.perfetto.dev and\n"
      "            chrome://tracing: a process per rank, a track per GPU stream and host\n"
      "            thread, every kernel, memcpy and memset; collectives with their arguments\n"
      "            (op, bytes, group, seq, algbw, busbw, wait) and flow arrows joining one\n"
      "            collective across ranks; annotations, steps and counters.\n"
      "  paraver   OUT.prv, OUT.pcf, OUT.row: a Paraver thread per GPU stream of every rank\n"
      "            (tasks = ranks), states compute / communication / memory / idle, events\n"
      "            for kernel, op, bytes and group, communications between matched ops.\n"
      "            Views (.cfg) for it: {}\n"
      "  csv       a folder OUT of CSV tables: ranks, steps, kernels, kernel states, idle\n"
      "            gaps, collectives, cross-rank.\n"
      "Details: docs/export.md. Output appears under its final name only when complete.\n\n"
      "Exit codes: 0 done; 1 nothing could be loaded or the output could not be written;\n"
      "2 some input files failed and the rest was exported; 64 usage error.",
      ParaverViewsDir()));
  AddJobInputOptions(cmd, &args->inputs);
  cmd->add_option("-f,--format", args->format, "Output format")
      ->required()
      ->check(CLI::IsMember({"perfetto", "paraver", "csv"}));
  cmd->add_option("-o,--output", args->out, "Output file name (perfetto, paraver: without extension is fine) or folder (csv)")
      ->required()
      ->type_name("OUT");
  cmd->add_flag("--all-events", args->options.all_events,
                "Perfetto: every host event (CPU operators, Python functions) too, not only annotations and "
                "CUDA runtime/driver calls");
  cmd->add_flag("-q,--quiet", args->quiet, "No summary line");
  cmd->callback([args, exit_code] { *exit_code = RunExport(*args); });
}

}  // namespace commlens::cli
