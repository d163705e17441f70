// A stand-in for libnvidia-ml.so.1 with two GPUs, for the sampler's NVML path on machines
// without a GPU. Only the entry points the sampler binds exist (no NVLink fields, as on
// a GPU without NVLink). FAKE_NVML_UTILIZATION_US makes nvmlDeviceGetUtilizationRates
// take that long, as it does on some real machines (milliseconds on 2 x H200).
// FAKE_NVML_FAIL=utilization|memory|power|clock makes that call return NVML_ERROR_UNKNOWN
// (999), so the tests of NVML's return codes can be seen to fail.
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace {

struct Device {
  int index;
};
Device g_devices[2] = {{0}, {1}};

unsigned UtilizationDelayUs() {
  const char* text = std::getenv("FAKE_NVML_UTILIZATION_US");
  return text ? static_cast<unsigned>(std::atoi(text)) : 0;
}

// NVML_ERROR_UNKNOWN when FAKE_NVML_FAIL names |call|, else NVML_SUCCESS.
int Result(const char* call) {
  const char* fail = std::getenv("FAKE_NVML_FAIL");
  return fail && std::strcmp(fail, call) == 0 ? 999 : 0;
}

}  // namespace

extern "C" {

struct FakePciInfo {  // the layout of topo::NvmlPciInfo (nvmlPciInfo_t)
  char bus_id_legacy[16];
  unsigned domain, bus, device, pci_device_id, pci_subsystem_id;
  char bus_id[32];
};
struct FakeMemory {
  unsigned long long total, free, used;
};
struct FakeUtilization {
  unsigned gpu, memory;
};

__attribute__((visibility("default"))) int nvmlInit_v2() { return 0; }
__attribute__((visibility("default"))) int nvmlShutdown() { return 0; }
__attribute__((visibility("default"))) const char* nvmlErrorString(int) { return "fake NVML error"; }
__attribute__((visibility("default"))) int nvmlDeviceGetCount_v2(unsigned* n) {
  *n = 2;
  return 0;
}
__attribute__((visibility("default"))) int nvmlDeviceGetHandleByIndex_v2(unsigned i, void** device) {
  if (i >= 2) return 2;
  *device = &g_devices[i];
  return 0;
}
__attribute__((visibility("default"))) int nvmlDeviceGetPciInfo_v3(void* device, FakePciInfo* pci) {
  std::memset(pci, 0, sizeof(*pci));
  std::snprintf(pci->bus_id, sizeof(pci->bus_id), "00000000:%02X:00.0", 0x1b + static_cast<Device*>(device)->index);
  return 0;
}
__attribute__((visibility("default"))) int nvmlDeviceGetUtilizationRates(void*, FakeUtilization* u) {
  if (unsigned us = UtilizationDelayUs()) usleep(us);
  u->gpu = 87;
  u->memory = 41;
  return Result("utilization");
}
__attribute__((visibility("default"))) int nvmlDeviceGetMemoryInfo(void*, FakeMemory* m) {
  m->total = 141ull << 30;
  m->used = 20ull << 30;
  m->free = m->total - m->used;
  return Result("memory");
}
__attribute__((visibility("default"))) int nvmlDeviceGetPowerUsage(void*, unsigned* mw) {
  *mw = 350000;
  return Result("power");
}
__attribute__((visibility("default"))) int nvmlDeviceGetClockInfo(void*, int type, unsigned* mhz) {
  *mhz = type == 1 ? 1980 : 3201;  // NVML_CLOCK_SM, else memory
  return Result("clock");
}

}  // extern "C"
