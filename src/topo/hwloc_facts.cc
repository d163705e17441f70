// hwloc 2.x: NUMA nodes with their CPU sets and memory, and for each PCI device the CPU
// set of its nearest non-I/O ancestor (the package or NUMA node it hangs from).
#include <hwloc.h>

#include <cstdio>
#include <cstdlib>
#include <memory>

#include "topo/cpu_discovery.h"
#include "topo/cpulist.h"
#include "topo/pci_discovery.h"

namespace commlens::topo {
namespace {

struct TopologyDeleter {
  void operator()(hwloc_topology* t) const { hwloc_topology_destroy(t); }
};
using TopologyPtr = std::unique_ptr<hwloc_topology, TopologyDeleter>;

std::string CpuList(hwloc_const_bitmap_t set) {
  if (set == nullptr) return {};
  char* text = nullptr;
  if (hwloc_bitmap_list_asprintf(&text, set) < 0 || text == nullptr) return {};
  std::string out = CanonicalCpuList(text);
  free(text);
  return out;
}

}  // namespace

bool HwlocCompiledIn() { return true; }

std::optional<HwlocFacts> ReadHwlocFacts(const std::vector<std::string>& bdfs, std::string* error) {
  hwloc_topology_t raw = nullptr;
  if (hwloc_topology_init(&raw) != 0) {
    *error = "hwloc_topology_init failed";
    return std::nullopt;
  }
  TopologyPtr topology(raw);
  // PCI devices are filtered out by default; GPUs and NICs are "important" I/O objects.
  hwloc_topology_set_io_types_filter(raw, HWLOC_TYPE_FILTER_KEEP_IMPORTANT);
  if (hwloc_topology_load(raw) != 0) {
    *error = "hwloc_topology_load failed";
    return std::nullopt;
  }
  HwlocFacts facts;
  int count = hwloc_get_nbobjs_by_type(raw, HWLOC_OBJ_NUMANODE);
  for (int i = 0; i < count; ++i) {
    hwloc_obj_t obj = hwloc_get_obj_by_type(raw, HWLOC_OBJ_NUMANODE, static_cast<unsigned>(i));
    NumaNode node;
    node.id = static_cast<int>(obj->os_index);
    node.cpus = CpuList(obj->cpuset);
    if (obj->attr) node.memory_bytes = obj->attr->numanode.local_memory;
    facts.nodes.push_back(std::move(node));
  }
  for (const std::string& bdf : bdfs) {
    unsigned domain = 0, bus = 0, dev = 0, fn = 0;
    if (std::sscanf(bdf.c_str(), "%x:%x:%x.%x", &domain, &bus, &dev, &fn) != 4) continue;
    hwloc_obj_t pci = hwloc_get_pcidev_by_busid(raw, domain, bus, dev, fn);
    if (pci == nullptr) continue;
    hwloc_obj_t parent = hwloc_get_non_io_ancestor_obj(raw, pci);
    if (parent == nullptr) continue;
    HwlocFacts::Device device;
    device.cpus = CpuList(parent->cpuset);
    if (parent->nodeset != nullptr && hwloc_bitmap_weight(parent->nodeset) == 1) {
      device.numa_node = hwloc_bitmap_first(parent->nodeset);
    }
    facts.devices[bdf] = device;
  }
  return facts;
}

}  // namespace commlens::topo
