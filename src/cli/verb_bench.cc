// commlens bench: the collective benchmark (src/bench, docs/bench.md).
#include <cstdio>
#include <memory>
#include <string_view>

#include "bench/bench_cli.h"
#include "bench/errors.h"
#include "bench/jacobi/jacobi_cli.h"
#include "bench/moe/moe_cli.h"
#include "bench/run_bench.h"
#include "cli/verbs.h"

namespace commlens::cli {

namespace {

// One mode of `commlens bench` (the collectives, moe, jacobi): its options on |app|, and
// a callback that builds the configuration (exit 64 on a usage error) and runs it.
template <typename Args, typename Config>
void AddMode(CLI::App* app, std::string_view what, int* exit_code,
             void (*add_options)(CLI::App&, Args*), Result<Config> (*build)(const Args&),
             int (*run)(const Config&, std::string_view), bool yield_to_subcommands = false) {
  auto args = std::make_shared<Args>();
  add_options(*app, args.get());
  app->callback([=] {
    if (yield_to_subcommands && !app->get_subcommands().empty()) return;  // a mode ran instead
    Result<Config> config = build(*args);
    if (!config.ok()) {
      std::fprintf(stderr, "commlens %.*s: %s\n", static_cast<int>(what.size()), what.data(),
                   config.status().message().c_str());
      *exit_code = static_cast<int>(bench::ExitCode::kUsage);
      return;
    }
    *exit_code = run(*config, COMMLENS_VERSION);
  });
}

}  // namespace

void AddBenchVerb(CLI::App& app, int* exit_code) {
  CLI::App* sub = app.add_subcommand(
      "bench",
      "Benchmark NCCL collectives with nccl-tests' method and definitions (algbw, busbw), "
      "checking every result; one process driving -g GPUs, or one per GPU under "
      "mpirun/srun/torchrun. alltoall also runs GPU-initiated (--backend nccl-device|nvshmem|"
      "all); `bench moe` times MoE dispatch/combine and `bench jacobi` a halo-exchange "
      "solver.");
  AddMode(sub, "bench", exit_code, bench::AddBenchOptions, bench::BuildConfig,
          bench::RunBenchCommand, /*yield_to_subcommands=*/true);
  AddMode(sub->add_subcommand(
              "moe",
              "MoE dispatch and combine shaped like DeepEP's: tokens routed by a seeded router "
              "to top-k experts spread over the ranks, exchanged with variable per-peer sizes "
              "over --backend nccl|nccl-device|nvshmem|all; dispatch and combine time and "
              "bandwidth, every element checked."),
          "bench moe", exit_code, bench::AddMoeOptions, bench::BuildMoeConfig,
          bench::RunMoeCommand);
  AddMode(sub->add_subcommand(
              "jacobi",
              "2-D Jacobi solver with halo exchange in variants nccl, nccl-overlap, "
              "nccl-graph, nvshmem, nvshmem-nb: time per iteration and parallel efficiency "
              "against one GPU, checked against a CPU reference on a small grid."),
          "bench jacobi", exit_code, bench::AddJacobiOptions, bench::BuildJacobiConfig,
          bench::RunJacobiCommand);
}

}  // namespace commlens::cli
