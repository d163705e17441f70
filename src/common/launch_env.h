// Who this process is in a multi-process job, read from the environment its launcher set.
// One home for the rules: `commlens record` (which process starts the sampler, what the
// files are called), the NCCL profiler plugin (the rank in its trace), `commlens bench`
// (its place among the processes) and the Nsight Systems importer (the rank of a profiled
// process, from the environment nsys recorded) all call DetectLaunchEnv, so they always
// agree. A library of its own (commlens_launch_env) with nothing beyond the C++ library,
// so the plugin links it.
//
// Launchers, in the order they are looked for; the first whose rank variable is set wins,
// and every other field is then read from that launcher's own variables:
//
//   torchrun   RANK, WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE, GROUP_RANK (the node);
//              job: TORCHELASTIC_RUN_ID
//   Open MPI   OMPI_COMM_WORLD_RANK, _SIZE, _LOCAL_RANK, _LOCAL_SIZE;
//              job: OMPI_MCA_ess_base_jobid, OMPI_MCA_orte_ess_jobid or PMIX_NAMESPACE
//   MPICH/PMI  PMI_RANK, PMI_SIZE, MPI_LOCALRANKID, MPI_LOCALNRANKS
//   Slurm      SLURM_PROCID, SLURM_NTASKS, SLURM_LOCALID, SLURM_NODEID, and the local size
//              from SLURM_STEP_TASKS_PER_NODE; job: SLURM_JOB_ID[.SLURM_STEP_ID]
//   PMIx       PMIX_RANK; job: PMIX_NAMESPACE
//
// The innermost launcher comes first: torchrun under srun, or mpirun inside a Slurm
// allocation, set their own variables beside Slurm's, and theirs describe this process.
// The job id is COMMLENS_JOB_ID when set (`commlens record` sets it for its command, so
// the plugin's files and the sampler's carry the same id), else the launcher's own, else
// SLURM_JOB_ID; torchrun's placeholder id "none" counts as no id.
//
// No launcher: a single-process run, rank 0 of 1. A variable that is set but is not a
// number is a warning and counts as unset. Nothing here reads the process environment
// itself: everything goes through |EnvLookup|, so tests hand in their own variables and
// the plugin links this without a dependency beyond the C++ library.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace commlens::launch_env {

enum class Launcher : uint8_t { kNone, kTorchrun, kOpenMpi, kMpich, kSlurm, kPmix };

// "none", "torchrun", "Open MPI", "MPICH/PMI", "Slurm", "PMIx".
std::string_view LauncherName(Launcher launcher);

inline constexpr const char* kJobIdVariable = "COMMLENS_JOB_ID";

struct LaunchEnv {
  Launcher launcher = Launcher::kNone;
  int rank = 0;
  int world_size = 1;         // -1: the launcher does not say
  int local_rank = 0;         // -1: the launcher does not say
  int local_world_size = 1;   // -1: the launcher does not say
  int node_id = 0;            // -1: the launcher does not say
  std::string job_id;         // empty when neither COMMLENS_JOB_ID nor the launcher gives one
  std::string rank_variable;  // the variable the rank came from ("SLURM_PROCID"), empty for none
  std::vector<std::string> warnings;  // variables set to something that is not usable

  bool single_process() const { return launcher == Launcher::kNone; }
};

using EnvLookup = std::function<const char*(const char*)>;
LaunchEnv DetectLaunchEnv(const EnvLookup& env);

// The tasks on node |node| from Slurm's "2(x3),1" (nodes 0-2 run 2 tasks, node 3 runs 1);
// -1 when the text is malformed or has no such node.
int SlurmTasksOnNode(std::string_view tasks_per_node, int node);

// "Open MPI rank 1 of 2 (local 1 of 2, node 0)", "no launcher (a single process)".
std::string DescribeLaunchEnv(const LaunchEnv& env);

}  // namespace commlens::launch_env
