// `commlens bench` from a configuration to an exit code: find the other processes
// (launch.h, bootstrap.h), run the GPU driver (driver.h), print the table on rank 0,
// write the JSON file on rank 0, and map failures to exit codes (errors.h).
#pragma once

#include <cstdio>
#include <string>
#include <string_view>

#include "bench/bench_config.h"
#include "bench/result.h"
#include "common/status.h"

namespace commlens::bench {

// The library entry, used by the CLI and the GPU tests. |out| receives the table on
// rank 0 (nullptr: print nothing). |who|, when given, is set to "rank R of N on HOST"
// for multi-process runs, for error messages.
Result<BenchReport> RunBench(const BenchConfig& config, std::string_view tool_version,
                             std::FILE* out, std::string* who = nullptr);

// RunBench with the table on stdout and errors on stderr; returns the exit code.
int RunBenchCommand(const BenchConfig& config, std::string_view tool_version);

}  // namespace commlens::bench
