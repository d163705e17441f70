#include "topo/cpu_discovery.h"

#include <algorithm>
#include <sstream>

#include "topo/cpulist.h"

namespace commlens::topo {
namespace {
constexpr std::string_view kNodes = "/sys/devices/system/node";
}  // namespace

std::optional<uint64_t> ParseMemTotal(std::string_view meminfo) {
  std::istringstream in{std::string(meminfo)};
  std::string line;
  while (std::getline(in, line)) {
    size_t at = line.find("MemTotal:");
    if (at == std::string::npos) continue;
    std::istringstream fields(line.substr(at + 9));
    uint64_t value = 0;
    std::string unit;
    if (!(fields >> value)) return std::nullopt;
    fields >> unit;
    return unit == "kB" ? value * 1024 : value;
  }
  return std::nullopt;
}

std::vector<NumaNode> ReadNumaNodes(const SysfsRoot& root, std::vector<std::string>* notes) {
  std::vector<NumaNode> nodes;
  if (!root.Exists(kNodes)) {
    notes->push_back("NUMA layout unknown: /sys/devices/system/node is absent");
    return nodes;
  }
  for (const std::string& name : root.List(kNodes)) {
    if (name.size() < 5 || name.substr(0, 4) != "node") continue;
    auto id = ParseInteger(std::string_view(name).substr(4));
    if (!id) continue;
    std::string dir = std::string(kNodes) + "/" + name;
    NumaNode node;
    node.id = static_cast<int>(*id);
    node.cpus = CanonicalCpuList(root.ReadLine(dir + "/cpulist").value_or(""));
    if (auto meminfo = root.ReadAll(dir + "/meminfo")) node.memory_bytes = ParseMemTotal(*meminfo);
    nodes.push_back(std::move(node));
  }
  std::sort(nodes.begin(), nodes.end(), [](const NumaNode& a, const NumaNode& b) { return a.id < b.id; });
  return nodes;
}

}  // namespace commlens::topo
