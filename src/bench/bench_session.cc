#include "bench/bench_session.h"

#include <cstdio>
#include <ctime>

#include <fmt/format.h>

#include "bench/errors.h"
#include "bench/mpi_bootstrap.h"
#include "bench/tcp_bootstrap.h"

namespace commlens::bench {

namespace {

Result<std::unique_ptr<Bootstrap>> MakeBootstrap(const LaunchInfo& launch,
                                                 std::chrono::milliseconds timeout,
                                                 Watchdog& watchdog) {
  switch (launch.launcher) {
    case Launcher::kMpi: {
      Watchdog::Guard guard(watchdog, "MPI initialization", timeout);
      return CreateMpiBootstrap();
    }
    case Launcher::kEnv:
      if (launch.world > 1) {
        COMMLENS_ASSIGN_OR_RETURN(
            auto tcp, TcpBootstrap::Create(launch.master_addr, launch.port, launch.rank,
                                           launch.world, timeout));
        return std::unique_ptr<Bootstrap>(std::move(tcp));
      }
      [[fallthrough]];
    default:
      return std::unique_ptr<Bootstrap>(new LocalBootstrap());
  }
}

}  // namespace

std::string NowUtc() {
  std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return text;
}

Result<std::unique_ptr<Session>> StartSession(Launcher launcher, int port,
                                              std::chrono::milliseconds timeout,
                                              std::string_view tool_version,
                                              std::string* who) {
  auto session = std::make_unique<Session>();
  COMMLENS_ASSIGN_OR_RETURN(session->launch,
                            DetectLaunch(launcher, port, MpiSupportCompiled(), ProcessEnv()));
  const LaunchInfo& launch = session->launch;
  if (who && launch.world > 1)
    *who = fmt::format("rank {} of {} on {}", launch.rank, launch.world, LocalHostName());
  COMMLENS_ASSIGN_OR_RETURN(session->boot, MakeBootstrap(launch, timeout, session->watchdog));
  if (who && session->boot->size() > 1)
    *who = fmt::format("process {} of {} on {}", session->boot->rank(), session->boot->size(),
                       LocalHostName());
  session->base.tool_version = std::string(tool_version);
  session->base.start_time = NowUtc();
  return session;
}

int ReportOutcome(std::string_view mode, const std::string& who, const Status& status,
                  std::optional<ExitCode> code) {
  if (status.ok()) return static_cast<int>(ExitCode::kOk);
  std::string prefix = who.empty() ? fmt::format("commlens {}", mode)
                                   : fmt::format("commlens {} [{}]", mode, who);
  std::fprintf(stderr, "%s: %s\n", prefix.c_str(), status.message().c_str());
  return static_cast<int>(code.value_or(ExitCodeFor(status)));
}

}  // namespace commlens::bench
