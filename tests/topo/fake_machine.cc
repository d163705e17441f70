#include "topo/fake_machine.h"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>

#include "testing/golden_file.h"
#include "topo/pci_discovery.h"

namespace commlens::topo::testing {
namespace {

namespace fs = std::filesystem;

struct Line {
  int number = 0;
  size_t indent = 0;
  std::vector<std::string> words;
  std::map<std::string, std::string> kv;

  std::string Get(const std::string& key, const std::string& fallback = "") const {
    auto it = kv.find(key);
    return it == kv.end() ? fallback : it->second;
  }
};

Result<Line> Tokenize(const std::string& text, int number) {
  Line line;
  line.number = number;
  while (line.indent < text.size() && text[line.indent] == ' ') ++line.indent;
  std::string token;
  bool quoted = false, any = false;
  auto flush = [&] {
    if (!any) return;
    size_t eq = token.find('=');
    if (eq == std::string::npos) {
      line.words.push_back(token);
    } else {
      line.kv[token.substr(0, eq)] = token.substr(eq + 1);
    }
    token.clear();
    any = false;
  };
  for (size_t i = line.indent; i < text.size(); ++i) {
    char c = text[i];
    if (c == '"') {
      quoted = !quoted;
      any = true;
    } else if (!quoted && c == '#') {
      break;
    } else if (!quoted && (c == ' ' || c == '\t')) {
      flush();
    } else {
      token += c;
      any = true;
    }
  }
  if (quoted) return Error(fmt::format("spec line {}: unterminated quote", number));
  flush();
  return line;
}

class TreeWriter {
 public:
  explicit TreeWriter(fs::path root) : root_(std::move(root)) {}

  void File(const std::string& path, const std::string& content) {
    fs::path host = Host(path);
    fs::create_directories(host.parent_path());
    std::ofstream(host) << content;
  }
  void Dir(const std::string& path) { fs::create_directories(Host(path)); }
  // A relative symlink, as sysfs has them, so the tree resolves inside any root.
  void Link(const std::string& link, const std::string& target) {
    fs::path host = Host(link);
    fs::create_directories(host.parent_path());
    fs::create_symlink(fs::path(target).lexically_relative(fs::path(link).parent_path()), host);
  }

 private:
  fs::path Host(const std::string& path) const { return root_ / path.substr(1); }
  fs::path root_;
};

struct NodeInfo {
  std::string cpus;
  std::string mem_kb;
};

struct DeviceDefaults {
  const char* class_code;
  const char* vendor;
  const char* device;
  const char* driver;
};

Result<DeviceDefaults> DefaultsFor(const std::string& kind, int number) {
  if (kind == "bridge") return DeviceDefaults{"0x060400", "0x1000", "0xc030", "pcieport"};
  if (kind == "gpu") return DeviceDefaults{"0x030200", "0x10de", "0x2330", "nvidia"};
  if (kind == "nic") return DeviceDefaults{"0x020700", "0x15b3", "0x1021", "mlx5_core"};
  if (kind == "nvme") return DeviceDefaults{"0x010802", "0x144d", "0xa80a", "nvme"};
  if (kind == "nvswitch") return DeviceDefaults{"0x068000", "0x10de", "0x22a3", ""};
  if (kind == "other") return DeviceDefaults{"0x088000", "0x8086", "0x0b00", ""};
  return Error(fmt::format("spec line {}: unknown device kind '{}'", number, kind));
}

class Builder {
 public:
  explicit Builder(fs::path root) : tree_(root) { machine_.root = std::move(root); }

  Status Apply(const Line& l) {
    const std::string& key = l.words[0];
    if (l.indent > 0) return Device(l);
    if (key == "numa") return Numa(l);
    if (key == "host_bridge") return HostBridge(l);
    if (key == "infiniband") return Infiniband(l);
    if (key == "net") return Net(l);
    if (key == "gpu_facts") return GpuFactsLine(l);
    if (key == "gpu") return GpuLine(l);
    if (key == "p2p") return P2PLine(l);
    return Error(fmt::format("spec line {}: unknown keyword '{}'", l.number, key));
  }

  FakeMachine Finish() {
    if (!nodes_.empty()) {
      std::string online = fmt::format("0-{}", nodes_.rbegin()->first);
      tree_.File("/sys/devices/system/node/online", online + "\n");
      tree_.File("/sys/devices/system/node/possible", online + "\n");
    }
    ApplyP2PDefault();
    return std::move(machine_);
  }

 private:
  Status Numa(const Line& l) {
    if (l.words.size() < 2) return Error(fmt::format("spec line {}: numa needs an id", l.number));
    NodeInfo& node = nodes_[std::stoi(l.words[1])];
    node.cpus = l.Get("cpus");
    node.mem_kb = l.Get("mem_kb", "0");
    std::string dir = "/sys/devices/system/node/node" + l.words[1];
    tree_.File(dir + "/cpulist", node.cpus + "\n");
    tree_.File(dir + "/meminfo", fmt::format("Node {} MemTotal:       {} kB\nNode {} MemFree:        {} kB\n",
                                             l.words[1], node.mem_kb, l.words[1], node.mem_kb));
    return OkStatus();
  }

