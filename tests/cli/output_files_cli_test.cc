// Every file a commlens verb writes is whole or absent: on a full disk (a file-size limit
// stands in for one) the command exits non-zero, names the file and the reason, and leaves
// nothing under the final name (and no temporary file beside it). Each output is cut
// twice: half way, and at its very last byte (where a writer that checks its stream
// before the last flush would still exit 0 with a cut file).
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "testing/cli_run.h"

namespace {

namespace fs = std::filesystem;
using commlens::testing::CliRun;
using commlens::testing::Commlens;
using commlens::testing::kSamples;
using commlens::testing::ShellOnAFullDisk;

struct Output {
  const char* name;  // what the test calls it
  std::string args;  // the command line, OUT for where it writes
  std::string out;   // the file or folder it writes, under the test's folder
  bool needs_chart_library = false;
  bool needs_gpu = false;  // run alone (ctest's output_files_bench_gpu, label gpu)
};

void PrintTo(const Output& o, std::ostream* os) { *os << o.name; }

class FullDisk : public ::testing::TestWithParam<Output> {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("commlens_full_disk_" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string Command(const Output& o) const {
    std::string args = o.args;
    args.replace(args.find("OUT"), 3, (dir_ / o.out).string());
    return args;
  }
  // Bytes of the largest file the command writes when nothing stops it.
  uint64_t LargestFile(const Output& o) const {
    const fs::path p = dir_ / o.out;
    if (!fs::is_directory(p)) return fs::file_size(p);
    uint64_t largest = 0;
    for (const auto& e : fs::directory_iterator(p)) largest = std::max<uint64_t>(largest, e.file_size());
    return largest;
  }
  void Empty() const {
    for (const auto& e : fs::directory_iterator(dir_)) fs::remove_all(e.path());
  }
  // Every regular file left in the test's folder, recursively.
  std::vector<std::string> Left() const {
    std::vector<std::string> left;
    for (const auto& e : fs::recursive_directory_iterator(dir_))
      if (e.is_regular_file()) left.push_back(e.path().string());
    return left;
  }

  fs::path dir_;
};

TEST_P(FullDisk, TheOutputIsWholeOrAbsent) {
  const Output& o = GetParam();
  if (o.needs_chart_library) {
    CliRun probe = Commlens("report " + kSamples + "/native -o " + (dir_ / "probe.html").string() + " -q");
    if (probe.out.find("without the chart library") != std::string::npos) GTEST_SKIP() << "built without echarts";
    fs::remove(dir_ / "probe.html");
  }
  const std::string command = std::string(COMMLENS_BIN) + " " + Command(o);
  CliRun whole = commlens::testing::Shell(command);
  if (o.needs_gpu && whole.exit_code == 3) {  // bench: no GPU visible
    std::fprintf(stderr, "%s: no GPU visible, skipped\n", o.name);
    std::_Exit(77);
  }
  ASSERT_TRUE(whole.exit_code == 0 || whole.exit_code == 2) << whole.out;  // 2: some input failed
  const uint64_t size = LargestFile(o);
  ASSERT_GT(size, 1u);
  Empty();  // Paraver's .pcf and .row too
  for (const uint64_t limit : {size / 2, size - 1}) {
    CliRun cut = ShellOnAFullDisk(command, limit);
    EXPECT_NE(cut.exit_code, 0) << o.name << " cut at " << limit << " of " << size << ": " << cut.out;
    EXPECT_NE(cut.out.find("cannot write: File too large"), std::string::npos) << o.name << ": " << cut.out;
    EXPECT_NE(cut.out.find((dir_ / o.out).string()), std::string::npos) << o.name << " names the file: " << cut.out;
    for (const std::string& f : Left()) ADD_FAILURE() << o.name << " cut at " << limit << " left " << f;
    Empty();
  }
}

INSTANTIATE_TEST_SUITE_P(
    Verbs, FullDisk,
    ::testing::Values(Output{"analyze_json", "analyze " + kSamples + "/ddp -q --json OUT", "ddp.json"},
                      Output{"analyze_csv", "analyze " + kSamples + "/ddp -q --csv OUT", "tables"},
                      Output{"export_perfetto", "export " + kSamples + "/ddp -f perfetto -q -o OUT", "ddp.perfetto.json"},
                      Output{"export_paraver", "export " + kSamples + "/ddp -f paraver -q -o OUT", "ddp.prv"},
                      Output{"export_csv", "export " + kSamples + "/ddp -f csv -q -o OUT", "tables"},
                      Output{"report_html", "report " + kSamples + "/ddp -q -o OUT", "ddp.html", true},
                      Output{"topo_json", "topo --json OUT", "topo.json"},
                      Output{"bench_json", "bench all_reduce -b 8 -e 1M -n 2 -w 1 --spin-up 0 --json OUT", "bench.json",
                             false, true}),
    [](const ::testing::TestParamInfo<Output>& info) { return std::string(info.param.name); });

}  // namespace
