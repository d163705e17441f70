// commlens bench: the collective benchmark (src/bench, docs/bench.md).
#include <memory>

#include "bench/bench_cli.h"
#include "bench/errors.h"
#include "bench/jacobi/jacobi_cli.h"
#include "bench/moe/moe_cli.h"
#include "bench/run_bench.h"
#include "cli/verbs.h"

namespace commlens::cli {

void AddBenchVerb(CLI::App& app, int* exit_code) {
  CLI::App* sub = app.add_subcommand(
      "bench",
      "Benchmark NCCL collectives with nccl-tests' method and definitions (algbw, busbw), "
      "checking every result; one process driving -g GPUs, or one per GPU under "
      "mpirun/srun/torchrun. alltoall also runs GPU-initiated (--backend nccl-device|nvshmem|"
      "all); `bench moe` times MoE dispatch/combine and `bench jacobi` a halo-exchange "
      "solver.");
  auto args = std::make_shared<bench::BenchCliArgs>();
  bench::AddBenchOptions(*sub, args.get());
  sub->callback([sub, args, exit_code] {
    if (!sub->get_subcommands().empty()) return;  // `bench moe`/`bench jacobi` ran instead
    Result<bench::BenchConfig> config = bench::BuildConfig(*args);
    if (!config.ok()) {
      std::fprintf(stderr, "commlens bench: %s\n", config.status().message().c_str());
      *exit_code = static_cast<int>(bench::ExitCode::kUsage);
      return;
    }
    *exit_code = bench::RunBenchCommand(*config, COMMLENS_VERSION);
  });

  CLI::App* moe = sub->add_subcommand(
      "moe",
      "MoE dispatch and combine shaped like DeepEP's: tokens routed by a seeded router to "
      "top-k experts spread over the ranks, exchanged with variable per-peer sizes over "
      "--backend nccl|nccl-device|nvshmem|all; dispatch and combine time and bandwidth, "
      "every element checked.");
  auto moe_args = std::make_shared<bench::MoeCliArgs>();
  bench::AddMoeOptions(*moe, moe_args.get());
  moe->callback([moe_args, exit_code] {
    Result<bench::MoeConfig> config = bench::BuildMoeConfig(*moe_args);
    if (!config.ok()) {
      std::fprintf(stderr, "commlens bench moe: %s\n", config.status().message().c_str());
      *exit_code = static_cast<int>(bench::ExitCode::kUsage);
      return;
    }
    *exit_code = bench::RunMoeCommand(*config, COMMLENS_VERSION);
  });

  CLI::App* jacobi = sub->add_subcommand(
      "jacobi",
      "2-D Jacobi solver with halo exchange in variants nccl, nccl-overlap, nccl-graph, "
      "nvshmem, nvshmem-nb: time per iteration and parallel efficiency against one GPU, "
      "checked against a CPU reference on a small grid.");
  auto jacobi_args = std::make_shared<bench::JacobiCliArgs>();
  bench::AddJacobiOptions(*jacobi, jacobi_args.get());
  jacobi->callback([jacobi_args, exit_code] {
    Result<bench::JacobiConfig> config = bench::BuildJacobiConfig(*jacobi_args);
    if (!config.ok()) {
      std::fprintf(stderr, "commlens bench jacobi: %s\n", config.status().message().c_str());
      *exit_code = static_cast<int>(bench::ExitCode::kUsage);
      return;
    }
    *exit_code = bench::RunJacobiCommand(*config, COMMLENS_VERSION);
  });
}

}  // namespace commlens::cli
