// The NVSHMEM backend, loaded on first use (commlens never links a vendor library it can
// run without): libnvshmem_host.so.3 with global symbols (from LD_LIBRARY_PATH, else
// $NVSHMEM_HOME/lib), then commlens's plugin libcommlens_nvshmem.so
// ($COMMLENS_NVSHMEM_PLUGIN, else beside the commlens executable, else ../lib/commlens/
// from it). Whatever is missing is named in the error; nothing is
// loaded when no NVSHMEM backend is asked for.
#pragma once

#include "bench/nvshmem/commlens_nvshmem.h"
#include "common/status.h"

namespace commlens::bench::gpu {

// The plugin's table, loading it the first time. Thread-compatible (the driver's thread).
Result<const commlens_nvshmem_api*> LoadNvshmem();

}  // namespace commlens::bench::gpu
