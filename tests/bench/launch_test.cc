#include "bench/launch.h"

#include <gtest/gtest.h>

#include <map>

#include "bench/errors.h"

namespace commlens::bench {
namespace {

EnvLookup Env(std::map<std::string, std::string> vars) {
  return [vars = std::move(vars)](const char* name) -> const char* {
    auto it = vars.find(name);
    return it == vars.end() ? nullptr : it->second.c_str();
  };
}

TEST(Launch, NoLauncherMeansLocal) {
  Result<LaunchInfo> l = DetectLaunch(Launcher::kAuto, 0, true, Env({}));
  ASSERT_TRUE(l.ok());
  EXPECT_EQ(l->launcher, Launcher::kLocal);
  EXPECT_EQ(l->world, 1);
}

TEST(Launch, TorchrunVariables) {
  auto l = DetectLaunch(Launcher::kAuto, 0, false,
                        Env({{"RANK", "3"}, {"WORLD_SIZE", "8"}, {"LOCAL_RANK", "3"},
                             {"MASTER_ADDR", "node-a"}, {"MASTER_PORT", "29500"}}));
  ASSERT_TRUE(l.ok()) << l.status().message();
  EXPECT_EQ(l->launcher, Launcher::kEnv);
  EXPECT_EQ(l->rank, 3);
  EXPECT_EQ(l->world, 8);
  EXPECT_EQ(l->local_rank, 3);
  EXPECT_EQ(l->master_addr, "node-a");
  EXPECT_EQ(l->port, 29500);
}

TEST(Launch, UnderTorchrunTheRendezvousAvoidsTorchsStore) {
  auto l = DetectLaunch(Launcher::kAuto, 0, false,
                        Env({{"RANK", "0"}, {"WORLD_SIZE", "2"}, {"MASTER_ADDR", "h"},
                             {"MASTER_PORT", "29500"}, {"TORCHELASTIC_RUN_ID", "abc"}}));
  ASSERT_TRUE(l.ok());
  EXPECT_EQ(l->port, 29501);
  l = DetectLaunch(Launcher::kAuto, 31000, false,
                   Env({{"RANK", "0"}, {"WORLD_SIZE", "2"}, {"MASTER_ADDR", "h"},
                        {"MASTER_PORT", "29500"}, {"TORCHELASTIC_RUN_ID", "abc"}}));
  EXPECT_EQ(l->port, 31000);  // --port wins
}

TEST(Launch, MpirunPrefersMpiWhenBuiltWithIt) {
  auto vars = Env({{"OMPI_COMM_WORLD_RANK", "1"}, {"OMPI_COMM_WORLD_SIZE", "4"},
                   {"OMPI_COMM_WORLD_LOCAL_RANK", "1"}, {"MASTER_ADDR", "h"},
                   {"MASTER_PORT", "1234"}});
  EXPECT_EQ(DetectLaunch(Launcher::kAuto, 0, true, vars)->launcher, Launcher::kMpi);
  // Portable build: the same variables drive the TCP rendezvous.
  auto l = DetectLaunch(Launcher::kAuto, 0, false, vars);
  ASSERT_TRUE(l.ok());
  EXPECT_EQ(l->launcher, Launcher::kEnv);
  EXPECT_EQ(l->rank, 1);
  EXPECT_EQ(l->world, 4);
  EXPECT_EQ(l->local_rank, 1);
  EXPECT_NE(l->source.find("OMPI_COMM_WORLD_RANK"), std::string::npos);
}

TEST(Launch, SlurmVariables) {
  auto l = DetectLaunch(Launcher::kEnv, 0, true,
                        Env({{"SLURM_PROCID", "5"}, {"SLURM_NTASKS", "16"}, {"SLURM_LOCALID", "1"},
                             {"MASTER_ADDR", "n1"}, {"MASTER_PORT", "40000"}}));
  ASSERT_TRUE(l.ok());
  EXPECT_EQ(l->rank, 5);
  EXPECT_EQ(l->world, 16);
  EXPECT_EQ(l->local_rank, 1);
}

TEST(Launch, MissingOrBadVariablesAreUsageErrors) {
  auto no_addr = DetectLaunch(Launcher::kAuto, 0, false, Env({{"RANK", "0"}, {"WORLD_SIZE", "2"}}));
  ASSERT_FALSE(no_addr.ok());
  EXPECT_NE(no_addr.status().message().find("MASTER_ADDR"), std::string::npos);
  EXPECT_EQ(ExitCodeFor(no_addr.status()), ExitCode::kUsage);

  auto no_port = DetectLaunch(Launcher::kAuto, 0, false,
                              Env({{"RANK", "0"}, {"WORLD_SIZE", "2"}, {"MASTER_ADDR", "h"}}));
  EXPECT_NE(no_port.status().message().find("MASTER_PORT"), std::string::npos);

  auto bad = DetectLaunch(Launcher::kAuto, 0, false, Env({{"RANK", "x"}, {"WORLD_SIZE", "2"}}));
  EXPECT_NE(bad.status().message().find("RANK=x"), std::string::npos);

  auto out_of_range = DetectLaunch(Launcher::kEnv, 0, false,
                                   Env({{"RANK", "4"}, {"WORLD_SIZE", "4"}}));
  EXPECT_FALSE(out_of_range.ok());

  auto env_without_rank = DetectLaunch(Launcher::kEnv, 0, false, Env({}));
  EXPECT_FALSE(env_without_rank.ok());

  auto mpi_missing = DetectLaunch(Launcher::kMpi, 0, false, Env({}));
  EXPECT_NE(mpi_missing.status().message().find("no MPI support"), std::string::npos);
}

TEST(Launch, SingleRankEnvNeedsNoRendezvous) {
  auto l = DetectLaunch(Launcher::kEnv, 0, false, Env({{"RANK", "0"}, {"WORLD_SIZE", "1"}}));
  ASSERT_TRUE(l.ok());
  EXPECT_EQ(l->world, 1);
}

}  // namespace
}  // namespace commlens::bench
