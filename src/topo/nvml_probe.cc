// NVML half of the driver probe. Our own declarations of the few NVML entry points we
// call, from NVML's documented C API (nvml.h): return codes are ints, 0 is success.
#include <cstdio>
#include <cstring>

#include "topo/dynamic_library.h"
#include "topo/gpu_probe.h"
#include "topo/pci_discovery.h"

namespace commlens::topo {
namespace {

struct NvmlDeviceSt;
using NvmlDevice = NvmlDeviceSt*;

constexpr int kNvmlSuccess = 0;
constexpr int kNvmlErrorInvalidArgument = 2;
constexpr int kNvmlFeatureEnabled = 1;
constexpr int kNvmlRemoteGpu = 0;       // NVML_NVLINK_DEVICE_TYPE_GPU
constexpr int kNvmlRemoteSwitch = 2;    // NVML_NVLINK_DEVICE_TYPE_SWITCH
constexpr int kNvmlP2PRead = 0;         // NVML_P2P_CAPS_INDEX_READ
constexpr int kNvmlP2PWrite = 1;        // NVML_P2P_CAPS_INDEX_WRITE
constexpr unsigned kFieldNvLinkSpeedCommon = 90;  // NVML_FI_DEV_NVLINK_SPEED_MBPS_COMMON
constexpr unsigned kFieldNvLinkGetSpeed = 164;    // NVML_FI_DEV_NVLINK_GET_SPEED, scope = link
constexpr int kMaxLinksProbed = 32;     // NVML_NVLINK_MAX_LINKS is 18; stop on INVALID_ARGUMENT

// nvmlPciInfo_t as filled by the _v2/_v3 entry points. Only domain/bus/device are read;
// they sit at the same offsets in the older layout too.
struct NvmlPciInfo {
  char bus_id_legacy[16];
  unsigned domain;
  unsigned bus;
  unsigned device;
  unsigned pci_device_id;
  unsigned pci_subsystem_id;
  char bus_id[32];
};

struct NvmlMemory {  // nvmlMemory_t (v1)
  unsigned long long total;
  unsigned long long free;
  unsigned long long used;
};

struct NvmlFieldValue {  // nvmlFieldValue_t
  unsigned field_id;
  unsigned scope_id;
  long long timestamp;
  long long latency_usec;
  int value_type;
  int nvml_return;
  union {
    double d;
    unsigned ui;
    unsigned long ul;
    unsigned long long ull;
    long long sll;
  } value;
};
static_assert(sizeof(NvmlFieldValue) == 40, "nvmlFieldValue_t layout");

struct NvmlApi {
  int (*init)() = nullptr;
  int (*shutdown)() = nullptr;
  const char* (*error_string)(int) = nullptr;
  int (*driver_version)(char*, unsigned) = nullptr;
  int (*by_bus_id)(const char*, NvmlDevice*) = nullptr;
  int (*name)(NvmlDevice, char*, unsigned) = nullptr;
  int (*uuid)(NvmlDevice, char*, unsigned) = nullptr;
  int (*memory)(NvmlDevice, NvmlMemory*) = nullptr;
  int (*link_state)(NvmlDevice, unsigned, int*) = nullptr;
  int (*link_remote_pci)(NvmlDevice, unsigned, NvmlPciInfo*) = nullptr;
  int (*link_remote_type)(NvmlDevice, unsigned, int*) = nullptr;
  int (*link_version)(NvmlDevice, unsigned, unsigned*) = nullptr;
  int (*field_values)(NvmlDevice, int, NvmlFieldValue*) = nullptr;
  int (*p2p_status)(NvmlDevice, NvmlDevice, int, int*) = nullptr;
};

NvmlApi Bind(const DynamicLibrary& lib) {
  NvmlApi api;
  api.init = lib.Find<decltype(api.init)>("nvmlInit_v2");
  api.shutdown = lib.Find<decltype(api.shutdown)>("nvmlShutdown");
  api.error_string = lib.Find<decltype(api.error_string)>("nvmlErrorString");
  api.driver_version = lib.Find<decltype(api.driver_version)>("nvmlSystemGetDriverVersion");
  api.by_bus_id = lib.Find<decltype(api.by_bus_id)>("nvmlDeviceGetHandleByPciBusId_v2");
  api.name = lib.Find<decltype(api.name)>("nvmlDeviceGetName");
  api.uuid = lib.Find<decltype(api.uuid)>("nvmlDeviceGetUUID");
  api.memory = lib.Find<decltype(api.memory)>("nvmlDeviceGetMemoryInfo");
  api.link_state = lib.Find<decltype(api.link_state)>("nvmlDeviceGetNvLinkState");
  api.link_remote_pci = lib.Find<decltype(api.link_remote_pci)>("nvmlDeviceGetNvLinkRemotePciInfo_v2");
  api.link_remote_type = lib.Find<decltype(api.link_remote_type)>("nvmlDeviceGetNvLinkRemoteDeviceType");
  api.link_version = lib.Find<decltype(api.link_version)>("nvmlDeviceGetNvLinkVersion");
  api.field_values = lib.Find<decltype(api.field_values)>("nvmlDeviceGetFieldValues");
  api.p2p_status = lib.Find<decltype(api.p2p_status)>("nvmlDeviceGetP2PStatus");
  return api;
}

std::string ErrorText(const NvmlApi& api, int code) {
  const char* text = api.error_string ? api.error_string(code) : nullptr;
  return "NVML error " + std::to_string(code) + (text ? std::string(" (") + text + ")" : "");
}

int64_t FieldValue(const NvmlApi& api, NvmlDevice device, unsigned field, unsigned scope) {
  if (!api.field_values) return -1;
  NvmlFieldValue value{};
  value.field_id = field;
  value.scope_id = scope;
  if (api.field_values(device, 1, &value) != kNvmlSuccess || value.nvml_return != kNvmlSuccess) return -1;
  switch (value.value_type) {  // nvmlValueType_t
    case 0: return static_cast<int64_t>(value.value.d);
    case 1: return static_cast<int64_t>(value.value.ui);
    case 2: return static_cast<int64_t>(value.value.ul);
    case 3: return static_cast<int64_t>(value.value.ull);
    case 4: return value.value.sll;
  }
  return -1;
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
  std::unique_ptr<DynamicLibrary> lib = DynamicLibrary::Open("libnvidia-ml.so.1", &error);
  if (!lib) {
    result->notes.push_back("NVML not available (" + error + "): NVLink links and P2P read/write status unknown");
    return;
  }
  NvmlApi api = Bind(*lib);
  if (!api.init || !api.by_bus_id) {
    result->notes.push_back("NVML too old (no nvmlInit_v2 or nvmlDeviceGetHandleByPciBusId_v2): NVLink links unknown");
    return;
  }
  if (int rc = api.init(); rc != kNvmlSuccess) {
    result->notes.push_back("NVML failed to start: " + ErrorText(api, rc) + ": NVLink links unknown");
    return;
  }
  result->nvml_available = true;
  char version[96] = {};
  if (api.driver_version && api.driver_version(version, sizeof(version)) == kNvmlSuccess) result->driver_version = version;
  std::vector<NvmlDevice> handles(bdfs.size(), nullptr);
  for (size_t i = 0; i < bdfs.size(); ++i) {
    if (int rc = api.by_bus_id(bdfs[i].c_str(), &handles[i]); rc != kNvmlSuccess) {
      handles[i] = nullptr;
      result->notes.push_back("NVML cannot open GPU " + bdfs[i] + ": " + ErrorText(api, rc));
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
