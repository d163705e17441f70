// NUMA nodes and the CPU affinity of PCI devices. Two sources: sysfs
// (/sys/devices/system/node/node*/{cpulist,meminfo} and each device's numa_node and
// local_cpulist), which works on any root including a fake one; and hwloc, used on the
// live system when commlens was built with it (not in COMMLENS_PORTABLE builds).
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "topo/sysfs_root.h"
#include "topo/topology.h"

namespace commlens::topo {

// NUMA nodes from sysfs, by id; |notes| gets a line when the node folder is missing.
std::vector<NumaNode> ReadNumaNodes(const SysfsRoot& root, std::vector<std::string>* notes);
// "Node 0 MemTotal:       65794384 kB" -> bytes.
std::optional<uint64_t> ParseMemTotal(std::string_view meminfo);

// What hwloc says about the machine and about the devices asked for.
struct HwlocFacts {
  std::vector<NumaNode> nodes;
  struct Device {
    std::string cpus;     // canonical CPU list of the device's nearest non-I/O ancestor
    int numa_node = -1;   // when that ancestor covers exactly one NUMA node
  };
  std::map<std::string, Device> devices;  // by BDF; devices hwloc does not know are absent
};

// True when this build links hwloc.
bool HwlocCompiledIn();
// Loads the live machine's topology with hwloc; nullopt (and |error|) when it fails or
// hwloc is not compiled in.
std::optional<HwlocFacts> ReadHwlocFacts(const std::vector<std::string>& bdfs, std::string* error);

}  // namespace commlens::topo
