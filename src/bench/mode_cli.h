// What the command lines of `commlens bench moe` and `commlens bench jacobi` share with
// each other (and `commlens bench` its options): --json/--timeout/--launcher/--port, and
// the run from a configuration to an exit code: start the session (bench_session.h), run on
// the GPUs, print the table and write the JSON on process 0, and exit 1 on wrong data.
#pragma once

#include <chrono>
#include <cstdio>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "bench/bench_config.h"
#include "bench/driver.h"
#include "bench/errors.h"
#include "bench/bench_session.h"
#include "common/status.h"

namespace commlens::bench {

// The text forms of the session options, converted by ApplySessionOptions.
struct SessionCliArgs {
  std::string timeout;
  std::string launcher;
};

void AddSessionOptions(CLI::App& app, SessionCliArgs* args, std::string* json_path, int* port,
                       std::chrono::milliseconds default_timeout);
// Fills |timeout| and |launcher| from the given texts (unchanged where not given); the
// error carries the usage tag.
Status ApplySessionOptions(const SessionCliArgs& args, std::chrono::milliseconds* timeout,
                           Launcher* launcher);

// The hooks of one mode's report type.
template <typename Report>
struct ModeHooks {
  std::function<Result<Report>(Session&)> run;
  std::function<std::string(const Report&)> format;
  std::function<Status(const Report&, const std::string&)> write;
  std::string_view wrong_what;  // "the exchange returned wrong data", for the exit-1 message
};

template <typename Report>
int RunModeCommand(std::string_view mode, Launcher launcher, int port,
                   std::chrono::milliseconds timeout, const std::string& json_path,
                   std::string_view tool_version, const ModeHooks<Report>& hooks) {
  std::string who;
  Result<Report> report = [&]() -> Result<Report> {
    COMMLENS_RETURN_IF_ERROR(GpuSupport());
    COMMLENS_ASSIGN_OR_RETURN(std::unique_ptr<Session> session,
                              StartSession(launcher, port, timeout, tool_version, &who));
    COMMLENS_ASSIGN_OR_RETURN(Report r, hooks.run(*session));
    r.run.end_time = NowUtc();
    if (session->boot->rank() == 0) {
      std::fputs(hooks.format(r).c_str(), stdout);
      std::fflush(stdout);
      if (!json_path.empty()) COMMLENS_RETURN_IF_ERROR(hooks.write(r, json_path));
    }
    return r;
  }();
  if (!report.ok()) return ReportOutcome(mode, who, report.status());
  if (report->WrongTotal() > 0)
    return ReportOutcome(
        mode, who,
        Error(fmt::format("{} wrong element(s): {}", report->WrongTotal(), hooks.wrong_what)),
        ExitCode::kWrongResults);
  return static_cast<int>(ExitCode::kOk);
}

}  // namespace commlens::bench
