// PCI devices from sysfs: /sys/bus/pci/devices/<bdf> are symlinks into
// /sys/devices/pci<domain>:<bus>/..., so the resolved path of a device spells out its
// place in the PCI tree (host bridge, root port, switch ports), which is what the
// PIX/PXB/PHB classification needs.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "topo/sysfs_root.h"
#include "topo/topology.h"

namespace commlens::topo {

inline constexpr uint16_t kVendorNvidia = 0x10de;
inline constexpr uint16_t kVendorAmazon = 0x1d0f;

// "0000:19:00.0": 4 hex digits, colon, 2, colon, 2, dot, 1.
bool IsBdf(std::string_view text);
// Lower-cases a PCI address and pads the domain to 4 digits ("00000000:19:00.0" and
// "0000:19:00.0" name the same device); nullopt when it is not a PCI address.
std::optional<std::string> NormalizeBdf(std::string_view text);

// Fills host_bridge and bridges from a resolved sysfs path; false when the path is not
// under /sys/devices/pci<domain>:<bus>.
bool ParsePciPath(std::string_view resolved_path, PciDevice* device);
// The last PCI address on a resolved path ("/sys/devices/pci0000:00/0000:00:03.0/virtio2"
// -> "0000:00:03.0"); empty when there is none.
std::string NearestPciAncestor(std::string_view resolved_path);

// Every device's address with its class and vendor, cheap enough to scan the whole bus.
struct PciSummary {
  std::string bdf;
  uint32_t class_code = 0;
  uint16_t vendor = 0;
};
std::vector<PciSummary> ListPciDevices(const SysfsRoot& root);

// All attributes of one device; nullopt when /sys/bus/pci/devices/<bdf> is missing.
std::optional<PciDevice> ReadPciDevice(const SysfsRoot& root, std::string_view bdf);

// NVIDIA display or 3D controllers (NVSwitches, class 0x0680, are bridges, not GPUs).
bool IsNvidiaGpu(const PciSummary& device);

}  // namespace commlens::topo
