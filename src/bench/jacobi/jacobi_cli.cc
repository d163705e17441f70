#include "bench/jacobi/jacobi_cli.h"

#include <cstdio>

#include <fmt/format.h>

#include "bench/driver.h"
#include "bench/errors.h"
#include "bench/session.h"

namespace commlens::bench {

void AddJacobiOptions(CLI::App& app, JacobiCliArgs* a) {
  const JacobiConfig d;
  JacobiConfig& c = a->config;
  app.add_option("--variant", a->variants,
                 fmt::format("How the halos move: {} (default nccl); several run one after "
                             "the other",
                             JacobiVariantChoices()))
      ->delimiter(',');
  app.add_option("--nx", c.nx, fmt::format("Columns (default {})", d.nx));
  app.add_option("--ny", c.ny, fmt::format("Rows, split over the ranks (default {})", d.ny));
  app.add_option("-n,--iters", c.iters, fmt::format("Timed iterations (default {})", d.iters));
  app.add_option("-w,--warmup", c.warmup, fmt::format("Warm-up iterations (default {})", d.warmup));
  app.add_flag("--check,!--no-check", c.check,
               fmt::format("Also run each variant on a small grid against the CPU reference "
                           "(default on, {} x {}, {} iterations)",
                           d.check_nx, d.check_ny, d.check_iters));
  app.add_option("--check-nx", c.check_nx, "Columns of the check grid");
  app.add_option("--check-ny", c.check_ny, "Rows of the check grid");
  app.add_option("--check-iters", c.check_iters, "Iterations of the check grid");
  app.add_flag("--single-gpu,!--no-single-gpu", c.single_gpu,
               "Time one GPU on the whole grid for the parallel efficiency (default on)");
  app.add_option("--json", c.json_path, "Write the results as JSON to this file (process 0)");
  app.add_option("--timeout", a->timeout,
                 fmt::format("Give up on a peer or a step after this long (default {} s)",
                             d.timeout.count() / 1000));
  app.add_option("--launcher", a->launcher, "auto|local|env|mpi (default auto)");
  app.add_option("--port", c.port, "TCP rendezvous port for --launcher env");
}

Result<JacobiConfig> BuildJacobiConfig(const JacobiCliArgs& a) {
  JacobiConfig c = a.config;
  if (!a.variants.empty()) {
    Result<std::vector<JacobiVariant>> v = ParseJacobiVariants(a.variants);
    if (!v.ok()) return UsageError(v.status().message());
    c.variants = *v;
  }
  if (!a.timeout.empty()) {
    Result<std::chrono::milliseconds> t = ParseDuration(a.timeout);
    if (!t.ok()) return UsageError(t.status().message());
    c.timeout = *t;
  }
  if (!a.launcher.empty()) {
    auto l = LauncherFromName(a.launcher);
    if (!l) return UsageError(fmt::format("unknown launcher '{}'", a.launcher));
    c.launcher = *l;
  }
  Status valid = Validate(c);
  if (!valid.ok()) return UsageError(valid.message());
  return c;
}

int RunJacobiCommand(const JacobiConfig& config, std::string_view tool_version) {
  std::string who;
  Result<JacobiReport> report = [&]() -> Result<JacobiReport> {
    COMMLENS_RETURN_IF_ERROR(GpuSupport());
    COMMLENS_ASSIGN_OR_RETURN(
        std::unique_ptr<Session> session,
        StartSession(config.launcher, config.port, config.timeout, tool_version, &who));
    COMMLENS_ASSIGN_OR_RETURN(JacobiReport r, RunJacobiOnGpus(config, *session));
    r.run.end_time = NowUtc();
    if (session->boot->rank() == 0) {
      std::fputs(FormatJacobiReport(r).c_str(), stdout);
      std::fflush(stdout);
      if (!config.json_path.empty())
        COMMLENS_RETURN_IF_ERROR(WriteJacobiReport(r, config.json_path));
    }
    return r;
  }();
  if (!report.ok()) return ReportOutcome("bench jacobi", who, report.status());
  if (report->WrongTotal() > 0)
    return ReportOutcome("bench jacobi", who,
                         Error(fmt::format("{} element(s) differ from the CPU reference",
                                           report->WrongTotal())),
                         ExitCode::kWrongResults);
  return 0;
}

}  // namespace commlens::bench
