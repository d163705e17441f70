#include "bench/jacobi/jacobi_cli.h"

#include <fmt/format.h>

#include "bench/driver.h"
#include "bench/errors.h"

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
  AddSessionOptions(app, &a->session, &c.json_path, &c.port, d.timeout);
}

Result<JacobiConfig> BuildJacobiConfig(const JacobiCliArgs& a) {
  JacobiConfig c = a.config;
  if (!a.variants.empty()) {
    Result<std::vector<JacobiVariant>> v = ParseJacobiVariants(a.variants);
    if (!v.ok()) return UsageError(v.status().message());
    c.variants = *v;
  }
  COMMLENS_RETURN_IF_ERROR(ApplySessionOptions(a.session, &c.timeout, &c.launcher));
  Status valid = Validate(c);
  if (!valid.ok()) return UsageError(valid.message());
  return c;
}

int RunJacobiCommand(const JacobiConfig& config, std::string_view tool_version) {
  ModeHooks<JacobiReport> hooks{[&config](Session& s) { return RunJacobiOnGpus(config, s); }, FormatJacobiReport,
                           WriteJacobiReport, "they differ from the CPU reference"};
  return RunModeCommand("bench jacobi", config.launcher, config.port, config.timeout,
                        config.json_path, tool_version, hooks);
}

}  // namespace commlens::bench
