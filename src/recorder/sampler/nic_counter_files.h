// Which files hold each NIC's counters (DiscoverNics finds them), and what each one is:
// unit, width, whether it wraps or saturates, and how often it is read. The reading is
// nic_source.h's, one open file per counter (counter_file_reader.h). The facts come from the kernel drivers
// (shared/reference/nccl.md, Q7); docs/recorder.md ("Samplers") has the tables.
//
// Devices come from topo's sysfs discovery (topo/nic_discovery.h), through a root
// prefix so tests read a fake tree:
//  - RDMA ports, /sys/class/infiniband/<dev>/ports/<p>/: the PMA port counters
//    (counters/, InfiniBand and RoCE HCAs) and the driver's hw_counters/ (EFA, mlx5), and
//    the port's rate. The kind of a port is told apart as follows: EFA when topo says so
//    (PCI vendor Amazon, or the efa driver) or when the node type is "unspecified" (only
//    EFA registers that type); otherwise by the port's link_layer: "InfiniBand" is IB,
//    "Ethernet" is RoCE; anything else (rxe, siw without a link layer) is "rdma".
//  - network interfaces, /sys/class/net/<if>/statistics/: bytes, packets, errors, drops,
//    and the speed. Interfaces without a device (bridges, veth, lo) only when asked.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "recorder/sampler/counter_file_reader.h"
#include "recorder/sampler/sample_buffer.h"

namespace commlens::recorder::sampler {

// How often a counter is read (sample_source.h, Tick::events).
enum class CounterGroup : uint8_t {
  kTraffic,  // data moved, packets, requests, congestion marks: every tick
  kEvents,   // errors, drops, link rates: at the events rate
};

struct CounterFacts {
  std::string unit;        // "bytes", "4 bytes", "packets", "count", "ticks"
  uint8_t width_bits = 64;
  bool saturates = false;  // stops at its maximum (InfiniBand PMA counters)
  CounterGroup group = CounterGroup::kEvents;
};

struct CounterSpec {
  SeriesDef def;     // series name "<kind>.<file>", unit, width, source (path in the root)
  std::string path;  // the file on this machine (root prefix included)
  CounterText text = CounterText::kDecimal;
  CounterGroup group = CounterGroup::kTraffic;
};

// One NIC port or network interface, as the sampler will read it.
struct NicSpec {
  std::string name;  // "mlx5_0:1", "rdmap16s27:1", "eth0": the series' device
  native_format::DeviceKind kind = native_format::DeviceKind::kOther;
  std::string presence_path;  // a folder that exists while the device does (host path)
  std::vector<CounterSpec> counters;  // the traffic group first, then the events group
};

struct NicDiscoveryOptions {
  std::filesystem::path sysfs_root = "/";  // tests: a fake tree with the real layout
  bool rdma = true;                        // RDMA ports
  bool netdevs = true;                     // network interfaces
  bool include_loopback = false;           // lo (tests, the loopback check)
  bool include_virtual = false;            // interfaces with no device: bridges, veth, bonds
  // When not empty, only these: "mlx5_0" (all its ports), "mlx5_0:1", "eth0" (named
  // interfaces are taken even if virtual).
  std::vector<std::string> only;
};

// Every device to sample, RDMA ports first, in natural name order. |notes| gets what
// was assumed or skipped, in words.
std::vector<NicSpec> DiscoverNics(const NicDiscoveryOptions& options, std::vector<std::string>* notes);

// The facts of one file of an RDMA port: |dir| is "counters" or "hw_counters";
// |extended| says the port shows the 64-bit PMA counters (unicast_xmit_packets exists).
CounterFacts RdmaCounterFacts(native_format::DeviceKind kind, bool mlx5, bool extended, std::string_view dir,
                              std::string_view file);
// The facts of a netdev statistics file.
CounterFacts NetdevCounterFacts(std::string_view file);

// Series name prefix of a kind: "efa", "ib", "roce", "rdma", "net", "gpu".
std::string_view KindPrefix(native_format::DeviceKind kind);

}  // namespace commlens::recorder::sampler
