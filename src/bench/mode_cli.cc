#include "bench/mode_cli.h"

namespace commlens::bench {

void AddSessionOptions(CLI::App& app, SessionCliArgs* a, std::string* json_path, int* port,
                       std::chrono::milliseconds default_timeout) {
  app.add_option("--json", *json_path, "Write the results as JSON to this file (process 0)");
  app.add_option("--timeout", a->timeout,
                 fmt::format("Give up on a peer or an operation after this long, e.g. 60s, "
                             "500ms, 2m (default {} s)",
                             default_timeout.count() / 1000));
  app.add_option("--launcher", a->launcher,
                 "auto|local|env|mpi: how processes find each other (default auto)");
  app.add_option("--port", *port,
                 "TCP rendezvous port for --launcher env (default MASTER_PORT, or "
                 "MASTER_PORT+1 under torchrun)");
}

Status ApplySessionOptions(const SessionCliArgs& a, std::chrono::milliseconds* timeout,
                           Launcher* launcher) {
  if (!a.timeout.empty()) {
    Result<std::chrono::milliseconds> t = ParseDuration(a.timeout);
    if (!t.ok()) return UsageError(t.status().message());
    *timeout = *t;
  }
  if (!a.launcher.empty()) {
    std::optional<Launcher> l = LauncherFromName(a.launcher);
    if (!l) return UsageError(fmt::format("unknown launcher '{}'", a.launcher));
    *launcher = *l;
  }
  return OkStatus();
}

}  // namespace commlens::bench
