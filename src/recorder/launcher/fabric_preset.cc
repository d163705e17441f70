#include "recorder/launcher/fabric_preset.h"

#include <filesystem>

#include "recorder/launcher/preset_checks.h"

namespace commlens::recorder::launcher {

namespace {

// EFA: what AWS's NCCL guidance and the aws-ofi-nccl launch scripts set. The sizes are
// AWS's for p4d/p5 (8 MiB buffers, 512 KiB point-to-point chunks over the network).
constexpr PresetVariable kEfaTable[] = {
    {"FI_PROVIDER", ValueFrom::kLiteral, "efa", nullptr, "libfabric: the EFA provider"},
    {"FI_EFA_USE_DEVICE_RDMA", ValueFrom::kLiteral, "1", nullptr,
     "GPUDirect RDMA on EFA (p4d and later)"},
    {"FI_EFA_FORK_SAFE", ValueFrom::kLiteral, "1", nullptr,
     "registered memory stays safe when the job forks (data loader workers)"},
    {"NCCL_NET_PLUGIN", ValueFrom::kLibrary, "libnccl-net-ofi.so", "ofi",
     "aws-ofi-nccl as NCCL's network (NCCL looks for libnccl-net-ofi.so itself if the file is not "
     "found here)"},
    {"NCCL_TUNER_PLUGIN", ValueFrom::kLibrary, "libnccl-ofi-tuner.so", nullptr,
     "aws-ofi-nccl's tuner: algorithm and protocol for EFA"},
    {"NCCL_BUFFSIZE", ValueFrom::kLiteral, "8388608", nullptr, "8 MiB per-channel buffers"},
    {"NCCL_P2P_NET_CHUNKSIZE", ValueFrom::kLiteral, "524288", nullptr,
     "512 KiB chunks for send/recv over the network"},
};

// GPU-initiated networking over EFA: DeepEP on NCCL's device API instead of NVSHMEM, and
// GIN in proxy mode (2; EFA-GDA, 5, needs newer drivers, see preset_checks.cc).
constexpr PresetVariable kGinTable[] = {
    {"DEEP_EP_BACKEND", ValueFrom::kLiteral, "nccl", nullptr,
     "DeepEP on NCCL's device API (GIN) instead of NVSHMEM"},
    {"NCCL_GIN_TYPE", ValueFrom::kLiteral, "2", nullptr,
     "GIN proxy mode: a CPU proxy thread posts the RDMA writes"},
};

// InfiniBand and RoCE: NCCL finds the HCAs by itself, but also takes ports that are down
// or meant for storage; naming the active ones exactly ('=') makes the choice explicit.
constexpr PresetVariable kIbTable[] = {
    {"NCCL_IB_HCA", ValueFrom::kIbHcaList, "", nullptr, "exactly the active InfiniBand/RoCE ports"},
};

// The value a variable gets on this machine; empty: leave it unset.
std::string Resolve(const PresetVariable& v, const FabricFacts& facts) {
  switch (v.from) {
    case ValueFrom::kLiteral:
      return v.value;
    case ValueFrom::kLibrary: {
      std::string path = FindLibrary(facts.library_dirs, v.value);
      if (!path.empty()) return path;
      return v.fallback != nullptr ? v.fallback : "";
    }
    case ValueFrom::kIbHcaList: {
      std::string list;
      for (const std::string& port : ActiveIbPorts(facts))
        list += (list.empty() ? "=" : ",") + port;
      return list;
    }
  }
  return "";
}

}  // namespace

std::string_view PresetName(Preset preset) {
  switch (preset) {
    case Preset::kEfa:
      return "efa";
    case Preset::kIb:
      return "ib";
    case Preset::kEfaGin:
      return "efa-gin";
  }
  return "?";
}

std::optional<Preset> ParsePreset(std::string_view name) {
  for (Preset p : {Preset::kEfa, Preset::kIb, Preset::kEfaGin})
    if (PresetName(p) == name) return p;
  return std::nullopt;
}

std::vector<PresetVariable> PresetTable(Preset preset) {
  std::vector<PresetVariable> out;
  switch (preset) {
    case Preset::kEfa:
      out.assign(std::begin(kEfaTable), std::end(kEfaTable));
      break;
    case Preset::kIb:
      out.assign(std::begin(kIbTable), std::end(kIbTable));
      break;
    case Preset::kEfaGin:
      out.assign(std::begin(kEfaTable), std::end(kEfaTable));
      out.insert(out.end(), std::begin(kGinTable), std::end(kGinTable));
      break;
  }
  return out;
}

std::string FindLibrary(const std::vector<std::string>& library_dirs, std::string_view file) {
  for (const std::string& dir : library_dirs) {
    std::filesystem::path p = std::filesystem::path(dir) / file;
    std::error_code ec;
    if (std::filesystem::exists(p, ec)) return p.lexically_normal().string();
  }
  return "";
}

std::vector<std::string> ActiveIbPorts(const FabricFacts& facts) {
  std::vector<std::string> out;
  for (const topo::RdmaNic& nic : facts.rdma_nics) {
    if (nic.kind != topo::NicKind::kInfiniBand && nic.kind != topo::NicKind::kRoce) continue;
    for (const topo::RdmaPort& port : nic.ports)
      if (port.state == "ACTIVE") out.push_back(nic.name + ":" + std::to_string(port.port));
  }
  return out;
}

std::string_view CheckLevelName(CheckLevel level) {
  switch (level) {
    case CheckLevel::kOk:
      return "ok";
    case CheckLevel::kNote:
      return "note";
    case CheckLevel::kWarning:
      return "warning";
    case CheckLevel::kError:
      return "error";
  }
  return "?";
}

bool PresetPlan::HasError() const {
  for (const PresetCheck& c : checks)
    if (c.level == CheckLevel::kError) return true;
  return false;
}

PresetPlan PlanPreset(Preset preset, const Environment& env, const FabricFacts& facts) {
  PresetPlan plan;
  plan.preset = preset;
  Environment after = env;
  for (const PresetVariable& v : PresetTable(preset)) {
    std::string value = Resolve(v, facts);
    if (const char* mine = env.Get(v.name)) {
      plan.kept.push_back({v.name, mine, value});
      continue;
    }
    if (value.empty()) continue;  // the checks say why
    plan.set.push_back({v.name, value, v.why});
    after.Set(v.name, value);
  }
  plan.checks = CheckPreset(preset, after, facts);
  return plan;
}

void ApplyPreset(const PresetPlan& plan, Environment* env) {
  for (const PresetPlan::Set& s : plan.set) env->Set(s.name, s.value);
}

std::string PresetAsShell(const PresetPlan& plan) {
  std::string out = "# commlens fabric preset " + std::string(PresetName(plan.preset)) + "\n";
  for (const PresetPlan::Set& s : plan.set)
    out += "export " + s.name + "=" + ShellQuote(s.value) + "  # " + s.why + "\n";
  for (const PresetPlan::Kept& k : plan.kept) {
    out += "# kept " + k.name + "=" + ShellQuote(k.user_value) + " (already set";
    out += k.preset_value.empty() ? ")\n"
                                  : "; the preset would set " + ShellQuote(k.preset_value) + ")\n";
  }
  for (const PresetCheck& c : plan.checks)
    out += "# " + std::string(CheckLevelName(c.level)) + ": " + c.text + "\n";
  return out;
}

std::string PresetAsLog(const PresetPlan& plan, std::string_view prefix, bool all_checks) {
  const std::string head =
      std::string(prefix) + "preset " + std::string(PresetName(plan.preset)) + ": ";
  std::string line;
  for (const PresetPlan::Set& s : plan.set)
    line += (line.empty() ? "set " : " ") + s.name + "=" + s.value;
  std::string kept;
  for (const PresetPlan::Kept& k : plan.kept) {
    kept += (kept.empty() ? "kept " : ", ") + k.name + "=" + k.user_value;
    if (!k.preset_value.empty()) kept += " (not " + k.preset_value + ")";
  }
  if (!kept.empty()) line += (line.empty() ? "" : "; ") + kept;
  if (line.empty()) line = "nothing to set";
  std::string out = head + line + "\n";
  for (const PresetCheck& c : plan.checks) {
    if (!all_checks && c.level != CheckLevel::kWarning && c.level != CheckLevel::kError) continue;
    out += head + std::string(CheckLevelName(c.level)) + ": " + c.text + "\n";
  }
  return out;
}

}  // namespace commlens::recorder::launcher
