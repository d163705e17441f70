#include "bench/gpu/moe_kernels.h"

#include <cuda_bf16.h>

#include "bench/gpu/cuda_check.h"
#include "bench/moe/moe_values.h"

namespace commlens::bench::gpu {

namespace {

constexpr int kThreads = 256;

int Blocks(int64_t work) {
  int64_t b = (work + kThreads - 1) / kThreads;
  return static_cast<int>(b < 1 ? 1 : (b > 65535 * 4 ? 65535 * 4 : b));
}

__global__ void Fill(__nv_bfloat16* x, int count, int hidden, int rank) {
  const int64_t n = static_cast<int64_t>(count) * hidden;
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n;
       i += int64_t{blockDim.x} * gridDim.x)
    x[i] = __float2bfloat16(MoeInputValue(rank, static_cast<int>(i / hidden),
                                          static_cast<int>(i % hidden)));
}

// One CTA per row, 16-byte vectors (hidden * 2 is a multiple of 16, moe_config.cc).
__global__ void Pack(const uint4* tokens, const int* ids, int64_t rows, int vectors, uint4* out) {
  for (int64_t row = blockIdx.x; row < rows; row += gridDim.x) {
    const uint4* src = tokens + static_cast<int64_t>(ids[row]) * vectors;
    uint4* dst = out + row * vectors;
    for (int v = threadIdx.x; v < vectors; v += blockDim.x) dst[v] = src[v];
  }
}

__global__ void Combine(const __nv_bfloat16* returned, const int64_t* begin, const int* rows,
                        const int* weight, int tokens, int hidden, __nv_bfloat16* out) {
  for (int t = blockIdx.x; t < tokens; t += gridDim.x) {
    for (int h = threadIdx.x; h < hidden; h += blockDim.x) {
      float sum = 0;
      for (int64_t j = begin[t]; j < begin[t + 1]; ++j)
        sum += weight[j] * __bfloat162float(returned[static_cast<int64_t>(rows[j]) * hidden + h]);
      out[static_cast<int64_t>(t) * hidden + h] = __float2bfloat16(sum);
    }
  }
}

__global__ void CheckDispatch(const __nv_bfloat16* received, const int* src, const int* ids,
                              int64_t rows, int hidden, unsigned long long* wrong) {
  unsigned long long bad = 0;
  const int64_t n = rows * hidden;
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n;
       i += int64_t{blockDim.x} * gridDim.x) {
    const int64_t row = i / hidden;
    const float want = MoeInputValue(src[row], ids[row], static_cast<int>(i % hidden));
    if (__bfloat162float(received[i]) != want) ++bad;
  }
  if (bad) atomicAdd(wrong, bad);
}

__global__ void CheckCombine(const __nv_bfloat16* out, int tokens, int hidden, int rank, int topk,
                             unsigned long long* wrong) {
  unsigned long long bad = 0;
  const int64_t n = static_cast<int64_t>(tokens) * hidden;
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n;
       i += int64_t{blockDim.x} * gridDim.x) {
    const float want = topk * MoeInputValue(rank, static_cast<int>(i / hidden),
                                            static_cast<int>(i % hidden));
    if (__bfloat162float(out[i]) != want) ++bad;
  }
  if (bad) atomicAdd(wrong, bad);
}

}  // namespace

Status LaunchMoeFill(void* tokens, int count, int hidden, int rank, cudaStream_t stream) {
  Fill<<<Blocks(int64_t{count} * hidden), kThreads, 0, stream>>>(
      static_cast<__nv_bfloat16*>(tokens), count, hidden, rank);
  COMMLENS_CUDA(cudaGetLastError());
  return OkStatus();
}

Status LaunchMoePack(const void* tokens, const int* ids, int64_t rows, int hidden, void* out,
                     cudaStream_t stream) {
  if (rows == 0) return OkStatus();
  const int vectors = hidden * 2 / 16;
  const int blocks = static_cast<int>(rows < 65535 ? rows : 65535);
  Pack<<<blocks, kThreads, 0, stream>>>(static_cast<const uint4*>(tokens), ids, rows, vectors,
                                        static_cast<uint4*>(out));
  COMMLENS_CUDA(cudaGetLastError());
  return OkStatus();
}

Status LaunchMoeCombine(const void* returned, const int64_t* begin, const int* rows,
                        const int* weight, int tokens, int hidden, void* out,
                        cudaStream_t stream) {
  const int blocks = tokens < 65535 ? tokens : 65535;
  Combine<<<blocks, kThreads, 0, stream>>>(static_cast<const __nv_bfloat16*>(returned), begin,
                                           rows, weight, tokens, hidden,
                                           static_cast<__nv_bfloat16*>(out));
  COMMLENS_CUDA(cudaGetLastError());
  return OkStatus();
}

Status LaunchMoeCheckDispatch(const void* received, const int* src, const int* ids, int64_t rows,
                              int hidden, unsigned long long* wrong, cudaStream_t stream) {
  if (rows == 0) return OkStatus();
  CheckDispatch<<<Blocks(rows * hidden), kThreads, 0, stream>>>(
      static_cast<const __nv_bfloat16*>(received), src, ids, rows, hidden, wrong);
  COMMLENS_CUDA(cudaGetLastError());
  return OkStatus();
}

Status LaunchMoeCheckCombine(const void* out, int tokens, int hidden, int rank, int topk,
                             unsigned long long* wrong, cudaStream_t stream) {
  CheckCombine<<<Blocks(int64_t{tokens} * hidden), kThreads, 0, stream>>>(
      static_cast<const __nv_bfloat16*>(out), tokens, hidden, rank, topk, wrong);
  COMMLENS_CUDA(cudaGetLastError());
  return OkStatus();
}

}  // namespace commlens::bench::gpu
