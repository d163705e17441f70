#include "topo/link_matrix.h"

#include <algorithm>
#include <array>

namespace commlens::topo {
namespace {

constexpr std::array<std::string_view, 7> kLabels = {"X", "NV", "PIX", "PXB", "PHB", "NODE", "SYS"};

// Index of the switch (or root port, 0) that bridge |i| of a path belongs to: bridge 0
// is the root port; 1 and 2 are the upstream and downstream port of the first switch;
// 3 and 4 of the second; ...
size_t SwitchOf(size_t bridge_index) { return bridge_index == 0 ? 0 : (bridge_index + 1) / 2; }

}  // namespace

std::string LinkLabel(const Link& link) {
  if (link.type == LinkType::kNvLink) return "NV" + std::to_string(link.nvlinks);
  return std::string(kLabels[static_cast<size_t>(link.type)]);
}

std::optional<Link> LinkFromLabel(std::string_view label) {
  if (label.size() > 2 && label.substr(0, 2) == "NV") {
    int count = 0;
    for (char c : label.substr(2)) {
      if (c < '0' || c > '9') return std::nullopt;
      count = count * 10 + (c - '0');
    }
    return Link{LinkType::kNvLink, count};
  }
  for (size_t i = 0; i < kLabels.size(); ++i) {
    if (i != static_cast<size_t>(LinkType::kNvLink) && kLabels[i] == label) return Link{static_cast<LinkType>(i), 0};
  }
  return std::nullopt;
}

LinkType PciLinkType(const PciDevice& a, const PciDevice& b) {
  if (a.host_bridge.empty() || a.host_bridge != b.host_bridge) {
    // A missing NUMA node (-1 on both, typical of one-socket machines) is one node.
    return a.numa_node == b.numa_node ? LinkType::kNode : LinkType::kSys;
  }
  std::vector<std::string> pa = a.bridges, pb = b.bridges;
  pa.push_back(a.bdf);
  pb.push_back(b.bdf);
  size_t common = 0;
  while (common < pa.size() && common < pb.size() && pa[common] == pb[common]) ++common;
  if (common == 0) return LinkType::kPhb;  // different root ports of one host bridge
  // Switches crossed: from each device up to the deepest shared bridge, plus that one.
  size_t shared = SwitchOf(common - 1);
  auto climb = [&](const std::vector<std::string>& path) {
    size_t own = path.size() >= 2 ? SwitchOf(path.size() - 2) : shared;
    return own > shared ? own - shared : 0;
  };
  size_t crossed = climb(pa) + climb(pb) + 1;
  return crossed <= 1 ? LinkType::kPix : LinkType::kPxb;
}

LinkMatrix BuildLinkMatrix(const Topology& topology) {
  LinkMatrix matrix;
  std::vector<const PciDevice*> devices;
  for (size_t i = 0; i < topology.gpus.size(); ++i) {
    matrix.labels.push_back("GPU" + std::to_string(i));
    devices.push_back(&topology.gpus[i].pci);
  }
  matrix.gpu_count = topology.gpus.size();
  for (size_t i = 0; i < topology.nics.size(); ++i) {
    if (!topology.nics[i].pci) continue;
    matrix.labels.push_back("NIC" + std::to_string(matrix.nic_of_column.size()));
    matrix.nic_of_column.push_back(i);
    devices.push_back(&*topology.nics[i].pci);
  }
  size_t n = devices.size();
  matrix.cells.assign(n, std::vector<Link>(n));
  for (size_t r = 0; r < n; ++r) {
    for (size_t c = 0; c < n; ++c) {
      Link& link = matrix.cells[r][c];
      if (r == c) {
        link.type = LinkType::kSelf;
        continue;
      }
      if (r < matrix.gpu_count && c < matrix.gpu_count) {
        int count = NvLinkCount(topology, r, c);
        if (count > 0) {
          link = {LinkType::kNvLink, count};
          continue;
        }
      }
      link.type = PciLinkType(*devices[r], *devices[c]);
    }
  }
  return matrix;
}

std::vector<size_t> NearestNics(const LinkMatrix& matrix, size_t gpu) {
  std::vector<size_t> nearest;
  LinkType best = LinkType::kSys;
  for (size_t k = 0; k < matrix.nic_of_column.size(); ++k) {
    LinkType type = matrix.at(gpu, matrix.gpu_count + k).type;
    if (nearest.empty() || type < best) {
      best = type;
      nearest.assign(1, k);
    } else if (type == best) {
      nearest.push_back(k);
    }
  }
  return nearest;
}

}  // namespace commlens::topo
