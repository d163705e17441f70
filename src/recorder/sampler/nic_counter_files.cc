#include "recorder/sampler/nic_counter_files.h"

#include <algorithm>
#include <array>

#include "common/strings.h"
#include "topo/nic_discovery.h"
#include "topo/sysfs_root.h"

namespace commlens::recorder::sampler {

namespace nf = native_format;
using nf::DeviceKind;

namespace {

template <size_t N>
bool OneOf(std::string_view s, const std::array<std::string_view, N>& names) {
  return std::find(names.begin(), names.end(), s) != names.end();
}

// PMA PortCounters widths (IBTA; Linux drivers/infiniband/core/sysfs.c). All of them
// saturate. Data and packet counters are 32 bits here unless the port has the extended
// (64-bit) set; port_xmit_wait is always the 32-bit one.
struct PmaWidth {
  std::string_view name;
  uint8_t bits;
};
constexpr std::array<PmaWidth, 13> kPmaErrorWidths{{
    {"symbol_error", 16},
    {"link_error_recovery", 8},
    {"link_downed", 8},
    {"port_rcv_errors", 16},
    {"port_rcv_remote_physical_errors", 16},
    {"port_rcv_switch_relay_errors", 16},
    {"port_xmit_discards", 16},
    {"port_xmit_constraint_errors", 8},
    {"port_rcv_constraint_errors", 8},
    {"local_link_integrity_errors", 4},
    {"excessive_buffer_overrun_errors", 4},
    {"VL15_dropped", 16},
    {"port_xmit_wait", 32},
}};
constexpr std::array<std::string_view, 4> kPmaData{"port_xmit_data", "port_rcv_data", "port_xmit_packets",
                                                   "port_rcv_packets"};

// mlx5 hw_counters: the queue counters are 32 bits in the device and wrap; the
// congestion counters (QUERY_CONG_STATISTICS) and the extended PPCNT ones are 64 bits.
constexpr std::array<std::string_view, 5> kMlx5Wide{"rp_cnp_ignored", "rp_cnp_handled", "np_ecn_marked_roce_packets",
                                                    "np_cnp_sent", "rx_icrc_encapsulated"};
// mlx5 counters that measure traffic or congestion, read every tick.
constexpr std::array<std::string_view, 10> kMlx5Traffic{
    "rx_write_requests", "rx_read_requests", "rx_atomic_requests", "out_of_buffer", "out_of_sequence",
    "roce_adp_retrans", "rp_cnp_handled", "rp_cnp_ignored", "np_ecn_marked_roce_packets", "np_cnp_sent"};

std::string Join(std::string_view a, std::string_view b) {
  std::string path(a);
  path.append("/").append(b);
  return path;
}

std::string HostPath(const topo::SysfsRoot& root, const std::string& inside) {
  return (root.root() / inside.substr(1)).string();
}

bool Wanted(const NicDiscoveryOptions& o, std::string_view device, std::string_view port_name) {
  if (o.only.empty()) return true;
  return std::any_of(o.only.begin(), o.only.end(), [&](const std::string& n) { return n == device || n == port_name; });
}

// A gauge the sampler reads at the events rate (link rates); left out when it cannot be
// read now (lo has no speed, a down port no rate).
void AddRate(const topo::SysfsRoot& root, const std::string& file, CounterText text, NicSpec* nic) {
  CounterFile probe(HostPath(root, file), text);
  uint64_t v = 0;
  int error = 0;
  if (!probe.Read(&v, &error)) return;
  CounterSpec c;
  c.def.name = std::string(KindPrefix(nic->kind)) + ".link_rate";
  c.def.unit = "bits/s";
  c.def.device = nic->name;
  c.def.source = file;
  c.def.owner = nf::CounterOwnerCode::kNic;
  c.def.kind = nic->kind;
  c.path = HostPath(root, file);
  c.text = text;
  c.group = CounterGroup::kEvents;
  nic->counters.push_back(std::move(c));
}

void AddCounter(const topo::SysfsRoot& root, const std::string& file, std::string series, const CounterFacts& f,
                NicSpec* nic) {
  CounterSpec c;
  c.def.name = std::move(series);
  c.def.unit = f.unit;
  c.def.device = nic->name;
  c.def.source = file;
  c.def.owner = nf::CounterOwnerCode::kNic;
  c.def.kind = nic->kind;
  c.def.width_bits = f.width_bits;
  c.def.cumulative = true;
  c.def.saturates = f.saturates;
  c.path = HostPath(root, file);
  c.group = f.group;
  nic->counters.push_back(std::move(c));
}

// The traffic group first (stable, so each group keeps the folder's order).
void OrderGroups(NicSpec* nic) {
  std::stable_partition(nic->counters.begin(), nic->counters.end(),
                        [](const CounterSpec& c) { return c.group == CounterGroup::kTraffic; });
}

DeviceKind PortKind(const topo::RdmaNic& nic, const topo::RdmaPort& port) {
  if (nic.kind == topo::NicKind::kEfa || nic.node_type == "unspecified") return DeviceKind::kEfa;
  if (port.link_layer == "InfiniBand") return DeviceKind::kInfiniBand;
  if (port.link_layer == "Ethernet") return DeviceKind::kRoce;
  return DeviceKind::kOther;
}

NicSpec RdmaPortSpec(const topo::SysfsRoot& root, const topo::RdmaNic& nic, const topo::RdmaPort& port,
                     std::vector<std::string>* notes) {
  NicSpec spec;
  spec.name = nic.name + ":" + std::to_string(port.port);
  spec.kind = PortKind(nic, port);
  const std::string dir = "/sys/class/infiniband/" + nic.name + "/ports/" + std::to_string(port.port);
  spec.presence_path = HostPath(root, dir);
  const bool mlx5 = StartsWith(nic.name, "mlx5") || (nic.pci && nic.pci->driver == "mlx5_core");
  const std::string prefix(KindPrefix(spec.kind));

  const std::vector<std::string> pma = root.List(Join(dir, "counters"));
  const bool extended = std::find(pma.begin(), pma.end(), "unicast_xmit_packets") != pma.end();
  std::vector<std::string> narrow;
  for (const std::string& file : pma) {
    CounterFacts f = RdmaCounterFacts(spec.kind, mlx5, extended, "counters", file);
    if (OneOf(file, kPmaData) && f.width_bits == 32) narrow.push_back(file);
    AddCounter(root, Join(Join(dir, "counters"), file), prefix + "." + file, f, &spec);
  }
  if (!narrow.empty())
    notes->push_back(spec.name + ": no extended port counters (no unicast_xmit_packets), so " + narrow.front() +
                     " and the other data and packet counters are taken as 32-bit counters that saturate; a "
                     "larger value raises them to 64 bits");
  for (const std::string& file : root.List(Join(dir, "hw_counters"))) {
    if (file == "lifespan") continue;  // the driver's cache time for these values, not a counter
    std::string series = prefix + "." + file;
    if (std::find(pma.begin(), pma.end(), file) != pma.end()) series = prefix + ".hw." + file;
    AddCounter(root, Join(Join(dir, "hw_counters"), file), series,
               RdmaCounterFacts(spec.kind, mlx5, extended, "hw_counters", file), &spec);
  }
  AddRate(root, Join(dir, "rate"), CounterText::kIbRate, &spec);
  OrderGroups(&spec);
  return spec;
}

NicSpec NetdevSpec(const topo::SysfsRoot& root, const std::string& name) {
  NicSpec spec;
  spec.name = name;
  spec.kind = DeviceKind::kNetdev;
  const std::string dir = "/sys/class/net/" + name;
  spec.presence_path = HostPath(root, Join(dir, "statistics"));
  static constexpr std::array<std::string_view, 8> kFiles{"tx_bytes",  "rx_bytes",  "tx_packets", "rx_packets",
                                                          "tx_errors", "rx_errors", "tx_dropped", "rx_dropped"};
  for (std::string_view file : kFiles) {
    const std::string path = Join(Join(dir, "statistics"), file);
    if (!root.Exists(path)) continue;
    AddCounter(root, path, "net." + std::string(file), NetdevCounterFacts(file), &spec);
  }
  AddRate(root, Join(dir, "speed"), CounterText::kMegabits, &spec);
  OrderGroups(&spec);
  return spec;
}

}  // namespace

std::string_view KindPrefix(DeviceKind kind) {
  switch (kind) {
    case DeviceKind::kEfa: return "efa";
    case DeviceKind::kInfiniBand: return "ib";
    case DeviceKind::kRoce: return "roce";
    case DeviceKind::kNetdev: return "net";
    case DeviceKind::kGpu: return "gpu";
    case DeviceKind::kOther: break;
  }
  return "rdma";
}

CounterFacts RdmaCounterFacts(DeviceKind kind, bool mlx5, bool extended, std::string_view dir, std::string_view file) {
  CounterFacts f;
  f.unit = "count";
  if (dir == "counters") {  // PMA: every counter saturates
    f.saturates = true;
    if (OneOf(file, kPmaData)) {
      f.unit = EndsWith(file, "_data") ? "4 bytes" : "packets";
      f.width_bits = extended ? 64 : 32;
      f.group = CounterGroup::kTraffic;
      return f;
    }
    if (EndsWith(file, "cast_xmit_packets") || EndsWith(file, "cast_rcv_packets")) {  // extended only
      f.unit = "packets";
      f.group = CounterGroup::kTraffic;
      return f;
    }
    for (const PmaWidth& w : kPmaErrorWidths) {
      if (w.name != file) continue;
      f.width_bits = w.bits;
      if (file == "port_xmit_wait") {
        f.unit = "ticks";
        f.group = CounterGroup::kTraffic;
      }
      return f;
    }
    return f;  // a PMA counter this table does not know: 64 bits
  }
  // hw_counters: the driver's own.
  if (EndsWith(file, "_bytes")) f.unit = "bytes";
  else if (EndsWith(file, "_pkts") || EndsWith(file, "_packets")) f.unit = "packets";
  else if (EndsWith(file, "_wrs")) f.unit = "work requests";
  if (kind == DeviceKind::kEfa) {  // u64 device counters
    const bool traffic = EndsWith(file, "_bytes") || EndsWith(file, "_pkts") || EndsWith(file, "_wrs");
    f.group = traffic ? CounterGroup::kTraffic : CounterGroup::kEvents;
    return f;
  }
  if (mlx5) {
    f.width_bits = OneOf(file, kMlx5Wide) ? 64 : 32;
    f.group = OneOf(file, kMlx5Traffic) ? CounterGroup::kTraffic : CounterGroup::kEvents;
    return f;
  }
  f.group = f.unit == "count" ? CounterGroup::kEvents : CounterGroup::kTraffic;
  return f;
}

CounterFacts NetdevCounterFacts(std::string_view file) {
  // rtnl_link_stats64: 64-bit on every 64-bit kernel.
  CounterFacts f;
  f.unit = EndsWith(file, "_bytes") ? "bytes" : EndsWith(file, "_packets") ? "packets" : "count";
  f.group = f.unit == "count" ? CounterGroup::kEvents : CounterGroup::kTraffic;
  return f;
}

std::vector<NicSpec> DiscoverNics(const NicDiscoveryOptions& options, std::vector<std::string>* notes) {
  const topo::SysfsRoot root(options.sysfs_root);
  std::vector<NicSpec> nics;
  if (options.rdma) {
    std::vector<std::string> rdma_notes;
    for (const topo::RdmaNic& nic : topo::ReadRdmaNics(root, &rdma_notes)) {
      for (const topo::RdmaPort& port : nic.ports) {
        if (!Wanted(options, nic.name, nic.name + ":" + std::to_string(port.port))) continue;
        nics.push_back(RdmaPortSpec(root, nic, port, notes));
      }
    }
    if (options.only.empty()) notes->insert(notes->end(), rdma_notes.begin(), rdma_notes.end());
  }
  if (options.netdevs) {
    topo::NetInterfaces all = topo::ReadNetInterfaces(root);
    std::vector<std::string> names;
    for (const topo::NetInterface& n : all.physical) names.push_back(n.name);
    for (const std::string& n : all.virtual_names) {
      const bool named = std::find(options.only.begin(), options.only.end(), n) != options.only.end();
      if (named || (n == "lo" ? options.include_loopback : options.include_virtual)) names.push_back(n);
    }
    std::sort(names.begin(), names.end(), topo::NaturalLess);
    for (const std::string& n : names) {
      if (!Wanted(options, n, n)) continue;
      NicSpec spec = NetdevSpec(root, n);
      if (spec.counters.empty()) {
        notes->push_back(n + ": no statistics folder, not sampled");
        continue;
      }
      nics.push_back(std::move(spec));
    }
  }
  for (const std::string& wanted : options.only) {
    const bool found = std::any_of(nics.begin(), nics.end(), [&](const NicSpec& s) {
      return s.name == wanted || StartsWith(s.name, wanted + ":");
    });
    if (!found) notes->push_back("asked to sample " + wanted + ", which this machine does not have");
  }
  return nics;
}

}  // namespace commlens::recorder::sampler
