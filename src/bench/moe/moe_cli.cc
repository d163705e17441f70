#include "bench/moe/moe_cli.h"

#include <fmt/format.h>

#include "bench/driver.h"
#include "bench/errors.h"

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
  AddSessionOptions(app, &a->session, &c.json_path, &c.port, d.timeout);
}

Result<MoeConfig> BuildMoeConfig(const MoeCliArgs& a) {
  MoeConfig c = a.config;
  if (!a.backends.empty()) {
    Result<std::vector<Backend>> b = ParseBackends(a.backends);
    if (!b.ok()) return UsageError(b.status().message());
    c.backends = *b;
  }
  COMMLENS_RETURN_IF_ERROR(ApplySessionOptions(a.session, &c.timeout, &c.launcher));
  Status valid = Validate(c);
  if (!valid.ok()) return UsageError(valid.message());
  return c;
}

int RunMoeCommand(const MoeConfig& config, std::string_view tool_version) {
  ModeHooks<MoeReport> hooks{[&config](Session& s) { return RunMoeOnGpus(config, s); }, FormatMoeReport,
                           WriteMoeReport, "the exchange returned wrong data"};
  return RunModeCommand("bench moe", config.launcher, config.port, config.timeout,
                        config.json_path, tool_version, hooks);
}

}  // namespace commlens::bench
