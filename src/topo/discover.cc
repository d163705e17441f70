#include "topo/discover.h"

#include <algorithm>
#include <map>

#include "topo/cpu_discovery.h"
#include "topo/nic_discovery.h"
#include "topo/pci_discovery.h"

namespace commlens::topo {
namespace {

std::string PciIdName(const PciDevice& pci) {
  char text[48];
  std::snprintf(text, sizeof(text), "NVIDIA device %04x", pci.device);
  return text;
}

std::vector<Gpu> ReadGpus(const SysfsRoot& root) {
  std::vector<Gpu> gpus;
  for (const PciSummary& summary : ListPciDevices(root)) {
    if (!IsNvidiaGpu(summary)) continue;
    std::optional<PciDevice> pci = ReadPciDevice(root, summary.bdf);
    if (!pci) continue;
    Gpu gpu;
    gpu.pci = std::move(*pci);
    gpu.name = PciIdName(gpu.pci);
    gpus.push_back(std::move(gpu));
  }
  // ListPciDevices is sorted by name, which for 4-digit-domain BDFs is PCI order.
  return gpus;
}

void ApplyGpuFacts(const GpuProbeResult& facts, Topology* topology) {
  topology->nvml_available = facts.nvml_available;
  topology->cuda_available = facts.cuda_available;
  topology->driver_version = facts.driver_version;
  topology->p2p_source = facts.p2p_source;
  std::map<std::string, size_t> index;
  for (size_t i = 0; i < topology->gpus.size(); ++i) index[topology->gpus[i].pci.bdf] = i;
  for (const GpuFacts& f : facts.gpus) {
    auto it = index.find(f.bdf);
    if (it == index.end()) continue;
    Gpu& gpu = topology->gpus[it->second];
    if (!f.name.empty()) gpu.name = f.name;
    gpu.uuid = f.uuid;
    gpu.memory_bytes = f.memory_bytes;
    gpu.nvlinks = f.nvlinks;
    gpu.nvlinks_known = f.nvlinks_known;
  }
  size_t n = topology->gpus.size();
  topology->p2p.assign(n, std::vector<P2PFacts>(n));
  for (const PeerFacts& peer : facts.peers) {
    auto from = index.find(peer.from), to = index.find(peer.to);
    if (from != index.end() && to != index.end()) topology->p2p[from->second][to->second] = peer.facts;
  }
  topology->notes.insert(topology->notes.end(), facts.notes.begin(), facts.notes.end());
}

// Every PCI device the report shows, GPUs first.
std::vector<PciDevice*> ShownDevices(Topology* topology) {
  std::vector<PciDevice*> devices;
  for (Gpu& gpu : topology->gpus) devices.push_back(&gpu.pci);
  for (RdmaNic& nic : topology->nics) {
    if (nic.pci) devices.push_back(&*nic.pci);
  }
  return devices;
}

void ReadCpuTopology(const SysfsRoot& root, const DiscoverOptions& options, Topology* topology) {
  topology->cpu_topology_source = "sysfs";
  topology->numa_nodes = ReadNumaNodes(root, &topology->notes);
  if (!options.use_hwloc || !HwlocCompiledIn() || !root.IsLiveSystem()) return;
  std::vector<PciDevice*> devices = ShownDevices(topology);
  std::vector<std::string> bdfs;
  for (const PciDevice* device : devices) bdfs.push_back(device->bdf);
  std::string error;
  std::optional<HwlocFacts> facts = ReadHwlocFacts(bdfs, &error);
  if (!facts) {
    topology->notes.push_back("hwloc failed (" + error + "): CPU topology from sysfs");
    return;
  }
  topology->cpu_topology_source = "hwloc";
  if (!facts->nodes.empty()) topology->numa_nodes = facts->nodes;
  for (PciDevice* device : devices) {
    auto it = facts->devices.find(device->bdf);
    if (it == facts->devices.end()) continue;
    if (!it->second.cpus.empty()) device->cpu_affinity = it->second.cpus;
    // sysfs's numa_node is what the firmware reported and what nvidia-smi shows; hwloc
    // only fills it in when the firmware said nothing.
    if (device->numa_node < 0) device->numa_node = it->second.numa_node;
  }
}

}  // namespace

Topology Discover(const SysfsRoot& root, const DiscoverOptions& options) {
  Topology topology;
  topology.gpus = ReadGpus(root);
  topology.nics = ReadRdmaNics(root, &topology.notes);
  NetInterfaces net = ReadNetInterfaces(root);
  topology.net_interfaces = std::move(net.physical);
  topology.virtual_interfaces = std::move(net.virtual_names);
  for (RdmaNic& nic : topology.nics) {
    for (const NetInterface& iface : topology.net_interfaces) {
      if (nic.pci && iface.bdf == nic.pci->bdf) nic.netdevs.push_back(iface.name);
    }
  }

  if (topology.gpus.empty()) {
    topology.notes.push_back("no NVIDIA GPU on the PCI bus (/sys/bus/pci/devices): GPU matrix empty");
  } else if (options.gpu_probe != nullptr) {
    std::vector<std::string> bdfs;
    for (const Gpu& gpu : topology.gpus) bdfs.push_back(gpu.pci.bdf);
    ApplyGpuFacts(options.gpu_probe->Probe(bdfs), &topology);
  } else {
    topology.p2p.assign(topology.gpus.size(), std::vector<P2PFacts>(topology.gpus.size()));
    topology.notes.push_back("NVML and CUDA not queried (" + options.no_probe_reason +
                             "): NVLink links and P2P status unknown");
  }
  ReadCpuTopology(root, options, &topology);
  return topology;
}

}  // namespace commlens::topo
