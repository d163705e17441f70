// commlens analyze as a user runs it: exit codes, messages naming the file, JSON on stdout.
#include <gtest/gtest.h>
#include <simdjson.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <sys/wait.h>

#include "testing/cli_run.h"

namespace {

namespace fs = std::filesystem;
using commlens::testing::Commlens;
using commlens::testing::CliRun;
using commlens::testing::kSamples;
using commlens::testing::Shell;


TEST(AnalyzeCli, SampleTracesSucceed) {
  for (const char* w : {"ddp", "fsdp", "moe"}) {
    CliRun r = Commlens("analyze " + kSamples + "/" + w);
    EXPECT_EQ(r.exit_code, 0) << r.out;
    EXPECT_NE(r.out.find("GPU time breakdown"), std::string::npos);
    EXPECT_NE(r.out.find("Collectives"), std::string::npos);
    EXPECT_NE(r.out.find("4 ranks"), std::string::npos);
  }
}

TEST(AnalyzeCli, JsonToStdoutParses) {
  CliRun r = Commlens("analyze " + kSamples + "/moe/rank0.json.gz " + kSamples +
                   "/moe/rank1.json.gz --json - 2>/dev/null");
  ASSERT_EQ(r.exit_code, 0);
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  ASSERT_EQ(parser.parse(r.out).get(doc), simdjson::SUCCESS) << r.out.substr(0, 500);
  EXPECT_EQ(simdjson::dom::array(doc["ranks"]).size(), 2u);
}

TEST(AnalyzeCli, BadFileIsNamedAndTheOthersAreAnalyzed) {
  fs::path dir = fs::temp_directory_path() / ("commlens_cli_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  fs::copy_file(kSamples + "/ddp/rank0.json.gz", dir / "rank0.json.gz");
  fs::copy_file(kSamples + "/ddp/rank1.json.gz", dir / "rank1.json.gz");
  std::ofstream(dir / "rank2.json.gz") << "not gzip";
  CliRun r = Commlens("analyze " + dir.string());
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_NE(r.out.find("rank2.json.gz: named .gz but is not gzip"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("2 ranks"), std::string::npos) << r.out;
  CliRun strict = Commlens("analyze --strict " + dir.string());
  EXPECT_EQ(strict.exit_code, 1) << strict.out;
  fs::remove_all(dir);
}

TEST(AnalyzeCli, ProgressGoesToATerminalOnly) {
  // Piped (as in scripts and CI): not a byte on stderr.
  CliRun piped = Commlens("analyze " + kSamples + "/moe --json /dev/null -q");
  EXPECT_EQ(piped.exit_code, 0);
  EXPECT_TRUE(piped.out.empty()) << piped.out;
  // On a terminal (script(1) gives it one) the line may be drawn and is erased at the end.
  if (std::system("command -v script >/dev/null 2>&1") != 0) GTEST_SKIP() << "no script(1)";
  CliRun tty = Shell("script -qec '" + std::string(COMMLENS_BIN) + " analyze " + kSamples +
                        "/moe --json /dev/null' /dev/null");
  EXPECT_EQ(tty.exit_code, 0) << tty.out;
  EXPECT_NE(tty.out.find("4 ranks"), std::string::npos) << tty.out;
}

std::string Slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// analyze drops each rank's host events as it is imported and reads a stopped rank's file
// again for the hang finding (model/host_events.h); the goldens come from this command,
// and golden_test / cross_rank_golden_test check the library on whole models against
// them. Here the command itself must reproduce them byte for byte, on every sample whose
// findings read the host side: the window (ProfilerStep ranges), the hang and what the
// stopped rank was doing (Kineto and native), the late-rank causes.
TEST(AnalyzeCli, TheCommandWithoutHostEventsWritesTheGoldens) {
  const fs::path dir = fs::temp_directory_path() / ("commlens_golden_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  for (std::string w : {"ddp", "native", "cross-rank/hang", "cross-rank/hang/native", "cross-rank/slow-host",
                        "cross-rank/pipeline-1f1b"}) {
    SCOPED_TRACE(w);
    std::string name = w;
    for (char& c : name)
      if (c == '/') c = '.';
    const fs::path json = dir / (name + ".json");
    CliRun r = Shell("cd " + std::string(COMMLENS_SOURCE_DIR) + " && " + COMMLENS_BIN + " analyze -q examples/traces/" +
                     w + " --json " + json.string());
    ASSERT_EQ(r.exit_code, 0) << r.out;
    const std::string golden = std::string(COMMLENS_SOURCE_DIR) + "/tests/golden/" + name + ".analyze.json";
    EXPECT_EQ(Slurp(json), Slurp(golden)) << "the command's JSON differs from " << golden;
  }
  fs::remove_all(dir);
}

TEST(AnalyzeCli, UsageErrors) {
  EXPECT_NE(Commlens("analyze").exit_code, 0);
  CliRun missing = Commlens("analyze /nonexistent/trace/dir");
  EXPECT_EQ(missing.exit_code, 1);
  EXPECT_NE(missing.out.find("/nonexistent/trace/dir: no such file"), std::string::npos);
  CliRun help = Commlens("--help");
  EXPECT_EQ(help.exit_code, 0);
  EXPECT_NE(help.out.find("analyze"), std::string::npos);
}

}  // namespace
