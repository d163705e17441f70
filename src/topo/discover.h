// Discovery: the files under a SysfsRoot (plus NVML/CUDA through a GpuProbe, plus hwloc)
// -> a Topology. Classification and rendering come after and read only the Topology.
#pragma once

#include <string>

#include "topo/gpu_probe.h"
#include "topo/sysfs_root.h"
#include "topo/topology.h"

namespace commlens::topo {

struct DiscoverOptions {
  // Asked for GPU facts when there are GPUs; nullptr: not asked (a fake root describes
  // another machine than the one NVML would answer for), and the report says so.
  GpuProbe* gpu_probe = nullptr;
  // Why there is no probe, for the report's "not visible" notes.
  std::string no_probe_reason = "the sysfs root is not the live system";
  // Use hwloc for NUMA nodes and device CPU affinity when built in and the root is the
  // live system; sysfs otherwise.
  bool use_hwloc = true;
};

Topology Discover(const SysfsRoot& root, const DiscoverOptions& options);

}  // namespace commlens::topo
