// commlens env: what `commlens record` would set, as shell exports: a fabric preset
// (with its checks as comments) and, with -o, the plugin's variables.
#include <filesystem>
#include <iostream>
#include <memory>
#include <string>

#include "cli/verbs.h"
#include "recorder/launcher/environment.h"
#include "recorder/launcher/fabric_facts.h"
#include "recorder/launcher/fabric_preset.h"
#include "common/launch_env.h"
#include "recorder/launcher/plugin_locator.h"
#include "recorder/launcher/record.h"

namespace commlens::cli {

namespace {

namespace rl = recorder::launcher;

struct EnvArgs {
  std::string preset;
  std::string out_dir;
  std::string plugin_path;
  std::string nccl_library = rl::kNcclSoname;
};

int RunEnv(const EnvArgs& args, std::ostream& out) {
  rl::Environment env = rl::Environment::FromProcess();
  const launch_env::LaunchEnv who = launch_env::DetectLaunchEnv(env.Lookup());
  out << "# commlens env: " << launch_env::DescribeLaunchEnv(who);
  if (!who.job_id.empty()) out << ", job " << who.job_id;
  out << "\n";
  for (const std::string& w : who.warnings) out << "# note: " << w << "\n";
  int code = kExitOk;
  if (!args.out_dir.empty()) {
    std::string plugin = args.plugin_path;
    if (plugin.empty()) {
      Result<std::string> found = rl::FindProfilerPlugin(rl::ExecutableDir());
      if (found.ok()) {
        plugin = *found;
      } else {
        std::string message = found.status().message();
        for (size_t at = message.find('\n'); at != std::string::npos;
             at = message.find('\n', at + 3))
          message.replace(at, 1, "\n# ");
        out << "# error: " << message << "\n";
        code = kExitFailed;
      }
    }
    const std::string dir = std::filesystem::absolute(args.out_dir).lexically_normal().string();
    rl::Environment set;
    rl::SetPluginEnvironment(plugin.empty() ? "" : std::filesystem::absolute(plugin).string(), dir,
                             {}, &set);
    for (const std::string& entry : set.Entries()) {
      size_t eq = entry.find('=');
      out << "export " << entry.substr(0, eq) << "=" << rl::ShellQuote(entry.substr(eq + 1))
          << "\n";
      env.Set(entry.substr(0, eq), entry.substr(eq + 1));
    }
  }
  if (!args.preset.empty()) {
    rl::FactsOptions facts_options;
    facts_options.nccl_library = args.nccl_library;
    rl::PresetPlan plan = rl::PlanPreset(*rl::ParsePreset(args.preset), env,
                                         rl::GatherFabricFacts(env, facts_options));
    out << rl::PresetAsShell(plan);
    if (plan.HasError()) code = kExitFailed;
  }
  return code;
}

}  // namespace

void AddEnvVerb(CLI::App& app, int* exit_code) {
  auto args = std::make_shared<EnvArgs>();
  CLI::App* sub = app.add_subcommand("env",
                                     "Print what 'commlens record' would set, as shell export "
                                     "lines: a fabric preset with its checks as comments "
                                     "(eval \"$(commlens env --preset efa)\"), the plugin's "
                                     "variables with -o, and who this process is in its job");
  sub->add_option("--preset", args->preset,
                  "efa (libfabric EFA, aws-ofi-nccl), ib (the active InfiniBand/RoCE ports), "
                  "efa-gin (efa plus "
                  "GPU-initiated networking); variables already set are kept and named")
      ->check(CLI::IsMember({"efa", "ib", "efa-gin"}))
      ->type_name("NAME");
  sub->add_option("-o,--out", args->out_dir,
                  "Also export NCCL_PROFILER_PLUGIN and COMMLENS_OUT=DIR for the plugin")
      ->type_name("DIR");
  sub->add_option("--plugin", args->plugin_path,
                  "The plugin to name (default: the one beside this commlens)")
      ->type_name("FILE");
  sub->add_option("--nccl-lib", args->nccl_library,
                  "The NCCL library whose version the preset checks (default: libnccl.so.2 on the "
                  "library path)")
      ->type_name("FILE");
  sub->footer(
      "Checks are comments: '# ok:', '# note:', '# warning:', '# error:'.\n"
      "Exit codes: 0 = printed; 1 = a check failed at error level, or -o and no plugin found; 64 = "
      "usage error.");
  sub->callback([args, exit_code]() { *exit_code = RunEnv(*args, std::cout); });
}

}  // namespace commlens::cli
