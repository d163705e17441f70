// `commlens bench moe`: its options, their conversion into a MoeConfig, and the command
// (session, GPU run, table on process 0, JSON, exit code). In the library so argument
// parsing is unit-tested without the executable.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include <CLI/CLI.hpp>

#include "bench/mode_cli.h"
#include "bench/moe/moe_config.h"
#include "common/status.h"

namespace commlens::bench {

struct MoeCliArgs {
  MoeConfig config;  // numeric options and flags bind to its fields
  std::vector<std::string> backends;
  SessionCliArgs session;
};

void AddMoeOptions(CLI::App& app, MoeCliArgs* args);
Result<MoeConfig> BuildMoeConfig(const MoeCliArgs& args);
int RunMoeCommand(const MoeConfig& config, std::string_view tool_version);

}  // namespace commlens::bench
