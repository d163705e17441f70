// The machine as `commlens topo` sees it: typed facts, filled by discovery (sysfs, hwloc,
// NVML/CUDA) and read by classification, checks and rendering. Nothing here reads a file.
//
// Conventions: PCI addresses are sysfs BDFs in lower case with a 4-digit domain
// ("0000:19:00.0"); a number that could not be read is -1 (or std::nullopt); GPUs are
// ordered by PCI address and RDMA NICs by name in natural order (mlx5_2 < mlx5_10), the
// orders nvidia-smi uses for GPU# and NIC#.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace commlens::topo {

// PCIe link of one device, as sysfs spells it ("16.0 GT/s PCIe", width 16).
struct PcieLink {
  std::string current_speed;
  std::string max_speed;
  int current_width = -1;
  int max_width = -1;
};

struct PciDevice {
  std::string bdf;
  // Resolved sysfs path, as seen inside the root:
  // "/sys/devices/pci0000:16/0000:16:01.0/0000:17:00.0/0000:18:00.0/0000:19:00.0".
  std::string sysfs_path;
  // "0000:16" from "pci0000:16"; empty when the path is not under a PCI host bridge.
  std::string host_bridge;
  // The PCI bridges from the root port down to the device's parent, outermost first.
  std::vector<std::string> bridges;
  uint32_t class_code = 0;  // 24-bit: base class, subclass, programming interface
  uint16_t vendor = 0;
  uint16_t device = 0;
  std::string driver;       // basename of the driver link; empty when unbound
  int numa_node = -1;
  std::string cpu_affinity;  // canonical CPU list ("0-47,96-143"); empty when unknown
  PcieLink link;
};

enum class NvLinkRemote : uint8_t { kUnknown, kGpu, kSwitch, kOther };

struct NvLink {
  int link = 0;
  bool active = false;
  NvLinkRemote remote = NvLinkRemote::kUnknown;
  std::string remote_bdf;    // peer GPU or NVSwitch PCI address when NVML gives one
  int version = -1;          // NVLink generation
  int64_t speed_mbps = -1;   // per direction, MB/s as NVML reports it
};

struct Gpu {
  PciDevice pci;
  std::string name;                       // "NVIDIA H100 80GB HBM3"; a PCI id when unknown
  std::string uuid;
  std::optional<uint64_t> memory_bytes;
  std::vector<NvLink> nvlinks;            // empty when NVML is missing or the GPU has none
  bool nvlinks_known = false;             // NVML answered for this GPU
};

// NVML's P2P status codes, in nvidia-smi's spelling: OK, CNS (chipset not supported),
// GNS (GPU not supported), TNS (topology not supported), DR (disabled by regkey),
// NS (not supported), U (unknown).
enum class P2PStatus : uint8_t {
  kOk,
  kChipsetNotSupported,
  kGpuNotSupported,
  kTopologyNotSupported,
  kDisabledByRegkey,
  kNotSupported,
  kUnknown,
};

// What peer-to-peer access one ordered GPU pair has.
struct P2PFacts {
  P2PStatus read = P2PStatus::kUnknown;
  P2PStatus write = P2PStatus::kUnknown;
  std::optional<bool> cuda_access;   // cuDeviceGetP2PAttribute(ACCESS_SUPPORTED)
  std::optional<bool> cuda_atomics;  // cuDeviceGetP2PAttribute(NATIVE_ATOMIC_SUPPORTED)
};

enum class NicKind : uint8_t { kInfiniBand, kRoce, kEfa, kOther };

struct RdmaPort {
  int port = 1;
  std::string state;        // "ACTIVE" (sysfs "4: ACTIVE")
  std::string phys_state;   // "LinkUp" (sysfs "5: LinkUp")
  std::string rate;         // "400 Gb/sec (4X NDR)"
  double rate_gbps = -1;    // 400
  std::string link_layer;   // "InfiniBand", "Ethernet", "Unknown"
};

struct RdmaNic {
  std::string name;                   // "mlx5_0", "rdmap79s0"
  NicKind kind = NicKind::kOther;
  std::string node_type;              // "CA", "RNIC", "unspecified"
  std::optional<PciDevice> pci;       // nullopt for virtual devices (rxe, siw)
  std::vector<RdmaPort> ports;
  std::vector<std::string> netdevs;   // network interfaces on the same PCI function
};

struct NetInterface {
  std::string name;
  std::string bdf;            // nearest PCI device above the interface; empty if virtual
  std::string operstate;      // "up", "down", "unknown"
  int64_t speed_mbps = -1;    // -1 when the driver does not say (link down, virtio, ENA)
  int type = -1;              // ARPHRD: 1 Ethernet, 32 InfiniBand (IPoIB), 772 loopback
};

struct NumaNode {
  int id = 0;
  std::string cpus;           // canonical CPU list
  std::optional<uint64_t> memory_bytes;
};

struct Topology {
  std::string cpu_topology_source;   // "hwloc" or "sysfs"
  std::vector<NumaNode> numa_nodes;
  std::vector<Gpu> gpus;
  // p2p[i][j]: from GPU i to GPU j; empty when no GPU facts were gathered.
  std::vector<std::vector<P2PFacts>> p2p;
  std::string p2p_source;            // "nvml", "cuda", or empty when unknown
  bool nvml_available = false;
  bool cuda_available = false;
  std::string driver_version;
  std::vector<RdmaNic> nics;
  std::vector<NetInterface> net_interfaces;   // physical interfaces only
  std::vector<std::string> virtual_interfaces;  // names of those left out (lo, docker0, ...)
  // What could not be seen, in plain words ("NVML not available: NVLink links unknown").
  std::vector<std::string> notes;
};

std::string_view P2PStatusCode(P2PStatus status);   // "OK", "CNS", ...
std::optional<P2PStatus> P2PStatusFromCode(std::string_view code);
std::string_view NicKindName(NicKind kind);          // "InfiniBand", "RoCE", "EFA", "RDMA"
std::string_view NvLinkRemoteName(NvLinkRemote remote);  // "gpu", "switch", ...

// Active NVLinks from GPU |a| to GPU |b| (indices into topology.gpus), counted as
// nvidia-smi's NV#: direct links to b, or, through NVSwitches, the smaller of the two
// GPUs' switch link counts.
int NvLinkCount(const Topology& topology, size_t a, size_t b);

}  // namespace commlens::topo
