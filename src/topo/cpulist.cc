#include "topo/cpulist.h"

#include <algorithm>

#include "topo/sysfs_root.h"

namespace commlens::topo {

std::optional<std::vector<int>> ParseCpuList(std::string_view text) {
  std::vector<int> cpus;
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.remove_suffix(1);
  while (!text.empty()) {
    size_t comma = text.find(',');
    std::string_view item = text.substr(0, comma);
    text = comma == std::string_view::npos ? std::string_view() : text.substr(comma + 1);
    size_t dash = item.find('-');
    auto first = ParseInteger(item.substr(0, dash));
    auto last = dash == std::string_view::npos ? first : ParseInteger(item.substr(dash + 1));
    if (!first || !last || *first < 0 || *last < *first || *last > (1 << 20)) return std::nullopt;
    for (int64_t cpu = *first; cpu <= *last; ++cpu) cpus.push_back(static_cast<int>(cpu));
  }
  std::sort(cpus.begin(), cpus.end());
  cpus.erase(std::unique(cpus.begin(), cpus.end()), cpus.end());
  return cpus;
}

std::string FormatCpuList(const std::vector<int>& cpus) {
  std::string out;
  for (size_t i = 0; i < cpus.size();) {
    size_t j = i;
    while (j + 1 < cpus.size() && cpus[j + 1] == cpus[j] + 1) ++j;
    if (!out.empty()) out += ',';
    out += std::to_string(cpus[i]);
    if (j > i) out += '-' + std::to_string(cpus[j]);
    i = j + 1;
  }
  return out;
}

std::string CanonicalCpuList(std::string_view text) {
  auto cpus = ParseCpuList(text);
  return cpus ? FormatCpuList(*cpus) : std::string(text);
}

}  // namespace commlens::topo
