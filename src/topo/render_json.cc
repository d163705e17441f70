// The JSON document of `commlens topo --json`. Unknown values are null, never a made-up
// number; the matrix cells use the text labels ("NV18", "PIX").
#include <fmt/format.h>

#include <algorithm>

#include "topo/render.h"

namespace commlens::topo {
namespace {

using json = nlohmann::ordered_json;

json OrNull(int value) { return value >= 0 ? json(value) : json(nullptr); }
json OrNull(int64_t value) { return value >= 0 ? json(value) : json(nullptr); }
json OrNull(const std::string& value) { return value.empty() ? json(nullptr) : json(value); }
template <typename T>
json OrNull(const std::optional<T>& value) {
  return value ? json(*value) : json(nullptr);
}

json PciJson(const PciDevice& p) {
  return {{"bdf", p.bdf},
          {"sysfs_path", p.sysfs_path},
          {"host_bridge", OrNull(p.host_bridge)},
          {"bridges", p.bridges},
          {"class", fmt::format("0x{:06x}", p.class_code)},
          {"vendor", fmt::format("0x{:04x}", p.vendor)},
          {"device", fmt::format("0x{:04x}", p.device)},
          {"driver", OrNull(p.driver)},
          {"numa_node", OrNull(p.numa_node)},
          {"cpu_affinity", OrNull(p.cpu_affinity)},
          {"pcie",
           {{"current_speed", OrNull(p.link.current_speed)},
            {"max_speed", OrNull(p.link.max_speed)},
            {"current_width", OrNull(p.link.current_width)},
            {"max_width", OrNull(p.link.max_width)}}}};
}

json GpuJson(const Topology& t, const Gpu& g, size_t index) {
  json links = json::array();
  for (const NvLink& l : g.nvlinks) {
    links.push_back({{"link", l.link},
                     {"active", l.active},
                     {"remote", NvLinkRemoteName(l.remote)},
                     {"remote_bdf", OrNull(l.remote_bdf)},
                     {"version", OrNull(l.version)},
                     {"speed_mbps", OrNull(l.speed_mbps)}});
  }
  return {{"label", "GPU" + std::to_string(index)},
          {"name", g.name},
          {"uuid", OrNull(g.uuid)},
          {"memory_bytes", OrNull(g.memory_bytes)},
          {"pci", PciJson(g.pci)},
          {"numa_affinity", NumaAffinity(t, g.pci)},
          {"nvlinks_known", g.nvlinks_known},
          {"nvlinks", links}};
}

json NicJson(const RdmaNic& nic, const std::string& label) {
  json ports = json::array();
  for (const RdmaPort& p : nic.ports) {
    ports.push_back({{"port", p.port},
                     {"state", OrNull(p.state)},
                     {"phys_state", OrNull(p.phys_state)},
                     {"rate", OrNull(p.rate)},
                     {"rate_gbps", p.rate_gbps >= 0 ? json(p.rate_gbps) : json(nullptr)},
                     {"link_layer", OrNull(p.link_layer)}});
  }
  return {{"label", OrNull(label)},
          {"name", nic.name},
          {"kind", NicKindName(nic.kind)},
          {"node_type", OrNull(nic.node_type)},
          {"pci", nic.pci ? PciJson(*nic.pci) : json(nullptr)},
          {"ports", ports},
          {"netdevs", nic.netdevs}};
}

json P2PJson(const Topology& t) {
  json read = json::array(), write = json::array(), access = json::array(), atomics = json::array();
  for (size_t i = 0; i < t.gpus.size(); ++i) {
    json r = json::array(), w = json::array(), a = json::array(), x = json::array();
    for (size_t j = 0; j < t.gpus.size(); ++j) {
      const P2PFacts& f = t.p2p.size() > i ? t.p2p[i][j] : P2PFacts{};
      r.push_back(i == j ? "X" : P2PStatusCode(f.read));
      w.push_back(i == j ? "X" : P2PStatusCode(f.write));
      a.push_back(i == j ? json(nullptr) : OrNull(f.cuda_access));
      x.push_back(i == j ? json(nullptr) : OrNull(f.cuda_atomics));
    }
    read.push_back(r);
    write.push_back(w);
    access.push_back(a);
    atomics.push_back(x);
  }
  return {{"source", OrNull(t.p2p_source)}, {"read", read}, {"write", write}, {"cuda_access", access}, {"cuda_atomics", atomics}};
}

}  // namespace

json RenderJson(const Topology& t, const LinkMatrix& m, const std::vector<Finding>& findings) {
  json doc;
  doc["schema_version"] = kTopoSchemaVersion;
  doc["tool"] = "commlens topo";
  doc["cpu_topology_source"] = t.cpu_topology_source;
  doc["gpu_facts"] = {{"nvml", t.nvml_available}, {"cuda", t.cuda_available}, {"driver_version", OrNull(t.driver_version)}};
  json nodes = json::array();
  for (const NumaNode& n : t.numa_nodes) nodes.push_back({{"id", n.id}, {"cpus", n.cpus}, {"memory_bytes", OrNull(n.memory_bytes)}});
  doc["numa_nodes"] = nodes;
  doc["gpus"] = json::array();
  for (size_t i = 0; i < t.gpus.size(); ++i) doc["gpus"].push_back(GpuJson(t, t.gpus[i], i));
  doc["nics"] = json::array();
  for (size_t i = 0; i < t.nics.size(); ++i) {
    auto column = std::find(m.nic_of_column.begin(), m.nic_of_column.end(), i);
    std::string label = column == m.nic_of_column.end() ? "" : "NIC" + std::to_string(column - m.nic_of_column.begin());
    doc["nics"].push_back(NicJson(t.nics[i], label));
  }
  json net = json::array();
  for (const NetInterface& n : t.net_interfaces) {
    net.push_back({{"name", n.name}, {"bdf", n.bdf}, {"operstate", OrNull(n.operstate)}, {"speed_mbps", OrNull(n.speed_mbps)},
                   {"type", OrNull(n.type)}});
  }
  doc["net_interfaces"] = net;
  doc["virtual_interfaces"] = t.virtual_interfaces;
  json cells = json::array();
  for (size_t r = 0; r < m.labels.size(); ++r) {
    json row = json::array();
    for (size_t c = 0; c < m.labels.size(); ++c) row.push_back(LinkLabel(m.at(r, c)));
    cells.push_back(row);
  }
  doc["matrix"] = {{"labels", m.labels}, {"cells", cells}};
  doc["p2p"] = P2PJson(t);
  doc["notes"] = t.notes;
  json list = json::array();
  for (const Finding& f : findings) {
    list.push_back({{"severity", SeverityName(f.severity)}, {"code", f.code}, {"message", f.message}, {"devices", f.devices}});
  }
  doc["findings"] = list;
  return doc;
}

}  // namespace commlens::topo
