// NVML half of the driver probe (the NVML declarations are in nvml_api.h).
#include <cstdint>
#include <cstdio>
#include <cstring>

#include "topo/dynamic_library.h"
#include "topo/gpu_probe.h"
#include "topo/nvml_api.h"
#include "topo/pci_discovery.h"

namespace commlens::topo {
namespace {

constexpr int kMaxLinksProbed = 32;  // NVML_NVLINK_MAX_LINKS is 18; stop on INVALID_ARGUMENT

int64_t FieldValue(const NvmlApi& api, NvmlDevice device, unsigned field, unsigned scope) {
  if (!api.field_values) return -1;
  NvmlFieldValue value{};
  value.field_id = field;
  value.scope_id = scope;
  unsigned long long number = 0;
  if (api.field_values(device, 1, &value) != kNvmlSuccess || !NvmlFieldToU64(value, &number)) return -1;
  return number <= static_cast<unsigned long long>(INT64_MAX) ? static_cast<int64_t>(number) : -1;
}

NvLinkRemote RemoteKind(const NvmlApi& api, NvmlDevice device, unsigned link, const std::string& remote_bdf,
                        const std::vector<std::string>& gpu_bdfs) {
  int type = -1;
  if (api.link_remote_type && api.link_remote_type(device, link, &type) == kNvmlSuccess) {
    if (type == kNvmlRemoteGpu) return NvLinkRemote::kGpu;
    if (type == kNvmlRemoteSwitch) return NvLinkRemote::kSwitch;
    return NvLinkRemote::kOther;
  }
  // Older drivers lack the remote type: a peer we know as a GPU is one.
  for (const std::string& bdf : gpu_bdfs) {
    if (bdf == remote_bdf) return NvLinkRemote::kGpu;
  }
  return NvLinkRemote::kUnknown;
}

std::vector<NvLink> ReadNvLinks(const NvmlApi& api, NvmlDevice device, const std::vector<std::string>& gpu_bdfs) {
  std::vector<NvLink> links;
  int64_t common_speed = FieldValue(api, device, kFieldNvLinkSpeedCommon, 0);
  for (int i = 0; i < kMaxLinksProbed; ++i) {
    unsigned link = static_cast<unsigned>(i);
    int state = 0;
    int rc = api.link_state(device, link, &state);
    if (rc == kNvmlErrorInvalidArgument) break;  // past the last link
    if (rc != kNvmlSuccess) continue;            // NOT_SUPPORTED: no NVLink on this index
    NvLink nv;
    nv.link = i;
    nv.active = state == kNvmlFeatureEnabled;
    if (nv.active) {
      NvmlPciInfo pci{};
      if (api.link_remote_pci && api.link_remote_pci(device, link, &pci) == kNvmlSuccess) {
        char bdf[16];
        std::snprintf(bdf, sizeof(bdf), "%04x:%02x:%02x.0", pci.domain & 0xffff, pci.bus & 0xff, pci.device & 0x1f);
        nv.remote_bdf = bdf;
      }
      nv.remote = RemoteKind(api, device, link, nv.remote_bdf, gpu_bdfs);
      unsigned version = 0;
      if (api.link_version && api.link_version(device, link, &version) == kNvmlSuccess) nv.version = static_cast<int>(version);
      nv.speed_mbps = FieldValue(api, device, kFieldNvLinkGetSpeed, link);
      if (nv.speed_mbps <= 0) nv.speed_mbps = common_speed;
    }
    links.push_back(nv);
  }
  return links;
}

P2PStatus ToStatus(int code) { return code >= 0 && code <= 6 ? static_cast<P2PStatus>(code) : P2PStatus::kUnknown; }

GpuFacts ReadGpu(const NvmlApi& api, NvmlDevice device, const std::string& bdf, const std::vector<std::string>& bdfs) {
  GpuFacts gpu;
  gpu.bdf = bdf;
  char text[128] = {};
  if (api.name && api.name(device, text, sizeof(text)) == kNvmlSuccess) gpu.name = text;
  std::memset(text, 0, sizeof(text));
  if (api.uuid && api.uuid(device, text, sizeof(text)) == kNvmlSuccess) gpu.uuid = text;
  NvmlMemory memory{};
  if (api.memory && api.memory(device, &memory) == kNvmlSuccess) gpu.memory_bytes = memory.total;
  if (api.link_state) {
    gpu.nvlinks = ReadNvLinks(api, device, bdfs);
    gpu.nvlinks_known = true;
  }
  return gpu;
}

}  // namespace

void ProbeNvml(const std::vector<std::string>& bdfs, GpuProbeResult* result) {
  std::string error;
  std::unique_ptr<DynamicLibrary> lib = DynamicLibrary::Open(kNvmlLibrary, &error);
  if (!lib) {
    result->notes.push_back("NVML not available (" + error + "): NVLink links and P2P read/write status unknown");
    return;
  }
  NvmlApi api = BindNvml(*lib);
  if (!api.init || !api.by_bus_id) {
    result->notes.push_back("NVML too old (no nvmlInit_v2 or nvmlDeviceGetHandleByPciBusId_v2): NVLink links unknown");
    return;
  }
  if (int rc = api.init(); rc != kNvmlSuccess) {
    result->notes.push_back("NVML failed to start: " + NvmlErrorText(api, rc) + ": NVLink links unknown");
    return;
  }
  result->nvml_available = true;
  char version[96] = {};
  if (api.driver_version && api.driver_version(version, sizeof(version)) == kNvmlSuccess) result->driver_version = version;
  std::vector<NvmlDevice> handles(bdfs.size(), nullptr);
  for (size_t i = 0; i < bdfs.size(); ++i) {
    if (int rc = api.by_bus_id(bdfs[i].c_str(), &handles[i]); rc != kNvmlSuccess) {
      handles[i] = nullptr;
      result->notes.push_back("NVML cannot open GPU " + bdfs[i] + ": " + NvmlErrorText(api, rc));
      continue;
    }
    result->gpus.push_back(ReadGpu(api, handles[i], bdfs[i], bdfs));
  }
  if (api.p2p_status) {
    result->p2p_source = "nvml";
    for (size_t i = 0; i < bdfs.size(); ++i) {
      for (size_t j = 0; j < bdfs.size(); ++j) {
        if (i == j || !handles[i] || !handles[j]) continue;
        PeerFacts peer{bdfs[i], bdfs[j], {}};
        int status = -1;
        if (api.p2p_status(handles[i], handles[j], kNvmlP2PRead, &status) == kNvmlSuccess) peer.facts.read = ToStatus(status);
        status = -1;
        if (api.p2p_status(handles[i], handles[j], kNvmlP2PWrite, &status) == kNvmlSuccess) peer.facts.write = ToStatus(status);
        result->peers.push_back(peer);
      }
    }
  }
  if (api.shutdown) api.shutdown();
}

}  // namespace commlens::topo
