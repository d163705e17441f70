#include "bench/launch.h"

#include <unistd.h>

#include <array>
#include <charconv>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <span>

#include <fmt/format.h>

#include "bench/errors.h"

namespace commlens::bench {

namespace {

constexpr const char* kRankVars[] = {"RANK", "OMPI_COMM_WORLD_RANK", "PMI_RANK", "SLURM_PROCID"};
constexpr const char* kWorldVars[] = {"WORLD_SIZE", "OMPI_COMM_WORLD_SIZE", "PMI_SIZE",
                                      "SLURM_NTASKS"};
constexpr const char* kLocalVars[] = {"LOCAL_RANK", "OMPI_COMM_WORLD_LOCAL_RANK",
                                      "MPI_LOCALRANKID", "SLURM_LOCALID"};

struct IntVar {
  int value;
  const char* name;
};

// The first variable of |names| that is set; an error when it is not an integer.
Result<std::optional<IntVar>> FirstInt(const EnvLookup& env, std::span<const char* const> names) {
  for (const char* name : names) {
    const char* text = env(name);
    if (!text || !*text) continue;
    int value = 0;
    auto [end, ec] = std::from_chars(text, text + std::strlen(text), value);
    if (ec != std::errc() || *end != '\0')
      return UsageError(fmt::format("environment variable {}='{}' is not an integer", name, text));
    return std::optional<IntVar>(IntVar{value, name});
  }
  return std::optional<IntVar>();
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
  COMMLENS_ASSIGN_OR_RETURN(auto world, FirstInt(env, kWorldVars));
  const char* ompi_size = env("OMPI_COMM_WORLD_SIZE");
  bool under_mpirun = ompi_size && std::atoi(ompi_size) > 1;
  Launcher launcher = requested;
  if (launcher == Launcher::kAuto) {
    if (have_mpi && under_mpirun) {
      launcher = Launcher::kMpi;
    } else {
      launcher = world && world->value > 1 ? Launcher::kEnv : Launcher::kLocal;
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
  COMMLENS_ASSIGN_OR_RETURN(auto rank, FirstInt(env, kRankVars));
  COMMLENS_ASSIGN_OR_RETURN(auto local, FirstInt(env, kLocalVars));
  if (!world || !rank)
    return UsageError(
        "--launcher env: the rank and world size are not set (one of RANK, "
        "OMPI_COMM_WORLD_RANK, PMI_RANK, SLURM_PROCID and one of WORLD_SIZE, "
        "OMPI_COMM_WORLD_SIZE, PMI_SIZE, SLURM_NTASKS)");
  info.world = world->value;
  info.rank = rank->value;
  if (info.world < 1 || info.rank < 0 || info.rank >= info.world)
    return UsageError(fmt::format("rank {} ({}) is not within world size {} ({})", info.rank,
                             rank->name, info.world, world->name));
  info.local_rank = local ? local->value : -1;
  info.source = fmt::format("{}/{}{}", rank->name, world->name,
                            local ? fmt::format("/{}", local->name) : "");
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
  COMMLENS_ASSIGN_OR_RETURN(auto port, FirstInt(env, std::array{"MASTER_PORT"}));
  if (!port) return UsageError("--launcher env: MASTER_PORT is not set and --port was not given");
  info.port = port->value;
  const char* torchrun = env("TORCHELASTIC_RUN_ID");
  if (torchrun && *torchrun) info.port += 1;  // torchrun's own store holds MASTER_PORT
  if (info.port <= 0 || info.port > 65535)
    return UsageError(fmt::format("rendezvous port {} is out of range", info.port));
  return info;
}

}  // namespace commlens::bench
