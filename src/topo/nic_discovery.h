// Network devices from sysfs: RDMA devices under /sys/class/infiniband (InfiniBand and
// RoCE HCAs, AWS EFA) and network interfaces under /sys/class/net.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "topo/sysfs_root.h"
#include "topo/topology.h"

namespace commlens::topo {

// RDMA devices sorted by name in natural order; |notes| gets a line when the class
// folder is missing (no RDMA driver loaded). netdevs are left empty (see Discover).
std::vector<RdmaNic> ReadRdmaNics(const SysfsRoot& root, std::vector<std::string>* notes);

// All interfaces, physical ones first-class; virtual ones (no device link) only named.
struct NetInterfaces {
  std::vector<NetInterface> physical;
  std::vector<std::string> virtual_names;
};
NetInterfaces ReadNetInterfaces(const SysfsRoot& root);

// "4: ACTIVE" -> "ACTIVE": sysfs prefixes IB port states and node types with their code.
std::string StripStateCode(std::string_view text);
// Natural order: digit runs compare as numbers, so mlx5_2 < mlx5_10 < mlx5_bond_0.
bool NaturalLess(std::string_view a, std::string_view b);

}  // namespace commlens::topo
