// Nsight Systems reports (.nsys-rep): commlens runs `nsys export` itself
// (importers/nsys/nsys_rep_export.h). The nsys here is a stand-in shell script on PATH that
// logs its arguments and writes a real export where --output says (or hangs, or fails).
// What is checked: the export is kept beside the report and reused, or made in a private
// temporary folder and removed; no name is predictable (a link planted at the old names
// is not followed; two reports of one name exported at once do not meet); a hanging nsys
// is stopped after the time limit.
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <thread>

#include "importers/nsys/nsys_rep_export.h"
#include "importers/registry.h"
#include "importers/trace_loader.h"
#include "nsys_test_util.h"

namespace commlens::importers {
namespace {

namespace fs = std::filesystem;

using nsys_test::ChildOutcome;
using nsys_test::InChild;
using nsys_test::Inflate;
using nsys_test::kSamples;
using nsys_test::ScopedEnv;
using nsys_test::ScratchDir;

std::set<std::string> Names(const fs::path& dir) {
  std::set<std::string> names;
  for (const auto& e : fs::directory_iterator(dir)) names.insert(e.path().filename().string());
  return names;
}

std::string ReadAll(const fs::path& p) {
  std::ifstream in(p);
  return std::string((std::istreambuf_iterator<char>(in)), {});
}

class NsysRepExport : public ::testing::Test {
 protected:
  ScratchDir dir;
  fs::path bin = dir.path / "bin";
  std::string calls = (dir.path / "nsys-calls.log").string();
  std::optional<ScopedEnv> path_env, home_env, tmp_env;

  void SetUp() override {
    fs::create_directories(bin);
    const std::string saved = getenv("PATH") ? getenv("PATH") : "";
    path_env.emplace("PATH", bin.string() + ":" + saved);
    home_env.emplace("NSYS_HOME", std::nullopt);
    fs::create_directories(dir.path / "tmp");
    tmp_env.emplace("TMPDIR", (dir.path / "tmp").string());
  }

  // A stand-in nsys: logs its arguments, sets $out (--output) and $report (the last
  // argument), then runs |body|.
  void FakeNsys(const std::string& body) {
    {
      std::ofstream script(bin / "nsys");
      script << "#!/bin/sh\necho \"$@\" >> " << calls << "\nout=\"\"\nfor report; do :; done\n"
             << "while [ $# -gt 0 ]; do [ \"$1\" = --output ] && out=$2; shift; done\n"
             << body << "\n";
    }
    fs::permissions(bin / "nsys", fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec |
                                      fs::perms::others_read | fs::perms::others_exec);
  }

  // |name| in a new folder |folder| of the scratch dir.
  std::string Report(const std::string& folder, const std::string& name = "rank0.nsys-rep") {
    fs::create_directories(dir.path / folder);
    const std::string report = (dir.path / folder / name).string();
    std::ofstream(report) << "report";
    return report;
  }

