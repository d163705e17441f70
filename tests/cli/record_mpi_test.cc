// commlens record under a real mpirun (label "mpi"): Open MPI is found with ranks 0 and 1,
// only local rank 0 starts the sampler, and with the plugin each rank's trace carries
// Open MPI's job id, its rank and the host, as the sampler's file does. And record around
// mpirun: one sampler, the ranks' traces named by record's job id.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "importers/native/native_importer.h"
#include "testing/cli_run.h"

namespace {

namespace fs = std::filesystem;
using commlens::testing::CliRun;
using commlens::testing::Shell;

std::string HostName() {
  char name[256] = {};
  gethostname(name, sizeof(name) - 1);
  return name;
}

// ".<host>.samples.cltrace": what the sampler's file name ends with.
std::string SamplesSuffix() { return fmt::format(".{}.samples.cltrace", HostName()); }

std::vector<std::string> FilesIn(const fs::path& dir) {
  std::vector<std::string> out;
  for (const auto& e : fs::directory_iterator(dir)) out.push_back(e.path().filename().string());
  std::sort(out.begin(), out.end());
  return out;
}

class RecordMpi : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("commlens_record_mpi_" + std::to_string(getpid()));
    fs::remove_all(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  CliRun Mpirun(const std::string& record_args) {
    return Shell(std::string(COMMLENS_MPIRUN) + " -np 2 --oversubscribe " + COMMLENS_BIN +
                 " record -o " + dir_.string() + " " + record_args);
  }
  fs::path dir_;
};

TEST_F(RecordMpi, OpenMpiRanksAndOneSamplerPerHost) {
  CliRun r = Mpirun("--no-plugin -- true");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("commlens record: Open MPI rank 0 of 2 (local 0 of 2), job "),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("commlens record: Open MPI rank 1 of 2 (local 1 of 2), job "),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("nothing to record (samples: local rank 0 samples this host)"),
            std::string::npos)
      << r.out;
  std::vector<std::string> files = FilesIn(dir_);
  ASSERT_EQ(files.size(), 1u) << r.out;
  const std::string suffix = SamplesSuffix();
  ASSERT_GT(files[0].size(), suffix.size());
  EXPECT_EQ(files[0].substr(files[0].size() - suffix.size()), suffix);
  const std::string job = files[0].substr(0, files[0].size() - suffix.size());
  EXPECT_NE(r.out.find("rank 0 of 2 (local 0 of 2), job " + job + ", host "), std::string::npos)
      << r.out;
  auto t = commlens::importers::ImportNativeTrace((dir_ / files[0]).string());
  ASSERT_TRUE(t.ok()) << t.status().message();
  EXPECT_TRUE(t->host_counters_only);
}

TEST_F(RecordMpi, EachRanksTraceNamesTheJobRankAndHost) {
  CliRun r = Mpirun(std::string("-q -- ") + FAKE_NCCL_JOB + " 4");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  std::vector<std::string> files = FilesIn(dir_);
  ASSERT_EQ(files.size(), 3u) << r.out;
  const std::string host = HostName();
  const std::string samples =
      files.back();  // "<job>.<host>.samples.cltrace" sorts after "<job>.rank..."
  const std::string job = samples.substr(0, samples.find(SamplesSuffix()));
  ASSERT_FALSE(job.empty());
  for (int rank : {0, 1}) {
    const std::string& f = files[static_cast<size_t>(rank)];
    EXPECT_EQ(f.rfind(job + ".rank" + std::to_string(rank) + "." + host + ".", 0), 0u) << f;
    auto t = commlens::importers::ImportNativeTrace((dir_ / f).string());
    ASSERT_TRUE(t.ok()) << t.status().message();
    EXPECT_EQ(t->rank, rank);
    EXPECT_EQ(t->world_size, 2);
    EXPECT_EQ(t->comms.size(), 4u);
  }
}

// record around the launcher: no launcher started record, and the command is mpirun, so
// record samples this host and the ranks' traces carry record's job id.
TEST_F(RecordMpi, AroundTheLauncher) {
  CliRun r = Shell(std::string(COMMLENS_BIN) + " record -o " + dir_.string() + " -- " +
                   COMMLENS_MPIRUN + " -np 2 --oversubscribe " + FAKE_NCCL_JOB + " 2");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("commlens record: wrapping a launcher, job local-"), std::string::npos)
      << r.out;
  std::vector<std::string> files = FilesIn(dir_);
  ASSERT_EQ(files.size(), 3u) << r.out;
  const std::string job = files.back().substr(0, files.back().find(SamplesSuffix()));
  EXPECT_EQ(job.rfind("local-", 0), 0u) << files.back();
  EXPECT_EQ(files[0].rfind(job + ".rank0." + HostName() + ".", 0), 0u) << files[0];
  EXPECT_EQ(files[1].rfind(job + ".rank1." + HostName() + ".", 0), 0u) << files[1];
}

}  // namespace