  Status HostBridge(const Line& l) {
    if (l.words.size() < 2) return Error(fmt::format("spec line {}: host_bridge needs dddd:bb", l.number));
    host_path_ = "/sys/devices/pci" + l.words[1];
    host_numa_ = l.Get("numa", "-1");
    tree_.Dir(host_path_);
    stack_.clear();
    return OkStatus();
  }

  Status Device(const Line& l) {
    if (host_path_.empty() || l.words.size() < 2 || !IsBdf(l.words[0])) {
      return Error(fmt::format("spec line {}: expected '<bdf> <kind>' below a host_bridge", l.number));
    }
    while (!stack_.empty() && stack_.back().first >= l.indent) stack_.pop_back();
    std::string parent = stack_.empty() ? host_path_ : stack_.back().second;
    const std::string& bdf = l.words[0];
    std::string path = parent + "/" + bdf;
    stack_.emplace_back(l.indent, path);
    devices_[bdf] = path;
    COMMLENS_ASSIGN_OR_RETURN(DeviceDefaults d, DefaultsFor(l.words[1], l.number));
    std::string numa = l.Get("numa", host_numa_);
    std::string cpus = l.Get("cpus", nodes_.count(std::atoi(numa.c_str())) ? nodes_[std::atoi(numa.c_str())].cpus : "");
    tree_.File(path + "/class", l.Get("class", d.class_code) + "\n");
    tree_.File(path + "/vendor", l.Get("vendor", d.vendor) + "\n");
    tree_.File(path + "/device", l.Get("device", d.device) + "\n");
    tree_.File(path + "/numa_node", numa + "\n");
    tree_.File(path + "/local_cpulist", cpus + "\n");
    std::string speed = l.Get("speed", "32.0 GT/s PCIe"), width = l.Get("width", "16");
    tree_.File(path + "/current_link_speed", speed + "\n");
    tree_.File(path + "/max_link_speed", l.Get("max_speed", speed) + "\n");
    tree_.File(path + "/current_link_width", width + "\n");
    tree_.File(path + "/max_link_width", l.Get("max_width", width) + "\n");
    std::string driver = l.Get("driver", d.driver);
    if (!driver.empty()) {
      tree_.Dir("/sys/bus/pci/drivers/" + driver);
      tree_.Link(path + "/driver", "/sys/bus/pci/drivers/" + driver);
    }
    tree_.Link("/sys/bus/pci/devices/" + bdf, path);
    return OkStatus();
  }

  Result<std::string> DevicePath(const Line& l) {
    auto it = devices_.find(l.Get("pci"));
    if (it == devices_.end()) return Error(fmt::format("spec line {}: no PCI device '{}'", l.number, l.Get("pci")));
    return it->second;
  }

  Status Infiniband(const Line& l) {
    COMMLENS_ASSIGN_OR_RETURN(std::string device, DevicePath(l));
    const std::string& name = l.words.at(1);
    std::string dir = device + "/infiniband/" + name;
    tree_.File(dir + "/node_type", l.Get("node_type", "1: CA") + "\n");
    tree_.File(dir + "/ports/1/state", l.Get("state", "4: ACTIVE") + "\n");
    tree_.File(dir + "/ports/1/phys_state", l.Get("phys_state", "5: LinkUp") + "\n");
    tree_.File(dir + "/ports/1/rate", l.Get("rate", "400 Gb/sec (4X NDR)") + "\n");
    tree_.File(dir + "/ports/1/link_layer", l.Get("link_layer", "InfiniBand") + "\n");
    tree_.Link(dir + "/device", device);
    tree_.Link("/sys/class/infiniband/" + name, dir);
    return OkStatus();
  }

  Status Net(const Line& l) {
    const std::string& name = l.words.at(1);
    std::string dir;
    if (l.kv.count("pci")) {
      COMMLENS_ASSIGN_OR_RETURN(std::string device, DevicePath(l));
      dir = device + "/net/" + name;
      tree_.Link(dir + "/device", device);
    } else {
      dir = "/sys/devices/virtual/net/" + name;
    }
    tree_.File(dir + "/type", l.Get("type", "1") + "\n");
    tree_.File(dir + "/operstate", l.Get("operstate", "up") + "\n");
    if (l.kv.count("speed")) tree_.File(dir + "/speed", l.Get("speed") + "\n");
    tree_.Link("/sys/class/net/" + name, dir);
    return OkStatus();
  }

  Status GpuFactsLine(const Line& l) {
    machine_.gpu_facts.nvml_available = l.Get("nvml", "yes") == "yes";
    machine_.gpu_facts.cuda_available = l.Get("cuda", "yes") == "yes";
    machine_.gpu_facts.driver_version = l.Get("driver");
    machine_.gpu_facts.p2p_source = machine_.gpu_facts.nvml_available ? "nvml" : machine_.gpu_facts.cuda_available ? "cuda" : "";
    return OkStatus();
  }

