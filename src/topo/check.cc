// The checks, one function each. Thresholds are relative to the machine itself (a port
// slower than the other ports of its model, fewer NVLinks than the other GPUs of the same
// model) because sysfs does not say what a port is rated for.
#include "topo/check.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "topo/sysfs_root.h"

namespace commlens::topo {
namespace {

using Findings = std::vector<Finding>;

void Add(Findings* out, Severity severity, std::string code, std::string message, std::vector<std::string> devices) {
  out->push_back({severity, std::move(code), std::move(message), std::move(devices)});
}

std::string GpuName(const LinkMatrix& matrix, const Topology& t, size_t gpu) {
  return fmt::format("{} ({})", matrix.labels[gpu], t.gpus[gpu].pci.bdf);
}

// Ports compared for speed: same kind, link layer and adapter model (PCI device id), so a
// 25 Gb/s management RoCE NIC is not held against 400 Gb/s compute NICs.
std::string PortClass(const RdmaNic& nic, const RdmaPort& port) {
  return fmt::format("{}/{}/{:04x}", NicKindName(nic.kind), port.link_layer, nic.pci ? nic.pci->device : 0);
}

void CheckPorts(const Topology& t, Findings* out) {
  // The fastest active port of each class is the rate the others should have.
  std::map<std::string, double> best;
  for (const RdmaNic& nic : t.nics) {
    for (const RdmaPort& port : nic.ports) {
      double& b = best[PortClass(nic, port)];
      if (port.state == "ACTIVE") b = std::max(b, port.rate_gbps);
    }
  }
  for (const RdmaNic& nic : t.nics) {
    for (const RdmaPort& port : nic.ports) {
      std::string where = fmt::format("{} port {}", nic.name, port.port);
      if (port.state != "ACTIVE" || (!port.phys_state.empty() && port.phys_state != "LinkUp")) {
        Add(out, Severity::kWarning, "port_down",
            fmt::format("{} is {} (physical state {})", where, port.state.empty() ? "in an unknown state" : port.state,
                        port.phys_state.empty() ? "unknown" : port.phys_state),
            {nic.name});
        continue;
      }
      double rated = best[PortClass(nic, port)];
      if (port.rate_gbps > 0 && port.rate_gbps < rated) {
        Add(out, Severity::kWarning, "port_rate_degraded",
            fmt::format("{} runs at {} while other {} ports of the same model run at {:g} Gb/sec", where, port.rate,
                        NicKindName(nic.kind), rated),
            {nic.name});
      }
    }
  }
}

void CheckPcieLink(const PciDevice& pci, const std::string& who, bool is_gpu, Findings* out) {
  const PcieLink& l = pci.link;
  if (l.current_width > 0 && l.max_width > 0 && l.current_width < l.max_width) {
    Add(out, Severity::kWarning, "pcie_width_degraded",
        fmt::format("{} PCIe link runs at x{} of x{}", who, l.current_width, l.max_width), {pci.bdf});
  }
  double current = ParseLeadingNumber(l.current_speed), max = ParseLeadingNumber(l.max_speed);
  if (current > 0 && max > 0 && current < max) {
    // GPUs lower their PCIe speed when idle to save power; NICs do not.
    Add(out, is_gpu ? Severity::kInfo : Severity::kWarning, "pcie_speed_degraded",
        fmt::format("{} PCIe link runs at {} of {}{}", who, l.current_speed, l.max_speed,
                    is_gpu ? " (normal for an idle GPU)" : ""),
        {pci.bdf});
  }
}

void CheckGpuNics(const Topology& t, const LinkMatrix& m, Findings* out) {
  if (m.gpu_count == 0) return;
  if (m.nic_of_column.empty()) {
    Add(out, Severity::kInfo, "no_rdma_nic", "no RDMA NIC found: traffic between nodes would go over TCP sockets", {});
    return;
  }
  for (size_t g = 0; g < m.gpu_count; ++g) {
    std::vector<size_t> nearest = NearestNics(m, g);
    const RdmaNic& nic = t.nics[m.nic_of_column[nearest.front()]];
    LinkType type = m.at(g, m.gpu_count + nearest.front()).type;
    if (type != LinkType::kPix && type != LinkType::kPxb) {
      Add(out, Severity::kWarning, "gpu_without_nic",
          fmt::format("{} has no RDMA NIC on its PCIe switch; the nearest is {} ({})", GpuName(m, t, g), nic.name,
                      LinkLabel(m.at(g, m.gpu_count + nearest.front()))),
          {m.labels[g], nic.name});
    }
    int gpu_node = t.gpus[g].pci.numa_node;
    int nic_node = nic.pci->numa_node;
    if (gpu_node >= 0 && nic_node >= 0 && gpu_node != nic_node) {
      Add(out, Severity::kWarning, "nic_numa_mismatch",
          fmt::format("{} is on NUMA node {} but its nearest NIC {} is on NUMA node {}", GpuName(m, t, g), gpu_node,
                      nic.name, nic_node),
          {m.labels[g], nic.name});
    }
  }
}

std::string P2PText(const P2PFacts& f) {
  return fmt::format("read {}, write {}{}", P2PStatusCode(f.read), P2PStatusCode(f.write),
                     f.cuda_access ? (*f.cuda_access ? ", CUDA access yes" : ", CUDA access no") : "");
}

void CheckP2P(const Topology& t, const LinkMatrix& m, Findings* out) {
  for (size_t a = 0; a < m.gpu_count; ++a) {
    for (size_t b = 0; b < m.gpu_count; ++b) {
      if (a == b || m.at(a, b).type != LinkType::kNvLink || t.p2p.size() <= a) continue;
      const P2PFacts& f = t.p2p[a][b];
      auto bad = [](P2PStatus s) { return s != P2PStatus::kOk && s != P2PStatus::kUnknown; };
      if (bad(f.read) || bad(f.write) || (f.cuda_access && !*f.cuda_access)) {
        Add(out, Severity::kError, "p2p_disabled_nvlink",
            fmt::format("P2P from {} to {} is off although they share {}: {}", GpuName(m, t, a), GpuName(m, t, b),
                        LinkLabel(m.at(a, b)), P2PText(f)),
            {m.labels[a], m.labels[b]});
      }
    }
  }
}

void CheckNvLinks(const Topology& t, const LinkMatrix& m, Findings* out) {
  std::map<std::string, int> most;  // by GPU model
  auto active = [](const Gpu& g) {
    return static_cast<int>(std::count_if(g.nvlinks.begin(), g.nvlinks.end(), [](const NvLink& l) { return l.active; }));
  };
  for (const Gpu& g : t.gpus) most[g.name] = std::max(most[g.name], active(g));
  for (size_t g = 0; g < t.gpus.size(); ++g) {
    const Gpu& gpu = t.gpus[g];
    if (gpu.nvlinks_known && active(gpu) < most[gpu.name]) {
      Add(out, Severity::kWarning, "nvlink_down",
          fmt::format("{} has {} active NVLinks; other {} GPUs have {}", GpuName(m, t, g), active(gpu), gpu.name,
                      most[gpu.name]),
          {m.labels[g]});
    }
  }
}

}  // namespace

std::vector<Finding> RunChecks(const Topology& topology, const LinkMatrix& matrix) {
  Findings out;
  CheckGpuNics(topology, matrix, &out);
  CheckPorts(topology, &out);
  CheckP2P(topology, matrix, &out);
  CheckNvLinks(topology, matrix, &out);
  for (size_t g = 0; g < topology.gpus.size(); ++g) {
    CheckPcieLink(topology.gpus[g].pci, GpuName(matrix, topology, g), true, &out);
  }
  for (const RdmaNic& nic : topology.nics) {
    if (nic.pci) CheckPcieLink(*nic.pci, nic.name, false, &out);
  }
  std::stable_sort(out.begin(), out.end(), [](const Finding& a, const Finding& b) { return a.severity > b.severity; });
  return out;
}

std::string_view SeverityName(Severity severity) {
  switch (severity) {
    case Severity::kInfo: return "info";
    case Severity::kWarning: return "warning";
    case Severity::kError: return "error";
  }
  return "info";
}

int ExitCodeFor(const std::vector<Finding>& findings) {
  for (const Finding& f : findings) {
    if (f.severity >= Severity::kWarning) return 1;
  }
  return 0;
}

}  // namespace commlens::topo
