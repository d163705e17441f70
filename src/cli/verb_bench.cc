// commlens bench: the collective benchmark (src/bench, docs/bench.md).
#include <memory>

#include "bench/bench_cli.h"
#include "bench/errors.h"
#include "bench/run_bench.h"
#include "cli/verbs.h"

namespace commlens::cli {

void AddBenchVerb(CLI::App& app, int* exit_code) {
  CLI::App* sub = app.add_subcommand(
      "bench",
      "Benchmark NCCL collectives with nccl-tests' method and definitions (algbw, busbw), "
      "checking every result; one process driving -g GPUs, or one per GPU under "
      "mpirun/srun/torchrun.");
  auto args = std::make_shared<bench::BenchCliArgs>();
  bench::AddBenchOptions(*sub, args.get());
  sub->callback([args, exit_code] {
    Result<bench::BenchConfig> config = bench::BuildConfig(*args);
    if (!config.ok()) {
      std::fprintf(stderr, "commlens bench: %s\n", config.status().message().c_str());
      *exit_code = static_cast<int>(bench::ExitCode::kUsage);
      return;
    }
    *exit_code = bench::RunBenchCommand(*config, COMMLENS_VERSION);
  });
}

}  // namespace commlens::cli
