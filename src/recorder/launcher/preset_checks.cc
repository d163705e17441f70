#include "recorder/launcher/preset_checks.h"

#include <filesystem>
#include <string>

namespace commlens::recorder::launcher {

namespace {

std::string Joined(const std::vector<std::string>& items, size_t at_most = 8) {
  std::string out;
  for (size_t i = 0; i < items.size() && i < at_most; ++i) out += (i ? ", " : "") + items[i];
  if (items.size() > at_most) out += ", ... (" + std::to_string(items.size()) + " in all)";
  return out;
}

// Why sysfs shows no RDMA device of the kind wanted.
std::string NoDevicesWhy(const FabricFacts& facts) {
  return facts.sysfs_notes.empty() ? "none in /sys/class/infiniband" : Joined(facts.sysfs_notes);
}

std::string Folders(const FabricFacts& facts) {
  return facts.library_dirs.empty() ? std::string("any library folder")
                                    : Joined(facts.library_dirs, 6);
}

std::string Value(const Environment& env, const char* name) {
  const char* v = env.Get(name);
  return v != nullptr ? v : "";
}

class Checks {
 public:
  void Add(CheckLevel level, std::string text) { out_.push_back({level, std::move(text)}); }
  std::vector<PresetCheck> Take() { return std::move(out_); }

