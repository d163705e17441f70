// The environment a command runs with: the variables `commlens record` inherited, plus
// what it sets for the job (the plugin's settings, a fabric preset). A value type, built
// once before the command starts; it never touches the process's own environment.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "common/launch_env.h"

namespace commlens::recorder::launcher {

class Environment {
 public:
  Environment() = default;
  // From "NAME=value" entries (an entry without '=' is skipped).
  explicit Environment(const std::vector<std::string>& entries);
  static Environment FromProcess();  // a copy of environ

  // nullptr when unset. The pointer stays valid until the variable is set again.
  const char* Get(std::string_view name) const;
  void Set(std::string_view name, std::string_view value);
  void Unset(std::string_view name);

  // "NAME=value" for each variable, sorted by name; for execve.
  std::vector<std::string> Entries() const;
  // A lookup over this environment (for DetectLaunchEnv, ParseConfig); valid while this
  // object lives and is not changed.
  launch_env::EnvLookup Lookup() const;

 private:
  std::map<std::string, std::string, std::less<>> vars_;
};

// |value| as one shell word: as is when it is made of safe characters, else in single
// quotes.
std::string ShellQuote(std::string_view value);

}  // namespace commlens::recorder::launcher
