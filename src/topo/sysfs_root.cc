#include "topo/sysfs_root.h"

#include <algorithm>
#include <charconv>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <system_error>

namespace commlens::topo {
namespace {

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t' || s.front() == '\n' || s.front() == '\r')) {
    s.remove_prefix(1);
  }
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\n' || s.back() == '\r')) {
    s.remove_suffix(1);
  }
  return s;
}

}  // namespace

std::optional<int64_t> ParseInteger(std::string_view text) {
  text = Trim(text);
  int base = 10;
  bool negative = false;
  if (!text.empty() && text.front() == '-') {
    negative = true;
    text.remove_prefix(1);
  }
  if (text.size() > 2 && text[0] == '0' && (text[1] == 'x' || text[1] == 'X')) {
    base = 16;
    text.remove_prefix(2);
  }
  int64_t value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value, base);
  if (ec != std::errc() || end != text.data() + text.size() || text.empty()) return std::nullopt;
  return negative ? -value : value;
}

double ParseLeadingNumber(std::string_view text) {
  std::string s(Trim(text));
  char* end = nullptr;
  double value = std::strtod(s.c_str(), &end);
  return end == s.c_str() ? -1 : value;
}

SysfsRoot::SysfsRoot(std::filesystem::path root) : root_(std::move(root)) {
  std::error_code ec;
  canonical_root_ = std::filesystem::canonical(root_, ec);
  if (ec) canonical_root_ = root_;
}

bool SysfsRoot::IsLiveSystem() const { return canonical_root_ == std::filesystem::path("/"); }

std::filesystem::path SysfsRoot::HostPath(std::string_view path) const {
  while (!path.empty() && path.front() == '/') path.remove_prefix(1);
  return canonical_root_ / std::filesystem::path(path);
}

bool SysfsRoot::Exists(std::string_view path) const {
  std::error_code ec;
  return std::filesystem::exists(HostPath(path), ec);
}

std::optional<std::string> SysfsRoot::ReadAll(std::string_view path) const {
  std::ifstream in(HostPath(path));
  if (!in) return std::nullopt;
  std::ostringstream out;
  out << in.rdbuf();
  if (in.bad()) return std::nullopt;
  return out.str();
}

std::optional<std::string> SysfsRoot::ReadLine(std::string_view path) const {
  std::ifstream in(HostPath(path));
  if (!in) return std::nullopt;
  std::string line;
  // sysfs answers some reads with an error (the speed of a down link): no line at all.
  if (!std::getline(in, line)) return std::nullopt;
  return std::string(Trim(line));
}

std::optional<int64_t> SysfsRoot::ReadInt(std::string_view path) const {
  auto line = ReadLine(path);
  if (!line) return std::nullopt;
  return ParseInteger(*line);
}

std::vector<std::string> SysfsRoot::List(std::string_view dir) const {
  std::vector<std::string> names;
  std::error_code ec;
  for (std::filesystem::directory_iterator it(HostPath(dir), ec), end; !ec && it != end; it.increment(ec)) {
    names.push_back(it->path().filename().string());
  }
  std::sort(names.begin(), names.end());
  return names;
}

std::optional<std::string> SysfsRoot::Resolve(std::string_view path) const {
  std::error_code ec;
  std::filesystem::path real = std::filesystem::canonical(HostPath(path), ec);
  if (ec) return std::nullopt;
  std::filesystem::path inside = real.lexically_relative(canonical_root_);
  if (inside.empty() || *inside.begin() == "..") return std::nullopt;
  if (inside == ".") return std::string("/");
  return std::string("/").append(inside.generic_string());
}

}  // namespace commlens::topo
