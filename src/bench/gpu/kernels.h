// The benchmark's only device code: fill a rank's input with its verifiable values and
// count the output elements that differ from the exact expected values (verify.h).
// Both launch on |stream| and return launch errors; results arrive asynchronously.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "bench/types.h"
#include "bench/verify.h"
#include "common/status.h"

namespace commlens::bench::gpu {

// dst[i] = InputValue(gen, rank, i) for i in [0, count).
Status LaunchFillInput(DataType type, void* dst, int64_t count, const ValueGen& gen, int rank,
                       cudaStream_t stream);

// *wrong += number of j in [0, count) with out[j] != ExpectedValue(gen, plan, op, j).
Status LaunchCountWrong(DataType type, const void* out, int64_t count, const ValueGen& gen,
                        const ExpectPlan& plan, RedOp op, unsigned long long* wrong,
                        cudaStream_t stream);

}  // namespace commlens::bench::gpu
