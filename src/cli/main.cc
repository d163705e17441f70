// commlens: where the time of a distributed GPU training job goes.
#include <CLI/CLI.hpp>

#include <optional>

#include "cli/verbs.h"

int main(int argc, char** argv) {
  CLI::App app{
      "commlens: where the time of a distributed GPU training job goes.\n"
      "Imports PyTorch profiler (Kineto) traces, Nsight Systems reports and commlens\n"
      "recordings, analyzes compute,\n"
      "communication and idle time per rank and across ranks, replays it to say what a\n"
      "typical rank, stage or op would gain (whatif), compares two runs (diff),\n"
      "exports the job to Perfetto,\n"
      "Paraver and CSV, writes a self-contained HTML report, benchmarks collectives (and\n"
      "compares saved runs), inspects the topology and records jobs (NCCL plugin, NIC and\n"
      "GPU samples) under srun, torchrun or mpirun.\n"
      "Run 'commlens help VERB' (or 'commlens VERB --help') for each verb.\n"
      "Exit code 64: a usage error (wrong option or argument), for every verb.",
      "commlens"};
  app.set_version_flag("--version", "commlens " COMMLENS_VERSION);
  app.require_subcommand(1);
  int exit_code = 0;
#if COMMLENS_HAS_ANALYZE
  commlens::cli::AddAnalyzeVerb(app, &exit_code);
#endif
#if COMMLENS_HAS_ANALYZE
  commlens::cli::AddExportVerb(app, &exit_code);
  commlens::cli::AddWhatIfVerb(app, &exit_code);
  commlens::cli::AddDiffVerb(app, &exit_code);
#endif
#if COMMLENS_HAS_BENCH
  commlens::cli::AddBenchVerb(app, &exit_code);
#endif
#if COMMLENS_HAS_REPORT
  commlens::cli::AddReportVerb(app, &exit_code);
#endif
#if COMMLENS_HAS_TOPO
  commlens::cli::AddTopoVerb(app, &exit_code);
#endif
  commlens::cli::AddRecordVerb(app, &exit_code);
  commlens::cli::AddEnvVerb(app, &exit_code);
  // "commlens help [VERB]", and a verb that does not exist named with the ones that do.
  if (std::optional<int> done = commlens::cli::HelpOrUnknownVerb(app, argc, argv)) return *done;
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // --help and --version end here with success; every usage error has its own code.
    return app.exit(e) == 0 ? commlens::cli::kExitOk : commlens::cli::kExitUsage;
  }
  return exit_code;
}
