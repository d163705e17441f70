// Small string helpers shared by every component, the NCCL profiler plugin included
// (header only, nothing to link): one copy, not one per file.
#pragma once

#include <string_view>

namespace commlens {

constexpr bool StartsWith(std::string_view s, std::string_view prefix) {
  return s.substr(0, prefix.size()) == prefix;
}

constexpr bool EndsWith(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

constexpr bool Contains(std::string_view s, std::string_view part) {
  return s.find(part) != std::string_view::npos;
}

}  // namespace commlens
