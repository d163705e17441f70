#include "bench/run_bench.h"

#include <ctime>
#include <memory>

#include <fmt/format.h>

#include "bench/bench_json.h"
#include "bench/bootstrap.h"
#include "bench/driver.h"
#include "bench/errors.h"
#include "bench/launch.h"
#include "bench/mpi_bootstrap.h"
#include "bench/reporter.h"
#include "bench/tcp_bootstrap.h"
#include "bench/watchdog.h"

namespace commlens::bench {

namespace {

std::string NowUtc() {
  std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return text;
}

Result<std::unique_ptr<Bootstrap>> MakeBootstrap(const LaunchInfo& launch,
                                                 const BenchConfig& config,
                                                 Watchdog& watchdog) {
  switch (launch.launcher) {
    case Launcher::kMpi: {
      Watchdog::Guard guard(watchdog, "MPI initialization", config.timeout);
      return CreateMpiBootstrap();
    }
    case Launcher::kEnv:
      if (launch.world > 1) {
        COMMLENS_ASSIGN_OR_RETURN(
            auto tcp, TcpBootstrap::Create(launch.master_addr, launch.port, launch.rank,
                                           launch.world, config.timeout));
        return std::unique_ptr<Bootstrap>(std::move(tcp));
      }
      [[fallthrough]];
    default:
      return std::unique_ptr<Bootstrap>(new LocalBootstrap());
  }
}

}  // namespace

Result<BenchReport> RunBench(const BenchConfig& config, std::string_view tool_version,
                             std::FILE* out, std::string* who) {
  Status valid = Validate(config);
  if (!valid.ok()) return UsageError(valid.message());
  COMMLENS_RETURN_IF_ERROR(GpuSupport());
  COMMLENS_ASSIGN_OR_RETURN(LaunchInfo launch,
                            DetectLaunch(config.launcher, config.port, MpiSupportCompiled(),
                                         ProcessEnv()));
  if (who && launch.world > 1)
    *who = fmt::format("rank {} of {} on {}", launch.rank, launch.world, LocalHostName());
  Watchdog watchdog;
  COMMLENS_ASSIGN_OR_RETURN(std::unique_ptr<Bootstrap> boot,
                            MakeBootstrap(launch, config, watchdog));
  if (who && boot->size() > 1)
    *who = fmt::format("process {} of {} on {}", boot->rank(), boot->size(), LocalHostName());

  RunInfo base;
  base.tool_version = std::string(tool_version);
  base.start_time = NowUtc();
  Reporter reporter(boot->rank() == 0 ? out : nullptr);
  COMMLENS_RETURN_IF_ERROR(RunOnGpus(config, launch, base, *boot, watchdog, reporter));
  reporter.EndRun(NowUtc());
  if (boot->rank() == 0 && !config.json_path.empty())
    COMMLENS_RETURN_IF_ERROR(WriteBenchReport(reporter.report(), config.json_path));
  return reporter.report();
}

int RunBenchCommand(const BenchConfig& config, std::string_view tool_version) {
  std::string who;
  Result<BenchReport> report = RunBench(config, tool_version, stdout, &who);
  std::string prefix = who.empty() ? "commlens bench" : fmt::format("commlens bench [{}]", who);
  if (!report.ok()) {
    std::fprintf(stderr, "%s: %s\n", prefix.c_str(), report.status().message().c_str());
    return static_cast<int>(ExitCodeFor(report.status()));
  }
  if (int64_t wrong = report->WrongTotal(); wrong > 0) {
    std::fprintf(stderr, "%s: %lld wrong result element(s): the collectives returned wrong data\n",
                 prefix.c_str(), static_cast<long long>(wrong));
    return static_cast<int>(ExitCode::kWrongResults);
  }
  return static_cast<int>(ExitCode::kOk);
}

}  // namespace commlens::bench
