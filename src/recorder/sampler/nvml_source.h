// GPU metrics through NVML, one source per GPU. libnvidia-ml.so.1 is opened with dlopen
// when the sampler starts (topo/nvml_api.h holds our declarations of its API); without
// it, or without GPUs, there are no GPU sources and a note says why: never an error.
//
// Per GPU (NVML index = the series' device), each metric only if NVML answers it when
// the sampler starts:
//   gpu.utilization         percent  nvmlDeviceGetUtilizationRates .gpu: share of NVML's
//                                    last sample period (1/6 s to 1 s) in which a kernel ran
//   gpu.memory_utilization  percent  .memory: share in which device memory was read/written
//   gpu.memory_used         MiB      nvmlDeviceGetMemoryInfo .used
//   gpu.power               mW       nvmlDeviceGetPowerUsage
//   gpu.sm_clock            MHz      nvmlDeviceGetClockInfo(SM)
//   gpu.memory_clock        MHz      nvmlDeviceGetClockInfo(MEM)
//   gpu.nvlink_tx, _rx      KiB      field values NVLINK_THROUGHPUT_DATA_TX/RX over all
//                                    links (cumulative, 64-bit): NVLink payload bytes / 1024
// NVML calls are not cheap (measured on an H100, driver of 2025: utilization 75 us,
// power 36 us, field values 44 us, memory 6 us, clocks 2-12 us of CPU each) and NVML
// refreshes these values at 10 Hz or slower, so GPUs are read at SamplerOptions::gpu_hz
// (Tick::gpu), not at the NIC rate. The energy counter is left out: one
// nvmlDeviceGetTotalEnergyConsumption call took 4.2 ms there; energy is the integral of
// gpu.power. A GPU that NVML reports lost stops its series (DeviceGone), like a NIC that
// goes away.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "recorder/sampler/sample_source.h"

namespace commlens::recorder::sampler {

// One source per GPU NVML sees; none, with a line in |notes|, when NVML cannot be
// loaded or started or sees no GPU. |library| is the name given to dlopen (empty:
// libnvidia-ml.so.1).
std::vector<std::unique_ptr<SampleSource>> OpenGpuSources(const std::string& library,
                                                          std::vector<std::string>* notes);

}  // namespace commlens::recorder::sampler
