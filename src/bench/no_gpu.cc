// The driver of a build without CUDA/NCCL: `commlens bench` exists, explains, and fails.
#include "bench/driver.h"
#include "bench/errors.h"

namespace commlens::bench {

Status GpuSupport() {
  return NoGpuError(
      "this build of commlens has no GPU support (CMake did not find the CUDA toolkit with "
      "NCCL when it was configured); rebuild with CUDA and NCCL installed to run benchmarks");
}

int VisibleGpuCount() { return 0; }

Status RunOnGpus(const BenchConfig&, const LaunchInfo&, const RunInfo&, Bootstrap&, Watchdog&,
                 Reporter&) {
  return GpuSupport();
}

Result<MoeReport> RunMoeOnGpus(const MoeConfig&, Session&) { return GpuSupport(); }

Result<JacobiReport> RunJacobiOnGpus(const JacobiConfig&, Session&) { return GpuSupport(); }

}  // namespace commlens::bench