  Status GpuLine(const Line& l) {
    GpuFacts& gpu = machine_.gpu_facts.gpus.emplace_back();
    gpu.bdf = l.words.at(1);
    gpu.name = l.Get("name");
    gpu.uuid = l.Get("uuid");
    if (l.kv.count("memory_mib")) gpu.memory_bytes = std::stoull(l.Get("memory_mib")) << 20;
    gpu.nvlinks_known = machine_.gpu_facts.nvml_available;
    std::stringstream groups(l.Get("links"));
    std::string group;
    int next = 0;
    while (std::getline(groups, group, ',')) {
      size_t at = group.find('@');
      if (at == std::string::npos) return Error(fmt::format("spec line {}: links group '{}' needs <n>@<peer>", l.number, group));
      std::string peer = group.substr(at + 1);
      for (int i = 0, n = std::stoi(group.substr(0, at)); i < n; ++i) {
        NvLink link{next++, true, peer == "switch" ? NvLinkRemote::kSwitch : NvLinkRemote::kGpu, peer == "switch" ? "" : peer,
                    std::stoi(l.Get("version", "4")), std::stoll(l.Get("speed_mbps", "26562"))};
        gpu.nvlinks.push_back(link);
      }
    }
    for (int i = 0, n = std::stoi(l.Get("inactive", "0")); i < n; ++i) gpu.nvlinks.push_back(NvLink{next++});
    return OkStatus();
  }

  Status P2PLine(const Line& l) {
    P2PFacts facts;
    auto read = P2PStatusFromCode(l.Get("read", "OK")), write = P2PStatusFromCode(l.Get("write", "OK"));
    if (!read || !write) return Error(fmt::format("spec line {}: unknown P2P code", l.number));
    facts.read = *read;
    facts.write = *write;
    if (l.kv.count("cuda_access")) facts.cuda_access = l.Get("cuda_access") == "yes";
    if (l.words.at(1) == "default") {
      default_p2p_ = facts;
      return OkStatus();
    }
    if (l.words.size() < 3) return Error(fmt::format("spec line {}: p2p needs two GPUs", l.number));
    pairs_[{l.words[1], l.words[2]}] = facts;
    pairs_[{l.words[2], l.words[1]}] = facts;
    return OkStatus();
  }

  void ApplyP2PDefault() {
    const auto& gpus = machine_.gpu_facts.gpus;
    for (const GpuFacts& a : gpus) {
      for (const GpuFacts& b : gpus) {
        if (a.bdf == b.bdf) continue;
        auto it = pairs_.find({a.bdf, b.bdf});
        if (it != pairs_.end()) {
          machine_.gpu_facts.peers.push_back({a.bdf, b.bdf, it->second});
        } else if (default_p2p_) {
          machine_.gpu_facts.peers.push_back({a.bdf, b.bdf, *default_p2p_});
        }
      }
    }
  }

  TreeWriter tree_;
  FakeMachine machine_;
  std::map<int, NodeInfo> nodes_;
  std::string host_path_, host_numa_ = "-1";
  std::vector<std::pair<size_t, std::string>> stack_;  // (indent, device path)
  std::map<std::string, std::string> devices_;         // bdf -> in-root path
  std::optional<P2PFacts> default_p2p_;
  std::map<std::pair<std::string, std::string>, P2PFacts> pairs_;
};

}  // namespace

Result<FakeMachine> BuildFakeMachine(const std::string& spec, const fs::path& root) {
  if (fs::exists(root) && !fs::is_empty(root)) return Error("fake machine root " + root.string() + " is not empty");
  fs::create_directories(root);
  Builder builder(root);
  std::istringstream in(spec);
  std::string text;
  for (int number = 1; std::getline(in, text); ++number) {
    COMMLENS_ASSIGN_OR_RETURN(Line line, Tokenize(text, number));
    if (line.words.empty()) continue;
    COMMLENS_RETURN_IF_ERROR(builder.Apply(line));
  }
  return builder.Finish();
}

std::string ReadSpec(const std::string& name) {
  std::ifstream in(fs::path(COMMLENS_SOURCE_DIR) / "tests/topo/data" / (name + ".spec"));
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

void ExpectMatchesGolden(const std::string& file, const std::string& actual) {
  commlens::testing::ExpectMatchesGoldenFile(fs::path(COMMLENS_SOURCE_DIR) / "tests/topo/data/golden" / file, actual);
}

TempDir::TempDir() {
  std::string pattern = (fs::temp_directory_path() / "commlens_topo_XXXXXX").string();
  char* made = mkdtemp(pattern.data());
  path_ = made ? fs::path(made) : fs::path();
}

TempDir::~TempDir() {
  std::error_code ec;
  if (!path_.empty()) fs::remove_all(path_, ec);
}

}  // namespace commlens::topo::testing
