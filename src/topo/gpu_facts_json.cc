#include "topo/gpu_facts_json.h"

#include "topo/render.h"

namespace commlens::topo {
namespace {

using nlohmann::json;

NvLinkRemote RemoteFromName(const std::string& name) {
  for (NvLinkRemote r : {NvLinkRemote::kGpu, NvLinkRemote::kSwitch, NvLinkRemote::kOther}) {
    if (NvLinkRemoteName(r) == name) return r;
  }
  return NvLinkRemote::kUnknown;
}

std::string StringOr(const json& j, const char* key) {
  return j.contains(key) && j[key].is_string() ? j[key].get<std::string>() : std::string();
}

std::optional<bool> BoolOr(const json& j) { return j.is_boolean() ? std::optional<bool>(j.get<bool>()) : std::nullopt; }

GpuFacts ReadGpu(const json& g) {
  GpuFacts gpu;
  gpu.bdf = g.at("pci").at("bdf").get<std::string>();
  gpu.name = StringOr(g, "name");
  gpu.uuid = StringOr(g, "uuid");
  if (g.contains("memory_bytes") && g["memory_bytes"].is_number()) gpu.memory_bytes = g["memory_bytes"].get<uint64_t>();
  gpu.nvlinks_known = g.value("nvlinks_known", false);
  for (const json& l : g.value("nvlinks", json::array())) {
    NvLink link;
    link.link = l.at("link").get<int>();
    link.active = l.value("active", false);
    link.remote = RemoteFromName(StringOr(l, "remote"));
    link.remote_bdf = StringOr(l, "remote_bdf");
    if (l.contains("version") && l["version"].is_number()) link.version = l["version"].get<int>();
    if (l.contains("speed_mbps") && l["speed_mbps"].is_number()) link.speed_mbps = l["speed_mbps"].get<int64_t>();
    gpu.nvlinks.push_back(link);
  }
  return gpu;
}

}  // namespace

Result<GpuProbeResult> GpuFactsFromJson(const json& doc) {
  try {
    if (doc.value("schema_version", 0) != kTopoSchemaVersion) {
      return Error("GPU facts: schema_version " + doc.value("schema_version", json(nullptr)).dump() + ", expected " +
                   std::to_string(kTopoSchemaVersion));
    }
    GpuProbeResult result;
    const json& facts = doc.at("gpu_facts");
    result.nvml_available = facts.value("nvml", false);
    result.cuda_available = facts.value("cuda", false);
    result.driver_version = StringOr(facts, "driver_version");
    const json& gpus = doc.at("gpus");
    for (const json& g : gpus) result.gpus.push_back(ReadGpu(g));
    const json& p2p = doc.at("p2p");
    result.p2p_source = StringOr(p2p, "source");
    for (size_t i = 0; i < result.gpus.size(); ++i) {
      for (size_t j = 0; j < result.gpus.size(); ++j) {
        if (i == j) continue;
        PeerFacts peer{result.gpus[i].bdf, result.gpus[j].bdf, {}};
        peer.facts.read = P2PStatusFromCode(p2p.at("read").at(i).at(j).get<std::string>()).value_or(P2PStatus::kUnknown);
        peer.facts.write = P2PStatusFromCode(p2p.at("write").at(i).at(j).get<std::string>()).value_or(P2PStatus::kUnknown);
        peer.facts.cuda_access = BoolOr(p2p.at("cuda_access").at(i).at(j));
        peer.facts.cuda_atomics = BoolOr(p2p.at("cuda_atomics").at(i).at(j));
        result.peers.push_back(peer);
      }
    }
    return result;
  } catch (const json::exception& e) {
    return Error(std::string("GPU facts: not a commlens topo document: ") + e.what());
  }
}

}  // namespace commlens::topo
