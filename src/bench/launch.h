// How this process learns its place in a multi-process run: the launcher's environment
// variables. Read through an injected lookup function so tests need no real environment.
//
//   rank, world size, local rank: the launcher rules of common/launch_env.h
//                (torchrun, Open MPI, MPICH/PMI, Slurm, in that order), which `commlens
//                record` and the profiler plugin follow too; a variable that is set but
//                not a number is an error here
//   rendezvous:  MASTER_ADDR, MASTER_PORT (--port overrides the port). Under torchrun
//                (TORCHELASTIC_RUN_ID set) MASTER_PORT is torch's own store, so the
//                rendezvous uses MASTER_PORT + 1.
//
// kAuto picks kMpi when this build has MPI and mpirun started us (OMPI_COMM_WORLD_SIZE
// > 1), kEnv when any world size above is > 1, else kLocal.
#pragma once

#include <functional>
#include <string>

#include "bench/bench_config.h"
#include "common/status.h"

namespace commlens::bench {

using EnvLookup = std::function<const char*(const char*)>;
EnvLookup ProcessEnv();
std::string LocalHostName();

struct LaunchInfo {
  Launcher launcher = Launcher::kLocal;  // resolved: never kAuto
  int rank = 0;
  int world = 1;
  int local_rank = -1;  // -1: unknown, derived from host names after the rendezvous
  std::string master_addr;
  int port = 0;
  std::string source;   // which variables were used, for messages
};

// |requested| comes from --launcher; |port_override| from --port (0 = none);
// |have_mpi| says whether this build can use MPI.
Result<LaunchInfo> DetectLaunch(Launcher requested, int port_override, bool have_mpi,
                                const EnvLookup& env);

}  // namespace commlens::bench
