// GPU facts that sysfs cannot give: names, memory, NVLink links and speeds (NVML), P2P
// read/write status (NVML, as nvidia-smi topo -p2p shows it) and CUDA's peer access.
// This interface is the seam for tests: the driver probe loads libnvidia-ml.so.1 and
// libcuda.so.1 with dlopen at run time (no link-time CUDA dependency, so `commlens topo`
// builds and runs everywhere); tests give canned facts instead.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "topo/topology.h"

namespace commlens::topo {

struct GpuFacts {
  std::string bdf;
  std::string name;
  std::string uuid;
  std::optional<uint64_t> memory_bytes;
  bool nvlinks_known = false;
  std::vector<NvLink> nvlinks;
};

struct PeerFacts {
  std::string from;  // BDF
  std::string to;    // BDF
  P2PFacts facts;
};

struct GpuProbeResult {
  bool nvml_available = false;
  bool cuda_available = false;
  std::string driver_version;
  std::vector<GpuFacts> gpus;    // any order; GPUs the probe could not see are absent
  std::vector<PeerFacts> peers;  // ordered pairs
  std::string p2p_source;        // "nvml" or "cuda"; empty when neither answered
  std::vector<std::string> notes;
};

class GpuProbe {
 public:
  virtual ~GpuProbe() = default;
  // |bdfs|: the GPUs found in sysfs, in PCI order. Never fails: whatever cannot be
  // learned becomes a note in the result.
  virtual GpuProbeResult Probe(const std::vector<std::string>& bdfs) = 0;
};

// NVML and the CUDA driver, loaded lazily.
std::unique_ptr<GpuProbe> MakeDriverGpuProbe();

// The two halves of the driver probe, each filling what its library knows.
void ProbeNvml(const std::vector<std::string>& bdfs, GpuProbeResult* result);
void ProbeCuda(const std::vector<std::string>& bdfs, GpuProbeResult* result);

}  // namespace commlens::topo
