// commlens analyze --mpi (and whatif --mpi) under mpirun (label "mpi"): whatever the number of processes,
// the JSON is byte for byte the single process's, and a bad file is reported the same way
// with the same exit code. CTest sets the Open MPI environment (root allowed, local
// launch, shared memory only, oversubscription) so this runs on a bare CI container.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "testing/cli_run.h"

namespace {

namespace fs = std::filesystem;
using commlens::testing::CliRun;
using commlens::testing::Commlens;
using commlens::testing::kSamples;
using commlens::testing::Shell;

std::string Slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// The lines commlens itself wrote to stderr (mpirun adds its own banner on a non-zero exit).
std::vector<std::string> CommlensLines(const std::string& out) {
  std::vector<std::string> lines;
  std::istringstream in(out);
  for (std::string line; std::getline(in, line);)
    if (line.rfind("commlens ", 0) == 0) lines.push_back(line);
  return lines;
}

class AnalyzeMpi : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("commlens_mpi_" + std::to_string(::getpid()));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  // Analyzes |inputs| once alone and once under mpirun with each of |processes|; the JSONs
  // must be identical, and so must the exit code and what commlens said on stderr. (The
  // what-if replay does not run under --mpi: alone it is left out too.)
  void ExpectSameAsSingleProcess(const std::string& inputs, int exit_code, std::vector<int> processes = {2, 4}) {
    fs::path single = dir_ / "single.json";
    CliRun alone = Commlens("analyze -q --no-replay " + inputs + " --json " + single.string());
    ASSERT_EQ(alone.exit_code, exit_code) << alone.out;
    std::string expected = Slurp(single);
    ASSERT_FALSE(expected.empty());
    for (int n : processes) {
      SCOPED_TRACE("mpirun -np " + std::to_string(n));
      fs::path json = dir_ / ("np" + std::to_string(n) + ".json");
      CliRun mpi = Shell(std::string(COMMLENS_MPIRUN) + " -np " + std::to_string(n) + " " + COMMLENS_BIN +
                         " analyze --mpi -q " + inputs + " --json " + json.string());
      EXPECT_EQ(mpi.exit_code, exit_code) << mpi.out;
      EXPECT_EQ(CommlensLines(mpi.out), CommlensLines(alone.out)) << mpi.out;
      EXPECT_TRUE(Slurp(json) == expected) << "the JSON differs from the single process's: " << json;
    }
  }

  fs::path dir_;
};

TEST_F(AnalyzeMpi, FourRanksGiveTheSameJson) { ExpectSameAsSingleProcess(kSamples + "/ddp", 0, {2, 3, 4}); }

// Native recordings and an Nsight export of another run: two jobs, refused the same way
// by every process count (the same words on stderr, exit 1, no JSON).
// whatif --mpi: the import and per-rank analyses spread, every GPU table to rank 0, which
// replays: the same answer as one process, also with a fix, for DDP and a PP x DP pipeline.
TEST_F(AnalyzeMpi, WhatIfGivesTheSingleProcesssAnswer) {
  for (const std::string& job : {std::string("whatif/ddp-slow-blocks --fix rank=2"),
                                 std::string("pipelines/megatron-pp2-dp2 --fix stage=1")}) {
    SCOPED_TRACE(job);
    const fs::path single = dir_ / "whatif.json";
    CliRun alone = Commlens("whatif -q " + kSamples + "/" + job + " --json " + single.string());
    ASSERT_EQ(alone.exit_code, 0) << alone.out;
    const std::string expected = Slurp(single);
    for (int n : {2, 3}) {
      SCOPED_TRACE("mpirun -np " + std::to_string(n));
      const fs::path json = dir_ / ("whatif" + std::to_string(n) + ".json");
      CliRun mpi = Shell(std::string(COMMLENS_MPIRUN) + " -np " + std::to_string(n) + " " + COMMLENS_BIN +
                         " whatif --mpi -q " + kSamples + "/" + job + " --json " + json.string());
      EXPECT_EQ(mpi.exit_code, 0) << mpi.out;
      EXPECT_TRUE(Slurp(json) == expected) << "the JSON differs from the single process's: " << json;
    }
  }
}

