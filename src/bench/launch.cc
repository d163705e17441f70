#include "bench/launch.h"

#include <unistd.h>

#include <charconv>
#include <cstdlib>
#include <cstring>
#include <optional>

#include <fmt/format.h>

#include "bench/errors.h"
#include "common/launch_env.h"

namespace commlens::bench {

namespace {

namespace le = launch_env;

// The first variable of |names| that is set, as an integer; an error when it is not one.
Result<std::optional<int>> IntVar(const EnvLookup& env, const char* name) {
  const char* text = env(name);
  if (!text || !*text) return std::optional<int>();
  int value = 0;
  auto [end, ec] = std::from_chars(text, text + std::strlen(text), value);
  if (ec != std::errc() || *end != '\0')
    return UsageError(fmt::format("environment variable {}='{}' is not an integer", name, text));
  return std::optional<int>(value);
}

}  // namespace

std::string LocalHostName() {
  char name[256] = {};
  gethostname(name, sizeof name - 1);
  return name;
}

EnvLookup ProcessEnv() {
  return [](const char* name) -> const char* { return std::getenv(name); };
}

Result<LaunchInfo> DetectLaunch(Launcher requested, int port_override, bool have_mpi,
                                const EnvLookup& env) {
  LaunchInfo info;
  // Who this process is: the launcher rules `commlens record` and the profiler plugin use
  // (common/launch_env.h). A benchmark refuses what they would only warn of.
  const le::LaunchEnv who = le::DetectLaunchEnv(env);
  if (!who.warnings.empty())
    return UsageError(fmt::format("environment: {} (fix the launcher's variables)", who.warnings.front()));
  const bool under_mpirun = who.launcher == le::Launcher::kOpenMpi && who.world_size > 1;
  Launcher launcher = requested;
  if (launcher == Launcher::kAuto) {
    if (have_mpi && under_mpirun) {
      launcher = Launcher::kMpi;
    } else {
      launcher = who.world_size > 1 ? Launcher::kEnv : Launcher::kLocal;
    }
  }
  info.launcher = launcher;
  if (launcher == Launcher::kLocal) return info;
  if (launcher == Launcher::kMpi) {
    if (!have_mpi)
      return UsageError(
          "--launcher mpi: this build of commlens has no MPI support (portable builds do "
          "not link Open MPI); use --launcher env with MASTER_ADDR and MASTER_PORT, which "
          "also works under mpirun and srun");
    info.source = "MPI_COMM_WORLD";
    return info;  // rank, size and local rank come from MPI itself
  }

  // kEnv
  if (who.single_process() || who.world_size < 1)
    return UsageError(
        "--launcher env: the rank and world size are not set (torchrun's RANK and "
        "WORLD_SIZE, Open MPI's OMPI_COMM_WORLD_RANK and _SIZE, PMI_RANK and PMI_SIZE, or "
        "Slurm's SLURM_PROCID and SLURM_NTASKS)");
  info.world = who.world_size;
  info.rank = who.rank;
  if (info.rank < 0 || info.rank >= info.world)
    return UsageError(fmt::format("rank {} ({}) is not within world size {} ({})", info.rank, who.rank_variable,
                                  info.world, le::LauncherName(who.launcher)));
  info.local_rank = who.local_rank;
  info.source = fmt::format("{} ({})", le::LauncherName(who.launcher), who.rank_variable);
  if (info.world == 1) return info;

  const char* addr = env("MASTER_ADDR");
  if (!addr || !*addr)
    return UsageError(fmt::format(
        "--launcher env with {} ranks needs MASTER_ADDR (the host of rank 0) and MASTER_PORT "
        "for the TCP rendezvous",
        info.world));
  info.master_addr = addr;
  if (port_override > 0) {
    info.port = port_override;
    return info;
  }
  COMMLENS_ASSIGN_OR_RETURN(auto port, IntVar(env, "MASTER_PORT"));
  if (!port) return UsageError("--launcher env: MASTER_PORT is not set and --port was not given");
  info.port = *port;
  const char* torchrun = env("TORCHELASTIC_RUN_ID");
  if (torchrun && *torchrun) info.port += 1;  // torchrun's own store holds MASTER_PORT
  if (info.port <= 0 || info.port > 65535)
    return UsageError(fmt::format("rendezvous port {} is out of range", info.port));
  return info;
}

}  // namespace commlens::bench
