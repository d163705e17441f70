// The device work of the MoE benchmark around the exchanges: make the input tokens, pack
// them by destination (dispatch), sum each token's returned copies (combine), and count
// wrong elements after each phase (moe_plan.h defines the layouts and moe_values.h the
// values). Tokens are rows of |hidden| bf16 values; everything launches on |stream|.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "common/status.h"

namespace commlens::bench::gpu {

Status LaunchMoeFill(void* tokens, int count, int hidden, int rank, cudaStream_t stream);
// out[i] = tokens[ids[i]] for i < rows.
Status LaunchMoePack(const void* tokens, const int* ids, int64_t rows, int hidden, void* out,
                     cudaStream_t stream);
// out[t] = sum over j in [begin[t], begin[t+1]) of weight[j] * returned[rows[j]], in float,
// rounded to bf16.
Status LaunchMoeCombine(const void* returned, const int64_t* begin, const int* rows,
                        const int* weight, int tokens, int hidden, void* out,
                        cudaStream_t stream);
// *wrong += elements of received row i that differ from MoeInputValue(src[i], ids[i], h).
Status LaunchMoeCheckDispatch(const void* received, const int* src, const int* ids, int64_t rows,
                              int hidden, unsigned long long* wrong, cudaStream_t stream);
// *wrong += elements of out[t] that differ from topk * MoeInputValue(rank, t, h).
Status LaunchMoeCheckCombine(const void* out, int tokens, int hidden, int rank, int topk,
                             unsigned long long* wrong, cudaStream_t stream);

}  // namespace commlens::bench::gpu
