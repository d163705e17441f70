#include "topo/nic_discovery.h"

#include <algorithm>
#include <cctype>

#include "topo/pci_discovery.h"

namespace commlens::topo {
namespace {

constexpr std::string_view kInfiniband = "/sys/class/infiniband";
constexpr std::string_view kNet = "/sys/class/net";

std::string Join(std::string_view a, std::string_view b) {
  std::string path(a);
  path.append("/").append(b);
  return path;
}

NicKind KindOf(const RdmaNic& nic) {
  if (nic.pci && (nic.pci->vendor == kVendorAmazon || nic.pci->driver == "efa")) return NicKind::kEfa;
  if (nic.ports.empty()) return NicKind::kOther;
  const std::string& layer = nic.ports.front().link_layer;
  if (layer == "InfiniBand") return NicKind::kInfiniBand;
  if (layer == "Ethernet") return NicKind::kRoce;
  return NicKind::kOther;
}

RdmaPort ReadPort(const SysfsRoot& root, const std::string& dir, int number) {
  RdmaPort port;
  port.port = number;
  port.state = StripStateCode(root.ReadLine(Join(dir, "state")).value_or(""));
  port.phys_state = StripStateCode(root.ReadLine(Join(dir, "phys_state")).value_or(""));
  port.rate = root.ReadLine(Join(dir, "rate")).value_or("");
  port.rate_gbps = ParseLeadingNumber(port.rate);
  port.link_layer = root.ReadLine(Join(dir, "link_layer")).value_or("");
  return port;
}

}  // namespace

std::string StripStateCode(std::string_view text) {
  size_t colon = text.find(": ");
  if (colon != std::string_view::npos && colon > 0 &&
      std::all_of(text.begin(), text.begin() + colon, [](char c) { return std::isdigit(static_cast<unsigned char>(c)); })) {
    text.remove_prefix(colon + 2);
  }
  return std::string(text);
}

bool NaturalLess(std::string_view a, std::string_view b) {
  size_t i = 0, j = 0;
  auto digit = [](char c) { return std::isdigit(static_cast<unsigned char>(c)) != 0; };
  while (i < a.size() && j < b.size()) {
    if (digit(a[i]) && digit(b[j])) {
      size_t ei = i, ej = j;
      while (ei < a.size() && digit(a[ei])) ++ei;
      while (ej < b.size() && digit(b[ej])) ++ej;
      // Compare the runs as numbers: strip leading zeros, then longer is larger.
      std::string_view ra = a.substr(i, ei - i), rb = b.substr(j, ej - j);
      while (ra.size() > 1 && ra.front() == '0') ra.remove_prefix(1);
      while (rb.size() > 1 && rb.front() == '0') rb.remove_prefix(1);
      if (ra.size() != rb.size()) return ra.size() < rb.size();
      if (ra != rb) return ra < rb;
      i = ei;
      j = ej;
    } else {
      if (a[i] != b[j]) return a[i] < b[j];
      ++i;
      ++j;
    }
  }
  return a.size() - i < b.size() - j;
}

std::vector<RdmaNic> ReadRdmaNics(const SysfsRoot& root, std::vector<std::string>* notes) {
  std::vector<RdmaNic> nics;
  if (!root.Exists(kInfiniband)) {
    notes->push_back("no RDMA devices: /sys/class/infiniband is absent (no RDMA driver loaded)");
    return nics;
  }
  for (const std::string& name : root.List(kInfiniband)) {
    const std::string dir = Join(kInfiniband, name);
    RdmaNic nic;
    nic.name = name;
    nic.node_type = StripStateCode(root.ReadLine(Join(dir, "node_type")).value_or(""));
    if (auto device = root.Resolve(Join(dir, "device"))) {
      std::string bdf = NearestPciAncestor(*device);
      if (!bdf.empty()) nic.pci = ReadPciDevice(root, bdf);
    }
    for (const std::string& port : root.List(Join(dir, "ports"))) {
      auto number = ParseInteger(port);
      if (number) nic.ports.push_back(ReadPort(root, Join(Join(dir, "ports"), port), static_cast<int>(*number)));
    }
    std::sort(nic.ports.begin(), nic.ports.end(), [](const RdmaPort& a, const RdmaPort& b) { return a.port < b.port; });
    nic.kind = KindOf(nic);
    nics.push_back(std::move(nic));
  }
  if (nics.empty()) notes->push_back("no RDMA devices in /sys/class/infiniband");
  std::sort(nics.begin(), nics.end(), [](const RdmaNic& a, const RdmaNic& b) { return NaturalLess(a.name, b.name); });
  return nics;
}

NetInterfaces ReadNetInterfaces(const SysfsRoot& root) {
  NetInterfaces out;
  for (const std::string& name : root.List(kNet)) {
    const std::string dir = Join(kNet, name);
    std::optional<std::string> device = root.Resolve(Join(dir, "device"));
    std::string bdf = device ? NearestPciAncestor(*device) : std::string();
    if (bdf.empty()) {
      out.virtual_names.push_back(name);
      continue;
    }
    NetInterface net;
    net.name = name;
    net.bdf = bdf;
    net.operstate = root.ReadLine(Join(dir, "operstate")).value_or("");
    net.speed_mbps = root.ReadInt(Join(dir, "speed")).value_or(-1);
    if (net.speed_mbps < 0) net.speed_mbps = -1;
    net.type = static_cast<int>(root.ReadInt(Join(dir, "type")).value_or(-1));
    out.physical.push_back(std::move(net));
  }
  auto natural = [](const NetInterface& a, const NetInterface& b) { return NaturalLess(a.name, b.name); };
  std::sort(out.physical.begin(), out.physical.end(), natural);
  return out;
}

}  // namespace commlens::topo