TEST_F(AnalyzeMpi, TwoJobsAreRefusedTheSameWay) {
  const std::string inputs = kSamples + "/native " + kSamples + "/nsys-1gpu/moe";
  CliRun alone = Commlens("analyze -q " + inputs);
  ASSERT_EQ(alone.exit_code, 1) << alone.out;
  EXPECT_NE(alone.out.find("these inputs hold 2 jobs"), std::string::npos) << alone.out;
  for (int n : {2, 4}) {
    SCOPED_TRACE("mpirun -np " + std::to_string(n));
    CliRun mpi = Shell(std::string(COMMLENS_MPIRUN) + " -np " + std::to_string(n) + " " + COMMLENS_BIN +
                       " analyze --mpi -q " + inputs);
    EXPECT_EQ(mpi.exit_code, 1) << mpi.out;
    EXPECT_EQ(CommlensLines(mpi.out), CommlensLines(alone.out)) << mpi.out;
  }
}

// A --steps the traces lack is a usage error under --mpi too, named by rank 0 alone.
TEST_F(AnalyzeMpi, AStepTheTracesLackIsAUsageError) {
  CliRun alone = Commlens("analyze -q " + kSamples + "/ddp --steps 9");
  ASSERT_EQ(alone.exit_code, 64) << alone.out;
  CliRun mpi = Shell(std::string(COMMLENS_MPIRUN) + " -np 3 " + COMMLENS_BIN + " analyze --mpi -q " + kSamples +
                     "/ddp --steps 9");
  EXPECT_EQ(mpi.exit_code, 64) << mpi.out;
  EXPECT_EQ(CommlensLines(mpi.out), CommlensLines(alone.out)) << mpi.out;
}

// Warm-up steps left out the same way: rank 0 chooses from every rank's steps.
TEST_F(AnalyzeMpi, WarmupStepsAreLeftOutTheSameWay) {
  ExpectSameAsSingleProcess(kSamples + "/nsys-2gpu/ddp", 0, {2, 3});
  ExpectSameAsSingleProcess(kSamples + "/ddp --steps 4-5", 0, {2, 3});
}

// Only rank 0 prints the report; the text is the single process's but for the timing line.
TEST_F(AnalyzeMpi, OnlyRankZeroPrints) {
  CliRun alone = Commlens("analyze " + kSamples + "/moe");
  CliRun mpi = Shell(std::string(COMMLENS_MPIRUN) + " -np 3 " + COMMLENS_BIN + " analyze --mpi " + kSamples + "/moe");
  ASSERT_EQ(mpi.exit_code, 0) << mpi.out;
  auto cut = [](const std::string& s) { return s.substr(0, s.rfind("analyzed in")); };
  EXPECT_EQ(cut(mpi.out), cut(alone.out));
}

// A bad file, a file claiming a rank another has, a cut file and good ones: the same
// failures, in the same words, exit code 2 — also with more processes than files.
TEST_F(AnalyzeMpi, BadFilesAreReportedTheSameWay) {
  fs::path job = dir_ / "job";
  fs::create_directories(job);
  fs::copy_file(kSamples + "/ddp/rank0.json.gz", job / "rank0.json.gz");
  fs::copy_file(kSamples + "/ddp/rank1.json.gz", job / "rank1.json.gz");
  fs::copy_file(kSamples + "/ddp/rank1.json.gz", job / "copy.json.gz");
  std::ofstream(job / "rank2.json.gz") << "not gzip";
  std::ofstream(job / "cut.json") << "{\"traceEvents\": [\n";
  ExpectSameAsSingleProcess(job.string(), 2, {2, 4, 6});
  CliRun mpi = Shell(std::string(COMMLENS_MPIRUN) + " -np 2 " + COMMLENS_BIN + " analyze --mpi -q " + job.string());
  EXPECT_NE(mpi.out.find("commlens analyze: " + (job / "rank2.json.gz").string() + ": named .gz but is not gzip"),
            std::string::npos)
      << mpi.out;
}