  int Calls() {
    std::ifstream in(calls);
    int n = 0;
    for (std::string line; std::getline(in, line);) ++n;
    return n;
  }
};

TEST_F(NsysRepExport, WithoutNsysTheMessageGivesTheCommand) {
  ScopedEnv path("PATH", dir.path.string());
  const std::string report = Report("job", "rank1.nsys-rep");
  auto r = ImportFile(report);
  ASSERT_FALSE(r.ok());
  const std::string msg = r.status().message();
  EXPECT_NE(msg.find(report), std::string::npos) << msg;
  EXPECT_NE(msg.find("found no nsys"), std::string::npos) << msg;
  EXPECT_NE(msg.find("nsys export --type sqlite"), std::string::npos) << msg;
}

// Exported with the arguments that work with Nsight Systems 2025.3 (checked on the GPU
// machine), kept beside the report: the next load reads it without running nsys, and
// nothing else is left in the folder.
TEST_F(NsysRepExport, ExportedOnceAndKeptBesideTheReport) {
  const std::string real = Inflate(kSamples + "moe/rank0.sqlite.gz", dir.path, "real.sqlite.src");
  FakeNsys("cp " + real + " \"$out\"");
  const std::string report = Report("job");
  const fs::path jobdir = fs::path(report).parent_path();
  auto first = LoadTrace({jobdir.string()}, {});
  auto second = LoadTrace({jobdir.string()}, {});
  ASSERT_TRUE(first.ok()) << first.status().message();
  ASSERT_TRUE(second.ok()) << second.status().message();
  EXPECT_EQ(Names(jobdir), (std::set<std::string>{"rank0.nsys-rep", "rank0.sqlite"}));
  EXPECT_EQ(Calls(), 1);  // the second load read the kept export
  const std::string args = ReadAll(calls);
  EXPECT_NE(args.find("export --type sqlite --include-blobs=true"), std::string::npos) << args;
  bool exported = false;
  for (const std::string& n : first.value().ranks[0].notes) exported |= n.find("exported with") != std::string::npos;
  EXPECT_TRUE(exported);
  EXPECT_EQ(second.value().ranks[0].path, (jobdir / "rank0.sqlite").string());
  EXPECT_EQ(first.value().ranks[0].gpu.size(), second.value().ranks[0].gpu.size());
  EXPECT_TRUE(Names(dir.path / "tmp").empty());
}

// A folder holding a report and its export reads the export once (the report is its source).
TEST_F(NsysRepExport, ReportBesideItsExportReadsTheExport) {
  Inflate(kSamples + "moe/rank0.sqlite.gz", dir.path, "rank0.sqlite");
  std::ofstream((dir.path / "rank0.nsys-rep").string()) << "report";
  auto files = ExpandInputs({dir.path.string()});
  ASSERT_TRUE(files.ok());
  ASSERT_EQ(files.value().size(), 1u);
  EXPECT_EQ(fs::path(files.value()[0]).filename(), "rank0.sqlite");
}

// The names the export and nsys's log had before they moved into a private folder:
// links planted there to files of someone else's are neither written through nor removed.
TEST_F(NsysRepExport, LinksAtThePredictableNamesAreNotFollowed) {
  const std::string real = Inflate(kSamples + "moe/rank0.sqlite.gz", dir.path, "real.sqlite.src");
  FakeNsys("echo exporting; cp " + real + " \"$out\"");
  const std::string report = Report("job");
  const fs::path jobdir = fs::path(report).parent_path();
  const std::string partial = (jobdir / "rank0.sqlite").string() + ".partial-" + std::to_string(getpid()) + ".sqlite";
  for (const std::string& planted : {partial, partial + ".log"}) {
    const fs::path victim = dir.path / ("victim-" + fs::path(planted).extension().string());
    std::ofstream(victim) << "someone else's file";
    fs::create_symlink(victim, planted);
  }
  auto r = ImportFile(report);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_TRUE(ReadAll(dir.path / "victim-.sqlite") == "someone else's file") << "written through the link";
  EXPECT_TRUE(ReadAll(dir.path / "victim-.log") == "someone else's file") << "written through the link";
  EXPECT_TRUE(fs::is_symlink(partial));
  EXPECT_TRUE(fs::is_symlink(partial + ".log"));
  EXPECT_TRUE(fs::is_regular_file(jobdir / "rank0.sqlite"));
}

// COMMLENS_NSYS_KEEP_EXPORT=0: the export is made in a private folder in TMPDIR, read,
// and removed with the folder; the report's folder is left as it was.
TEST_F(NsysRepExport, NotKeptWhenAskedAndRemovedAfterReading) {
  const std::string real = Inflate(kSamples + "moe/rank0.sqlite.gz", dir.path, "real.sqlite.src");
  FakeNsys("cp " + real + " \"$out\"");
  const std::string report = Report("job");
  ScopedEnv keep("COMMLENS_NSYS_KEEP_EXPORT", "0");
  auto r = ImportFile(report);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_GT(r.value()[0].gpu.size(), 1000u);
  bool told = false;
  for (const std::string& n : r.value()[0].notes) told |= n.find("temporary folder, removed") != std::string::npos;
  EXPECT_TRUE(told);
  EXPECT_EQ(Names(fs::path(report).parent_path()), std::set<std::string>{"rank0.nsys-rep"});
  EXPECT_TRUE(Names(dir.path / "tmp").empty());
}

// Two reports named rank0.nsys-rep in two read-only folders, exported at the same time:
// each rank reads its own export, and TMPDIR is empty afterwards. b's nsys writes its
// export first and ends last, so a name the two shared would be read (and moved) by a
// first. As root (who may write anywhere) the imports run as the unprivileged user nobody.
TEST_F(NsysRepExport, SameNamedReportsInReadOnlyFoldersDoNotMeet) {
  const std::string moe = Inflate(kSamples + "moe/rank0.sqlite.gz", dir.path, "moe.sqlite.src");
  const std::string ddp = Inflate(kSamples + "ddp/rank0.sqlite.gz", dir.path, "ddp.sqlite.src");
  const size_t moe_rows = ImportFile(moe).value()[0].gpu.size();
  const size_t ddp_rows = ImportFile(ddp).value()[0].gpu.size();
  ASSERT_NE(moe_rows, ddp_rows);
  FakeNsys("case \"$report\" in */a/*) sleep 0.2; cp " + moe + " \"$out\";; *) cp " + ddp + " \"$out\"; sleep 0.6;; esac");
  const std::string a = Report("a"), b = Report("b");
  const fs::perms open_dir = fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec |
                             fs::perms::others_read | fs::perms::others_exec;
  fs::permissions(dir.path, open_dir);
  fs::permissions(bin, open_dir);
  fs::permissions(dir.path / "tmp", fs::perms::all);
  for (const std::string& f : {moe, ddp, a, b})
    fs::permissions(f, fs::perms::owner_read | fs::perms::group_read | fs::perms::others_read);
  const fs::perms read_only = fs::perms::owner_read | fs::perms::owner_exec | fs::perms::group_read |
                              fs::perms::group_exec | fs::perms::others_read | fs::perms::others_exec;
  fs::permissions(dir.path / "a", read_only);
  fs::permissions(dir.path / "b", read_only);
  std::ofstream(calls).close();
  fs::permissions(calls, fs::perms::all);
  const ChildOutcome out = InChild(
      [] {
        if (geteuid() == 0 && (setgid(65534) != 0 || setuid(65534) != 0)) _exit(4);
      },
      [&]() -> std::string {
        std::string fault_a, fault_b;
        auto check = [](const std::string& report, size_t rows, std::string* fault) {
          auto r = ImportFile(report);
          if (!r.ok()) *fault = r.status().message();
          else if (r.value()[0].gpu.size() != rows)
            *fault = report + ": read " + std::to_string(r.value()[0].gpu.size()) + " GPU rows, its export has " +
                     std::to_string(rows);
        };
        std::thread ta(check, a, moe_rows, &fault_a);
        std::thread tb(check, b, ddp_rows, &fault_b);
        ta.join();
        tb.join();
        return fault_a + (fault_a.empty() || fault_b.empty() ? "" : "; ") + fault_b;
      });
  EXPECT_TRUE(out.exited && out.code == 0) << "exit " << out.code << ": " << out.message;
  EXPECT_EQ(Calls(), 2);
  EXPECT_EQ(Names(dir.path / "a"), std::set<std::string>{"rank0.nsys-rep"});
  EXPECT_EQ(Names(dir.path / "b"), std::set<std::string>{"rank0.nsys-rep"});
  EXPECT_TRUE(Names(dir.path / "tmp").empty());
  fs::permissions(dir.path / "a", fs::perms::owner_all);
  fs::permissions(dir.path / "b", fs::perms::owner_all);
}

// An nsys that never finishes is stopped after COMMLENS_NSYS_EXPORT_TIMEOUT seconds, with
// what it started; the report is a failure that says so, and no folder is left behind.
TEST_F(NsysRepExport, HangingNsysIsStoppedAfterTheTimeLimit) {
  const fs::path pidfile = dir.path / "sleep.pid";
  FakeNsys("sleep 30 & echo $! > " + pidfile.string() + "; wait");
  const std::string report = Report("job");
  ScopedEnv limit("COMMLENS_NSYS_EXPORT_TIMEOUT", "1");
  const auto start = std::chrono::steady_clock::now();
  auto r = ImportFile(report);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  ASSERT_FALSE(r.ok());
  const std::string msg = r.status().message();
  EXPECT_NE(msg.find(report), std::string::npos) << msg;
  EXPECT_NE(msg.find("took too long"), std::string::npos) << msg;
  EXPECT_NE(msg.find("COMMLENS_NSYS_EXPORT_TIMEOUT"), std::string::npos) << msg;
  EXPECT_LT(seconds, 10.0);
  // The sleep nsys started is gone too (or a zombie nobody reaped yet).
  const std::string pid = ReadAll(pidfile);
  ASSERT_FALSE(pid.empty());
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  const std::string stat = ReadAll("/proc/" + std::to_string(std::stoi(pid)) + "/stat");
  EXPECT_TRUE(stat.empty() || stat.find(") Z") != std::string::npos) << stat;
  EXPECT_EQ(Names(fs::path(report).parent_path()), std::set<std::string>{"rank0.nsys-rep"});
}

TEST_F(NsysRepExport, SettingsThatAreNotUnderstoodAreErrors) {
  const std::string real = Inflate(kSamples + "moe/rank0.sqlite.gz", dir.path, "real.sqlite.src");
  FakeNsys("cp " + real + " \"$out\"");
  const std::string report = Report("job");
  for (const char* name : {"COMMLENS_NSYS_EXPORT_TIMEOUT", "COMMLENS_NSYS_KEEP_EXPORT"}) {
    ScopedEnv bad(name, "soon");
    auto r = ImportFile(report);
    ASSERT_FALSE(r.ok()) << name;
    EXPECT_NE(r.status().message().find(std::string(name) + "=soon"), std::string::npos) << r.status().message();
  }
  EXPECT_EQ(Calls(), 0);
}

// A failing nsys: its last words are in the message, and nothing is left behind.
TEST_F(NsysRepExport, FailedExportSaysWhyAndLeavesNothing) {
  FakeNsys("echo 'cannot read the report: damaged' >&2; exit 3");
  const std::string report = Report("job");
  auto r = ImportFile(report);
  ASSERT_FALSE(r.ok());
  const std::string msg = r.status().message();
  EXPECT_NE(msg.find("exit 3"), std::string::npos) << msg;
  EXPECT_NE(msg.find("cannot read the report: damaged"), std::string::npos) << msg;
  EXPECT_EQ(Names(fs::path(report).parent_path()), std::set<std::string>{"rank0.nsys-rep"});
  EXPECT_TRUE(Names(dir.path / "tmp").empty());
}

}  // namespace
}  // namespace commlens::importers
