// The text report. Matrices are space-aligned (nvidia-smi uses tabs) so that they read
// the same in any terminal and in golden files.
#include <fmt/format.h>

#include <algorithm>

#include "topo/cpulist.h"
#include "topo/render.h"

namespace commlens::topo {
namespace {

using Table = std::vector<std::vector<std::string>>;

// Left-aligned columns, two blanks apart, no trailing blanks.
std::string FormatTable(const Table& rows) {
  std::vector<size_t> width;
  for (const auto& row : rows) {
    if (width.size() < row.size()) width.resize(row.size());
    for (size_t c = 0; c < row.size(); ++c) width[c] = std::max(width[c], row[c].size());
  }
  std::string out;
  for (const auto& row : rows) {
    std::string line;
    for (size_t c = 0; c < row.size(); ++c) {
      line += row[c];
      if (c + 1 < row.size()) line.append(width[c] + 2 - row[c].size(), ' ');
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out += line + "\n";
  }
  return out;
}

std::string NumaText(int node) { return node >= 0 ? std::to_string(node) : "N/A"; }



// "32.0 GT/s PCIe" -> "32.0 GT/s"; "?" when unknown.
std::string LinkSpeed(const std::string& sysfs_speed) {
  if (sysfs_speed.empty()) return "?";
  size_t suffix = sysfs_speed.rfind(" PCIe");
  return suffix == std::string::npos ? sysfs_speed : sysfs_speed.substr(0, suffix);
}

constexpr const char* kLegend =
    "Legend:\n"
    "  X    = self\n"
    "  NV#  = # bonded NVLinks (directly or through NVSwitches)\n"
    "  PIX  = at most one PCIe bridge: the same PCIe switch or root port\n"
    "  PXB  = several PCIe bridges, without the PCIe host bridge\n"
    "  PHB  = through a PCIe host bridge (one root complex)\n"
    "  NODE = between PCIe host bridges of one NUMA node\n"
    "  SYS  = across the interconnect between NUMA nodes (QPI/UPI, xGMI)\n";

std::string GpuLine(const Topology& t, size_t i) {
  const Gpu& g = t.gpus[i];
  std::string memory = g.memory_bytes ? fmt::format("{} MiB", *g.memory_bytes >> 20) : "memory unknown";
  const PcieLink& l = g.pci.link;
  return fmt::format("GPU{}  {}  {}  {}  NUMA {}  CPUs {}  PCIe {} x{} (max {} x{})", i, g.pci.bdf, g.name, memory,
                     NumaText(g.pci.numa_node), g.pci.cpu_affinity.empty() ? "unknown" : g.pci.cpu_affinity,
                     LinkSpeed(l.current_speed), l.current_width, LinkSpeed(l.max_speed), l.max_width);
}

std::string NvLinkLine(const Topology& t, size_t i) {
  const Gpu& g = t.gpus[i];
  if (!g.nvlinks_known) return fmt::format("GPU{}  unknown (no NVML)", i);
  int active = 0, version = -1;
  int64_t slowest = -1, fastest = -1;
  std::vector<std::string> peers;
  int to_switch = 0;
  for (const NvLink& l : g.nvlinks) {
    if (!l.active) continue;
    ++active;
    version = std::max(version, l.version);
    if (l.speed_mbps > 0) {
      slowest = slowest < 0 ? l.speed_mbps : std::min(slowest, l.speed_mbps);
      fastest = std::max(fastest, l.speed_mbps);
    }
    if (l.remote == NvLinkRemote::kSwitch) ++to_switch;
  }
  for (size_t j = 0; j < t.gpus.size(); ++j) {
    int direct = 0;
    for (const NvLink& l : g.nvlinks) direct += l.active && l.remote == NvLinkRemote::kGpu && l.remote_bdf == t.gpus[j].pci.bdf;
    if (direct > 0) peers.push_back(fmt::format("GPU{} x{}", j, direct));
  }
  std::string speed = slowest < 0 ? "speed unknown"
                      : slowest == fastest ? fmt::format("{:.3f} GB/s per link", slowest / 1000.0)
                                           : fmt::format("{:.3f}-{:.3f} GB/s per link", slowest / 1000.0, fastest / 1000.0);
  std::string where = to_switch > 0 ? fmt::format("{} to NVSwitch", to_switch) : "";
  if (!peers.empty()) where += (where.empty() ? "" : ", ") + fmt::format("{}", fmt::join(peers, ", "));
  return fmt::format("GPU{}  {} of {} links active{}, {}{}", i, active, g.nvlinks.size(),
                     version > 0 ? fmt::format(", NVLink {}", version) : "", speed, where.empty() ? "" : ", " + where);
}

std::string NicLine(const Topology& t, const LinkMatrix& m, size_t column) {
  const RdmaNic& nic = t.nics[m.nic_of_column[column]];
  std::vector<std::string> ports;
  for (const RdmaPort& p : nic.ports) {
    ports.push_back(fmt::format("port {} {} {} {}", p.port, p.state, p.phys_state, p.rate));
  }
  std::string nearest;
  for (size_t g = 0; g < m.gpu_count; ++g) {
    const Link& link = m.at(m.gpu_count + column, g);
    if (link.type == LinkType::kPix || link.type == LinkType::kPxb) {
      nearest += fmt::format("{}{} ({})", nearest.empty() ? "" : ", ", m.labels[g], LinkLabel(link));
    }
  }
  return fmt::format("NIC{}  {}  {}  {}  {}  NUMA {}  CPUs {}  {}{}{}", column, nic.name, NicKindName(nic.kind),
                     nic.pci->bdf, nic.pci->driver.empty() ? "no driver" : nic.pci->driver, NumaText(nic.pci->numa_node),
                     nic.pci->cpu_affinity.empty() ? "unknown" : nic.pci->cpu_affinity, fmt::join(ports, "; "),
                     nic.netdevs.empty() ? "" : fmt::format("  netdev {}", fmt::join(nic.netdevs, ",")),
                     nearest.empty() ? "" : "  GPUs on its switch: " + nearest);
}

std::string NetLine(const NetInterface& n) {
  std::string kind = n.type == 1 ? "Ethernet" : n.type == 32 ? "IPoIB" : fmt::format("type {}", n.type);
  return fmt::format("{}  {}  {}  {}  {}", n.name, n.bdf, n.operstate.empty() ? "state unknown" : n.operstate,
                     n.speed_mbps >= 0 ? fmt::format("{} Mb/s", n.speed_mbps) : "speed unknown", kind);
}

void Section(std::string* out, std::string_view title, const std::vector<std::string>& lines) {
  *out += fmt::format("\n{}\n", title);
  for (const std::string& line : lines) *out += "  " + line + "\n";
}

}  // namespace

// NUMA affinity as nvidia-smi prints it: the device's NUMA node, or, where the firmware
// gives none (numa_node -1, common in VMs), the NUMA nodes whose CPUs the device's CPU
// affinity covers.
std::string NumaAffinity(const Topology& t, const PciDevice& pci) {
  if (pci.numa_node >= 0) return std::to_string(pci.numa_node);
  auto mine = ParseCpuList(pci.cpu_affinity);
  if (!mine || mine->empty()) return "N/A";
  std::vector<int> nodes;
  for (const NumaNode& n : t.numa_nodes) {
    auto cpus = ParseCpuList(n.cpus);
    if (!cpus) continue;
    for (int c : *cpus)
      if (std::find(mine->begin(), mine->end(), c) != mine->end()) {
        nodes.push_back(n.id);
        break;
      }
  }
  return nodes.empty() ? "N/A" : FormatCpuList(nodes);
}

std::string RenderMatrixText(const Topology& t, const LinkMatrix& m) {
  Table rows;
  std::vector<std::string> header = {""};
  header.insert(header.end(), m.labels.begin(), m.labels.end());
  if (m.gpu_count > 0) header.insert(header.end(), {"CPU Affinity", "NUMA Affinity", "GPU NUMA ID"});
  rows.push_back(header);
  for (size_t r = 0; r < m.labels.size(); ++r) {
    std::vector<std::string> row = {m.labels[r]};
    for (size_t c = 0; c < m.labels.size(); ++c) row.push_back(LinkLabel(m.at(r, c)));
    if (r < m.gpu_count) {
      const PciDevice& pci = t.gpus[r].pci;
      row.insert(row.end(), {pci.cpu_affinity.empty() ? "N/A" : pci.cpu_affinity,
                             NumaAffinity(t, pci), "N/A"});
    }
    rows.push_back(row);
  }
  std::string out = FormatTable(rows) + "\n" + kLegend;
  if (!m.nic_of_column.empty()) {
    out += "\nNIC Legend:\n";
    for (size_t k = 0; k < m.nic_of_column.size(); ++k) out += fmt::format("  NIC{}: {}\n", k, t.nics[m.nic_of_column[k]].name);
  }
  return out;
}

std::string RenderP2PText(const Topology& t) {
  if (t.gpus.empty()) return "";
  if (t.p2p_source.empty()) return "P2P status unknown (neither NVML nor CUDA answered)\n";
  auto matrix = [&](auto cell) {
    Table rows;
    std::vector<std::string> header = {""};
    for (size_t j = 0; j < t.gpus.size(); ++j) header.push_back("GPU" + std::to_string(j));
    rows.push_back(header);
    for (size_t i = 0; i < t.gpus.size(); ++i) {
      std::vector<std::string> row = {"GPU" + std::to_string(i)};
      for (size_t j = 0; j < t.gpus.size(); ++j) row.push_back(i == j ? "X" : cell(t.p2p[i][j]));
      rows.push_back(row);
    }
    return FormatTable(rows);
  };
  std::string out = fmt::format("P2P read (from {}, as nvidia-smi topo -p2p r)\n", t.p2p_source);
  out += matrix([](const P2PFacts& f) { return std::string(P2PStatusCode(f.read)); });
  out += fmt::format("\nP2P write (from {}, as nvidia-smi topo -p2p w)\n", t.p2p_source);
  out += matrix([](const P2PFacts& f) { return std::string(P2PStatusCode(f.write)); });
  if (t.cuda_available) {
    out += "\nCUDA peer access (cuDeviceGetP2PAttribute)\n";
    out += matrix([](const P2PFacts& f) { return f.cuda_access ? (*f.cuda_access ? "yes" : "no") : "?"; });
  }
  out += "\n  OK = supported, CNS = chipset not supported, GNS = GPU not supported,\n"
         "  TNS = topology not supported, DR = disabled by regkey, NS = not supported, U = unknown\n";
  return out;
}

std::string RenderText(const Topology& t, const LinkMatrix& m, const std::vector<Finding>& findings, bool show_findings) {
  std::string out = fmt::format("commlens topo: {} GPUs, {} RDMA NICs, {} NUMA nodes; CPU topology from {}{}\n",
                                t.gpus.size(), t.nics.size(), t.numa_nodes.size(), t.cpu_topology_source,
                                t.driver_version.empty() ? "" : "; driver " + t.driver_version);
  std::vector<std::string> lines;
  for (size_t i = 0; i < t.gpus.size(); ++i) lines.push_back(GpuLine(t, i));
  Section(&out, "GPUs", lines.empty() ? std::vector<std::string>{"none"} : lines);
  if (!m.labels.empty()) out.append("\nTopology matrix (as nvidia-smi topo -m)\n").append(RenderMatrixText(t, m));
  if (!t.gpus.empty()) out.append("\n").append(RenderP2PText(t));
  lines.clear();
  for (size_t i = 0; i < t.gpus.size(); ++i) lines.push_back(NvLinkLine(t, i));
  if (!lines.empty()) Section(&out, "NVLink", lines);
  lines.clear();
  for (size_t k = 0; k < m.nic_of_column.size(); ++k) lines.push_back(NicLine(t, m, k));
  for (const RdmaNic& nic : t.nics) {
    if (!nic.pci) lines.push_back(fmt::format("{}  {}  virtual (no PCI device)", nic.name, NicKindName(nic.kind)));
  }
  Section(&out, "RDMA NICs", lines.empty() ? std::vector<std::string>{"none"} : lines);
  lines.clear();
  for (const NetInterface& n : t.net_interfaces) lines.push_back(NetLine(n));
  if (!t.virtual_interfaces.empty()) lines.push_back(fmt::format("virtual, not shown: {}", fmt::join(t.virtual_interfaces, ", ")));
  Section(&out, "Network interfaces", lines.empty() ? std::vector<std::string>{"none"} : lines);
  lines.clear();
  for (const NumaNode& n : t.numa_nodes) {
    lines.push_back(fmt::format("node{}  CPUs {}  memory {}", n.id, n.cpus.empty() ? "none" : n.cpus,
                                n.memory_bytes ? fmt::format("{} MiB", *n.memory_bytes >> 20) : "unknown"));
  }
  Section(&out, "NUMA nodes", lines.empty() ? std::vector<std::string>{"unknown"} : lines);
  if (!t.notes.empty()) Section(&out, "Not visible", t.notes);
  lines.clear();
  for (const Finding& f : findings) lines.push_back(fmt::format("{}  {}: {}", SeverityName(f.severity), f.code, f.message));
  if (show_findings) {
    Section(&out, "Findings (--check)", lines.empty() ? std::vector<std::string>{"none"} : lines);
  } else if (ExitCodeFor(findings) != 0) {
    out += fmt::format("\n{} findings; run with --check to see them\n", findings.size());
  }
  return out;
}

}  // namespace commlens::topo
