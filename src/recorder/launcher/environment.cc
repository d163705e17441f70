#include "recorder/launcher/environment.h"

extern char** environ;

namespace commlens::recorder::launcher {

Environment::Environment(const std::vector<std::string>& entries) {
  for (const std::string& e : entries) {
    size_t eq = e.find('=');
    if (eq == std::string::npos || eq == 0) continue;
    vars_[e.substr(0, eq)] = e.substr(eq + 1);
  }
}

Environment Environment::FromProcess() {
  std::vector<std::string> entries;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) entries.emplace_back(*e);
  return Environment(entries);
}

const char* Environment::Get(std::string_view name) const {
  auto it = vars_.find(name);
  return it == vars_.end() ? nullptr : it->second.c_str();
}

void Environment::Set(std::string_view name, std::string_view value) {
  auto it = vars_.find(name);
  if (it == vars_.end())
    vars_.emplace(std::string(name), std::string(value));
  else
    it->second.assign(value);
}

void Environment::Unset(std::string_view name) {
  auto it = vars_.find(name);
  if (it != vars_.end()) vars_.erase(it);
}

std::vector<std::string> Environment::Entries() const {
  std::vector<std::string> out;
  out.reserve(vars_.size());
  for (const auto& [name, value] : vars_) out.push_back(name + "=" + value);
  return out;
}

launch_env::EnvLookup Environment::Lookup() const {
  return [this](const char* name) { return Get(name); };
}

std::string ShellQuote(std::string_view value) {
  bool safe = !value.empty();
  for (char c : value) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              std::string_view("@%+=:,./_-").find(c) != std::string_view::npos;
    if (!ok) safe = false;
  }
  if (safe) return std::string(value);
  std::string out = "'";
  for (char c : value) {
    if (c == '\'')
      out += "'\\''";
    else
      out += c;
  }
  return out + "'";
}

}  // namespace commlens::recorder::launcher
