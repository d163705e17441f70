#include "importers/nsys/nsys_rep_export.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>
#include <vector>

extern char** environ;

namespace commlens::importers {

namespace fs = std::filesystem;

namespace {

using Clock = std::chrono::steady_clock;

// After the time limit nsys is asked to stop (SIGTERM), then made to (SIGKILL).
constexpr auto kGraceAfterTerm = std::chrono::seconds(5);
constexpr auto kPollEvery = std::chrono::milliseconds(20);

struct ExportSettings {
  int timeout_s = kNsysExportTimeoutDefaultS;
  bool keep = true;  // beside the report, when its folder is writable
};

Result<ExportSettings> SettingsFromEnvironment(const std::string& report) {
  ExportSettings s;
  if (const char* t = std::getenv("COMMLENS_NSYS_EXPORT_TIMEOUT"); t && *t) {
    const char* end = t + std::strlen(t);
    auto [at, ec] = std::from_chars(t, end, s.timeout_s);
    if (ec != std::errc() || at != end || s.timeout_s <= 0)
      return Error(report + ": COMMLENS_NSYS_EXPORT_TIMEOUT=" + t + " is not a whole number of seconds above 0");
  }
  if (const char* k = std::getenv("COMMLENS_NSYS_KEEP_EXPORT"); k && *k) {
    if (std::strcmp(k, "0") != 0 && std::strcmp(k, "1") != 0)
      return Error(report + ": COMMLENS_NSYS_KEEP_EXPORT=" + k + " is neither 0 nor 1");
    s.keep = k[0] == '1';
  }
  return s;
}

bool IsExecutable(const fs::path& p) {
  std::error_code ec;
  return fs::is_regular_file(p, ec) && ::access(p.c_str(), X_OK) == 0;
}

std::string LastLines(const std::string& path, size_t n) {
  std::ifstream in(path);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);)
    if (!line.empty()) lines.push_back(line);
  std::string out;
  for (size_t i = lines.size() > n ? lines.size() - n : 0; i < lines.size(); ++i) out += "\n  " + lines[i];
  return out;
}

struct RunResult {
  bool started = false;
  bool timed_out = false;
  int exit = 0;  // the exit status, or 128 + the signal that ended it
};

// True once |pid| has ended; it stays a zombie (not reaped), so its process group id
// cannot be reused while we may still signal the group.
bool Ended(pid_t pid) {
  siginfo_t info{};
  for (;;) {
    if (::waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOHANG | WNOWAIT) == 0) return info.si_pid == pid;
    if (errno != EINTR) return true;  // not our child any more: nothing to wait for
  }
}

bool WaitUntil(pid_t pid, Clock::time_point deadline) {
  while (!Ended(pid)) {
    if (Clock::now() >= deadline) return false;
    std::this_thread::sleep_for(kPollEvery);
  }
  return true;
}

// Runs |argv| in a process group of its own, stdin from /dev/null, stdout and stderr into
// |log_fd|; stops the group when it runs past |limit|.
RunResult Run(const std::vector<std::string>& argv, int log_fd, std::chrono::seconds limit) {
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, log_fd, STDOUT_FILENO);
  posix_spawn_file_actions_adddup2(&actions, log_fd, STDERR_FILENO);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP);
  posix_spawnattr_setpgroup(&attr, 0);
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = 0;
  const int rc = posix_spawn(&pid, args[0], &actions, &attr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  RunResult result;
  if (rc != 0) return result;
  result.started = true;
  if (!WaitUntil(pid, Clock::now() + limit)) {
    result.timed_out = true;
    ::kill(-pid, SIGTERM);
    WaitUntil(pid, Clock::now() + kGraceAfterTerm);
    ::kill(-pid, SIGKILL);  // also what it started, while the unreaped leader holds the group id
  }
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) return result;
  }
  result.exit = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
  return result;
}

