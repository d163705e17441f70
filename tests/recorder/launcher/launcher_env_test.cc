// Launcher environments as each launcher sets them (common/launch_env.h), the job id, the
// file names, and the plugin reading the same environment the same way (it calls the same
// code, through its own settings parser).
#include "common/launch_env.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include <map>
#include <string>

#include "recorder/launcher/environment.h"
#include "recorder/launcher/output_names.h"
#include "recorder/launcher/record.h"
#include "recorder/nccl_profiler/config.h"
#include "recorder/sampler/sampler.h"

namespace commlens::recorder::launcher {
namespace {

// The rules live in common/launch_env.h; the recorder and the plugin call them.
using namespace launch_env;
using Vars = std::map<std::string, std::string>;

LaunchEnv Detect(const Vars& vars) {
  return DetectLaunchEnv([&vars](const char* name) -> const char* {
    auto it = vars.find(name);
    return it == vars.end() ? nullptr : it->second.c_str();
  });
}

// Open MPI 4.1.4's mpirun -np 2, rank 1 (copied from a real run).
const Vars kOpenMpi = {
    {"OMPI_COMM_WORLD_RANK", "1"},
    {"OMPI_COMM_WORLD_SIZE", "2"},
    {"OMPI_COMM_WORLD_LOCAL_RANK", "1"},
    {"OMPI_COMM_WORLD_LOCAL_SIZE", "2"},
    {"OMPI_COMM_WORLD_NODE_RANK", "1"},
    {"OMPI_MCA_ess_base_jobid", "1309736961"},
    {"OMPI_MCA_ess_base_vpid", "1"},
    {"PMIX_NAMESPACE", "1309736961"},
    {"PMIX_RANK", "1"},
    {"OMPI_UNIVERSE_SIZE", "2"},
};

// srun -N 3 --ntasks-per-node ... step 3 of job 4242: task 9 on the third node (8 tasks there).
const Vars kSlurm = {
    {"SLURM_PROCID", "9"},
    {"SLURM_NTASKS", "16"},
    {"SLURM_LOCALID", "1"},
    {"SLURM_NODEID", "2"},
    {"SLURM_JOB_ID", "4242"},
    {"SLURM_STEP_ID", "3"},
    {"SLURM_STEP_TASKS_PER_NODE", "4(x2),8"},
    {"SLURM_TASKS_PER_NODE", "8(x3)"},
    {"SLURM_JOB_NAME", "train"},
};

// torchrun --nnodes 2 --nproc-per-node 4, worker 5 (second node), started by srun.
Vars TorchrunUnderSrun(const std::string& run_id) {
  Vars v = {{"RANK", "5"},
            {"LOCAL_RANK", "1"},
            {"WORLD_SIZE", "8"},
            {"LOCAL_WORLD_SIZE", "4"},
            {"GROUP_RANK", "1"},
            {"MASTER_ADDR", "n1"},
            {"MASTER_PORT", "29500"},
            {"TORCHELASTIC_RUN_ID", run_id}};
  for (const auto& [k, value] : kSlurm) v[k] = value;
  v["SLURM_PROCID"] = "1";  // the torchrun agent is task 1 of the step
  v["SLURM_LOCALID"] = "0";
  return v;
}

TEST(LauncherEnv, NoLauncherIsOneProcess) {
  LaunchEnv e = Detect({{"HOME", "/root"}});
  EXPECT_EQ(e.launcher, Launcher::kNone);
  EXPECT_TRUE(e.single_process());
  EXPECT_EQ(e.rank, 0);
  EXPECT_EQ(e.world_size, 1);
  EXPECT_EQ(e.local_rank, 0);
  EXPECT_EQ(e.local_world_size, 1);
  EXPECT_EQ(e.job_id, "");
  EXPECT_EQ(DescribeLaunchEnv(e), "no launcher (a single process)");
}

TEST(LauncherEnv, OpenMpi) {
  LaunchEnv e = Detect(kOpenMpi);
  EXPECT_EQ(e.launcher, Launcher::kOpenMpi);
  EXPECT_EQ(e.rank, 1);
  EXPECT_EQ(e.world_size, 2);
  EXPECT_EQ(e.local_rank, 1);
  EXPECT_EQ(e.local_world_size, 2);
  EXPECT_EQ(e.node_id, -1);  // Open MPI does not say
  EXPECT_EQ(e.job_id, "1309736961");
  EXPECT_EQ(e.rank_variable, "OMPI_COMM_WORLD_RANK");
  EXPECT_EQ(DescribeLaunchEnv(e), "Open MPI rank 1 of 2 (local 1 of 2)");
  // Open MPI 3 and older name the job id differently; 5 gives only the PMIx namespace.
  Vars old = kOpenMpi;
  old.erase("OMPI_MCA_ess_base_jobid");
  old.erase("PMIX_NAMESPACE");
  old["OMPI_MCA_orte_ess_jobid"] = "77";
  EXPECT_EQ(Detect(old).job_id, "77");
  Vars five = kOpenMpi;
  five.erase("OMPI_MCA_ess_base_jobid");
  five["PMIX_NAMESPACE"] = "prterun-node1-12345@1";
  EXPECT_EQ(Detect(five).job_id, "prterun-node1-12345@1");
}

TEST(LauncherEnv, MpirunInsideASlurmAllocationIsOpenMpi) {
  Vars v = kOpenMpi;
  v["SLURM_JOB_ID"] = "4242";
  v["SLURM_PROCID"] = "0";
  v["SLURM_LOCALID"] = "0";
  LaunchEnv e = Detect(v);
  EXPECT_EQ(e.launcher, Launcher::kOpenMpi);
  EXPECT_EQ(e.rank, 1);
  EXPECT_EQ(e.job_id, "1309736961");
}

TEST(LauncherEnv, Slurm) {
  LaunchEnv e = Detect(kSlurm);
  EXPECT_EQ(e.launcher, Launcher::kSlurm);
  EXPECT_EQ(e.rank, 9);
  EXPECT_EQ(e.world_size, 16);
  EXPECT_EQ(e.local_rank, 1);
  EXPECT_EQ(e.node_id, 2);
  EXPECT_EQ(e.local_world_size, 8);  // the step's layout, not the allocation's
  EXPECT_EQ(e.job_id, "4242.3");     // as sacct writes a step
  EXPECT_EQ(DescribeLaunchEnv(e), "Slurm rank 9 of 16 (local 1 of 8, node 2)");
  Vars batch = kSlurm;  // no step id, allocation layout only
  batch.erase("SLURM_STEP_ID");
  batch.erase("SLURM_STEP_TASKS_PER_NODE");
  EXPECT_EQ(Detect(batch).job_id, "4242");
  EXPECT_EQ(Detect(batch).local_world_size, 8);
}

TEST(LauncherEnv, SlurmTasksPerNode) {
  EXPECT_EQ(SlurmTasksOnNode("8", 0), 8);
  EXPECT_EQ(SlurmTasksOnNode("8", 1), -1);
  EXPECT_EQ(SlurmTasksOnNode("4(x2),8", 0), 4);
  EXPECT_EQ(SlurmTasksOnNode("4(x2),8", 1), 4);
  EXPECT_EQ(SlurmTasksOnNode("4(x2),8", 2), 8);
  EXPECT_EQ(SlurmTasksOnNode("2,3(x3),1", 4), 1);
  EXPECT_EQ(SlurmTasksOnNode("2,3(x3),1", 3), 3);
  EXPECT_EQ(SlurmTasksOnNode("4(x", 0), -1);
  EXPECT_EQ(SlurmTasksOnNode("", 0), -1);
  EXPECT_EQ(SlurmTasksOnNode("x", 0), -1);
}

TEST(LauncherEnv, TorchrunUnderSrunIsTorchrun) {
  LaunchEnv e = Detect(TorchrunUnderSrun("f1d2"));
  EXPECT_EQ(e.launcher, Launcher::kTorchrun);
  EXPECT_EQ(e.rank, 5);
  EXPECT_EQ(e.world_size, 8);
  EXPECT_EQ(e.local_rank, 1);
  EXPECT_EQ(e.local_world_size, 4);
  EXPECT_EQ(e.node_id, 1);
  EXPECT_EQ(e.job_id, "f1d2");
  // torchrun's default run id is the word "none": Slurm's id names the job instead.
  EXPECT_EQ(Detect(TorchrunUnderSrun("none")).job_id, "4242.3");
  LaunchEnv alone = Detect(
      {{"RANK", "0"}, {"WORLD_SIZE", "1"}, {"LOCAL_RANK", "0"}, {"TORCHELASTIC_RUN_ID", "none"}});
  EXPECT_EQ(alone.job_id, "");
}

TEST(LauncherEnv, MpichHydra) {
  LaunchEnv e = Detect({{"PMI_RANK", "3"},
                        {"PMI_SIZE", "4"},
                        {"MPI_LOCALRANKID", "1"},
                        {"MPI_LOCALNRANKS", "2"},
                        {"PMI_FD", "6"},
                        {"PMI_JOBID", "x"}});
  EXPECT_EQ(e.launcher, Launcher::kMpich);
  EXPECT_EQ(e.rank, 3);
  EXPECT_EQ(e.world_size, 4);
  EXPECT_EQ(e.local_rank, 1);
  EXPECT_EQ(e.local_world_size, 2);
  EXPECT_EQ(e.job_id, "");
  EXPECT_EQ(DescribeLaunchEnv(e), "MPICH/PMI rank 3 of 4 (local 1 of 2)");
}

TEST(LauncherEnv, PmixAlone) {
  LaunchEnv e = Detect({{"PMIX_RANK", "2"}, {"PMIX_NAMESPACE", "prterun-n1-77@1"}});
  EXPECT_EQ(e.launcher, Launcher::kPmix);
  EXPECT_EQ(e.rank, 2);
  EXPECT_EQ(e.world_size, -1);
  EXPECT_EQ(e.local_rank, -1);
  EXPECT_EQ(e.job_id, "prterun-n1-77@1");
  EXPECT_EQ(DescribeLaunchEnv(e), "PMIx rank 2");
}

TEST(LauncherEnv, CommlensJobIdWins) {
  Vars v = kSlurm;
  v[kJobIdVariable] = "from-record";
  EXPECT_EQ(Detect(v).job_id, "from-record");
  EXPECT_EQ(Detect({{kJobIdVariable, "solo"}}).job_id, "solo");
}

TEST(LauncherEnv, ValuesThatAreNotNumbersAreWarnings) {
  Vars v = kSlurm;
  v["RANK"] = "abc";  // not torchrun after all: Slurm describes this process
  v["SLURM_NTASKS"] = "lots";
  LaunchEnv e = Detect(v);
  EXPECT_EQ(e.launcher, Launcher::kSlurm);
  EXPECT_EQ(e.world_size, -1);
  ASSERT_EQ(e.warnings.size(), 2u);
  EXPECT_EQ(e.warnings[0], "RANK=abc is not a number; ignored");
  EXPECT_EQ(e.warnings[1], "SLURM_NTASKS=lots is not a number; ignored");
}

// The plugin reads rank, size, local rank and job id with the same rules.
TEST(LauncherEnv, ThePluginAgrees) {
  for (const Vars& vars :
       {kOpenMpi, kSlurm, TorchrunUnderSrun("r1"), Vars{{"PMI_RANK", "3"}, {"PMI_SIZE", "4"}},
        Vars{{"PMIX_RANK", "2"}}, Vars{}}) {
    LaunchEnv e = Detect(vars);
    RecorderConfig cfg = ParseConfig([&vars](const char* name) -> const char* {
      auto it = vars.find(name);
      return it == vars.end() ? nullptr : it->second.c_str();
    });
    SCOPED_TRACE(DescribeLaunchEnv(e));
    EXPECT_EQ(cfg.global_rank, e.single_process() ? -1 : e.rank);
    EXPECT_EQ(cfg.world_size, e.single_process() || e.world_size < 0 ? 0 : e.world_size);
    EXPECT_EQ(cfg.local_rank, e.single_process() ? -1 : e.local_rank);
    EXPECT_EQ(cfg.job_id, e.job_id);
  }
}

TEST(OutputNames, PluginAndSamplerNamesAgree) {
  EXPECT_EQ(PluginTraceFileName("4242.3", 9, "node-1", 123, 0), "4242.3.rank9.node-1.123.cltrace");
  EXPECT_EQ(PluginTraceFileName("4242.3", 9, "node-1", 123, 2),
            "4242.3.rank9.node-1.123.s2.cltrace");
  EXPECT_EQ(PluginTraceFileName("", 9, "node-1", 123, 0), "rank9.node-1.123.cltrace");
  EXPECT_EQ(PluginTraceFileName("j", -1, "node-1", 123, 0), "j.node-1.123.cltrace");
  EXPECT_EQ(PluginTraceFileName("prterun-n1-77@1", 0, "a b/c", 5, 0),
            "prterun-n1-77_1.rank0.a_b_c.5.cltrace");
  // Job and host are cleaned the same way in the sampler's file name.
  for (const char* host : {"node-1", "a b/c", "ip-10-0-0-1.ec2.internal"})
    EXPECT_EQ(sampler::SamplesFileName("prterun-n1-77@1", host),
              FileNamePart("prterun-n1-77@1") + "." + FileNamePart(host) + ".samples.cltrace");

  int rank = -1;
  EXPECT_TRUE(MatchPluginTrace("4242.3.rank9.node-1.123.cltrace", "4242.3", "node-1", &rank));
  EXPECT_EQ(rank, 9);
  EXPECT_TRUE(MatchPluginTrace("4242.3.rank10.node-1.123.s1.cltrace", "4242.3", "node-1", &rank));
  EXPECT_EQ(rank, 10);
  EXPECT_TRUE(
      MatchPluginTrace("prterun-n1-77_1.rank0.a_b_c.5.cltrace", "prterun-n1-77@1", "a b/c", &rank));
  EXPECT_FALSE(MatchPluginTrace("4242.3.rank9.node-2.123.cltrace", "4242.3", "node-1",
                                &rank));  // other host
  EXPECT_FALSE(MatchPluginTrace("4242.4.rank9.node-1.123.cltrace", "4242.3", "node-1",
                                &rank));  // other step
  EXPECT_FALSE(MatchPluginTrace("4242.3.node-1.samples.cltrace", "4242.3", "node-1", &rank));
  EXPECT_FALSE(MatchPluginTrace("4242.3.rank9.node-1.123.cltrace.tmp", "4242.3", "node-1", &rank));
}

TEST(Record, JobIdAndWhoSamples) {
  LaunchEnv none;
  EXPECT_EQ(ChooseJobId(none, 77), "local-77");
  LaunchEnv mpich = Detect({{"PMI_RANK", "3"}, {"PMI_SIZE", "4"}, {"MPI_LOCALRANKID", "1"}});
  EXPECT_EQ(ChooseJobId(mpich, 77), "job");  // every rank must agree, and pids do not
  EXPECT_EQ(ChooseJobId(Detect(kSlurm), 77), "4242.3");

  EXPECT_TRUE(DecideSampler(none, false, true).start);
  EXPECT_FALSE(DecideSampler(none, false, false).start);
  EXPECT_FALSE(DecideSampler(Detect(kOpenMpi), false, true).start);  // local rank 1
  Vars first = kOpenMpi;
  first["OMPI_COMM_WORLD_LOCAL_RANK"] = "0";
  EXPECT_TRUE(DecideSampler(Detect(first), false, true).start);
  EXPECT_TRUE(DecideSampler(Detect(kOpenMpi), true, true).start);  // --outer
  // PMIx alone gives no local rank: rank 0 samples, the others do not.
  EXPECT_TRUE(DecideSampler(Detect({{"PMIX_RANK", "0"}}), false, true).start);
  EXPECT_FALSE(DecideSampler(Detect({{"PMIX_RANK", "1"}}), false, true).start);
}

TEST(Record, LauncherCommands) {
  EXPECT_TRUE(IsLauncherCommand({"torchrun", "--nproc-per-node", "8", "train.py"}));
  EXPECT_TRUE(IsLauncherCommand({"/usr/bin/mpirun", "-np", "2", "a.out"}));
  EXPECT_TRUE(IsLauncherCommand({"srun", "python", "x.py"}));
  EXPECT_TRUE(IsLauncherCommand({"python3", "-m", "torch.distributed.run", "x.py"}));
  EXPECT_TRUE(IsLauncherCommand({"accelerate", "launch", "x.py"}));
  EXPECT_FALSE(IsLauncherCommand({"accelerate", "config"}));
  EXPECT_FALSE(IsLauncherCommand({"python", "train.py"}));
  EXPECT_FALSE(IsLauncherCommand({"python", "-m", "pytest"}));
  EXPECT_FALSE(IsLauncherCommand({}));
}

// record's options reach the plugin under the names the plugin reads.
TEST(Record, CaptureOptionsMapToThePluginsVariables) {
  Environment env({"NCCL_PROFILER_PLUGIN=/other/libnccl-profiler-inspector.so", "PATH=/bin"});
  CaptureWindow w;
  w.after_colls = 1000;
  w.after_s = 2.5;
  w.duration_s = 10;
  w.control = "/tmp/ctl";
  w.events = "coll,kernel";
  std::vector<std::string> notes =
      SetPluginEnvironment("/opt/lib/libnccl-profiler-commlens.so", "/data/run1", w, &env);
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_EQ(notes[0],
            "NCCL_PROFILER_PLUGIN=/other/libnccl-profiler-inspector.so replaced by "
            "/opt/lib/libnccl-profiler-commlens.so");
  RecorderConfig cfg = ParseConfig(env.Lookup());
  EXPECT_TRUE(cfg.warnings.empty());
  EXPECT_EQ(cfg.out, "/data/run1");
  EXPECT_EQ(cfg.capture_after_colls, 1000u);
  EXPECT_DOUBLE_EQ(cfg.capture_after_s, 2.5);
  EXPECT_DOUBLE_EQ(cfg.capture_duration_s, 10);
  EXPECT_EQ(cfg.control_path, "/tmp/ctl");
  uint32_t mask = 0;
  ASSERT_TRUE(ParseEventMask("coll,kernel", &mask));
  EXPECT_EQ(cfg.event_mask, mask);
  EXPECT_STREQ(env.Get("PATH"), "/bin");
}

// --cupti: the tracer on, its library named to the plugin and to NVTX; an NVTX injection
// the user set (Nsight Systems') is kept and said.
TEST(Record, CuptiOptionSetsTheTracerAndNvtx) {
  Environment env({"PATH=/bin"});
  CaptureWindow w;
  w.cupti = "/opt/cuda/lib64/libcupti.so.13";
  EXPECT_TRUE(SetPluginEnvironment("", "/data/run1", w, &env).empty());
  RecorderConfig cfg = ParseConfig(env.Lookup());
  EXPECT_TRUE(cfg.cupti);
  EXPECT_EQ(cfg.cupti_library, "/opt/cuda/lib64/libcupti.so.13");
  EXPECT_STREQ(env.Get("NVTX_INJECTION64_PATH"), "/opt/cuda/lib64/libcupti.so.13");

  Environment nsys({"NVTX_INJECTION64_PATH=/opt/nsys/libToolsInjection64.so"});
  std::vector<std::string> notes = SetPluginEnvironment("", "/data/run1", w, &nsys);
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_NE(notes[0].find("NVTX_INJECTION64_PATH=/opt/nsys/libToolsInjection64.so kept"), std::string::npos);
  EXPECT_STREQ(nsys.Get("NVTX_INJECTION64_PATH"), "/opt/nsys/libToolsInjection64.so");

  // The plugin is CUDA's injection library too (processes without NCCL get their
  // kernels); Nsight Systems' own is kept.
  const std::string plugin = "/opt/commlens/lib/commlens/libnccl-profiler-commlens.so";
  Environment job({"PATH=/bin"});
  EXPECT_TRUE(SetPluginEnvironment(plugin, "/data/run1", w, &job).empty());
  EXPECT_EQ(job.Get("CUDA_INJECTION64_PATH"), plugin);
  EXPECT_EQ(job.Get("NCCL_PROFILER_PLUGIN"), plugin);
  Environment under_nsys({"CUDA_INJECTION64_PATH=/opt/nsys/libToolsInjection64.so"});
  notes = SetPluginEnvironment(plugin, "/data/run1", w, &under_nsys);
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_NE(notes[0].find("CUDA_INJECTION64_PATH=/opt/nsys/libToolsInjection64.so kept"), std::string::npos);
  EXPECT_STREQ(under_nsys.Get("CUDA_INJECTION64_PATH"), "/opt/nsys/libToolsInjection64.so");
  CaptureWindow no_tracer;
  Environment plain({"PATH=/bin"});
  SetPluginEnvironment(plugin, "/data/run1", no_tracer, &plain);
  EXPECT_EQ(plain.Get("CUDA_INJECTION64_PATH"), nullptr);

  // Searched under CUDA_HOME.
  const std::filesystem::path home = std::filesystem::temp_directory_path() / "commlens_cuda_home";
  std::filesystem::create_directories(home / "lib64");
  std::ofstream(home / "lib64" / "libcupti.so.13") << "";
  EXPECT_EQ(FindCupti(home.c_str()), (home / "lib64" / "libcupti.so.13").string());
  Environment searched({"CUDA_HOME=" + home.string()});
  CaptureWindow s;
  s.cupti = "";
  SetPluginEnvironment("", "/data/run1", s, &searched);
  EXPECT_EQ(std::string(searched.Get("COMMLENS_CUPTI_LIBRARY")), (home / "lib64" / "libcupti.so.13").string());
  std::filesystem::remove_all(home);
}

// --cupti-kinds: named to the plugin; without nvtx, NVTX is not injected. Without
// --events, NCCL's kernel-channel events are left out (the launch timer and the tracer's
// kernels time the ops; the plugin puts them back if neither can); --events keeps what it
// names, and the default words no longer hold the kernel channels.
TEST(Record, CuptiKindsAndTheEventMask) {
  Environment env({"PATH=/bin"});
  CaptureWindow w;
  w.cupti = "/opt/cuda/lib64/libcupti.so.13";
  w.cupti_kinds = "kernel,memcpy";
  SetPluginEnvironment("", "/data/run1", w, &env);
  EXPECT_EQ(env.Get("NVTX_INJECTION64_PATH"), nullptr);
  RecorderConfig cfg = ParseConfig(env.Lookup());
  EXPECT_EQ(cfg.cupti_kinds, cupti::kCuptiKernels | cupti::kCuptiCopies);
  EXPECT_TRUE(cfg.kernel_events_replaced);
  EXPECT_TRUE(cfg.launch_timing);
  EXPECT_EQ(cfg.event_mask, kDefaultEventMask);
  EXPECT_EQ(cfg.event_mask & EventBit(EventKind::kKernelCh), 0u);

  Environment with_events({"PATH=/bin"});
  CaptureWindow e;
  e.cupti = "/opt/cuda/lib64/libcupti.so.13";
  e.events = "default";
  SetPluginEnvironment("", "/data/run1", e, &with_events);
  RecorderConfig kept = ParseConfig(with_events.Lookup());
  EXPECT_FALSE(kept.kernel_events_replaced);
  EXPECT_EQ(kept.event_mask, kDefaultEventMask);
  EXPECT_EQ(kept.cupti_kinds, cupti::kDefaultCuptiKinds);
  EXPECT_STREQ(with_events.Get("NVTX_INJECTION64_PATH"), "/opt/cuda/lib64/libcupti.so.13");

  uint32_t kinds = 0;
  EXPECT_TRUE(cupti::ParseCuptiKinds("sync,nvtx", &kinds));
  EXPECT_EQ(kinds, cupti::kCuptiKernels | cupti::kCuptiSyncs | cupti::kCuptiNvtx);
  EXPECT_TRUE(cupti::ParseCuptiKinds("default", &kinds));
  EXPECT_EQ(kinds & cupti::kCuptiCalls, 0u);
  EXPECT_FALSE(cupti::ParseCuptiKinds("kernel,bogus", &kinds));
  EXPECT_EQ(kinds, cupti::kDefaultCuptiKinds);  // untouched

  Environment bad_env({"COMMLENS_CUPTI=1", "COMMLENS_CUPTI_KINDS=kernels"});
  RecorderConfig bad = ParseConfig(bad_env.Lookup());
  EXPECT_EQ(bad.cupti_kinds, cupti::kDefaultCuptiKinds);
  ASSERT_FALSE(bad.warnings.empty());
  EXPECT_NE(bad.warnings.back().find("COMMLENS_CUPTI_KINDS=kernels"), std::string::npos);
}

TEST(Environment, EntriesAndQuoting) {
  Environment env({"B=2", "A=1", "BROKEN", "C=x=y"});
  env.Set("A", "one");
  env.Unset("B");
  EXPECT_EQ(env.Entries(), (std::vector<std::string>{"A=one", "C=x=y"}));
  EXPECT_EQ(env.Get("B"), nullptr);
  EXPECT_EQ(ShellQuote("=mlx5_0:1,mlx5_1:1"), "=mlx5_0:1,mlx5_1:1");
  EXPECT_EQ(ShellQuote("/opt/amazon/ofi-nccl/lib/libnccl-net-ofi.so"),
            "/opt/amazon/ofi-nccl/lib/libnccl-net-ofi.so");
  EXPECT_EQ(ShellQuote("a b"), "'a b'");
  EXPECT_EQ(ShellQuote("it's"), "'it'\\''s'");
  EXPECT_EQ(ShellQuote(""), "''");
  EXPECT_EQ(ShellQuote("^lo,docker"), "'^lo,docker'");
}

}  // namespace
}  // namespace commlens::recorder::launcher
