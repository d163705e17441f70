#include "bench/moe/moe_cli.h"

#include <cstdio>

#include <fmt/format.h>

#include "bench/driver.h"
#include "bench/errors.h"
#include "bench/session.h"

namespace commlens::bench {

void AddMoeOptions(CLI::App& app, MoeCliArgs* a) {
  const MoeConfig d;
  MoeConfig& c = a->config;
  app.add_option("--tokens", c.tokens, fmt::format("Tokens per rank (default {})", d.tokens));
  app.add_option("--hidden", c.hidden,
                 fmt::format("Hidden size, bf16 values per token (default {})", d.hidden));
  app.add_option("--experts", c.experts,
                 fmt::format("Experts, spread evenly over the ranks (default {})", d.experts));
  app.add_option("--topk", c.topk, fmt::format("Experts per token (default {})", d.topk));
  app.add_option("--imbalance", c.imbalance,
                 "Router skew: expert e drawn with weight 1/(e+1)^x; 0 is uniform (default 0)");
  app.add_option("--seed", c.seed, fmt::format("Router seed (default {})", d.seed));
  app.add_option("--backend", a->backends,
                 fmt::format("{} (default nccl); all runs each and prints them side by side",
                             BackendChoices()))
      ->delimiter(',');
  app.add_option("--ctas", c.ctas,
                 fmt::format("CTAs of the GPU-initiated exchange kernels (default {})", d.ctas));
  app.add_option("-n,--iters", c.iters, fmt::format("Timed iterations (default {})", d.iters));
  app.add_option("-w,--warmup", c.warmup, fmt::format("Warm-up iterations (default {})", d.warmup));
  app.add_flag("--check,!--no-check", c.check,
               "Check every received and combined element (default on)");
  app.add_option("--json", c.json_path, "Write the results as JSON to this file (process 0)");
  app.add_option("--timeout", a->timeout,
                 fmt::format("Give up on a peer or a step after this long (default {} s)",
                             d.timeout.count() / 1000));
  app.add_option("--launcher", a->launcher, "auto|local|env|mpi (default auto)");
  app.add_option("--port", c.port, "TCP rendezvous port for --launcher env");
}

Result<MoeConfig> BuildMoeConfig(const MoeCliArgs& a) {
  MoeConfig c = a.config;
  if (!a.backends.empty()) {
    Result<std::vector<Backend>> b = ParseBackends(a.backends);
    if (!b.ok()) return UsageError(b.status().message());
    c.backends = *b;
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

int RunMoeCommand(const MoeConfig& config, std::string_view tool_version) {
  std::string who;
  Result<MoeReport> report = [&]() -> Result<MoeReport> {
    COMMLENS_RETURN_IF_ERROR(GpuSupport());
    COMMLENS_ASSIGN_OR_RETURN(
        std::unique_ptr<Session> session,
        StartSession(config.launcher, config.port, config.timeout, tool_version, &who));
    COMMLENS_ASSIGN_OR_RETURN(MoeReport r, RunMoeOnGpus(config, *session));
    r.run.end_time = NowUtc();
    if (session->boot->rank() == 0) {
      std::fputs(FormatMoeReport(r).c_str(), stdout);
      std::fflush(stdout);
      if (!config.json_path.empty()) COMMLENS_RETURN_IF_ERROR(WriteMoeReport(r, config.json_path));
    }
    return r;
  }();
  if (!report.ok()) return ReportOutcome("bench moe", who, report.status());
  if (report->WrongTotal() > 0)
    return ReportOutcome("bench moe", who,
                         Error(fmt::format("{} wrong element(s): the exchange returned wrong data",
                                           report->WrongTotal())),
                         ExitCode::kWrongResults);
  return 0;
}

}  // namespace commlens::bench
