// The Jacobi update of a block of a rank's rows (jacobi/stencil.h) for the NCCL variants
// and the one-GPU baseline: local rows [row_begin, row_end) of |a| into |a_new|, columns
// 1..nx-2 (the first and last are fixed).
#pragma once

#include <cuda_runtime.h>

#include "common/status.h"

namespace commlens::bench::gpu {

Status LaunchJacobiRows(const float* a, float* a_new, int nx, int row_begin, int row_end,
                        cudaStream_t stream);

}  // namespace commlens::bench::gpu
