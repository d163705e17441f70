// The options of `commlens bench` (nccl-tests' short flags where they exist) and their
// conversion into a BenchConfig. Lives in the library so argument parsing is unit-tested
// without the commlens executable.
#pragma once

#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "bench/bench_config.h"
#include "bench/mode_cli.h"
#include "common/status.h"

namespace commlens::bench {

struct BenchCliArgs {
  BenchConfig config;  // numeric options and flags are bound to its fields directly
  std::vector<std::string> collectives;
  std::string min_bytes;
  std::string max_bytes;
  std::string step_bytes;
  std::string dtype;
  std::string op;
  std::string spin_up;
  SessionCliArgs session;
  std::vector<std::string> backends;
  int check_level = -1;  // nccl-tests' -c N; -1: not given
};

void AddBenchOptions(CLI::App& app, BenchCliArgs* args);
// The parsed options as a validated configuration; errors carry the "usage: " tag.
Result<BenchConfig> BuildConfig(const BenchCliArgs& args);

}  // namespace commlens::bench
