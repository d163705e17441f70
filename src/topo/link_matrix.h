// Classification: how two devices are connected, in nvidia-smi topo -m's terms.
//
//   NV#  bonded set of # NVLinks (GPU pairs only)
//   PIX  at most a single PCIe bridge (the same PCIe switch, or the same root port)
//   PXB  multiple PCIe bridges, without crossing the host bridge
//   PHB  crosses a PCIe host bridge (same root complex)
//   NODE crosses host bridges within one NUMA node
//   SYS  crosses the SMP interconnect between NUMA nodes (QPI/UPI, xGMI)
//
// A PCIe switch is an upstream port with its downstream ports: two or three bridge
// devices in sysfs, one "bridge" for PIX/PXB. Below a root port the bridges alternate
// upstream, downstream, upstream, ... so a switch is counted once per pair.
#pragma once

#include <string>
#include <vector>

#include "topo/topology.h"

namespace commlens::topo {

enum class LinkType : uint8_t { kSelf, kNvLink, kPix, kPxb, kPhb, kNode, kSys };

struct Link {
  LinkType type = LinkType::kSys;
  int nvlinks = 0;  // for kNvLink
};

// "X", "NV18", "PIX", ...
std::string LinkLabel(const Link& link);
// Parses LinkLabel's output; nullopt when it is none of them.
std::optional<Link> LinkFromLabel(std::string_view label);

// The PCI-only distance between two different devices.
LinkType PciLinkType(const PciDevice& a, const PciDevice& b);

// The matrix nvidia-smi topo -m prints: GPUs, then the RDMA NICs that sit on PCI.
struct LinkMatrix {
  std::vector<std::string> labels;     // "GPU0", ..., "NIC0", ...
  size_t gpu_count = 0;
  std::vector<size_t> nic_of_column;   // for NIC k: its index in topology.nics
  std::vector<std::vector<Link>> cells;

  const Link& at(size_t row, size_t column) const { return cells[row][column]; }
};

LinkMatrix BuildLinkMatrix(const Topology& topology);

// The NIC columns closest to GPU |gpu| (the smallest link type); empty without NICs.
std::vector<size_t> NearestNics(const LinkMatrix& matrix, size_t gpu);

}  // namespace commlens::topo
