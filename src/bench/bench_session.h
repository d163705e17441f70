// What every `commlens bench` mode (collectives, moe, jacobi) does before it touches a
// GPU: find its place among the processes (launch.h), meet them (bootstrap.h: TCP
// rendezvous, MPI or none), and arm a watchdog (watchdog.h) so no step can hang.
#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "bench/bench_config.h"
#include "bench/bootstrap.h"
#include "bench/errors.h"
#include "bench/launch.h"
#include "bench/result.h"
#include "bench/watchdog.h"
#include "common/status.h"

namespace commlens::bench {

struct Session {
  LaunchInfo launch;
  std::unique_ptr<Bootstrap> boot;
  Watchdog watchdog;
  RunInfo base;  // tool version and start time; the GPU driver fills in the rest
};

// |who|, when given, is set to "process P of N on HOST" for multi-process runs, so error
// messages can say which process failed.
Result<std::unique_ptr<Session>> StartSession(Launcher launcher, int port,
                                              std::chrono::milliseconds timeout,
                                              std::string_view tool_version,
                                              std::string* who = nullptr);

// ISO 8601 UTC, second resolution.
std::string NowUtc();

// The CLI's end of a run: prints "commlens bench[ who]: message" on stderr and returns
// the exit code for |status| (errors.h); kOk for an OK status.
// |code|, when given, replaces the one errors.h derives from the status.
int ReportOutcome(std::string_view mode, const std::string& who, const Status& status,
                  std::optional<ExitCode> code = std::nullopt);

}  // namespace commlens::bench
