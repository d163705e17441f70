#include "topo/pci_discovery.h"

#include <cctype>
#include <cstdio>

#include "topo/cpulist.h"

namespace commlens::topo {
namespace {

constexpr std::string_view kPciDevices = "/sys/bus/pci/devices/";
constexpr std::string_view kDevicesPrefix = "/sys/devices/";

std::vector<std::string_view> SplitPath(std::string_view path) {
  std::vector<std::string_view> parts;
  while (!path.empty()) {
    size_t slash = path.find('/');
    std::string_view part = path.substr(0, slash);
    if (!part.empty()) parts.push_back(part);
    if (slash == std::string_view::npos) break;
    path.remove_prefix(slash + 1);
  }
  return parts;
}

std::string Attr(std::string_view bdf, std::string_view name) {
  std::string path(kPciDevices);
  path.append(bdf).append("/").append(name);
  return path;
}

}  // namespace

bool IsBdf(std::string_view t) {
  if (t.size() != 12 || t[4] != ':' || t[7] != ':' || t[10] != '.') return false;
  for (size_t i : {0, 1, 2, 3, 5, 6, 8, 9, 11}) {
    if (!std::isxdigit(static_cast<unsigned char>(t[i]))) return false;
  }
  return true;
}

std::optional<std::string> NormalizeBdf(std::string_view text) {
  // domain ':' bus ':' device '.' function, each field plain hex digits.
  unsigned fields[4] = {};
  const char separators[4] = {':', ':', '.', '\0'};
  size_t pos = 0;
  for (int f = 0; f < 4; ++f) {
    size_t start = pos;
    while (pos < text.size() && std::isxdigit(static_cast<unsigned char>(text[pos])) && pos - start < 8) {
      char c = static_cast<char>(std::tolower(static_cast<unsigned char>(text[pos])));
      fields[f] = fields[f] * 16 + static_cast<unsigned>(c <= '9' ? c - '0' : c - 'a' + 10);
      ++pos;
    }
    if (pos == start) return std::nullopt;
    if (f < 3) {
      if (pos >= text.size() || text[pos] != separators[f]) return std::nullopt;
      ++pos;
    }
  }
  if (pos != text.size() || fields[0] > 0xffff || fields[1] > 0xff || fields[2] > 0x1f || fields[3] > 7) return std::nullopt;
  char out[16];
  std::snprintf(out, sizeof(out), "%04x:%02x:%02x.%x", fields[0], fields[1], fields[2], fields[3]);
  return std::string(out);
}

bool ParsePciPath(std::string_view resolved_path, PciDevice* device) {
  if (resolved_path.substr(0, kDevicesPrefix.size()) != kDevicesPrefix) return false;
  std::vector<std::string_view> parts = SplitPath(resolved_path.substr(kDevicesPrefix.size()));
  if (parts.empty() || parts[0].substr(0, 3) != "pci") return false;
  device->host_bridge = std::string(parts[0].substr(3));
  device->bridges.clear();
  // Components that are not PCI addresses (an Intel VMD domain "pci10000:e0") are
  // transparent: the device keeps the outermost host bridge.
  for (size_t i = 1; i + 1 < parts.size(); ++i) {
    if (IsBdf(parts[i])) device->bridges.emplace_back(parts[i]);
  }
  return true;
}

std::string NearestPciAncestor(std::string_view resolved_path) {
  std::vector<std::string_view> parts = SplitPath(resolved_path);
  for (auto it = parts.rbegin(); it != parts.rend(); ++it) {
    if (IsBdf(*it)) return std::string(*it);
  }
  return {};
}

std::vector<PciSummary> ListPciDevices(const SysfsRoot& root) {
  std::vector<PciSummary> devices;
  for (const std::string& bdf : root.List(kPciDevices)) {
    if (!IsBdf(bdf)) continue;
    PciSummary summary{bdf};
    summary.class_code = static_cast<uint32_t>(root.ReadInt(Attr(bdf, "class")).value_or(0));
    summary.vendor = static_cast<uint16_t>(root.ReadInt(Attr(bdf, "vendor")).value_or(0));
    devices.push_back(summary);
  }
  return devices;
}

std::optional<PciDevice> ReadPciDevice(const SysfsRoot& root, std::string_view bdf) {
  std::optional<std::string> path = root.Resolve(std::string(kPciDevices).append(bdf));
  if (!path) return std::nullopt;
  PciDevice device;
  device.bdf = std::string(bdf);
  device.sysfs_path = *path;
  ParsePciPath(*path, &device);
  device.class_code = static_cast<uint32_t>(root.ReadInt(Attr(bdf, "class")).value_or(0));
  device.vendor = static_cast<uint16_t>(root.ReadInt(Attr(bdf, "vendor")).value_or(0));
  device.device = static_cast<uint16_t>(root.ReadInt(Attr(bdf, "device")).value_or(0));
  device.numa_node = static_cast<int>(root.ReadInt(Attr(bdf, "numa_node")).value_or(-1));
  if (auto cpus = root.ReadLine(Attr(bdf, "local_cpulist"))) device.cpu_affinity = CanonicalCpuList(*cpus);
  if (auto driver = root.Resolve(Attr(bdf, "driver"))) {
    device.driver = driver->substr(driver->rfind('/') + 1);
  }
  device.link.current_speed = root.ReadLine(Attr(bdf, "current_link_speed")).value_or("");
  device.link.max_speed = root.ReadLine(Attr(bdf, "max_link_speed")).value_or("");
  device.link.current_width = static_cast<int>(root.ReadInt(Attr(bdf, "current_link_width")).value_or(-1));
  device.link.max_width = static_cast<int>(root.ReadInt(Attr(bdf, "max_link_width")).value_or(-1));
  return device;
}

bool IsNvidiaGpu(const PciSummary& device) {
  uint32_t base_class = device.class_code >> 16;
  return device.vendor == kVendorNvidia && base_class == 0x03;
}

}  // namespace commlens::topo
