// Runs the built commlens (COMMLENS_BIN) or any shell command as a user would, for the
// CLI tests: exit code and stdout+stderr together.
#pragma once

#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <string>

namespace commlens::testing {

struct CliRun {
  int exit_code;
  std::string out;  // stdout and stderr together
};

inline CliRun Shell(const std::string& command) {
  std::string cmd = command + " 2>&1";
  FILE* p = popen(cmd.c_str(), "r");
  std::string out;
  std::array<char, 4096> buf;
  size_t n;
  while ((n = fread(buf.data(), 1, buf.size(), p)) > 0) out.append(buf.data(), n);
  int status = pclose(p);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, out};
}

// Runs |command| with files limited to |bytes| (RLIMIT_FSIZE) and SIGXFSZ ignored: a write
// past the limit fails with EFBIG, as a write to a full disk fails with ENOSPC.
inline CliRun ShellOnAFullDisk(const std::string& command, rlim_t bytes) {
  int fds[2];
  if (::pipe(fds) != 0) return {-1, "pipe failed"};
  const pid_t child = ::fork();
  if (child < 0) return {-1, "fork failed"};
  if (child == 0) {
    ::dup2(fds[1], 1);
    ::dup2(fds[1], 2);
    ::close(fds[0]);
    ::close(fds[1]);
    ::signal(SIGXFSZ, SIG_IGN);  // stays ignored across exec
    const rlimit limit{bytes, bytes};
    ::setrlimit(RLIMIT_FSIZE, &limit);
    ::execl("/bin/sh", "sh", "-c", command.c_str(), static_cast<char*>(nullptr));
    ::_exit(127);
  }
  ::close(fds[1]);
  std::string out;
  std::array<char, 4096> buf;
  ssize_t n;
  while ((n = ::read(fds[0], buf.data(), buf.size())) > 0) out.append(buf.data(), static_cast<size_t>(n));
  ::close(fds[0]);
  int status = 0;
  ::waitpid(child, &status, 0);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, out};
}

#ifdef COMMLENS_BIN
inline CliRun Commlens(const std::string& args) { return Shell(std::string(COMMLENS_BIN) + " " + args); }
#endif

// The shipped sample traces (examples/traces/<workload>).
inline const std::string kSamples = std::string(COMMLENS_SOURCE_DIR) + "/examples/traces";

}  // namespace commlens::testing
