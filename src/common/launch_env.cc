#include "common/launch_env.h"

#include <charconv>
#include <cstring>

namespace commlens::launch_env {

namespace {

// One launcher's variables; nullptr where it has none.
struct LauncherVars {
  Launcher launcher;
  const char* rank;
  const char* size;
  const char* local_rank;
  const char* local_size;
  const char* node;
  std::initializer_list<const char*> job_ids;
};

// In the order they are looked for (see the header for why).
const LauncherVars kLaunchers[] = {
    {Launcher::kTorchrun,
     "RANK",
     "WORLD_SIZE",
     "LOCAL_RANK",
     "LOCAL_WORLD_SIZE",
     "GROUP_RANK",
     {"TORCHELASTIC_RUN_ID"}},
    {Launcher::kOpenMpi,
     "OMPI_COMM_WORLD_RANK",
     "OMPI_COMM_WORLD_SIZE",
     "OMPI_COMM_WORLD_LOCAL_RANK",
     "OMPI_COMM_WORLD_LOCAL_SIZE",
     nullptr,
     {"OMPI_MCA_ess_base_jobid", "OMPI_MCA_orte_ess_jobid", "PMIX_NAMESPACE"}},
    {Launcher::kMpich, "PMI_RANK", "PMI_SIZE", "MPI_LOCALRANKID", "MPI_LOCALNRANKS", nullptr, {}},
    {Launcher::kSlurm,
     "SLURM_PROCID",
     "SLURM_NTASKS",
     "SLURM_LOCALID",
     nullptr,
     "SLURM_NODEID",
     {}},
    {Launcher::kPmix, "PMIX_RANK", nullptr, nullptr, nullptr, nullptr, {"PMIX_NAMESPACE"}},
};

bool ParseInt(std::string_view text, int* out) {
  if (text.empty()) return false;
  int v = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size() || v < 0) return false;
  *out = v;
  return true;
}

const char* NonEmpty(const EnvLookup& env, const char* name) {
  if (name == nullptr) return nullptr;
  const char* v = env(name);
  return v != nullptr && *v != '\0' ? v : nullptr;
}

// The variable as a number, |fallback| when unset; a warning when set but not a number.
int ReadInt(const EnvLookup& env, const char* name, int fallback,
            std::vector<std::string>* warnings) {
  const char* text = NonEmpty(env, name);
  if (text == nullptr) return fallback;
  int v = 0;
  if (ParseInt(text, &v)) return v;
  warnings->push_back(std::string(name) + "=" + text + " is not a number; ignored");
  return fallback;
}

std::string SlurmJobId(const EnvLookup& env) {
  const char* job = NonEmpty(env, "SLURM_JOB_ID");
  if (job == nullptr) job = NonEmpty(env, "SLURM_JOBID");
  if (job == nullptr) return "";
  const char* step = NonEmpty(env, "SLURM_STEP_ID");
  if (step == nullptr) step = NonEmpty(env, "SLURM_STEPID");
  return step != nullptr ? std::string(job) + "." + step : std::string(job);
}

std::string JobIdOf(const LauncherVars& vars, const EnvLookup& env) {
  if (vars.launcher == Launcher::kSlurm) return SlurmJobId(env);
  for (const char* name : vars.job_ids) {
    const char* id = NonEmpty(env, name);
    // torchrun's default --rdzv-id is the word "none": the same for every job.
    if (id != nullptr && std::strcmp(id, "none") != 0) return id;
  }
  return "";
}

}  // namespace

std::string_view LauncherName(Launcher launcher) {
  switch (launcher) {
    case Launcher::kNone:
      return "none";
    case Launcher::kTorchrun:
      return "torchrun";
    case Launcher::kOpenMpi:
      return "Open MPI";
    case Launcher::kMpich:
      return "MPICH/PMI";
    case Launcher::kSlurm:
      return "Slurm";
    case Launcher::kPmix:
      return "PMIx";
  }
  return "unknown";
}

int SlurmTasksOnNode(std::string_view text, int node) {
  // Comma-separated groups "N" or "N(xR)": N tasks on each of R nodes.
  int first = 0;
  while (!text.empty()) {
    size_t comma = text.find(',');
    std::string_view group = text.substr(0, comma);
    text = comma == std::string_view::npos ? std::string_view() : text.substr(comma + 1);
    int tasks = 0;
    int repeat = 1;
    size_t paren = group.find("(x");
    if (!ParseInt(group.substr(0, paren), &tasks)) return -1;
    if (paren != std::string_view::npos) {
      if (group.back() != ')' ||
          !ParseInt(group.substr(paren + 2, group.size() - paren - 3), &repeat))
        return -1;
    }
    if (node < first + repeat) return node >= first ? tasks : -1;
    first += repeat;
  }
  return -1;
}

LaunchEnv DetectLaunchEnv(const EnvLookup& env) {
  LaunchEnv out;
  for (const LauncherVars& vars : kLaunchers) {
    const char* rank_text = NonEmpty(env, vars.rank);
    if (rank_text == nullptr) continue;
    int rank = 0;
    if (!ParseInt(rank_text, &rank)) {
      out.warnings.push_back(std::string(vars.rank) + "=" + rank_text +
                             " is not a number; ignored");
      continue;
    }
    out.launcher = vars.launcher;
    out.rank = rank;
    out.rank_variable = vars.rank;
    out.world_size = ReadInt(env, vars.size, -1, &out.warnings);
    out.local_rank = ReadInt(env, vars.local_rank, -1, &out.warnings);
    out.local_world_size = ReadInt(env, vars.local_size, -1, &out.warnings);
    out.node_id = ReadInt(env, vars.node, -1, &out.warnings);
    if (vars.launcher == Launcher::kSlurm) {
      if (out.world_size < 0) out.world_size = ReadInt(env, "SLURM_NPROCS", -1, &out.warnings);
      const char* per_node = NonEmpty(env, "SLURM_STEP_TASKS_PER_NODE");
      if (per_node == nullptr) per_node = NonEmpty(env, "SLURM_TASKS_PER_NODE");
      if (per_node != nullptr && out.node_id >= 0)
        out.local_world_size = SlurmTasksOnNode(per_node, out.node_id);
    }
    out.job_id = JobIdOf(vars, env);
    break;
  }
  if (const char* id = NonEmpty(env, kJobIdVariable)) {
    out.job_id = id;
  } else if (out.job_id.empty()) {
    out.job_id = SlurmJobId(env);
  }
  return out;
}

std::string DescribeLaunchEnv(const LaunchEnv& env) {
  if (env.single_process()) return "no launcher (a single process)";
  auto of = [](int v, int n) {
    return std::to_string(v) + (n >= 0 ? " of " + std::to_string(n) : "");
  };
  std::string s = std::string(LauncherName(env.launcher)) + " rank " + of(env.rank, env.world_size);
  std::string local;
  if (env.local_rank >= 0) local = "local " + of(env.local_rank, env.local_world_size);
  if (env.node_id >= 0)
    local += std::string(local.empty() ? "" : ", ") + "node " + std::to_string(env.node_id);
  if (!local.empty()) s += " (" + local + ")";
  return s;
}

}  // namespace commlens::launch_env
