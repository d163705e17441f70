// The GPU driver's entry point, implemented in gpu/gpu_bench.cc when this build has CUDA
// and NCCL, and by no_gpu.cc (which says so and fails) otherwise.
#pragma once

#include "bench/bench_config.h"
#include "bench/bootstrap.h"
#include "bench/jacobi/jacobi_report.h"
#include "bench/launch.h"
#include "bench/moe/moe_report.h"
#include "bench/bench_session.h"
#include "bench/reporter.h"
#include "bench/watchdog.h"
#include "common/status.h"

namespace commlens::bench {

// OK when this build can drive GPUs; otherwise the "no GPU" error that says why not.
Status GpuSupport();
// CUDA devices this process can see; 0 without GPU support, a driver or a device.
int VisibleGpuCount();

// Runs every collective of |config| on this process's GPUs, feeding |reporter|; rank
// numbering, devices and the NCCL unique id come from |launch| and |bootstrap|.
// |base| supplies the tool version and start time of the run description.
Status RunOnGpus(const BenchConfig& config, const LaunchInfo& launch, const RunInfo& base,
                 Bootstrap& bootstrap, Watchdog& watchdog, Reporter& reporter);

// `commlens bench moe` and `commlens bench jacobi` (gpu/moe_bench.cc, gpu/jacobi_bench.cc):
// every process calls them; each returns the same report on every process.
Result<MoeReport> RunMoeOnGpus(const MoeConfig& config, Session& session);
Result<JacobiReport> RunJacobiOnGpus(const JacobiConfig& config, Session& session);

}  // namespace commlens::bench