TEST_F(AnalyzeMpi, NothingToLoadFailsOnEveryProcess) {
  CliRun mpi = Shell(std::string(COMMLENS_MPIRUN) + " -np 2 " + COMMLENS_BIN + " analyze --mpi " +
                     (dir_ / "missing").string());
  EXPECT_EQ(mpi.exit_code, 1) << mpi.out;
  EXPECT_EQ(CommlensLines(mpi.out),
            std::vector<std::string>{"commlens analyze: " + (dir_ / "missing").string() + ": no such file or directory"});
}

// A hang: rank 1 (the smaller file, so a worker imports it) stopped. What it was doing
// comes from its host events, which the worker dropped after sending the rank: rank 0
// asks the worker, which reads the file again (distributed/rounds.h, kQuery).
TEST_F(AnalyzeMpi, AStoppedRankOnAWorkerSaysWhatItWasDoing) {
  for (const std::string w : {"/cross-rank/hang", "/cross-rank/hang/native"}) {
    SCOPED_TRACE(w);
    ExpectSameAsSingleProcess(kSamples + w, 0, {2});
    const std::string json = Slurp(dir_ / "np2.json");
    // In the JSON the quotes around the name are escaped.
    EXPECT_NE(json.find(w == "/cross-rank/hang" ? R"(rank 1 was in \"stuck_in_data_loader\")"
                                                : R"(rank 1 last showed \"ncclGroup\")"),
              std::string::npos)
        << json.substr(0, 2000);
  }
}

// Why a rank was late and the pipeline's bubbles look into GPU timelines, which stay with
// the process that imported each rank: rank 0 asks them in one round (kStretches). Each
// job's two files sit on two processes; with --align collectives the questions' times
// move back to each rank's own clock on the way.
TEST_F(AnalyzeMpi, LateRanksAndBubblesAskTheProcessesThatHoldTheTimelines) {
  for (const std::string w : {"/cross-rank/slow-compute", "/cross-rank/slow-host", "/cross-rank/pipeline-1f1b",
                              "/cross-rank/pipeline-gpipe", "/cross-rank/contention", "/pipelines/megatron-pp2-dp2",
                              "/pipelines/torch-interleaved-2r"}) {
    SCOPED_TRACE(w);
    ExpectSameAsSingleProcess(kSamples + w, 0, {2});
  }
  ExpectSameAsSingleProcess("--align collectives " + kSamples + "/cross-rank/slow-compute", 0, {2});
  EXPECT_NE(Slurp(dir_ / "np2.json").find(R"("cause": "compute")"), std::string::npos);
}

// The CSV tables come from the analysis too: under mpirun they are those `commlens
// export -f csv` writes alone.
TEST_F(AnalyzeMpi, CsvTablesAreTheSingleProcesssExport) {
  const std::string job = kSamples + "/cross-rank/slow-compute";
  CliRun alone = Commlens("export -q -f csv -o " + (dir_ / "alone").string() + " " + job);
  ASSERT_EQ(alone.exit_code, 0) << alone.out;
  CliRun mpi = Shell(std::string(COMMLENS_MPIRUN) + " -np 2 " + COMMLENS_BIN + " analyze --mpi -q " + job +
                     " --json " + (dir_ / "np2.json").string() + " --csv " + (dir_ / "np2").string());
  ASSERT_EQ(mpi.exit_code, 0) << mpi.out;
  size_t tables = 0;
  for (const fs::directory_entry& e : fs::directory_iterator(dir_ / "alone")) {
    SCOPED_TRACE(e.path().filename().string());
    EXPECT_EQ(Slurp(dir_ / "np2" / e.path().filename()), Slurp(e.path()));
    ++tables;
  }
  EXPECT_GE(tables, 5u);
}

// 64 ranks synthesized from the DDP sample (scripts/synth_traces.py, the CTest fixture
// analyze_mpi_synth64).
TEST_F(AnalyzeMpi, SixtyFourRanksGiveTheSameJson) {
  if (!fs::exists(COMMLENS_SYNTH64 "/rank63.json.gz")) GTEST_SKIP() << "no " COMMLENS_SYNTH64 " (needs python3)";
  ExpectSameAsSingleProcess(COMMLENS_SYNTH64, 0);
}

}  // namespace
