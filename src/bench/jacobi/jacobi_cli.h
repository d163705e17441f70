// `commlens bench jacobi`: its options, their conversion into a JacobiConfig, and the
// command. In the library so argument parsing is unit-tested without the executable.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include <CLI/CLI.hpp>

#include "bench/jacobi/jacobi_config.h"
#include "bench/mode_cli.h"
#include "common/status.h"

namespace commlens::bench {

struct JacobiCliArgs {
  JacobiConfig config;
  std::vector<std::string> variants;
  SessionCliArgs session;
};

void AddJacobiOptions(CLI::App& app, JacobiCliArgs* args);
Result<JacobiConfig> BuildJacobiConfig(const JacobiCliArgs& args);
int RunJacobiCommand(const JacobiConfig& config, std::string_view tool_version);

}  // namespace commlens::bench
