// commlens export as a user runs it: every format from the shipped samples, exit codes,
// messages naming the file, and no half-written output.
#include <gtest/gtest.h>
#include <simdjson.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include "testing/cli_run.h"

namespace {

namespace fs = std::filesystem;
using commlens::testing::Commlens;
using commlens::testing::CliRun;
using commlens::testing::kSamples;


class ExportCli : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("commlens_export_cli_" + std::to_string(::getpid()));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string Out(const std::string& name) const { return (dir_ / name).string(); }
  fs::path dir_;
};

TEST_F(ExportCli, PerfettoWritesOneJsonThatParses) {
  CliRun r = Commlens("export " + kSamples + "/moe -f perfetto -o " + Out("moe"));
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("4 ranks exported"), std::string::npos) << r.out;
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  ASSERT_EQ(parser.load(Out("moe.json")).get(doc), simdjson::SUCCESS);
  EXPECT_GT(simdjson::dom::array(doc["traceEvents"]).size(), 1000u);
  CliRun gz = Commlens("export " + kSamples + "/moe -f perfetto -o " + Out("moe.gz") + " --steps 4-5 -q");
  ASSERT_EQ(gz.exit_code, 0) << gz.out;
  EXPECT_TRUE(fs::exists(Out("moe.json.gz")));
  EXPECT_TRUE(gz.out.empty()) << gz.out;
}

TEST_F(ExportCli, ParaverWritesItsThreeFilesAndNamesTheViews) {
  CliRun r = Commlens("export " + kSamples + "/ddp -f paraver -o " + Out("ddp.prv"));
  ASSERT_EQ(r.exit_code, 0) << r.out;
  for (const char* ext : {".prv", ".pcf", ".row"}) EXPECT_TRUE(fs::exists(Out(std::string("ddp") + ext))) << ext;
  EXPECT_NE(r.out.find("share/paraver"), std::string::npos) << r.out;
  CliRun help = Commlens("export --help");
  EXPECT_EQ(help.exit_code, 0);
  EXPECT_NE(help.out.find("share/paraver"), std::string::npos);
}

TEST_F(ExportCli, CsvWritesAFolderOfTables) {
  CliRun r = Commlens("export " + kSamples + "/native -f csv -o " + Out("tables"));
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_TRUE(fs::exists(Out("tables/collectives.csv")));
  EXPECT_TRUE(fs::exists(Out("tables/cross_rank_ranks.csv")));
}

TEST_F(ExportCli, ExitCodes) {
  EXPECT_EQ(Commlens("export " + kSamples + "/ddp -f svg -o " + Out("x")).exit_code, 64);
  EXPECT_EQ(Commlens("export " + kSamples + "/ddp -f perfetto").exit_code, 64);  // no -o
  EXPECT_EQ(Commlens("export " + kSamples + "/ddp -f perfetto -o " + Out("x") + " --steps 5-3").exit_code, 64);
  CliRun missing = Commlens("export /nonexistent/dir -f csv -o " + Out("x"));
  EXPECT_EQ(missing.exit_code, 1);
  CliRun unwritable = Commlens("export " + kSamples + "/native -f perfetto -o /nonexistent-commlens/out");
  EXPECT_EQ(unwritable.exit_code, 1);
  EXPECT_NE(unwritable.out.find("/nonexistent-commlens/out.json: cannot create"), std::string::npos)
      << unwritable.out;
  // A bad rank file: named, the others exported, exit 2.
  fs::create_directories(dir_ / "in");
  fs::copy_file(kSamples + "/ddp/rank0.json.gz", dir_ / "in/rank0.json.gz");
  std::ofstream(dir_ / "in/rank1.json") << "{\"traceEvents\": [";
  CliRun partial = Commlens("export " + Out("in") + " -f perfetto -o " + Out("partial"));
  EXPECT_EQ(partial.exit_code, 2) << partial.out;
  EXPECT_NE(partial.out.find("rank1.json: invalid JSON"), std::string::npos) << partial.out;
  EXPECT_TRUE(fs::exists(Out("partial.json")));
}

}  // namespace
