#include "importers/nsys/nsys_rep_export.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <vector>

extern char** environ;

namespace commlens::importers {

namespace fs = std::filesystem;

namespace {

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

// Runs |argv| with stdout and stderr into |log|; the exit status, or -1 when it could
// not be started.
int Run(const std::vector<std::string>& argv, const std::string& log) {
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_adddup2(&actions, STDOUT_FILENO, STDERR_FILENO);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = 0;
  int rc = posix_spawn(&pid, args[0], &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) return -1;
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) return -1;
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
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
  std::string stem = report.substr(0, report.size() - kNsysReportSuffix.size());
  const std::string cached = stem + ".sqlite";
  auto report_time = fs::last_write_time(report, ec);
  if (fs::is_regular_file(cached, ec) && !ec) {
    auto cached_time = fs::last_write_time(cached, ec);
    if (!ec && cached_time >= report_time) return NsysExport{cached, "read " + cached + ", the export beside the report"};
  }
  const std::string nsys = FindNsys();
  if (nsys.empty())
    return Error(report + ": an Nsight Systems report; commlens reads its SQLite export and found no nsys to make it "
                          "(looked in NSYS_HOME and PATH). Export it with `nsys export --type sqlite "
                          "--include-blobs=true " + report + "` and pass the .sqlite, or set NSYS_HOME");
  // Beside the report when its folder is writable (the cache), else in TMPDIR.
  std::string target = cached;
  std::string note = "exported with " + nsys + " to " + cached + " (kept beside the report for the next run)";
  const std::string dir = fs::path(report).parent_path().empty() ? "." : fs::path(report).parent_path().string();
  if (::access(dir.c_str(), W_OK) != 0) {
    const char* tmp = std::getenv("TMPDIR");
    target = (fs::path(tmp && *tmp ? tmp : "/tmp") / (fs::path(stem).filename().string() + ".sqlite")).string();
    note = "exported with " + nsys + " to " + target + " (the report's folder is not writable)";
  }
  const std::string partial = target + ".partial-" + std::to_string(::getpid()) + ".sqlite";
  const std::string log = partial + ".log";
  int rc = Run({nsys, "export", "--type", "sqlite", "--include-blobs=true", "--force-overwrite=true", "--output",
                partial, report},
               log);
  std::string tail = LastLines(log, 4);
  fs::remove(log, ec);
  if (rc != 0 || !fs::is_regular_file(partial, ec)) {
    fs::remove(partial, ec);
    return Error(report + ": `" + nsys + " export --type sqlite` failed" +
                 (rc < 0 ? std::string(" to start") : " (exit " + std::to_string(rc) + ")") + tail);
  }
  fs::rename(partial, target, ec);
  if (ec) return Error(report + ": cannot move the export to " + target + ": " + ec.message());
  return NsysExport{target, note};
}

}  // namespace commlens::importers