 private:
  std::vector<PresetCheck> out_;
};

void CheckEfaDevices(const FabricFacts& facts, Checks* checks) {
  std::vector<std::string> active, down;
  for (const topo::RdmaNic& nic : facts.rdma_nics) {
    if (nic.kind != topo::NicKind::kEfa) continue;
    for (const topo::RdmaPort& port : nic.ports)
      (port.state == "ACTIVE" ? active : down)
          .push_back(nic.name + ":" + std::to_string(port.port));
  }
  if (active.empty() && down.empty()) {
    checks->Add(CheckLevel::kError,
                "no EFA device: " + NoDevicesWhy(facts) +
                    "; this is not an EFA-enabled instance, or the efa driver is not loaded");
    return;
  }
  if (!active.empty())
    checks->Add(CheckLevel::kOk,
                std::to_string(active.size()) + " EFA port(s) active: " + Joined(active));
  if (!down.empty()) checks->Add(CheckLevel::kWarning, "EFA port(s) not active: " + Joined(down));
}

// NCCL_NET_PLUGIN or NCCL_TUNER_PLUGIN as the job will have it.
void CheckPluginVariable(const Environment& env, const FabricFacts& facts, const char* variable,
                         std::string_view kind, std::string_view expected_file,
                         std::string_view what, Checks* checks) {
  const char* value = env.Get(variable);
  if (value == nullptr) {
    checks->Add(kind == "net" ? CheckLevel::kError : CheckLevel::kWarning,
                std::string(what) + " (" + std::string(expected_file) + ") is not in " +
                    (facts.library_dirs.empty() ? Folders(facts)
                                                : "the library folders (" + Folders(facts) + ")") +
                    "; " + variable + " is not set");
    return;
  }
  if (std::string_view(value) == "none") {
    checks->Add(CheckLevel::kWarning,
                std::string(variable) + "=none: NCCL loads no " + std::string(kind) + " plugin");
    return;
  }
  std::string file = ResolvePluginValue(facts.library_dirs, kind, value);
  if (!file.empty()) {
    checks->Add(CheckLevel::kOk, std::string(what) + ": " + file);
    return;
  }
  checks->Add(
      kind == "net" ? CheckLevel::kError : CheckLevel::kWarning,
      std::string(variable) + "=" + value + ": no such library in " + Folders(facts) +
          (kind == "net" ? "; NCCL falls back to its own transports (TCP sockets on EFA)" : ""));
}

// |why|: what needs it, said when it is missing.
void CheckLibrary(const FabricFacts& facts, std::string_view file, std::string_view what,
                  std::string_view why, CheckLevel missing, Checks* checks) {
  std::string path = FindLibrary(facts.library_dirs, file);
  if (!path.empty()) {
    checks->Add(CheckLevel::kOk, std::string(what) + ": " + path);
    return;
  }
  checks->Add(missing, std::string(what) + " (" + std::string(file) +
                           ") not found in the library folders: " + std::string(why));
}

// NCCL's version; false when it is not known.
bool CheckNccl(const FabricFacts& facts, Checks* checks) {
  if (!facts.nccl_probed) return false;
  if (!facts.nccl.found) {
    checks->Add(CheckLevel::kWarning,
                "NCCL not found (" + facts.nccl.error +
                    "); its version is not checked. PyTorch wheels carry their own NCCL in "
                    "site-packages/nvidia/nccl/lib: name it with --nccl-lib");
    return false;
  }
  checks->Add(CheckLevel::kOk,
              "NCCL " + NcclVersionText(facts.nccl.version_code) + " (" + facts.nccl.path + ")");
  return true;
}

void CheckGin(const Environment& env, const FabricFacts& facts, bool nccl_known, Checks* checks) {
  if (nccl_known) {
    const int v = facts.nccl.version_code;
    const std::string have = "NCCL " + NcclVersionText(v);
    if (v < kNcclGinVersion) {
      checks->Add(
          CheckLevel::kError,
          have + " has no GIN: GPU-initiated networking came with NCCL 2.28.7's device API");
    } else if (v < kNcclGinOverEfaVersion) {
      checks->Add(CheckLevel::kWarning, have +
                                            " has GIN, but only over its own InfiniBand transport: "
                                            "GIN over EFA needs NCCL 2.31.2 "
                                            "and aws-ofi-nccl 1.21 or later");
    } else {
      checks->Add(CheckLevel::kOk,
                  have + " has GIN over network plugins (with aws-ofi-nccl 1.21 or later)");
    }
  }
  CheckLibrary(facts, "libgdrapi.so.2", "GDRCopy", "aws-ofi-nccl's GIN needs GDRCopy 2.5 or later",
               CheckLevel::kWarning, checks);
  const std::string gin_type = Value(env, "NCCL_GIN_TYPE");
  if (gin_type == "5")
    checks->Add(
        CheckLevel::kNote,
        "NCCL_GIN_TYPE=5 (EFA-GDA) needs P5en/P6 instances, libfabric 2.6, EFA driver 3.3 and "
        "NCCL_SYM_GIN_KERNELS_ENABLE=0");
  else if (gin_type != "2")
    checks->Add(CheckLevel::kNote,
                "NCCL_GIN_TYPE=" + gin_type + " is kept; the preset's is 2 (proxy)");
}

void CheckEfa(Preset preset, const Environment& env, const FabricFacts& facts, Checks* checks) {
  CheckEfaDevices(facts, checks);
  const std::string provider = Value(env, "FI_PROVIDER");
  if (provider != "efa")
    checks->Add(CheckLevel::kWarning,
                "FI_PROVIDER=" + provider + " is kept: libfabric will not use EFA");
  CheckPluginVariable(env, facts, "NCCL_NET_PLUGIN", "net", "libnccl-net-ofi.so", "aws-ofi-nccl",
                      checks);
  CheckPluginVariable(env, facts, "NCCL_TUNER_PLUGIN", "tuner", "libnccl-ofi-tuner.so",
                      "aws-ofi-nccl's tuner", checks);
  CheckLibrary(facts, "libfabric.so.1", "libfabric", "aws-ofi-nccl cannot load without it",
               CheckLevel::kWarning, checks);
  const bool nccl_known = CheckNccl(facts, checks);
  if (preset == Preset::kEfaGin) CheckGin(env, facts, nccl_known, checks);
}

void CheckIb(const Environment& env, const FabricFacts& facts, Checks* checks) {
  std::vector<std::string> ports = ActiveIbPorts(facts);
  if (ports.empty()) {
    checks->Add(CheckLevel::kError, "no active InfiniBand or RoCE port: " + NoDevicesWhy(facts));
  } else {
    checks->Add(CheckLevel::kOk,
                std::to_string(ports.size()) + " InfiniBand/RoCE port(s) active: " + Joined(ports));
  }
  if (Value(env, "NCCL_IB_DISABLE") == "1")
    checks->Add(CheckLevel::kError, "NCCL_IB_DISABLE=1 is kept: NCCL will not use InfiniBand");
  if (const char* net = env.Get("NCCL_NET"); net != nullptr && std::string_view(net) != "IB")
    checks->Add(CheckLevel::kWarning,
                std::string("NCCL_NET=") + net + " is kept: NCCL uses that network, not IB");
  if (facts.peermem_loaded)
    checks->Add(CheckLevel::kOk, "nvidia_peermem is loaded: GPUDirect RDMA");
  else
    checks->Add(CheckLevel::kNote,
                "nvidia_peermem is not loaded: GPUDirect RDMA then needs DMA-BUF (Linux 5.12 or "
                "later with the open GPU kernel modules)");
  CheckNccl(facts, checks);
}

}  // namespace

std::string ResolvePluginValue(const std::vector<std::string>& library_dirs, std::string_view kind,
                               std::string_view value) {
  if (value.find('/') != std::string_view::npos) {
    std::error_code ec;
    return std::filesystem::exists(value, ec) ? std::string(value) : "";
  }
  std::string found = FindLibrary(library_dirs, value);
  if (found.empty())
    found = FindLibrary(library_dirs,
                        "libnccl-" + std::string(kind) + "-" + std::string(value) + ".so");
  return found;
}

std::vector<PresetCheck> CheckPreset(Preset preset, const Environment& job_env,
                                     const FabricFacts& facts) {
  Checks checks;
  if (preset == Preset::kIb)
    CheckIb(job_env, facts, &checks);
  else
    CheckEfa(preset, job_env, facts, &checks);
  return checks.Take();
}

}  // namespace commlens::recorder::launcher
