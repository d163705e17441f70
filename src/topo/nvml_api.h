// Our own declarations of the NVML entry points commlens calls, from NVML's documented C
// API (nvml.h; no NVML header is needed to build). The library is opened with dlopen
// (DynamicLibrary) and bound here once; an entry point the installed driver lacks is a
// null pointer, which every caller checks. Users: the topology probe (nvml_probe.cc) and
// the GPU metrics sampler (recorder/sampler/nvml_source.cc).
//
// Return codes are ints: 0 is success. Structures are the versions the listed entry
// points fill; their layouts are fixed by NVML's ABI and checked by size below.
#pragma once

#include <string>

#include "topo/dynamic_library.h"

namespace commlens::topo {

struct NvmlDeviceSt;
using NvmlDevice = NvmlDeviceSt*;

inline constexpr const char* kNvmlLibrary = "libnvidia-ml.so.1";

constexpr int kNvmlSuccess = 0;
constexpr int kNvmlErrorInvalidArgument = 2;
constexpr int kNvmlErrorNotSupported = 3;
constexpr int kNvmlErrorGpuIsLost = 15;
constexpr int kNvmlFeatureEnabled = 1;
constexpr int kNvmlRemoteGpu = 0;     // NVML_NVLINK_DEVICE_TYPE_GPU
constexpr int kNvmlRemoteSwitch = 2;  // NVML_NVLINK_DEVICE_TYPE_SWITCH
constexpr int kNvmlP2PRead = 0;       // NVML_P2P_CAPS_INDEX_READ
constexpr int kNvmlP2PWrite = 1;      // NVML_P2P_CAPS_INDEX_WRITE
constexpr int kNvmlClockSm = 1;       // NVML_CLOCK_SM (nvmlClockType_t)
constexpr int kNvmlClockMem = 2;      // NVML_CLOCK_MEM

// Field ids (nvmlDeviceGetFieldValues).
constexpr unsigned kFieldNvLinkSpeedCommon = 90;  // NVML_FI_DEV_NVLINK_SPEED_MBPS_COMMON
constexpr unsigned kFieldNvLinkGetSpeed = 164;    // NVML_FI_DEV_NVLINK_GET_SPEED, scope = link
// NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_TX / _RX: cumulative NVLink payload in KiB (no
// protocol overhead); scope = a link, or kNvmlAllLinks for the sum over the GPU's links.
constexpr unsigned kFieldNvLinkThroughputDataTx = 138;
constexpr unsigned kFieldNvLinkThroughputDataRx = 139;
constexpr unsigned kNvmlAllLinks = 0xFFFFFFFFu;  // UINT_MAX

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

struct NvmlUtilization {  // nvmlUtilization_t: percent of the last sample period
  unsigned gpu;     // a kernel was running
  unsigned memory;  // device memory was being read or written
};

struct NvmlFieldValue {  // nvmlFieldValue_t
  unsigned field_id;
  unsigned scope_id;
  long long timestamp;
  long long latency_usec;
  int value_type;  // nvmlValueType_t: 0 double, 1 uint, 2 ulong, 3 ulonglong, 4 slonglong
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
static_assert(sizeof(NvmlMemory) == 24 && sizeof(NvmlUtilization) == 8);

struct NvmlApi {
  int (*init)() = nullptr;
  int (*shutdown)() = nullptr;
  const char* (*error_string)(int) = nullptr;
  int (*driver_version)(char*, unsigned) = nullptr;
  int (*count)(unsigned*) = nullptr;
  int (*by_index)(unsigned, NvmlDevice*) = nullptr;
  int (*by_bus_id)(const char*, NvmlDevice*) = nullptr;
  int (*pci_info)(NvmlDevice, NvmlPciInfo*) = nullptr;
  int (*name)(NvmlDevice, char*, unsigned) = nullptr;
  int (*uuid)(NvmlDevice, char*, unsigned) = nullptr;
  int (*memory)(NvmlDevice, NvmlMemory*) = nullptr;
  int (*utilization)(NvmlDevice, NvmlUtilization*) = nullptr;
  int (*power_mw)(NvmlDevice, unsigned*) = nullptr;
  int (*energy_mj)(NvmlDevice, unsigned long long*) = nullptr;
  int (*clock_mhz)(NvmlDevice, int, unsigned*) = nullptr;
  int (*link_state)(NvmlDevice, unsigned, int*) = nullptr;
  int (*link_remote_pci)(NvmlDevice, unsigned, NvmlPciInfo*) = nullptr;
  int (*link_remote_type)(NvmlDevice, unsigned, int*) = nullptr;
  int (*link_version)(NvmlDevice, unsigned, unsigned*) = nullptr;
  int (*field_values)(NvmlDevice, int, NvmlFieldValue*) = nullptr;
  int (*p2p_status)(NvmlDevice, NvmlDevice, int, int*) = nullptr;
};

inline NvmlApi BindNvml(const DynamicLibrary& lib) {
  NvmlApi api;
  api.init = lib.Find<decltype(api.init)>("nvmlInit_v2");
  api.shutdown = lib.Find<decltype(api.shutdown)>("nvmlShutdown");
  api.error_string = lib.Find<decltype(api.error_string)>("nvmlErrorString");
  api.driver_version = lib.Find<decltype(api.driver_version)>("nvmlSystemGetDriverVersion");
  api.count = lib.Find<decltype(api.count)>("nvmlDeviceGetCount_v2");
  api.by_index = lib.Find<decltype(api.by_index)>("nvmlDeviceGetHandleByIndex_v2");
  api.by_bus_id = lib.Find<decltype(api.by_bus_id)>("nvmlDeviceGetHandleByPciBusId_v2");
  api.pci_info = lib.Find<decltype(api.pci_info)>("nvmlDeviceGetPciInfo_v3");
  if (!api.pci_info) api.pci_info = lib.Find<decltype(api.pci_info)>("nvmlDeviceGetPciInfo_v2");
  api.name = lib.Find<decltype(api.name)>("nvmlDeviceGetName");
  api.uuid = lib.Find<decltype(api.uuid)>("nvmlDeviceGetUUID");
  api.memory = lib.Find<decltype(api.memory)>("nvmlDeviceGetMemoryInfo");
  api.utilization = lib.Find<decltype(api.utilization)>("nvmlDeviceGetUtilizationRates");
  api.power_mw = lib.Find<decltype(api.power_mw)>("nvmlDeviceGetPowerUsage");
  api.energy_mj = lib.Find<decltype(api.energy_mj)>("nvmlDeviceGetTotalEnergyConsumption");
  api.clock_mhz = lib.Find<decltype(api.clock_mhz)>("nvmlDeviceGetClockInfo");
  api.link_state = lib.Find<decltype(api.link_state)>("nvmlDeviceGetNvLinkState");
  api.link_remote_pci = lib.Find<decltype(api.link_remote_pci)>("nvmlDeviceGetNvLinkRemotePciInfo_v2");
  api.link_remote_type = lib.Find<decltype(api.link_remote_type)>("nvmlDeviceGetNvLinkRemoteDeviceType");
  api.link_version = lib.Find<decltype(api.link_version)>("nvmlDeviceGetNvLinkVersion");
  api.field_values = lib.Find<decltype(api.field_values)>("nvmlDeviceGetFieldValues");
  api.p2p_status = lib.Find<decltype(api.p2p_status)>("nvmlDeviceGetP2PStatus");
  return api;
}

// The number in a field NVML filled; false when NVML failed to read it or it is negative.
inline bool NvmlFieldToU64(const NvmlFieldValue& v, unsigned long long* out) {
  if (v.nvml_return != kNvmlSuccess) return false;
  switch (v.value_type) {
    case 0: if (!(v.value.d >= 0)) return false; *out = static_cast<unsigned long long>(v.value.d); return true;
    case 1: *out = v.value.ui; return true;
    case 2: *out = v.value.ul; return true;
    case 3: *out = v.value.ull; return true;
    case 4: if (v.value.sll < 0) return false; *out = static_cast<unsigned long long>(v.value.sll); return true;
  }
  return false;
}

inline std::string NvmlErrorText(const NvmlApi& api, int code) {
  const char* text = api.error_string ? api.error_string(code) : nullptr;
  return "NVML error " + std::to_string(code) + (text ? std::string(" (") + text + ")" : "");
}

}  // namespace commlens::topo