// The private folder nsys writes into: beside the report when the export is kept and the
// folder lets us, else in $TMPDIR.
Result<TempDir> ExportFolder(const std::string& report, bool keep, bool* beside) {
  *beside = false;
  if (keep) {
    const fs::path dir = fs::path(report).parent_path();
    if (Result<TempDir> d = TempDir::Make(dir.empty() ? "." : dir.string(), ".commlens-export-"); d.ok()) {
      *beside = true;
      return d;
    }
  }
  Result<TempDir> d = TempDir::MakeInTmp("commlens-nsys-");
  if (!d.ok()) return Error(report + ": cannot export it: " + d.status().message());
  return d;
}

}  // namespace

std::string FindNsys() {
  if (const char* home = std::getenv("NSYS_HOME"); home && *home) {
    for (const char* rel : {"bin/nsys", "nsys", "target-linux-x64/nsys", "host-linux-x64/nsys"})
      if (fs::path p = fs::path(home) / rel; IsExecutable(p)) return p.string();
  }
  if (const char* path = std::getenv("PATH")) {
    std::stringstream dirs(path);
    for (std::string dir; std::getline(dirs, dir, ':');)
      if (!dir.empty())
        if (fs::path p = fs::path(dir) / "nsys"; IsExecutable(p)) return p.string();
  }
  return {};
}

Result<NsysExport> ExportNsysReport(const std::string& report) {
  std::error_code ec;
  if (!fs::is_regular_file(report, ec)) return Error(report + ": no such file (or not a regular file)");
  COMMLENS_ASSIGN_OR_RETURN(ExportSettings settings, SettingsFromEnvironment(report));
  const std::string stem = report.substr(0, report.size() - kNsysReportSuffix.size());
  const std::string kept = stem + ".sqlite";
  auto report_time = fs::last_write_time(report, ec);
  if (fs::is_regular_file(kept, ec) && !ec) {
    auto kept_time = fs::last_write_time(kept, ec);
    if (!ec && kept_time >= report_time) return NsysExport{kept, "read " + kept + ", the export beside the report", {}};
  }
  const std::string nsys = FindNsys();
  if (nsys.empty())
    return Error(report + ": an Nsight Systems report; commlens reads its SQLite export and found no nsys to make it "
                          "(looked in NSYS_HOME and PATH). Export it with `nsys export --type sqlite "
                          "--include-blobs=true " + report + "` and pass the .sqlite, or set NSYS_HOME");
  bool beside = false;
  COMMLENS_ASSIGN_OR_RETURN(TempDir folder, ExportFolder(report, settings.keep, &beside));
  const std::string out = (fs::path(folder.path()) / (fs::path(stem).filename().string() + ".sqlite")).string();
  const std::string log = (fs::path(folder.path()) / "nsys.log").string();
  const int log_fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (log_fd < 0) return Error(report + ": cannot create " + log + ": " + std::strerror(errno));
  const RunResult run = Run({nsys, "export", "--type", "sqlite", "--include-blobs=true", "--force-overwrite=true",
                             "--output", out, report},
                            log_fd, std::chrono::seconds(settings.timeout_s));
  ::close(log_fd);
  const std::string tail = LastLines(log, 4);
  const std::string command = "`" + nsys + " export --type sqlite`";
  if (run.timed_out)
    return Error(report + ": " + command + " took too long: stopped after " + std::to_string(settings.timeout_s) +
                 " s (COMMLENS_NSYS_EXPORT_TIMEOUT sets the limit)" + tail);
  if (!run.started || run.exit != 0 || !fs::is_regular_file(out, ec))
    return Error(report + ": " + command + " failed" +
                 (!run.started ? std::string(" to start") : " (exit " + std::to_string(run.exit) + ")") + tail);
  if (beside) {
    fs::rename(out, kept, ec);  // same folder's file system: the export appears whole or not at all
    if (ec) return Error(report + ": cannot move the export to " + kept + ": " + ec.message());
    return NsysExport{kept, "exported with " + nsys + " to " + kept + " (kept beside the report for the next run)", {}};
  }
  NsysExport exported{out, "", std::move(folder)};
  exported.note = "exported with " + nsys + " into a temporary folder, removed after reading (" +
                  (settings.keep ? "the report's folder is not writable" : "COMMLENS_NSYS_KEEP_EXPORT=0") + ")";
  return exported;
}

}  // namespace commlens::importers
