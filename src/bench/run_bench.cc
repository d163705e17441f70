#include "bench/run_bench.h"

#include <memory>

#include <fmt/format.h>

#include "bench/bench_json.h"
#include "bench/driver.h"
#include "bench/errors.h"
#include "bench/reporter.h"
#include "bench/bench_session.h"

namespace commlens::bench {

Result<BenchReport> RunBench(const BenchConfig& config, std::string_view tool_version,
                             std::FILE* out, std::string* who) {
  Status valid = Validate(config);
  if (!valid.ok()) return UsageError(valid.message());
  COMMLENS_RETURN_IF_ERROR(GpuSupport());
  COMMLENS_ASSIGN_OR_RETURN(
      std::unique_ptr<Session> session,
      StartSession(config.launcher, config.port, config.timeout, tool_version, who));
  Bootstrap* boot = session->boot.get();
  Reporter reporter(boot->rank() == 0 ? out : nullptr);
  COMMLENS_RETURN_IF_ERROR(
      RunOnGpus(config, session->launch, session->base, *boot, session->watchdog, reporter));
  reporter.EndRun(NowUtc());
  if (boot->rank() == 0 && !config.json_path.empty())
    COMMLENS_RETURN_IF_ERROR(WriteBenchReport(reporter.report(), config.json_path));
  return reporter.report();
}

int RunBenchCommand(const BenchConfig& config, std::string_view tool_version) {
  std::string who;
  Result<BenchReport> report = RunBench(config, tool_version, stdout, &who);
  if (!report.ok()) return ReportOutcome("bench", who, report.status());
  std::string prefix = who.empty() ? "commlens bench" : fmt::format("commlens bench [{}]", who);
  if (int64_t wrong = report->WrongTotal(); wrong > 0) {
    std::fprintf(stderr, "%s: %lld wrong result element(s): the collectives returned wrong data\n",
                 prefix.c_str(), static_cast<long long>(wrong));
    return static_cast<int>(ExitCode::kWrongResults);
  }
  return static_cast<int>(ExitCode::kOk);
}

}  // namespace commlens::bench
