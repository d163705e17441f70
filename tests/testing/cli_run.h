// Runs the built commlens (COMMLENS_BIN) or any shell command as a user would, for the
// CLI tests: exit code and stdout+stderr together.
#pragma once

#include <sys/wait.h>

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

#ifdef COMMLENS_BIN
inline CliRun Commlens(const std::string& args) { return Shell(std::string(COMMLENS_BIN) + " " + args); }
#endif

// The shipped sample traces (examples/traces/<workload>).
inline const std::string kSamples = std::string(COMMLENS_SOURCE_DIR) + "/examples/traces";

}  // namespace commlens::testing
