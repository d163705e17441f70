// CUDA driver half of the driver probe: names and memory when NVML is missing, and the
// driver's own view of peer access (cuDeviceGetP2PAttribute). Our own declarations of
// the documented driver API (cuda.h): CUresult is an int, 0 is CUDA_SUCCESS, CUdevice
// is an int ordinal.
#include "topo/dynamic_library.h"
#include "topo/gpu_probe.h"
#include "topo/pci_discovery.h"

namespace commlens::topo {
namespace {

constexpr int kCudaSuccess = 0;
constexpr int kP2PAccessSupported = 0x02;         // CU_DEVICE_P2P_ATTRIBUTE_ACCESS_SUPPORTED
constexpr int kP2PNativeAtomicSupported = 0x03;   // CU_DEVICE_P2P_ATTRIBUTE_NATIVE_ATOMIC_SUPPORTED

struct CudaApi {
  int (*init)(unsigned) = nullptr;
  int (*error_string)(int, const char**) = nullptr;
  int (*device_count)(int*) = nullptr;
  int (*device_get)(int*, int) = nullptr;
  int (*bus_id)(char*, int, int) = nullptr;
  int (*name)(char*, int, int) = nullptr;
  int (*total_mem)(size_t*, int) = nullptr;
  int (*p2p_attribute)(int*, int, int, int) = nullptr;
};

CudaApi Bind(const DynamicLibrary& lib) {
  CudaApi api;
  api.init = lib.Find<decltype(api.init)>("cuInit");
  api.error_string = lib.Find<decltype(api.error_string)>("cuGetErrorString");
  api.device_count = lib.Find<decltype(api.device_count)>("cuDeviceGetCount");
  api.device_get = lib.Find<decltype(api.device_get)>("cuDeviceGet");
  api.bus_id = lib.Find<decltype(api.bus_id)>("cuDeviceGetPCIBusId");
  api.name = lib.Find<decltype(api.name)>("cuDeviceGetName");
  api.total_mem = lib.Find<decltype(api.total_mem)>("cuDeviceTotalMem_v2");
  api.p2p_attribute = lib.Find<decltype(api.p2p_attribute)>("cuDeviceGetP2PAttribute");
  return api;
}

std::string ErrorText(const CudaApi& api, int code) {
  const char* text = nullptr;
  if (api.error_string) api.error_string(code, &text);
  return "CUDA error " + std::to_string(code) + (text ? std::string(" (") + text + ")" : "");
}

std::optional<bool> Attribute(const CudaApi& api, int attribute, int from, int to) {
  int value = 0;
  if (api.p2p_attribute(&value, attribute, from, to) != kCudaSuccess) return std::nullopt;
  return value != 0;
}

GpuFacts* FindGpu(GpuProbeResult* result, const std::string& bdf) {
  for (GpuFacts& gpu : result->gpus) {
    if (gpu.bdf == bdf) return &gpu;
  }
  return nullptr;
}

PeerFacts* FindPeer(GpuProbeResult* result, const std::string& from, const std::string& to) {
  for (PeerFacts& peer : result->peers) {
    if (peer.from == from && peer.to == to) return &peer;
  }
  result->peers.push_back({from, to, {}});
  return &result->peers.back();
}

// CUDA ordinals of the GPUs in |bdfs| (-1 when CUDA does not show one, for instance
// because CUDA_VISIBLE_DEVICES hides it).
std::vector<int> MapOrdinals(const CudaApi& api, const std::vector<std::string>& bdfs, int count) {
  std::vector<int> ordinals(bdfs.size(), -1);
  for (int ordinal = 0; ordinal < count; ++ordinal) {
    int device = 0;
    char bus_id[32] = {};
    if (api.device_get(&device, ordinal) != kCudaSuccess || api.bus_id(bus_id, sizeof(bus_id), device) != kCudaSuccess) continue;
    std::optional<std::string> bdf = NormalizeBdf(bus_id);
    for (size_t i = 0; bdf && i < bdfs.size(); ++i) {
      if (bdfs[i] == *bdf) ordinals[i] = device;
    }
  }
  return ordinals;
}

}  // namespace

void ProbeCuda(const std::vector<std::string>& bdfs, GpuProbeResult* result) {
  std::string error;
  std::unique_ptr<DynamicLibrary> lib = DynamicLibrary::Open("libcuda.so.1", &error);
  if (!lib) {
    result->notes.push_back("CUDA driver not available (" + error + "): CUDA peer access unknown");
    return;
  }
  lib->KeepLoaded();
  CudaApi api = Bind(*lib);
  if (!api.init || !api.device_count || !api.device_get || !api.bus_id || !api.p2p_attribute) {
    result->notes.push_back("CUDA driver lacks cuDeviceGetP2PAttribute or cuDeviceGetPCIBusId: CUDA peer access unknown");
    return;
  }
  int count = 0;
  if (int rc = api.init(0); rc != kCudaSuccess) {
    result->notes.push_back("CUDA driver failed to start: " + ErrorText(api, rc) + ": CUDA peer access unknown");
    return;
  }
  if (int rc = api.device_count(&count); rc != kCudaSuccess) {
    result->notes.push_back("cuDeviceGetCount failed: " + ErrorText(api, rc));
    return;
  }
  result->cuda_available = true;
  std::vector<int> ordinals = MapOrdinals(api, bdfs, count);
  for (size_t i = 0; i < bdfs.size(); ++i) {
    if (ordinals[i] < 0) {
      result->notes.push_back("CUDA does not see GPU " + bdfs[i] + " (CUDA_VISIBLE_DEVICES?)");
      continue;
    }
    GpuFacts* gpu = FindGpu(result, bdfs[i]);
    if (gpu == nullptr) {
      gpu = &result->gpus.emplace_back();
      gpu->bdf = bdfs[i];
    }
    char name[128] = {};
    if (gpu->name.empty() && api.name && api.name(name, sizeof(name), ordinals[i]) == kCudaSuccess) gpu->name = name;
    size_t bytes = 0;
    if (!gpu->memory_bytes && api.total_mem && api.total_mem(&bytes, ordinals[i]) == kCudaSuccess) gpu->memory_bytes = bytes;
  }
  for (size_t i = 0; i < bdfs.size(); ++i) {
    for (size_t j = 0; j < bdfs.size(); ++j) {
      if (i == j || ordinals[i] < 0 || ordinals[j] < 0) continue;
      PeerFacts* peer = FindPeer(result, bdfs[i], bdfs[j]);
      peer->facts.cuda_access = Attribute(api, kP2PAccessSupported, ordinals[i], ordinals[j]);
      peer->facts.cuda_atomics = Attribute(api, kP2PNativeAtomicSupported, ordinals[i], ordinals[j]);
    }
  }
}

}  // namespace commlens::topo
